//! The `redirect` family (`ensure_redirect`, `remove_redirect`): a path prefix of one of the
//! account's web domains redirected elsewhere, rendered by the vhost owner as a
//! `RedirectMatch` line that never catches the ACME challenge path. A redirect is left out of
//! a virtual host it would send back to itself (`vhost::sends_back_to_itself`), decided when
//! the vhost is rendered because aliases, a certificate or forced HTTPS may change it later.

use registry::types::{Hex32, HttpUrl, Presence, RedirectSource, RedirectStatus};
use registry::{Apply, Derive, Derived, Family, OpError, Purge, RowType};
use serde::{Deserialize, Serialize};
use store::StoredRow;

use super::{
    EnsureRedirect, EnsureRedirectRequest, Redirect, RedirectResult, RemoveRedirect,
    RemoveRedirectRequest,
};
use crate::context::{Ctx, store_error};
use crate::vhost::{self, redirect_pattern, redirect_target};

/// A redirect as stored: the web domain (by resource id) whose paths it redirects.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedirectRow {
    pub web_domain: Hex32,
    pub source: RedirectSource,
    pub target: HttpUrl,
    pub status: RedirectStatus,
}

impl StoredRow for RedirectRow {
    const FAMILY: &'static str = Redirect::NAME;
}

impl Purge<Ctx> for Redirect {
    const ROW: Option<RowType> = Some(store::row_type::<RedirectRow>());

    /// Forgets the account's redirects. Runs before `web_domain`'s purge, which removes the
    /// vhosts they were rendered into.
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        ctx.forget_rows_of::<RedirectRow>(account)
    }
}

impl Derive<Ctx> for Redirect {
    /// The vhost of each domain a redirect is on (its `RedirectMatch` lines are the vhost
    /// owner's; the vhost is reported under its web domain).
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        vhost::derived_vhosts::<RedirectRow>(ctx, |stored| &stored.row.web_domain)
    }
}

impl Apply<Ctx> for EnsureRedirect {
    fn apply(ctx: &mut Ctx, req: &EnsureRedirectRequest) -> Result<RedirectResult, OpError> {
        vhost::require_domain(ctx, &req.account, &req.web_domain)?;
        let view = ctx.view();
        // A redirect that moved to another domain leaves its old vhost first.
        let previous = view.get::<RedirectRow>(&req.id).map_err(store_error)?;
        for stored in view
            .of_account::<RedirectRow>(&req.account)
            .map_err(store_error)?
        {
            if stored.id != req.id
                && stored.row.web_domain == req.web_domain
                && stored.row.source == req.source
            {
                return Err(OpError::permanent(
                    "redirect_conflict",
                    format!(
                        "redirect {} already redirects {} on this domain",
                        stored.id, req.source
                    ),
                ));
            }
        }
        ctx.set_row(&RedirectRow {
            web_domain: req.web_domain.clone(),
            source: req.source.clone(),
            target: req.target.clone(),
            status: req.status,
        });
        if let Some(old) = previous
            && old.row.web_domain != req.web_domain
        {
            vhost::sync(ctx, &req.account, &old.row.web_domain)?;
        }
        vhost::sync(ctx, &req.account, &req.web_domain)?;
        crash::point(super::REDIRECT_AFTER_VHOST);
        Ok(RedirectResult {
            state: Presence::Present,
            directive: Some(format!(
                "RedirectMatch {} \"{}\" \"{}\"",
                req.status.code(),
                redirect_pattern(&req.source),
                redirect_target(&req.target)
            )),
        })
    }
}

impl Apply<Ctx> for RemoveRedirect {
    fn apply(ctx: &mut Ctx, req: &RemoveRedirectRequest) -> Result<RedirectResult, OpError> {
        let previous = ctx
            .view()
            .get_owned::<RedirectRow>(&req.account, &req.id)
            .map_err(store_error)?;
        ctx.forget_row();
        if let Some(old) = previous {
            vhost::sync(ctx, &req.account, &old.web_domain)?;
        }
        Ok(RedirectResult {
            state: Presence::Absent,
            directive: None,
        })
    }
}
