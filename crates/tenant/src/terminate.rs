//! `TerminateProcesses`: no process of a tenant outlives its account (ARCHITECTURE.md invariant 15).
//!
//! Before root deletes a tenant's user, the worker, already dropped to the tenant's uid, kills
//! every other process of that uid: `kill(-1, SIGKILL)` signals every process the caller may
//! signal (those whose real or saved uid is the caller's) except the caller itself, in one
//! pass the kernel makes under its task list lock, so a process forking at that moment either
//! has its child signalled too or sees its fork fail with the signal pending. That is repeated,
//! with a short pause, until a scan of `/proc` finds no process of the uid still running, within
//! a bound on rounds and time; past it the request fails `tenant_processes_remain` (a process
//! whose only tie to the uid is its effective uid, which the tenant may not signal, or one
//! stuck in the kernel), and the account's removal is retried instead of deleting a user that
//! still runs.
//!
//! Doing it as the tenant, not as root, is what makes it safe: the kernel lets the worker
//! signal the tenant's processes and nothing else, so a wrong pid, a pid reused, or a
//! process that changed identity between the scan and the kill can never turn into root
//! killing someone else's process. The caller must therefore be the dropped worker: the
//! request is refused unless the process runs as `uid` (real, effective and saved), holds no
//! capability, has `no_new_privs` and the worker's `RLIMIT_NPROC` of 0. That keeps the
//! in-process path of a non-root Sim (which has no drop) from ever signalling its own user's
//! processes.
//!
//! The caller makes sure nothing restarts the tenant's processes meanwhile: its logins are
//! locked, its crontab and PHP pools are gone. Zombies are not waited for: they run nothing
//! and hold nothing but a pid, their parent (root's FPM master, cron) collects them, and
//! `userdel` does not count them either.

use std::time::{Duration, Instant};

use crate::protocol::{ErrorCode, TenantError, Terminated};
use crate::sandbox;

/// The most kill-and-scan rounds one request makes.
pub const MAX_ROUNDS: u32 = 200;

/// The longest one request keeps trying (below the provider's deadline for a short request).
pub const BUDGET: Duration = Duration::from_secs(5);

/// The longest pause between two rounds; the first is 1 ms and each doubles.
const MAX_PAUSE: Duration = Duration::from_millis(50);

/// Kills every other process of `uid` until none runs. See the module documentation.
pub fn terminate_processes(uid: u32) -> Result<Terminated, TenantError> {
    check_dropped(uid)?;
    let me = std::process::id();
    let first = scan(uid, me)?;
    let found = first.running.len() as u32;
    if first.running.is_empty() {
        return Ok(Terminated {
            found,
            rounds: 0,
            zombies: first.zombies,
        });
    }
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    let mut last = first;
    for round in 1..=MAX_ROUNDS {
        // SAFETY: kill with a constant signal. -1 is every process this one may signal,
        // itself excepted; the worker runs as the tenant, so that is the tenant's.
        if unsafe { libc::kill(-1, libc::SIGKILL) } != 0 {
            let err = std::io::Error::last_os_error();
            // ESRCH: nothing left to signal (the scan below says so too).
            if err.raw_os_error() != Some(libc::ESRCH) {
                return Err(TenantError::new(
                    ErrorCode::Io,
                    format!("kill(-1, SIGKILL): {err}"),
                ));
            }
        }
        last = scan(uid, me)?;
        if last.running.is_empty() {
            return Ok(Terminated {
                found,
                rounds: round,
                zombies: last.zombies,
            });
        }
        if started.elapsed() >= BUDGET {
            break;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(MAX_PAUSE);
    }
    let pids: Vec<String> = last.running.iter().take(8).map(u32::to_string).collect();
    Err(TenantError::new(
        ErrorCode::ProcessesRemain,
        format!(
            "{} process(es) of uid {uid} still run after {} ms of kill(-1, SIGKILL): {}",
            last.running.len(),
            started.elapsed().as_millis(),
            pids.join(", ")
        ),
    ))
}

/// Refuses to run anywhere but in a worker dropped to `uid`.
fn check_dropped(uid: u32) -> Result<(), TenantError> {
    let refuse = |why: String| {
        TenantError::new(
            ErrorCode::DropFailed,
            format!("terminate_processes runs only in the worker dropped to uid {uid}: {why}"),
        )
    };
    let (uids, _) = sandbox::res_ids();
    if uid == 0 || uids != [uid; 3] {
        return Err(refuse(format!("this process runs as {uids:?}")));
    }
    if sandbox::capabilities() != (0, 0) {
        return Err(refuse("this process holds capabilities".into()));
    }
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) } != 1 {
        return Err(refuse("no_new_privs is not set".into()));
    }
    let mut nproc = libc::rlimit {
        rlim_cur: u64::MAX,
        rlim_max: u64::MAX,
    };
    // SAFETY: `nproc` is a valid rlimit for the duration of the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut nproc) } != 0
        || nproc.rlim_max != crate::protocol::limits::NPROC
    {
        return Err(refuse("RLIMIT_NPROC is not the worker's".into()));
    }
    Ok(())
}

/// The processes of a uid a scan of `/proc` found.
#[derive(Debug, Default)]
struct Scan {
    /// Not zombies, sorted.
    running: Vec<u32>,
    zombies: u32,
}

/// Every process but `me` whose real, effective or saved uid is `uid` (what `userdel`
/// counts), from `/proc/PID/status`, which every user may read. A process that exits while
/// it is read is simply gone.
fn scan(uid: u32, me: u32) -> Result<Scan, TenantError> {
    let dir = std::fs::read_dir("/proc")
        .map_err(|e| TenantError::new(ErrorCode::Io, format!("list /proc: {e}")))?;
    let mut found = Scan::default();
    for entry in dir {
        let entry =
            entry.map_err(|e| TenantError::new(ErrorCode::Io, format!("list /proc: {e}")))?;
        let Some(pid) = entry
            .file_name()
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let Some((zombie, uids)) = parse_status(&status) else {
            continue;
        };
        if uids.contains(&uid) {
            if zombie {
                found.zombies += 1;
            } else {
                found.running.push(pid);
            }
        }
    }
    found.running.sort_unstable();
    Ok(found)
}

/// Whether a `/proc/PID/status` is a zombie's (or a dead task's), and its real, effective
/// and saved uids.
fn parse_status(status: &str) -> Option<(bool, [u32; 3])> {
    let mut state = None;
    let mut uids = None;
    for line in status.lines() {
        if let Some(rest) = line.strip_prefix("State:") {
            state = rest.trim_start().chars().next();
        } else if let Some(rest) = line.strip_prefix("Uid:") {
            let ids: Vec<u32> = rest
                .split_whitespace()
                .take(3)
                .map(str::parse)
                .collect::<Result<_, _>>()
                .ok()?;
            uids = Some([*ids.first()?, *ids.get(1)?, *ids.get(2)?]);
        }
    }
    Some((matches!(state?, 'Z' | 'X'), uids?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_files_give_the_state_and_the_three_uids() {
        let running = "Name:\tsleep\nState:\tS (sleeping)\nTgid:\t7\nUid:\t1000\t1001\t1002\t1003\nGid:\t5\t5\t5\t5\n";
        assert_eq!(parse_status(running), Some((false, [1000, 1001, 1002])));
        let zombie = "Name:\tsh\nState:\tZ (zombie)\nUid:\t7\t7\t7\t7\n";
        assert_eq!(parse_status(zombie), Some((true, [7, 7, 7])));
        assert_eq!(parse_status("Name:\tx\nUid:\t1\t2\n"), None);
        assert_eq!(parse_status("Name:\tx\nState:\tR\n"), None);
    }

    /// Outside a dropped worker (a test process, the non-root Sim's in-process path) the
    /// request never signals anything.
    #[test]
    fn outside_the_dropped_worker_nothing_is_signalled() {
        let (uids, _) = sandbox::res_ids();
        for uid in [uids[0], 0, 2_000_000_000] {
            let err = terminate_processes(uid).unwrap_err();
            assert_eq!(err.code, ErrorCode::DropFailed, "{err:?}");
        }
    }
}
