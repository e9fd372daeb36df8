//! The node's admission, for a door other than HTTPS: the fleet daemon's broker consumer.
//!
//! A [`Gate`] is the running API's own state: the same registry, the same inbox and its group
//! commit, the same read of state.db, so a request that comes over the broker is validated,
//! made idempotent by its request id and refused on a reused id with another body exactly as
//! `POST /v1/jobs` does it, and the same request id sent through both doors is one job.

use std::sync::Arc;

use registry::{Event, JobView, Origin};
use serde::Serialize;
use tokio::sync::watch;

use crate::error::ApiError;
use crate::routes::{App, blocking, jobs};

/// A refusal in the API's words: the body `POST /v1/jobs` would answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Refusal {
    pub code: String,
    pub message: String,
    pub field: String,
    /// Whether the same request may succeed later (state or inbox briefly unavailable): a
    /// broker message is then redelivered, not terminated.
    #[serde(skip)]
    pub retryable: bool,
}

impl From<ApiError> for Refusal {
    fn from(e: ApiError) -> Self {
        let parts = e.parts();
        Refusal {
            retryable: parts.status.is_server_error(),
            code: parts.code.into_owned(),
            message: parts.message,
            field: parts.field,
        }
    }
}

/// The running API's admission and reads, cheap to clone.
#[derive(Clone)]
pub struct Gate {
    pub(crate) app: Arc<App>,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate").finish_non_exhaustive()
    }
}

impl Gate {
    /// Admits one request body, taken in at `origin`, as `POST /v1/jobs` would (the body size
    /// cap included): the job's view once the request is durable, or the refusal.
    pub async fn submit(&self, body: &[u8], origin: Origin) -> Result<JobView, Refusal> {
        if body.len() > registry::envelope::MAX_BODY {
            return Err(ApiError::BodyTooLarge {
                limit: registry::envelope::MAX_BODY,
            }
            .into());
        }
        Ok(jobs::admit(&self.app, body, origin).await?)
    }

    /// The events feed after `after`, as `GET /v1/events` reads it (a page may stop short
    /// of `limit` at its byte budget: ask again from the last event's cursor).
    pub async fn events(&self, after: i64, limit: u32) -> Result<Vec<Event>, Refusal> {
        Ok(blocking(&self.app, move |app| {
            Ok(app.reader.events(after, limit)?.events)
        })
        .await?)
    }

    /// One job's view, if root has admitted it.
    pub async fn job(&self, request_id: String) -> Result<Option<JobView>, Refusal> {
        let view = blocking(&self.app, move |app| Ok(app.reader.job(&request_id)?)).await?;
        Ok(view.map(|view| self.app.stamp(view)))
    }

    /// The node's assignment as root recorded it: each assigned module, ready or not with the
    /// reason, and the assignment's generation. Empty and 0 outside any fleet.
    #[allow(clippy::type_complexity)]
    pub async fn assignment(
        &self,
    ) -> Result<(Vec<(registry::Module, bool, Option<String>)>, u64), Refusal> {
        let row = blocking(&self.app, |app| Ok(app.reader.assignment()?)).await?;
        Ok(row.map_or((Vec::new(), 0), |row| {
            (
                row.modules
                    .into_iter()
                    .map(|m| (m.module, m.ready, m.reason))
                    .collect(),
                row.generation,
            )
        }))
    }

    /// Bumped whenever root's state directory changes: wait on it instead of polling.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.app.changes.clone()
    }

    /// Set when the API is stopping.
    pub fn stopping(&self) -> watch::Receiver<bool> {
        self.app.stopping.subscribe()
    }

    /// The node's id, which node-scope requests name.
    pub fn node_id(&self) -> &registry::Hex32 {
        &self.app.node_id
    }
}
