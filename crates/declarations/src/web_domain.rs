//! The `web_domain` family's declarations: a virtual host with its aliases and document root,
//! its suspension, and the `redirect` family of its redirects.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::web_domain`.

use registry::types::{
    DomainAliases, DomainName, Hex32, HomePath, HttpUrl, Presence, RedirectSource, RedirectStatus,
};
use registry::{Family, Module, Operation, Owner, Resource, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

pub struct WebDomain;

impl Family for WebDomain {
    const NAME: &'static str = "web_domain";
    const MODULE: Module = Module::Web;
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

impl Resource for EnsureWebDomainRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveWebDomainRequest {
    pub id: Hex32,
    pub account: Hex32,
}

impl Resource for RemoveWebDomainRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

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

pub struct EnsureWebDomain;

impl Operation for EnsureWebDomain {
    const NAME: &'static str = "ensure_web_domain";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Serve a domain (and its aliases) from a document root in the account's home";
    type Family = WebDomain;
    type Request = EnsureWebDomainRequest;
    type Result = WebDomainResult;

    fn example() -> EnsureWebDomainRequest {
        EnsureWebDomainRequest {
            id: "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
                .parse()
                .expect("valid example"),
            account: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
                .parse()
                .expect("valid example"),
            domain: "shop.example.com".parse().expect("valid example"),
            aliases: serde_json::from_value(json!(["www.shop.example.com"]))
                .expect("valid example"),
            docroot: None,
        }
    }
}

pub struct RemoveWebDomain;

impl Operation for RemoveWebDomain {
    const NAME: &'static str = "remove_web_domain";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Stop serving a domain; the files in its document root are left to the tenant";
    type Family = WebDomain;
    type Request = RemoveWebDomainRequest;
    type Result = WebDomainResult;

    fn example() -> RemoveWebDomainRequest {
        RemoveWebDomainRequest {
            id: "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
                .parse()
                .expect("valid example"),
            account: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
                .parse()
                .expect("valid example"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// suspend_web_domain / unsuspend_web_domain.

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebDomainSuspensionRequest {
    pub id: Hex32,
    pub account: Hex32,
}

impl Resource for WebDomainSuspensionRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebDomainSuspensionResult {
    pub state: Presence,
    pub domain: String,
    /// Whether the vhost now answers 403 (all but the certificate challenge).
    pub suspended: bool,
}

pub struct SuspendWebDomain;

fn suspension_example() -> WebDomainSuspensionRequest {
    WebDomainSuspensionRequest {
        id: "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
            .parse()
            .expect("valid example"),
        account: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
            .parse()
            .expect("valid example"),
    }
}

impl Operation for SuspendWebDomain {
    const NAME: &'static str = "suspend_web_domain";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Answer 403 for a domain (the certificate challenge still works); its files are untouched";
    type Family = WebDomain;
    type Request = WebDomainSuspensionRequest;
    type Result = WebDomainSuspensionResult;

    fn example() -> WebDomainSuspensionRequest {
        suspension_example()
    }
}

pub struct UnsuspendWebDomain;

impl Operation for UnsuspendWebDomain {
    const NAME: &'static str = "unsuspend_web_domain";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Serve a suspended domain again, as it was before";
    type Family = WebDomain;
    type Request = WebDomainSuspensionRequest;
    type Result = WebDomainSuspensionResult;

    fn example() -> WebDomainSuspensionRequest {
        suspension_example()
    }
}

// ---------------------------------------------------------------------------------------
// The `redirect` family: ensure_redirect / remove_redirect.

/// Redirects of a web domain's paths, rendered into its vhost as `RedirectMatch` lines.
pub struct Redirect;

impl Family for Redirect {
    const NAME: &'static str = "redirect";
    const MODULE: Module = Module::Web;
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
    /// Where to: the rest of the path is appended.
    pub target: HttpUrl,
    /// 301, 302, 307 or 308.
    pub status: RedirectStatus,
}

impl Resource for EnsureRedirectRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveRedirectRequest {
    pub id: Hex32,
    pub account: Hex32,
}

impl Resource for RemoveRedirectRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedirectResult {
    pub state: Presence,
    /// The `RedirectMatch` line as written into the vhost (absent once removed).
    pub directive: Option<String>,
}

pub struct EnsureRedirect;

impl Operation for EnsureRedirect {
    const NAME: &'static str = "ensure_redirect";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Redirect a path prefix of a web domain to a URL (the ACME challenge path is exempt)";
    type Family = Redirect;
    type Request = EnsureRedirectRequest;
    type Result = RedirectResult;

    fn example() -> EnsureRedirectRequest {
        EnsureRedirectRequest {
            id: "f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6"
                .parse()
                .expect("valid example"),
            account: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
                .parse()
                .expect("valid example"),
            web_domain: "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
                .parse()
                .expect("valid example"),
            source: "/old-shop".parse().expect("valid example"),
            target: "https://shop.example.com/".parse().expect("valid example"),
            status: RedirectStatus::MovedPermanently,
        }
    }
}

pub struct RemoveRedirect;

impl Operation for RemoveRedirect {
    const NAME: &'static str = "remove_redirect";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Stop redirecting a path prefix of a web domain";
    type Family = Redirect;
    type Request = RemoveRedirectRequest;
    type Result = RedirectResult;

    fn example() -> RemoveRedirectRequest {
        RemoveRedirectRequest {
            id: "f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6"
                .parse()
                .expect("valid example"),
            account: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
                .parse()
                .expect("valid example"),
        }
    }
}
