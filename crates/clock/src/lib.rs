//! `clock`: where the node's time comes from.
//!
//! Every time the runner, the store, the handlers and the provider record (a job's admission
//! and completion, an event, an audit line, a drift finding, a backup's date) and every span
//! they measure for their own work (a pass's budget, whether a periodic step is due, how old
//! an upload is, whether a certificate is due for renewal) is read from the [`Clock`] their
//! caller gives them. Production gives [`SystemClock`] (the packaged runner, the API, the
//! installer); a simulation gives a clock it moves itself (`testkit::ManualClock`), so one
//! process can drive the runner, the store and the simulated system from a seed and replay
//! it exactly (docs/design.md section 7: time comes from the caller, so a simulation can move it).
//!
//! What is deliberately not read from here, because it measures real time for something
//! real: the deadlines of real child processes (the provider's real executor kills a child
//! at its deadline, and a clock that does not move would let a hung program hang the node),
//! and waits on the kernel or on another process (the runner's `--watch` sleeping in
//! `poll(2)`, the long lane's patience while another connection holds state.db busy). File
//! modification times that the kernel stamps are real too; where the node judges an age by
//! one, it compares it with this clock's time, and a simulation stamps its own files.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A source of time: wall time for what is recorded, monotonic time for what is measured.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Wall time: milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;

    /// Monotonic time since an origin of the clock's own: it never goes back, and only
    /// differences between two readings mean anything.
    fn monotonic(&self) -> Duration;

    /// Wall time in whole seconds since the Unix epoch.
    fn now_secs(&self) -> i64 {
        self.now_ms().div_euclid(1000)
    }

    /// Wall time as a [`SystemTime`], to compare with or to stamp a file's modification time.
    fn system_time(&self) -> SystemTime {
        let ms = self.now_ms();
        if ms >= 0 {
            UNIX_EPOCH + Duration::from_millis(ms.unsigned_abs())
        } else {
            UNIX_EPOCH - Duration::from_millis(ms.unsigned_abs())
        }
    }
}

/// The system's clock: `SystemTime::now` and `Instant::now`. What production runs on.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    }

    fn monotonic(&self) -> Duration {
        static ORIGIN: OnceLock<Instant> = OnceLock::new();
        ORIGIN.get_or_init(Instant::now).elapsed()
    }
}

/// The system clock, shared: what a caller that has no clock of its own gives.
pub fn system() -> Arc<dyn Clock> {
    Arc::new(SystemClock)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_clocks_readings_agree_with_the_system_and_never_go_back() {
        let clock = SystemClock;
        let before = SystemTime::now();
        let at = clock.system_time();
        let after = SystemTime::now();
        // Milliseconds: the clock's reading is truncated to them.
        assert!(at + Duration::from_millis(1) >= before && at <= after);
        assert_eq!(clock.now_secs(), clock.now_ms() / 1000);
        let first = clock.monotonic();
        assert!(clock.monotonic() >= first);
    }
}
