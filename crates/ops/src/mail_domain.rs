//! The `mail_domain` family: a domain Postfix receives mail for (`virtual_mailbox_domains`),
//! its sending gate and its catch-all. See `mail.rs` for the stack and the derived files.
//!
//! A new domain receives at once but may not send: its sending gate is closed (a
//! `check_sender_access` entry `REJECT`s it as a sender) until the control plane says its DNS
//! (SPF, DKIM, DMARC) is published and opens it with `set_mail_sending_gate`.

pub use declarations::mail_domain::*;

use registry::types::mail::MailLocalPart;
use registry::types::{DomainName, Hex32, Presence};
use registry::{Apply, Derive, Derived, OpError, Operation, Purge};
use serde::{Deserialize, Serialize};
use store::StoredRow;

use crate::account::account_info;
use crate::context::{Ctx, provider_error};
use crate::mail::{MAIL_DOMAIN, MailState, Target, derived_tables, own_row, purge_family, sync};

/// A mail domain as stored: its name, whether it may send, and the local part of the
/// mailbox its catch-all delivers to (`null` when none).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MailDomainRow {
    pub domain: DomainName,
    #[serde(default)]
    pub sending_open: bool,
    #[serde(default)]
    pub catch_all: Option<MailLocalPart>,
}

impl StoredRow for MailDomainRow {
    const FAMILY: &'static str = MAIL_DOMAIN;
    const FIELD_OWNERS: &'static [(&'static str, &'static [&'static str])] = &[
        ("sending_open", &[SetMailSendingGate::NAME]),
        ("catch_all", &[SetMailCatchAll::NAME]),
    ];
}

impl Purge<Ctx> for MailDomain {
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let rows = purge_family::<MailDomainRow>(ctx, account, &[Target::Postfix, Target::Dkim])?;
        for stored in &rows {
            remove_store(ctx, stored.row.domain.as_str())?;
        }
        ctx.forget_rows_of::<MailDomainRow>(account)
    }
}

impl Derive<Ctx> for MailDomain {
    /// The domain's lines in the Postfix tables: `virtual_mailbox_domains`, its sending gate,
    /// its catch-all (`crate::mail::derived_tables`).
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        derived_tables(ctx, MAIL_DOMAIN)
    }
}

impl Apply<Ctx> for EnsureMailDomain {
    fn apply(ctx: &mut Ctx, req: &EnsureMailDomainRequest) -> Result<MailDomainResult, OpError> {
        account_info(ctx, &req.account)?;
        let mail = MailState::of_job(ctx)?;
        if let Some(other) = mail.domain_names().get(req.domain.as_str())
            && other.id != req.id
        {
            return Err(OpError::permanent(
                "domain_taken",
                format!("{} is already a mail domain on this node", req.domain),
            ));
        }
        let previous = mail.domains.iter().find(|d| d.id == req.id).cloned();
        if let Some(previous) = &previous
            && previous.row.domain != req.domain
        {
            refuse_in_use(&mail, &previous.row)?;
        }
        // A renamed or re-sent domain keeps its gate and catch-all.
        let row = MailDomainRow {
            domain: req.domain.clone(),
            sending_open: previous.as_ref().is_some_and(|p| p.row.sending_open),
            catch_all: previous.and_then(|p| p.row.catch_all),
        };
        set(ctx, row)
    }
}

/// The result of a recorded domain, from its row.
fn result_of(row: &MailDomainRow) -> MailDomainResult {
    MailDomainResult {
        state: Presence::Present,
        domain: Some(row.domain.to_string()),
        sending_open: row.sending_open,
        catch_all: row
            .catch_all
            .as_ref()
            .map(|l| format!("{l}@{}", row.domain)),
    }
}

fn set(ctx: &mut Ctx, row: MailDomainRow) -> Result<MailDomainResult, OpError> {
    ctx.set_row(&row);
    sync(ctx, &[Target::Postfix, Target::Dkim])?;
    Ok(result_of(&row))
}

/// A domain with mailboxes or forwarders cannot go away under them.
fn refuse_in_use(mail: &MailState, domain: &MailDomainRow) -> Result<(), OpError> {
    let name = &domain.domain;
    let mailboxes = mail
        .mailboxes
        .iter()
        .filter(|m| &m.row.domain == name)
        .count();
    let forwarders = mail
        .forwarders
        .iter()
        .filter(|f| f.row.address.domain() == name.as_str())
        .count();
    if mailboxes + forwarders > 0 {
        return Err(OpError::permanent(
            "mail_domain_in_use",
            format!("{name} still has {mailboxes} mailbox(es) and {forwarders} forwarder(s)"),
        ));
    }
    Ok(())
}

/// Removes a mail domain's directory of the mail store (already absent is success).
fn remove_store(ctx: &Ctx, domain: &str) -> Result<(), OpError> {
    ctx.provider
        .remove_tree(&crate::mail::domain_store(&ctx.provider, domain))
        .map_err(provider_error)
}

impl Apply<Ctx> for RemoveMailDomain {
    fn apply(ctx: &mut Ctx, req: &RemoveMailDomainRequest) -> Result<MailDomainResult, OpError> {
        let mail = MailState::of_job(ctx)?;
        let domain = mail.domains.iter().find(|d| d.id == req.id);
        if let Some(stored) = domain {
            refuse_in_use(&mail, &stored.row)?;
        }
        let name = domain.map(|d| d.row.domain.to_string());
        ctx.forget_row();
        sync(ctx, &[Target::Postfix, Target::Dkim])?;
        if let Some(name) = name {
            // No mailbox is left (refused above otherwise): what remains is the empty
            // directory Dovecot made.
            remove_store(ctx, &name)?;
        }
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
        let row: MailDomainRow = own_row(ctx, &req.id, &req.account, "mail_domain_missing")?;
        set(
            ctx,
            MailDomainRow {
                sending_open: req.open,
                ..row
            },
        )
    }
}

impl Apply<Ctx> for SetMailCatchAll {
    fn apply(ctx: &mut Ctx, req: &SetMailCatchAllRequest) -> Result<MailDomainResult, OpError> {
        let row: MailDomainRow = own_row(ctx, &req.id, &req.account, "mail_domain_missing")?;
        if let Some(local) = &req.mailbox {
            let address = format!("{local}@{}", row.domain);
            let mail = MailState::of_job(ctx)?;
            if !mail.mailbox_addresses().contains_key(&address) {
                return Err(OpError::permanent(
                    "mailbox_missing",
                    format!("{address} is not a mailbox on this node"),
                ));
            }
        }
        set(
            ctx,
            MailDomainRow {
                catch_all: req.mailbox.clone(),
                ..row
            },
        )
    }
}
