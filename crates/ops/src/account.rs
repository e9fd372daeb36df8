//! The `account` family: a tenant's system user and group, home and shell, and the quota
//! figures the control plane set. `remove_account` is the purge sweep: every family's purge
//! hook for the account, in reverse declaration order, so the account itself goes last.
//!
//! Ownership marker: the user's GECOS field is `layerone-<account id>`. A retry after a crash
//! finds the user it created by that marker and adopts it; a user with the same name and
//! another marker is someone else's, and the operation fails with `username_taken`.

use std::path::PathBuf;

use provider::{Expire, GovernorLimits, LveLimits, Platform, UserAdd, UserMod};
use registry::types::{
    CpuPercent, GovernorKibPerSec, Hex32, Inodes, IoKibPerSec, MemoryMiB, MiB, PasswordHash,
    Presence, ProcessCount, Shell, Username,
};
use registry::{Family, Module, OpError, Operation, Owner, Resource, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::context::{Ctx, provider_error};

pub struct Account;

impl Family for Account {
    const NAME: &'static str = "account";
    const MODULE: Module = Module::Core;
    type Context = Ctx;

    /// The account's own purge: the user, its group and its home. The other families' hooks
    /// have run before this one (see [`purge_account`]).
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let Some(row) = ctx
            .state
            .resource(Account::NAME, account)
            .map_err(store_error)?
        else {
            return Ok(());
        };
        let username = row.data["username"].as_str().unwrap_or_default().to_owned();
        // LVE limits and CageFS are keyed by the user name: reset them while the user exists,
        // so a later account with the same name does not inherit them.
        if let Some(user) = ctx
            .provider
            .lookup_user(&username)
            .map_err(provider_error)?
            && user.gecos == marker(account)
        {
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
        if let Some(user) = ctx
            .provider
            .lookup_user(&username)
            .map_err(provider_error)?
            && user.gecos == marker(account)
        {
            ctx.provider
                .userdel(&username, true)
                .map_err(provider_error)?;
        }
        if ctx
            .provider
            .lookup_group(&username)
            .map_err(provider_error)?
            .is_some_and(|g| g.members.is_empty())
        {
            ctx.provider.groupdel(&username).map_err(provider_error)?;
        }
        ctx.forget_resource();
        Ok(())
    }
}

/// The GECOS marker that says a system user belongs to this account.
pub fn marker(account: &Hex32) -> String {
    format!("layerone-{account}")
}

/// The production path of a tenant's home.
pub fn home_of(username: &Username) -> PathBuf {
    PathBuf::from("/home").join(username.as_str())
}

pub(crate) fn store_error(e: store::StoreError) -> OpError {
    OpError::retryable("state_unavailable", e.to_string())
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

/// Looks up the account that owns a resource. Fails with `account_missing` when the account
/// was never created here, or was removed.
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
    let username = row.data["username"].as_str().ok_or_else(missing)?;
    let user = ctx
        .provider
        .lookup_user(username)
        .map_err(provider_error)?
        .ok_or_else(missing)?;
    if user.gecos != marker(account) {
        return Err(missing());
    }
    Ok(AccountInfo {
        username: user.name,
        uid: user.uid,
        gid: user.gid,
        home: user.home,
    })
}

// ---------------------------------------------------------------------------------------

/// Create or converge a tenant's account.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureAccountRequest {
    /// The account id; every other resource of the tenant names it as `account`.
    pub id: Hex32,
    /// The system user name. Fixed once created.
    pub username: Username,
    #[serde(default)]
    pub shell: Shell,
    /// Disk quota in MiB (0: unlimited). Recorded now; enforced by the quota module.
    #[serde(default = "unlimited_mib")]
    pub disk_quota_mib: MiB,
    /// Inode quota (0: unlimited). Recorded now; enforced by the quota module.
    #[serde(default = "unlimited_inodes")]
    pub inode_quota: Inodes,
}

fn unlimited_mib() -> MiB {
    MiB::try_from(0).expect("0 is within bounds")
}

fn unlimited_inodes() -> Inodes {
    Inodes::try_from(0).expect("0 is within bounds")
}

impl Resource for EnsureAccountRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.id.clone())
    }
}

/// The account as the OS shows it after the change.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountResult {
    pub state: Presence,
    pub username: Option<String>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub home: Option<String>,
    pub shell: Option<String>,
    pub suspended: Option<bool>,
    pub disk_quota_mib: Option<u64>,
    pub inode_quota: Option<u64>,
}

impl AccountResult {
    fn absent() -> Self {
        AccountResult {
            state: Presence::Absent,
            username: None,
            uid: None,
            gid: None,
            home: None,
            shell: None,
            suspended: None,
            disk_quota_mib: None,
            inode_quota: None,
        }
    }
}

pub struct EnsureAccount;

impl Operation for EnsureAccount {
    const NAME: &'static str = "ensure_account";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Create or converge a tenant's system user, group and home";
    type Family = Account;
    type Request = EnsureAccountRequest;
    type Result = AccountResult;

    fn example() -> EnsureAccountRequest {
        EnsureAccountRequest {
            id: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
                .parse()
                .expect("valid example"),
            username: "shop1".parse().expect("valid example"),
            shell: Shell::Bash,
            disk_quota_mib: MiB::try_from(10_240).expect("valid example"),
            inode_quota: Inodes::try_from(500_000).expect("valid example"),
        }
    }

    fn apply(ctx: &mut Ctx, req: &EnsureAccountRequest) -> Result<AccountResult, OpError> {
        let previous = ctx
            .state
            .resource(Account::NAME, &req.id)
            .map_err(store_error)?;
        if let Some(prev) = &previous
            && prev.data["username"].as_str() != Some(req.username.as_str())
        {
            return Err(OpError::permanent(
                "username_immutable",
                format!(
                    "account {} already has the user name {}",
                    req.id, prev.data["username"]
                ),
            ));
        }
        let name = req.username.as_str();
        let home = home_of(&req.username);
        let shell = req.shell.path();
        let marker = marker(&req.id);
        let user = match ctx.provider.lookup_user(name).map_err(provider_error)? {
            Some(user) if user.gecos != marker => {
                return Err(OpError::permanent(
                    "username_taken",
                    format!("the user name {name} is taken on this node"),
                ));
            }
            Some(user) => user,
            None => {
                // A group of this name with members is not ours to adopt; an empty one is the
                // group this operation created before a crash.
                match ctx.provider.lookup_group(name).map_err(provider_error)? {
                    Some(group) if !group.members.is_empty() => {
                        return Err(OpError::permanent(
                            "username_taken",
                            format!("the group {name} exists on this node"),
                        ));
                    }
                    Some(_) => {}
                    None => ctx.provider.groupadd(name).map_err(provider_error)?,
                }
                crash::point("account.after_groupadd");
                ctx.provider
                    .useradd(&UserAdd {
                        name,
                        group: name,
                        home: &home,
                        shell,
                        comment: &marker,
                        password_hash: None,
                    })
                    .map_err(provider_error)?;
                crash::point("account.after_useradd");
                ctx.provider
                    .lookup_user(name)
                    .map_err(provider_error)?
                    .ok_or_else(|| {
                        OpError::retryable(
                            "user_not_created",
                            format!("useradd succeeded but {name} is not in passwd"),
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

/// Names one existing account.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountRef {
    pub id: Hex32,
}

impl Resource for AccountRef {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.id.clone())
    }
}

fn example_ref() -> AccountRef {
    AccountRef {
        id: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
            .parse()
            .expect("valid example"),
    }
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

pub struct SuspendAccount;

impl Operation for SuspendAccount {
    const NAME: &'static str = "suspend_account";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Lock the account's logins (password locked, account expired)";
    type Family = Account;
    type Request = AccountRef;
    type Result = AccountResult;

    fn example() -> AccountRef {
        example_ref()
    }

    fn apply(ctx: &mut Ctx, req: &AccountRef) -> Result<AccountResult, OpError> {
        set_suspended(ctx, req, true)
    }
}

pub struct UnsuspendAccount;

impl Operation for UnsuspendAccount {
    const NAME: &'static str = "unsuspend_account";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Unlock the account's logins";
    type Family = Account;
    type Request = AccountRef;
    type Result = AccountResult;

    fn example() -> AccountRef {
        example_ref()
    }

    fn apply(ctx: &mut Ctx, req: &AccountRef) -> Result<AccountResult, OpError> {
        set_suspended(ctx, req, false)
    }
}

/// Set the password of an account's system user.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetAccountPasswordRequest {
    pub id: Hex32,
    /// A crypt SHA-512 hash (`$6$...`); the node never sees the password itself.
    pub password_hash: PasswordHash,
}

impl Resource for SetAccountPasswordRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.id.clone())
    }
}

pub struct SetAccountPassword;

impl Operation for SetAccountPassword {
    const NAME: &'static str = "set_account_password";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Set the password hash of the account's user (kept locked while the account is suspended)";
    type Family = Account;
    type Request = SetAccountPasswordRequest;
    type Result = AccountResult;

    fn example() -> SetAccountPasswordRequest {
        SetAccountPasswordRequest {
            id: example_ref().id,
            password_hash: format!("$6$saltsalt${}", "a".repeat(86))
                .parse()
                .expect("valid example"),
        }
    }

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

pub struct RemoveAccount;

impl Operation for RemoveAccount {
    const NAME: &'static str = "remove_account";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Remove the account and everything it owns on this node (every family's purge)";
    type Family = Account;
    type Request = AccountRef;
    type Result = AccountResult;

    fn example() -> AccountRef {
        example_ref()
    }

    fn apply(ctx: &mut Ctx, req: &AccountRef) -> Result<AccountResult, OpError> {
        purge_account(ctx, &req.id)?;
        Ok(AccountResult::absent())
    }
}

/// The purge sweep derived from the registry: every family's purge hook for the account, in
/// reverse declaration order (the account family is declared first, so it is purged last).
/// Each hook is idempotent, so a crash anywhere in the sweep is finished by the retry.
pub fn purge_account(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
    for family in crate::registry().families().iter().rev() {
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

/// An account's resource limits (CloudLinux LVE).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetAccountLimitsRequest {
    pub id: Hex32,
    /// CPU, in % of one core (100 = one core).
    pub cpu_percent: CpuPercent,
    /// Physical memory in MiB; 0 = unlimited.
    pub memory_mib: MemoryMiB,
    /// Disk I/O in KiB/s; 0 = unlimited.
    pub io_kib_per_sec: IoKibPerSec,
    /// Processes; 0 = unlimited.
    pub processes: ProcessCount,
    /// Concurrent entry processes (web requests entering the account's LVE); 0 = unlimited.
    pub entry_processes: ProcessCount,
    /// The account's database limits, through MySQL Governor (`dbctl set`). Only where the
    /// governor is installed: elsewhere a request with them fails `unsupported_on_platform`
    /// and changes nothing. Absent: the account has the governor's defaults (`dbctl delete`
    /// when limits were set before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mysql: Option<MysqlLimitsRequest>,
}

/// MySQL Governor limits for one account, the same for each of the governor's periods
/// (current, short, mid, long).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct MysqlLimitsRequest {
    /// CPU of the account's queries, in % of one core.
    pub cpu_percent: CpuPercent,
    /// Reads, in KiB/s.
    pub read_kib_per_sec: GovernorKibPerSec,
    /// Writes, in KiB/s.
    pub write_kib_per_sec: GovernorKibPerSec,
}

// From a JSON object only: serde would also build the struct from an array of its values,
// and a field error must keep its path. The derive stays, as the inherent `remote` functions.
impl<'de> Deserialize<'de> for MysqlLimitsRequest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ObjectOnly;
        impl<'de> serde::de::Visitor<'de> for ObjectOnly {
            type Value = MysqlLimitsRequest;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object {cpu_percent, read_kib_per_sec, write_kib_per_sec}")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<MysqlLimitsRequest, A::Error> {
                MysqlLimitsRequest::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(ObjectOnly)
    }
}

impl Serialize for MysqlLimitsRequest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        MysqlLimitsRequest::serialize(self, s)
    }
}

/// Database limits as `dbctl list --bb` reports them (read and write converted to KiB/s).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MysqlLimits {
    pub cpu_percent: u64,
    pub read_kib_per_sec: u64,
    pub write_kib_per_sec: u64,
}

impl From<GovernorLimits> for MysqlLimits {
    fn from(l: GovernorLimits) -> MysqlLimits {
        MysqlLimits {
            cpu_percent: l.cpu_pct,
            read_kib_per_sec: l.read_kibs,
            write_kib_per_sec: l.write_kibs,
        }
    }
}

impl Resource for SetAccountLimitsRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.id.clone())
    }
}

/// Limits as the platform reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    pub cpu_percent: u64,
    pub memory_mib: u64,
    pub io_kib_per_sec: u64,
    pub processes: u64,
    pub entry_processes: u64,
}

impl From<LveLimits> for Limits {
    fn from(l: LveLimits) -> Limits {
        Limits {
            cpu_percent: l.speed_pct,
            memory_mib: l.pmem_mib,
            io_kib_per_sec: l.io_kibs,
            processes: l.nproc,
            entry_processes: l.entry_procs,
        }
    }
}

/// The account's limits and isolation after the change, read back from the platform.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountLimitsResult {
    pub username: String,
    /// The limits `lvectl list-user` shows for the user.
    pub limits: Option<Limits>,
    /// Whether `cagefsctl --list-enabled` lists the user.
    pub cagefs: Option<bool>,
    /// The database limits `dbctl list --bb` shows for the user, when the request set them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mysql: Option<MysqlLimits>,
}

/// The limits `lvectl list-user` reports for `user`, or `None` when it lists none.
fn lve_limits_of(ctx: &Ctx, user: &str) -> Result<Option<Limits>, OpError> {
    Ok(ctx
        .provider
        .lvectl_list_user()
        .map_err(provider_error)?
        .into_iter()
        .find(|(name, _)| name == user)
        .map(|(_, l)| l.into()))
}

fn cagefs_of(ctx: &Ctx, user: &str) -> Result<bool, OpError> {
    Ok(ctx
        .provider
        .cagefs_enabled_users()
        .map_err(provider_error)?
        .iter()
        .any(|u| u == user))
}

pub struct SetAccountLimits;

impl Operation for SetAccountLimits {
    const NAME: &'static str = "set_account_limits";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Set the account's CPU, memory, I/O, process and entry-process limits (cloudlinux: lvectl; debian: unsupported_on_platform)";
    type Family = Account;
    type Request = SetAccountLimitsRequest;
    type Result = AccountLimitsResult;

    fn example() -> SetAccountLimitsRequest {
        SetAccountLimitsRequest {
            id: example_ref().id,
            cpu_percent: CpuPercent::try_from(100).expect("valid example"),
            memory_mib: MemoryMiB::try_from(1024).expect("valid example"),
            io_kib_per_sec: IoKibPerSec::try_from(1024).expect("valid example"),
            processes: ProcessCount::try_from(100).expect("valid example"),
            entry_processes: ProcessCount::try_from(20).expect("valid example"),
            mysql: Some(MysqlLimitsRequest {
                cpu_percent: CpuPercent::try_from(100).expect("valid example"),
                read_kib_per_sec: GovernorKibPerSec::try_from(1024).expect("valid example"),
                write_kib_per_sec: GovernorKibPerSec::try_from(1024).expect("valid example"),
            }),
        }
    }

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
        if limits != Some(wanted.into()) {
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
        update_row(ctx, &req.id, |row| {
            row["limits"] = json!(Limits::from(wanted));
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
        Some((_, line)) if line.matches(&wanted) => Ok(wanted.into()),
        other => Err(OpError::retryable(
            "limits_not_in_effect",
            format!("dbctl was given the database limits of {user} but lists {other:?}"),
        )),
    }
}

/// Puts an account into its CageFS, or takes it out.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetAccountIsolationRequest {
    pub id: Hex32,
    /// CageFS on (`true`) or off.
    pub cagefs: bool,
}

impl Resource for SetAccountIsolationRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.id.clone())
    }
}

pub struct SetAccountIsolation;

impl Operation for SetAccountIsolation {
    const NAME: &'static str = "set_account_isolation";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Turn the account's CageFS on or off (cloudlinux: cagefsctl; debian: unsupported_on_platform)";
    type Family = Account;
    type Request = SetAccountIsolationRequest;
    type Result = AccountLimitsResult;

    fn example() -> SetAccountIsolationRequest {
        SetAccountIsolationRequest {
            id: example_ref().id,
            cagefs: true,
        }
    }

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

/// What an account uses, and the limits in effect.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountUsageResult {
    pub username: String,
    /// Allocated bytes in the home, hard links counted once.
    pub disk_bytes: u64,
    /// Inodes in the home.
    pub inodes: u64,
    /// False when a bound stopped the walk: the figures are then a lower bound.
    pub complete: bool,
    /// The quotas recorded by `ensure_account` (0: unlimited).
    pub disk_quota_mib: u64,
    pub inode_quota: u64,
    /// The limits recorded in state.db by `set_account_limits`.
    pub limits_recorded: Option<Limits>,
    /// The limits the platform reports (`lvectl list-user`); `None` on debian.
    pub limits_in_effect: Option<Limits>,
    /// Whether the account is in CageFS (`cagefsctl --list-enabled`); `None` on debian.
    pub cagefs: Option<bool>,
    /// The database limits recorded by `set_account_limits` (its `mysql` part).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mysql_limits_recorded: Option<MysqlLimits>,
    /// The database limits MySQL Governor applies to the account's queries (`dbctl list
    /// --bb`: its own, or the defaults); `None` where the governor is not installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mysql_limits_in_effect: Option<MysqlLimits>,
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

pub struct ObserveAccountUsage;

impl Operation for ObserveAccountUsage {
    const NAME: &'static str = "observe_account_usage";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Measure the account's disk and inode use (as the tenant) and report the limits in effect";
    type Family = Account;
    type Request = AccountRef;
    type Result = AccountUsageResult;

    fn example() -> AccountRef {
        example_ref()
    }

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
            disk_quota_mib: row["disk_quota_mib"].as_u64().unwrap_or(0),
            inode_quota: row["inode_quota"].as_u64().unwrap_or(0),
            limits_recorded,
            limits_in_effect,
            cagefs,
        })
    }
}

/// What `rebuild_account` re-derived.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RebuildResult {
    pub username: String,
    /// Whether the home had to be created again.
    pub home_recreated: bool,
    /// The requests replayed, in order: `family/operation/resource id`.
    pub replayed: Vec<String>,
}

pub struct RebuildAccount;

impl Operation for RebuildAccount {
    const NAME: &'static str = "rebuild_account";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Re-derive every file and setting of the account from state.db (the repair for drift)";
    type Family = Account;
    type Request = AccountRef;
    type Result = RebuildResult;

    fn example() -> AccountRef {
        example_ref()
    }

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
    for family in crate::registry().families() {
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
            let entry = crate::registry().operation(op).ok_or_else(|| {
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
            ctx.discard_resource_change();
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
