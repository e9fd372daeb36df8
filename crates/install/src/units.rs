//! The node's systemd units, kept in the repository under `packaging/systemd/` and compiled
//! in, so the installer writes byte for byte what the packages ship; and the checks for what
//! could override them without the installer noticing: a copy of a unit in `/etc` or `/run`
//! that shadows the template, a mask, or a drop-in setting a key the node's unit sets.

use std::collections::BTreeSet;
use std::path::Path;

use crate::config::RunnerMode;
use crate::paths;

/// Every unit the installer writes, with its text.
pub const UNITS: &[(&str, &str)] = &[
    (
        "layerone-api.service",
        include_str!("../../../packaging/systemd/layerone-api.service"),
    ),
    (
        "layerone-runner.service",
        include_str!("../../../packaging/systemd/layerone-runner.service"),
    ),
    (
        "layerone-runner.timer",
        include_str!("../../../packaging/systemd/layerone-runner.timer"),
    ),
    (
        "layerone-runner.path",
        include_str!("../../../packaging/systemd/layerone-runner.path"),
    ),
    (
        "layerone-runner-watch.service",
        include_str!("../../../packaging/systemd/layerone-runner-watch.service"),
    ),
    (
        "layerone-renew.service",
        include_str!("../../../packaging/systemd/layerone-renew.service"),
    ),
    (
        "layerone-renew.timer",
        include_str!("../../../packaging/systemd/layerone-renew.timer"),
    ),
];

pub const API_UNIT: &str = "layerone-api.service";

/// The units to enable for `mode`; the other runner trigger's units are disabled.
pub fn enabled_for(mode: RunnerMode) -> (&'static [&'static str], &'static [&'static str]) {
    match mode {
        RunnerMode::Timer => (
            &[
                API_UNIT,
                "layerone-runner.timer",
                "layerone-runner.path",
                "layerone-renew.timer",
            ],
            &["layerone-runner-watch.service"],
        ),
        RunnerMode::Watch => (
            &[
                API_UNIT,
                "layerone-runner-watch.service",
                "layerone-renew.timer",
            ],
            &["layerone-runner.timer", "layerone-runner.path"],
        ),
    }
}

/// The keys a unit sets, in any section (`ExecStart`, `ProtectSystem`...): a drop-in setting
/// one of them overrides what the node needs.
pub fn keys_of(unit_text: &str) -> BTreeSet<String> {
    unit_text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with(['#', ';', '[']))
        .filter_map(|l| Some(l.split_once('=')?.0.trim().to_owned()))
        .collect()
}

/// Something found around a unit that the installer reports rather than changes: the
/// operator may have put it there on purpose, and removing it would be a surprise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnitFinding {
    /// A unit file of the same name in `/etc` or `/run`, which systemd loads instead of the
    /// template the installer writes.
    Shadowed { unit: String, path: String },
    /// The unit is masked (linked to /dev/null).
    Masked { unit: String, path: String },
    /// A drop-in that sets keys the node's unit sets.
    DropIn {
        unit: String,
        path: String,
        keys: Vec<String>,
    },
}

impl std::fmt::Display for UnitFinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UnitFinding::Shadowed { unit, path } => write!(
                f,
                "{path} shadows the {unit} the installer writes: systemd runs that copy instead"
            ),
            UnitFinding::Masked { unit, path } => write!(f, "{unit} is masked by {path}"),
            UnitFinding::DropIn { unit, path, keys } => {
                write!(f, "drop-in {path} overrides {} of {unit}", keys.join(", "))
            }
        }
    }
}

/// Looks for shadowing copies, masks and overriding drop-ins of every unit, under `root`
/// (already the mapped root; `map` maps a system path under it).
pub fn findings(map: &dyn Fn(&str) -> std::path::PathBuf) -> Vec<UnitFinding> {
    let mut out = Vec::new();
    for (unit, text) in UNITS {
        for dir in paths::SHADOWING_UNIT_DIRS {
            let system_path = format!("{dir}/{unit}");
            let path = map(&system_path);
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let masked = meta.file_type().is_symlink()
                && std::fs::read_link(&path).is_ok_and(|t| t == Path::new("/dev/null"));
            let unit = (*unit).to_owned();
            out.push(if masked {
                UnitFinding::Masked {
                    unit,
                    path: system_path,
                }
            } else {
                UnitFinding::Shadowed {
                    unit,
                    path: system_path,
                }
            });
        }
        let ours = keys_of(text);
        for dir in paths::DROP_IN_DIRS {
            let drop_dir = format!("{dir}/{unit}.d");
            let Ok(entries) = std::fs::read_dir(map(&drop_dir)) else {
                continue;
            };
            let mut names: Vec<String> = entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.ends_with(".conf"))
                .collect();
            names.sort();
            for name in names {
                let system_path = format!("{drop_dir}/{name}");
                let text = std::fs::read_to_string(map(&system_path)).unwrap_or_default();
                let keys: Vec<String> = keys_of(&text).intersection(&ours).cloned().collect();
                if !keys.is_empty() {
                    out.push(UnitFinding::DropIn {
                        unit: (*unit).to_owned(),
                        path: system_path,
                        keys,
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_unit_is_hardened() {
        let api = UNITS.iter().find(|(n, _)| *n == API_UNIT).unwrap().1;
        for line in [
            "NoNewPrivileges=yes",
            "ProtectSystem=strict",
            "ReadWritePaths=/var/lib/layerone/inbox /var/lib/layerone/blobs/in /var/lib/layerone/fleet",
            "CapabilityBoundingSet=\n",
            "PrivateTmp=yes",
            "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
            "User=layerone-api",
            "EnvironmentFile=/etc/layerone/layerone.env",
        ] {
            assert!(api.contains(line), "layerone-api.service lacks {line:?}");
        }
        // ReadWritePaths appears once: nothing else is writable.
        assert_eq!(api.matches("ReadWritePaths=").count(), 1);
    }

    #[test]
    fn every_unit_reads_the_derived_environment_or_triggers_one_that_does() {
        for (name, text) in UNITS {
            if *name == "layerone-renew.service" {
                // It runs `layerone install`, which reads the configuration itself.
                assert!(text.contains("ExecStart=/usr/bin/layerone install\n"));
            } else if name.ends_with(".service") {
                assert!(
                    text.contains("EnvironmentFile=/etc/layerone/layerone.env"),
                    "{name}"
                );
            } else {
                let service = name.rsplit_once('.').unwrap().0;
                assert!(text.contains(&format!("Unit={service}.service")), "{name}");
            }
        }
    }
}
