//! Requests to a node's queue and their answers on the events stream, as any client of the
//! fleet sends and reads them: the control plane (`layerone fleet submit`) and an operator
//! session alike, each under its own credential.

use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::jetstream::{self, consumer};
use futures_util::StreamExt as _;

use crate::protocol::{self, EVENTS_STREAM, EventBody, FleetEvent};

/// The request's `Nats-Msg-Id`: the broker takes the same body sent again once; the same request
/// id with another body reaches the node, which refuses it (`request_id_conflict`).
pub fn request_msg_id(node: &str, request_id: &str, body: &[u8]) -> String {
    let body_sha = crate::token::sha256_hex(body);
    format!("request.{node}.{request_id}.{}", &body_sha[..16])
}

/// Puts `body` (a request whose id is `request_id`) on `node`'s queue: its stream sequence, and
/// whether the broker had it already.
pub async fn publish(
    js: &jetstream::Context,
    node: &str,
    request_id: &str,
    body: &[u8],
) -> anyhow::Result<(u64, bool)> {
    let mut headers = HeaderMap::new();
    headers.insert(
        "Nats-Msg-Id",
        request_msg_id(node, request_id, body).as_str(),
    );
    let ack = js
        .publish_with_headers(
            protocol::request_subject(node),
            headers,
            body.to_vec().into(),
        )
        .await?
        .await
        .map_err(|e| anyhow::anyhow!("the broker did not take the request: {e}"))?;
    Ok((ack.sequence, ack.duplicate))
}

/// The events stream's last sequence number: follow from after it.
pub async fn events_tail(js: &jetstream::Context) -> anyhow::Result<u64> {
    let stream = js.get_stream(EVENTS_STREAM).await?;
    Ok(stream.get_info().await?.state.last_sequence)
}

/// The events after `after` (a stream sequence), optionally of one node, in order.
pub async fn follow(
    js: &jetstream::Context,
    after: u64,
    node: Option<&str>,
) -> anyhow::Result<impl futures_util::Stream<Item = anyhow::Result<(u64, FleetEvent)>> + use<>> {
    let stream = js.get_stream(EVENTS_STREAM).await?;
    let filter = match node {
        Some(node) => format!("fleet.evt.node.{node}.>"),
        None => "fleet.evt.>".to_owned(),
    };
    let consumer = stream
        .create_consumer(consumer::pull::OrderedConfig {
            filter_subject: filter,
            deliver_policy: consumer::DeliverPolicy::ByStartSequence {
                start_sequence: after + 1,
            },
            ..Default::default()
        })
        .await?;
    let messages = consumer.messages().await?;
    Ok(messages.map(|m| {
        let m = m.map_err(|e| anyhow::anyhow!("reading the events stream: {e}"))?;
        let seq = m
            .info()
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .stream_sequence;
        let event: FleetEvent = serde_json::from_slice(&m.payload)
            .map_err(|e| anyhow::anyhow!("an event that is not one: {e}"))?;
        Ok((seq, event))
    }))
}

/// Whether `event` is the final word on `request_id`: its job's final state, or the node's
/// refusal.
pub fn is_final(event: &FleetEvent, request_id: &str) -> bool {
    match &event.body {
        EventBody::Job {
            request_id: id,
            state,
            ..
        } => id == request_id && state.is_terminal(),
        EventBody::Accepted {
            request_id: id,
            job,
        } => id == request_id && job.state.is_terminal(),
        EventBody::Refused {
            request_id: Some(id),
            ..
        } => id == request_id,
        _ => false,
    }
}

/// Waits for the final word on `request_id` from `node`, on the events after `after`.
pub async fn wait(
    js: &jetstream::Context,
    node: &str,
    request_id: &str,
    after: u64,
    timeout: Duration,
) -> anyhow::Result<FleetEvent> {
    let mut events = Box::pin(follow(js, after, Some(node)).await?);
    let found = tokio::time::timeout(timeout, async {
        while let Some(event) = events.next().await {
            let (_, event) = event?;
            if is_final(&event, request_id) {
                return Ok(event);
            }
        }
        Err(anyhow::anyhow!("the events stream ended"))
    })
    .await;
    found.map_err(|_| anyhow::anyhow!("no final event for {request_id} within {timeout:?}"))?
}
