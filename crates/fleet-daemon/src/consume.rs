//! The node's queue: one durable pull consumer (named after the node, created by the fleet)
//! on the work-queue stream. Every request goes through the API's admission, in the order the
//! broker delivers them, so one account's requests keep their order.
//!
//! - admitted (or already known, the same job): an `accepted` event with the job's view, and
//!   the message acknowledged after the inbox COMMIT;
//! - refused (validation, a reused request id with another body): the refusal is put in the
//!   outbox as a `refused` event, then the message is terminated, never redelivered;
//! - a refusal that may pass later (`Refusal::retryable`: the inbox or state briefly
//!   unavailable, the disk full): not acknowledged, redelivered a second later;
//! - "your assignment changed": the assignment is read from its bucket and handed to root;
//! - "the fleet's trust changed": the trust bundle is read again ([`super::trust`]).

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::AckKind;
use async_nats::jetstream::consumer::PullConsumer;
use futures_util::StreamExt;
use registry::Origin;

use super::Shared;
use fleet::protocol::{
    ASSIGN_BUCKET, Assignment, EventBody, KIND_ASSIGNMENT, KIND_HEADER, KIND_TRUST, REQUESTS_STREAM,
};

/// How often the assignment and the trust bundle are read even without being told they
/// changed.
const ASSIGNMENT_POLL: Duration = Duration::from_secs(30);

pub(super) async fn run(shared: Arc<Shared>) -> anyhow::Result<()> {
    let stream = shared
        .js
        .get_stream_no_info(REQUESTS_STREAM)
        .await
        .map_err(|e| anyhow::anyhow!("the requests stream: {e}"))?;
    let consumer: PullConsumer = stream
        .get_consumer(shared.node())
        .await
        .map_err(|e| anyhow::anyhow!("the node's consumer: {e}"))?;
    let mut messages = consumer
        .messages()
        .await
        .map_err(|e| anyhow::anyhow!("pulling the node's queue: {e}"))?;
    apply_assignment(&shared).await;
    let mut poll = tokio::time::interval(ASSIGNMENT_POLL);
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let message = tokio::select! {
            message = messages.next() => message,
            _ = poll.tick() => {
                apply_assignment(&shared).await;
                super::trust::refresh(&shared).await;
                continue;
            }
        };
        let Some(message) = message else {
            return Err(anyhow::anyhow!("the node's queue ended"));
        };
        let message = match message {
            Ok(message) => message,
            Err(e) => {
                // A missed heartbeat of the pull, the broker restarting: the stream resumes.
                tracing::warn!(error = %e, "pulling the node's queue");
                continue;
            }
        };
        handle(&shared, message).await?;
    }
}

async fn handle(shared: &Shared, message: async_nats::jetstream::Message) -> anyhow::Result<()> {
    let kind = message
        .headers
        .as_ref()
        .and_then(|h| h.get(KIND_HEADER))
        .map(|v| v.as_str().to_owned());
    if kind.as_deref() == Some(KIND_ASSIGNMENT) {
        apply_assignment(shared).await;
        ack(&message, AckKind::Ack).await;
        return Ok(());
    }
    if kind.as_deref() == Some(KIND_TRUST) {
        super::trust::refresh(shared).await;
        ack(&message, AckKind::Ack).await;
        return Ok(());
    }
    // The sequence the broker gave the request: with it the audit trail leads back to the
    // stream's copy. A message without one (no reply subject) is redelivered, never guessed at.
    let sequence = match message.info() {
        Ok(info) => info.stream_sequence,
        Err(e) => {
            tracing::warn!(error = %e, "a request without its stream sequence; redelivered");
            ack(&message, AckKind::Nak(Some(Duration::from_secs(1)))).await;
            return Ok(());
        }
    };
    let origin = Origin::Fleet {
        stream: REQUESTS_STREAM.to_owned(),
        sequence,
    };
    match shared.gate.submit(&message.payload, origin).await {
        Ok(job) => {
            shared
                .emit(EventBody::Accepted {
                    request_id: job.request_id.clone(),
                    job,
                })
                .await?;
            ack(&message, AckKind::Ack).await;
        }
        Err(refusal) if refusal.retryable() => {
            tracing::warn!(
                code = %refusal.code,
                "the node cannot take a request now; it will be redelivered"
            );
            ack(&message, AckKind::Nak(Some(Duration::from_secs(1)))).await;
        }
        Err(refusal) => {
            let request_id = serde_json::from_slice::<serde_json::Value>(&message.payload)
                .ok()
                .and_then(|v| v.get("request_id")?.as_str().map(str::to_owned));
            shared
                .emit(EventBody::Refused {
                    request_id,
                    code: refusal.code.into_owned(),
                    message: refusal.message,
                    field: refusal.field,
                })
                .await?;
            ack(&message, AckKind::Term).await;
        }
    }
    Ok(())
}

async fn ack(message: &async_nats::jetstream::Message, kind: AckKind) {
    if let Err(e) = message.ack_with(kind).await {
        // Not acknowledged: the broker redelivers, and admission is idempotent.
        tracing::warn!(error = %e, "acknowledging a request");
    }
}

/// Reads this node's assignment (a direct get of its own key) and hands it to root as a
/// node-scope request. The request id is derived from the signed assignment, so reading the
/// same one again is the same job.
async fn apply_assignment(shared: &Shared) {
    let (sequence, payload) = match super::read_key(&shared.js, ASSIGN_BUCKET, shared.node()).await
    {
        Ok(Some(read)) => read,
        Ok(None) => return,
        Err(e) => {
            tracing::warn!(error = %format!("{e:#}"), "reading the node's assignment");
            return;
        }
    };
    let assignment: Assignment = match serde_json::from_slice(&payload) {
        Ok(a) => a,
        Err(e) => {
            tracing::error!(error = %e, "the node's assignment is not an assignment");
            return;
        }
    };
    let body = assignment_request(&assignment, &shared.credentials.identity.node_id);
    let origin = Origin::Fleet {
        stream: format!("KV_{ASSIGN_BUCKET}"),
        sequence,
    };
    match shared.gate.submit(body.as_bytes(), origin).await {
        Ok(_) => {}
        Err(refusal) => {
            tracing::error!(
                code = %refusal.code,
                message = refusal.message,
                "the node refused its assignment"
            );
            let _ = shared
                .emit(EventBody::AssignmentRefused {
                    generation: assignment.generation,
                    code: refusal.code.into_owned(),
                    message: refusal.message,
                })
                .await;
        }
    }
}

/// The `apply_assignment` request of a signed assignment.
pub(crate) fn assignment_request(assignment: &Assignment, node_id: &str) -> String {
    let id_source = format!(
        "{}\n{}\n{}",
        assignment.node, assignment.generation, assignment.signature
    );
    let request_id = &fleet::token::sha256_hex(id_source.as_bytes())[..32];
    serde_json::json!({
        "request_id": request_id,
        "action": "apply_assignment",
        "node_id": node_id,
        "resource": {
            "id": node_id,
            "node": assignment.node,
            "generation": assignment.generation,
            "modules": assignment.modules,
            "signature": assignment.signature,
        }
    })
    .to_string()
}
