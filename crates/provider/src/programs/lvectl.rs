//! `lvectl`: CloudLinux's LVE limits tool. The node sets, reads and resets one user's limits.
//!
//! The command forms, as CloudLinux documents them ("LVE Manager / Command-line tools /
//! lvectl"):
//!
//! - `lvectl set-user USER --speed=N% --pmem=NM --io=N --nproc=N --maxEntryProcs=N
//!   --save-all-parameters`: sets the LVE limits of the user's LVE (`set` takes an LVE id,
//!   `set-user` a user name; the node names users). `--speed` is a percentage of one core
//!   (100% = one core), `--pmem` physical memory with a unit suffix (`M`), `--io` the I/O
//!   limit in KB/s, `--nproc` the process count, `--maxEntryProcs` concurrent entry processes
//!   (web requests entering the LVE). 0 means unlimited for memory, I/O and both counts.
//!   `--save-all-parameters` stores every value, even one equal to the package default, so a
//!   later change of the default does not move this user's limits.
//! - `lvectl list-user`: one line per LVE with custom limits, a header naming the columns
//!   (`ID SPEED PMEM VMEM EP NPROC IO IOPS`), the user name in the `ID` column, `default` for
//!   the defaults line; SPEED in %, PMEM in MB, IO in KB/s.
//! - `lvectl delete-user USER`: removes the user's custom limits (back to the defaults).
//!
//! No CloudLinux host is available here: the Sim model (`sim/cloudlinux.rs`) parses exactly
//! these forms and keeps the limits in the sysroot.

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::program::Program;
use crate::provider::Provider;

/// One user's LVE limits, already validated by the caller's types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LveLimits {
    /// CPU, in % of one core.
    pub speed_pct: u64,
    /// Physical memory in MiB; 0 = unlimited.
    pub pmem_mib: u64,
    /// I/O in KiB/s; 0 = unlimited.
    pub io_kibs: u64,
    /// Processes; 0 = unlimited.
    pub nproc: u64,
    /// Entry processes; 0 = unlimited.
    pub entry_procs: u64,
}

impl LveLimits {
    pub(crate) fn push_args(&self, argv: &mut Argv) {
        argv.arg(format!("--speed={}%", self.speed_pct))
            .arg(format!("--pmem={}M", self.pmem_mib))
            .arg(format!("--io={}", self.io_kibs))
            .arg(format!("--nproc={}", self.nproc))
            .arg(format!("--maxEntryProcs={}", self.entry_procs))
            .arg("--save-all-parameters");
    }
}

/// Parses `lvectl list-user` output into (user, limits), skipping the `default` line.
/// Columns are found by their header names, so an added column does not shift the others.
pub fn parse_list_user(text: &str) -> Result<Vec<(String, LveLimits)>, String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines
        .next()
        .ok_or("lvectl list-user printed no header")?
        .split_whitespace()
        .collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or_else(|| format!("lvectl list-user has no {name} column"))
    };
    let (id, speed, pmem, ep, nproc, io) = (
        col("ID")?,
        col("SPEED")?,
        col("PMEM")?,
        col("EP")?,
        col("NPROC")?,
        col("IO")?,
    );
    let mut out = Vec::new();
    for line in lines {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() != header.len() {
            return Err(format!(
                "lvectl list-user line {line:?} does not match the header"
            ));
        }
        if fields[id] == "default" {
            continue;
        }
        let num = |i: usize| {
            fields[i]
                .parse::<u64>()
                .map_err(|_| format!("lvectl list-user: {:?} is not a number", fields[i]))
        };
        out.push((
            fields[id].to_owned(),
            LveLimits {
                speed_pct: num(speed)?,
                pmem_mib: num(pmem)?,
                io_kibs: num(io)?,
                nproc: num(nproc)?,
                entry_procs: num(ep)?,
            },
        ));
    }
    Ok(out)
}

impl Provider {
    /// `lvectl set-user USER --speed=N% --pmem=NM --io=N --nproc=N --maxEntryProcs=N
    /// --save-all-parameters`. `unsupported_on_platform` on Debian, before anything runs.
    pub fn lvectl_set_user(&self, user: &str, limits: &LveLimits) -> Result<(), ProviderError> {
        let mut argv = Argv::new();
        argv.arg("set-user").arg(user);
        limits.push_args(&mut argv);
        self.execute(
            Program::Lvectl,
            &argv,
            None,
            Program::Lvectl.default_timeout(),
        )?;
        Ok(())
    }

    /// `lvectl delete-user USER`: the user's limits back to the defaults.
    pub fn lvectl_delete_user(&self, user: &str) -> Result<(), ProviderError> {
        let mut argv = Argv::new();
        argv.arg("delete-user").arg(user);
        self.execute(
            Program::Lvectl,
            &argv,
            None,
            Program::Lvectl.default_timeout(),
        )?;
        Ok(())
    }

    /// `lvectl list-user`, parsed: the custom limits in effect, per user.
    pub fn lvectl_list_user(&self) -> Result<Vec<(String, LveLimits)>, ProviderError> {
        let mut argv = Argv::new();
        argv.arg("list-user");
        let out = self.execute(
            Program::Lvectl,
            &argv,
            None,
            Program::Lvectl.default_timeout(),
        )?;
        parse_list_user(&String::from_utf8_lossy(&out.stdout)).map_err(|stderr| {
            ProviderError::Failed {
                program: Program::Lvectl,
                status: 0,
                stderr,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_user_is_read_by_column_name() {
        let text = "      ID   SPEED    PMEM    VMEM      EP   NPROC      IO    IOPS\n\
                    \x20default     100    1024       0      20     100    1024    1024\n\
                    \x20  shop1      50     512       0      10      40    2048    1024\n";
        let got = parse_list_user(text).unwrap();
        assert_eq!(
            got,
            vec![(
                "shop1".to_owned(),
                LveLimits {
                    speed_pct: 50,
                    pmem_mib: 512,
                    io_kibs: 2048,
                    nproc: 40,
                    entry_procs: 10
                }
            )]
        );
        assert!(parse_list_user("ID SPEED\nx 1\n").is_err());
        assert!(parse_list_user("ID SPEED PMEM EP NPROC IO\nx 1 2 3 4\n").is_err());
        assert!(parse_list_user("ID SPEED PMEM EP NPROC IO\nx 1 2 3 4 -5\n").is_err());
    }
}
