//! The `mail_forwarder` family: an address of one of the account's mail domains that Postfix
//! forwards to one or more addresses (`virtual_alias_maps`). See `mail.rs`.

use registry::types::mail::{MailAddress, MailDestinations};
use registry::types::{Hex32, Presence};
use registry::{Family, Module, OpError, Operation, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::account::account_info;
use crate::context::Ctx;
use crate::mail::{
    Change, MAIL_FORWARDER, Target, check_address_free, ex, own_domain, sync, tenant_resource,
};

pub struct MailForwarder;

impl Family for MailForwarder {
    const NAME: &'static str = MAIL_FORWARDER;
    const MODULE: Module = Module::Mail;
    type Context = Ctx;

    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        crate::mail::purge_family(ctx, MAIL_FORWARDER, account, &[Target::Postfix])?;
        crate::mail::forget_family(ctx, MAIL_FORWARDER, account)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureMailForwarderRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// An address of one of the account's mail domains, not a mailbox.
    pub address: MailAddress,
    pub destinations: MailDestinations,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveMailForwarderRequest {
    pub id: Hex32,
    pub account: Hex32,
}

tenant_resource!(EnsureMailForwarderRequest, RemoveMailForwarderRequest);

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailForwarderResult {
    pub state: Presence,
    pub address: Option<String>,
    pub destinations: Vec<String>,
}

fn example_ids() -> (Hex32, Hex32) {
    (
        ex("f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6"),
        ex("a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"),
    )
}

pub struct EnsureMailForwarder;

impl Operation for EnsureMailForwarder {
    const NAME: &'static str = "ensure_mail_forwarder";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Forward an address of a mail domain to one or more addresses";
    type Family = MailForwarder;
    type Request = EnsureMailForwarderRequest;
    type Result = MailForwarderResult;

    fn example() -> EnsureMailForwarderRequest {
        let (id, account) = example_ids();
        EnsureMailForwarderRequest {
            id,
            account,
            address: ex("sales@shop.example.com"),
            destinations: serde_json::from_value(json!(["owner@example.org"]))
                .expect("valid example"),
        }
    }

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

pub struct RemoveMailForwarder;

impl Operation for RemoveMailForwarder {
    const NAME: &'static str = "remove_mail_forwarder";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Stop forwarding an address";
    type Family = MailForwarder;
    type Request = RemoveMailForwarderRequest;
    type Result = MailForwarderResult;

    fn example() -> RemoveMailForwarderRequest {
        let (id, account) = example_ids();
        RemoveMailForwarderRequest { id, account }
    }

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
        ctx.forget_resource();
        Ok(MailForwarderResult {
            state: Presence::Absent,
            address: None,
            destinations: Vec::new(),
        })
    }
}
