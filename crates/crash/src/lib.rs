//! Named crash points.
//!
//! The crash tests (DESIGN.md section 11) kill the real runner code at a named point between
//! two steps of the job lifecycle, or inside a multi-step handler, and then check that the next
//! normal pass converges. A point is a call to [`point`] with a static name. It does nothing
//! unless a hook was installed with [`install`], in which case the hook decides: the
//! crash-point runner (`layerone-crash-runner`, `crates/devnode`) installs one
//! (`testkit::crash_points`) that aborts the process at once, as `kill -9` would, at the point
//! its environment names. This crate holds no way to arm a point: the packaged runner, which
//! installs no hook, cannot be made to crash at one, and its points cost one atomic load.

use std::sync::OnceLock;

static HOOK: OnceLock<fn(&'static str)> = OnceLock::new();

/// Makes every crash point call `hook` with its name. Only the first call counts; the
/// crash-point runner makes it first thing, before any point can be reached.
pub fn install(hook: fn(&'static str)) {
    let _ = HOOK.set(hook);
}

/// Reached between two steps: calls the installed hook, if any; otherwise costs one atomic
/// load.
pub fn point(name: &'static str) {
    if let Some(hook) = HOOK.get() {
        hook(name);
    }
}

/// Every crash point the code can reach, so the crash tests can prove each one is exercised.
/// A point missing from this list, or listed but no longer in the code, fails
/// `every_crash_point_in_the_code_is_listed_and_every_listed_one_is_in_the_code` (cli
/// `architecture.rs`); one the matrix never reaches fails `crash_matrix_converges_at_every_point`.
pub const ALL: &[&str] = &[
    "ingest.before_commit",
    "ingest.after_commit",
    "claim.after_commit",
    "apply.before_handler",
    "account.after_identity_recorded",
    "account.after_groupadd",
    "account.after_useradd",
    "account.after_usermod",
    "account.purge.after_family",
    "account.after_processes_stopped",
    "account.before_userdel",
    "account.after_lvectl_set",
    "account.after_cagefsctl",
    "account.rebuild.after_replay",
    "ssh_key.after_ssh_dir",
    "ssh_key.after_write",
    "web_domain.after_docroot",
    "web_domain.after_vhost_write",
    "web_domain.after_old_vhost_removed",
    "mysql.after_create_database",
    "mysql.before_drop_database",
    "mysql.after_drop_database",
    "mysql.after_quota_grants",
    "mysql.after_create_user",
    "mysql.after_drop_user",
    "mysql.after_grant",
    "mysql.after_revoke",
    "web_domain.after_suspension_vhost",
    "redirect.after_vhost",
    "php.after_pools",
    "php.after_vhost",
    "scheduled_task.after_crontab",
    "mail.after_config_write",
    "autoresponder.after_script_write",
    "dkim_key.after_genkey",
    "ftp_account.after_directory",
    "ftp_account.after_passwd",
    "ftp_account.after_install",
    "ftp_account.after_remove",
    "certificate.after_unbind",
    "certificate.after_key",
    "certificate.after_chain",
    "certificate.after_vhost",
    "backup.after_archive_home",
    "backup.after_write_blob",
    "backup.after_remove_blob",
    "backup.after_unpack",
    "backup.after_extract_home",
    "ftp_account.after_suspension",
    "protected_directory.after_vhost",
    "protected_directory.after_vhost_removed",
    "protected_directory.after_user_files_removed",
    "ip_block.after_vhost",
    "batch.before_reload",
    "batch.after_reload",
    "complete.before_commit",
    "complete.after_commit",
];
