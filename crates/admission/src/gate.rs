//! Admission for a door other than HTTPS (the fleet daemon's broker consumer), with the reads
//! that door needs: the events feed, a job's view, the node's assignment, and a signal when
//! root's state changes.
//!
//! A [`Gate`] is the running API's own admission (the same registry, the same inbox and its
//! group commit, the same read of state.db), so a request that comes over the broker is
//! validated, made idempotent by its request id and refused on a reused id with another body
//! exactly as `POST /v1/jobs` does it.

use std::sync::Arc;

use registry::{Event, JobView, Origin, Owner};
use tokio::sync::watch;

use crate::{Admission, Refusal};

/// The running node's admission and reads, cheap to clone.
#[derive(Clone)]
pub struct Gate {
    admission: Arc<Admission>,
    changes: watch::Receiver<u64>,
    stopping: watch::Receiver<bool>,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate").finish_non_exhaustive()
    }
}

impl Gate {
    /// A gate on `admission`: `changes` is bumped whenever root's state directory changes,
    /// `stopping` set when the process is stopping.
    pub fn new(
        admission: Arc<Admission>,
        changes: watch::Receiver<u64>,
        stopping: watch::Receiver<bool>,
    ) -> Gate {
        Gate {
            admission,
            changes,
            stopping,
        }
    }

    /// Admits one request body, taken in at `origin` ([`Admission::admit`]).
    pub async fn submit(&self, body: &[u8], origin: Origin) -> Result<JobView, Refusal> {
        self.admission.admit(body, origin).await
    }

    /// Whose request `body` is, as admission validates it: the account (tenant) it belongs to,
    /// or [`Owner::Node`] for a node-scope request. `None` when it does not validate (admission
    /// refuses it for good). The fleet daemon keeps each account's requests in order by it.
    pub fn owner_of(&self, body: &[u8]) -> Option<Owner> {
        if body.len() > registry::envelope::MAX_BODY {
            return None;
        }
        self.admission
            .registry()
            .validate(body, self.admission.node_id())
            .ok()
            .map(|job| job.owner)
    }

    /// The events feed after `after`, as `GET /v1/events` reads it (a page may stop short
    /// of `limit` at its byte budget: ask again from the last event's cursor).
    ///
    /// Where root trimmed the feed past `after`, the events just after it are gone and the
    /// first one here is the oldest left: its cursor is past `after + 1`, which is the gap
    /// itself (`store::queries::trimmed_after`, the rule `GET /v1/events` answers 410
    /// `events_lost` by). The fleet daemon's publisher reads it so and publishes the gap as an
    /// `events_lost` fleet event before what follows.
    pub async fn events(&self, after: i64, limit: u32) -> Result<Vec<Event>, Refusal> {
        self.admission
            .blocking(move |admission| Ok(admission.reader().events(after, limit)?.events))
            .await
    }

    /// One job's view, if root has admitted it.
    pub async fn job(&self, request_id: String) -> Result<Option<JobView>, Refusal> {
        let view = self
            .admission
            .blocking(move |admission| Ok(admission.reader().job(&request_id)?))
            .await?;
        Ok(view.map(|view| self.admission.stamp(view)))
    }

    /// The node's assignment as root recorded it: each assigned module, ready or not with the
    /// reason, and the assignment's generation. Empty and 0 outside any fleet.
    #[allow(clippy::type_complexity)]
    pub async fn assignment(
        &self,
    ) -> Result<(Vec<(registry::Module, bool, Option<String>)>, u64), Refusal> {
        let row = self
            .admission
            .blocking(|admission| Ok(admission.reader().assignment()?))
            .await?;
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
        self.changes.clone()
    }

    /// Set when the process is stopping.
    pub fn stopping(&self) -> watch::Receiver<bool> {
        self.stopping.clone()
    }

    /// The node's id, which node-scope requests name.
    pub fn node_id(&self) -> &registry::Hex32 {
        self.admission.node_id()
    }
}
