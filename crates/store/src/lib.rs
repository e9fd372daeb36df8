//! The node's two databases (DESIGN.md section 6).
//!
//! - [`inbox`]: `inbox.db`, owned by the unprivileged API. The API admits requests into it
//!   through one group-commit writer thread; root reads it read-only, as hostile input.
//! - [`state`]: `state.db`, owned by root. Admission, generations, supersession, claims,
//!   completions, resources and the events feed. Only the runner writes it. Handlers read
//!   the resource rows typed through one [`View`], which includes the changes of the
//!   running job and of its batch that are not committed yet ([`Pending`]).
//! - [`read`]: the API's read-only view of `state.db`, with the retry and the clean 503 that a
//!   rollback journal calls for.
//! - [`blobs`]: content-addressed uploads (`blobs/in`) and products (`blobs/out`).
//! - [`layout`]: where the files live and with which owners and modes.
//! - [`assignment`]: the node's assignment of modules as stored, and whether a module's
//!   job may run, decided alike by root and the API.
//! - [`identities`]: the user names, uids and groups the node handed out or must never hand
//!   out, written before the OS change they describe.
//!
//! Nothing here assumes HTTP: the API and, later, the fleet daemon call the same admission.

pub mod assignment;
pub mod blobs;
pub mod crash_points;
pub mod disk;
pub mod identities;
pub mod inbox;
pub mod layout;
pub mod metrics;
mod migrations;
mod queries;
pub mod read;
pub mod sqlite;
pub mod state;

pub use assignment::{AssignedModule, AssignmentRow};
pub use identities::{IdentityKind, IdentityRow};
pub use inbox::{Admission, Inbox, InboxRow};
pub use layout::{ApiIdentity, Layout, LayoutEntry, LayoutOwner, Side};
pub use migrations::STATE_SCHEMA_VERSION;
pub use read::{ReadError, StateReader};
pub use state::{ClaimedJob, IngestReport, Outcome, ResourceChange, ResourceRow, StateDb};
pub use state::{OuterJob, Pending, ResourceKey, Stored, StoredRow, View};

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
    pub(crate) fn sqlite(context: impl Into<String>) -> impl FnOnce(rusqlite::Error) -> StoreError {
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
