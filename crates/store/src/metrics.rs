//! What the API's `GET /v1/metrics` reads of root's state: counts and sums SQLite computes in
//! one short read-only transaction of state.db ([`StateMetrics`], through
//! [`crate::StateReader::metrics`]), and the runner's pass durations, which the runner keeps
//! beside the last pass's times in its lock file ([`pass_record`]) so that an idle pass still
//! commits nothing to state.db.

use rusqlite::Connection;

use crate::FullFileSystem;
use crate::{Layout, StoreError, queries};

/// The upper bounds of the job duration buckets, in milliseconds.
pub const JOB_BUCKETS_MS: &[i64] = &[
    10, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 300_000,
];
/// The upper bounds of the runner pass duration buckets, in milliseconds.
pub const PASS_BUCKETS_MS: &[i64] = &[5, 10, 25, 50, 100, 250, 500, 1_000, 5_000, 15_000, 60_000];

/// A cumulative histogram: `cumulative[i]` observations took at most `bounds_ms[i]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    pub bounds_ms: &'static [i64],
    pub cumulative: Vec<u64>,
    pub count: u64,
    pub sum_ms: i64,
}

impl Histogram {
    pub fn new(bounds_ms: &'static [i64]) -> Histogram {
        Histogram {
            bounds_ms,
            cumulative: vec![0; bounds_ms.len()],
            count: 0,
            sum_ms: 0,
        }
    }

    pub fn observe(&mut self, ms: i64) {
        let ms = ms.max(0);
        for (bound, n) in self.bounds_ms.iter().zip(&mut self.cumulative) {
            if ms <= *bound {
                *n += 1;
            }
        }
        self.count += 1;
        self.sum_ms = self.sum_ms.saturating_add(ms);
    }
}

/// What state.db says, for the metrics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateMetrics {
    /// `(operation, state, jobs)`.
    pub jobs: Vec<(String, String, u64)>,
    /// The jobs admitted and not finished, by operation and state (`queued`, `running`):
    /// `(operation, state, jobs, earliest queued_at in ms)` ([`PENDING_JOBS`]).
    pub pending: Vec<(String, String, u64, i64)>,
    /// Each operation's finished jobs (succeeded or failed) by how long their last run took.
    pub job_durations: Vec<(String, Histogram)>,
    /// Every step failure the runner recorded (the history keeps the last 1,000; the count
    /// goes on).
    pub step_failures_total: u64,
    /// `(family, aspect, findings)` of the drift open now.
    pub drift: Vec<(String, String, u64)>,
    pub full: Vec<FullFileSystem>,
    /// The inbox sequence root has admitted up to.
    pub watermark: i64,
}

/// The queue: jobs queued or running, by operation and state, with the earliest time one of
/// them was queued. Read through the `jobs_pending` partial index (a search of its two states),
/// so it costs what is pending, not every job the node ever ran.
pub const PENDING_JOBS: &str = "SELECT operation, state, count(*), min(queued_at) FROM jobs
     WHERE state IN ('queued', 'running')
     GROUP BY operation, state";

pub(crate) fn read(conn: &Connection) -> rusqlite::Result<StateMetrics> {
    let jobs = conn
        .prepare_cached("SELECT operation, state, count(*) FROM jobs GROUP BY operation, state")?
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)? as u64))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let pending = conn
        .prepare_cached(PENDING_JOBS)?
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)? as u64, r.get(3)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let buckets: String = JOB_BUCKETS_MS
        .iter()
        .map(|ms| format!(", sum(finished_at - started_at <= {ms})"))
        .collect();
    let job_durations = conn
        .prepare_cached(&format!(
            "SELECT operation, count(*), total(finished_at - started_at){buckets} FROM jobs
             WHERE state IN ('succeeded', 'failed')
               AND started_at IS NOT NULL AND finished_at IS NOT NULL
             GROUP BY operation"
        ))?
        .query_map([], |r| {
            let mut h = Histogram::new(JOB_BUCKETS_MS);
            h.count = r.get::<_, i64>(1)? as u64;
            h.sum_ms = r.get::<_, f64>(2)? as i64;
            for (i, n) in h.cumulative.iter_mut().enumerate() {
                *n = r.get::<_, i64>(3 + i)? as u64;
            }
            Ok((r.get(0)?, h))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let step_failures_total =
        conn.query_row("SELECT coalesce(max(id), 0) FROM step_failures", [], |r| {
            r.get::<_, i64>(0)
        })? as u64;
    let drift = conn
        .prepare_cached("SELECT family, aspect, count(*) FROM drift GROUP BY family, aspect")?
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)? as u64))
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(StateMetrics {
        jobs,
        pending,
        job_durations,
        step_failures_total,
        drift,
        full: queries::full_filesystems(conn)?,
        watermark: queries::meta(conn, "ingest_watermark")?,
    })
}

/// The runner's lock file after a pass from `started_ms` to `finished_ms`: the pass's times on
/// the first line (what `layerone status` reads), the durations of every pass so far on the
/// second, `previous` being what the file held.
pub fn pass_record(previous: &str, started_ms: i64, finished_ms: i64) -> String {
    let mut h = pass_durations_of(previous);
    h.observe(finished_ms - started_ms);
    let buckets: String = h.cumulative.iter().map(|n| format!(" {n}")).collect();
    format!(
        "{started_ms} {finished_ms}\npasses {} {}{buckets}\n",
        h.count, h.sum_ms
    )
}

fn pass_durations_of(text: &str) -> Histogram {
    let mut h = Histogram::new(PASS_BUCKETS_MS);
    let Some(line) = text.lines().find_map(|l| l.strip_prefix("passes ")) else {
        return h;
    };
    let numbers: Option<Vec<i64>> = line.split(' ').map(|n| n.parse().ok()).collect();
    match numbers.as_deref() {
        Some([count, sum, buckets @ ..]) if buckets.len() == PASS_BUCKETS_MS.len() => {
            h.count = (*count).max(0) as u64;
            h.sum_ms = *sum;
            h.cumulative = buckets.iter().map(|n| (*n).max(0) as u64).collect();
        }
        // Another shape (a lock file of an older runner): counted from here on.
        _ => {}
    }
    h
}

/// The runner's pass durations so far, from its lock file (empty before the first pass).
pub fn pass_durations(layout: &Layout) -> Result<Histogram, StoreError> {
    match std::fs::read_to_string(layout.runner_lock()) {
        Ok(text) => Ok(pass_durations_of(&text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Histogram::new(PASS_BUCKETS_MS)),
        Err(source) => Err(StoreError::Io {
            path: layout.runner_lock(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_durations_accumulate_in_the_lock_file_and_keep_the_last_pass_first() {
        let first = pass_record("", 1_000, 1_004);
        assert!(first.starts_with("1000 1004\n"), "{first}");
        let second = pass_record(&first, 2_000, 2_300);
        let h = pass_durations_of(&second);
        assert_eq!((h.count, h.sum_ms), (2, 304));
        assert_eq!(h.cumulative[0], 1, "4 ms is within the first bucket");
        assert_eq!(*h.cumulative.last().unwrap(), 2);
        assert_eq!(
            pass_durations_of("1000 1004\n").count,
            0,
            "an older lock file"
        );
        assert_eq!(pass_durations_of("passes x y").count, 0);
    }
}
