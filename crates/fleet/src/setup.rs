//! What the fleet creates on the broker, with the control plane's credential: the streams, the
//! buckets and each node's consumer. Nodes create nothing (their permissions could not let
//! them create a consumer with the right filter, and must not).

use std::time::Duration;

use async_nats::jetstream::{self, consumer, kv, stream};

use crate::protocol::{
    ACK_WAIT_SECS, ASSIGN_BUCKET, CATALOGUE_BUCKET, DEAD_LETTER_STREAM, DUPLICATE_WINDOW_SECS,
    EVENTS_STREAM, MAX_DELIVER, NODES_BUCKET, PRESENCE_BUCKET, REQUESTS_STREAM, TOKENS_BUCKET,
    TRUST_BUCKET, request_subject,
};

/// How long the events stream keeps an event: what a consumer that was away, or a node's
/// events published late, can still be read for.
pub const EVENTS_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);
/// How long a dead letter is kept.
pub const DEAD_LETTER_MAX_AGE: Duration = Duration::from_secs(30 * 24 * 3600);

fn stream_config(name: &str, subjects: &[&str], replicas: usize) -> stream::Config {
    stream::Config {
        name: name.to_owned(),
        subjects: subjects.iter().map(|s| (*s).to_owned()).collect(),
        storage: stream::StorageType::File,
        num_replicas: replicas,
        duplicate_window: Duration::from_secs(DUPLICATE_WINDOW_SECS),
        ..Default::default()
    }
}

/// Creates what is missing and leaves what exists, except each node's consumer, which it
/// brings to this version's configuration ([`ensure_node_consumer`]): run again, it changes
/// nothing.
pub async fn ensure_streams_and_buckets(
    js: &jetstream::Context,
    replicas: usize,
) -> anyhow::Result<()> {
    js.get_or_create_stream(stream::Config {
        retention: stream::RetentionPolicy::WorkQueue,
        ..stream_config(REQUESTS_STREAM, &["fleet.req.*"], replicas)
    })
    .await
    .map_err(|e| anyhow::anyhow!("creating {REQUESTS_STREAM}: {e}"))?;
    js.get_or_create_stream(stream::Config {
        max_age: EVENTS_MAX_AGE,
        ..stream_config(EVENTS_STREAM, &["fleet.evt.>"], replicas)
    })
    .await
    .map_err(|e| anyhow::anyhow!("creating {EVENTS_STREAM}: {e}"))?;
    js.get_or_create_stream(stream::Config {
        max_age: DEAD_LETTER_MAX_AGE,
        ..stream_config(DEAD_LETTER_STREAM, &["fleet.dlq.*"], replicas)
    })
    .await
    .map_err(|e| anyhow::anyhow!("creating {DEAD_LETTER_STREAM}: {e}"))?;
    for (bucket, history, limit_markers) in [
        (NODES_BUCKET, 1, None),
        (ASSIGN_BUCKET, 5, None),
        // A heartbeat's TTL is the node's; the marker of an expired one stays a minute.
        (PRESENCE_BUCKET, 1, Some(Duration::from_secs(60))),
        (TOKENS_BUCKET, 1, None),
        (CATALOGUE_BUCKET, 1, None),
        (TRUST_BUCKET, 5, None),
    ] {
        if js.get_key_value(bucket).await.is_ok() {
            continue;
        }
        js.create_key_value(kv::Config {
            bucket: bucket.to_owned(),
            history,
            num_replicas: replicas,
            limit_markers,
            ..Default::default()
        })
        .await
        .map_err(|e| anyhow::anyhow!("creating the bucket {bucket}: {e}"))?;
    }
    update_node_consumers(js).await
}

/// Brings every node's consumer that exists to this version's configuration (a fleet made by
/// an earlier version limited the deliveries of a request).
pub async fn update_node_consumers(js: &jetstream::Context) -> anyhow::Result<()> {
    use futures_util::TryStreamExt as _;
    let stream = js
        .get_stream(REQUESTS_STREAM)
        .await
        .map_err(|e| anyhow::anyhow!("reading {REQUESTS_STREAM}: {e}"))?;
    let names: Vec<String> = stream
        .consumer_names()
        .try_collect()
        .await
        .map_err(|e| anyhow::anyhow!("listing the consumers of {REQUESTS_STREAM}: {e}"))?;
    for name in names {
        ensure_node_consumer(js, &name).await?;
    }
    Ok(())
}

/// Node `name`'s durable consumer on its own subject, created, or updated to this
/// configuration if it exists with another (what is queued and pending on it stays).
pub async fn ensure_node_consumer(js: &jetstream::Context, name: &str) -> anyhow::Result<()> {
    let stream = js
        .get_stream(REQUESTS_STREAM)
        .await
        .map_err(|e| anyhow::anyhow!("reading {REQUESTS_STREAM}: {e}"))?;
    stream
        .create_consumer(consumer::pull::Config {
            durable_name: Some(name.to_owned()),
            filter_subject: request_subject(name),
            ack_policy: consumer::AckPolicy::Explicit,
            ack_wait: Duration::from_secs(ACK_WAIT_SECS),
            max_deliver: MAX_DELIVER,
            ..Default::default()
        })
        .await
        .map_err(|e| anyhow::anyhow!("creating the consumer of {name}: {e}"))?;
    Ok(())
}
