//! Stopping the real daemons a test starts, with every process they started: a daemon's
//! children (Apache's, PHP-FPM's workers running as tenants, Dovecot's) outlive a master that
//! is killed alone, and a test that leaves them running leaves them on the machine. Each stop
//! signals the daemon's whole process group and waits for it; the guards do it when they are
//! dropped, on a panic too.

use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};

/// How long a daemon has to stop after SIGTERM before its group is killed.
const STOP_WAIT: Duration = Duration::from_secs(10);

/// A daemon the test started as its child in a process group of its own
/// (`CommandExt::process_group(0)`), in the foreground (`-F`, `daemonize = no`): stopped
/// with its group when dropped.
#[derive(Debug)]
pub struct GroupChild(Child);

impl GroupChild {
    /// Takes `child`, which must lead its own process group: the test's own group is not
    /// signalled.
    pub fn new(child: Child) -> GroupChild {
        assert_eq!(
            rustix::process::getpgid(Pid::from_raw(child.id() as i32)).ok(),
            Pid::from_raw(child.id() as i32),
            "the daemon must be started in a process group of its own (process_group(0))"
        );
        GroupChild(child)
    }

    pub fn id(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for GroupChild {
    fn drop(&mut self) {
        let Some(group) = Pid::from_raw(self.0.id() as i32) else {
            return;
        };
        let _ = kill_process_group(group, Signal::TERM);
        let deadline = Instant::now() + STOP_WAIT;
        while matches!(self.0.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        // What is left of the group (a worker that ignored SIGTERM, or the daemon itself
        // past the deadline); the master is reaped only after, so its pid, the group's id,
        // is not reused meanwhile.
        let _ = kill_process_group(group, Signal::KILL);
        let _ = self.0.wait();
    }
}

/// Stops the Apache whose master's pid is in `pid_file` (a master `apache2 -k start` or `-k
/// graceful` started, which made itself a session and group leader) with its children:
/// SIGTERM to its group, then SIGKILL to what is left once the master is gone or the wait
/// is over. Nothing is signalled unless the pid is a live process of `server` (the file may
/// be stale). Returns whether one was running.
pub fn stop_apache(pid_file: &Path, server: &str) -> bool {
    let Some(pid) = std::fs::read_to_string(pid_file)
        .ok()
        .and_then(|text| text.trim().parse::<i32>().ok())
        .and_then(Pid::from_raw)
    else {
        return false;
    };
    let runs = || provider::process_runs(pid.as_raw_nonzero().get() as u32, server);
    if !runs() {
        return false;
    }
    let _ = kill_process_group(pid, Signal::TERM);
    let deadline = Instant::now() + STOP_WAIT;
    while runs() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = kill_process_group(pid, Signal::KILL);
    true
}
