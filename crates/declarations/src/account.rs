//! The `account` family's declarations: a tenant's system user, its password, suspension,
//! limits, isolation, usage and rebuild, and its removal (the purge sweep of every family).
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::account`.

use registry::types::{
    CpuPercent, GovernorKibPerSec, Hex32, Inodes, IoKibPerSec, MemoryMiB, MiB, PasswordHash,
    Presence, ProcessCount, Shell, Username,
};
use registry::{Family, Module, Operation, Owner, Resource, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub struct Account;

impl Family for Account {
    const NAME: &'static str = "account";
    const MODULE: Module = Module::Core;
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
    /// The result of an account that is gone.
    pub fn absent() -> Self {
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
    /// True only when everything beneath the home was measured. False when a bound stopped
    /// the walk or anything was unreadable (`unreadable_dirs`, `unreadable_entries`): the
    /// figures are then a lower bound.
    pub complete: bool,
    /// Directories the tenant made unreadable to itself (mode 000): what is inside them is
    /// not in the figures.
    #[serde(default)]
    pub unreadable_dirs: u64,
    /// Entries listed but not measured (their directory lost its search permission).
    #[serde(default)]
    pub unreadable_entries: u64,
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

pub struct ObserveAccountUsage;

impl Operation for ObserveAccountUsage {
    const NAME: &'static str = "observe_account_usage";
    const SCOPE: Scope = Scope::Tenant;
    const LANE: registry::Lane = registry::Lane::Long;
    const SUMMARY: &'static str =
        "Measure the account's disk and inode use (as the tenant) and report the limits in effect";
    type Family = Account;
    type Request = AccountRef;
    type Result = AccountUsageResult;

    fn example() -> AccountRef {
        example_ref()
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
}
