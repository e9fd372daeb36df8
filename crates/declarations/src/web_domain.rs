//! The `web_domain` family's declarations: a virtual host with its aliases and document root,
//! its suspension, the `redirect` family of its redirects and the `https_policy` family of
//! its forced HTTPS and HSTS header.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::web_domain`.

use registry::types::{
    DomainAliases, DomainName, Hex32, HomePath, HstsMaxAge, HttpUrl, Presence, RedirectSource,
    RedirectStatus,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::account::EnsureAccount;
use crate::certificate::EnsureCertificate;
use crate::declare::{family, impl_resource, operation};
use crate::example;
use crate::resource::AccountResource;

family! {
    pub struct WebDomain {
        name: "web_domain",
        module: Web,
        drift: {
            /// The web domain's vhost file is gone.
            VHOST_MISSING = "vhost_missing",
            /// The vhost file is not what state.db derives.
            VHOST_DIFFERS = "vhost_differs",
        },
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureWebDomainRequest {
    pub id: Hex32,
    pub account: Hex32,
    pub domain: DomainName,
    #[serde(default)]
    pub aliases: DomainAliases,
    /// The document root, relative to the home. Default: `web/<domain>/public_html`.
    #[serde(default)]
    pub docroot: Option<HomePath>,
}

pub type RemoveWebDomainRequest = AccountResource;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebDomainResult {
    pub state: Presence,
    pub domain: Option<String>,
    /// The host names the vhost answers besides `domain`.
    pub aliases: Vec<String>,
    /// The absolute document root Apache serves.
    pub document_root: Option<String>,
}

/// The example web domain's id byte.
const DOMAIN: u8 = 0xc3;

operation! {
    pub struct EnsureWebDomain {
        name: "ensure_web_domain",
        kind: Declare,
        family: WebDomain,
        summary: "Serve a domain (and its aliases) from a document root in the account's home",
        request: EnsureWebDomainRequest,
        result: WebDomainResult,
        needs: [EnsureAccount],
        example: EnsureWebDomainRequest {
            id: example::id(DOMAIN),
            account: example::account(),
            domain: example::parse("shop.example.com"),
            aliases: example::json(json!(["www.shop.example.com"])),
            docroot: None,
        },
    }
}

operation! {
    pub struct RemoveWebDomain {
        name: "remove_web_domain",
        kind: Remove,
        family: WebDomain,
        summary: "Stop serving a domain; the files in its document root are left to the tenant",
        request: RemoveWebDomainRequest,
        result: WebDomainResult,
        example: AccountResource::example(DOMAIN),
    }
}

// ---------------------------------------------------------------------------------------
// suspend_web_domain / unsuspend_web_domain.

pub type WebDomainSuspensionRequest = AccountResource;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebDomainSuspensionResult {
    pub state: Presence,
    pub domain: String,
    /// Whether the vhost now answers 403 (all but the certificate challenge).
    pub suspended: bool,
}

operation! {
    pub struct SuspendWebDomain {
        name: "suspend_web_domain",
        kind: Suspend,
        family: WebDomain,
        summary: "Answer 403 for a domain (the certificate challenge still works); its files are untouched",
        request: WebDomainSuspensionRequest,
        result: WebDomainSuspensionResult,
        example: AccountResource::example(DOMAIN),
    }
}

operation! {
    pub struct UnsuspendWebDomain {
        name: "unsuspend_web_domain",
        kind: Unsuspend,
        family: WebDomain,
        summary: "Serve a suspended domain again, as it was before",
        request: WebDomainSuspensionRequest,
        result: WebDomainSuspensionResult,
        example: AccountResource::example(DOMAIN),
    }
}

// ---------------------------------------------------------------------------------------
// The `redirect` family: ensure_redirect / remove_redirect.

family! {
    /// Redirects of a web domain's paths, rendered into its vhost as `RedirectMatch` lines.
    pub struct Redirect { name: "redirect", module: Web }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureRedirectRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// The web domain whose paths are redirected.
    pub web_domain: Hex32,
    /// The path prefix redirected (`/` for the whole site, never the ACME challenge path).
    pub source: RedirectSource,
    /// Where to: the rest of the path is appended. A vhost leaves out a redirect that would
    /// send a request back to itself under the same rule (the target on one of the domain's
    /// names, over the vhost's own scheme, its path beneath the source), so a redirect of `/`
    /// to `https://<the domain>/` applies over HTTP and not over HTTPS.
    pub target: HttpUrl,
    /// 301, 302, 307 or 308.
    pub status: RedirectStatus,
}

impl_resource!(owner = account: EnsureWebDomainRequest, EnsureRedirectRequest);

pub type RemoveRedirectRequest = AccountResource;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedirectResult {
    pub state: Presence,
    /// The `RedirectMatch` line as written into the vhost (absent once removed).
    pub directive: Option<String>,
}

operation! {
    pub struct EnsureRedirect {
        name: "ensure_redirect",
        kind: Declare,
        family: Redirect,
        summary: "Redirect a path prefix of a web domain to a URL (the ACME challenge path is exempt)",
        request: EnsureRedirectRequest,
        result: RedirectResult,
        needs: [EnsureWebDomain],
        example: EnsureRedirectRequest {
            id: example::id(0xf6),
            account: example::account(),
            web_domain: example::id(DOMAIN),
            source: example::parse("/old-shop"),
            target: example::parse("https://shop.example.com/"),
            status: RedirectStatus::MovedPermanently,
        },
    }
}

operation! {
    pub struct RemoveRedirect {
        name: "remove_redirect",
        kind: Remove,
        family: Redirect,
        summary: "Stop redirecting a path prefix of a web domain",
        request: RemoveRedirectRequest,
        result: RedirectResult,
        example: AccountResource::example(0xf6),
    }
}

// ---------------------------------------------------------------------------------------
// The `https_policy` family: set_https_policy / remove_https_policy.

family! {
    /// Whether a web domain's HTTP answers send browsers to HTTPS, and the
    /// `Strict-Transport-Security` header its HTTPS answers carry. One policy per web domain,
    /// rendered into its vhost.
    pub struct HttpsPolicy { name: "https_policy", module: Web }
}

/// The `Strict-Transport-Security` header of a domain's HTTPS answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct Hsts {
    /// `max-age`, in seconds (0 tells browsers to forget the policy).
    pub max_age: HstsMaxAge,
    /// Adds `includeSubDomains`: the policy then covers every name beneath the domain too.
    #[serde(default)]
    pub include_subdomains: bool,
}

// From a JSON object only: serde would also build the struct from an array of its values,
// and a field error must keep its path. The derive stays, as the inherent `remote` functions.
impl<'de> Deserialize<'de> for Hsts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ObjectOnly;
        impl<'de> serde::de::Visitor<'de> for ObjectOnly {
            type Value = Hsts;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object {max_age, include_subdomains}")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Hsts, A::Error> {
                Hsts::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(ObjectOnly)
    }
}

impl Serialize for Hsts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Hsts::serialize(self, s)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetHttpsPolicyRequest {
    /// The web domain's id: one policy per domain.
    pub id: Hex32,
    pub account: Hex32,
    /// Answer every HTTP request but the ACME challenge path with a 301 to the same host and
    /// path over HTTPS. In force only while a certificate is bound to the domain: without
    /// one the site is served over HTTP as before (`active` says which).
    pub force_https: bool,
    /// The `Strict-Transport-Security` header sent on HTTPS answers only; `null` for none.
    #[serde(default)]
    pub hsts: Option<Hsts>,
}

impl_resource!(owner = account: SetHttpsPolicyRequest);

pub type RemoveHttpsPolicyRequest = AccountResource;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpsPolicyResult {
    pub state: Presence,
    pub force_https: bool,
    pub hsts: Option<Hsts>,
    /// Whether a certificate is bound to the domain, so that the vhost carries the policy
    /// now. A policy recorded without one waits for it, and removing the certificate takes the
    /// redirect and the header out of the vhost with the HTTPS virtual host.
    pub active: bool,
}

operation! {
    pub struct SetHttpsPolicy {
        name: "set_https_policy",
        kind: Declare,
        family: HttpsPolicy,
        summary: "Send a web domain's HTTP requests to HTTPS (the ACME challenge path is exempt) and set its HSTS header",
        request: SetHttpsPolicyRequest,
        result: HttpsPolicyResult,
        needs: [EnsureCertificate],
        example: SetHttpsPolicyRequest {
            id: example::id(DOMAIN),
            account: example::account(),
            force_https: true,
            hsts: Some(Hsts {
                max_age: example::json(json!(31_536_000)),
                include_subdomains: false,
            }),
        },
    }
}

operation! {
    pub struct RemoveHttpsPolicy {
        name: "remove_https_policy",
        kind: Remove,
        family: HttpsPolicy,
        summary: "Serve a web domain over HTTP again without redirecting, and drop its HSTS header",
        request: RemoveHttpsPolicyRequest,
        result: HttpsPolicyResult,
        example: AccountResource::example(DOMAIN),
    }
}
