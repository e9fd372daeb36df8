//! The crash points inside state.db's own transactions (ingest, claim, completion).
//!
//! The crash tests kill the real runner at a named point (`crates/crash`). The store does not
//! link that crate: the API links the store for its inbox and its reads, and the unprivileged
//! side links no test machinery. The runner hands `crash::point` to [`install`] at its start,
//! before any transaction; until then, and in every other process, a point costs one atomic
//! load and does nothing.

use std::sync::OnceLock;

static POINT: OnceLock<fn(&'static str)> = OnceLock::new();

/// Makes every crash point of the store call `point` (the runner gives `crash::point`). Only
/// the first call counts.
pub fn install(point: fn(&'static str)) {
    let _ = POINT.set(point);
}

/// Reached between two steps of a transaction: calls the installed point, if any.
pub(crate) fn point(name: &'static str) {
    if let Some(point) = POINT.get() {
        point(name);
    }
}
