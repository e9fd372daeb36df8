//! The `mailbox` family's declarations: a mailbox with its password hash and quota, its
//! suspension and its usage.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::mailbox`.

use registry::types::mail::MailLocalPart;
use registry::types::{DomainName, Hex32, MiB, PasswordHash, Presence};
use registry::{Family, Module, Operation, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ex;
use crate::mail::{MAILBOX, tenant_resource};

pub struct Mailbox;

impl Family for Mailbox {
    const NAME: &'static str = MAILBOX;
    const MODULE: Module = Module::Mail;
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
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailboxSuspensionResult {
    pub state: Presence,
    pub address: String,
    /// Whether the mailbox now refuses every login (mail is still delivered to it).
    pub suspended: bool,
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
}
