//! The API's read-only view of state.db.
//!
//! Reads are short (copy rows out, release). A hot journal left by a crashed root commit shows
//! up as extended code 776 (`SQLITE_READONLY_ROLLBACK`), and a committing root as
//! `SQLITE_BUSY`; both are retried with a fresh connection after 5, 10, 20 and 40 ms, then
//! reported as [`ReadError::Unavailable`], which the API answers with 503 and `Retry-After`.
//! Never `immutable=1` or `nolock=1`: they would read torn state.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use registry::{AuditEntry, EventPage, JobView};
use rusqlite::Connection;

use crate::{StoreError, queries, sqlite};

const BACKOFF_MS: [u64; 4] = [5, 10, 20, 40];
const POOL: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// State is briefly unreadable (a hot journal until root's next pass, or a busy lock).
    #[error("state is briefly unavailable")]
    Unavailable { retry_after_secs: u32 },
    #[error(transparent)]
    Failed(#[from] StoreError),
}

pub struct StateReader {
    path: PathBuf,
    pool: Mutex<Vec<Connection>>,
}

impl StateReader {
    pub fn new(path: &Path) -> StateReader {
        StateReader {
            path: path.to_owned(),
            pool: Mutex::new(Vec::new()),
        }
    }

    /// Runs `f` on a pooled read-only connection, with the retry policy above.
    fn read<T>(
        &self,
        what: &str,
        f: impl Fn(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, ReadError> {
        let mut last = None;
        for (attempt, wait) in std::iter::once(0).chain(BACKOFF_MS).enumerate() {
            if attempt > 0 {
                std::thread::sleep(Duration::from_millis(wait));
            }
            let pooled = self
                .pool
                .lock()
                .expect("the reader pool lock is never poisoned: nothing panics while holding it")
                .pop();
            let conn = match pooled
                .map(Ok)
                .unwrap_or_else(|| sqlite::open_state_ro(&self.path))
            {
                Ok(conn) => conn,
                Err(e) if sqlite::is_transient(&e) || is_missing(&e) => {
                    last = Some(e);
                    continue;
                }
                Err(e) => {
                    return Err(StoreError::sqlite(format!(
                        "open {} read-only",
                        self.path.display()
                    ))(e)
                    .into());
                }
            };
            match f(&conn) {
                Ok(value) => {
                    let mut pool = self.pool.lock().expect(
                        "the reader pool lock is never poisoned: nothing panics while holding it",
                    );
                    if pool.len() < POOL {
                        pool.push(conn);
                    }
                    return Ok(value);
                }
                // A fresh connection next time: this one may hold a stale view of a hot journal.
                Err(e) if sqlite::is_transient(&e) => last = Some(e),
                Err(e) => return Err(StoreError::sqlite(what.to_owned())(e).into()),
            }
        }
        tracing::warn!(error = ?last, what, "state.db unreadable after retries; answering 503");
        Err(ReadError::Unavailable {
            retry_after_secs: 1,
        })
    }

    pub fn job(&self, request_id: &str) -> Result<Option<JobView>, ReadError> {
        self.read("read a job", |c| queries::job(c, request_id))
    }

    /// `None`: no such job; `Some(None)`: a job with no body (a rejected inbox row).
    pub fn job_body_sha(&self, request_id: &str) -> Result<Option<Option<String>>, ReadError> {
        self.read("read a job", |c| queries::job_body_sha(c, request_id))
    }

    /// A page of the events feed ([`queries::events`]).
    pub fn events(&self, after: i64, limit: u32) -> Result<EventPage, ReadError> {
        self.read("read events", |c| queries::events(c, after, limit))
    }

    pub fn audit(&self, after: i64, limit: u32) -> Result<Vec<AuditEntry>, ReadError> {
        self.read("read the audit trail", |c| queries::audit(c, after, limit))
    }

    /// Root's ingest watermark and its pending jobs by owner, read in one statement, so one
    /// snapshot: what admission counts an account's queue from ([`queries::backlog`]).
    pub fn backlog(&self) -> Result<crate::Backlog, ReadError> {
        self.read("read the backlog", queries::backlog)
    }

    pub fn watermark(&self) -> Result<i64, ReadError> {
        self.read("read the watermark", |c| {
            queries::meta(c, "ingest_watermark")
        })
    }

    /// Every resource of one family (copied out, the read released at once).
    pub fn resources_of_family(&self, family: &str) -> Result<Vec<crate::ResourceRow>, ReadError> {
        self.read("list resources", |c| {
            queries::resources_of_family(c, family)
        })
    }

    /// The modules this node's assignment names, each with whether it could run when the
    /// assignment was applied; `None` when the node has no assignment (it is outside any
    /// fleet, and runs every module). What the API checks a request against before it
    /// admits it, with [`crate::assignment::admits`]: the runner decides the same again
    /// before the job's handler runs.
    pub fn assigned_modules(&self) -> Result<Option<Vec<crate::AssignedModule>>, ReadError> {
        self.read("read the assignment", |c| {
            queries::assignment(c).map(|row| row.map(|row| row.modules))
        })
    }

    /// The node's assignment as root recorded it (its generation too), if it has one.
    pub fn assignment(&self) -> Result<Option<crate::AssignmentRow>, ReadError> {
        self.read("read the assignment", queries::assignment)
    }

    /// What the metrics report of state.db ([`crate::metrics::StateMetrics`]), in one read.
    pub fn metrics(&self) -> Result<crate::metrics::StateMetrics, ReadError> {
        self.read("read the metrics", |c| {
            let tx = c.unchecked_transaction()?;
            let metrics = crate::metrics::read(&tx);
            tx.finish()?;
            metrics
        })
    }

    /// The newest event cursor, so a waiting client can start from "now".
    pub fn last_cursor(&self) -> Result<i64, ReadError> {
        self.read("read the last cursor", |c| {
            c.query_row("SELECT coalesce(max(cursor), 0) FROM events", [], |r| {
                r.get(0)
            })
        })
    }
}

fn is_missing(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::CannotOpen)
}
