//! Events out: root's events feed (every job change, with the job's result or error once it is
//! final, every drift finding) and the daemon's own outbox, published to the events stream in
//! order, each under a message id derived from where it comes from. The cursor and the outbox
//! move only after the broker acknowledged, so a restart or an outage publishes again what was
//! not acknowledged, and the stream's de-duplication stores it once.

use std::sync::Arc;
use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::jetstream::context::PublishAckFuture;
use registry::{EventKind, JobState};

use super::Shared;
use fleet::protocol::{self, EventBody, FleetEvent};

/// The most events one round publishes before it waits for their acks.
const ROUND: usize = 256;
/// The longest the publisher sleeps without looking, whatever it was told. It is woken by what
/// it publishes: root's commits (the API's watch of the state directory, which changes every
/// second where the directory cannot be watched) and the daemon's own events (the outbox's
/// notification); a failed round is tried again a second later.
const SAFETY: Duration = Duration::from_secs(60);

pub(super) async fn run(shared: Arc<Shared>) -> anyhow::Result<()> {
    let mut changes = shared.gate.changes();
    loop {
        changes.borrow_and_update();
        let published = match round(&shared).await {
            Ok(n) => {
                shared.set_link(true).await;
                n
            }
            Err(e) => {
                shared.set_link(false).await;
                tracing::warn!(error = %format!("{e:#}"), "publishing events; trying again");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        if published == 0 {
            tokio::select! {
                _ = changes.changed() => {}
                () = shared.outbox_changed.notified() => {}
                () = tokio::time::sleep(SAFETY) => {}
            }
        }
    }
}

/// Publishes what the outbox holds, then one round of root's feed. Returns how many events.
async fn round(shared: &Shared) -> anyhow::Result<usize> {
    let mut published = drain_outbox(shared).await?;
    let cursor = shared.outbox.lock().await.cursor()?;
    let events = shared
        .gate
        .events(cursor, ROUND as u32)
        .await
        .map_err(|r| anyhow::anyhow!("reading the events feed: {}", r.message))?;
    let Some(last) = events.last().map(|e| e.cursor) else {
        return Ok(published);
    };
    let mut acks = Vec::new();
    // Cursors are consecutive but where root trimmed its feed: a cut-off node that fell
    // behind the trim says what the fleet will never see.
    if let Some(first) = events.first().map(|e| e.cursor)
        && first > cursor + 1
    {
        let body = EventBody::EventsLost {
            after: cursor,
            before: first,
        };
        let id = format!("{}.s.{cursor}.lost", shared.node());
        acks.push(send(shared, id, super::now_ms(), body).await?);
    }
    for event in events {
        for (i, body) in derive(shared, &event).await?.into_iter().enumerate() {
            let id = if i == 0 {
                format!("{}.s.{}", shared.node(), event.cursor)
            } else {
                format!("{}.s.{}.{i}", shared.node(), event.cursor)
            };
            acks.push(send(shared, id, event.at_ms, body).await?);
        }
    }
    published += acks.len();
    wait_all(acks).await?;
    shared.outbox.lock().await.set_cursor(last)?;
    Ok(published)
}

/// Publishes the outbox's events and forgets them once stored.
pub(super) async fn drain_outbox(shared: &Shared) -> anyhow::Result<usize> {
    let mut published = 0;
    loop {
        let pending = shared.outbox.lock().await.pending(ROUND)?;
        let Some(last) = pending.last().map(|p| p.seq) else {
            return Ok(published);
        };
        let mut acks = Vec::new();
        for p in pending {
            let id = format!("{}.o.{}", shared.node(), p.seq);
            acks.push(send(shared, id, p.at_ms, p.body).await?);
        }
        published += acks.len();
        wait_all(acks).await?;
        shared.outbox.lock().await.remove_through(last)?;
    }
}

/// The fleet events of one entry of root's feed: the job change itself, and for an applied
/// assignment what it means (the assignment applied, each module ready or unavailable).
async fn derive(shared: &Shared, event: &registry::Event) -> anyhow::Result<Vec<EventBody>> {
    match event.kind {
        EventKind::Drift | EventKind::DriftResolved => Ok(vec![EventBody::Drift {
            event: event.clone(),
        }]),
        EventKind::DiskFull | EventKind::DiskOk => Ok(vec![EventBody::Disk {
            event: event.clone(),
        }]),
        EventKind::Job => {
            let (Some(request_id), Some(operation), Some(state)) =
                (&event.request_id, &event.operation, event.state)
            else {
                return Ok(vec![]);
            };
            let job = if state.is_terminal() {
                shared
                    .gate
                    .job(request_id.clone())
                    .await
                    .map_err(|r| anyhow::anyhow!("reading job {request_id}: {}", r.message))?
            } else {
                None
            };
            let mut out = vec![];
            if operation == "apply_assignment" {
                out.extend(assignment_events(state, job.as_ref()));
            }
            out.insert(
                0,
                EventBody::Job {
                    request_id: request_id.clone(),
                    operation: operation.clone(),
                    state,
                    job,
                },
            );
            Ok(out)
        }
    }
}

fn assignment_events(state: JobState, job: Option<&registry::JobView>) -> Vec<EventBody> {
    let Some(job) = job else { return vec![] };
    let generation = job.generation.map_or(0, |g| g.max(0) as u64);
    match state {
        JobState::Succeeded => {
            let Some(result) = &job.result else {
                return vec![];
            };
            let modules: Vec<protocol::ModuleReport> = result
                .get("modules")
                .and_then(|m| serde_json::from_value(m.clone()).ok())
                .unwrap_or_default();
            let generation = result
                .get("generation")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(generation);
            let mut out = vec![EventBody::AssignmentApplied {
                generation,
                modules: modules.iter().map(|m| m.module).collect(),
            }];
            out.extend(modules.into_iter().map(|m| match (m.ready, m.reason) {
                (true, _) => EventBody::ModuleReady { module: m.module },
                (false, reason) => EventBody::ModuleUnavailable {
                    module: m.module,
                    reason: reason.unwrap_or_else(|| "not ready".into()),
                },
            }));
            out
        }
        JobState::Failed => {
            let (code, message) = job
                .error
                .as_ref()
                .map(|e| (e.code.to_string(), e.message.clone()))
                .unwrap_or_default();
            vec![EventBody::AssignmentRefused {
                generation,
                code,
                message,
            }]
        }
        _ => vec![],
    }
}

async fn send(
    shared: &Shared,
    id: String,
    at_ms: i64,
    body: EventBody,
) -> anyhow::Result<PublishAckFuture> {
    let subject = protocol::node_events_subject(shared.node(), body.kind());
    let event = FleetEvent {
        id: id.clone(),
        node: shared.node().to_owned(),
        at_ms,
        body,
    };
    let mut headers = HeaderMap::new();
    headers.insert("Nats-Msg-Id", id.as_str());
    shared
        .js
        .publish_with_headers(subject, headers, serde_json::to_vec(&event)?.into())
        .await
        .map_err(|e| anyhow::anyhow!("publishing event {id}: {e}"))
}

async fn wait_all(acks: Vec<PublishAckFuture>) -> anyhow::Result<()> {
    for ack in acks {
        ack.await
            .map_err(|e| anyhow::anyhow!("the broker did not store an event: {e}"))?;
    }
    Ok(())
}
