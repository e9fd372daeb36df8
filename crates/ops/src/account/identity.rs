//! Who an account is (ARCHITECTURE.md invariant 15), and `ensure_account`, which creates it.
//!
//! The node knows an account by what it recorded, never by a field the tenant can edit: the
//! user name, uid and gid in the account's resource row and in state.db's `identities`
//! (`state::identities`). The GECOS comment `layerone-<account id>` is still written, for
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
//!   nothing but what the request states (its shell, and its quota, set again and read back:
//!   `quota.rs`); what other operations own (limits, isolation, suspension) stays as they
//!   recorded it. A quota the homes' file
//!   system cannot enforce is refused before anything is created. On btrfs the home is made
//!   a subvolume before `useradd` runs, so a retry after a crash finds it and goes on.
//!   useradd itself replaces passwd, then shadow: one killed in between leaves the recorded
//!   user without a shadow entry, which the retry gives it (`usermod --password !`, what
//!   useradd writes for no password).

use std::collections::BTreeSet;
use std::path::PathBuf;

use provider::{PasswdEntry, UserAdd, UserMod};
use registry::types::{Hex32, Presence, Username};
use registry::{Apply, OpError, Owner};
use state::IdentityKind;

use super::{AccountResult, AccountRow, EnsureAccount, EnsureAccountRequest, quota, store_error};
use crate::context::{Ctx, provider_error};
use crate::sudo::SudoAllowlistRow;

/// The GECOS comment written for a new account's user, for whoever reads passwd. Informative
/// only: the tenant can change it (`chfn`), so the node never identifies an account by it.
pub fn marker(account: &Hex32) -> String {
    format!("layerone-{account}")
}

/// The production path of a tenant's home.
pub fn home_of(username: &Username) -> PathBuf {
    PathBuf::from("/home").join(username.as_str())
}

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
    row: Option<&AccountRow>,
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
            .view()
            .get::<AccountRow>(account)
            .map_err(store_error)?
            .map(|stored| stored.row),
    };
    let Some(row) = row else {
        return Ok(None);
    };
    let (gid_min, _) = ctx.provider.login_gid_range().map_err(provider_error)?;
    Ok(Some(Recorded {
        group_created: row.gid >= gid_min && !registry::types::is_reserved_name(&row.username),
        name: row.username,
        uid: row.uid,
        gid: row.gid,
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
pub(super) fn uid_holder(ctx: &Ctx, uid: u32) -> Result<Option<PasswdEntry>, OpError> {
    Ok(ctx
        .provider
        .passwd_entries()
        .map_err(provider_error)?
        .into_iter()
        .find(|u| u.uid == uid))
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
        .view()
        .ids_where::<AccountRow>("username", name)
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
    for stored in ctx
        .view()
        .of_owner::<SudoAllowlistRow>(&Owner::Node)
        .map_err(store_error)?
    {
        names.extend(stored.row.users.iter().map(|u| u.to_string()));
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
        .view()
        .numbers::<AccountRow>(&["uid", "gid"])
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

impl Apply<Ctx> for EnsureAccount {
    fn apply(ctx: &mut Ctx, req: &EnsureAccountRequest) -> Result<AccountResult, OpError> {
        let previous = ctx
            .view()
            .get::<AccountRow>(&req.id)
            .map_err(store_error)?
            .map(|stored| stored.row);
        let immutable = |had: &str| {
            OpError::permanent(
                "username_immutable",
                format!("account {} already has the user name {had}", req.id),
            )
        };
        if let Some(prev) = &previous
            && prev.username != req.username.as_str()
        {
            return Err(immutable(&format!("{:?}", prev.username)));
        }
        let fs = quota::homes_fs(ctx)?;
        quota::check_offered(&fs, req)?;
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
        crash::point(super::AFTER_GROUPADD);
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
                // On btrfs the home is a subvolume of its own, made first (a retry finds it).
                ctx.provider
                    .prepare_home(&fs, &home)
                    .map_err(provider_error)?;
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
                crash::point(super::AFTER_USERADD);
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
        // useradd replaces passwd before shadow: one killed in between left the user without
        // its shadow entry, which a first creation's retry gives it as useradd would have.
        if previous.is_none()
            && ctx
                .provider
                .shadow_entry(name)
                .map_err(provider_error)?
                .is_none()
        {
            ctx.provider
                .usermod(&UserMod {
                    name,
                    password_hash: Some(ctx.provider.no_password_hash()),
                    ..UserMod::default()
                })
                .map_err(provider_error)?;
        }
        if user.shell != shell {
            ctx.provider
                .usermod(&UserMod {
                    name,
                    shell: Some(shell),
                    ..UserMod::default()
                })
                .map_err(provider_error)?;
            crash::point(super::AFTER_USERMOD);
        }
        let quota = quota::apply(ctx, &fs, &user.home, user.uid, req)?;
        crash::point(super::AFTER_QUOTA);
        let suspended = previous.as_ref().is_some_and(|p| p.suspended);
        // ensure_account owns the identity, the shell and the quotas; suspension, limits and
        // isolation belong to their own operations and are kept as they recorded them.
        let (limits, mysql_limits, cagefs) = previous
            .map(|p| (p.limits, p.mysql_limits, p.cagefs))
            .unwrap_or_default();
        ctx.set_row(&AccountRow {
            username: name.to_owned(),
            uid: user.uid,
            gid: user.gid,
            home: user.home.display().to_string(),
            shell: shell.to_owned(),
            suspended,
            disk_quota_mib: req.disk_quota_mib.get(),
            inode_quota: req.inode_quota.get(),
            limits,
            mysql_limits,
            cagefs,
        });
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
            quota: Some(quota),
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
    crash::point(super::AFTER_IDENTITY_RECORDED);
    Ok(Recorded {
        name: name.to_owned(),
        uid: id,
        gid: id,
        group_created: true,
    })
}
