//! The node's admission, whatever the door: the API's `POST /v1/jobs` and the fleet daemon's
//! broker consumer both come here, so a request is validated, checked against the node's
//! fleet assignment, made idempotent by its request id and committed to the inbox the same
//! way through either, and the same request id sent through both is one job.
//!
//! - [`Admission`]: validate, answer from state.db a request root already has, else hand it
//!   to the inbox's group commit and answer after COMMIT;
//! - [`Refusal`]: why a request was not admitted, in no transport's words: a stable `code`,
//!   the `field`, a `message`, its [`RefusalKind`] and, when the same request may succeed
//!   later, how long to wait. The API maps it to an HTTP status, the fleet daemon to
//!   ack, nak or term;
//! - [`Gate`]: admission and the reads a door other than HTTPS needs (the events feed, a
//!   job's view, the assignment, and a signal when root's state changes).
//!
//! Nothing here speaks HTTP or links a server: the fleet daemon links this crate, not the API.

mod gate;
mod refusal;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use inbox::{Inbox, Receipt};
use registry::{Hex32, JobView, Origin, Registry};
use store::StateReader;
use tokio::sync::oneshot;

pub use gate::Gate;
pub use refusal::{QueueFull, Refusal, RefusalKind};

/// The node's admission: the registry it validates with, the node's id, the inbox it commits
/// to and the read of state.db it answers known requests from. Shared by every door.
pub struct Admission {
    registry: &'static Registry,
    node_id: Hex32,
    inbox: Inbox,
    reader: StateReader,
    /// Each operation's [`registry::CatalogueEntry::sha256`], by name, computed once.
    operation_sha256: OnceLock<HashMap<&'static str, String>>,
    /// How many requests were refused, by code, since the process started.
    refused: Mutex<BTreeMap<String, u64>>,
}

impl std::fmt::Debug for Admission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admission")
            .field("node_id", &self.node_id)
            .finish_non_exhaustive()
    }
}

impl Admission {
    pub fn new(
        registry: &'static Registry,
        node_id: Hex32,
        inbox: Inbox,
        reader: StateReader,
    ) -> Admission {
        Admission {
            registry,
            node_id,
            inbox,
            reader,
            operation_sha256: OnceLock::new(),
            refused: Mutex::new(BTreeMap::new()),
        }
    }

    /// How many requests were refused since the process started, by code.
    pub fn refusals(&self) -> BTreeMap<String, u64> {
        self.refused
            .lock()
            .expect("the refusal count's lock is never poisoned: nothing panics while holding it")
            .clone()
    }

    pub fn registry(&self) -> &'static Registry {
        self.registry
    }

    /// The node's id, which node-scope requests name.
    pub fn node_id(&self) -> &Hex32 {
        &self.node_id
    }

    /// The inbox requests are committed to.
    pub fn inbox(&self) -> &Inbox {
        &self.inbox
    }

    /// The read-only view of root's state.db.
    pub fn reader(&self) -> &StateReader {
        &self.reader
    }

    /// A job view as this node answers it: with the version of its operation here.
    pub fn stamp(&self, mut view: JobView) -> JobView {
        let versions = self.operation_sha256.get_or_init(|| {
            self.registry
                .catalogue()
                .into_iter()
                .map(|entry| (entry.operation, entry.sha256))
                .collect()
        });
        view.operation_sha256 = versions.get(view.operation.as_str()).cloned();
        view
    }

    /// Runs a blocking read of state.db or the inbox (SQLite, with its short retry sleeps)
    /// off the async workers.
    pub async fn blocking<T, F>(self: &Arc<Self>, f: F) -> Result<T, Refusal>
    where
        T: Send + 'static,
        F: FnOnce(&Admission) -> Result<T, Refusal> + Send + 'static,
    {
        let admission = self.clone();
        match tokio::task::spawn_blocking(move || f(&admission)).await {
            Ok(result) => result,
            Err(e) => {
                tracing::error!(error = %e, "a blocking store call did not finish");
                Err(Refusal::state_unavailable(1))
            }
        }
    }

    /// Admits one request body taken in at `origin`: the job's view once the request is
    /// durable (or root already has it), or the refusal. The body size cap is checked here
    /// too, so a door that does not stream its bodies cannot pass a larger one.
    pub async fn admit(self: &Arc<Self>, body: &[u8], origin: Origin) -> Result<JobView, Refusal> {
        let admitted = if body.len() > registry::envelope::MAX_BODY {
            Err(Refusal::too_large())
        } else {
            self.admit_unstamped(body, origin).await
        };
        match admitted {
            Ok(view) => Ok(self.stamp(view)),
            Err(refusal) => {
                *self
                    .refused
                    .lock()
                    .expect("the refusal count's lock is never poisoned: nothing panics while holding it")
                    .entry(refusal.code.clone().into_owned())
                    .or_default() += 1;
                Err(refusal)
            }
        }
    }

    async fn admit_unstamped(
        self: &Arc<Self>,
        body: &[u8],
        origin: Origin,
    ) -> Result<JobView, Refusal> {
        let job = self.registry.validate(body, &self.node_id).inspect_err(|e| {
            // The API cannot write the audit trail (state.db is root's): a node-scope request
            // refused here is logged instead. Root records every one that reaches the inbox.
            if e.code == "wrong_node" {
                tracing::warn!(target: "audit", code = %e.code, "refused a node-scope request for another node");
            }
        })?;
        let request_id = job.request_id.to_string();
        let sha = job.body_sha256.clone();
        let operation = job.operation;
        self.refused_by_assignment(job.module).await?;

        if let Some(view) = self.admitted(&request_id, &sha).await? {
            return Ok(view);
        }

        let (tx, rx) = oneshot::channel();
        self.inbox.admit(job, origin, move |result| {
            // The caller may be gone (a client disconnected); the request is durable all the
            // same.
            let _ = tx.send(result);
        });
        let receipt = match rx.await {
            Ok(Ok(receipt)) => receipt,
            Ok(Err(store::StoreError::DiskFull {
                filesystem,
                context,
            })) => {
                tracing::warn!(request_id, %filesystem, "refused on a full disk: {context}");
                return Err(Refusal::disk_full(filesystem));
            }
            Ok(Err(e)) => {
                tracing::error!(error = ?e, request_id, "the inbox did not take a request");
                return Err(Refusal::inbox_unavailable());
            }
            Err(_) => {
                tracing::error!(
                    request_id,
                    "the inbox writer dropped a request without answering"
                );
                return Err(Refusal::inbox_unavailable());
            }
        };
        match receipt {
            Receipt::Conflict => Err(Refusal::conflict()),
            Receipt::QueueFull { limit, cap, queued } => {
                Err(Refusal::queue_full(limit, cap, queued))
            }
            Receipt::Received { received_at, .. } | Receipt::Duplicate { received_at, .. } => {
                // Look again: root may have admitted this request id between the first look
                // and the commit (a duplicate of one received long ago, or a prune in
                // between). The request is durable now, so a state.db that is briefly
                // unreadable only means the received view is answered.
                match self.admitted(&request_id, &sha).await {
                    Ok(Some(view)) => Ok(view),
                    Err(refusal) if refusal.kind == RefusalKind::Conflict => Err(refusal),
                    Ok(None) | Err(_) => Ok(JobView::received(&request_id, operation, received_at)),
                }
            }
        }
    }

    /// The node's fleet assignment, as root recorded it, refuses an operation of a module it
    /// does not assign, or of one that cannot run here: the same decision root takes
    /// (`store::assignment::admits`), said at once. A state.db that cannot be read now lets
    /// the request through: root decides again before any handler runs.
    async fn refused_by_assignment(
        self: &Arc<Self>,
        module: registry::Module,
    ) -> Result<(), Refusal> {
        if module == registry::Module::Core {
            return Ok(());
        }
        let assigned = self
            .blocking(|admission| Ok(admission.reader.assigned_modules()?))
            .await;
        match assigned {
            Ok(assigned) => {
                store::assignment::admits(assigned.as_deref(), module).map_err(Refusal::module)
            }
            Err(_) => Ok(()),
        }
    }

    /// State.db's view of a request root has admitted: `Ok(None)` if it has not, a conflict
    /// if it was admitted with another body (or is a rejected inbox row, which has none).
    async fn admitted(
        self: &Arc<Self>,
        request_id: &str,
        sha: &str,
    ) -> Result<Option<JobView>, Refusal> {
        let (request_id, sha) = (request_id.to_owned(), sha.to_owned());
        self.blocking(
            move |admission| match admission.reader.job_body_sha(&request_id)? {
                None => Ok(None),
                Some(Some(existing)) if existing == sha => Ok(admission.reader.job(&request_id)?),
                Some(_) => Err(Refusal::conflict()),
            },
        )
        .await
    }
}
