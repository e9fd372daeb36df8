//! The crash points inside state.db's own transactions (ingest, claim, completion).
//!
//! The crash tests kill the real runner at a named point (`crates/crash`). The store does not
//! link that crate: the API links the store for its inbox and its reads, and the unprivileged
//! side links no test machinery. So the store names its own points with its own closed
//! [`Point`], and the runner installs, at its start and before any transaction, the hook that
//! maps each onto the crash point of the same name (`crash::Point`, `crates/runner/src/binary.rs`);
//! until then, and in every other process, a point costs one atomic load and does nothing.

use std::sync::OnceLock;

/// A point between two steps of one of state.db's transactions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    /// Ingest: the inbox rows admitted and the watermark moved, not yet committed.
    IngestBeforeCommit,
    /// Ingest committed.
    IngestAfterCommit,
    /// A job claimed (`running`) and committed, before its handler runs.
    ClaimAfterCommit,
    /// A job's completion written, not yet committed.
    CompleteBeforeCommit,
    /// A job's completion committed.
    CompleteAfterCommit,
}

static HOOK: OnceLock<fn(Point)> = OnceLock::new();

/// Makes every crash point of the store call `hook` (the runner's, which hands each to
/// `crash::point`). Only the first call counts.
pub fn install(hook: fn(Point)) {
    let _ = HOOK.set(hook);
}

/// Reached between two steps of a transaction: calls the installed hook, if any.
pub(crate) fn point(point: Point) {
    if let Some(hook) = HOOK.get() {
        hook(point);
    }
}
