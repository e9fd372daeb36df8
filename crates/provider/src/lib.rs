//! `provider`: the only code in layerone node that runs a program or touches a system path.
//!
//! Everything the node does to the operating system goes through a [`Provider`]:
//!
//! - programs are named by the closed [`Program`] enum (one absolute path per [`Platform`])
//!   and run by one `execute` with an exit status check and an audit line (`exec.rs`,
//!   `audit.rs`), through the provider's [`Executor`]: [`RealExecutor`] starts them with a
//!   cleared environment, capped output and a timeout (`executor/real.rs`); each program has
//!   a module in `programs/` with typed arguments and the argv builder;
//! - system paths are mapped under a configurable root with [`Provider::sysconf`], so the
//!   same code runs against `/` in production and a temporary sysroot in tests;
//! - root-owned configuration files are replaced atomically (`files.rs`), and files inside a
//!   tenant's home are reached only through [`TenantDir`], which never follows a symlink
//!   (ARCHITECTURE.md invariant 7);
//! - what else differs between a server and a simulation of one (the owners of tenant files,
//!   the MariaDB model, the uids a kill may reach, the listeners, the certificate authority)
//!   is the [`Machine`]'s; [`RealMachine`] is the server;
//! - a simulation of the system is another [`Executor`] and another [`Machine`], which live
//!   in `crates/simulator` (with the test support in `crates/testkit`): this crate is
//!   production code only, and the packaged binaries link neither.
//!
//! The workspace's clippy configuration forbids starting a process everywhere;
//! `executor/real.rs` holds the single, documented exception.

mod audit;
mod error;
mod exec;
mod executor;
mod files;
mod home_quota;
mod host;
mod leftovers;
mod machine;
mod mail;
mod mariadb;
mod platform;
mod program;
mod programs;
mod provider;
mod sudo_log;
mod sysconf;
mod tenant_fs;
mod users;

pub use audit::{AUDIT_FILE, AUDIT_SINK_MAX, AuditRecord, read_audit_log};
pub use error::ProviderError;
pub use executor::real::{CHILD_PATH, OUTPUT_CAP};
pub use executor::{Argv, Executor, Invocation, Output, ReadOnlyExecutor, RealExecutor};
pub use files::{CONFIG_MODE, ensure_dir, write_atomic};
pub use home_quota::{HOMES, HomeQuota, HomesFs, QuotaMechanism, mechanism_of_mount};
pub use host::{DiskSpace, Load, Memory};
pub use leftovers::{LeftoversRemoved, MAX_LEFTOVER_ENTRIES, TENANT_LEFTOVER_DIRS};
pub use machine::{CertificateRequest, IssueError, Machine, RealMachine};
pub use mail::{
    MAX_MAILDIR_ENTRIES, MailLayout, MaildirUsage, POSTFIX_SNI_MAP, PostfixMap,
    SPAM_CLASS_STANDARD, SPAM_CLASS_STRICT,
};
pub use mariadb::dump::{DumpCounts, FRAME as DUMP_FRAME, next_statement as next_dump_statement};
pub use mariadb::{
    Charset, Collation, DatabaseSession, DbAccount, DbHost, DbInfo, DbName, DbUser, Mariadb,
    NativeHash, Privilege, default_socket, quote_db_pattern, quote_ident,
};
pub use platform::{Platform, UnknownPlatform};
pub use program::{DEFAULT_TIMEOUT, Program};
pub use programs::apachectl::{ApacheLayout, MPM_ITK_MODULE, SHARED_STATE_MODULES, process_runs};
pub use programs::btrfs::{
    QgroupShown, SubvolumeListed, nested_subvolumes, parse_qgroup_show, parse_subvolume_list,
    tenant_qgroup,
};
pub use programs::crontab::{CRONTAB_STAGING_DIR, crontab_spool};
pub use programs::dbctl::{GovernorLimits, GovernorListed};
pub use programs::findmnt::{MountShown, parse_findmnt};
pub use programs::lvectl::LveLimits;
pub use programs::mount::{PROC, PROC_GROUP, ProcHiding};
pub use programs::opendkim_genkey::{OPENDKIM_GROUP, OPENDKIM_UNIT, parse_dkim_txt};
pub use programs::php_fpm::{FpmName, PhpFpmLayout, PhpVersion, parse_modules};
// Whole, so a tool added to the suite is reachable without listing it here.
pub use programs::postfix::*;
pub use programs::pure_pw::{FTP_LAYOUT, FtpLayout, FtpUserShown};
pub use programs::quota_tools::{UserQuotaShown, parse_repquota_csv};
pub use programs::selectorctl::{SelectorState, parse_extension_list};
pub use programs::service_state::{ServiceUnit, UnitState};
pub use programs::slice_limits::{
    CgroupControllers, SLICE_LIMIT_PROPERTIES, SLICE_USAGE_PROPERTIES, SliceLimits, SliceUsage,
    slice_drop_in, slice_unit,
};
pub use programs::systemctl::Managed;
pub use programs::tenant_worker::{TENANT_WORKER_NAME, TenantIsolation};
pub use programs::useradd::{HOME_MODE, SystemUserAdd, UserAdd};
pub use programs::usermod::{Expire, UserMod};
pub use programs::visudo::{SUDOERS_MODE, SudoLayout};
pub use provider::{Provider, ProviderConfig};
pub use sudo_log::{LogChunk, LogPosition};
pub use tenant_fs::{MAX_TENANT_READ, TenantDir};
pub use users::{
    DEFAULT_UID_RANGE, GroupEntry, PasswdEntry, ShadowEntry, SystemIds, parse_gid_range,
    parse_passwd_line, parse_uid_range,
};
