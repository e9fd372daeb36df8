//! The `mailbox` family: a Dovecot mailbox (passwd-file line with its SHA512-CRYPT hash,
//! quota and Sieve script) that Postfix accepts mail for. See `mail.rs`.
//!
//! Removing a mailbox removes its mail (`<vmail>/<domain>/<local part>`): a mailbox created
//! later with the same address must not inherit it.
//!
//! Suspension (`suspend_mailbox`) keeps the mailbox in the passwd-file and in Postfix's
//! tables and adds the passdb extra field `allow_nets=0.0.0.0/32` to its line: a login from
//! any real client address (IMAP, POP3, and SMTP AUTH through Dovecot's SASL) or with no
//! address at all fails even with the right password, while delivery goes on (LMTP looks up
//! the userdb only, which is unchanged), so no mail sent to a suspended mailbox bounces or is
//! lost, and `unsuspend_mailbox` gives back the mailbox with everything that arrived. Taking
//! the line out of the passwd-file instead would also take it out of the userdb and make
//! delivery fail; `nologin` is honoured by Dovecot's login processes only, not by the SASL
//! Postfix asks, so SMTP AUTH would still succeed.

pub use declarations::mailbox::*;

use registry::types::mail::MailLocalPart;
use registry::types::{DomainName, Hex32, PasswordHash, Presence};
use registry::{Apply, Derive, Derived, OpError, Operation, Purge, RowType};
use serde::{Deserialize, Serialize};
use store::StoredRow;

use crate::account::account_info;
use crate::context::{Ctx, provider_error, store_error};
use crate::mail::{
    MAILBOX, MailState, Target, check_address_free, derived_tables, mailbox_home, own_domain,
    own_row, purge_family, sieve_script, sync,
};
use crate::row_fields::is_false;

crash::points! {}

/// A mailbox as stored: its address, hash and quota; `suspended` only while it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MailboxRow {
    pub domain: DomainName,
    pub local_part: MailLocalPart,
    pub password: PasswordHash,
    pub quota_mib: u64,
    #[serde(default, skip_serializing_if = "is_false")]
    pub suspended: bool,
}

impl StoredRow for MailboxRow {
    const FAMILY: &'static str = MAILBOX;
    /// Both `ensure_mailbox` and `set_mailbox_password` state the password whole: the later
    /// request's is the one in force.
    const FIELD_OWNERS: registry::FieldOwners = &[
        ("password", &[EnsureMailbox::NAME, SetMailboxPassword::NAME]),
        ("suspended", &[SuspendMailbox::NAME, UnsuspendMailbox::NAME]),
    ];
}

impl MailboxRow {
    /// `local_part@domain`.
    pub fn address(&self) -> String {
        format!("{}@{}", self.local_part, self.domain)
    }
}

impl Purge<Ctx> for Mailbox {
    const ROW: Option<RowType> = Some(store::row_type::<MailboxRow>());

    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let rows = purge_family::<MailboxRow>(ctx, account, &[Target::Postfix, Target::Dovecot])?;
        for stored in &rows {
            remove_mail(ctx, &stored.id, &stored.row)?;
        }
        ctx.forget_rows_of::<MailboxRow>(account)
    }
}

fn remove_mail(ctx: &Ctx, id: &Hex32, row: &MailboxRow) -> Result<(), OpError> {
    let home = mailbox_home(&ctx.provider, row.domain.as_str(), row.local_part.as_str());
    ctx.provider.remove_tree(&home).map_err(provider_error)?;
    let script = sieve_script(&ctx.provider, id);
    for path in [script.clone(), script.with_extension("svbin")] {
        ctx.provider.remove_config(&path).map_err(provider_error)?;
    }
    Ok(())
}

fn result(row: &MailboxRow) -> MailboxResult {
    MailboxResult {
        state: Presence::Present,
        address: Some(row.address()),
        quota_mib: Some(row.quota_mib),
    }
}

fn set(ctx: &mut Ctx, row: MailboxRow) -> Result<MailboxResult, OpError> {
    ctx.set_row(&row);
    sync(ctx, &[Target::Postfix, Target::Dovecot])?;
    Ok(result(&row))
}

impl Derive<Ctx> for Mailbox {
    /// The mailbox's lines in the Postfix tables (`virtual_mailbox_maps`, its alias to
    /// itself) and in Dovecot's passwd-file (`crate::mail::derived_tables`). Its mail is the
    /// tenant's and is not compared.
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        derived_tables(ctx, MAILBOX)
    }
}

impl Apply<Ctx> for EnsureMailbox {
    fn apply(ctx: &mut Ctx, req: &EnsureMailboxRequest) -> Result<MailboxResult, OpError> {
        account_info(ctx, &req.account)?;
        own_domain(ctx, &req.account, req.domain.as_str())?;
        let address = format!("{}@{}", req.local_part, req.domain);
        check_address_free(ctx, &address, &req.id)?;
        let old = ctx
            .view()
            .get::<MailboxRow>(&req.id)
            .map_err(store_error)?
            .map(|stored| stored.row);
        if let Some(old) = &old
            && (old.domain != req.domain || old.local_part != req.local_part)
        {
            return Err(OpError::permanent(
                "mailbox_address_fixed",
                "a mailbox's address cannot change; create a new mailbox",
            ));
        }
        // Suspension belongs to the mailbox, not to this request: a changed mailbox stays
        // suspended until unsuspended.
        set(
            ctx,
            MailboxRow {
                domain: req.domain.clone(),
                local_part: req.local_part.clone(),
                password: req.password.clone(),
                quota_mib: req.quota_mib.get(),
                suspended: old.is_some_and(|row| row.suspended),
            },
        )
    }
}

impl Apply<Ctx> for RemoveMailbox {
    fn apply(ctx: &mut Ctx, req: &MailboxRef) -> Result<MailboxResult, OpError> {
        let mail = MailState::of_job(ctx)?;
        if mail.autoresponders.iter().any(|a| a.row.mailbox == req.id) {
            return Err(OpError::permanent(
                "mailbox_in_use",
                "remove the mailbox's autoresponder first",
            ));
        }
        let row = mail
            .mailboxes
            .iter()
            .find(|m| m.id == req.id)
            .map(|m| m.row.clone());
        ctx.forget_row();
        sync(ctx, &[Target::Postfix, Target::Dovecot])?;
        if let Some(row) = row {
            remove_mail(ctx, &req.id, &row)?;
        }
        Ok(MailboxResult {
            state: Presence::Absent,
            address: None,
            quota_mib: None,
        })
    }
}

impl Apply<Ctx> for SetMailboxPassword {
    fn apply(ctx: &mut Ctx, req: &SetMailboxPasswordRequest) -> Result<MailboxResult, OpError> {
        let row: MailboxRow = own_row(ctx, &req.id, &req.account, "mailbox_missing")?;
        set(
            ctx,
            MailboxRow {
                password: req.password.clone(),
                ..row
            },
        )
    }
}

impl Apply<Ctx> for ObserveMailboxUsage {
    fn apply(ctx: &mut Ctx, req: &MailboxRef) -> Result<MailboxUsageResult, OpError> {
        let row: MailboxRow = own_row(ctx, &req.id, &req.account, "mailbox_missing")?;
        let home = mailbox_home(&ctx.provider, row.domain.as_str(), row.local_part.as_str());
        let usage = ctx
            .provider
            .maildir_usage(&home.join("Maildir"))
            .map_err(provider_error)?;
        Ok(MailboxUsageResult {
            address: row.address(),
            bytes: usage.bytes,
            messages: usage.messages,
            quota_mib: row.quota_mib,
            truncated: usage.truncated,
        })
    }
}

fn set_suspended(
    ctx: &mut Ctx,
    req: &MailboxRef,
    suspended: bool,
) -> Result<MailboxSuspensionResult, OpError> {
    let row: MailboxRow = own_row(ctx, &req.id, &req.account, "mailbox_missing")?;
    let address = row.address();
    set(ctx, MailboxRow { suspended, ..row })?;
    Ok(MailboxSuspensionResult {
        state: Presence::Present,
        address,
        suspended,
    })
}

impl Apply<Ctx> for SuspendMailbox {
    fn apply(ctx: &mut Ctx, req: &MailboxRef) -> Result<MailboxSuspensionResult, OpError> {
        set_suspended(ctx, req, true)
    }
}

impl Apply<Ctx> for UnsuspendMailbox {
    fn apply(ctx: &mut Ctx, req: &MailboxRef) -> Result<MailboxSuspensionResult, OpError> {
        set_suspended(ctx, req, false)
    }
}
