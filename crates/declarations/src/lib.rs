//! Every operation of the node, declared once, and nothing that touches the OS.
//!
//! One module per family, each holding its operations' request and result types (built only
//! from validated types: `registry::types`', or the family's own made with
//! `registry::string_type!`), the operation types implementing
//! [`registry::Operation`] (name, kind, scope, summary, lane, family, needs, examples) and the
//! family types implementing [`registry::Family`] (name, module), written with the macros of
//! `declare.rs`. The request shapes several operations share are in [`resource`], what the
//! examples are built from in [`example`]. [`operations!`] is the one list of them;
//! [`registry()`] builds the registry from it, and with it everything derived: validation, job
//! identity, kinds and prerequisites, schemas, the catalogue and the OpenAPI document.
//!
//! This is what the unprivileged side links: the API, the client and every binary that talks
//! about operations without performing them. The handlers (`ops`) implement
//! [`registry::Apply`] and [`registry::Purge`] for these types and build their dispatch table
//! from the same list, so an operation without a handler, or a family without a purge hook,
//! does not compile into the node. This crate must never depend on the provider, the store,
//! the handlers, the runner or the tenant worker.
//!
//! The order of the list matters in one way: families are purged in reverse order of first
//! appearance, so `account` comes first and is purged last.

mod declare;
pub mod example;
pub mod resource;

/// Calls `$callback!` with the name of every family module, in alphabetical order: this
/// crate declares its modules from it, and the handlers (`ops`) declare theirs, of the same
/// names, from it too, so a new family's module is named once.
#[macro_export]
macro_rules! family_modules {
    ($callback:ident) => {
        $callback! {
            account,
            assignment,
            autoresponder,
            backup,
            certificate,
            dkim_key,
            error_pages,
            ftp_account,
            mail,
            mail_domain,
            mail_forwarder,
            mail_queue,
            mailbox,
            mysql_database,
            mysql_grant,
            mysql_user,
            php,
            runtime,
            scheduled_task,
            spam_filter,
            ssh_key,
            sudo,
            web_access,
            web_domain,
        }
    };
}

macro_rules! declare_modules {
    ($($module:ident),* $(,)?) => {
        $(pub mod $module;)*
    };
}

family_modules!(declare_modules);

use std::sync::OnceLock;

use registry::Registry;

/// Calls `$callback!` with every operation type of the node, in declaration order: the one
/// list. [`registry()`] builds the registry from it; the handlers build their table from it,
/// so a declared operation without a handler does not compile.
#[macro_export]
macro_rules! operations {
    ($callback:ident) => {
        $callback! {
            $crate::account::EnsureAccount,
            $crate::account::SuspendAccount,
            $crate::account::UnsuspendAccount,
            $crate::account::RemoveAccount,
            $crate::account::SetAccountPassword,
            $crate::account::SetAccountLimits,
            $crate::account::SetAccountIsolation,
            $crate::account::ObserveAccountUsage,
            $crate::account::RebuildAccount,
            $crate::ssh_key::EnsureSshKey,
            $crate::ssh_key::RemoveSshKey,
            $crate::web_domain::EnsureWebDomain,
            $crate::web_domain::RemoveWebDomain,
            $crate::mail_domain::EnsureMailDomain,
            $crate::mail_domain::RemoveMailDomain,
            $crate::mail_domain::SetMailSendingGate,
            $crate::mail_domain::SetMailCatchAll,
            $crate::mailbox::EnsureMailbox,
            $crate::mailbox::RemoveMailbox,
            $crate::mailbox::SetMailboxPassword,
            $crate::mailbox::ObserveMailboxUsage,
            $crate::mailbox::SuspendMailbox,
            $crate::mailbox::UnsuspendMailbox,
            $crate::mail_forwarder::EnsureMailForwarder,
            $crate::mail_forwarder::RemoveMailForwarder,
            $crate::autoresponder::EnsureAutoresponder,
            $crate::autoresponder::RemoveAutoresponder,
            $crate::dkim_key::EnsureDkimKey,
            $crate::dkim_key::RemoveDkimKey,
            $crate::spam_filter::SetSpamFilter,
            $crate::mail_queue::ObserveMailQueue,
            $crate::mail_queue::FlushMailQueue,
            $crate::sudo::SetSudoAllowlist,
            $crate::sudo::RemoveSudoAllowlist,
            $crate::sudo::ReadSudoEvents,
            $crate::mysql_database::EnsureMysqlDatabase,
            $crate::mysql_database::RemoveMysqlDatabase,
            $crate::mysql_database::SetMysqlQuota,
            $crate::mysql_database::ObserveMysqlUsage,
            $crate::mysql_user::EnsureMysqlUser,
            $crate::mysql_user::SetMysqlUserPassword,
            $crate::mysql_user::RemoveMysqlUser,
            $crate::mysql_grant::EnsureMysqlGrant,
            $crate::mysql_grant::RemoveMysqlGrant,
            $crate::web_domain::SuspendWebDomain,
            $crate::web_domain::UnsuspendWebDomain,
            $crate::web_domain::EnsureRedirect,
            $crate::web_domain::RemoveRedirect,
            $crate::php::SetPhpVersion,
            $crate::php::RemovePhpVersion,
            $crate::php::SetPhpOptions,
            $crate::php::SetPhpExtensions,
            $crate::php::ObservePhpVersions,
            $crate::scheduled_task::EnsureScheduledTask,
            $crate::scheduled_task::RemoveScheduledTask,
            $crate::ftp_account::EnsureFtpAccount,
            $crate::ftp_account::RemoveFtpAccount,
            $crate::ftp_account::SetFtpAccountPassword,
            $crate::ftp_account::SuspendFtpAccount,
            $crate::ftp_account::UnsuspendFtpAccount,
            $crate::runtime::ObserveRuntime,
            $crate::certificate::EnsureCertificate,
            $crate::certificate::RemoveCertificate,
            $crate::certificate::RenewCertificate,
            $crate::certificate::ObserveCertificates,
            $crate::web_domain::SetHttpsPolicy,
            $crate::web_domain::RemoveHttpsPolicy,
            $crate::backup::CreateAccountBackup,
            $crate::backup::RestoreAccountBackup,
            $crate::backup::RemoveAccountBackup,
            $crate::web_access::EnsureProtectedDirectory,
            $crate::web_access::RemoveProtectedDirectory,
            $crate::web_access::EnsureIpBlock,
            $crate::web_access::RemoveIpBlock,
            $crate::error_pages::SetErrorPages,
            $crate::error_pages::RemoveErrorPages,
            $crate::assignment::ApplyAssignment,
        }
    };
}

macro_rules! registry_of {
    ($($op:path),* $(,)?) => {
        Registry::builder()$(.op::<$op>())*.build()
    };
}

/// The node's one list of operations, as a registry.
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| operations!(registry_of))
}

/// The catalogue's released version: raised by one with each release of the catalogue that
/// breaks a control plane (see docs/contract.md). The catalogue released at this version is
/// kept as `contract/catalogue-v{N}.json`, and the compatibility gate compares the current
/// catalogue with it.
pub const CATALOGUE_VERSION: u64 = 1;
