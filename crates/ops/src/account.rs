//! The `account` family: a tenant's system user and group, home and shell, and the quota
//! figures the control plane set. `remove_account` is the purge sweep: every family's purge
//! hook for the account, in reverse declaration order, so the account itself goes last.
//!
//! # Who the account is (DESIGN.md invariant 10)
//!
//! The node knows an account by what it recorded, never by a field the tenant can edit: the
//! user name, uid and gid in the account's resource row and in state.db's `identities`
//! (`store::identities`). The GECOS comment `layerone-<account id>` is still written, for
//! whoever reads passwd, but nothing relies on it: `chfn` lets a tenant change it.
//!
//! - A new account's name must be free: not one of [`registry::types::RESERVED_NAMES`], not
//!   any name in the system's passwd, shadow, group or gshadow (an entry, a group's member, a
//!   gshadow administrator), not another account's, not a name once on the sudo allowlist;
//!   otherwise `username_reserved` (or `username_taken` for another account's).
//! - Its uid and gid are one id the node chooses ([`allocate_id`]): within both
//!   `UID_MIN..=UID_MAX` and `GID_MIN..=GID_MAX` of `login.defs`, used by no user or group,
//!   never one recorded for an administrator, above every id the node recorded or the system
//!   uses when one is left. It is recorded before `groupadd --gid` and `useradd --uid` run, so
//!   a retry after a crash adopts exactly the group and user it created: a group or user that
//!   merely has the name is someone else's (`username_taken`).
//! - Ensuring an existing account again finds its recorded user and group and changes
//!   nothing.
//!
//! # Removal
//!
//! The account's own purge locks the user (password, expiry, shell), stops every process of
//! its uid through the tenant worker (after the PHP pools of the account are reloaded away;
//! its crontab was removed by its family's purge before), removes its files outside the home
//! (`Provider::remove_files_of_uid`: `/tmp`, `/var/tmp`, `/dev/shm`, the cron, at and mail
//! spools, PHP sessions), then `userdel --remove` and, only for the group the node created,
//! `groupdel`. Its identity row stays, marked removed, so its ids are handed out again last.

pub use declarations::account::*;

use std::collections::BTreeSet;
use std::path::PathBuf;

use provider::{Expire, GovernorLimits, LveLimits, PasswdEntry, Platform, UserAdd, UserMod};
use registry::types::{Hex32, Presence, Shell, Username};
use registry::{Apply, Family, OpError, Operation, Owner, Purge};
use serde_json::json;
use store::{IdentityKind, ResourceRow};

use crate::context::{Ctx, Service, provider_error};

impl Purge<Ctx> for Account {
    /// The account's own purge: its processes, its files outside the home, the user, the
    /// group the node created and the home. The other families' hooks have run before this
    /// one (see [`purge_account`]), so its crontab and PHP pools are gone.
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let Some(row) = ctx
            .state
            .resource(Account::NAME, account)
            .map_err(store_error)?
        else {
            return Ok(());
        };
        let Some(rec) = recorded(ctx, account, Some(&row))? else {
            // A row without a name names no user: nothing of the system's to remove.
            ctx.forget_row();
            return Ok(());
        };
        let home = row.data["home"]
            .as_str()
            .map(PathBuf::from)
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
            crash::point("account.after_processes_stopped");
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
        // LVE limits and CageFS are keyed by the user name: reset them while the user exists,
        // so a later account with the same name does not inherit them.
        if user_of(ctx, &rec)?.is_some() {
            if row.data.get("limits").is_some_and(|l| !l.is_null()) {
                ctx.provider
                    .lvectl_delete_user(&username)
                    .map_err(provider_error)?;
            }
            if row.data["cagefs"].as_bool() == Some(true) {
                ctx.provider
                    .cagefs_set(&username, false)
                    .map_err(provider_error)?;
            }
            if row.data.get("mysql_limits").is_some_and(|l| !l.is_null()) {
                ctx.provider
                    .dbctl_delete(&username)
                    .map_err(provider_error)?;
            }
        }
        crash::point("account.before_userdel");
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
            match ctx.provider.userdel(&username, true) {
                // A process started since the kill (a cron job cron had already loaded):
                // once more, then the removal is retried rather than failed for good.
                Err(e) if e.exit_status() == Some(8) => {
                    stop_processes(ctx, &rec, home)?;
                    ctx.provider
                        .userdel(&username, true)
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

/// The GECOS comment written for a new account's user, for whoever reads passwd. Informative
/// only: the tenant can change it (`chfn`), so the node never identifies an account by it.
pub fn marker(account: &Hex32) -> String {
    format!("layerone-{account}")
}

/// The production path of a tenant's home.
pub fn home_of(username: &Username) -> PathBuf {
    PathBuf::from("/home").join(username.as_str())
}

pub(crate) use crate::context::store_error;

/// What the node recorded about an account's system identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    /// Whether the group `name` with `gid` is one the node created (and so may delete).
    pub group_created: bool,
}

/// The identity recorded for `account`: its live `identities` row, or for an account created
/// before those rows existed, its resource row (the group counts as the node's only when its
/// gid is at or above GID_MIN and its name is not a reserved one). `None`: nothing recorded.
pub fn recorded(
    ctx: &Ctx,
    account: &Hex32,
    row: Option<&ResourceRow>,
) -> Result<Option<Recorded>, OpError> {
    if let Some(id) = ctx.state.account_identity(account).map_err(store_error)? {
        return Ok(Some(Recorded {
            gid: id.gid.unwrap_or(id.uid),
            name: id.name,
            uid: id.uid,
            group_created: true,
        }));
    }
    let row = match row {
        Some(row) => Some(row.clone()),
        None => ctx
            .state
            .resource(Account::NAME, account)
            .map_err(store_error)?,
    };
    let Some(row) = row else {
        return Ok(None);
    };
    let name = row.data["username"].as_str();
    let uid = row.data["uid"].as_u64().and_then(|v| u32::try_from(v).ok());
    let gid = row.data["gid"].as_u64().and_then(|v| u32::try_from(v).ok());
    let (Some(name), Some(uid), Some(gid)) = (name, uid, gid) else {
        return Ok(None);
    };
    let (gid_min, _) = ctx.provider.login_gid_range().map_err(provider_error)?;
    Ok(Some(Recorded {
        name: name.to_owned(),
        uid,
        gid,
        group_created: gid >= gid_min && !registry::types::is_reserved_name(name),
    }))
}

/// The passwd entry of the recorded user: the recorded name with the recorded uid.
pub fn user_of(ctx: &Ctx, rec: &Recorded) -> Result<Option<PasswdEntry>, OpError> {
    Ok(ctx
        .provider
        .lookup_user(&rec.name)
        .map_err(provider_error)?
        .filter(|u| u.uid == rec.uid))
}

/// The passwd entry holding `uid`, whatever its name.
fn uid_holder(ctx: &Ctx, uid: u32) -> Result<Option<PasswdEntry>, OpError> {
    Ok(ctx
        .provider
        .passwd_entries()
        .map_err(provider_error)?
        .into_iter()
        .find(|u| u.uid == uid))
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
/// terminate_tenant_processes`). The account's PHP pools were removed earlier in this job;
/// FPM is reloaded first so its master lets go of them instead of starting new children.
/// If processes still run (pools removed by an attempt that crashed before its reload, which
/// this job cannot see), every installed FPM is reloaded once and the kill tried again.
fn stop_processes(ctx: &mut Ctx, rec: &Recorded, home: PathBuf) -> Result<(), OpError> {
    for &version in provider::PhpVersion::ALL {
        ctx.reload_now(Service::PhpFpm(version))?;
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

/// Refuses a name a new account cannot take (see the module documentation).
fn check_name_free(ctx: &Ctx, account: &Hex32, name: &str) -> Result<(), OpError> {
    let reserved = |why: String| {
        OpError::permanent(
            "username_reserved",
            format!("username: {name} cannot be a tenant's: {why}"),
        )
    };
    if registry::types::is_reserved_name(name) {
        return Err(reserved("it is reserved for the system".into()));
    }
    let taken = || {
        OpError::permanent(
            "username_taken",
            format!("username: {name} is another account's on this node"),
        )
    };
    for other in ctx
        .state
        .resource_ids_where(Account::NAME, "$.username", name)
        .map_err(store_error)?
    {
        if &other != account {
            return Err(taken());
        }
    }
    for row in ctx.state.identities_named(name).map_err(store_error)? {
        match row.kind {
            IdentityKind::Administrator => {
                return Err(reserved("it was a sudo administrator's".into()));
            }
            IdentityKind::Account if !row.removed && row.owner != account.as_str() => {
                return Err(taken());
            }
            IdentityKind::Account => {}
        }
    }
    if administrator_names(ctx)?.contains(name) {
        return Err(reserved("it is on the sudo allowlist".into()));
    }
    if let Some(place) = ctx.provider.system_name_use(name).map_err(provider_error)? {
        return Err(reserved(format!("it is {place}")));
    }
    Ok(())
}

/// The names on every sudo allowlist row the node has (the current and the earlier ones its
/// rows still name).
fn administrator_names(ctx: &Ctx) -> Result<BTreeSet<String>, OpError> {
    let mut names = BTreeSet::new();
    for row in ctx
        .state
        .resources_of(&Owner::Node, crate::sudo::SudoAllowlist::NAME)
        .map_err(store_error)?
    {
        for user in row.data["users"].as_array().into_iter().flatten() {
            if let Some(user) = user.as_str() {
                names.insert(user.to_owned());
            }
        }
    }
    Ok(names)
}

/// Chooses a new account's uid, which is also its group's gid (see the module
/// documentation): the lowest free id above every id recorded or in use within the range;
/// when none is left, the lowest id never recorded; last, an id of a removed account. Never an
/// id in use, nor an administrator's, nor a live account's.
pub fn allocate_id(ctx: &Ctx) -> Result<u32, OpError> {
    let (uid_min, uid_max) = ctx.provider.login_uid_range().map_err(provider_error)?;
    let (gid_min, gid_max) = ctx.provider.login_gid_range().map_err(provider_error)?;
    let (lo, hi) = (uid_min.max(gid_min), uid_max.min(gid_max));
    let system = ctx.provider.system_ids().map_err(provider_error)?;
    let mut forbidden: BTreeSet<u32> = system.uids.union(&system.gids).copied().collect();
    let mut ever: BTreeSet<u32> = BTreeSet::new();
    for (id, held) in ctx.state.recorded_ids().map_err(store_error)? {
        ever.insert(id);
        if held {
            forbidden.insert(id);
        }
    }
    // Accounts made before their identities were recorded.
    for id in ctx
        .state
        .resource_numbers(Account::NAME, &["$.uid", "$.gid"])
        .map_err(store_error)?
    {
        if let Ok(id) = u32::try_from(id) {
            ever.insert(id);
            forbidden.insert(id);
        }
    }
    let exhausted = || {
        OpError::permanent(
            "id_range_exhausted",
            format!("no free id is left in {lo}..={hi} (UID_MIN..UID_MAX and GID_MIN..GID_MAX)"),
        )
    };
    if lo > hi {
        return Err(exhausted());
    }
    let highest = ever
        .iter()
        .chain(&forbidden)
        .copied()
        .filter(|id| (lo..=hi).contains(id))
        .max();
    let start = highest.map_or(lo, |h| h.saturating_add(1));
    let free = |id: &u32| !forbidden.contains(id);
    if let Some(id) = (start..=hi).find(free) {
        return Ok(id);
    }
    if let Some(id) = (lo..=hi).find(|id| free(id) && !ever.contains(id)) {
        return Ok(id);
    }
    (lo..=hi).find(free).ok_or_else(exhausted)
}

/// An account as other families need it: who owns files, and where the home is.
pub struct AccountInfo {
    pub username: String,
    pub uid: u32,
    pub gid: u32,
    /// The production path of the home (`/home/<user>`).
    pub home: PathBuf,
}

/// The account's tenant as the worker becomes it: uid, primary gid, the groups whose member
/// list names the user, and the home. Handlers pass it to `Provider::as_tenant`.
pub fn tenant_of(ctx: &Ctx, info: &AccountInfo) -> Result<tenant::Identity, OpError> {
    let groups = ctx
        .provider
        .supplementary_groups(&info.username)
        .map_err(provider_error)?;
    tenant::Identity::new(info.uid, info.gid, groups, info.home.clone())
        .map_err(|e| OpError::permanent(e.code.code(), e.message))
}

/// Bytes and inodes in an account's home, measured by the tenant worker as the tenant (no
/// symlink followed, no other device entered, bounded in time and entries). The basis of a
/// periodic `observe_account_usage`; not yet scheduled by the runner.
pub fn account_usage(ctx: &Ctx, account: &Hex32) -> Result<tenant::DiskUsage, OpError> {
    let info = account_info(ctx, account)?;
    let who = tenant_of(ctx, &info)?;
    match ctx
        .provider
        .as_tenant(&who, &tenant::Request::DiskUsage { budget_ms: None })
        .map_err(provider_error)?
    {
        tenant::TenantResult::DiskUsage(usage) => Ok(usage),
        // as_tenant checks the reply answers the request; this arm cannot be reached.
        other => Err(OpError::permanent(
            "tenant_reply_invalid",
            format!("a {} result answered a disk_usage request", other.name()),
        )),
    }
}

/// Looks up the account that owns a resource: the user recorded for it (name and uid), as
/// passwd has it now. Fails with `account_missing` when the account was never created here,
/// was removed, or its user is gone.
pub fn account_info(ctx: &Ctx, account: &Hex32) -> Result<AccountInfo, OpError> {
    let missing = || {
        OpError::permanent(
            "account_missing",
            format!("account {account} does not exist on this node"),
        )
    };
    let row = ctx
        .state
        .resource(Account::NAME, account)
        .map_err(store_error)?
        .ok_or_else(missing)?;
    let rec = recorded(ctx, account, Some(&row))?.ok_or_else(missing)?;
    let user = user_of(ctx, &rec)?.ok_or_else(missing)?;
    Ok(AccountInfo {
        username: user.name,
        uid: user.uid,
        gid: user.gid,
        home: user.home,
    })
}

impl Apply<Ctx> for EnsureAccount {
    fn apply(ctx: &mut Ctx, req: &EnsureAccountRequest) -> Result<AccountResult, OpError> {
        let previous = ctx
            .state
            .resource(Account::NAME, &req.id)
            .map_err(store_error)?;
        let immutable = |had: &str| {
            OpError::permanent(
                "username_immutable",
                format!("account {} already has the user name {had}", req.id),
            )
        };
        if let Some(prev) = &previous
            && prev.data["username"].as_str() != Some(req.username.as_str())
        {
            return Err(immutable(&prev.data["username"].to_string()));
        }
        let name = req.username.as_str();
        let home = home_of(&req.username);
        let shell = req.shell.path();
        let marker = marker(&req.id);
        let rec = match recorded(ctx, &req.id, previous.as_ref())? {
            Some(rec) if rec.name != name => return Err(immutable(&rec.name)),
            Some(rec) => rec,
            None => new_identity(ctx, &req.id, name)?,
        };
        // A first attempt that recorded its ids and created nothing, then found them taken
        // (someone else's useradd in between), records new ones.
        let rec = if previous.is_none()
            && ctx
                .provider
                .lookup_user(name)
                .map_err(provider_error)?
                .is_none()
            && ctx
                .provider
                .lookup_group(name)
                .map_err(provider_error)?
                .is_none()
        {
            let system = ctx.provider.system_ids().map_err(provider_error)?;
            if system.uids.contains(&rec.uid) || system.gids.contains(&rec.gid) {
                new_identity(ctx, &req.id, name)?
            } else {
                rec
            }
        } else {
            rec
        };
        let taken = |what: String| {
            OpError::permanent(
                "username_taken",
                format!(
                    "username: {what}, which is not what the node created for account {}",
                    req.id
                ),
            )
        };
        match ctx.provider.lookup_group(name).map_err(provider_error)? {
            Some(group) if group.gid == rec.gid => {}
            Some(group) => {
                return Err(taken(format!(
                    "the group {name} exists with gid {}",
                    group.gid
                )));
            }
            None if rec.group_created => ctx
                .provider
                .groupadd_with_gid(name, rec.gid)
                .map_err(provider_error)?,
            None => {
                return Err(taken(format!(
                    "the group {name} (gid {}) the account was given is gone",
                    rec.gid
                )));
            }
        }
        crash::point("account.after_groupadd");
        let user = match ctx.provider.lookup_user(name).map_err(provider_error)? {
            Some(user) if user.uid == rec.uid => user,
            Some(user) => {
                return Err(taken(format!(
                    "the user {name} exists with uid {}",
                    user.uid
                )));
            }
            None => {
                if let Some(holder) = uid_holder(ctx, rec.uid)? {
                    return Err(OpError::permanent(
                        "uid_taken",
                        format!(
                            "the uid {} recorded for account {} is now the user {}'s",
                            rec.uid, req.id, holder.name
                        ),
                    ));
                }
                ctx.provider
                    .useradd_with_uid(
                        &UserAdd {
                            name,
                            group: name,
                            home: &home,
                            shell,
                            comment: &marker,
                            password_hash: None,
                        },
                        rec.uid,
                    )
                    .map_err(provider_error)?;
                crash::point("account.after_useradd");
                user_of(ctx, &rec)?.ok_or_else(|| {
                    OpError::retryable(
                        "user_not_created",
                        format!(
                            "useradd succeeded but {name} is not in passwd with uid {}",
                            rec.uid
                        ),
                    )
                })?
            }
        };
        if user.shell != shell {
            ctx.provider
                .usermod(&UserMod {
                    name,
                    shell: Some(shell),
                    ..UserMod::default()
                })
                .map_err(provider_error)?;
            crash::point("account.after_usermod");
        }
        let suspended = previous
            .as_ref()
            .and_then(|p| p.data["suspended"].as_bool())
            .unwrap_or(false);
        let data = json!({
            "username": name,
            "uid": user.uid,
            "gid": user.gid,
            "home": user.home.display().to_string(),
            "shell": shell,
            "suspended": suspended,
            "disk_quota_mib": req.disk_quota_mib.get(),
            "inode_quota": req.inode_quota.get(),
        });
        ctx.set_resource(data);
        Ok(AccountResult {
            state: Presence::Present,
            username: Some(name.to_owned()),
            uid: Some(user.uid),
            gid: Some(user.gid),
            home: Some(user.home.display().to_string()),
            shell: Some(shell.to_owned()),
            suspended: Some(suspended),
            disk_quota_mib: Some(req.disk_quota_mib.get()),
            inode_quota: Some(req.inode_quota.get()),
        })
    }
}

/// Checks `name` is free for a new account, chooses its id and records both before anything
/// is created (see the module documentation).
fn new_identity(ctx: &mut Ctx, account: &Hex32, name: &str) -> Result<Recorded, OpError> {
    check_name_free(ctx, account, name)?;
    let id = allocate_id(ctx)?;
    ctx.state
        .record_account_identity(account, name, id, id)
        .map_err(store_error)?;
    crash::point("account.after_identity_recorded");
    Ok(Recorded {
        name: name.to_owned(),
        uid: id,
        gid: id,
        group_created: true,
    })
}

/// Locks or unlocks the account's logins (password locked, account expired) and records it.
fn set_suspended(
    ctx: &mut Ctx,
    req: &AccountRef,
    suspended: bool,
) -> Result<AccountResult, OpError> {
    let info = account_info(ctx, &req.id)?;
    let expire = if suspended {
        Expire::Expired
    } else {
        Expire::Never
    };
    ctx.provider
        .usermod(&UserMod {
            name: &info.username,
            lock: Some(suspended),
            expire: Some(expire),
            ..UserMod::default()
        })
        .map_err(provider_error)?;
    let mut row = ctx
        .state
        .resource(Account::NAME, &req.id)
        .map_err(store_error)?
        .map(|r| r.data)
        .unwrap_or_default();
    row["suspended"] = json!(suspended);
    let result = AccountResult {
        state: Presence::Present,
        username: Some(info.username.clone()),
        uid: Some(info.uid),
        gid: Some(info.gid),
        home: Some(info.home.display().to_string()),
        shell: row["shell"].as_str().map(str::to_owned),
        suspended: Some(suspended),
        disk_quota_mib: row["disk_quota_mib"].as_u64(),
        inode_quota: row["inode_quota"].as_u64(),
    };
    ctx.set_resource(row);
    Ok(result)
}

impl Apply<Ctx> for SuspendAccount {
    fn apply(ctx: &mut Ctx, req: &AccountRef) -> Result<AccountResult, OpError> {
        set_suspended(ctx, req, true)
    }
}

impl Apply<Ctx> for UnsuspendAccount {
    fn apply(ctx: &mut Ctx, req: &AccountRef) -> Result<AccountResult, OpError> {
        set_suspended(ctx, req, false)
    }
}

impl Apply<Ctx> for SetAccountPassword {
    fn apply(ctx: &mut Ctx, req: &SetAccountPasswordRequest) -> Result<AccountResult, OpError> {
        let info = account_info(ctx, &req.id)?;
        let row = ctx
            .state
            .resource(Account::NAME, &req.id)
            .map_err(store_error)?
            .map(|r| r.data)
            .unwrap_or_default();
        let suspended = row["suspended"].as_bool().unwrap_or(false);
        // The hash goes to usermod as a secret argument: the audit trail shows `<redacted>`.
        ctx.provider
            .usermod(&UserMod {
                name: &info.username,
                password_hash: Some(req.password_hash.as_str()),
                lock: suspended.then_some(true),
                ..UserMod::default()
            })
            .map_err(provider_error)?;
        Ok(AccountResult {
            state: Presence::Present,
            username: Some(info.username.clone()),
            uid: Some(info.uid),
            gid: Some(info.gid),
            home: Some(info.home.display().to_string()),
            shell: row["shell"].as_str().map(str::to_owned),
            suspended: Some(suspended),
            disk_quota_mib: row["disk_quota_mib"].as_u64(),
            inode_quota: row["inode_quota"].as_u64(),
        })
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
        crash::point("account.purge.after_family");
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Limits and isolation. LVE limits and CageFS exist on the `cloudlinux` profile only; on
// `debian` both operations fail `unsupported_on_platform` before anything runs (the provider
// has no path for `lvectl` or `cagefsctl` there). systemd slices could cap CPU, memory, I/O
// and tasks per user on Debian (`user-UID.slice` drop-ins), but not entry processes, and
// PHP-FPM and Apache children run in the services' own slices, not the user's: the limits
// would look enforced and not be. They stay unsupported until the web stack runs per-user
// units.

/// Records the account row with `change` applied, after the handler's OS change succeeded.
fn update_row(
    ctx: &mut Ctx,
    account: &Hex32,
    change: impl FnOnce(&mut serde_json::Value),
) -> Result<(), OpError> {
    let mut row = ctx
        .state
        .resource(Account::NAME, account)
        .map_err(store_error)?
        .map(|r| r.data)
        .unwrap_or_default();
    change(&mut row);
    ctx.set_resource(row);
    Ok(())
}

/// Database limits as the result reports them, from what was given to `dbctl`.
fn as_mysql_limits(l: GovernorLimits) -> MysqlLimits {
    MysqlLimits {
        cpu_percent: l.cpu_pct,
        read_kib_per_sec: l.read_kibs,
        write_kib_per_sec: l.write_kibs,
    }
}

/// LVE limits as the result reports them.
fn as_limits(l: LveLimits) -> Limits {
    Limits {
        cpu_percent: l.speed_pct,
        memory_mib: l.pmem_mib,
        io_kib_per_sec: l.io_kibs,
        processes: l.nproc,
        entry_processes: l.entry_procs,
    }
}

/// The limits `lvectl list-user` reports for `user`, or `None` when it lists none.
fn lve_limits_of(ctx: &Ctx, user: &str) -> Result<Option<Limits>, OpError> {
    Ok(ctx
        .provider
        .lvectl_list_user()
        .map_err(provider_error)?
        .into_iter()
        .find(|(name, _)| name == user)
        .map(|(_, l)| as_limits(l)))
}

fn cagefs_of(ctx: &Ctx, user: &str) -> Result<bool, OpError> {
    Ok(ctx
        .provider
        .cagefs_enabled_users()
        .map_err(provider_error)?
        .iter()
        .any(|u| u == user))
}

impl Apply<Ctx> for SetAccountLimits {
    fn apply(ctx: &mut Ctx, req: &SetAccountLimitsRequest) -> Result<AccountLimitsResult, OpError> {
        let info = account_info(ctx, &req.id)?;
        // Database limits need the governor: refused before anything runs where it is absent
        // (always on debian), never dropped silently.
        if req.mysql.is_some() && !ctx.provider.mysql_governor_present() {
            return Err(OpError::permanent(
                "unsupported_on_platform",
                format!(
                    "database limits need MySQL Governor (dbctl), which this {} node does not have",
                    ctx.provider.platform()
                ),
            ));
        }
        let wanted = LveLimits {
            speed_pct: req.cpu_percent.get(),
            pmem_mib: req.memory_mib.get(),
            io_kibs: req.io_kib_per_sec.get(),
            nproc: req.processes.get(),
            entry_procs: req.entry_processes.get(),
        };
        ctx.provider
            .lvectl_set_user(&info.username, &wanted)
            .map_err(provider_error)?;
        crash::point("account.after_lvectl_set");
        let limits = lve_limits_of(ctx, &info.username)?;
        if limits != Some(as_limits(wanted)) {
            return Err(OpError::retryable(
                "limits_not_in_effect",
                format!(
                    "lvectl accepted the limits of {} but lists {limits:?}",
                    info.username
                ),
            ));
        }
        let had_mysql = ctx
            .state
            .resource(Account::NAME, &req.id)
            .map_err(store_error)?
            .is_some_and(|r| r.data.get("mysql_limits").is_some_and(|l| !l.is_null()));
        let mysql = match &req.mysql {
            Some(db) => Some(set_mysql_limits(ctx, &info.username, db)?),
            None => {
                if had_mysql {
                    ctx.provider
                        .dbctl_delete(&info.username)
                        .map_err(provider_error)?;
                }
                None
            }
        };
        // The account's PHP pools take their children from the limits (`PoolLimits`).
        crate::php::sync_pools(
            ctx,
            &req.id,
            crate::php::PoolChange::Limits(&as_limits(wanted)),
        )?;
        update_row(ctx, &req.id, |row| {
            row["limits"] = json!(as_limits(wanted));
            row["mysql_limits"] = json!(mysql);
        })?;
        Ok(AccountLimitsResult {
            username: info.username,
            limits,
            cagefs: None,
            mysql,
        })
    }
}

/// `dbctl set` for `user`, then `dbctl list --bb` to see it in effect (dbctl exits 0 even
/// when it refuses its arguments, so only the read-back says it worked).
fn set_mysql_limits(
    ctx: &mut Ctx,
    user: &str,
    db: &MysqlLimitsRequest,
) -> Result<MysqlLimits, OpError> {
    let wanted = GovernorLimits {
        cpu_pct: db.cpu_percent.get(),
        read_kibs: db.read_kib_per_sec.get(),
        write_kibs: db.write_kib_per_sec.get(),
    };
    ctx.provider
        .dbctl_set(user, &wanted)
        .map_err(provider_error)?;
    // No crash point of its own: a retry sets the same limits again, and a crash before the
    // row is recorded leaves the previous row, whose purge still resets the user.
    let listed = ctx.provider.dbctl_list().map_err(provider_error)?;
    match listed.iter().find(|(name, _)| name == user) {
        Some((_, line)) if line.matches(&wanted) => Ok(as_mysql_limits(wanted)),
        other => Err(OpError::retryable(
            "limits_not_in_effect",
            format!("dbctl was given the database limits of {user} but lists {other:?}"),
        )),
    }
}

impl Apply<Ctx> for SetAccountIsolation {
    fn apply(
        ctx: &mut Ctx,
        req: &SetAccountIsolationRequest,
    ) -> Result<AccountLimitsResult, OpError> {
        let info = account_info(ctx, &req.id)?;
        ctx.provider
            .cagefs_set(&info.username, req.cagefs)
            .map_err(provider_error)?;
        crash::point("account.after_cagefsctl");
        let cagefs = cagefs_of(ctx, &info.username)?;
        if cagefs != req.cagefs {
            return Err(OpError::retryable(
                "isolation_not_in_effect",
                format!(
                    "cagefsctl accepted the change for {} but its list disagrees",
                    info.username
                ),
            ));
        }
        update_row(ctx, &req.id, |row| row["cagefs"] = json!(cagefs))?;
        Ok(AccountLimitsResult {
            username: info.username,
            limits: None,
            cagefs: Some(cagefs),
            mysql: None,
        })
    }
}

/// What `dbctl list --bb` shows for `user`: its line, else the `default` line (the governor
/// lists users with their own limits and those active since it started).
fn mysql_limits_of(ctx: &Ctx, user: &str) -> Result<Option<MysqlLimits>, OpError> {
    if !ctx.provider.mysql_governor_present() {
        return Ok(None);
    }
    let listed = ctx.provider.dbctl_list().map_err(provider_error)?;
    let line = listed
        .iter()
        .find(|(name, _)| name == user)
        .or_else(|| listed.iter().find(|(name, _)| name == "default"));
    Ok(line.map(|(_, l)| MysqlLimits {
        cpu_percent: l.cpu_pct,
        read_kib_per_sec: l.read_bytes / 1024,
        write_kib_per_sec: l.write_bytes / 1024,
    }))
}

impl Apply<Ctx> for ObserveAccountUsage {
    fn apply(ctx: &mut Ctx, req: &AccountRef) -> Result<AccountUsageResult, OpError> {
        let info = account_info(ctx, &req.id)?;
        let usage = account_usage(ctx, &req.id)?;
        let row = ctx
            .state
            .resource(Account::NAME, &req.id)
            .map_err(store_error)?
            .map(|r| r.data)
            .unwrap_or_default();
        let limits_recorded = serde_json::from_value(row["limits"].clone()).ok();
        let (limits_in_effect, cagefs) = match ctx.provider.platform() {
            Platform::CloudLinux => (
                lve_limits_of(ctx, &info.username)?,
                Some(cagefs_of(ctx, &info.username)?),
            ),
            Platform::Debian => (None, None),
        };
        let mysql_limits_recorded = serde_json::from_value(row["mysql_limits"].clone()).ok();
        let mysql_limits_in_effect = mysql_limits_of(ctx, &info.username)?;
        Ok(AccountUsageResult {
            mysql_limits_recorded,
            mysql_limits_in_effect,
            username: info.username,
            disk_bytes: usage.bytes,
            inodes: usage.inodes,
            complete: usage.complete,
            unreadable_dirs: usage.unreadable_dirs,
            unreadable_entries: usage.unreadable_entries,
            disk_quota_mib: row["disk_quota_mib"].as_u64().unwrap_or(0),
            inode_quota: row["inode_quota"].as_u64().unwrap_or(0),
            limits_recorded,
            limits_in_effect,
            cagefs,
        })
    }
}

impl Apply<Ctx> for RebuildAccount {
    fn apply(ctx: &mut Ctx, req: &AccountRef) -> Result<RebuildResult, OpError> {
        rebuild(ctx, &req.id)
    }
}

/// Whether replaying `operation` again re-derives its resource's state: the verbs that
/// declare a state (`ensure_`, `set_`, `suspend_`, `unsuspend_`) do; removals, reads,
/// creations of new things (a backup) and rebuilds do not. A later family plugs in by naming
/// its operations with these verbs; nothing else to register.
pub fn replayable(operation: &str) -> bool {
    ["ensure_", "set_", "suspend_", "unsuspend_"]
        .iter()
        .any(|verb| operation.starts_with(verb))
}

/// Rebuilds an account: the user (created again if gone), the home, then, for the account and
/// for every resource it owns in state.db, the last succeeded request of each replayable
/// operation since the resource's last removal, in admission order. Each family's handler
/// derives its files whole from state.db, so the replay puts back exactly what was there
/// (vhosts through the configuration test and a reload, `authorized_keys`, document roots as
/// the tenant). The account's row is kept, its uid and gid refreshed from passwd.
pub fn rebuild(ctx: &mut Ctx, account: &Hex32) -> Result<RebuildResult, OpError> {
    let missing = || {
        OpError::permanent(
            "account_missing",
            format!("account {account} is not recorded on this node"),
        )
    };
    let stored = ctx
        .state
        .resource(Account::NAME, account)
        .map_err(store_error)?
        .ok_or_else(missing)?;
    let mut keys = vec![(Account::NAME, account.clone())];
    let owner = Owner::Tenant(account.clone());
    for family in declarations::registry().families() {
        if family.name == Account::NAME {
            continue;
        }
        for row in ctx
            .state
            .resources_of(&owner, family.name)
            .map_err(store_error)?
        {
            keys.push((family.name, row.resource_id));
        }
    }
    let mut replayed = Vec::new();
    let mut home_recreated = false;
    for (family, id) in keys {
        let jobs = ctx
            .state
            .succeeded_requests(family, &id)
            .map_err(store_error)?;
        let since = jobs
            .iter()
            .rposition(|(_, op, _)| op.starts_with("remove_"))
            .map_or(0, |i| i + 1);
        let mut latest: std::collections::BTreeMap<&str, (i64, &str)> = Default::default();
        for (seq, op, body) in &jobs[since..] {
            if replayable(op) {
                latest.insert(op, (*seq, body));
            }
        }
        let mut order: Vec<(i64, &str, &str)> = latest
            .into_iter()
            .map(|(op, (seq, body))| (seq, op, body))
            .collect();
        order.sort();
        for (_, op, body) in order {
            let entry = crate::handlers().operation(op).ok_or_else(|| {
                OpError::permanent(
                    "rebuild_failed",
                    format!("state.db holds a job of an unknown operation {op:?}"),
                )
            })?;
            let envelope: serde_json::Value = serde_json::from_str(body).map_err(|_| {
                OpError::permanent("rebuild_failed", format!("the stored {op} is not JSON"))
            })?;
            entry
                .apply(ctx, envelope["resource"].clone())
                .map_err(|e| OpError {
                    message: format!("replaying {op} for {family} {id}: {}", e.message),
                    ..e
                })?;
            ctx.discard_row_change();
            replayed.push(format!("{family}/{op}/{id}"));
            if family == Account::NAME && op == EnsureAccount::NAME {
                home_recreated = ensure_home(ctx, account)?;
            }
        }
    }
    crash::point("account.rebuild.after_replay");
    let info = account_info(ctx, account)?;
    let mut row = stored.data;
    row["uid"] = json!(info.uid);
    row["gid"] = json!(info.gid);
    row["home"] = json!(info.home.display().to_string());
    ctx.set_resource(row);
    Ok(RebuildResult {
        username: info.username,
        home_recreated,
        replayed,
    })
}

/// Creates the home again (mode [`provider::HOME_MODE`], owned by the tenant in the web
/// server's group, as `useradd` left it) when it is gone.
fn ensure_home(ctx: &Ctx, account: &Hex32) -> Result<bool, OpError> {
    let info = account_info(ctx, account)?;
    let home = ctx.provider.sysconf(&info.home);
    if std::fs::symlink_metadata(&home).is_ok() {
        return Ok(false);
    }
    ctx.provider
        .ensure_dir(&home, provider::HOME_MODE)
        .map_err(provider_error)?;
    ctx.provider
        .set_owner_mode(
            &home,
            provider::HOME_MODE,
            (
                info.uid,
                ctx.provider.home_group(info.gid).map_err(provider_error)?,
            ),
        )
        .map_err(provider_error)?;
    Ok(true)
}
