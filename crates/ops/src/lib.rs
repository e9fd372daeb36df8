//! The operation families, one module each. Each module declares its family and its
//! operations once; [`registry()`] lists them, and everything else is derived from that list.
//!
//! The order of the list matters in one way: families are purged in reverse order of first
//! appearance, so `account` comes first and is purged last.

pub mod account;
pub mod context;
pub mod drift;
pub mod ftp_account;
pub mod runtime;
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
            .op::<account::SetAccountLimits>()
            .op::<account::SetAccountIsolation>()
            .op::<account::ObserveAccountUsage>()
            .op::<account::RebuildAccount>()
            .op::<ssh_key::EnsureSshKey>()
            .op::<ssh_key::RemoveSshKey>()
            .op::<web_domain::EnsureWebDomain>()
            .op::<web_domain::RemoveWebDomain>()
            .op::<ftp_account::EnsureFtpAccount>()
            .op::<ftp_account::RemoveFtpAccount>()
            .op::<sudo::SetSudoAllowlist>()
            .op::<sudo::RemoveSudoAllowlist>()
            .op::<sudo::ReadSudoEvents>()
            .op::<runtime::ObserveRuntime>()
            .build()
    })
}
