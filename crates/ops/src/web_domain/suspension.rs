//! `suspend_web_domain` and `unsuspend_web_domain`: the domain's vhost answers 403 for
//! everything but the ACME challenge path, its document root left alone.

use registry::types::Presence;
use registry::{Apply, OpError};

use super::{
    SuspendWebDomain, UnsuspendWebDomain, WebDomainRow, WebDomainSuspensionRequest,
    WebDomainSuspensionResult,
};
use crate::context::Ctx;
use crate::vhost;

fn set_suspended(
    ctx: &mut Ctx,
    req: &WebDomainSuspensionRequest,
    suspended: bool,
) -> Result<WebDomainSuspensionResult, OpError> {
    let row = vhost::require_domain(ctx, &req.account, &req.id)?;
    let domain = row.domain.to_string();
    ctx.set_row(&WebDomainRow { suspended, ..row });
    vhost::sync(ctx, &req.account, &req.id)?;
    crash::point(super::AFTER_SUSPENSION_VHOST);
    Ok(WebDomainSuspensionResult {
        state: Presence::Present,
        domain,
        suspended,
    })
}

impl Apply<Ctx> for SuspendWebDomain {
    fn apply(
        ctx: &mut Ctx,
        req: &WebDomainSuspensionRequest,
    ) -> Result<WebDomainSuspensionResult, OpError> {
        set_suspended(ctx, req, true)
    }
}

impl Apply<Ctx> for UnsuspendWebDomain {
    fn apply(
        ctx: &mut Ctx,
        req: &WebDomainSuspensionRequest,
    ) -> Result<WebDomainSuspensionResult, OpError> {
        set_suspended(ctx, req, false)
    }
}
