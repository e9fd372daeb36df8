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

use registry::types::mail::MailLocalPart;
use registry::types::{DomainName, Hex32, MiB, PasswordHash, Presence};
use registry::{Family, Module, OpError, Operation, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::account::{account_info, store_error};
use crate::context::{Ctx, provider_error};
use crate::mail::{
    AUTORESPONDER, Change, MAILBOX, MailState, Row, Target, check_address_free, ex, mailbox_home,
    own_domain, own_row, sieve_script, sync, tenant_resource,
};

pub struct Mailbox;

impl Family for Mailbox {
    const NAME: &'static str = MAILBOX;
    const MODULE: Module = Module::Mail;
    type Context = Ctx;

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

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureMailboxRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// One of the account's mail domains.
    pub domain: DomainName,
    pub local_part: MailLocalPart,
    /// crypt(3) SHA-512; the node never sees the password.
    pub password: PasswordHash,
    /// The quota in MiB; 0 is unlimited.
    pub quota_mib: MiB,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailboxRef {
    pub id: Hex32,
    pub account: Hex32,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetMailboxPasswordRequest {
    pub id: Hex32,
    pub account: Hex32,
    pub password: PasswordHash,
}

tenant_resource!(EnsureMailboxRequest, MailboxRef, SetMailboxPasswordRequest);

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailboxResult {
    pub state: Presence,
    pub address: Option<String>,
    pub quota_mib: Option<u64>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailboxUsageResult {
    pub address: String,
    /// Bytes of the messages in the Maildir (all folders).
    pub bytes: u64,
    pub messages: u64,
    /// The quota in MiB; 0 is unlimited.
    pub quota_mib: u64,
    /// The count stopped at the provider's bound (a very large mailbox).
    pub truncated: bool,
}

fn example_ids() -> (Hex32, Hex32) {
    (
        ex("e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5"),
        ex("a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"),
    )
}

const EXAMPLE_HASH: &str = "$6$saltsalt$fCrh8nUGWG1kaWS0cBxg4tHqtdI/.vguU6L92utUDE2uuLboegIJMic.sfv7QYLSrG3dfTzYL584/rt2BJn400";

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

pub struct EnsureMailbox;

impl Operation for EnsureMailbox {
    const NAME: &'static str = "ensure_mailbox";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Create or update a mailbox: password hash and quota";
    type Family = Mailbox;
    type Request = EnsureMailboxRequest;
    type Result = MailboxResult;

    fn example() -> EnsureMailboxRequest {
        let (id, account) = example_ids();
        EnsureMailboxRequest {
            id,
            account,
            domain: ex("shop.example.com"),
            local_part: ex("info"),
            password: ex(EXAMPLE_HASH),
            quota_mib: MiB::try_from(1024).expect("valid example"),
        }
    }

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

pub struct RemoveMailbox;

impl Operation for RemoveMailbox {
    const NAME: &'static str = "remove_mailbox";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Remove a mailbox and its mail (refused while it has an autoresponder)";
    type Family = Mailbox;
    type Request = MailboxRef;
    type Result = MailboxResult;

    fn example() -> MailboxRef {
        let (id, account) = example_ids();
        MailboxRef { id, account }
    }

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
        ctx.forget_resource();
        Ok(MailboxResult {
            state: Presence::Absent,
            address: None,
            quota_mib: None,
        })
    }
}

pub struct SetMailboxPassword;

impl Operation for SetMailboxPassword {
    const NAME: &'static str = "set_mailbox_password";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Replace a mailbox's password hash";
    type Family = Mailbox;
    type Request = SetMailboxPasswordRequest;
    type Result = MailboxResult;

    fn example() -> SetMailboxPasswordRequest {
        let (id, account) = example_ids();
        SetMailboxPasswordRequest {
            id,
            account,
            password: ex(EXAMPLE_HASH),
        }
    }

    fn apply(ctx: &mut Ctx, req: &SetMailboxPasswordRequest) -> Result<MailboxResult, OpError> {
        let row = own_row(ctx, MAILBOX, &req.id, &req.account, "mailbox_missing")?;
        let mut data = row.data;
        data["password"] = json!(req.password);
        set(ctx, &req.id, &req.account, data)
    }
}

pub struct ObserveMailboxUsage;

impl Operation for ObserveMailboxUsage {
    const NAME: &'static str = "observe_mailbox_usage";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Bytes and messages a mailbox holds, against its quota";
    type Family = Mailbox;
    type Request = MailboxRef;
    type Result = MailboxUsageResult;

    fn example() -> MailboxRef {
        let (id, account) = example_ids();
        MailboxRef { id, account }
    }

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

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailboxSuspensionResult {
    pub state: Presence,
    pub address: String,
    /// Whether the mailbox now refuses every login (mail is still delivered to it).
    pub suspended: bool,
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

pub struct SuspendMailbox;

impl Operation for SuspendMailbox {
    const NAME: &'static str = "suspend_mailbox";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Refuse every login of a mailbox (IMAP, POP3, SMTP); mail is still delivered to it";
    type Family = Mailbox;
    type Request = MailboxRef;
    type Result = MailboxSuspensionResult;

    fn example() -> MailboxRef {
        let (id, account) = example_ids();
        MailboxRef { id, account }
    }

    fn apply(ctx: &mut Ctx, req: &MailboxRef) -> Result<MailboxSuspensionResult, OpError> {
        set_suspended(ctx, req, true)
    }
}

pub struct UnsuspendMailbox;

impl Operation for UnsuspendMailbox {
    const NAME: &'static str = "unsuspend_mailbox";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Let a suspended mailbox log in again, with the mail that arrived meanwhile";
    type Family = Mailbox;
    type Request = MailboxRef;
    type Result = MailboxSuspensionResult;

    fn example() -> MailboxRef {
        let (id, account) = example_ids();
        MailboxRef { id, account }
    }

    fn apply(ctx: &mut Ctx, req: &MailboxRef) -> Result<MailboxSuspensionResult, OpError> {
        set_suspended(ctx, req, false)
    }
}
