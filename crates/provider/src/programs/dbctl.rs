//! `dbctl`: CloudLinux MySQL Governor's configuration tool. The node sets, reads and resets one
//! user's database limits, on the `cloudlinux` profile and only where the governor is
//! installed (`/usr/sbin/dbctl` exists: the `governor-mysql` package).
//!
//! The command forms, as CloudLinux documents them ("Command-line tools / MySQL Governor /
//! dbctl") and as `dbctl.c` / `dbctl_set.c` of the governor's sources parse them:
//!
//! - `dbctl set USER --cpu=C,C,C,C --read=Rk,Rk,Rk,Rk --write=Wk,Wk,Wk,Wk`: the user's limits
//!   for the current, short, mid and long periods. `--cpu` is in % of one core; `--read` and
//!   `--write` are MB/s unless a value carries a unit suffix (`k` is KB/s). The sources refuse
//!   fewer than four comma-separated values ("Error format parameter!"); the node always
//!   passes four, the same value for every period.
//! - `dbctl list --bb`: a header line, then `NAME\tC/S/M/L\tR/R/R/R\tW/W/W/W` per user (the
//!   `default` line first), read and write in bytes per second.
//! - `dbctl delete USER`: removes the user's limits (back to the defaults).
//!
//! dbctl exits 0 even when it refuses its arguments (it prints the usage or an error line
//! on stdout), so the node never trusts the exit status alone: every `set` is read back with
//! `list --bb` by the caller. No CloudLinux host is available here: the Sim model
//! (`sim/dbctl.rs`) parses exactly these forms, exits 0 like the real tool, and keeps the
//! limits in the sysroot.

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::program::Program;
use crate::provider::Provider;

/// One user's MySQL Governor limits, already validated by the caller's types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GovernorLimits {
    /// CPU, in % of one core.
    pub cpu_pct: u64,
    /// Read, in KiB/s (passed with dbctl's `k` suffix).
    pub read_kibs: u64,
    /// Write, in KiB/s.
    pub write_kibs: u64,
}

impl GovernorLimits {
    fn four(value: String) -> String {
        [value.as_str(); 4].join(",")
    }

    pub(crate) fn push_args(&self, argv: &mut Argv) {
        argv.arg(format!("--cpu={}", Self::four(self.cpu_pct.to_string())))
            .arg(format!(
                "--read={}",
                Self::four(format!("{}k", self.read_kibs))
            ))
            .arg(format!(
                "--write={}",
                Self::four(format!("{}k", self.write_kibs))
            ));
    }
}

/// One line of `dbctl list --bb`: the current-period limits (cpu %, read and write in bytes
/// per second).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GovernorListed {
    pub cpu_pct: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

impl GovernorListed {
    /// Whether this line shows exactly `limits` for every period's first value.
    pub fn matches(&self, limits: &GovernorLimits) -> bool {
        self.cpu_pct == limits.cpu_pct
            && self.read_bytes == limits.read_kibs * 1024
            && self.write_bytes == limits.write_kibs * 1024
    }
}

/// Parses `dbctl list --bb` into (name, current limits), `default` included.
pub fn parse_list(text: &str) -> Result<Vec<(String, GovernorListed)>, String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header = lines.next().ok_or("dbctl list printed nothing")?;
    if !header.trim_start().starts_with("user") {
        return Err(format!("dbctl list: unexpected header {header:?}"));
    }
    let current = |field: &str| -> Result<u64, String> {
        let first = field.split('/').next().unwrap_or_default();
        first
            .parse::<u64>()
            .map_err(|_| format!("dbctl list: {field:?} is not a list of numbers"))
    };
    lines
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [name, cpu, read, write] = fields[..] else {
                return Err(format!("dbctl list: line {line:?} has not four columns"));
            };
            Ok((
                name.to_owned(),
                GovernorListed {
                    cpu_pct: current(cpu)?,
                    read_bytes: current(read)?,
                    write_bytes: current(write)?,
                },
            ))
        })
        .collect()
}

impl Provider {
    /// Whether MySQL Governor is installed: `dbctl` exists on this platform and node (under
    /// Sim, in the sysroot). Always false on Debian.
    pub fn mysql_governor_present(&self) -> bool {
        self.program_installed(Program::Dbctl)
    }

    /// `dbctl set USER --cpu=C,C,C,C --read=Rk,Rk,Rk,Rk --write=Wk,Wk,Wk,Wk`.
    /// `unsupported_on_platform` on Debian, before anything runs.
    pub fn dbctl_set(&self, user: &str, limits: &GovernorLimits) -> Result<(), ProviderError> {
        let mut argv = Argv::new();
        argv.arg("set").arg(user);
        limits.push_args(&mut argv);
        self.execute(
            Program::Dbctl,
            &argv,
            None,
            Program::Dbctl.default_timeout(),
        )?;
        Ok(())
    }

    /// `dbctl delete USER`: the user's limits back to the defaults.
    pub fn dbctl_delete(&self, user: &str) -> Result<(), ProviderError> {
        let mut argv = Argv::new();
        argv.arg("delete").arg(user);
        self.execute(
            Program::Dbctl,
            &argv,
            None,
            Program::Dbctl.default_timeout(),
        )?;
        Ok(())
    }

    /// `dbctl list --bb`, parsed: every listed user's current limits, `default` included.
    pub fn dbctl_list(&self) -> Result<Vec<(String, GovernorListed)>, ProviderError> {
        let mut argv = Argv::new();
        argv.arg("list").arg("--bb");
        let out = self.execute(
            Program::Dbctl,
            &argv,
            None,
            Program::Dbctl.default_timeout(),
        )?;
        parse_list(&String::from_utf8_lossy(&out.stdout)).map_err(|stderr| ProviderError::Failed {
            program: Program::Dbctl,
            status: 0,
            stderr,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_is_read_from_the_current_period_of_each_column() {
        let text = " user\tcpu(%)\tread( B/s)\twrite( B/s)\n\
                    default\t400/380/350/300\t1048576000/1048576000/1048576000/1048576000\t524288000/524288000/524288000/524288000\n\
                    shop1\t150/150/150/150\t2097152/2097152/2097152/2097152\t1048576/1048576/1048576/1048576\n";
        let got = parse_list(text).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].0, "shop1");
        assert!(got[1].1.matches(&GovernorLimits {
            cpu_pct: 150,
            read_kibs: 2048,
            write_kibs: 1024
        }));
        assert!(parse_list("").is_err());
        assert!(parse_list("usage: dbctl command [parameter] [options]\n").is_err());
        assert!(parse_list(" user\tcpu(%)\n shop1\t1/1/1/1\t<1/1/1/1\t1/1/1/1\n").is_err());
    }

    #[test]
    fn set_passes_four_periods_with_the_kib_suffix() {
        let mut argv = Argv::new();
        GovernorLimits {
            cpu_pct: 150,
            read_kibs: 2048,
            write_kibs: 1024,
        }
        .push_args(&mut argv);
        assert_eq!(
            argv.for_audit(),
            [
                "--cpu=150,150,150,150",
                "--read=2048k,2048k,2048k,2048k",
                "--write=1024k,1024k,1024k,1024k"
            ]
        );
    }
}
