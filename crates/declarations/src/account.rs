//! The `account` family's declarations: a tenant's system user, its password, suspension
//! (of the user and of what the tenant serves), limits, isolation, usage and rebuild, and its
//! removal (the purge sweep of every family).
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::account`.

use registry::types::{
    CpuPercent, GovernorKibPerSec, Hex32, Inodes, IoKibPerSec, MemoryMiB, MiB, PasswordHash,
    Presence, ProcessCount, Shell, Username,
};
pub use registry::types::QuotaMechanism;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::declare::{family, impl_resource, operation};
use crate::example;
pub use crate::resource::AccountRef;

family! {
    pub struct Account {
        name: "account",
        module: Core,
        drift: {
            /// The account's user is not in passwd (or no longer carries the node's marker).
            USER_MISSING = "user_missing",
            /// The account's home is gone.
            HOME_MISSING = "home_missing",
            /// The drop-in of the account's systemd slice, which carries its limits on
            /// `debian`, is gone.
            SLICE_LIMITS_MISSING = "slice_limits_missing",
            /// The slice's drop-in is not what state.db derives.
            SLICE_LIMITS_DIFFERS = "slice_limits_differs",
        },
    }
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
    /// Disk quota in MiB (0, the default: unlimited, accepted on every node). Enforced by the
    /// file system of `/home`: a btrfs qgroup limit on the home's subvolume, or a hard user
    /// quota where `/home` has user quotas on; where nothing can enforce it, a quota other
    /// than 0 fails `quota_unsupported`, naming this field and the file system.
    #[serde(default = "unlimited_mib")]
    pub disk_quota_mib: MiB,
    /// Inode quota (0, the default: unlimited). Enforced by user quotas only: btrfs qgroups
    /// limit bytes, so on btrfs (as where nothing enforces quotas) an inode quota other than
    /// 0 fails `quota_unsupported`.
    #[serde(default = "unlimited_inodes")]
    pub inode_quota: Inodes,
}

/// An account's quota as the kernel reports it, read back after the change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuotaStatus {
    pub mechanism: QuotaMechanism,
    /// True only when the kernel holds a limit on the home's bytes or inodes; an unlimited
    /// quota, or one only recorded, is not enforced.
    pub enforced: bool,
    /// The byte limit read back (`null`: none).
    pub limit_bytes: Option<u64>,
    /// The inode limit read back (`null`: none; always on btrfs).
    pub limit_inodes: Option<u64>,
    /// Bytes the kernel counts against the quota (`null` where it counts none: mechanism
    /// `none`).
    pub used_bytes: Option<u64>,
    /// Inodes the kernel counts against the quota (`null` on btrfs and with `none`).
    pub used_inodes: Option<u64>,
}

fn unlimited_mib() -> MiB {
    MiB::try_from(0).expect("0 is within bounds")
}

fn unlimited_inodes() -> Inodes {
    Inodes::try_from(0).expect("0 is within bounds")
}

impl_resource!(owner = id: EnsureAccountRequest);

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
    /// The quota as the kernel holds it (`ensure_account` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota: Option<QuotaStatus>,
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
            quota: None,
        }
    }
}

fn example_account(shell: Shell) -> EnsureAccountRequest {
    EnsureAccountRequest {
        id: example::account(),
        username: example::parse("shop1"),
        shell,
        disk_quota_mib: example::number(10_240),
        inode_quota: example::number(500_000),
    }
}

operation! {
    pub struct EnsureAccount {
        name: "ensure_account",
        kind: Declare,
        family: Account,
        summary: "Create or converge a tenant's system user, group and home",
        request: EnsureAccountRequest,
        result: AccountResult,
        example: example_account(Shell::Bash),
        other_examples: [example_account(Shell::Sh)],
    }
}

/// An account's suspension after the change, and what the account's tenant is refused
/// now: each list names the account's resources that a client is refused, whether for the
/// account's suspension or their own (a web domain, mailbox or FTP login suspended on its
/// own stays refused when the account is unsuspended).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountSuspensionResult {
    pub username: String,
    /// Whether the account is suspended: its user's password locked and the user expired.
    pub suspended: bool,
    /// The account's web domains whose sites answer 403 (the ACME challenge path excepted).
    pub web_domains: Vec<String>,
    /// The addresses of the account's mailboxes whose logins fail (IMAP, POP3, SMTP AUTH);
    /// mail to them is still delivered.
    pub mailboxes: Vec<String>,
    /// The account's FTP logins that pure-ftpd does not know.
    pub ftp_logins: Vec<String>,
}

operation! {
    pub struct SuspendAccount {
        name: "suspend_account",
        kind: Suspend,
        family: Account,
        summary: "Suspend the account: its user locked (password locked, account expired), its sites answering 403, its mailbox and FTP logins refused (mail still delivered)",
        request: AccountRef,
        result: AccountSuspensionResult,
        example: AccountRef::example(),
    }
}

operation! {
    pub struct UnsuspendAccount {
        name: "unsuspend_account",
        kind: Unsuspend,
        family: Account,
        summary: "Unsuspend the account: its user unlocked, its sites, mailboxes and FTP logins served again but for those suspended on their own",
        request: AccountRef,
        result: AccountSuspensionResult,
        example: AccountRef::example(),
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

operation! {
    pub struct SetAccountPassword {
        name: "set_account_password",
        kind: Set,
        family: Account,
        summary: "Set the password hash of the account's user (kept locked while the account is suspended)",
        request: SetAccountPasswordRequest,
        result: AccountResult,
        example: SetAccountPasswordRequest {
            id: example::account(),
            password_hash: example::parse(&format!("$6$saltsalt${}", "a".repeat(86))),
        },
    }
}

operation! {
    pub struct RemoveAccount {
        name: "remove_account",
        kind: Remove,
        family: Account,
        summary: "Remove the account and everything it owns on this node (every family's purge)",
        request: AccountRef,
        result: AccountResult,
        example: AccountRef::example(),
    }
}

/// An account's resource limits: CloudLinux's LVE on `cloudlinux`, the account's systemd
/// slice (`user-<uid>.slice`) on `debian`.
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
    /// Concurrent entry processes (web requests entering the account's LVE; on `debian` the
    /// PHP requests the account's pools serve at once, their `pm.max_children`); 0 =
    /// unlimited.
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

impl_resource!(
    owner = id: SetAccountPasswordRequest,
    SetAccountLimitsRequest,
    SetAccountIsolationRequest,
);

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

/// Whether the host's kernel has the cgroup controller that enforces each limit of a systemd
/// slice (systemd accepts and shows a limit whose controller the host lacks, and nothing
/// enforces it). It says nothing of what runs in the slice: on `debian` the account's SSH
/// sessions, its cron jobs and its PHP masters do; its FTP sessions (pure-ftpd's) do not, and
/// are bounded by pure-ftpd's per-user bandwidth (`io_kib_per_sec`) and sessions
/// (`entry_processes`) instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnforcedLimits {
    /// The `cpu` controller.
    pub cpu_percent: bool,
    /// The `memory` controller.
    pub memory_mib: bool,
    /// The `io` controller (`blkio` on a v1 hierarchy, which throttles direct IO only).
    pub io_kib_per_sec: bool,
    /// The `pids` controller.
    pub processes: bool,
    /// PHP-FPM's `pm.max_children` of the account's pools: always.
    pub entry_processes: bool,
}

/// The account's limits and isolation after the change, read back from the platform.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountLimitsResult {
    pub username: String,
    /// The limits `lvectl list-user` shows for the user (`cloudlinux`), or `systemctl show`
    /// for its slice (`debian`: `entry_processes` is its pools' `pm.max_children`).
    pub limits: Option<Limits>,
    /// On `debian`, whether this host enforces each limit; absent under LVE, which enforces
    /// them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enforced: Option<EnforcedLimits>,
    /// Whether `cagefsctl --list-enabled` lists the user.
    pub cagefs: Option<bool>,
    /// The database limits `dbctl list --bb` shows for the user, when the request set them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mysql: Option<MysqlLimits>,
}

operation! {
    pub struct SetAccountLimits {
        name: "set_account_limits",
        kind: Set,
        family: Account,
        summary: "Set the account's CPU, memory, I/O, process and entry-process limits (cloudlinux: lvectl; debian: its systemd slice, and its PHP pools' children; both: its FTP logins' bandwidth and sessions)",
        request: SetAccountLimitsRequest,
        result: AccountLimitsResult,
        example: example_limits(false),
        other_examples: [example_limits(true)],
    }
}

/// The example account's limits, with database limits (MySQL Governor's) when `mysql`.
fn example_limits(mysql: bool) -> SetAccountLimitsRequest {
    SetAccountLimitsRequest {
        id: example::account(),
        cpu_percent: example::number(100),
        memory_mib: example::number(1024),
        io_kib_per_sec: example::number(1024),
        processes: example::number(100),
        entry_processes: example::number(20),
        mysql: mysql.then(|| MysqlLimitsRequest {
            cpu_percent: example::number(100),
            read_kib_per_sec: example::number(1024),
            write_kib_per_sec: example::number(1024),
        }),
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

operation! {
    pub struct SetAccountIsolation {
        name: "set_account_isolation",
        kind: Set,
        family: Account,
        summary: "Turn the account's CageFS on or off (cloudlinux: cagefsctl; debian: unsupported_on_platform)",
        request: SetAccountIsolationRequest,
        result: AccountLimitsResult,
        example: SetAccountIsolationRequest {
            id: example::account(),
            cagefs: true,
        },
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
    /// The quotas recorded by `ensure_account` (0: unlimited); what the kernel enforces and
    /// counts is `quota`.
    pub disk_quota_mib: u64,
    pub inode_quota: u64,
    /// The home's quota as the kernel reports it now.
    pub quota: QuotaStatus,
    /// The limits recorded in state.db by `set_account_limits`.
    pub limits_recorded: Option<Limits>,
    /// The limits the platform reports: `lvectl list-user` (`cloudlinux`); `systemctl show`
    /// of the account's slice once limits were set (`debian`, with the recorded entry
    /// processes, which its pools carry).
    pub limits_in_effect: Option<Limits>,
    /// Whether the account is in CageFS (`cagefsctl --list-enabled`); `None` on debian.
    pub cagefs: Option<bool>,
    /// What the account's slice (`user-<uid>.slice`) has used, as systemd counts it
    /// (`debian`; `None` on `cloudlinux`, whose LVE counts for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice: Option<SliceUsage>,
    /// The database limits recorded by `set_account_limits` (its `mysql` part).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mysql_limits_recorded: Option<MysqlLimits>,
    /// The database limits MySQL Governor applies to the account's queries (`dbctl list
    /// --bb`: its own, or the defaults); `None` where the governor is not installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mysql_limits_in_effect: Option<MysqlLimits>,
}

operation! {
    pub struct ObserveAccountUsage {
        name: "observe_account_usage",
        kind: Observe,
        lane: Long,
        family: Account,
        summary: "Measure the account's disk and inode use (as the tenant) and report the limits and quota in effect, and on debian its slice's counters",
        request: AccountRef,
        result: AccountUsageResult,
        example: AccountRef::example(),
    }
}

/// What an account's slice has used, as `systemctl show` reads systemd's counters for it; each
/// `null` where this host's systemd does not count it (the cgroup controller is absent, or
/// nothing of the account's runs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SliceUsage {
    /// CPU time used (`CPUUsageNSec`), nanoseconds.
    pub cpu_usage_nsec: Option<u64>,
    /// Memory in use now (`MemoryCurrent`), bytes.
    pub memory_bytes: Option<u64>,
    /// Tasks now (`TasksCurrent`).
    pub tasks: Option<u64>,
    /// Bytes read (`IOReadBytes`).
    pub io_read_bytes: Option<u64>,
    /// Bytes written (`IOWriteBytes`).
    pub io_write_bytes: Option<u64>,
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

operation! {
    pub struct RebuildAccount {
        name: "rebuild_account",
        kind: Action,
        family: Account,
        summary: "Re-derive every file and setting of the account from state.db (the repair for drift)",
        request: AccountRef,
        result: RebuildResult,
        example: AccountRef::example(),
    }
}
