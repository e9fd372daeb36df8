//! The operation families, one module each. Each module declares its family and its
//! operations once; [`registry()`] lists them, and everything else is derived from that list.
//!
//! The order of the list matters in one way: families are purged in reverse order of first
//! appearance, so `account` comes first and is purged last.

pub mod account;
pub mod autoresponder;
pub mod backup;
pub mod certificate;
pub mod context;
pub mod dkim_key;
pub mod drift;
pub mod ftp_account;
pub mod mail;
pub mod mail_domain;
pub mod mail_forwarder;
pub mod mailbox;
pub mod mysql_database;
pub mod mysql_grant;
pub mod mysql_user;
pub mod php;
pub mod runtime;
pub mod scheduled_task;
pub mod spam_filter;
pub mod ssh_key;
pub mod sudo;
pub mod web_access;
pub mod web_domain;
pub mod web_isolation;

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
            .op::<mail_domain::EnsureMailDomain>()
            .op::<mail_domain::RemoveMailDomain>()
            .op::<mail_domain::SetMailSendingGate>()
            .op::<mail_domain::SetMailCatchAll>()
            .op::<mailbox::EnsureMailbox>()
            .op::<mailbox::RemoveMailbox>()
            .op::<mailbox::SetMailboxPassword>()
            .op::<mailbox::ObserveMailboxUsage>()
            .op::<mailbox::SuspendMailbox>()
            .op::<mailbox::UnsuspendMailbox>()
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
            .op::<ftp_account::EnsureFtpAccount>()
            .op::<ftp_account::RemoveFtpAccount>()
            .op::<ftp_account::SetFtpAccountPassword>()
            .op::<ftp_account::SuspendFtpAccount>()
            .op::<ftp_account::UnsuspendFtpAccount>()
            .op::<runtime::ObserveRuntime>()
            .op::<certificate::EnsureCertificate>()
            .op::<certificate::RemoveCertificate>()
            .op::<certificate::RenewCertificate>()
            .op::<certificate::ObserveCertificates>()
            .op::<backup::CreateAccountBackup>()
            .op::<backup::RestoreAccountBackup>()
            .op::<backup::RemoveAccountBackup>()
            .op::<web_access::EnsureProtectedDirectory>()
            .op::<web_access::RemoveProtectedDirectory>()
            .op::<web_access::EnsureIpBlock>()
            .op::<web_access::RemoveIpBlock>()
            .build()
    })
}
