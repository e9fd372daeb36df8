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

use registry::types::{Hex32, Presence};
use registry::{Apply, OpError, Purge};
use serde_json::json;

use crate::account::{account_info, store_error};
use crate::context::{Ctx, provider_error};
use crate::mail::{
    AUTORESPONDER, Change, MAILBOX, MailState, Row, Target, check_address_free, mailbox_home,
    own_domain, own_row, sieve_script, sync,
};

impl Purge<Ctx> for Mailbox {
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let rows =
            crate::mail::purge_family(ctx, MAILBOX, account, &[Target::Postfix, Target::Dovecot])?;
        for row in &rows {
            remove_mail(ctx, row)?;
        }
        crate::mail::forget_family(ctx, MAILBOX, account)
    }
}

fn remove_mail(ctx: &Ctx, row: &Row) -> Result<(), OpError> {
    let home = mailbox_home(&ctx.provider, row.str("domain"), row.str("local_part"));
    ctx.provider.remove_tree(&home).map_err(provider_error)?;
    let script = sieve_script(&ctx.provider, &row.id);
    for path in [script.clone(), script.with_extension("svbin")] {
        ctx.provider.remove_config(&path).map_err(provider_error)?;
    }
    Ok(())
}

fn result(data: &serde_json::Value) -> MailboxResult {
    MailboxResult {
        state: Presence::Present,
        address: Some(format!(
            "{}@{}",
            data["local_part"].as_str().unwrap_or_default(),
            data["domain"].as_str().unwrap_or_default()
        )),
        quota_mib: data["quota_mib"].as_u64(),
    }
}

fn set(
    ctx: &mut Ctx,
    id: &Hex32,
    account: &Hex32,
    data: serde_json::Value,
) -> Result<MailboxResult, OpError> {
    sync(
        ctx,
        Change::Upsert {
            family: MAILBOX,
            id,
            account,
            data: data.clone(),
        },
        &[Target::Postfix, Target::Dovecot],
    )?;
    let result = result(&data);
    ctx.set_resource(data);
    Ok(result)
}

impl Apply<Ctx> for EnsureMailbox {
    fn apply(ctx: &mut Ctx, req: &EnsureMailboxRequest) -> Result<MailboxResult, OpError> {
        account_info(ctx, &req.account)?;
        own_domain(ctx, &req.account, req.domain.as_str())?;
        let address = format!("{}@{}", req.local_part, req.domain);
        check_address_free(ctx, &address, &req.id)?;
        let old = ctx.state.resource(MAILBOX, &req.id).map_err(store_error)?;
        if let Some(old) = &old
            && (old.data["domain"] != json!(req.domain)
                || old.data["local_part"] != json!(req.local_part))
        {
            return Err(OpError::permanent(
                "mailbox_address_fixed",
                "a mailbox's address cannot change; create a new mailbox",
            ));
        }
        // Suspension belongs to the mailbox, not to this request: a changed mailbox stays
        // suspended until unsuspended.
        let suspended = old.is_some_and(|row| row.data["suspended"] == json!(true));
        let mut data = json!({
            "domain": req.domain,
            "local_part": req.local_part,
            "password": req.password,
            "quota_mib": req.quota_mib.get(),
        });
        if suspended {
            data["suspended"] = json!(true);
        }
        set(ctx, &req.id, &req.account, data)
    }
}

impl Apply<Ctx> for RemoveMailbox {
    fn apply(ctx: &mut Ctx, req: &MailboxRef) -> Result<MailboxResult, OpError> {
        let mail = MailState::load_in(ctx, &Change::None).map_err(store_error)?;
        if mail
            .of(AUTORESPONDER)
            .any(|r| r.str("mailbox") == req.id.as_str())
        {
            return Err(OpError::permanent(
                "mailbox_in_use",
                "remove the mailbox's autoresponder first",
            ));
        }
        let row = mail.of(MAILBOX).find(|r| r.id == req.id).cloned();
        sync(
            ctx,
            Change::Delete {
                family: MAILBOX,
                id: &req.id,
            },
            &[Target::Postfix, Target::Dovecot],
        )?;
        if let Some(row) = row {
            remove_mail(ctx, &row)?;
        }
        ctx.forget_row();
        Ok(MailboxResult {
            state: Presence::Absent,
            address: None,
            quota_mib: None,
        })
    }
}

impl Apply<Ctx> for SetMailboxPassword {
    fn apply(ctx: &mut Ctx, req: &SetMailboxPasswordRequest) -> Result<MailboxResult, OpError> {
        let row = own_row(ctx, MAILBOX, &req.id, &req.account, "mailbox_missing")?;
        let mut data = row.data;
        data["password"] = json!(req.password);
        set(ctx, &req.id, &req.account, data)
    }
}

impl Apply<Ctx> for ObserveMailboxUsage {
    fn apply(ctx: &mut Ctx, req: &MailboxRef) -> Result<MailboxUsageResult, OpError> {
        let row = own_row(ctx, MAILBOX, &req.id, &req.account, "mailbox_missing")?;
        let home = mailbox_home(&ctx.provider, row.str("domain"), row.str("local_part"));
        let usage = ctx
            .provider
            .maildir_usage(&home.join("Maildir"))
            .map_err(provider_error)?;
        Ok(MailboxUsageResult {
            address: format!("{}@{}", row.str("local_part"), row.str("domain")),
            bytes: usage.bytes,
            messages: usage.messages,
            quota_mib: row.data["quota_mib"].as_u64().unwrap_or(0),
            truncated: usage.truncated,
        })
    }
}

fn set_suspended(
    ctx: &mut Ctx,
    req: &MailboxRef,
    suspended: bool,
) -> Result<MailboxSuspensionResult, OpError> {
    let row = own_row(ctx, MAILBOX, &req.id, &req.account, "mailbox_missing")?;
    let mut data = row.data;
    match data.as_object_mut() {
        Some(fields) if suspended => fields.insert("suspended".to_owned(), json!(true)),
        Some(fields) => fields.remove("suspended"),
        None => None,
    };
    let address = result(&data).address.unwrap_or_default();
    set(ctx, &req.id, &req.account, data)?;
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
