//! The `mail_domain` family: a domain Postfix receives mail for (`virtual_mailbox_domains`),
//! its sending gate and its catch-all. See `mail.rs` for the stack and the derived files.
//!
//! A new domain receives at once but may not send: its sending gate is closed (a
//! `check_sender_access` entry `REJECT`s it as a sender) until the control plane says its DNS
//! (SPF, DKIM, DMARC) is published and opens it with `set_mail_sending_gate`.

pub use declarations::mail_domain::*;

use registry::types::{Hex32, Presence};
use registry::{Apply, OpError, Purge};
use serde_json::json;

use crate::account::{account_info, store_error};
use crate::context::Ctx;
use crate::mail::{
    Change, MAIL_DOMAIN, MAIL_FORWARDER, MAILBOX, MailState, Row, Target, own_row, sync,
};

impl Purge<Ctx> for MailDomain {
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        crate::mail::purge_family(ctx, MAIL_DOMAIN, account, &[Target::Postfix, Target::Dkim])?;
        crate::mail::forget_family(ctx, MAIL_DOMAIN, account)
    }
}

impl Apply<Ctx> for EnsureMailDomain {
    fn apply(ctx: &mut Ctx, req: &EnsureMailDomainRequest) -> Result<MailDomainResult, OpError> {
        account_info(ctx, &req.account)?;
        let mail = MailState::load_in(ctx, &Change::None).map_err(store_error)?;
        if let Some(other) = mail.domains().get(req.domain.as_str())
            && other.id != req.id
        {
            return Err(OpError::permanent(
                "domain_taken",
                format!("{} is already a mail domain on this node", req.domain),
            ));
        }
        let previous = mail.of(MAIL_DOMAIN).find(|r| r.id == req.id).cloned();
        if let Some(previous) = &previous
            && previous.str("domain") != req.domain.as_str()
        {
            refuse_in_use(&mail, previous)?;
        }
        // A renamed or re-sent domain keeps its gate and catch-all.
        let data = json!({
            "domain": req.domain,
            "sending_open": previous.as_ref().and_then(|p| p.data["sending_open"].as_bool()).unwrap_or(false),
            "catch_all": previous.as_ref().and_then(|p| p.data["catch_all"].as_str()),
        });
        set(ctx, req.id.clone(), req.account.clone(), data)
    }
}

/// The result of a recorded domain, from its row.
fn result_of(data: &serde_json::Value) -> MailDomainResult {
    let domain = data["domain"].as_str().unwrap_or_default();
    MailDomainResult {
        state: Presence::Present,
        domain: Some(domain.to_owned()),
        sending_open: data["sending_open"].as_bool().unwrap_or(false),
        catch_all: data["catch_all"].as_str().map(|l| format!("{l}@{domain}")),
    }
}

fn set(
    ctx: &mut Ctx,
    id: Hex32,
    account: Hex32,
    data: serde_json::Value,
) -> Result<MailDomainResult, OpError> {
    sync(
        ctx,
        Change::Upsert {
            family: MAIL_DOMAIN,
            id: &id,
            account: &account,
            data: data.clone(),
        },
        &[Target::Postfix, Target::Dkim],
    )?;
    let result = result_of(&data);
    ctx.set_resource(data);
    Ok(result)
}

/// A domain with mailboxes or forwarders cannot go away under them.
fn refuse_in_use(mail: &MailState, domain: &Row) -> Result<(), OpError> {
    let name = domain.str("domain");
    let mailboxes = mail.of(MAILBOX).filter(|r| r.str("domain") == name).count();
    let forwarders = mail
        .of(MAIL_FORWARDER)
        .filter(|r| r.str("address").ends_with(&format!("@{name}")))
        .count();
    if mailboxes + forwarders > 0 {
        return Err(OpError::permanent(
            "mail_domain_in_use",
            format!("{name} still has {mailboxes} mailbox(es) and {forwarders} forwarder(s)"),
        ));
    }
    Ok(())
}

impl Apply<Ctx> for RemoveMailDomain {
    fn apply(ctx: &mut Ctx, req: &RemoveMailDomainRequest) -> Result<MailDomainResult, OpError> {
        let mail = MailState::load_in(ctx, &Change::None).map_err(store_error)?;
        if let Some(row) = mail.of(MAIL_DOMAIN).find(|r| r.id == req.id) {
            refuse_in_use(&mail, row)?;
        }
        sync(
            ctx,
            Change::Delete {
                family: MAIL_DOMAIN,
                id: &req.id,
            },
            &[Target::Postfix, Target::Dkim],
        )?;
        ctx.forget_row();
        Ok(MailDomainResult {
            state: Presence::Absent,
            domain: None,
            sending_open: false,
            catch_all: None,
        })
    }
}

impl Apply<Ctx> for SetMailSendingGate {
    fn apply(ctx: &mut Ctx, req: &SetMailSendingGateRequest) -> Result<MailDomainResult, OpError> {
        let row = own_row(
            ctx,
            MAIL_DOMAIN,
            &req.id,
            &req.account,
            "mail_domain_missing",
        )?;
        let mut data = row.data;
        data["sending_open"] = json!(req.open);
        set(ctx, req.id.clone(), req.account.clone(), data)
    }
}

impl Apply<Ctx> for SetMailCatchAll {
    fn apply(ctx: &mut Ctx, req: &SetMailCatchAllRequest) -> Result<MailDomainResult, OpError> {
        let row = own_row(
            ctx,
            MAIL_DOMAIN,
            &req.id,
            &req.account,
            "mail_domain_missing",
        )?;
        if let Some(local) = &req.mailbox {
            let address = format!("{local}@{}", row.str("domain"));
            let mail = MailState::load_in(ctx, &Change::None).map_err(store_error)?;
            if !mail.mailboxes().contains_key(&address) {
                return Err(OpError::permanent(
                    "mailbox_missing",
                    format!("{address} is not a mailbox on this node"),
                ));
            }
        }
        let mut data = row.data;
        data["catch_all"] = json!(req.mailbox);
        set(ctx, req.id.clone(), req.account.clone(), data)
    }
}
