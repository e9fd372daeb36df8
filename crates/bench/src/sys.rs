//! What the benchmark reads from `/proc` and `/sys`: the machine it runs on, the disk under
//! its temporary directory, and the memory and CPU time of the node's processes.

use std::path::Path;
use std::time::Duration;

/// A `kB` line of `/proc/<pid>/status` (`VmRSS:`, `VmHWM:`), in KiB.
pub fn status_kib(pid: u32, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(key))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// CPU time used so far by every thread of `pid` (from `schedstat`, in nanoseconds), and its
/// threads' voluntary plus involuntary context switches: how often it woke up.
pub fn cpu_and_switches(pid: u32) -> (Duration, u64) {
    let mut cpu = 0u64;
    let mut switches = 0u64;
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in tasks.flatten() {
            let dir = task.path();
            if let Some(ns) = std::fs::read_to_string(dir.join("schedstat"))
                .ok()
                .and_then(|t| t.split_whitespace().next()?.parse::<u64>().ok())
            {
                cpu += ns;
            }
            if let Ok(status) = std::fs::read_to_string(dir.join("status")) {
                for line in status.lines() {
                    if let Some(v) = line
                        .strip_prefix("voluntary_ctxt_switches:")
                        .or_else(|| line.strip_prefix("nonvoluntary_ctxt_switches:"))
                    {
                        switches += v.trim().parse::<u64>().unwrap_or(0);
                    }
                }
            }
        }
    }
    (Duration::from_nanos(cpu), switches)
}

/// The 1, 5 and 15 minute load averages.
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|t| t.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "?".into())
}

/// The mount holding `dir`: its mount point, device, filesystem type and options, and whether
/// the block device says it is rotational.
pub fn disk_of(dir: &Path) -> String {
    let Ok(dir) = dir.canonicalize() else {
        return "?".into();
    };
    let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return "?".into();
    };
    // Fields: id parent major:minor root mountpoint options ... - fstype source superoptions
    let best = text
        .lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let left: Vec<&str> = left.split_whitespace().collect();
            let right: Vec<&str> = right.split_whitespace().collect();
            let point = *left.get(4)?;
            dir.starts_with(point).then(|| {
                (
                    point.to_owned(),
                    right.first().copied().unwrap_or("?").to_owned(),
                    right.get(1).copied().unwrap_or("?").to_owned(),
                    left.get(5).copied().unwrap_or("?").to_owned(),
                )
            })
        })
        .max_by_key(|(point, ..)| point.len());
    let Some((point, fstype, source, options)) = best else {
        return "?".into();
    };
    let device = source.rsplit('/').next().unwrap_or_default();
    let base = device.trim_end_matches(|c: char| c.is_ascii_digit());
    let rotational = [device, base]
        .iter()
        .find_map(|d| std::fs::read_to_string(format!("/sys/block/{d}/queue/rotational")).ok())
        .map(|r| match r.trim() {
            "0" => "non-rotational",
            "1" => "rotational",
            _ => "rotational: ?",
        })
        .unwrap_or("rotational: ?");
    format!("{source} ({fstype}, {options}, mounted on {point}, {rotational})")
}
