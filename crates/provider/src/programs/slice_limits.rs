//! A tenant's resource limits on a systemd host without LVE: systemd's resource-control
//! properties on the tenant's slice (`user-<uid>.slice`, where `pam_systemd` puts its SSH
//! sessions), which systemd maps onto whichever cgroup hierarchy the host has.
//!
//! The node writes them as a drop-in of the slice (rendered here from typed numbers), has
//! systemd read it (`systemctl daemon-reload`), and reads them back with `systemctl show`: a
//! limit is reported as systemd holds it, never as the node wrote it. Whether the kernel
//! enforces each one is a property of the host, not of the unit: the controller must be there
//! for systemd to put the limit into a cgroup ([`CgroupControllers`]).

use std::path::{Path, PathBuf};

use crate::error::ProviderError;
use crate::provider::Provider;

/// The properties [`Provider::slice_limits_shown`] asks `systemctl show` for.
pub const SLICE_LIMIT_PROPERTIES: &str =
    "CPUQuotaPerSecUSec,MemoryHigh,MemoryMax,TasksMax,IOReadBandwidthMax,IOWriteBandwidthMax";

/// The counters `systemctl show` reads for a slice's usage.
pub const SLICE_USAGE_PROPERTIES: &str =
    "CPUUsageNSec,MemoryCurrent,TasksCurrent,IOReadBytes,IOWriteBytes";

/// What one tenant's slice has used, as systemd counts it; `None` for each counter systemd
/// does not have (`[not set]`, or `2^64 - 1`: the controller is absent, accounting is off, or
/// nothing of the tenant's runs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SliceUsage {
    /// `CPUUsageNSec`.
    pub cpu_usage_nsec: Option<u64>,
    /// `MemoryCurrent`, bytes.
    pub memory_bytes: Option<u64>,
    /// `TasksCurrent`.
    pub tasks: Option<u64>,
    /// `IOReadBytes`, `IOWriteBytes`.
    pub io_read_bytes: Option<u64>,
    pub io_write_bytes: Option<u64>,
}

impl SliceUsage {
    /// Parses `systemctl show --property=`[`SLICE_USAGE_PROPERTIES`].
    pub fn parse_show(text: &str) -> SliceUsage {
        let counter = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|&n| n != u64::MAX)
        };
        SliceUsage {
            cpu_usage_nsec: counter("CPUUsageNSec"),
            memory_bytes: counter("MemoryCurrent"),
            tasks: counter("TasksCurrent"),
            io_read_bytes: counter("IOReadBytes"),
            io_write_bytes: counter("IOWriteBytes"),
        }
    }
}

/// The limits of one tenant's slice; 0 means unlimited for each.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SliceLimits {
    /// CPU time, in % of one core (`CPUQuota=`).
    pub cpu_percent: u64,
    /// Memory in MiB (`MemoryMax=`; `MemoryHigh=` at nine tenths of it, where the kernel
    /// reclaims and throttles before it kills).
    pub memory_mib: u64,
    /// Reads and writes on the home's device, each in KiB/s (`IOReadBandwidthMax=`,
    /// `IOWriteBandwidthMax=`).
    pub io_kib_per_sec: u64,
    /// Tasks: processes and threads (`TasksMax=`).
    pub tasks: u64,
}

/// The slice of the user with `uid`.
pub fn slice_unit(uid: u32) -> String {
    format!("user-{uid}.slice")
}

/// The node's drop-in of the slice of the user with `uid` (unmapped).
pub fn slice_drop_in(uid: u32) -> PathBuf {
    PathBuf::from(format!(
        "/etc/systemd/system/user-{uid}.slice.d/50-layerone-limits.conf"
    ))
}

/// `MemoryHigh=` for a `MemoryMax=` of `mib` MiB: nine tenths, in whole MiB.
fn memory_high_mib(mib: u64) -> u64 {
    (mib * 9 / 10).max(1)
}

impl SliceLimits {
    /// The drop-in's text. Every limit is written, unlimited ones as systemd's own "no limit"
    /// (an empty `CPUQuota=`, `infinity`), so the drop-in overrides whatever `user-.slice`'s
    /// defaults say (logind's `TasksMax=33%`). `home` is the file whose device the IO limits
    /// apply to (systemd finds the block device behind it).
    pub fn render(&self, account: &str, home: &Path) -> String {
        let mut out = format!(
            "# Managed by layerone node: the limits of account {account}.\n\
             # Changes made here are replaced.\n[Slice]\n"
        );
        if self.cpu_percent == 0 {
            out.push_str("CPUQuota=\n");
        } else {
            out.push_str(&format!("CPUQuota={}%\n", self.cpu_percent));
        }
        if self.memory_mib == 0 {
            out.push_str("MemoryHigh=infinity\nMemoryMax=infinity\n");
        } else {
            out.push_str(&format!(
                "MemoryHigh={}M\nMemoryMax={}M\n",
                memory_high_mib(self.memory_mib),
                self.memory_mib
            ));
        }
        if self.tasks == 0 {
            out.push_str("TasksMax=infinity\n");
        } else {
            out.push_str(&format!("TasksMax={}\n", self.tasks));
        }
        // An empty assignment clears the list; then the home's device, when limited, in bytes
        // per second (systemd reads a bandwidth's `K` as 1000).
        out.push_str("IOReadBandwidthMax=\nIOWriteBandwidthMax=\n");
        if self.io_kib_per_sec != 0 {
            for key in ["IOReadBandwidthMax", "IOWriteBandwidthMax"] {
                out.push_str(&format!(
                    "{key}={} {}\n",
                    home.display(),
                    self.io_kib_per_sec * 1024
                ));
            }
        }
        out
    }

    /// The limits `systemctl show --property=`[`SLICE_LIMIT_PROPERTIES`] reports, in the
    /// request's units; `None` when a property is missing or not in systemd's format,
    /// `MemoryHigh=` is not the node's nine tenths of `MemoryMax=`, or the IO limits are not
    /// one entry each for `home`, equal for reads and writes.
    pub fn parse_show(text: &str, home: &Path) -> Option<SliceLimits> {
        let values = |key: &str| -> Vec<&str> {
            text.lines()
                .filter_map(|l| l.strip_prefix(key)?.strip_prefix('='))
                .filter(|v| !v.is_empty())
                .collect()
        };
        let one = |key: &str| -> Option<&str> {
            let found = values(key);
            match found.as_slice() {
                [value] => Some(*value),
                _ => None,
            }
        };
        let cpu_usec = parse_timespan_usec(one("CPUQuotaPerSecUSec")?)?;
        let cpu_percent = cpu_usec.map_or(0, |usec| usec / 10_000);
        let memory_mib = bytes(one("MemoryMax")?)?.map_or(0, |b| b / (1024 * 1024));
        // `MemoryHigh=` is the node's nine tenths of `MemoryMax=` (none without one): another
        // drop-in that changed it is not the node's shape.
        let high = bytes(one("MemoryHigh")?)?;
        let wanted_high = (memory_mib > 0).then(|| memory_high_mib(memory_mib) * 1024 * 1024);
        (high == wanted_high).then_some(())?;
        let tasks = match one("TasksMax")? {
            "infinity" => 0,
            n => n.parse().ok()?,
        };
        let io = |key: &str| -> Option<u64> {
            match values(key).as_slice() {
                [] => Some(0),
                [entry] => {
                    let (path, rate) = entry.rsplit_once(' ')?;
                    (Path::new(path) == home).then_some(())?;
                    Some(rate.parse::<u64>().ok()? / 1024)
                }
                _ => None,
            }
        };
        let (read, write) = (io("IOReadBandwidthMax")?, io("IOWriteBandwidthMax")?);
        (read == write).then_some(SliceLimits {
            cpu_percent,
            memory_mib,
            io_kib_per_sec: read,
            tasks,
        })
    }
}

/// `infinity`, or a number of bytes.
fn bytes(value: &str) -> Option<Option<u64>> {
    match value {
        "infinity" => Some(None),
        n => n.parse().ok().map(Some),
    }
}

/// A systemd timespan as `systemctl show` prints one (`1s`, `500ms`, `1.500000s`, `2s 500ms`,
/// `infinity`), in microseconds; `None` inside for `infinity`.
fn parse_timespan_usec(value: &str) -> Option<Option<u64>> {
    if value == "infinity" {
        return Some(None);
    }
    let mut total = 0f64;
    for part in value.split_whitespace() {
        let split = part
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(part.len());
        let (number, unit) = part.split_at(split);
        let number: f64 = number.parse().ok()?;
        let scale = match unit {
            "us" | "µs" => 1.0,
            "ms" => 1_000.0,
            "s" | "" => 1_000_000.0,
            "min" => 60_000_000.0,
            _ => return None,
        };
        total += number * scale;
    }
    Some(Some(total.round() as u64))
}

/// Which of the controllers the slice limits need the host lets systemd use: a limit whose
/// controller is absent is accepted by systemd and shown, and not enforced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CgroupControllers {
    pub cpu: bool,
    pub memory: bool,
    pub pids: bool,
    /// `io` on the unified hierarchy, `blkio` on a v1 one.
    pub io: bool,
}

impl Provider {
    /// The controllers of the host's cgroup hierarchies (under the root's `/sys/fs/cgroup`):
    /// the unified hierarchy's `cgroup.controllers` when `/sys/fs/cgroup` is one, else each
    /// v1 hierarchy that is mounted (its `tasks` file is there). A sysroot has none.
    pub fn cgroup_controllers(&self) -> CgroupControllers {
        let base = self.sysconf("/sys/fs/cgroup");
        if let Ok(list) = std::fs::read_to_string(base.join("cgroup.controllers")) {
            let has = |name: &str| list.split_whitespace().any(|c| c == name);
            return CgroupControllers {
                cpu: has("cpu"),
                memory: has("memory"),
                pids: has("pids"),
                io: has("io"),
            };
        }
        let v1 = |name: &str| base.join(name).join("tasks").is_file();
        CgroupControllers {
            cpu: v1("cpu"),
            memory: v1("memory"),
            pids: v1("pids"),
            io: v1("blkio"),
        }
    }

    /// The limits of the slice of `uid` as systemd holds them now, for a home at `home`:
    /// `systemctl show --property=... -- user-<uid>.slice`. `None` when the answer is not in
    /// the shape the node writes (someone else's drop-in mixed in).
    pub fn slice_limits_shown(
        &self,
        uid: u32,
        home: &Path,
    ) -> Result<Option<SliceLimits>, ProviderError> {
        let shown = self.systemd_show(SLICE_LIMIT_PROPERTIES, &slice_unit(uid))?;
        Ok(SliceLimits::parse_show(&shown, home))
    }

    /// The counters of `uid`'s slice: `systemctl show --property=`[`SLICE_USAGE_PROPERTIES`]
    /// `-- user-<uid>.slice`.
    pub fn slice_usage(&self, uid: u32) -> Result<SliceUsage, ProviderError> {
        let shown = self.systemd_show(SLICE_USAGE_PROPERTIES, &slice_unit(uid))?;
        Ok(SliceUsage::parse_show(&shown))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOME: &str = "/home/shop1";

    #[test]
    fn slice_counters_are_read_and_the_unset_ones_are_none() {
        let shown = "CPUUsageNSec=1234567\nMemoryCurrent=[not set]\nTasksCurrent=7\n\
                     IOReadBytes=18446744073709551615\nIOWriteBytes=4096\n";
        assert_eq!(
            SliceUsage::parse_show(shown),
            SliceUsage {
                cpu_usage_nsec: Some(1_234_567),
                memory_bytes: None,
                tasks: Some(7),
                io_read_bytes: None,
                io_write_bytes: Some(4096),
            }
        );
        assert_eq!(SliceUsage::parse_show(""), SliceUsage::default());
    }

    #[test]
    fn a_drop_in_writes_every_limit_and_clears_what_is_unlimited() {
        let limits = SliceLimits {
            cpu_percent: 150,
            memory_mib: 1024,
            io_kib_per_sec: 2048,
            tasks: 100,
        };
        assert_eq!(
            limits.render("a1a1", Path::new(HOME)),
            "# Managed by layerone node: the limits of account a1a1.\n\
             # Changes made here are replaced.\n[Slice]\n\
             CPUQuota=150%\nMemoryHigh=921M\nMemoryMax=1024M\nTasksMax=100\n\
             IOReadBandwidthMax=\nIOWriteBandwidthMax=\n\
             IOReadBandwidthMax=/home/shop1 2097152\nIOWriteBandwidthMax=/home/shop1 2097152\n"
        );
        let none = SliceLimits::default().render("a1a1", Path::new(HOME));
        assert!(none.ends_with(
            "[Slice]\nCPUQuota=\nMemoryHigh=infinity\nMemoryMax=infinity\nTasksMax=infinity\n\
             IOReadBandwidthMax=\nIOWriteBandwidthMax=\n"
        ));
    }

    /// What systemd 252's `systemctl show` prints for such a slice.
    #[test]
    fn systemctl_show_reads_back_in_the_requests_units() {
        let shown = "CPUQuotaPerSecUSec=1.500000s\nMemoryHigh=965738496\nMemoryMax=1073741824\n\
                     TasksMax=100\nIOReadBandwidthMax=/home/shop1 2097152\n\
                     IOWriteBandwidthMax=/home/shop1 2097152\n";
        assert_eq!(
            SliceLimits::parse_show(shown, Path::new(HOME)),
            Some(SliceLimits {
                cpu_percent: 150,
                memory_mib: 1024,
                io_kib_per_sec: 2048,
                tasks: 100,
            })
        );
        let unlimited = "CPUQuotaPerSecUSec=infinity\nMemoryHigh=infinity\nMemoryMax=infinity\n\
                         TasksMax=infinity\nIOReadBandwidthMax=\nIOWriteBandwidthMax=\n";
        assert_eq!(
            SliceLimits::parse_show(unlimited, Path::new(HOME)),
            Some(SliceLimits::default())
        );
        for (spelled, usec) in [
            ("500ms", 500_000),
            ("2s 500ms", 2_500_000),
            ("1s", 1_000_000),
            ("1min 4s", 64_000_000),
            ("1min 500ms", 60_500_000),
        ] {
            assert_eq!(parse_timespan_usec(spelled), Some(Some(usec)), "{spelled}");
        }
        // A `MemoryHigh=` other than the node's nine tenths is not the node's shape either.
        let high = shown.replace("MemoryHigh=965738496", "MemoryHigh=infinity");
        assert_eq!(SliceLimits::parse_show(&high, Path::new(HOME)), None);
        // Another device's limit, or two entries, is not the node's shape.
        let other = shown.replace(
            "IOReadBandwidthMax=/home/shop1",
            "IOReadBandwidthMax=/dev/vdb",
        );
        assert_eq!(SliceLimits::parse_show(&other, Path::new(HOME)), None);
        let missing = shown.replace("TasksMax=100\n", "");
        assert_eq!(SliceLimits::parse_show(&missing, Path::new(HOME)), None);
    }

    #[test]
    fn controllers_come_from_the_unified_list_or_the_mounted_v1_hierarchies() {
        let dir = tempfile::tempdir().unwrap();
        let provider = crate::provider::test_provider(crate::Platform::Debian, dir.path());
        assert_eq!(provider.cgroup_controllers(), CgroupControllers::default());
        let cgroup = dir.path().join("root/sys/fs/cgroup");
        for v1 in ["pids", "cpu,cpuacct", "blkio"] {
            std::fs::create_dir_all(cgroup.join(v1)).unwrap();
            std::fs::write(cgroup.join(v1).join("tasks"), "").unwrap();
        }
        std::os::unix::fs::symlink("cpu,cpuacct", cgroup.join("cpu")).unwrap();
        assert_eq!(
            provider.cgroup_controllers(),
            CgroupControllers {
                cpu: true,
                memory: false,
                pids: true,
                io: true,
            }
        );
        std::fs::write(
            cgroup.join("cgroup.controllers"),
            "cpuset cpu io memory hugetlb\n",
        )
        .unwrap();
        assert_eq!(
            provider.cgroup_controllers(),
            CgroupControllers {
                cpu: true,
                memory: true,
                pids: false,
                io: true,
            }
        );
    }
}
