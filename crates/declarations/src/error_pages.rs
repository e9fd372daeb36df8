//! The `error_pages` family's declarations: the pages a web domain answers its error statuses
//! with (Apache's `ErrorDocument`), each a path of the domain's own site, so a 404 or a 503
//! shows the tenant's page instead of Apache's.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::error_pages`.

use registry::types::{Hex32, Presence};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::declare::{family, impl_resource, operation};
use crate::example;
use crate::resource::AccountResource;
use crate::web_domain::EnsureWebDomain;

/// The example web domain's id byte: a domain's error pages are keyed by its id.
const DOMAIN: u8 = 0xc3;

family! {
    /// The error pages of a web domain: for each status given, the path of the site Apache
    /// serves in its place. One set per web domain, rendered into its vhost (both virtual
    /// hosts); a suspended domain answers with the node's own 403 instead.
    pub struct ErrorPages { name: "error_pages", module: Web }
}

registry::string_type!(
    /// A page of the site that answers an error status: `/` then segments of
    /// `[A-Za-z0-9._~-]` separated by single slashes, no trailing slash, no `.` or `..`
    /// segment, at most 255 bytes, never beneath `/.well-known/` (where the node answers the
    /// ACME challenges itself). Apache serves it as an internal request of the same site, so
    /// a PHP page runs as the tenant like any other. Not a security boundary: a tenant's
    /// `.htaccess` may name its own `ErrorDocument`s too; the type keeps what the node writes
    /// plain.
    ErrorPagePath,
    schemars::json_schema!({
        "type": "string",
        "maxLength": 255,
        "pattern": "^(/[A-Za-z0-9._~-]+)+$"
    }),
    |s| {
        if s.is_empty() || s.len() > 255 {
            return Err("an error page's path is 1 to 255 bytes".into());
        }
        let body = s.strip_prefix('/').ok_or("an error page's path starts with /")?;
        for segment in body.split('/') {
            if segment.is_empty()
                || segment == "."
                || segment == ".."
                || !segment
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~' | b'-'))
            {
                return Err(format!("segment {segment:?} is not allowed"));
            }
        }
        if s.to_ascii_lowercase().starts_with("/.well-known/") {
            return Err("/.well-known/ holds the node's own answers, never an error page".into());
        }
        Ok(s.to_owned())
    }
);

/// The page of each error status a domain answers with its own page; a status left out is
/// answered by Apache's. Keys are the statuses, so no status is given twice.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct ErrorPageSet {
    #[serde(rename = "400", default, skip_serializing_if = "Option::is_none")]
    pub bad_request: Option<ErrorPagePath>,
    #[serde(rename = "401", default, skip_serializing_if = "Option::is_none")]
    pub unauthorized: Option<ErrorPagePath>,
    #[serde(rename = "403", default, skip_serializing_if = "Option::is_none")]
    pub forbidden: Option<ErrorPagePath>,
    #[serde(rename = "404", default, skip_serializing_if = "Option::is_none")]
    pub not_found: Option<ErrorPagePath>,
    #[serde(rename = "405", default, skip_serializing_if = "Option::is_none")]
    pub method_not_allowed: Option<ErrorPagePath>,
    #[serde(rename = "410", default, skip_serializing_if = "Option::is_none")]
    pub gone: Option<ErrorPagePath>,
    #[serde(rename = "429", default, skip_serializing_if = "Option::is_none")]
    pub too_many_requests: Option<ErrorPagePath>,
    #[serde(rename = "500", default, skip_serializing_if = "Option::is_none")]
    pub internal_server_error: Option<ErrorPagePath>,
    #[serde(rename = "502", default, skip_serializing_if = "Option::is_none")]
    pub bad_gateway: Option<ErrorPagePath>,
    #[serde(rename = "503", default, skip_serializing_if = "Option::is_none")]
    pub service_unavailable: Option<ErrorPagePath>,
    #[serde(rename = "504", default, skip_serializing_if = "Option::is_none")]
    pub gateway_timeout: Option<ErrorPagePath>,
}

// From a JSON object only: serde would also build the struct from an array of its values,
// and a field error must keep its path. The derive stays, as the inherent `remote` functions.
impl<'de> Deserialize<'de> for ErrorPageSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ObjectOnly;
        impl<'de> serde::de::Visitor<'de> for ObjectOnly {
            type Value = ErrorPageSet;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of pages by status")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<ErrorPageSet, A::Error> {
                ErrorPageSet::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(ObjectOnly)
    }
}

impl Serialize for ErrorPageSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ErrorPageSet::serialize(self, s)
    }
}

impl ErrorPageSet {
    /// Each status given, lowest first, with its page.
    pub fn pages(&self) -> Vec<(u16, &ErrorPagePath)> {
        [
            (400, &self.bad_request),
            (401, &self.unauthorized),
            (403, &self.forbidden),
            (404, &self.not_found),
            (405, &self.method_not_allowed),
            (410, &self.gone),
            (429, &self.too_many_requests),
            (500, &self.internal_server_error),
            (502, &self.bad_gateway),
            (503, &self.service_unavailable),
            (504, &self.gateway_timeout),
        ]
        .into_iter()
        .filter_map(|(status, page)| page.as_ref().map(|page| (status, page)))
        .collect()
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetErrorPagesRequest {
    /// The web domain's id: one set of error pages per domain.
    pub id: Hex32,
    pub account: Hex32,
    /// The whole set: it replaces the last (a status left out is Apache's again).
    pub pages: ErrorPageSet,
}

impl_resource!(owner = account: SetErrorPagesRequest);

pub type RemoveErrorPagesRequest = AccountResource;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorPagesResult {
    pub state: Presence,
    /// The pages the domain's vhost now names (empty once removed).
    pub pages: ErrorPageSet,
}

operation! {
    pub struct SetErrorPages {
        name: "set_error_pages",
        kind: Declare,
        family: ErrorPages,
        summary: "Answer a web domain's error statuses (400 to 504) with pages of its own site",
        request: SetErrorPagesRequest,
        result: ErrorPagesResult,
        needs: [EnsureWebDomain],
        example: SetErrorPagesRequest {
            id: example::id(DOMAIN),
            account: example::account(),
            pages: ErrorPageSet {
                not_found: Some(example::parse("/errors/404.html")),
                service_unavailable: Some(example::parse("/errors/maintenance.php")),
                ..ErrorPageSet::default()
            },
        },
    }
}

operation! {
    pub struct RemoveErrorPages {
        name: "remove_error_pages",
        kind: Remove,
        family: ErrorPages,
        summary: "Answer a web domain's error statuses with Apache's own pages again",
        request: RemoveErrorPagesRequest,
        result: ErrorPagesResult,
        example: AccountResource::example(DOMAIN),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_page_paths_are_plain_pages_of_the_site() {
        for good in ["/404.html", "/errors/404.html", "/e/maintenance.php", "/~x/a-b_c.htm"] {
            assert!(good.parse::<ErrorPagePath>().is_ok(), "{good}");
        }
        for bad in [
            "",
            "404.html",
            "/",
            "/errors/",
            "//x",
            "/a//b",
            "/../etc/passwd",
            "/a/./b",
            "/a b",
            "/a\"b",
            "/a\nb",
            "/.well-known/acme-challenge/x",
            "/.WELL-KNOWN/autoconfig/mail/config-v1.1.xml",
            "/a$",
            "http://example.com/404.html",
        ] {
            assert!(bad.parse::<ErrorPagePath>().is_err(), "{bad:?}");
        }
        assert!(format!("/{}", "a".repeat(255)).parse::<ErrorPagePath>().is_err());
    }

    #[test]
    fn a_set_of_pages_is_keyed_by_status_and_closed() {
        let set: ErrorPageSet = serde_json::from_value(serde_json::json!({
            "503": "/m.php", "404": "/404.html"
        }))
        .unwrap();
        let pages: Vec<(u16, &str)> = set.pages().into_iter().map(|(s, p)| (s, p.as_str())).collect();
        assert_eq!(pages, [(404, "/404.html"), (503, "/m.php")]);
        for bad in [
            serde_json::json!({"418": "/teapot.html"}),
            serde_json::json!({"404": "/a b"}),
            serde_json::json!({"404": 404}),
            serde_json::json!(["/404.html"]),
        ] {
            assert!(serde_json::from_value::<ErrorPageSet>(bad.clone()).is_err(), "{bad}");
        }
    }
}
