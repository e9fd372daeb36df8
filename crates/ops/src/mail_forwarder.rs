//! The `mail_forwarder` family: an address of one of the account's mail domains that Postfix
//! forwards to one or more addresses (`virtual_alias_maps`). See `mail.rs`.

pub use declarations::mail_forwarder::*;

use registry::types::{Hex32, Presence};
use registry::{Apply, OpError, Purge};
use serde_json::json;

use crate::account::account_info;
use crate::context::Ctx;
use crate::mail::{Change, MAIL_FORWARDER, Target, check_address_free, own_domain, sync};

impl Purge<Ctx> for MailForwarder {
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        crate::mail::purge_family(ctx, MAIL_FORWARDER, account, &[Target::Postfix])?;
        crate::mail::forget_family(ctx, MAIL_FORWARDER, account)
    }
}

impl Apply<Ctx> for EnsureMailForwarder {
    fn apply(
        ctx: &mut Ctx,
        req: &EnsureMailForwarderRequest,
    ) -> Result<MailForwarderResult, OpError> {
        account_info(ctx, &req.account)?;
        own_domain(ctx, &req.account, req.address.domain())?;
        check_address_free(ctx, req.address.as_str(), &req.id)?;
        let destinations: Vec<String> = req.destinations.iter().map(ToString::to_string).collect();
        let data = json!({"address": req.address, "destinations": destinations});
        sync(
            ctx,
            Change::Upsert {
                family: MAIL_FORWARDER,
                id: &req.id,
                account: &req.account,
                data: data.clone(),
            },
            &[Target::Postfix],
        )?;
        ctx.set_resource(data);
        Ok(MailForwarderResult {
            state: Presence::Present,
            address: Some(req.address.to_string()),
            destinations,
        })
    }
}

impl Apply<Ctx> for RemoveMailForwarder {
    fn apply(
        ctx: &mut Ctx,
        req: &RemoveMailForwarderRequest,
    ) -> Result<MailForwarderResult, OpError> {
        sync(
            ctx,
            Change::Delete {
                family: MAIL_FORWARDER,
                id: &req.id,
            },
            &[Target::Postfix],
        )?;
        ctx.forget_row();
        Ok(MailForwarderResult {
            state: Presence::Absent,
            address: None,
            destinations: Vec::new(),
        })
    }
}
