//! The events feed a control plane long-polls: read in cursor order, trimmed to a bound in
//! steps of its slack.

use rusqlite::params;

use crate::StateDb;
use crate::audit::beyond_slack;
use store::{StoreError, queries};

impl StateDb {
    /// Drops the oldest events beyond `keep`. Costs two key lookups when there is nothing to
    /// drop: `min` and `max` in separate subqueries, because SQLite answers a lone `min()` or
    /// `max()` from the end of the index but scans the whole table for both in one SELECT.
    ///
    /// The newest event always stays (`keep` is at least 1): an emptied table would hand out
    /// its cursors again from 1, and a reader could no longer tell what it missed
    /// (`store::queries::trimmed_after`).
    pub fn trim_events(&self, keep: i64) -> Result<usize, StoreError> {
        let keep = keep.max(1);
        let (min, max): (Option<i64>, Option<i64>) = self
            .conn
            .query_row(EVENTS_BOUNDS, [], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(StoreError::sqlite("measure events"))?;
        match (min, max) {
            (Some(min), Some(max)) if beyond_slack(max - min, keep) => self
                .conn
                .execute("DELETE FROM events WHERE cursor <= ?1", params![max - keep])
                .map_err(StoreError::sqlite("trim events")),
            _ => Ok(0),
        }
    }

    pub fn events(&self, after: i64, limit: u32) -> Result<registry::EventPage, StoreError> {
        queries::events(&self.conn, after, limit).map_err(StoreError::sqlite("read events"))
    }
}

/// The oldest and newest event cursors (see [`StateDb::trim_events`]).
const EVENTS_BOUNDS: &str =
    "SELECT (SELECT min(cursor) FROM events), (SELECT max(cursor) FROM events)";

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, Ordering};
    use std::time::Duration;

    use registry::{Drift, DriftAspect, Lane, Registry};
    use serde_json::json;

    use super::*;
    use crate::LongOperations;
    use crate::{Outcome, ResourceChange};

    /// A clock that stands where the test puts it.
    #[derive(Debug)]
    struct At(AtomicI64);

    impl clock::Clock for At {
        fn now_ms(&self) -> i64 {
            self.0.load(Ordering::SeqCst)
        }

        fn monotonic(&self) -> Duration {
            Duration::ZERO
        }
    }

    /// Each job state change and each drift found or resolved is one event dated by the
    /// store's clock (the change's own `state_changed_at` or `resolved_at`), not SQLite's; a
    /// hand edit that records no time still gets an event, dated by SQLite.
    #[test]
    fn every_event_is_dated_by_the_stores_clock() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(At(AtomicI64::new(1_000)));
        let mut state =
            StateDb::open_with_clock(&dir.path().join("state.db"), clock.clone()).unwrap();
        let hex = format!("{:032x}", 7);
        // A job a dead runner left running.
        state
            .conn
            .execute(
                "INSERT INTO jobs(request_id, operation, family, resource_id, owner, generation,
                                  body, state, queued_at, state_changed_at)
                 VALUES ('r1', 'probe', 'probe', ?1, ?1, 1, '{}', 'running', 1000, 1000)",
                [&hex],
            )
            .unwrap();
        let at = |ms: i64| clock.0.store(ms, Ordering::SeqCst);
        at(2_000);
        let none = LongOperations::of(&Registry::builder().build());
        assert_eq!(state.recover_running(Lane::Main, &none).unwrap(), 1);
        at(3_000);
        let job = state.claim_next().unwrap().unwrap();
        at(4_000);
        let done = Outcome {
            result: Ok(json!({})),
            resource: ResourceChange::Keep,
        };
        state.complete(&job, &done).unwrap();
        let drift = Drift {
            family: "probe".into(),
            resource_id: hex.clone(),
            owner: hex.clone(),
            aspect: DriftAspect::declared("user_missing"),
            message: "gone".into(),
        };
        at(5_000);
        assert_eq!(state.record_drift(&[drift], &[]).unwrap(), (1, 0));
        at(6_000);
        assert_eq!(state.record_drift(&[], &[]).unwrap(), (0, 1));
        let feed = || -> Vec<(String, String, i64)> {
            state
                .conn
                .prepare("SELECT kind, state, at FROM events ORDER BY cursor")
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        let event = |kind: &str, state: &str, at: i64| (kind.to_owned(), state.to_owned(), at);
        assert_eq!(
            feed(),
            [
                event("job", "running", 1_000),
                event("job", "queued", 2_000),
                event("job", "running", 3_000),
                event("job", "succeeded", 4_000),
                event("drift", "", 5_000),
                event("drift_resolved", "", 6_000),
            ]
        );
        // A row written by hand, with no time of the change: SQLite's own (this century).
        state
            .conn
            .execute(
                "INSERT INTO jobs(request_id, operation, state, queued_at)
                 VALUES ('r2', 'probe', 'failed', 0)",
                [],
            )
            .unwrap();
        let (_, _, at) = feed().pop().unwrap();
        assert!(at > 946_684_800_000, "{at}");
    }

    /// The steps of SQLite's plan for `sql` on a fresh state.db.
    fn plan_of(sql: &str, params: &[&dyn rusqlite::ToSql]) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDb::open(&dir.path().join("state.db")).unwrap();
        let mut stmt = state
            .conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap();
        stmt.query_map(params, |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    /// An idle pass trims events: finding there is nothing to trim must not read the table.
    #[test]
    fn measuring_the_events_feed_reads_no_table() {
        let plan = plan_of(EVENTS_BOUNDS, &[]);
        assert!(
            plan.iter().all(|step| !step.starts_with("SCAN events")),
            "{plan:?}"
        );
        assert!(plan.iter().any(|step| step.starts_with("SEARCH events")));
    }

    /// A page of the feed reads the events from the cursor by their key and looks each
    /// final job up by its unique request id: it never scans the jobs table.
    #[test]
    fn a_page_of_the_feed_looks_each_job_up_by_its_request_id() {
        let plan = plan_of(queries::EVENTS_PAGE, &[&0, &100]);
        assert!(
            plan.iter().all(|step| !step.starts_with("SCAN j")),
            "{plan:?}"
        );
        assert!(
            plan.iter()
                .any(|step| step.starts_with("SEARCH j") && step.contains("request_id=?")),
            "{plan:?}"
        );
        assert!(
            plan.iter()
                .any(|step| step.starts_with("SEARCH e") && step.contains("rowid>?")),
            "{plan:?}"
        );
    }

    /// Appends `n` events to the feed.
    fn add_events(state: &StateDb, n: i64) {
        state
            .conn
            .execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
                 INSERT INTO events(request_id, operation, state, at) SELECT 'r', 'o', 'queued', 0 FROM n",
                [n],
            )
            .unwrap();
    }

    /// A reader is told it lost events exactly when the trim took some after its cursor: not
    /// from 0 on a feed never trimmed, not from one below the oldest event kept, not from the
    /// newest or past it; and then it is told the oldest cursor it can still read.
    #[test]
    fn a_cursor_is_behind_the_trim_exactly_when_events_after_it_were_trimmed() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDb::open(&dir.path().join("state.db")).unwrap();
        let add = |n: i64| add_events(&state, n);
        let lost = |after: i64| {
            let page = state.events(after, 10).unwrap();
            queries::trimmed_after(after, &page)
        };
        // A fresh node: nothing to read, nothing lost.
        assert_eq!(lost(0), None);
        add(30);
        assert_eq!(state.trim_events(100).unwrap(), 0);
        assert_eq!(lost(0), None, "a feed never trimmed starts at 1");
        assert_eq!(state.trim_events(10).unwrap(), 20);
        // Cursors 21..=30 kept.
        assert_eq!(lost(0), Some(21));
        assert_eq!(lost(19), Some(21));
        assert_eq!(lost(20), None, "one below the oldest kept loses nothing");
        assert_eq!(lost(21), None);
        assert_eq!(lost(30), None, "the newest");
        assert_eq!(lost(1_000), None, "past the newest");
        // The newest always stays, so cursors go on from where they were.
        assert_eq!(state.trim_events(0).unwrap(), 9);
        add(1);
        assert_eq!(lost(28), Some(30));
        assert_eq!(lost(29), None);
        let resumed: Vec<i64> = state
            .events(30 - 1, 10)
            .unwrap()
            .events
            .iter()
            .map(|e| e.cursor)
            .collect();
        assert_eq!(resumed, [30, 31]);
    }

    /// A full feed is trimmed once per 1% of growth, not on every pass that adds an event:
    /// each trim is a durable commit.
    #[test]
    fn a_full_events_feed_is_trimmed_in_steps_of_its_slack() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDb::open(&dir.path().join("state.db")).unwrap();
        let add = |n: i64| add_events(&state, n);
        let count = || -> i64 {
            state
                .conn
                .query_row("SELECT count(*) FROM events", [], |r| r.get(0))
                .unwrap()
        };
        add(1000);
        assert_eq!(state.trim_events(1000).unwrap(), 0);
        add(10);
        assert_eq!(state.trim_events(1000).unwrap(), 0, "within the slack");
        add(1);
        assert_eq!(
            state.trim_events(1000).unwrap(),
            11,
            "past it: back to keep"
        );
        assert_eq!(count(), 1000);
    }
}
