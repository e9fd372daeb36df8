//! The runner's pass bookkeeping: the steps that failed, and the last finished pass as
//! `layerone status` shows it.

use rusqlite::{Connection, params};

use crate::StateDb;
use store::StoreError;

impl StateDb {
    /// Records that a runner step failed; the runner logs it too and moves on.
    pub fn record_step_failure(&self, step: &str, message: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO step_failures(step, at, message) VALUES (?1, ?2, ?3)",
                params![step, self.now_ms(), message],
            )
            .map_err(StoreError::sqlite("record a step failure"))?;
        // Keep the table bounded: it is a recent history, not an archive.
        self.conn
            .execute(
                "DELETE FROM step_failures WHERE id <= (SELECT max(id) FROM step_failures) - 1000",
                [],
            )
            .map_err(StoreError::sqlite("trim step failures"))?;
        Ok(())
    }

    /// Recent step failures, newest first.
    pub fn step_failures(&self, limit: u32) -> Result<Vec<(String, i64, String)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT step, at, message FROM step_failures ORDER BY id DESC LIMIT ?1")
            .map_err(StoreError::sqlite("list step failures"))?;
        let rows = stmt
            .query_map(params![limit], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .and_then(|rows| rows.collect())
            .map_err(StoreError::sqlite("list step failures"))?;
        Ok(rows)
    }
}

/// The runner's last finished pass, as `layerone status` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LastPass {
    pub started_ms: i64,
    pub finished_ms: i64,
    /// `(step, at_ms, message)` of the steps that failed during that pass.
    pub failed_steps: Vec<(String, i64, String)>,
}

/// Reads the last pass: its start and end from the runner's lock file (written there, not in
/// state.db, so that an idle pass commits nothing), its failed steps from state.db opened
/// read-only (never created or migrated). `None` when no pass has finished yet.
pub fn last_pass(layout: &store::Layout) -> Result<Option<LastPass>, StoreError> {
    let text = match std::fs::read_to_string(layout.runner_lock()) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(StoreError::Io {
                path: layout.runner_lock(),
                source,
            });
        }
    };
    let mut fields = text.split_whitespace().map(str::parse::<i64>);
    let (Some(Ok(started_ms)), Some(Ok(finished_ms))) = (fields.next(), fields.next()) else {
        return Ok(None);
    };
    let conn = Connection::open_with_flags(
        layout.state_db(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(StoreError::sqlite("open state.db read-only"))?;
    let mut stmt = conn
        .prepare(
            "SELECT step, at, message FROM step_failures WHERE at >= ?1 AND at <= ?2 ORDER BY id",
        )
        .map_err(StoreError::sqlite("list the pass's step failures"))?;
    let failed_steps = stmt
        .query_map(params![started_ms, finished_ms], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .and_then(|rows| rows.collect())
        .map_err(StoreError::sqlite("list the pass's step failures"))?;
    Ok(Some(LastPass {
        started_ms,
        finished_ms,
        failed_steps,
    }))
}
