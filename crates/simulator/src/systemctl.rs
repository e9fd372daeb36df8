//! Model of `systemctl show`:
//!
//! - `--property=LoadState,ActiveState -- UNIT`, answering from the sandbox:
//!   `/var/lib/layerone-sim/units/UNIT` holds the unit's ActiveState (`active`, `failed`...);
//!   no file is a unit systemd does not know (`LoadState=not-found`, `ActiveState=inactive`,
//!   exit 0, as systemd answers).
//! - `--property=`[`provider::SLICE_LIMIT_PROPERTIES`]` -- user-UID.slice`: the slice's
//!   resource-control properties as systemd 252 prints them, from the sandbox's drop-ins of
//!   the slice (`/etc/systemd/system/user-UID.slice.d/*.conf`, in name order, a later
//!   assignment replacing an earlier one, an empty one clearing a list), with systemd's
//!   defaults where none is set.
//! - `--property=`[`provider::SLICE_USAGE_PROPERTIES`]` -- user-UID.slice`: every counter
//!   `[not set]`, as systemd prints it for a slice it counts nothing for (a sandbox has no
//!   cgroup).
//!
//! Other verbs and properties are not modelled.

use provider::{Provider, SLICE_LIMIT_PROPERTIES, SLICE_USAGE_PROPERTIES};

use super::Outcome;

/// Where the Sim keeps each unit's state.
pub const SIM_UNITS_DIR: &str = "/var/lib/layerone-sim/units";

pub(crate) fn systemctl(provider: &Provider, args: &[String]) -> Outcome {
    let [verb, property, dashes, unit] = args else {
        return Outcome::fail(
            127,
            format!("layerone sim: systemctl {args:?} is not modelled\n"),
        );
    };
    if verb == "show"
        && *property == format!("--property={SLICE_LIMIT_PROPERTIES}")
        && dashes == "--"
    {
        return slice_show(provider, unit);
    }
    // A sandbox has no cgroup: systemd counts nothing for a slice there.
    if verb == "show"
        && *property == format!("--property={SLICE_USAGE_PROPERTIES}")
        && dashes == "--"
        && unit.starts_with("user-")
        && unit.ends_with(".slice")
    {
        return Outcome {
            status: 0,
            stdout: SLICE_USAGE_PROPERTIES
                .split(',')
                .map(|p| format!("{p}=[not set]\n"))
                .collect(),
            stderr: String::new(),
        };
    }
    if verb != "show" || property != "--property=LoadState,ActiveState" || dashes != "--" {
        return Outcome::fail(
            127,
            format!("layerone sim: systemctl {args:?} is not modelled\n"),
        );
    }
    if unit.contains('/') || unit.starts_with('.') {
        return Outcome::fail(1, format!("Invalid unit name \"{unit}\"\n"));
    }
    let file = provider.sysconf(SIM_UNITS_DIR).join(unit);
    let stdout = match std::fs::read_to_string(file) {
        Ok(state) => format!("LoadState=loaded\nActiveState={}\n", state.trim()),
        Err(_) => "LoadState=not-found\nActiveState=inactive\n".to_owned(),
    };
    Outcome {
        status: 0,
        stdout,
        stderr: String::new(),
    }
}

/// `systemctl show` of a slice's limits, from its drop-ins in the sandbox.
fn slice_show(provider: &Provider, unit: &str) -> Outcome {
    let Some(uid) = unit
        .strip_prefix("user-")
        .and_then(|rest| rest.strip_suffix(".slice"))
        .filter(|uid| uid.parse::<u32>().is_ok())
    else {
        return Outcome::fail(
            127,
            format!("layerone sim: systemctl show of {unit} is not modelled\n"),
        );
    };
    let dir = provider.sysconf(format!("/etc/systemd/system/user-{uid}.slice.d"));
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "conf"))
        .collect();
    files.sort();
    let mut cpu = String::new();
    let (mut high, mut max, mut tasks) = (
        "infinity".to_owned(),
        "infinity".to_owned(),
        "infinity".to_owned(),
    );
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for line in text.lines() {
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            match key {
                "CPUQuota" => cpu = value.to_owned(),
                "MemoryHigh" => high = bytes(value),
                "MemoryMax" => max = bytes(value),
                "TasksMax" => tasks = value.to_owned(),
                "IOReadBandwidthMax" => io_entry(&mut reads, value),
                "IOWriteBandwidthMax" => io_entry(&mut writes, value),
                _ => {}
            }
        }
    }
    let mut stdout = format!("CPUQuotaPerSecUSec={}\n", cpu_quota(&cpu));
    stdout.push_str(&format!(
        "MemoryHigh={high}\nMemoryMax={max}\nTasksMax={tasks}\n"
    ));
    for entry in &reads {
        stdout.push_str(&format!("IOReadBandwidthMax={entry}\n"));
    }
    for entry in &writes {
        stdout.push_str(&format!("IOWriteBandwidthMax={entry}\n"));
    }
    Outcome {
        status: 0,
        stdout,
        stderr: String::new(),
    }
}

/// `CPUQuota=N%` as `CPUQuotaPerSecUSec` prints it (`1s`, `500ms`, `1.500000s`, `1min 4s`,
/// `infinity`).
fn cpu_quota(value: &str) -> String {
    let Some(percent) = value.strip_suffix('%').and_then(|n| n.parse::<u64>().ok()) else {
        return "infinity".into();
    };
    let usec = percent * 10_000;
    if usec >= 60_000_000 {
        // `format_timespan` from a minute up: `1min 4s`, `1min 500ms`.
        let mut out = format!("{}min", usec / 60_000_000);
        let (s, ms) = ((usec % 60_000_000) / 1_000_000, (usec % 1_000_000) / 1_000);
        if s != 0 {
            out.push_str(&format!(" {s}s"));
        }
        if ms != 0 {
            out.push_str(&format!(" {ms}ms"));
        }
        out
    } else if usec % 1_000_000 == 0 {
        format!("{}s", usec / 1_000_000)
    } else if usec < 1_000_000 && usec % 1_000 == 0 {
        format!("{}ms", usec / 1_000)
    } else {
        format!("{}.{:06}s", usec / 1_000_000, usec % 1_000_000)
    }
}

/// `NM` or `infinity` as systemd shows a memory limit: bytes, or `infinity`.
fn bytes(value: &str) -> String {
    value
        .strip_suffix('M')
        .and_then(|n| n.parse::<u64>().ok())
        .map_or_else(|| "infinity".into(), |mib| (mib * 1024 * 1024).to_string())
}

/// One `IO*BandwidthMax=` assignment: empty clears the list, `PATH BYTES` (or `PATH NK`,
/// where systemd's `K` is 1000 for a bandwidth) adds an entry in bytes.
fn io_entry(list: &mut Vec<String>, value: &str) {
    if value.is_empty() {
        list.clear();
    } else if let Some((path, rate)) = value.rsplit_once(' ') {
        let bytes = match rate.strip_suffix('K') {
            Some(k) => k.parse::<u64>().ok().map(|k| k * 1000),
            None => rate.parse::<u64>().ok(),
        };
        if let Some(bytes) = bytes {
            list.push(format!("{path} {bytes}"));
        }
    }
}
