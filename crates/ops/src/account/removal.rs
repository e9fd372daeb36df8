//! `remove_account`, the purge sweep, and the account's own purge.
//!
//! The account's own purge locks the user (password, expiry, shell), stops every process of
//! its uid through the tenant worker (after the PHP pools of the account are reloaded away;
//! its crontab was removed by its family's purge before), removes its files outside the home
//! (`Provider::remove_files_of_uid`: `/tmp`, `/var/tmp`, `/dev/shm`, the cron, at and mail
//! spools, PHP sessions), deletes the home's btrfs subvolume or clears the uid's user quota
//! (`quota.rs`), then `userdel --remove` (without `--remove` once the subvolume took the home
//! with it) and, only for the group the node created, `groupdel`. Its identity row stays, marked removed, so its ids are handed out again last.

use std::path::PathBuf;

use provider::{Expire, PasswdEntry, Platform, UserMod};
use registry::types::{Hex32, Shell};
use registry::{Apply, OpError, Purge, RowType};

use super::identity::{Recorded, recorded, uid_holder, user_of};
use super::{Account, AccountRef, AccountResult, AccountRow, RemoveAccount, store_error};
use crate::context::{Ctx, Service, provider_error};

impl Purge<Ctx> for Account {
    const ROW: Option<RowType> = Some(store::row_type::<AccountRow>());

    /// The account's own purge: its processes, its files outside the home, the user, the
    /// group the node created and the home. The other families' hooks have run before this
    /// one (see [`purge_account`]), so its crontab and PHP pools are gone.
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let Some(row) = ctx
            .view()
            .get::<AccountRow>(account)
            .map_err(store_error)?
            .map(|stored| stored.row)
        else {
            return Ok(());
        };
        let Some(rec) = recorded(ctx, account, Some(&row))? else {
            // A row without a name names no user: nothing of the system's to remove.
            ctx.forget_row();
            return Ok(());
        };
        let home = Some(PathBuf::from(&row.home))
            .filter(|h| h.is_absolute() && h != &PathBuf::from("/"))
            .unwrap_or_else(|| PathBuf::from("/home").join(&rec.name));
        if user_of(ctx, &rec)?.is_some() {
            // Nothing new starts as the tenant: no password, no key login (expired), no shell.
            ctx.provider
                .usermod(&UserMod {
                    name: &rec.name,
                    lock: Some(true),
                    expire: Some(Expire::Expired),
                    shell: Some(Shell::Nologin.path()),
                    ..UserMod::default()
                })
                .map_err(provider_error)?;
        }
        // The uid's processes and files, unless the uid is now someone else's (the user was
        // deleted behind the node's back and the uid handed to another user).
        let uid_now = uid_holder(ctx, rec.uid)?;
        if uid_now.as_ref().is_none_or(|u| u.name == rec.name) {
            stop_processes(ctx, &rec, home.clone())?;
            crash::point(super::AFTER_PROCESSES_STOPPED);
            let left = ctx
                .provider
                .remove_files_of_uid(rec.uid)
                .map_err(provider_error)?;
            if !left.complete {
                return Err(OpError::retryable(
                    "tenant_files_remain",
                    format!(
                        "uid {} left more than {} entries outside its home; {} removed, the rest on the next attempt",
                        rec.uid,
                        provider::MAX_LEFTOVER_ENTRIES,
                        left.removed
                    ),
                ));
            }
        }
        let username = rec.name.clone();
        // The slice's limits are keyed by the uid: its drop-in goes whether or not the user
        // is still there, so a later account given the same uid does not inherit them.
        if ctx.provider.platform() == Platform::Debian {
            let drop_in = ctx.provider.sysconf(provider::slice_drop_in(rec.uid));
            let there = ctx
                .provider
                .read_config(&drop_in)
                .map_err(provider_error)?
                .is_some();
            if there || row.limits.is_some() {
                ctx.remove_service_config(Service::Systemd, &drop_in)?;
            }
        }
        // LVE limits and CageFS are keyed by the user name: reset them while the user exists,
        // so a later account with the same name does not inherit them.
        if user_of(ctx, &rec)?.is_some() && ctx.provider.platform() == Platform::CloudLinux {
            if row.limits.is_some() {
                ctx.provider
                    .lvectl_delete_user(&username)
                    .map_err(provider_error)?;
            }
            if row.cagefs == Some(true) {
                ctx.provider
                    .cagefs_set(&username, false)
                    .map_err(provider_error)?;
            }
            if row.mysql_limits().is_some() {
                ctx.provider
                    .dbctl_delete(&username)
                    .map_err(provider_error)?;
            }
        }
        // The home's subvolume (btrfs) goes with what is in it, or the uid's user quota is
        // cleared, whether or not the user is still there (a first attempt may have made the
        // subvolume and no user).
        let fs = super::quota::homes_fs(ctx)?;
        ctx.provider
            .release_home_quota(&fs, &home, rec.uid)
            .map_err(provider_error)?;
        crash::point(super::AFTER_QUOTA_RELEASED);
        crash::point(super::BEFORE_USERDEL);
        let home_left = ctx.provider.sysconf(&home).symlink_metadata().is_ok();
        if let Some(user) = user_of(ctx, &rec)? {
            if !rec.group_created && user.gid == rec.gid {
                // An account from before the node created its groups may have been given a
                // group that is the system's (`shadow`, say): userdel deletes the user's
                // same-named primary group, so the user is moved off it first.
                ctx.provider
                    .usermod(&UserMod {
                        name: &username,
                        gid: Some(nogroup_gid(ctx)?),
                        ..UserMod::default()
                    })
                    .map_err(provider_error)?;
            }
            match ctx.provider.userdel(&username, home_left) {
                // A process started since the kill (a cron job cron had already loaded):
                // once more, then the removal is retried rather than failed for good.
                Err(e) if e.exit_status() == Some(8) => {
                    stop_processes(ctx, &rec, home)?;
                    ctx.provider
                        .userdel(&username, home_left)
                        .map_err(|e| match e.exit_status() {
                            Some(8) => OpError::retryable("tenant_processes_remain", e.to_string()),
                            _ => provider_error(e),
                        })?;
                }
                other => other.map_err(provider_error)?,
            }
        }
        // userdel removed the group already when it was the user's and had no other member;
        // otherwise only the group the node created goes, never one that has the name.
        if rec.group_created
            && ctx
                .provider
                .lookup_group(&username)
                .map_err(provider_error)?
                .is_some_and(|g| g.gid == rec.gid)
            && primary_of_gid(ctx, rec.gid)?.is_none()
        {
            ctx.provider.groupdel(&username).map_err(provider_error)?;
        }
        ctx.state
            .retire_account_identity(account)
            .map_err(store_error)?;
        ctx.forget_row();
        Ok(())
    }
}

/// A user whose primary group is `gid`, if any (groupdel refuses such a group).
fn primary_of_gid(ctx: &Ctx, gid: u32) -> Result<Option<PasswdEntry>, OpError> {
    Ok(ctx
        .provider
        .passwd_entries()
        .map_err(provider_error)?
        .into_iter()
        .find(|u| u.gid == gid))
}

/// The gid of the group that owns nothing (`nogroup` on Debian, `nobody` on Red Hat).
fn nogroup_gid(ctx: &Ctx) -> Result<u32, OpError> {
    for name in ["nogroup", "nobody"] {
        if let Some(group) = ctx.provider.lookup_group(name).map_err(provider_error)? {
            return Ok(group.gid);
        }
    }
    Err(OpError::permanent(
        "nogroup_missing",
        "this node has no nogroup or nobody group to move a user off a system group",
    ))
}

/// Stops every process of the account's uid, as the tenant (`Provider::
/// terminate_tenant_processes`). The account's PHP pools were removed earlier in this job: a
/// shared master is reloaded first so that it lets go of them instead of starting new
/// children, and the tenant's own masters of every installed version are stopped (their
/// configuration is gone; stopping is idempotent, so one left running by an attempt that
/// crashed is stopped too). If processes still run (pools removed from a shared master by an
/// attempt that crashed before its reload, which this job cannot see), every installed FPM
/// is reloaded once and the kill tried again.
fn stop_processes(ctx: &mut Ctx, rec: &Recorded, home: PathBuf) -> Result<(), OpError> {
    for &version in provider::PhpVersion::ALL {
        ctx.reload_now(Service::PhpFpm(version))?;
    }
    for version in ctx.provider.php_installed_versions() {
        ctx.provider
            .tenant_fpm_reload(version, rec.uid)
            .map_err(|e| {
                OpError::retryable(
                    "reload_failed",
                    format!("stopping the tenant's PHP {} master failed: {e}", version.as_str()),
                )
            })?;
    }
    let who = tenant::Identity::new(rec.uid, rec.gid, vec![], home)
        .map_err(|e| OpError::permanent(e.code.code(), e.message))?;
    let remain = |e: provider::ProviderError| {
        if e.code() == "tenant_processes_remain" {
            OpError::retryable(e.code(), e.to_string())
        } else {
            provider_error(e)
        }
    };
    match ctx.provider.terminate_tenant_processes(&who) {
        Ok(_) => Ok(()),
        Err(e) if e.code() == "tenant_processes_remain" => {
            for version in ctx.provider.php_installed_versions() {
                // An FPM that is not running has nothing to let go of.
                if let Err(e) = ctx.provider.php_fpm_reload(version) {
                    tracing::warn!(version = version.as_str(), error = %e, "FPM reload before a second kill failed");
                }
            }
            ctx.provider
                .terminate_tenant_processes(&who)
                .map(drop)
                .map_err(remain)
        }
        Err(e) => Err(remain(e)),
    }
}

impl Apply<Ctx> for RemoveAccount {
    fn apply(ctx: &mut Ctx, req: &AccountRef) -> Result<AccountResult, OpError> {
        purge_account(ctx, &req.id)?;
        Ok(AccountResult::absent())
    }
}

/// The purge sweep derived from the one list: every family's purge hook for the account, in
/// reverse declaration order (the account family is declared first, so it is purged last).
/// Each hook is idempotent, so a crash anywhere in the sweep is finished by the retry.
pub fn purge_account(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
    for family in crate::handlers().families().iter().rev() {
        (family.purge)(ctx, account)?;
        crash::point(super::PURGE_AFTER_FAMILY);
    }
    Ok(())
}
