//! A clock the test moves itself, for simulations that own time.
//!
//! [`ManualClock`] is what a test hands the runner (`runner::RunnerConfig`'s `clock`), the
//! store (`StateDb::open_with_clock`, `Inbox::open_with_clock`) and the provider
//! (`Provider::with_clock`) so that nothing in the run reads the system's time: it starts at
//! a time a seed picks ([`ManualClock::from_seed`]) and moves only when told
//! ([`ManualClock::advance`]), so a history replays exactly.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use clock::Clock;

/// A clock that stands still until [`ManualClock::advance`] moves its wall and monotonic
/// time together.
#[derive(Debug)]
pub struct ManualClock {
    now_ms: AtomicI64,
    monotonic_ns: AtomicU64,
}

impl ManualClock {
    /// A clock whose wall time is `now_ms` (ms since the Unix epoch) and whose monotonic
    /// time is zero.
    pub fn starting_at(now_ms: i64) -> Arc<ManualClock> {
        Arc::new(ManualClock {
            now_ms: AtomicI64::new(now_ms),
            monotonic_ns: AtomicU64::new(0),
        })
    }

    /// A clock starting at a time `seed` picks: a millisecond of the year from
    /// 2024-01-01T00:00:00Z, so seeds give different times of day, days and months, but
    /// always years after what a certificate or a shadow entry can care about.
    pub fn from_seed(seed: u64) -> Arc<ManualClock> {
        const START_2024_MS: i64 = 1_704_067_200_000;
        const YEAR_MS: u64 = 365 * 24 * 3600 * 1000;
        let offset = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) % YEAR_MS;
        ManualClock::starting_at(START_2024_MS + offset as i64)
    }

    /// Sets the wall time to `now_ms`, forward or back, as a step of the system's clock does;
    /// the monotonic time stays where it is.
    pub fn set_wall_ms(&self, now_ms: i64) {
        self.now_ms.store(now_ms, Ordering::SeqCst);
    }

    /// Moves the clock `by` forward, wall and monotonic time alike.
    pub fn advance(&self, by: Duration) {
        let ms = i64::try_from(by.as_millis()).expect("an advance of less than 292 million years");
        let ns = u64::try_from(by.as_nanos()).expect("an advance of less than 584 years");
        self.now_ms.fetch_add(ms, Ordering::SeqCst);
        self.monotonic_ns.fetch_add(ns, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.now_ms.load(Ordering::SeqCst)
    }

    fn monotonic(&self) -> Duration {
        Duration::from_nanos(self.monotonic_ns.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_told_and_a_seed_picks_its_start() {
        let clock = ManualClock::from_seed(7);
        let (wall, mono) = (clock.now_ms(), clock.monotonic());
        assert_eq!((clock.now_ms(), clock.monotonic()), (wall, mono));
        clock.advance(Duration::from_millis(1500));
        assert_eq!(clock.now_ms(), wall + 1500);
        assert_eq!(clock.monotonic(), mono + Duration::from_millis(1500));
        assert_eq!(ManualClock::from_seed(7).now_ms(), wall);
        assert_ne!(ManualClock::from_seed(8).now_ms(), wall);
        assert!((1_704_067_200_000..1_735_689_600_000).contains(&wall));
    }
}
