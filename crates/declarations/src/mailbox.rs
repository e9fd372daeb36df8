//! The `mailbox` family's declarations: a mailbox with its password hash and quota, its
//! suspension and its usage.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::mailbox`.

use registry::types::mail::MailLocalPart;
use registry::types::{DomainName, Hex32, MiB, PasswordHash, Presence};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::declare::{family, impl_resource, operation};
use crate::example;
use crate::mail::MAILBOX;
use crate::mail_domain::EnsureMailDomain;
use crate::resource::AccountResource;

family! {
    pub struct Mailbox {
        name: MAILBOX,
        module: Mail,
        drift: {
            /// Dovecot's passwd-file lacks the mailbox's line as state.db derives it.
            DOVECOT_ENTRY_MISSING = "dovecot_entry_missing",
            /// Dovecot's passwd-file holds a line state.db does not derive.
            DOVECOT_PASSWD_DIFFERS = "dovecot_passwd_differs",
        },
    }
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

pub type MailboxRef = AccountResource;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetMailboxPasswordRequest {
    pub id: Hex32,
    pub account: Hex32,
    pub password: PasswordHash,
}

impl_resource!(owner = account: EnsureMailboxRequest, SetMailboxPasswordRequest);

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

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailboxSuspensionResult {
    pub state: Presence,
    pub address: String,
    /// Whether the mailbox now refuses every login (mail is still delivered to it).
    pub suspended: bool,
}

/// The example mailbox's id byte.
const MAILBOX_ID: u8 = 0xe5;

const EXAMPLE_HASH: &str = "$6$saltsalt$fCrh8nUGWG1kaWS0cBxg4tHqtdI/.vguU6L92utUDE2uuLboegIJMic.sfv7QYLSrG3dfTzYL584/rt2BJn400";

operation! {
    pub struct EnsureMailbox {
        name: "ensure_mailbox",
        kind: Declare,
        family: Mailbox,
        summary: "Create or update a mailbox: password hash and quota",
        request: EnsureMailboxRequest,
        result: MailboxResult,
        needs: [EnsureMailDomain],
        example: EnsureMailboxRequest {
            id: example::id(MAILBOX_ID),
            account: example::account(),
            domain: example::parse("shop.example.com"),
            local_part: example::parse("info"),
            password: example::parse(EXAMPLE_HASH),
            quota_mib: example::number(1024),
        },
    }
}

operation! {
    pub struct RemoveMailbox {
        name: "remove_mailbox",
        kind: Remove,
        family: Mailbox,
        summary: "Remove a mailbox and its mail (refused while it has an autoresponder)",
        request: MailboxRef,
        result: MailboxResult,
        example: AccountResource::example(MAILBOX_ID),
    }
}

operation! {
    pub struct SetMailboxPassword {
        name: "set_mailbox_password",
        kind: Set,
        family: Mailbox,
        summary: "Replace a mailbox's password hash",
        request: SetMailboxPasswordRequest,
        result: MailboxResult,
        example: SetMailboxPasswordRequest {
            id: example::id(MAILBOX_ID),
            account: example::account(),
            password: example::parse(EXAMPLE_HASH),
        },
    }
}

operation! {
    pub struct ObserveMailboxUsage {
        name: "observe_mailbox_usage",
        kind: Observe,
        family: Mailbox,
        summary: "Bytes and messages a mailbox holds, against its quota",
        request: MailboxRef,
        result: MailboxUsageResult,
        example: AccountResource::example(MAILBOX_ID),
    }
}

operation! {
    pub struct SuspendMailbox {
        name: "suspend_mailbox",
        kind: Suspend,
        family: Mailbox,
        summary: "Refuse every login of a mailbox (IMAP, POP3, SMTP); mail is still delivered to it",
        request: MailboxRef,
        result: MailboxSuspensionResult,
        example: AccountResource::example(MAILBOX_ID),
    }
}

operation! {
    pub struct UnsuspendMailbox {
        name: "unsuspend_mailbox",
        kind: Unsuspend,
        family: Mailbox,
        summary: "Let a suspended mailbox log in again, with the mail that arrived meanwhile",
        request: MailboxRef,
        result: MailboxSuspensionResult,
        example: AccountResource::example(MAILBOX_ID),
    }
}
