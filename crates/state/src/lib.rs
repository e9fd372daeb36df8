//! state.db, root's database, one part per file:
//!
//! - `admission`: inbox rows validated again and admitted (or rejected) in one `BEGIN
//!   IMMEDIATE`, the node's own requests ([`StateDb::admit_local`]);
//! - `supersession`: each admitted job's generation, and the queued jobs it makes redundant
//!   (the same request again, just before it), which it supersedes; a request older than a
//!   queued control-plane generation is refused;
//! - `claim`: claiming as one `UPDATE … RETURNING`, one per lane of the runner (the main
//!   lane's and the long lane's, which together keep every account's jobs in admission
//!   order), and the recovery of jobs a dead runner left `running`;
//! - `completion`: how a job ended and what it did to its resource row, in one `UPDATE`;
//! - `resources`: the resource rows, tracked with their owner so a purge knows what exists;
//! - `view`: the one view handlers read them through, typed, with the changes of the
//!   running job and of its batch that are not committed yet;
//! - `audit`, `events`, `drift`, `passes`: the audit trail, the events feed, the
//!   drift check's findings and the runner's pass bookkeeping.
//!
//! Every time it records (admission, claim, completion, each event, an audit record's trim
//! horizon, drift, step failures, identities) is read from the clock it was opened with
//! ([`StateDb::open_with_clock`]): the runner's, which is the system's in production. The
//! events triggers copy the time of the row change they report (`jobs.state_changed_at`,
//! `drift.first_seen`, `drift.resolved_at`, migration 6), so SQLite's own clock writes
//! nothing root records.
//!
//! Only the runner opens it read-write. OS changes happen outside these transactions, so
//! handlers keep what they need to finish or undo a change on the OS side or here, and a job
//! found `running` at the start of a pass is simply run again (each lane's by that lane,
//! under its lock: [`StateDb::recover_running`]).

mod admission;
mod audit;
mod claim;
mod completion;
mod disk;
mod drift;
mod events;
pub mod identities;
#[cfg(test)]
mod metrics;
mod migrations;
mod passes;
mod resources;
mod supersession;
mod view;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clock::Clock;
use registry::JobView;
use rusqlite::Connection;

pub use admission::IngestReport;
pub use claim::{ClaimedJob, LongOperations};
pub use completion::{Outcome, ResourceChange};
pub use disk::{DiskChanges, full_filesystems};
pub use identities::{IdentityKind, IdentityRow};
pub use migrations::STATE_SCHEMA_VERSION;
pub use passes::{LastPass, last_pass};
pub use view::{OuterJob, Pending, ResourceKey, Stored, View};

use store::{StoreError, queries, sqlite};

impl StateDb {
    /// Opens (creating if needed) and migrates state.db, recording the system clock's time.
    pub fn open(path: &Path) -> Result<StateDb, StoreError> {
        StateDb::open_with_clock(path, clock::system())
    }

    /// Opens (creating if needed) and migrates state.db; every time it records is `clock`'s.
    pub fn open_with_clock(path: &Path, clock: Arc<dyn Clock>) -> Result<StateDb, StoreError> {
        let mut conn = sqlite::open_state_rw(path)
            .map_err(StoreError::sqlite(format!("open {}", path.display())))?;
        migrations::migrate(&mut conn).map_err(StoreError::sqlite("migrate state.db"))?;
        Ok(StateDb {
            conn,
            path: path.to_owned(),
            clock,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The clock this database records the time of.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The clock's wall time, in milliseconds since the Unix epoch.
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// `PRAGMA quick_check`, run at the start of each pass. Opening the database for it also
    /// rolls back a hot journal left by a crashed commit.
    pub fn quick_check(&self) -> Result<(), StoreError> {
        let verdict: String = self
            .conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(StoreError::sqlite("quick_check"))?;
        if verdict == "ok" {
            Ok(())
        } else {
            Err(StoreError::Corrupt(verdict))
        }
    }

    /// `PRAGMA integrity_check`'s verdict, for the tests.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        self.conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(StoreError::sqlite("integrity_check"))
    }

    /// The highest inbox sequence number already admitted.
    pub fn watermark(&self) -> Result<i64, StoreError> {
        queries::meta(&self.conn, "ingest_watermark")
            .map_err(StoreError::sqlite("read the watermark"))
    }

    pub fn job(&self, request_id: &str) -> Result<Option<JobView>, StoreError> {
        queries::job(&self.conn, request_id).map_err(StoreError::sqlite("read a job"))
    }

    /// Counts of jobs by state, for the tests and `layerone status`.
    pub fn job_counts(&self) -> Result<Vec<(String, i64)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT state, count(*) FROM jobs GROUP BY state ORDER BY state")
            .map_err(StoreError::sqlite("count jobs"))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|rows| rows.collect())
            .map_err(StoreError::sqlite("count jobs"))?;
        Ok(rows)
    }
}

pub struct StateDb {
    pub(crate) conn: Connection,
    path: PathBuf,
    clock: Arc<dyn Clock>,
}
