//! Models of CloudLinux's `lvectl` and `cagefsctl` for the forms the node runs (see
//! `programs/lvectl.rs` and `programs/cagefsctl.rs` for the documented forms).
//!
//! Each model parses the argv like the real tool, refuses what the real tool refuses (an
//! unknown user, a value without its unit, an unknown option) and keeps its state in the
//! sysroot, under `/var/lib/layerone-sim/`, so a test reads back what it set with the same
//! `list-user` / `--list-enabled` forms production uses. Anything else is refused as not
//! modelled, never accepted on faith.

use std::path::PathBuf;

use provider::{Provider, write_atomic};

use super::Outcome;

/// The Sim's record of LVE limits: one `user speed pmem io nproc ep` line per user.
pub const SIM_LVE_FILE: &str = "/var/lib/layerone-sim/lve-limits";
/// The Sim's record of the users in CageFS, one per line.
pub const SIM_CAGEFS_FILE: &str = "/var/lib/layerone-sim/cagefs-enabled";

/// The package defaults `lvectl list-user` prints on its `default` line.
const DEFAULTS: [u64; 5] = [100, 1024, 1024, 100, 20];

pub(super) fn load(provider: &Provider, file: &str) -> Result<(PathBuf, Vec<String>), Outcome> {
    let path = provider.sysconf(file);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok((path, text.lines().map(str::to_owned).collect())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((path, Vec::new())),
        Err(e) => Err(Outcome::fail(
            1,
            format!("layerone sim: {}: {e}\n", path.display()),
        )),
    }
}

pub(super) fn save(path: &std::path::Path, lines: &[String]) -> Result<(), Outcome> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| Outcome::fail(1, format!("layerone sim: {}: {e}\n", parent.display())))?;
    }
    let mut text = lines.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    write_atomic(path, text.as_bytes(), 0o600, None)
        .map_err(|e| Outcome::fail(1, format!("layerone sim: {e}\n")))
}

fn user_exists(provider: &Provider, user: &str) -> Result<bool, Outcome> {
    provider
        .lookup_user(user)
        .map(|u| u.is_some())
        .map_err(|e| Outcome::fail(1, format!("layerone sim: {e}\n")))
}

/// `lvectl set-user USER --speed=N% --pmem=NM --io=N --nproc=N --maxEntryProcs=N
/// [--save-all-parameters]`, `lvectl delete-user USER`, `lvectl list-user`.
pub(crate) fn lvectl(provider: &Provider, args: &[String]) -> Outcome {
    match run_lvectl(provider, args) {
        Ok(outcome) | Err(outcome) => outcome,
    }
}

fn run_lvectl(provider: &Provider, args: &[String]) -> Result<Outcome, Outcome> {
    let (command, rest) = args
        .split_first()
        .ok_or_else(|| Outcome::fail(1, "lvectl: no command given\n"))?;
    let (path, mut lines) = load(provider, SIM_LVE_FILE)?;
    match command.as_str() {
        "list-user" => {
            if !rest.is_empty() {
                return Err(Outcome::fail(
                    1,
                    "layerone sim: lvectl list-user takes no options here\n",
                ));
            }
            let mut out = format!(
                "{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}\n",
                "ID", "SPEED", "PMEM", "VMEM", "EP", "NPROC", "IO", "IOPS"
            );
            let [speed, pmem, io, nproc, ep] = DEFAULTS;
            out.push_str(&format!(
                "{:>8}{speed:>8}{pmem:>8}{:>8}{ep:>8}{nproc:>8}{io:>8}{:>8}\n",
                "default", 0, 1024
            ));
            for line in &lines {
                let f: Vec<&str> = line.split(' ').collect();
                let [user, speed, pmem, io, nproc, ep] = f[..] else {
                    return Err(Outcome::fail(
                        1,
                        format!("layerone sim: bad line {line:?}\n"),
                    ));
                };
                out.push_str(&format!(
                    "{user:>8}{speed:>8}{pmem:>8}{:>8}{ep:>8}{nproc:>8}{io:>8}{:>8}\n",
                    0, 1024
                ));
            }
            Ok(Outcome {
                status: 0,
                stdout: out,
                stderr: String::new(),
            })
        }
        "delete-user" => {
            let [user] = rest else {
                return Err(Outcome::fail(
                    1,
                    "lvectl: delete-user needs one user name\n",
                ));
            };
            if !user_exists(provider, user)? {
                return Err(Outcome::fail(
                    1,
                    format!("lvectl: user {user} does not exist\n"),
                ));
            }
            lines.retain(|l| l.split(' ').next() != Some(user.as_str()));
            save(&path, &lines)?;
            Ok(Outcome::ok())
        }
        "set-user" => {
            let (user, options) = rest
                .split_first()
                .ok_or_else(|| Outcome::fail(1, "lvectl: set-user needs a user name\n"))?;
            if user.starts_with('-') {
                return Err(Outcome::fail(
                    1,
                    format!("lvectl: invalid user name {user}\n"),
                ));
            }
            if !user_exists(provider, user)? {
                return Err(Outcome::fail(
                    1,
                    format!("lvectl: user {user} does not exist\n"),
                ));
            }
            let mut values: [Option<u64>; 5] = [None; 5];
            for option in options {
                if option == "--save-all-parameters" {
                    continue;
                }
                let (name, value) = option.split_once('=').ok_or_else(|| {
                    Outcome::fail(2, format!("lvectl: unrecognized option {option}\n"))
                })?;
                let (slot, number) = match name {
                    "--speed" => (0, value.strip_suffix('%')),
                    "--pmem" => (1, value.strip_suffix('M')),
                    "--io" => (2, Some(value)),
                    "--nproc" => (3, Some(value)),
                    "--maxEntryProcs" => (4, Some(value)),
                    _ => {
                        return Err(Outcome::fail(
                            2,
                            format!("lvectl: unrecognized option {name}\n"),
                        ));
                    }
                };
                let parsed = number
                    .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|n| n.parse::<u64>().ok())
                    .ok_or_else(|| Outcome::fail(1, format!("lvectl: invalid value {option}\n")))?;
                if slot == 0 && parsed == 0 {
                    return Err(Outcome::fail(1, "lvectl: speed must be above 0%\n"));
                }
                values[slot] = Some(parsed);
            }
            let current: Option<[u64; 5]> = lines
                .iter()
                .find(|l| l.split(' ').next() == Some(user.as_str()))
                .and_then(|l| {
                    let n: Vec<u64> = l
                        .split(' ')
                        .skip(1)
                        .filter_map(|v| v.parse().ok())
                        .collect();
                    n.try_into().ok()
                });
            let base = current.unwrap_or(DEFAULTS);
            let merged: Vec<String> = (0..5)
                .map(|i| values[i].unwrap_or(base[i]).to_string())
                .collect();
            lines.retain(|l| l.split(' ').next() != Some(user.as_str()));
            lines.push(format!("{user} {}", merged.join(" ")));
            lines.sort();
            save(&path, &lines)?;
            Ok(Outcome::ok())
        }
        other => Err(Outcome::fail(
            1,
            format!("layerone sim: lvectl {other} is not modelled\n"),
        )),
    }
}

/// `cagefsctl --enable USER`, `cagefsctl --disable USER`, `cagefsctl --list-enabled`.
pub(crate) fn cagefsctl(provider: &Provider, args: &[String]) -> Outcome {
    match run_cagefsctl(provider, args) {
        Ok(outcome) | Err(outcome) => outcome,
    }
}

fn run_cagefsctl(provider: &Provider, args: &[String]) -> Result<Outcome, Outcome> {
    let (path, mut users) = load(provider, SIM_CAGEFS_FILE)?;
    match args {
        [flag] if flag == "--list-enabled" => {
            let mut out = format!("{} enabled user(s)\n", users.len());
            for user in &users {
                out.push_str(user);
                out.push('\n');
            }
            Ok(Outcome {
                status: 0,
                stdout: out,
                stderr: String::new(),
            })
        }
        [flag, user] if flag == "--enable" || flag == "--disable" => {
            if user.starts_with('-') || !user_exists(provider, user)? {
                return Err(Outcome::fail(
                    1,
                    format!("Error: user {user} does not exist\n"),
                ));
            }
            users.retain(|u| u != user);
            if flag == "--enable" {
                users.push(user.clone());
                users.sort();
            }
            save(&path, &users)?;
            Ok(Outcome::ok())
        }
        _ => Err(Outcome::fail(
            1,
            format!("layerone sim: cagefsctl {args:?} is not modelled\n"),
        )),
    }
}
