//! The operation families, one module each. Each module declares its family and its
//! operations once; [`registry()`] lists them, and everything else is derived from that list.
//!
//! The order of the list matters in one way: families are purged in reverse order of first
//! appearance, so `account` comes first and is purged last.

pub mod account;
pub mod autoresponder;
pub mod context;
pub mod dkim_key;
pub mod mail;
pub mod mail_domain;
pub mod mail_forwarder;
pub mod mailbox;
pub mod spam_filter;
pub mod ssh_key;
pub mod sudo;
pub mod web_domain;

use std::sync::OnceLock;

pub use context::{Ctx, Service};
use registry::Registry;

/// The node's one list of operations.
pub fn registry() -> &'static Registry<Ctx> {
    static REGISTRY: OnceLock<Registry<Ctx>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        Registry::builder()
            .op::<account::EnsureAccount>()
            .op::<account::SuspendAccount>()
            .op::<account::UnsuspendAccount>()
            .op::<account::RemoveAccount>()
            .op::<account::SetAccountPassword>()
            .op::<ssh_key::EnsureSshKey>()
            .op::<ssh_key::RemoveSshKey>()
            .op::<web_domain::EnsureWebDomain>()
            .op::<web_domain::RemoveWebDomain>()
            .op::<mail_domain::EnsureMailDomain>()
            .op::<mail_domain::RemoveMailDomain>()
            .op::<mail_domain::SetMailSendingGate>()
            .op::<mail_domain::SetMailCatchAll>()
            .op::<mailbox::EnsureMailbox>()
            .op::<mailbox::RemoveMailbox>()
            .op::<mailbox::SetMailboxPassword>()
            .op::<mailbox::ObserveMailboxUsage>()
            .op::<mail_forwarder::EnsureMailForwarder>()
            .op::<mail_forwarder::RemoveMailForwarder>()
            .op::<autoresponder::EnsureAutoresponder>()
            .op::<autoresponder::RemoveAutoresponder>()
            .op::<dkim_key::EnsureDkimKey>()
            .op::<dkim_key::RemoveDkimKey>()
            .op::<spam_filter::SetSpamFilter>()
            .op::<sudo::SetSudoAllowlist>()
            .op::<sudo::RemoveSudoAllowlist>()
            .op::<sudo::ReadSudoEvents>()
            .build()
    })
}
