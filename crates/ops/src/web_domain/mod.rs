//! The `web_domain` family and its extensions: one Apache virtual host per domain, with its
//! aliases and its document root inside the tenant's home. One part per file:
//!
//! - `domain`: `ensure_web_domain`, `remove_web_domain`; the document root is created by
//!   the tenant worker, as the tenant (`Provider::as_tenant`);
//! - `suspension`: `suspend_web_domain`, `unsuspend_web_domain` (403 from the vhost, the
//!   document root untouched);
//! - `redirect`: the `redirect` family (`ensure_redirect`, `remove_redirect`);
//! - `https_policy`: the `https_policy` family (`set_https_policy`, `remove_https_policy`:
//!   forced HTTPS and the HSTS header, in force while a certificate is bound).
//!
//! Each records its row and has the vhost owner (`crate::vhost`) render the domain's vhost
//! from the view.

pub use declarations::web_domain::*;

crash::points! {
    AFTER_DOCROOT = "web_domain.after_docroot",
    AFTER_VHOST_WRITE = "web_domain.after_vhost_write",
    AFTER_OLD_VHOST_REMOVED = "web_domain.after_old_vhost_removed",
    AFTER_SUSPENSION_VHOST = "web_domain.after_suspension_vhost",
    REDIRECT_AFTER_VHOST = "redirect.after_vhost",
    HTTPS_POLICY_AFTER_VHOST = "https_policy.after_vhost",
}

mod domain;
mod https_policy;
mod redirect;
mod suspension;

pub use https_policy::HttpsPolicyRow;
pub use redirect::RedirectRow;

use registry::{Family, Operation};
use registry::types::{DomainAliases, DomainName, HomePath};
use serde::{Deserialize, Serialize};
use store::StoredRow;

/// A web domain as stored: its names, its document root relative to the home, and whether
/// it is suspended (rows written before suspension existed have no such field: not).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebDomainRow {
    pub domain: DomainName,
    pub aliases: DomainAliases,
    pub docroot: HomePath,
    #[serde(default)]
    pub suspended: bool,
}

impl StoredRow for WebDomainRow {
    const FAMILY: &'static str = WebDomain::NAME;
    const FIELD_OWNERS: registry::FieldOwners = &[(
        "suspended",
        &[SuspendWebDomain::NAME, UnsuspendWebDomain::NAME],
    )];
}
