//! The `account` family: a tenant's system user and group, home and shell, and its disk and
//! inode quotas. One part per file:
//!
//! - `identity`: who the account is (its name, uid and gid as the node recorded them) and
//!   `ensure_account`, which creates it;
//! - `logins`: `suspend_account`, `unsuspend_account` (the user locked, and the files the
//!   tenant's sites, mailboxes and FTP logins are served from derived again), and
//!   `set_account_password`;
//! - `limits`: `set_account_limits` and `set_account_isolation` (LVE, CageFS, MySQL
//!   Governor on `cloudlinux`);
//! - `quota`: the disk and inode quotas, enforced by the homes' file system (btrfs qgroups,
//!   user quotas) or refused where nothing can enforce them;
//! - `usage`: `observe_account_usage`, measured by the tenant worker, with the quota the
//!   kernel reports;
//! - `rebuild`: `rebuild_account`, which replays what the account declared;
//! - `removal`: `remove_account`, the purge sweep: every family's purge hook for the
//!   account, in reverse declaration order, so the account itself goes last.
//!
//! This file holds what other families need of an account ([`AccountInfo`],
//! [`account_info`], [`live_account_info`], [`tenant_of`], [`suspended_accounts`]) and what the family derives for
//! the drift check (its user and home).

pub use declarations::account::*;

crash::points! {
    AFTER_IDENTITY_RECORDED = "account.after_identity_recorded",
    AFTER_GROUPADD = "account.after_groupadd",
    AFTER_USERADD = "account.after_useradd",
    AFTER_USERMOD = "account.after_usermod",
    AFTER_QUOTA = "account.after_quota",
    PURGE_AFTER_FAMILY = "account.purge.after_family",
    AFTER_PROCESSES_STOPPED = "account.after_processes_stopped",
    AFTER_QUOTA_RELEASED = "account.after_quota_released",
    BEFORE_USERDEL = "account.before_userdel",
    AFTER_LVECTL_SET = "account.after_lvectl_set",
    AFTER_SLICE_LIMITS = "account.after_slice_limits",
    AFTER_CAGEFSCTL = "account.after_cagefsctl",
    REBUILD_AFTER_REPLAY = "account.rebuild.after_replay",
    AFTER_SUSPENSION_USER = "account.after_suspension_user",
}

mod identity;
mod limits;
mod logins;
mod quota;
mod rebuild;
mod removal;
mod usage;

pub use identity::{Recorded, allocate_id, home_of, marker, recorded, user_of};
pub use rebuild::{rebuild, replayable};
pub use removal::purge_account;
pub use quota::{enclose_subvolumes, has_disk_quota};
pub use usage::account_usage;

use std::collections::BTreeSet;
use std::path::PathBuf;

use provider::Platform;
use registry::types::Hex32;
use registry::{Aspects, Content, Derive, Derived, Family, Of, OpError, Operation};
use serde::{Deserialize, Serialize};
use state::View;
use store::{StoreError, StoredRow};

use crate::context::{Ctx, provider_error, store_error};
use crate::row_fields::present;

/// An account's stored row: the user the node created for it, and what the control plane
/// set. `limits` and `mysql_limits` are recorded together by `set_account_limits` (the
/// latter `null` when it set none), `cagefs` by `set_account_isolation`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountRow {
    pub username: String,
    pub uid: u32,
    pub gid: u32,
    /// The production path of the home, as passwd has it.
    pub home: String,
    /// The login shell's path.
    pub shell: String,
    pub suspended: bool,
    pub disk_quota_mib: u64,
    pub inode_quota: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub mysql_limits: Option<Option<MysqlLimits>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cagefs: Option<bool>,
}

impl StoredRow for AccountRow {
    const FAMILY: &'static str = Account::NAME;
    const FIELD_OWNERS: registry::FieldOwners = &[
        ("suspended", &[SuspendAccount::NAME, UnsuspendAccount::NAME]),
        ("limits", &[SetAccountLimits::NAME]),
        ("mysql_limits", &[SetAccountLimits::NAME]),
        ("cagefs", &[SetAccountIsolation::NAME]),
    ];
}

impl AccountRow {
    /// The database limits `set_account_limits` recorded, if any.
    pub fn mysql_limits(&self) -> Option<MysqlLimits> {
        self.mysql_limits.flatten()
    }
}

/// The accounts `view` has suspended: the owner of every file a tenant is served from (its
/// vhosts, Dovecot's passwd-file, pure-ftpd's passwd) renders an account's resources as
/// refused while their account is in this set, whatever their own suspension.
pub fn suspended_accounts(view: &View<'_>) -> Result<BTreeSet<Hex32>, StoreError> {
    Ok(view
        .all::<AccountRow>()?
        .into_iter()
        .filter(|stored| stored.row.suspended)
        .map(|stored| stored.id)
        .collect())
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

/// The account's row, or `account_missing`.
pub fn account_row(ctx: &Ctx, account: &Hex32) -> Result<AccountRow, OpError> {
    ctx.view()
        .get::<AccountRow>(account)
        .map_err(store_error)?
        .map(|stored| stored.row)
        .ok_or_else(|| missing(account))
}

fn missing(account: &Hex32) -> OpError {
    OpError::permanent(
        "account_missing",
        format!("account {account} does not exist on this node"),
    )
}

/// Looks up the account that owns a resource: the user recorded for it (name and uid), as
/// passwd has it now. Fails with `account_missing` when the account was never created here,
/// was removed, or its user is gone.
pub fn account_info(ctx: &Ctx, account: &Hex32) -> Result<AccountInfo, OpError> {
    let row = account_row(ctx, account)?;
    let rec = recorded(ctx, account, Some(&row))?.ok_or_else(|| missing(account))?;
    let user = user_of(ctx, &rec)?.ok_or_else(|| missing(account))?;
    Ok(AccountInfo {
        username: user.name,
        uid: user.uid,
        gid: user.gid,
        home: user.home,
    })
}

/// [`account_info`], or `None` when the account's user is gone (or the account is not
/// recorded): what the drift check derives from an account's rows is compared only while its
/// user is there, the user's absence being the account's own finding (`user_missing`).
pub fn live_account_info(ctx: &Ctx, account: &Hex32) -> Result<Option<AccountInfo>, OpError> {
    match account_info(ctx, account) {
        Ok(info) => Ok(Some(info)),
        Err(e) if e.code == "account_missing" => Ok(None),
        Err(e) => Err(e),
    }
}

/// The accounts with rows of `T`'s family whose user is there, with the user: whose
/// derivations of that family the drift check compares.
pub fn live_accounts_of<T: StoredRow>(ctx: &Ctx) -> Result<Vec<(Hex32, AccountInfo)>, OpError> {
    let mut live = Vec::new();
    for account in crate::drift::accounts_of::<T>(ctx)? {
        if let Some(info) = live_account_info(ctx, &account)? {
            live.push((account, info));
        }
    }
    Ok(live)
}

const USER: Aspects = Aspects::new(USER_MISSING, USER_MISSING);
const HOME: Aspects = Aspects::new(HOME_MISSING, HOME_MISSING);
const SLICE_LIMITS: Aspects = Aspects::new(SLICE_LIMITS_MISSING, SLICE_LIMITS_DIFFERS);

impl Derive<Ctx> for Account {
    /// Each account's user as recorded (its name with its uid in passwd) and, while the user
    /// is there, its home.
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        let mut items = Vec::new();
        for stored in ctx.view().all::<AccountRow>().map_err(store_error)? {
            let of = Of::account(&stored.id);
            let rec = recorded(ctx, &stored.id, Some(&stored.row))?;
            let user = match &rec {
                Some(rec) => user_of(ctx, rec)?,
                None => None,
            };
            let uid = rec.as_ref().map_or(stored.row.uid, |rec| rec.uid);
            items.push(Derived::setting(
                of.clone(),
                format!("the user {} in passwd", stored.row.username),
                format!("uid {uid}"),
                user.as_ref().map(|user| format!("uid {}", user.uid)),
                USER,
            ));
            if user.is_none() {
                continue;
            }
            let home = ctx.provider.sysconf(&stored.row.home);
            let actual = match std::fs::symlink_metadata(&home) {
                Ok(_) => Content::Present,
                Err(_) => Content::Absent,
            };
            items.push(Derived::path(of.clone(), home, Content::Present, actual, HOME));
            // On `debian` the recorded limits are the slice's drop-in.
            if let (Some(limits), Some(user), Platform::Debian) =
                (&stored.row.limits, &user, ctx.provider.platform())
            {
                let (path, text) =
                    limits::slice_drop_in_of(ctx, &stored.id, user.uid, &user.home, limits);
                let actual = ctx.provider.read_config(&path).map_err(provider_error)?;
                items.push(Derived::path(
                    of,
                    path,
                    Content::Bytes(text.into_bytes()),
                    Content::file(actual),
                    SLICE_LIMITS,
                ));
            }
        }
        Ok(items)
    }
}
