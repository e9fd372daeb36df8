//! The events feed a control plane long-polls: read in cursor order, trimmed to a bound in
//! steps of its slack.

use rusqlite::params;

use super::StateDb;
use super::audit::beyond_slack;
use crate::{StoreError, queries};

impl StateDb {
    /// Drops the oldest events beyond `keep`. Costs two key lookups when there is nothing to
    /// drop: `min` and `max` in separate subqueries, because SQLite answers a lone `min()` or
    /// `max()` from the end of the index but scans the whole table for both in one SELECT.
    pub fn trim_events(&self, keep: i64) -> Result<usize, StoreError> {
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

    pub fn events(&self, after: i64, limit: u32) -> Result<Vec<registry::Event>, StoreError> {
        queries::events(&self.conn, after, limit).map_err(StoreError::sqlite("read events"))
    }
}

/// The oldest and newest event cursors (see [`StateDb::trim_events`]).
const EVENTS_BOUNDS: &str =
    "SELECT (SELECT min(cursor) FROM events), (SELECT max(cursor) FROM events)";

#[cfg(test)]
mod tests {
    use super::*;

    /// An idle pass trims events: finding there is nothing to trim must not read the table.
    #[test]
    fn measuring_the_events_feed_reads_no_table() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDb::open(&dir.path().join("state.db")).unwrap();
        let mut stmt = state
            .conn
            .prepare(&format!("EXPLAIN QUERY PLAN {EVENTS_BOUNDS}"))
            .unwrap();
        let plan: Vec<String> = stmt
            .query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            plan.iter().all(|step| !step.starts_with("SCAN events")),
            "{plan:?}"
        );
        assert!(plan.iter().any(|step| step.starts_with("SEARCH events")));
    }

    /// A full feed is trimmed once per 1% of growth, not on every pass that adds an event:
    /// each trim is a durable commit.
    #[test]
    fn a_full_events_feed_is_trimmed_in_steps_of_its_slack() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDb::open(&dir.path().join("state.db")).unwrap();
        let add = |n: i64| {
            state
                .conn
                .execute(
                    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
                     INSERT INTO events(request_id, operation, state, at) SELECT 'r', 'o', 'queued', 0 FROM n",
                    [n],
                )
                .unwrap();
        };
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
