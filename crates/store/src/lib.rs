//! What both sides of the node share on disk: where the files live, the blobs, and the
//! read-only view of root's `state.db` (docs/design.md section 6).
//!
//! The node's two databases are written by two crates, one per side: `inbox` (inbox.db,
//! the API's) and `state` (state.db, root's, which only the runner opens read-write). This
//! crate holds what neither side owns alone, and nothing that writes state.db:
//!
//! - [`read`]: the API's read-only view of `state.db`, with the retry and the clean 503 that a
//!   rollback journal calls for; [`queries`] and [`metrics`], the reads it shares with root;
//! - [`rows`]: the rows both sides read (a resource row, each family's stored shape);
//! - [`blobs`]: content-addressed uploads (`blobs/in`) and products (`blobs/out`);
//! - [`layout`]: where the files live and with which owners and modes;
//! - [`assignment`]: the node's assignment of modules as stored, and whether a module's
//!   job may run, decided alike by root and the API;
//! - [`disk`], [`sqlite`]: the free-space margins and the SQLite connections' settings.
//!
//! Nothing here assumes HTTP: the API and the fleet daemon admit through the `admission`
//! crate.

pub mod assignment;
pub mod blobs;
pub mod disk;
pub mod layout;
pub mod metrics;
pub mod queries;
pub mod read;
pub mod rows;
pub mod sqlite;

pub use assignment::{AssignedModule, AssignmentRow};
pub use layout::{ApiIdentity, Layout, LayoutEntry, LayoutOwner, Side};
pub use read::{ReadError, StateReader};
pub use rows::{Backlog, FullFileSystem, ResourceRow, StoredRow, row_type};

use std::path::PathBuf;

/// Errors of the store. Busy and hot-journal conditions are their own variant so callers can
/// answer 503 or retry the step instead of treating them as corruption.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{context}")]
    Sqlite {
        context: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("the database is busy or being recovered: {context}")]
    Busy { context: String },
    #[error("cannot prepare {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("state.db holds a value root did not write: {0}")]
    Corrupt(String),
    /// A resource row that does not read back as its family's stored shape
    /// ([`StoredRow`]): root did not write it so.
    #[error("the {family} row {id} does not have its family's stored shape")]
    InvalidRow {
        family: String,
        id: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("the inbox writer has stopped")]
    WriterGone,
    /// The file system holding `filesystem` has no room for the write (`ENOSPC`,
    /// `SQLITE_FULL`), or less than its margin ([`disk::min_free`]).
    #[error("the {filesystem} file system is full: {context}")]
    DiskFull {
        filesystem: registry::FileSystem,
        context: String,
    },
    /// inbox.db holds something other than the one table the API creates (a view, a trigger,
    /// another table or column): root refuses to read it at all, since a hostile schema can
    /// make a read endless.
    #[error("inbox.db does not have the API's schema, so root does not read it: {0}")]
    HostileInbox(String),
}

impl StoreError {
    /// Maps a SQLite error to [`StoreError::Busy`] when it is transient, else
    /// [`StoreError::Sqlite`], with `context`.
    pub fn sqlite(context: impl Into<String>) -> impl FnOnce(rusqlite::Error) -> StoreError {
        let context = context.into();
        move |source| {
            if sqlite::is_transient(&source) {
                StoreError::Busy { context }
            } else {
                StoreError::Sqlite { context, source }
            }
        }
    }
}
