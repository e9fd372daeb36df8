//! The fleet's state as a reader sees it: the nodes of `fleet_nodes`, what each reports in
//! `fleet_presence`, its assignment, and the catalogues the fleet accepts; and the state a node
//! is in. Everything is read by stream info and direct gets, the only reads an operator's
//! credential has ([`crate::protocol::operator_permissions`]): never a consumer on a bucket.

use std::time::Duration;

use async_nats::jetstream::{self, kv};
use futures_util::StreamExt as _;
use serde::de::DeserializeOwned;

use crate::protocol::{
    ASSIGN_BUCKET, Admin, Assignment, CATALOGUE_BUCKET, NODES_BUCKET, NodeRecord, OfferedCatalogue,
    PRESENCE_BUCKET, Presence,
};

/// How long after its last heartbeat a down node is called lost.
pub const LOST_AFTER: Duration = Duration::from_secs(300);

/// Up, down, lost, maintenance, draining or incompatible, as the fleet sees a node: what the
/// fleet decided about it first, then whether it heartbeats, with a catalogue the fleet
/// accepts. `last_seen_ms` is its last heartbeat: the live one, or the one the fleet recorded
/// when it went down.
pub fn node_state(
    record: &NodeRecord,
    presence: Option<&Presence>,
    accepted: &[String],
    now_ms: i64,
) -> (&'static str, Option<i64>) {
    let last_seen_ms = presence.map(|p| p.at_ms).or(record.last_seen_ms);
    let state = match (presence, record.admin) {
        (_, Admin::Maintenance) => "maintenance",
        (_, Admin::Draining) => "draining",
        (Some(p), _) if !accepted.contains(&p.catalogue_sha256) => "incompatible",
        (Some(_), _) => "up",
        (None, _) => match last_seen_ms {
            Some(seen) if now_ms - seen > LOST_AFTER.as_millis() as i64 => "lost",
            _ => "down",
        },
    };
    (state, last_seen_ms)
}

/// The fleet's buckets, opened once.
#[derive(Clone)]
pub struct FleetState {
    js: jetstream::Context,
    nodes: kv::Store,
    presence: kv::Store,
    assign: kv::Store,
    catalogue: kv::Store,
}

impl FleetState {
    pub async fn open(js: jetstream::Context) -> anyhow::Result<FleetState> {
        let bucket = |name: &'static str| {
            let js = js.clone();
            async move {
                js.get_key_value(name)
                    .await
                    .map_err(|e| anyhow::anyhow!("the fleet's bucket {name}: {e}"))
            }
        };
        Ok(FleetState {
            nodes: bucket(NODES_BUCKET).await?,
            presence: bucket(PRESENCE_BUCKET).await?,
            assign: bucket(ASSIGN_BUCKET).await?,
            catalogue: bucket(CATALOGUE_BUCKET).await?,
            js,
        })
    }

    /// The keys of `bucket` that hold a message (a deleted key may still be listed: its
    /// tombstone; [`FleetState::record`] and the others answer `None` for it).
    async fn keys(&self, bucket: &str) -> anyhow::Result<Vec<String>> {
        let stream = self.js.get_stream_no_info(format!("KV_{bucket}")).await?;
        let prefix = format!("$KV.{bucket}.");
        let mut subjects = stream.info_with_subjects(format!("{prefix}>")).await?;
        let mut keys = Vec::new();
        while let Some(subject) = subjects.next().await {
            let (subject, _) = subject?;
            if let Some(key) = subject.strip_prefix(&prefix) {
                keys.push(key.to_owned());
            }
        }
        keys.sort();
        Ok(keys)
    }

    /// Every node the fleet has a record of, by name.
    pub async fn node_names(&self) -> anyhow::Result<Vec<String>> {
        self.keys(NODES_BUCKET).await
    }

    /// The catalogue hashes the fleet accepts.
    pub async fn accepted_catalogues(&self) -> anyhow::Result<Vec<String>> {
        self.keys(CATALOGUE_BUCKET).await
    }

    pub async fn record(&self, node: &str) -> anyhow::Result<Option<NodeRecord>> {
        get(&self.nodes, node).await
    }

    /// What the node reported with its last heartbeat, while that heartbeat lives (three
    /// intervals): `None` for a node that is down.
    pub async fn presence(&self, node: &str) -> anyhow::Result<Option<Presence>> {
        // A limit marker left where a heartbeat expired is no presence.
        Ok(get(&self.presence, node).await.unwrap_or(None))
    }

    pub async fn assignment(&self, node: &str) -> anyhow::Result<Option<Assignment>> {
        get(&self.assign, node).await
    }

    /// The operations of the catalogue whose SHA-256 is `sha256`, if the fleet accepts it.
    pub async fn catalogue(&self, sha256: &str) -> anyhow::Result<Option<OfferedCatalogue>> {
        get(&self.catalogue, sha256).await
    }
}

async fn get<T: DeserializeOwned>(store: &kv::Store, key: &str) -> anyhow::Result<Option<T>> {
    match store.get(key).await? {
        Some(bytes) => Ok(Some(serde_json::from_slice(&bytes).map_err(|e| {
            anyhow::anyhow!("{key:?} of the fleet's bucket is not what it should hold: {e}")
        })?)),
        None => Ok(None),
    }
}
