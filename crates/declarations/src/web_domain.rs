//! The `web_domain` family's declarations: a virtual host with its aliases and document root,
//! its suspension, and the `redirect` family of its redirects.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::web_domain`.

use registry::types::{
    DomainAliases, DomainName, Hex32, HomePath, HttpUrl, Presence, RedirectSource, RedirectStatus,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::account::EnsureAccount;
use crate::declare::{family, impl_resource, operation};
use crate::example;
use crate::resource::AccountResource;

family! { pub struct WebDomain { name: "web_domain", module: Web } }

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
    /// Where to: the rest of the path is appended.
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
