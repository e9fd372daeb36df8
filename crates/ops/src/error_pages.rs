//! The `error_pages` family (`set_error_pages`, `remove_error_pages`): the pages a web
//! domain answers its error statuses with, one `ErrorDocument` line per status in both of its
//! virtual hosts, rendered by the vhost owner (`crate::vhost`). One set per web domain, keyed
//! by the domain's id.
//!
//! A page is a path of the site itself ([`ErrorPagePath`]), never a URL elsewhere or a text:
//! Apache serves it as an internal request of the same virtual host, so it runs as the tenant
//! (mpm-itk, the tenant's PHP pool) and is held to the same access rules as any other page.
//! A suspended domain answers with the node's 403 alone: its vhost names no error page then.

pub use declarations::error_pages::*;

use registry::types::{Hex32, Presence};
use registry::{Apply, Derive, Derived, Family, OpError, Purge, RowType};
use serde::{Deserialize, Serialize};
use store::StoredRow;

use crate::context::{Ctx, store_error};
use crate::vhost;

crash::points! {
    ERROR_PAGES_AFTER_VHOST = "error_pages.after_vhost",
}

/// A web domain's error pages as stored (the resource id is the domain's).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorPagesRow {
    pub pages: ErrorPageSet,
}

impl StoredRow for ErrorPagesRow {
    const FAMILY: &'static str = ErrorPages::NAME;
}

impl Purge<Ctx> for ErrorPages {
    const ROW: Option<RowType> = Some(store::row_type::<ErrorPagesRow>());

    /// Forgets the account's error pages. Runs before `certificate`'s and `web_domain`'s
    /// purges, which rewrite and then remove the vhosts they were rendered into.
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        ctx.forget_rows_of::<ErrorPagesRow>(account)
    }
}

impl Derive<Ctx> for ErrorPages {
    /// The vhost of each domain with error pages (reported under the web domain).
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        vhost::derived_vhosts::<ErrorPagesRow>(ctx, |stored| &stored.id)
    }
}

impl Apply<Ctx> for SetErrorPages {
    fn apply(ctx: &mut Ctx, req: &SetErrorPagesRequest) -> Result<ErrorPagesResult, OpError> {
        vhost::require_domain(ctx, &req.account, &req.id)?;
        ctx.set_row(&ErrorPagesRow {
            pages: req.pages.clone(),
        });
        vhost::sync(ctx, &req.account, &req.id)?;
        crash::point(ERROR_PAGES_AFTER_VHOST);
        Ok(ErrorPagesResult {
            state: Presence::Present,
            pages: req.pages.clone(),
        })
    }
}

impl Apply<Ctx> for RemoveErrorPages {
    fn apply(
        ctx: &mut Ctx,
        req: &RemoveErrorPagesRequest,
    ) -> Result<ErrorPagesResult, OpError> {
        let previous = ctx
            .view()
            .get_owned::<ErrorPagesRow>(&req.account, &req.id)
            .map_err(store_error)?;
        ctx.forget_row();
        if previous.is_some() {
            vhost::sync(ctx, &req.account, &req.id)?;
        }
        Ok(ErrorPagesResult {
            state: Presence::Absent,
            pages: ErrorPageSet::default(),
        })
    }
}
