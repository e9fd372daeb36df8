//! The `https_policy` family (`set_https_policy`, `remove_https_policy`): whether a web
//! domain's `*:80` vhost sends every request but the ACME challenge path to HTTPS, and the
//! `Strict-Transport-Security` header of its `*:443` one. One policy per web domain, keyed by
//! the domain's id, rendered by the vhost owner (`crate::vhost`).
//!
//! A policy needs a certificate to act on: it is recorded whatever the domain has, and the
//! vhost carries it only while a certificate is bound (the result's `active`). A refusal
//! instead would tie the policy to the order in which a rebuild replays the certificate and
//! the policy, and would still leave `remove_certificate` to decide; rendered from the view,
//! removing or moving the certificate takes the redirect and the header out with the HTTPS
//! virtual host, and they come back with the next certificate, so no request is ever sent to
//! an HTTPS virtual host that does not exist.

use registry::types::{Hex32, Presence};
use registry::{Apply, Derive, Derived, Family, OpError, Purge, RowType};
use serde::{Deserialize, Serialize};
use store::StoredRow;

use super::{
    Hsts, HttpsPolicy, HttpsPolicyResult, RemoveHttpsPolicy, RemoveHttpsPolicyRequest,
    SetHttpsPolicy, SetHttpsPolicyRequest,
};
use crate::context::{Ctx, store_error};
use crate::vhost;

/// A web domain's HTTPS policy as stored (the resource id is the domain's).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpsPolicyRow {
    pub force_https: bool,
    pub hsts: Option<Hsts>,
}

impl StoredRow for HttpsPolicyRow {
    const FAMILY: &'static str = HttpsPolicy::NAME;
}

impl Purge<Ctx> for HttpsPolicy {
    const ROW: Option<RowType> = Some(store::row_type::<HttpsPolicyRow>());

    /// Forgets the account's policies. Runs before `certificate`'s and `web_domain`'s purges,
    /// which rewrite and then remove the vhosts they were rendered into.
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        ctx.forget_rows_of::<HttpsPolicyRow>(account)
    }
}

impl Derive<Ctx> for HttpsPolicy {
    /// The vhost of each domain with a policy (reported under the web domain).
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        vhost::derived_vhosts::<HttpsPolicyRow>(ctx, |stored| &stored.id)
    }
}

impl Apply<Ctx> for SetHttpsPolicy {
    fn apply(ctx: &mut Ctx, req: &SetHttpsPolicyRequest) -> Result<HttpsPolicyResult, OpError> {
        vhost::require_domain(ctx, &req.account, &req.id)?;
        ctx.set_row(&HttpsPolicyRow {
            force_https: req.force_https,
            hsts: req.hsts.clone(),
        });
        vhost::sync(ctx, &req.account, &req.id)?;
        crash::point(super::HTTPS_POLICY_AFTER_VHOST);
        Ok(HttpsPolicyResult {
            state: Presence::Present,
            force_https: req.force_https,
            hsts: req.hsts.clone(),
            active: vhost::has_certificate(ctx, &req.account, &req.id)?,
        })
    }
}

impl Apply<Ctx> for RemoveHttpsPolicy {
    fn apply(
        ctx: &mut Ctx,
        req: &RemoveHttpsPolicyRequest,
    ) -> Result<HttpsPolicyResult, OpError> {
        let previous = ctx
            .view()
            .get_owned::<HttpsPolicyRow>(&req.account, &req.id)
            .map_err(store_error)?;
        ctx.forget_row();
        if previous.is_some() {
            vhost::sync(ctx, &req.account, &req.id)?;
        }
        Ok(HttpsPolicyResult {
            state: Presence::Absent,
            force_https: false,
            hsts: None,
            active: false,
        })
    }
}
