//! Named crash points.
//!
//! The crash tests (docs/design.md section 11) kill the real runner code at a named point between
//! two steps of the job lifecycle, or inside a multi-step handler, and then check that the next
//! normal pass converges. A point is a variant of the closed enum [`Point`], reached by a call
//! to [`point`] with it. It does nothing unless a hook was installed with [`install`], in which
//! case the hook decides: the crash-point runner (`layerone-crash-runner`, `crates/devnode`)
//! installs one (`testkit::crash_points`) that aborts the process at once, as `kill -9` would,
//! at the point its environment names. This crate holds no way to arm a point: the packaged
//! runner, which installs no hook, cannot be made to crash at one, and its points cost one
//! atomic load.
//!
//! Each point has a stable name ([`Point::name`], `web_domain.after_docroot`): what
//! `LAYERONE_CRASH_AT` says and the tests print. [`ALL`] is derived from the one list below,
//! so a new point is a new line there and a call site; the compiler holds that every call
//! site names a point, `every_crash_point_has_a_call_site_in_the_code` (cli `architecture.rs`)
//! that every point has a call site, and `crash_matrix_converges_at_every_point` (cli
//! `lifecycle.rs`) that the crash matrix reaches every one.
//!
//! The `state` crate calls the points of its own transactions directly. The deterministic
//! simulation installs a hook of its own (`crates/simulation/src/node.rs`) that unwinds with
//! [`Died`] instead of aborting; the runner's containment (`steps::contain`, each job's
//! handler) lets that one panic through ([`is_death`]).

use std::sync::OnceLock;

/// Declares [`Point`] with each variant's name, and [`ALL`] in the order listed.
macro_rules! points {
    ($($variant:ident = $name:literal,)*) => {
        /// A place where the crash tests can kill the runner. The points of state.db's own
        /// transactions (ingest, claim, completion) are called by root's `state` crate.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Point {
            $($variant,)*
        }

        /// Every crash point, in the order of the job lifecycle's runner steps and then the
        /// families' points as they were added.
        pub const ALL: &[Point] = &[$(Point::$variant,)*];

        impl Point {
            /// The point's stable name (`family.after_step`).
            pub const fn name(self) -> &'static str {
                match self {
                    $(Point::$variant => $name,)*
                }
            }
        }
    };
}

points! {
    IngestBeforeCommit = "ingest.before_commit",
    IngestAfterCommit = "ingest.after_commit",
    ClaimAfterCommit = "claim.after_commit",
    ApplyBeforeHandler = "apply.before_handler",
    AccountAfterIdentityRecorded = "account.after_identity_recorded",
    AccountAfterGroupadd = "account.after_groupadd",
    AccountAfterUseradd = "account.after_useradd",
    AccountAfterUsermod = "account.after_usermod",
    AccountAfterQuota = "account.after_quota",
    AccountPurgeAfterFamily = "account.purge.after_family",
    AccountAfterProcessesStopped = "account.after_processes_stopped",
    AccountAfterQuotaReleased = "account.after_quota_released",
    AccountBeforeUserdel = "account.before_userdel",
    AccountAfterLvectlSet = "account.after_lvectl_set",
    AccountAfterCagefsctl = "account.after_cagefsctl",
    AccountRebuildAfterReplay = "account.rebuild.after_replay",
    SshKeyAfterSshDir = "ssh_key.after_ssh_dir",
    SshKeyAfterWrite = "ssh_key.after_write",
    WebDomainAfterDocroot = "web_domain.after_docroot",
    WebDomainAfterVhostWrite = "web_domain.after_vhost_write",
    WebDomainAfterOldVhostRemoved = "web_domain.after_old_vhost_removed",
    MysqlAfterCreateDatabase = "mysql.after_create_database",
    MysqlBeforeDropDatabase = "mysql.before_drop_database",
    MysqlAfterDropDatabase = "mysql.after_drop_database",
    MysqlAfterQuotaGrants = "mysql.after_quota_grants",
    MysqlAfterCreateUser = "mysql.after_create_user",
    MysqlAfterDropUser = "mysql.after_drop_user",
    MysqlAfterGrant = "mysql.after_grant",
    MysqlAfterRevoke = "mysql.after_revoke",
    WebDomainAfterSuspensionVhost = "web_domain.after_suspension_vhost",
    RedirectAfterVhost = "redirect.after_vhost",
    PhpAfterPools = "php.after_pools",
    PhpAfterVhost = "php.after_vhost",
    ScheduledTaskAfterCrontab = "scheduled_task.after_crontab",
    MailAfterConfigWrite = "mail.after_config_write",
    AutoresponderAfterScriptWrite = "autoresponder.after_script_write",
    DkimKeyAfterGenkey = "dkim_key.after_genkey",
    FtpAccountAfterDirectory = "ftp_account.after_directory",
    FtpAccountAfterPasswd = "ftp_account.after_passwd",
    FtpAccountAfterInstall = "ftp_account.after_install",
    FtpAccountAfterRemove = "ftp_account.after_remove",
    CertificateAfterUnbind = "certificate.after_unbind",
    CertificateAfterKey = "certificate.after_key",
    CertificateAfterChain = "certificate.after_chain",
    CertificateAfterVhost = "certificate.after_vhost",
    BackupAfterArchiveHome = "backup.after_archive_home",
    BackupAfterWriteBlob = "backup.after_write_blob",
    BackupAfterRemoveBlob = "backup.after_remove_blob",
    BackupAfterUnpack = "backup.after_unpack",
    BackupAfterExtractHome = "backup.after_extract_home",
    FtpAccountAfterSuspension = "ftp_account.after_suspension",
    ProtectedDirectoryAfterVhost = "protected_directory.after_vhost",
    ProtectedDirectoryAfterVhostRemoved = "protected_directory.after_vhost_removed",
    ProtectedDirectoryAfterUserFilesRemoved = "protected_directory.after_user_files_removed",
    IpBlockAfterVhost = "ip_block.after_vhost",
    HttpsPolicyAfterVhost = "https_policy.after_vhost",
    AccountAfterSuspensionUser = "account.after_suspension_user",
    BatchBeforeReload = "batch.before_reload",
    BatchAfterReload = "batch.after_reload",
    CompleteBeforeCommit = "complete.before_commit",
    CompleteAfterCommit = "complete.after_commit",
}

impl Point {
    /// The point named `name`, if there is one.
    pub fn from_name(name: &str) -> Option<Point> {
        ALL.iter().copied().find(|point| point.name() == name)
    }
}

impl std::fmt::Display for Point {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a hook unwinds with when the run must die where it stands inside this process (the
/// deterministic simulation, `crates/simulation`), instead of aborting it: the places that
/// contain a failure (the runner's steps, each job's handler) let it through ([`is_death`]),
/// so the unwinding ends only where the simulation caught it, as a kill would end the
/// process. Nothing in the packaged runner raises it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Died(pub Point);

/// Whether a caught panic is a [`Died`], which must be resumed (`std::panic::resume_unwind`)
/// rather than contained as a failure.
pub fn is_death(payload: &(dyn std::any::Any + Send)) -> bool {
    payload.is::<Died>()
}

/// The message a caught panic carries, if it carries one (`panic!` with a literal or a
/// formatted string).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> Option<String> {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
}

static HOOK: OnceLock<fn(Point)> = OnceLock::new();

/// Makes every crash point call `hook` with itself. Only the first call counts; the
/// crash-point runner makes it first thing, before any point can be reached.
pub fn install(hook: fn(Point)) {
    let _ = HOOK.set(hook);
}

/// Reached between two steps: calls the installed hook, if any; otherwise costs one atomic
/// load.
pub fn point(point: Point) {
    if let Some(hook) = HOOK.get() {
        hook(point);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_point_has_its_own_name_and_is_found_by_it() {
        let mut names = std::collections::BTreeSet::new();
        for &point in ALL {
            assert!(names.insert(point.name()), "{point} is named twice");
            assert_eq!(Point::from_name(point.name()), Some(point));
            let (family, step) = point.name().rsplit_once('.').unwrap();
            assert!(!family.is_empty() && !step.is_empty(), "{point}");
        }
        assert_eq!(Point::from_name("web_domain.after_nothing"), None);
    }
}
