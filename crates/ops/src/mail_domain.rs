//! The `mail_domain` family: a domain Postfix receives mail for (`virtual_mailbox_domains`),
//! its sending gate and its catch-all. See `mail.rs` for the stack and the derived files.
//!
//! Its result carries the host name mail clients use and every DNS record the domain needs
//! (`crate::mail_records`); its clients' settings are served by the node
//! (`crate::mail_clients`).
//!
//! A new domain receives at once but may not send: its sending gate is closed (a
//! `check_sender_access` entry `REJECT`s it as a sender) until the control plane says its DNS
//! (SPF, DKIM, DMARC) is published and opens it with `set_mail_sending_gate`.

pub use declarations::mail_domain::*;

use registry::types::mail::MailLocalPart;
use registry::types::{DomainName, Hex32, Presence};
use registry::{Apply, Derive, Derived, OpError, Operation, Owner, Purge, RowType};
use serde::{Deserialize, Serialize};
use store::StoredRow;

use crate::account::account_info;
use crate::context::{Ctx, provider_error, store_error};
use crate::mail::{MAIL_DOMAIN, MailState, Target, derived_tables, own_row, purge_family, sync};
use crate::mail_records::domain_dns;
use crate::web_domain::WebDomainRow;
use crate::{mail_clients, mail_hosts, vhost};

crash::points! {}

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
    const FIELD_OWNERS: registry::FieldOwners = &[
        ("sending_open", &[SetMailSendingGate::NAME]),
        ("catch_all", &[SetMailCatchAll::NAME]),
    ];
}

impl Purge<Ctx> for MailDomain {
    const ROW: Option<RowType> = Some(store::row_type::<MailDomainRow>());

    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let rows = purge_family::<MailDomainRow>(ctx, account, &[Target::Postfix, Target::Dkim])?;
        for stored in &rows {
            remove_store(ctx, stored.row.domain.as_str())?;
            mail_clients::remove(ctx, &stored.id)?;
        }
        mail_hosts::sync(ctx, false)?;
        ctx.forget_rows_of::<MailDomainRow>(account)
    }
}

impl Derive<Ctx> for MailDomain {
    /// The domain's lines in the Postfix tables: `virtual_mailbox_domains`, its sending gate,
    /// its catch-all (`crate::mail::derived_tables`); its clients' settings files and their
    /// vhost (`crate::mail_clients`); its mail host name's SNI lines (`crate::mail_hosts`);
    /// the vhosts of the web domains that serve them.
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        let mut items = derived_tables(ctx, MAIL_DOMAIN)?;
        items.extend(mail_clients::derived(ctx)?);
        items.extend(mail_hosts::derived(ctx)?);
        for stored in ctx.view().all::<MailDomainRow>().map_err(store_error)? {
            if let Owner::Tenant(account) = &stored.owner {
                for web in web_domains_named(ctx, account, &stored.row.domain)? {
                    if let Some(derived) = vhost::derived(ctx, account, &web)? {
                        items.push(derived.vhost);
                    }
                }
            }
        }
        Ok(items)
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
            catch_all: previous.as_ref().and_then(|p| p.row.catch_all.clone()),
        };
        let renamed = previous.map(|p| p.row.domain);
        set(ctx, &req.id, &req.account, row, renamed.as_ref())
    }
}

/// The result of a recorded domain, from its row and the view.
pub fn result_of(
    ctx: &Ctx,
    account: &Hex32,
    row: &MailDomainRow,
) -> Result<MailDomainResult, OpError> {
    let dns = domain_dns(ctx, &Owner::Tenant(account.clone()), &row.domain)?;
    Ok(MailDomainResult {
        state: Presence::Present,
        domain: Some(row.domain.to_string()),
        sending_open: row.sending_open,
        catch_all: row
            .catch_all
            .as_ref()
            .map(|l| format!("{l}@{}", row.domain)),
        mail_host: dns.mail_host.map(|h| h.to_string()),
        records: dns.records,
    })
}

/// `account`'s web domains named `domain` (by name or alias): their vhosts serve the mail
/// domain's client settings (`crate::vhost`).
pub fn web_domains_named(
    ctx: &Ctx,
    account: &Hex32,
    domain: &DomainName,
) -> Result<Vec<Hex32>, OpError> {
    Ok(ctx
        .view()
        .of_account::<WebDomainRow>(account)
        .map_err(store_error)?
        .into_iter()
        .filter(|web| &web.row.domain == domain || web.row.aliases.iter().any(|a| a == domain))
        .map(|web| web.id)
        .collect())
}

/// Rewrites what serves the clients' settings of mail domain `id` named `names` (the
/// domain's names before and after the job): its settings files and vhost, and the vhosts
/// of the account's web domains of those names.
fn sync_clients(
    ctx: &mut Ctx,
    id: &Hex32,
    account: &Hex32,
    names: &[&DomainName],
) -> Result<(), OpError> {
    mail_clients::sync(ctx, id)?;
    mail_hosts::sync(ctx, false)?;
    let mut webs = std::collections::BTreeSet::new();
    for name in names {
        webs.extend(web_domains_named(ctx, account, name)?);
    }
    for web in webs {
        vhost::sync(ctx, account, &web)?;
    }
    Ok(())
}

fn set(
    ctx: &mut Ctx,
    id: &Hex32,
    account: &Hex32,
    row: MailDomainRow,
    renamed: Option<&DomainName>,
) -> Result<MailDomainResult, OpError> {
    ctx.set_row(&row);
    sync(ctx, &[Target::Postfix, Target::Dkim])?;
    let mut names = vec![&row.domain];
    names.extend(renamed.filter(|old| *old != &row.domain));
    sync_clients(ctx, id, account, &names)?;
    result_of(ctx, account, &row)
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
        let name = domain.map(|d| d.row.domain.clone());
        ctx.forget_row();
        sync(ctx, &[Target::Postfix, Target::Dkim])?;
        let names: Vec<&DomainName> = name.iter().collect();
        sync_clients(ctx, &req.id, &req.account, &names)?;
        if let Some(name) = &name {
            // No mailbox is left (refused above otherwise): what remains is the empty
            // directory Dovecot made.
            remove_store(ctx, name.as_str())?;
        }
        Ok(MailDomainResult {
            state: Presence::Absent,
            domain: None,
            sending_open: false,
            catch_all: None,
            mail_host: None,
            records: Vec::new(),
        })
    }
}

impl Apply<Ctx> for SetMailSendingGate {
    fn apply(ctx: &mut Ctx, req: &SetMailSendingGateRequest) -> Result<MailDomainResult, OpError> {
        let row: MailDomainRow = own_row(ctx, &req.id, &req.account, "mail_domain_missing")?;
        set(
            ctx,
            &req.id,
            &req.account,
            MailDomainRow {
                sending_open: req.open,
                ..row
            },
            None,
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
            &req.id,
            &req.account,
            MailDomainRow {
                catch_all: req.mailbox.clone(),
                ..row
            },
            None,
        )
    }
}
