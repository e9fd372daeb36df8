//! The operation families, one module each. Each module declares its family and its
//! operations once; [`registry()`] lists them, and everything else is derived from that list.
//!
//! The order of the list matters in one way: families are purged in reverse order of first
//! appearance, so `account` comes first and is purged last.

pub mod account;
pub mod certificate;
pub mod context;
pub mod drift;
pub mod mysql_database;
pub mod mysql_grant;
pub mod mysql_user;
pub mod php;
pub mod scheduled_task;
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
            .op::<sudo::SetSudoAllowlist>()
            .op::<sudo::RemoveSudoAllowlist>()
            .op::<sudo::ReadSudoEvents>()
            .op::<mysql_database::EnsureMysqlDatabase>()
            .op::<mysql_database::RemoveMysqlDatabase>()
            .op::<mysql_database::SetMysqlQuota>()
            .op::<mysql_database::ObserveMysqlUsage>()
            .op::<mysql_user::EnsureMysqlUser>()
            .op::<mysql_user::SetMysqlUserPassword>()
            .op::<mysql_user::RemoveMysqlUser>()
            .op::<mysql_grant::EnsureMysqlGrant>()
            .op::<mysql_grant::RemoveMysqlGrant>()
            .op::<web_domain::SuspendWebDomain>()
            .op::<web_domain::UnsuspendWebDomain>()
            .op::<web_domain::EnsureRedirect>()
            .op::<web_domain::RemoveRedirect>()
            .op::<php::SetPhpVersion>()
            .op::<php::RemovePhpVersion>()
            .op::<php::SetPhpOptions>()
            .op::<php::SetPhpExtensions>()
            .op::<php::ObservePhpVersions>()
            .op::<scheduled_task::EnsureScheduledTask>()
            .op::<scheduled_task::RemoveScheduledTask>()
            .op::<certificate::EnsureCertificate>()
            .op::<certificate::RemoveCertificate>()
            .build()
    })
}
