//! Model of MySQL Governor's `dbctl` for the forms the node runs (`programs/dbctl.rs`).
//!
//! Like the real tool (`dbctl.c`, `dbctl_set.c`), it exits 0 whatever it is given: a wrong
//! command prints the usage line, a `--cpu`/`--read`/`--write` with fewer than four
//! comma-separated values prints `Error format parameter!` and changes nothing. Read and write
//! values take dbctl's suffixes (`k`: KB/s, `m` or none: MB/s) and are kept in bytes, as the
//! governor's XML configuration keeps them; `list --bb` prints them back in bytes. The state
//! is one `user c,s,m,l r,r,r,r w,w,w,w` line per user under `/var/lib/layerone-sim/`.
//! A form the node never runs is refused as not modelled (exit 1), never accepted on faith.

use provider::Provider;

use super::Outcome;
use super::cloudlinux::{load, save};

/// The Sim's record of the governor's per-user limits.
pub const SIM_DBCTL_FILE: &str = "/var/lib/layerone-sim/dbctl-limits";

/// The `default` line `list` prints: cpu %, read and write in bytes per second.
const DEFAULT_CPU: [u64; 4] = [400, 380, 350, 300];
const DEFAULT_IO: u64 = 1024 * 1024 * 1024;

const USAGE: &str = "usage: dbctl command [parameter] [options]\n";

fn printed(text: impl Into<String>) -> Outcome {
    Outcome {
        status: 0,
        stdout: text.into(),
        stderr: String::new(),
    }
}

/// `dbctl set USER --cpu=.. --read=.. --write=..`, `dbctl delete USER`, `dbctl list [--bb]`.
pub(crate) fn dbctl(provider: &Provider, args: &[String]) -> Outcome {
    match run(provider, args) {
        Ok(outcome) | Err(outcome) => outcome,
    }
}

/// Four values for the four periods, read and write converted to bytes.
fn periods(value: &str, io: bool) -> Option<[u64; 4]> {
    let parts: Vec<&str> = value.split(',').collect();
    if parts.len() < 4 {
        return None;
    }
    let mut out = [0u64; 4];
    for (slot, part) in out.iter_mut().zip(&parts) {
        let (digits, unit) = match part.as_bytes().last() {
            Some(b'k') if io => (&part[..part.len() - 1], 1024),
            Some(b'm') if io => (&part[..part.len() - 1], 1024 * 1024),
            _ if io => (*part, 1024 * 1024),
            _ => (*part, 1),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *slot = digits.parse::<u64>().ok()?.checked_mul(unit)?;
    }
    Some(out)
}

fn join(values: &[u64; 4], sep: &str) -> String {
    values
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(sep)
}

fn run(provider: &Provider, args: &[String]) -> Result<Outcome, Outcome> {
    let (path, mut lines) = load(provider, SIM_DBCTL_FILE)?;
    match args {
        [list] if list == "list" => Err(Outcome::fail(
            1,
            "layerone sim: dbctl list without --bb is not modelled\n",
        )),
        [list, bb] if list == "list" && bb == "--bb" => {
            let mut out = String::from(" user\tcpu(%)\tread( B/s)\twrite( B/s)\n");
            out.push_str(&format!(
                "default\t{}\t{}\t{}\n",
                join(&DEFAULT_CPU, "/"),
                join(&[DEFAULT_IO; 4], "/"),
                join(&[DEFAULT_IO; 4], "/")
            ));
            for line in &lines {
                let f: Vec<&str> = line.split(' ').collect();
                let [user, cpu, read, write] = f[..] else {
                    return Err(Outcome::fail(
                        1,
                        format!("layerone sim: bad line {line:?}\n"),
                    ));
                };
                out.push_str(&format!(
                    "{user}\t{}\t{}\t{}\n",
                    cpu.replace(',', "/"),
                    read.replace(',', "/"),
                    write.replace(',', "/")
                ));
            }
            Ok(printed(out))
        }
        [delete, user] if delete == "delete" => {
            if user != "default" {
                lines.retain(|l| l.split(' ').next() != Some(user.as_str()));
                save(&path, &lines)?;
            }
            Ok(Outcome::ok())
        }
        [set, user, options @ ..] if set == "set" && user != "default" => {
            if user.starts_with('-') || options.is_empty() {
                return Ok(printed(USAGE));
            }
            let mut cpu = None;
            let mut read = None;
            let mut write = None;
            for option in options {
                let Some((name, value)) = option.split_once('=') else {
                    return Err(Outcome::fail(
                        1,
                        format!("layerone sim: dbctl option {option} is not modelled\n"),
                    ));
                };
                let (slot, io) = match name {
                    "--cpu" => (&mut cpu, false),
                    "--read" => (&mut read, true),
                    "--write" => (&mut write, true),
                    _ => {
                        return Err(Outcome::fail(
                            1,
                            format!("layerone sim: dbctl option {name} is not modelled\n"),
                        ));
                    }
                };
                match periods(value, io) {
                    Some(values) => *slot = Some(values),
                    // The real tool prints this and exits 0, having changed nothing.
                    None => return Ok(printed("Error format parameter!\n")),
                }
            }
            let current: Option<[[u64; 4]; 3]> = lines
                .iter()
                .find(|l| l.split(' ').next() == Some(user.as_str()))
                .and_then(|l| {
                    let cols: Vec<[u64; 4]> = l
                        .split(' ')
                        .skip(1)
                        .filter_map(|c| {
                            let n: Vec<u64> = c.split(',').filter_map(|v| v.parse().ok()).collect();
                            n.try_into().ok()
                        })
                        .collect();
                    cols.try_into().ok()
                });
            let base = current.unwrap_or([DEFAULT_CPU, [DEFAULT_IO; 4], [DEFAULT_IO; 4]]);
            let merged = [
                cpu.unwrap_or(base[0]),
                read.unwrap_or(base[1]),
                write.unwrap_or(base[2]),
            ];
            lines.retain(|l| l.split(' ').next() != Some(user.as_str()));
            lines.push(format!(
                "{user} {} {} {}",
                join(&merged[0], ","),
                join(&merged[1], ","),
                join(&merged[2], ",")
            ));
            lines.sort();
            save(&path, &lines)?;
            Ok(Outcome::ok())
        }
        _ => Ok(printed(USAGE)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use provider::Platform;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|a| (*a).to_owned()).collect()
    }

    #[test]
    fn a_malformed_set_exits_zero_prints_the_error_and_changes_nothing_like_the_real_tool() {
        let dir = tempfile::tempdir().unwrap();
        let provider = crate::test_provider(Platform::CloudLinux, dir.path());
        // The real dbctl needs four periods; with one it prints an error and exits 0, which
        // is why the node reads every `set` back with `list --bb`.
        let out = dbctl(&provider, &args(&["set", "shop1", "--cpu=150"]));
        assert_eq!(out.status, 0);
        assert_eq!(out.stdout, "Error format parameter!\n");
        let out = dbctl(&provider, &args(&["set", "shop1", "--read=1,2,x,4"]));
        assert_eq!(out.stdout, "Error format parameter!\n");
        let out = dbctl(&provider, &args(&["frobnicate"]));
        assert_eq!((out.status, out.stdout.as_str()), (0, USAGE));
        let out = dbctl(&provider, &args(&["list", "--bb"]));
        assert_eq!(out.stdout.lines().count(), 2, "{}", out.stdout);
        // Suffixes: k is KB/s, none is MB/s; both kept in bytes.
        let out = dbctl(
            &provider,
            &args(&["set", "shop1", "--read=1k,1k,1k,1k", "--write=1,1,1,1"]),
        );
        assert_eq!(out.status, 0);
        let out = dbctl(&provider, &args(&["list", "--bb"]));
        assert!(
            out.stdout.contains(
                "shop1\t400/380/350/300\t1024/1024/1024/1024\t1048576/1048576/1048576/1048576\n"
            ),
            "{}",
            out.stdout
        );
    }
}
