//! `layerone fleet serve`: the fleet's own service, beside the broker on the host that holds
//! the administrative directory (never on a joining node).
//!
//! - the join service: consumes one-time tokens, registers the node (a name registered with
//!   another key is refused, not overwritten), renders its permissions into the broker's
//!   configuration (checked with `nats-server -t`, then reloaded) and creates its consumer;
//! - the configuration follows `fleet_nodes`: a removed node's user is gone at the next render,
//!   and the reload closes its connection;
//! - liveness: a node whose heartbeat expired is `node_down`, and `node_up` with its downtime
//!   when it is back, computed here (a dead node cannot say it died);
//! - dead letters: a request a node refused for good, which the node copied to the dead-letter
//!   stream and terminated, gets a `dead_letter` event from the broker's terminated advisory;
//!   at its start, the service brings the nodes' consumers to this version's configuration;
//! - the fleet's trust bundle: the service's own connection verifies the broker against the
//!   bundle's CAs as it changes (`layerone fleet ca rotate|finish`), and a joining node is
//!   handed the bundle.

use std::collections::HashMap;

use anyhow::Context as _;
use async_nats::HeaderMap;
use async_nats::jetstream::kv::Operation;
use fleet::protocol::{
    self, Admin, EventBody, FleetEvent, JOIN_SUBJECT, JoinReply, JoinRequest, NODES_BUCKET,
    NodeRecord, PRESENCE_BUCKET, Presence, REQUESTS_STREAM, TOKENS_BUCKET, TRUST_BUCKET, TRUST_KEY,
    TokenRecord, TrustBundle,
};
use futures_util::StreamExt as _;

use crate::admin::{AdminDir, ControlPlane};
use crate::control::{Fleet, now_ms};

pub struct Service {
    pub fleet: Fleet,
    pub dir: AdminDir,
    pub provider: Option<provider::Provider>,
    /// Serialises renders of the broker's configuration.
    render: tokio::sync::Mutex<()>,
    /// The CAs the service's connection verifies the broker with.
    trust: fleet::tls::Trust,
}

impl Service {
    pub async fn connect(
        dir: AdminDir,
        provider: Option<provider::Provider>,
    ) -> anyhow::Result<Service> {
        let control_plane = ControlPlane::load(&dir.control_plane())?;
        let trust = fleet::tls::Trust::new(&[&control_plane.ca_pem])?;
        let client = fleet::connect::control_plane_trusting(
            &control_plane.seed,
            &trust,
            &control_plane.brokers,
        )
        .await?;
        Ok(Service {
            fleet: Fleet::with_client(client, control_plane),
            dir,
            provider,
            render: tokio::sync::Mutex::new(()),
            trust,
        })
    }

    /// Runs every part until one fails.
    pub async fn run(self) -> anyhow::Result<()> {
        let service = std::sync::Arc::new(self);
        service.sync_config().await?;
        // A fleet made by an earlier version: its nodes' consumers take this configuration.
        if let Err(e) = fleet::setup::update_node_consumers(&service.fleet.js).await {
            tracing::warn!(error = %format!("{e:#}"), "updating the nodes' consumers");
        }
        let mut tasks = tokio::task::JoinSet::new();
        tasks.spawn(join_service(service.clone()));
        tasks.spawn(follow_nodes(service.clone()));
        tasks.spawn(liveness(service.clone()));
        tasks.spawn(dead_letters(service.clone()));
        tasks.spawn(follow_trust(service.clone()));
        tracing::info!("the fleet service is running");
        let done = tasks.join_next().await;
        tasks.abort_all();
        match done {
            Some(Ok(Err(e))) => Err(e),
            Some(Err(e)) => Err(anyhow::anyhow!("a fleet service task panicked: {e}")),
            _ => Err(anyhow::anyhow!("a fleet service task ended")),
        }
    }

    /// Renders the broker's configuration from `fleet_nodes`, and reloads the broker if it
    /// changed.
    pub async fn sync_config(&self) -> anyhow::Result<()> {
        let _one = self.render.lock().await;
        let bucket = self.fleet.bucket(NODES_BUCKET).await?;
        let mut keys = match bucket.keys().await {
            Ok(keys) => keys,
            Err(e) => return Err(anyhow::anyhow!("listing the nodes: {e}")),
        };
        let mut nodes = Vec::new();
        while let Some(key) = keys.next().await {
            let key = key?;
            if let Some(bytes) = bucket.get(&key).await? {
                let record: NodeRecord = serde_json::from_slice(&bytes)?;
                nodes.push((record.name, record.public_key));
            }
        }
        nodes.sort();
        if self
            .dir
            .render_broker_config(self.provider.as_ref(), &nodes)?
        {
            self.dir.reload_broker()?;
            tracing::info!(
                nodes = nodes.len(),
                "the broker's configuration changed; reloaded"
            );
        }
        Ok(())
    }

    /// Registers a node and gives it its user and its consumer. A name registered with
    /// another key is refused.
    pub async fn register(
        &self,
        name: &str,
        node_id: &str,
        public_key: &str,
    ) -> Result<(), (String, String)> {
        let refuse = |code: &str, message: String| (code.to_owned(), message);
        let internal = |e: anyhow::Error| refuse("fleet_unavailable", format!("{e:#}"));
        if nkeys::KeyPair::from_public_key(public_key).is_err() || !public_key.starts_with('U') {
            return Err(refuse(
                "invalid_key",
                "the node's key is not an nkey user key".into(),
            ));
        }
        let bucket = self.fleet.bucket(NODES_BUCKET).await.map_err(internal)?;
        match bucket.get(name).await.map_err(|e| internal(e.into()))? {
            Some(bytes) => {
                let record: NodeRecord =
                    serde_json::from_slice(&bytes).map_err(|e| internal(e.into()))?;
                if record.public_key != public_key || record.node_id != node_id {
                    return Err(name_taken(name));
                }
            }
            None => {
                let record = NodeRecord {
                    name: name.to_owned(),
                    node_id: node_id.to_owned(),
                    public_key: public_key.to_owned(),
                    joined_at_ms: now_ms(),
                    admin: Admin::Active,
                    last_seen_ms: None,
                };
                bucket
                    .create(
                        name,
                        serde_json::to_vec(&record)
                            .map_err(|e| internal(e.into()))?
                            .into(),
                    )
                    .await
                    .map_err(|_| {
                        refuse(
                            "node_exists",
                            format!("a node named {name} was registered meanwhile"),
                        )
                    })?;
            }
        }
        self.sync_config().await.map_err(internal)?;
        fleet::setup::ensure_node_consumer(&self.fleet.js, name)
            .await
            .map_err(internal)?;
        Ok(())
    }

    async fn join(&self, request: JoinRequest) -> JoinReply {
        match self.try_join(request).await {
            Ok(reply) => reply,
            Err((code, message)) => {
                tracing::warn!(code, message, "refused a join");
                JoinReply::Refused { code, message }
            }
        }
    }

    async fn try_join(&self, request: JoinRequest) -> Result<JoinReply, (String, String)> {
        let refuse = |code: &str, message: &str| (code.to_owned(), message.to_owned());
        let internal = |e: anyhow::Error| ("fleet_unavailable".to_owned(), format!("{e:#}"));
        let tokens = self.fleet.bucket(TOKENS_BUCKET).await.map_err(internal)?;
        let entry = tokens
            .entry(&request.token_id)
            .await
            .ok()
            .flatten()
            .filter(|e| e.operation == Operation::Put)
            .ok_or_else(|| refuse("token_unknown", "no such join token"))?;
        let mut record: TokenRecord =
            serde_json::from_slice(&entry.value).map_err(|e| internal(e.into()))?;
        let secret_ok = subtle::ConstantTimeEq::ct_eq(
            fleet::token::sha256_hex(request.secret.as_bytes()).as_bytes(),
            record.secret_sha256.as_bytes(),
        );
        if !bool::from(secret_ok) {
            return Err(refuse("token_invalid", "the token's secret is wrong"));
        }
        if record.used_at_ms.is_some() {
            return Err(refuse("token_used", "the join token was used already"));
        }
        if record.expires_at_ms < now_ms() {
            return Err(refuse("token_expired", "the join token has expired"));
        }
        let name = match (&record.node, &request.node) {
            (Some(pinned), Some(asked)) if pinned != asked => {
                return Err(refuse(
                    "token_for_another_node",
                    "the token admits another node",
                ));
            }
            (Some(name), _) | (None, Some(name)) => name.clone(),
            (None, None) => {
                return Err(refuse(
                    "missing_node_name",
                    "the token names no node: give --name",
                ));
            }
        };
        if !protocol::valid_node_name(&name) {
            return Err(refuse(
                "invalid_node_name",
                "a node name is [a-z0-9][a-z0-9-]{0,62}",
            ));
        }
        // A name taken by another key is refused before the token is spent.
        if let Some(existing) = self.fleet.node(&name).await.map_err(internal)?
            && (existing.public_key != request.public_key || existing.node_id != request.node_id)
        {
            return Err(name_taken(&name));
        }
        record.used_at_ms = Some(now_ms());
        tokens
            .update(
                &request.token_id,
                serde_json::to_vec(&record)
                    .map_err(|e| internal(e.into()))?
                    .into(),
                entry.revision,
            )
            .await
            .map_err(|_| refuse("token_used", "the join token was used already"))?;
        self.register(&name, &request.node_id, &request.public_key)
            .await?;
        let cp = &self.fleet.control_plane;
        // What the fleet trusts now (both CAs while it is rotated); the credential's, in a
        // fleet that never published a bundle.
        let ca_pem = match self.fleet.trust_bundle().await.map_err(internal)? {
            Some(bundle) => bundle.ca_pems.concat(),
            None => cp.ca_pem.clone(),
        };
        Ok(JoinReply::Joined {
            node: name,
            fleet_key: cp.fleet_key().map_err(internal)?,
            ca_pem,
            brokers: cp.brokers.clone(),
        })
    }

    async fn publish_event(&self, id: String, node: &str, body: EventBody) -> anyhow::Result<()> {
        let subject = protocol::fleet_events_subject(body.kind());
        let event = FleetEvent {
            id: id.clone(),
            node: node.to_owned(),
            at_ms: now_ms(),
            body,
        };
        let mut headers = HeaderMap::new();
        headers.insert("Nats-Msg-Id", id.as_str());
        self.fleet
            .js
            .publish_with_headers(subject, headers, serde_json::to_vec(&event)?.into())
            .await?
            .await
            .context("storing a fleet event")?;
        Ok(())
    }
}

/// The refusal of a join under a name registered with another key, naming the way out: a
/// machine that replaces the node (rebuilt, reinstalled: a new key) takes the name once the
/// old node is removed; a node that kept its key joins with it and is not refused.
fn name_taken(name: &str) -> (String, String) {
    (
        "node_exists".to_owned(),
        format!(
            "a node named {name} is registered with another key. If this machine replaces it \
             (rebuilt or reinstalled), remove the old node first where the fleet is managed \
             (`layerone fleet remove {name}`), then join with a new token; if the old node is \
             still in service, join this machine under another name. A node that kept its key \
             is not refused: a cut-off one comes back with `layerone fleet rescue`."
        ),
    )
}

async fn join_service(service: std::sync::Arc<Service>) -> anyhow::Result<()> {
    let mut requests = service
        .fleet
        .client
        .queue_subscribe(JOIN_SUBJECT, "layerone-fleet".into())
        .await?;
    while let Some(message) = requests.next().await {
        let Some(reply) = message.reply.clone() else {
            continue;
        };
        let answer = match serde_json::from_slice::<JoinRequest>(&message.payload) {
            Ok(request) => service.join(request).await,
            Err(e) => JoinReply::Refused {
                code: "invalid_join_request".into(),
                message: e.to_string(),
            },
        };
        service
            .fleet
            .client
            .publish(reply, serde_json::to_vec(&answer)?.into())
            .await?;
    }
    Err(anyhow::anyhow!("the join subscription ended"))
}

async fn follow_nodes(service: std::sync::Arc<Service>) -> anyhow::Result<()> {
    let bucket = service.fleet.bucket(NODES_BUCKET).await?;
    let mut watch = bucket.watch_all().await?;
    while let Some(entry) = watch.next().await {
        let entry = entry?;
        tracing::debug!(node = entry.key, op = ?entry.operation, "a node's record changed");
        if let Err(e) = service.sync_config().await {
            tracing::error!(error = %format!("{e:#}"), "rendering the broker's configuration");
        }
    }
    Err(anyhow::anyhow!("the nodes watch ended"))
}

/// Keeps the service's own connection trusting what the fleet's bundle says: the new CA from
/// `fleet ca rotate` on, and only it from `fleet ca finish` on (then it connects again, so the
/// broker is verified against the new CA alone).
async fn follow_trust(service: std::sync::Arc<Service>) -> anyhow::Result<()> {
    let bucket = service.fleet.bucket(TRUST_BUCKET).await?;
    let mut watch = bucket.watch_with_history(TRUST_KEY).await?;
    while let Some(entry) = watch.next().await {
        let entry = entry?;
        if entry.operation != Operation::Put {
            continue;
        }
        let bundle: TrustBundle = match serde_json::from_slice(&entry.value) {
            Ok(bundle) => bundle,
            Err(e) => {
                tracing::error!(error = %e, "the fleet's trust bundle is unreadable; keeping what the service trusts");
                continue;
            }
        };
        match service.trust.set(&bundle.pems()) {
            Ok(dropped) => {
                tracing::info!(generation = bundle.generation, cas = ?service.trust.sha256s(), "the fleet service trusts the fleet's trust bundle");
                if dropped {
                    service.fleet.client.force_reconnect().await?;
                }
            }
            Err(e) => {
                tracing::error!(error = %format!("{e:#}"), "the fleet's trust bundle is unusable; keeping what the service trusts")
            }
        }
    }
    Err(anyhow::anyhow!("the trust bundle's watch ended"))
}

async fn liveness(service: std::sync::Arc<Service>) -> anyhow::Result<()> {
    let bucket = service.fleet.bucket(PRESENCE_BUCKET).await?;
    let mut watch = bucket.watch_all().await?;
    // Each node's last heartbeat, and since when it has been down.
    let mut last_seen: HashMap<String, i64> = HashMap::new();
    let mut down_since: HashMap<String, i64> = HashMap::new();
    while let Some(entry) = watch.next().await {
        let entry = entry?;
        let node = entry.key.clone();
        match entry.operation {
            Operation::Put => {
                let at = serde_json::from_slice::<Presence>(&entry.value)
                    .map_or_else(|_| now_ms(), |p| p.at_ms);
                if let Some(since) = down_since.remove(&node) {
                    let downtime_ms = (at - since).max(0);
                    service
                        .publish_event(
                            format!("fleet.up.{node}.{}", entry.revision),
                            &node,
                            EventBody::NodeUp { downtime_ms },
                        )
                        .await?;
                }
                last_seen.insert(node, at);
            }
            Operation::Delete | Operation::Purge => {
                let Some(seen) = last_seen.remove(&node) else {
                    continue;
                };
                down_since.insert(node.clone(), seen);
                service
                    .publish_event(
                        format!("fleet.down.{node}.{}", entry.revision),
                        &node,
                        EventBody::NodeDown { last_seen_ms: seen },
                    )
                    .await?;
                record_last_seen(&service, &node, seen).await;
            }
        }
    }
    Err(anyhow::anyhow!("the presence watch ended"))
}

async fn record_last_seen(service: &Service, node: &str, seen: i64) {
    let Ok(bucket) = service.fleet.bucket(NODES_BUCKET).await else {
        return;
    };
    let Ok(Some(entry)) = bucket.entry(node).await else {
        return;
    };
    let Ok(mut record) = serde_json::from_slice::<NodeRecord>(&entry.value) else {
        return;
    };
    record.last_seen_ms = Some(seen);
    if let Ok(bytes) = serde_json::to_vec(&record) {
        let _ = bucket.update(node, bytes.into(), entry.revision).await;
    }
}

/// The broker's advisory of a request terminated on a node's queue
/// (`io.nats.jetstream.advisory.v1.terminated`).
#[derive(serde::Deserialize)]
struct Terminated {
    stream: String,
    consumer: String,
    stream_seq: u64,
    deliveries: i64,
    /// What the terminating client gave (`+TERM <reason>`), or the broker's own words (a
    /// pending message deleted).
    #[serde(default)]
    reason: String,
}

/// Says `dead_letter` for each request a node refused for good: the node copied it to the
/// dead-letter stream and terminated it, and the broker's terminated advisory names it. A
/// request terminated for another reason (an operator deleted it from the stream) is no dead
/// letter.
async fn dead_letters(service: std::sync::Arc<Service>) -> anyhow::Result<()> {
    let mut advisories = service
        .fleet
        .client
        .subscribe(format!(
            "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.{REQUESTS_STREAM}.*"
        ))
        .await?;
    while let Some(message) = advisories.next().await {
        let Ok(advisory) = serde_json::from_slice::<Terminated>(&message.payload) else {
            continue;
        };
        if advisory.stream != REQUESTS_STREAM {
            continue;
        }
        if advisory.reason.split(' ').next() != Some(protocol::TERM_REASON_REFUSED) {
            tracing::info!(
                node = advisory.consumer,
                seq = advisory.stream_seq,
                reason = advisory.reason,
                "a request left a node's queue unhandled"
            );
            continue;
        }
        service
            .publish_event(
                format!("fleet.dlq.{}", advisory.stream_seq),
                &advisory.consumer,
                EventBody::DeadLetter {
                    stream_sequence: advisory.stream_seq,
                    deliveries: advisory.deliveries,
                },
            )
            .await?;
    }
    Err(anyhow::anyhow!("the advisories subscription ended"))
}
