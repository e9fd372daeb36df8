//! `--watch`: a pass whenever the inbox changes (inotify on its directory), whenever the long
//! lane ends a job (its eventfd: the jobs it held back can run), at once after a pass that
//! stopped at its budget with jobs left, and at least every 15 s.
//! Between passes the runner sleeps in `poll(2)`: no busy polling. `--once` runs the same
//! loop after its pass while its long lane is busy ([`Until::LaneIdle`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use inotify::{Inotify, WatchMask};
use rustix::event::{PollFd, PollFlags, Timespec, poll};

use crate::{LongLane, PassReport, RunnerConfig, pass};

/// The timer of docs/design.md section 7.
pub const TICK: Duration = Duration::from_secs(15);
/// How often the loop looks at the stop flag while idle.
const STOP_CHECK: Duration = Duration::from_millis(500);

/// The delays after which a pass woken by the inbox looks again when it found nothing. The
/// API's writes to the WAL wake the runner, but its commit becomes visible only after its
/// fsync, through the WAL index, which no inotify event reports: the first pass can be early.
const SETTLE: [Duration; 4] = [
    Duration::from_millis(5),
    Duration::from_millis(20),
    Duration::from_millis(80),
    Duration::from_millis(300),
];

/// What the watch on the inbox directory reports: writes (the API's commits append to
/// `inbox.db-wal`; a checkpoint writes `inbox.db`) and new files. Not `CLOSE_WRITE`: SQLite
/// opens the WAL read-write even for the runner's read-only connection, so closing it after
/// each pass's read would start the next pass, forever.
const MASK: WatchMask = WatchMask::MODIFY
    .union(WatchMask::MOVED_TO)
    .union(WatchMask::CREATE);

/// Whether an event in the inbox directory may mean a new request. A reader that finds no
/// other connection open resets the WAL index (`inbox.db-shm`), which is no change either.
fn is_inbox_change(name: Option<&std::ffi::OsStr>) -> bool {
    !name.is_some_and(|n| n.as_encoded_bytes().ends_with(b"-shm"))
}

/// When [`serve`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Until {
    /// When the stop flag is set (`--watch`).
    Stopped,
    /// When the long lane is idle and no job of it ended since the last pass began: what the
    /// lane held back has then had its pass (`--once` with long work).
    LaneIdle,
}

/// Runs passes until `stop` is set.
pub fn watch(config: &RunnerConfig, stop: &AtomicBool) {
    let mut lane = LongLane::new();
    serve(config, &mut lane, stop, Until::Stopped);
    if lane.busy() {
        // The job is left `running`: the next runner runs it again (handlers are
        // idempotent), as after any other end of the process.
        tracing::info!("stopping with a long job running; the next runner runs it again");
    }
}

/// Runs passes on inbox changes, on the long lane's progress and every [`TICK`], until
/// `until`; returns what they did.
pub fn serve(
    config: &RunnerConfig,
    lane: &mut LongLane,
    stop: &AtomicBool,
    until: Until,
) -> PassReport {
    let mut total = PassReport::default();
    let mut inotify = match Inotify::init() {
        Ok(i) => Some(i),
        Err(e) => {
            tracing::error!(error = %e, "inotify unavailable; running on the 15 s tick only");
            None
        }
    };
    let mut watching = false;
    let mut settle: Option<usize> = None;
    // Passes run in a row because each stopped at its budget.
    let mut chained = 0;
    let mut buffer = [0u8; 4096];
    while !stop.load(Ordering::Relaxed) {
        if let Some(inotify) = &mut inotify
            && !watching
        {
            // The inbox directory belongs to the API and may not exist yet.
            watching = inotify
                .watches()
                .add(config.layout.inbox_dir(), MASK)
                .is_ok();
        }
        let mut found = false;
        let mut more = false;
        let seen = lane.completed();
        match pass(config, lane) {
            Ok(report) => {
                if report.admitted + report.rejected > 0 {
                    found = true;
                }
                more = report.stopped_at_budget;
                if report.applied + report.admitted + report.rejected > 0
                    || !report.failed_steps.is_empty()
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
                total.absorb(&report);
            }
            Err(e) => tracing::error!(error = format!("{e:#}"), "pass failed"),
        }
        if found {
            settle = Some(0);
        }
        // The pass stopped at its budget with jobs left: the next one follows at once, since
        // no wake will come for jobs already admitted. Under `--once` (the long lane busy), at
        // most `ONCE_MORE_PASSES` in a row: the next start goes on.
        if more && (until == Until::Stopped || chained < crate::ONCE_MORE_PASSES) {
            chained += 1;
            continue;
        }
        chained = 0;
        // Read before the count: a lane seen idle here completes nothing more.
        let busy = lane.busy();
        if lane.completed() != seen {
            // A long job ended during the pass: the jobs it held back get a pass now.
            continue;
        }
        if until == Until::LaneIdle && !busy {
            lane.join();
            return total;
        }
        // A wake whose pass found nothing may have come before the commit it announced was
        // visible: look again after a short delay, a few times, then wait for the tick. So
        // may a commit that followed the one a pass found, its event already drained by the
        // wake: after a pass that found something, look again the same way (set above).
        let next_tick = match settle {
            Some(i) if i < SETTLE.len() => {
                settle = Some(i + 1);
                Instant::now() + SETTLE[i]
            }
            _ => {
                settle = None;
                Instant::now() + TICK
            }
        };
        // What the lane looked like when the pass ended. Every wake-up of the lane follows a
        // change of these, so one that came before is emptied, and a change since is seen
        // below whether or not its wake-up was.
        let lane_at = (seen, busy);
        lane.clear_wake();
        'wait: while !stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            if now >= next_tick {
                break;
            }
            // A long job ended: the jobs it held back can run now.
            if (lane.completed(), lane.busy()) != lane_at {
                break;
            }
            let wait = (next_tick - now).min(STOP_CHECK);
            let timeout = Timespec {
                tv_sec: wait.as_secs() as i64,
                tv_nsec: wait.subsec_nanos() as i64,
            };
            let mut fds = Vec::with_capacity(2);
            if let Some(inotify) = &inotify {
                fds.push(PollFd::new(inotify, PollFlags::IN));
            }
            if let Some(wake) = lane.wake_fd() {
                fds.push(PollFd::from_borrowed_fd(wake, PollFlags::IN));
            }
            if fds.is_empty() {
                std::thread::sleep(wait);
                continue;
            }
            if poll(&mut fds, Some(&timeout)).unwrap_or(0) == 0 {
                continue;
            }
            let inbox_ready = inotify.is_some() && fds[0].revents().contains(PollFlags::IN);
            drop(fds);
            if inbox_ready && let Some(inotify) = &mut inotify {
                // Drain what is queued: one pass serves every change seen so far. Events of
                // the pass's own read of the inbox are not a change: without this filter the
                // runner would wake itself forever.
                let changed = inotify
                    .read_events(&mut buffer)
                    .map(|mut events| events.any(|e| is_inbox_change(e.name)))
                    .unwrap_or(true);
                if changed {
                    settle = Some(0);
                    break 'wait;
                }
            }
            // Otherwise the lane's descriptor: emptied, and the check at the top of the loop
            // decides.
            lane.clear_wake();
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use inotify::Inotify;

    use super::*;

    fn changes(inotify: &mut Inotify) -> (usize, usize) {
        let mut buffer = [0u8; 4096];
        let (mut all, mut relevant) = (0, 0);
        while let Ok(events) = inotify.read_events(&mut buffer) {
            let mut any = false;
            for e in events {
                any = true;
                all += 1;
                relevant += usize::from(is_inbox_change(e.name));
            }
            if !any {
                break;
            }
        }
        (all, relevant)
    }

    #[test]
    fn the_runners_read_of_the_inbox_does_not_wake_the_watch_but_a_commit_does() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("inbox.db");
        let (inbox, writer) = inbox::Inbox::open(&path).unwrap();
        let mut inotify = Inotify::init().unwrap();
        inotify.watches().add(dir.path(), MASK).unwrap();
        changes(&mut inotify);

        inbox::read_rows(&path, 0, 10).unwrap();
        assert_eq!(
            changes(&mut inotify).1,
            0,
            "the runner's own read would start another pass"
        );

        let body = serde_json::json!({"request_id": "0123456789abcdef0123456789abcdef",
            "operation": "remove_ssh_key",
            "resource": {"id": "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2", "account": "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"}});
        let node: registry::Hex32 = "feedfeedfeedfeedfeedfeedfeedfeed".parse().unwrap();
        let job = declarations::registry()
            .validate(body.to_string().as_bytes(), &node)
            .unwrap();
        inbox.admit_blocking(job, registry::Origin::Api).unwrap();
        assert!(changes(&mut inotify).1 > 0, "a commit must wake the watch");
        drop(inbox);
        writer.join().unwrap();

        // With the API stopped, the runner's read is the only connection: the first one may
        // recreate the WAL (one more pass), the next ones must not touch anything.
        inbox::read_rows(&path, 0, 10).unwrap();
        changes(&mut inotify);
        inbox::read_rows(&path, 0, 10).unwrap();
        assert_eq!(
            changes(&mut inotify).1,
            0,
            "the runner's read as the only connection would start another pass"
        );
    }
}
