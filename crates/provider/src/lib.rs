//! `provider`: the only code in layerone node that runs a program or touches a system path.
//!
//! Everything the node does to the operating system goes through a [`Provider`]:
//!
//! - programs are named by the closed [`Program`] enum (one absolute path per [`Platform`])
//!   and run by one `execute` with a cleared environment, capped output, a timeout, an exit
//!   status check and an audit line (`exec.rs`, `audit.rs`); each program has a module in
//!   `programs/` with typed arguments and the argv builder;
//! - system paths are mapped under a configurable root with [`Provider::sysconf`], so the
//!   same code runs against `/` in production and a temporary sysroot in tests;
//! - root-owned configuration files are replaced atomically (`files.rs`), and files inside a
//!   tenant's home are reached only through [`TenantDir`], which never follows a symlink
//!   (DESIGN.md invariant 7);
//! - the [`Backend::Sim`] backend models each program's effect on the sysroot, so tests and
//!   the dev node check real files; [`testing`] has the shared setup for them.
//!
//! The workspace's clippy configuration forbids `std::process::Command::new` everywhere;
//! `exec.rs` holds the single, documented exception.

mod audit;
mod error;
mod exec;
mod files;
mod host;
mod leftovers;
mod mail;
mod mariadb;
mod platform;
mod program;
mod programs;
mod provider;
mod sim;
mod sudo_log;
mod sysconf;
mod tenant_fs;
pub mod testing;
mod users;

pub use audit::{AUDIT_FILE, AUDIT_SINK_MAX, AuditRecord, read_audit_log};
pub use error::ProviderError;
pub use exec::{CHILD_PATH, OUTPUT_CAP};
pub use files::CONFIG_MODE;
pub use host::{DiskSpace, Load, Memory};
pub use leftovers::{LeftoversRemoved, MAX_LEFTOVER_ENTRIES, TENANT_LEFTOVER_DIRS};
pub use mail::{
    MAX_MAILDIR_ENTRIES, MailLayout, MaildirUsage, PostfixMap, SPAM_CLASS_STANDARD,
    SPAM_CLASS_STRICT,
};
pub use mariadb::dump::{DumpCounts, FRAME as DUMP_FRAME};
pub use mariadb::{
    Charset, Collation, DbAccount, DbHost, DbInfo, DbName, DbUser, Mariadb, NativeHash, Privilege,
    SIM_MARIADB_FILE, default_socket, quote_db_pattern, quote_ident,
};
pub use platform::{Platform, UnknownPlatform};
pub use program::{DEFAULT_TIMEOUT, Program};
pub use programs::apachectl::{ApacheLayout, MPM_ITK_MODULE, SHARED_STATE_MODULES};
pub use programs::crontab::{CRONTAB_STAGING_DIR, crontab_spool};
pub use programs::dbctl::{GovernorLimits, GovernorListed};
pub use programs::lvectl::LveLimits;
pub use programs::opendkim_genkey::parse_dkim_txt;
pub use programs::php_fpm::{PhpFpmLayout, PhpVersion, parse_modules};
pub use programs::pure_pw::{FTP_LAYOUT, FtpLayout, FtpUserShown};
pub use programs::selectorctl::{SelectorState, parse_extension_list};
pub use programs::service_state::{ServiceUnit, UnitState};
pub use programs::systemctl::Managed;
pub use programs::tenant_terminate::SIM_REAL_PROCESS_UIDS;
pub use programs::tenant_worker::{TENANT_WORKER_NAME, TenantIsolation};
pub use programs::useradd::{HOME_MODE, SystemUserAdd, UserAdd};
pub use programs::usermod::{Expire, UserMod};
pub use programs::visudo::{SUDOERS_MODE, SudoLayout};
pub use provider::{Backend, Provider, ProviderConfig};
pub use sim::{
    SIM_CAGEFS_FILE, SIM_DBCTL_FILE, SIM_DOVECOT_RELOADS_FILE, SIM_LVE_FILE,
    SIM_POSTFIX_RELOADS_FILE, SIM_RELOADS_FILE, SIM_SELECTOR_DIR, SIM_SERVICE_RELOADS_FILE,
    SIM_UNITS_DIR,
};
pub use sudo_log::{LogChunk, LogPosition};
pub use tenant_fs::{MAX_TENANT_READ, TenantDir};
pub use users::{
    DEFAULT_UID_RANGE, GroupEntry, PasswdEntry, ShadowEntry, SystemIds, parse_gid_range,
    parse_uid_range,
};
