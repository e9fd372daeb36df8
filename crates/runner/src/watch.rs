//! `--watch`: a pass whenever the inbox changes (inotify on its directory) and at least every
//! 15 s. Between passes the runner sleeps in `poll(2)`: no busy polling.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use inotify::{Inotify, WatchMask};
use rustix::event::{PollFd, PollFlags, Timespec, poll};

use crate::{RunnerConfig, run_once};

/// The timer of DESIGN.md section 7.
pub const TICK: Duration = Duration::from_secs(15);
/// How often the loop looks at the stop flag while idle.
const STOP_CHECK: Duration = Duration::from_millis(500);

/// Runs passes until `stop` is set.
pub fn watch(config: &RunnerConfig, stop: &AtomicBool) {
    let mut inotify = match Inotify::init() {
        Ok(i) => Some(i),
        Err(e) => {
            tracing::error!(error = %e, "inotify unavailable; running on the 15 s tick only");
            None
        }
    };
    let mut watching = false;
    let mut buffer = [0u8; 4096];
    while !stop.load(Ordering::Relaxed) {
        if let Some(inotify) = &mut inotify
            && !watching
        {
            // The inbox directory belongs to the API and may not exist yet.
            let mask = WatchMask::MODIFY
                | WatchMask::CLOSE_WRITE
                | WatchMask::MOVED_TO
                | WatchMask::CREATE;
            watching = inotify
                .watches()
                .add(config.layout.inbox_dir(), mask)
                .is_ok();
        }
        match run_once(config) {
            Ok(report)
                if report.applied + report.admitted + report.rejected > 0
                    || !report.failed_steps.is_empty() =>
            {
                tracing::info!(
                    admitted = report.admitted,
                    rejected = report.rejected,
                    applied = report.applied,
                    failed_steps = ?report.failed_steps,
                    ms = report.elapsed.as_millis() as u64,
                    "pass"
                );
            }
            Ok(_) => {}
            Err(e) => tracing::error!(error = format!("{e:#}"), "pass failed"),
        }
        let next_tick = Instant::now() + TICK;
        'wait: while !stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            if now >= next_tick {
                break;
            }
            let wait = (next_tick - now).min(STOP_CHECK);
            let Some(inotify) = &mut inotify else {
                std::thread::sleep(wait);
                continue;
            };
            let timeout = Timespec {
                tv_sec: wait.as_secs() as i64,
                tv_nsec: wait.subsec_nanos() as i64,
            };
            let mut fds = [PollFd::new(inotify, PollFlags::IN)];
            if poll(&mut fds, Some(&timeout)).unwrap_or(0) > 0 {
                // Drain what is queued: one pass serves every change seen so far.
                let _ = inotify.read_events(&mut buffer);
                break 'wait;
            }
        }
    }
}
