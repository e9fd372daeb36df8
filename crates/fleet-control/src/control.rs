//! The control plane's side, as commands a provider can script: tokens, the nodes and their
//! states, assignments, submissions, the events stream, drain and removal. Each uses only the
//! control plane's credential and the broker: what another control plane, in any language,
//! does the same way (`docs/fleet.md`).

use std::time::Duration;

use anyhow::Context as _;
use async_nats::HeaderMap;
use async_nats::jetstream::{self, kv};
use fleet::protocol::{
    self, ASSIGN_BUCKET, Admin, Assignment, CATALOGUE_BUCKET, FleetEvent, KIND_ASSIGNMENT,
    KIND_HEADER, KIND_TRUST, NODES_BUCKET, NodeRecord, OfferedCatalogue, PRESENCE_BUCKET, Presence,
    REQUESTS_STREAM, TOKENS_BUCKET, TRUST_BUCKET, TRUST_KEY, TokenRecord, TrustBundle,
};
use futures_util::StreamExt as _;
use registry::Module;
use serde::Serialize;

use crate::admin::ControlPlane;

/// Now, in milliseconds since the epoch (the system's clock).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

pub struct Fleet {
    pub client: async_nats::Client,
    pub js: jetstream::Context,
    pub control_plane: ControlPlane,
}

impl Fleet {
    pub async fn connect(control_plane: ControlPlane) -> anyhow::Result<Fleet> {
        let client = control_plane.connect().await?;
        Ok(Fleet::with_client(client, control_plane))
    }

    pub fn with_client(client: async_nats::Client, control_plane: ControlPlane) -> Fleet {
        Fleet {
            js: jetstream::new(client.clone()),
            client,
            control_plane,
        }
    }

    pub async fn bucket(&self, name: &str) -> anyhow::Result<kv::Store> {
        self.js
            .get_key_value(name)
            .await
            .with_context(|| format!("the bucket {name} (has `layerone fleet init` run?)"))
    }

    pub async fn node(&self, name: &str) -> anyhow::Result<Option<NodeRecord>> {
        Ok(match self.bucket(NODES_BUCKET).await?.get(name).await? {
            Some(bytes) => Some(serde_json::from_slice(&bytes)?),
            None => None,
        })
    }

    pub async fn presence(&self, name: &str) -> anyhow::Result<Option<Presence>> {
        Ok(match self.bucket(PRESENCE_BUCKET).await?.get(name).await? {
            Some(bytes) => serde_json::from_slice(&bytes).ok(),
            None => None,
        })
    }

    pub async fn assignment(&self, name: &str) -> anyhow::Result<Option<Assignment>> {
        Ok(match self.bucket(ASSIGN_BUCKET).await?.get(name).await? {
            Some(bytes) => Some(serde_json::from_slice(&bytes)?),
            None => None,
        })
    }

    /// A one-time join token for `node` (or, without a name, for the name the joining node
    /// gives), good for `ttl`.
    pub async fn mint_token(&self, node: Option<&str>, ttl: Duration) -> anyhow::Result<String> {
        if let Some(node) = node {
            anyhow::ensure!(
                protocol::valid_node_name(node),
                "{node:?} is not a node name: [a-z0-9][a-z0-9-]{{0,62}}"
            );
        }
        let cp = &self.control_plane;
        let token =
            fleet::token::JoinToken::mint(&cp.ca_sha256, &cp.join_password, cp.brokers.clone());
        let record = TokenRecord {
            node: node.map(str::to_owned),
            secret_sha256: fleet::token::sha256_hex(token.secret.as_bytes()),
            expires_at_ms: now_ms() + ttl.as_millis() as i64,
            used_at_ms: None,
        };
        self.bucket(TOKENS_BUCKET)
            .await?
            .create(&token.id, serde_json::to_vec(&record)?.into())
            .await
            .context("recording the token")?;
        Ok(token.encode())
    }

    /// Every node with what it reports and what the fleet decides.
    pub async fn nodes(&self) -> anyhow::Result<Vec<NodeView>> {
        let nodes = self.bucket(NODES_BUCKET).await?;
        let accepted = self.accepted_catalogues().await?;
        let mut keys = nodes.keys().await?;
        let mut names = Vec::new();
        while let Some(key) = keys.next().await {
            names.push(key?);
        }
        names.sort();
        let mut out = Vec::new();
        for name in names {
            let Some(record) = self.node(&name).await? else {
                continue;
            };
            let presence = self.presence(&name).await?;
            let assignment = self.assignment(&name).await?;
            out.push(NodeView::new(record, presence, assignment, &accepted));
        }
        Ok(out)
    }

    /// The catalogue hashes the fleet accepts (`fleet_catalogue`'s keys).
    pub async fn accepted_catalogues(&self) -> anyhow::Result<Vec<String>> {
        let bucket = self.bucket(CATALOGUE_BUCKET).await?;
        let mut keys = match bucket.keys().await {
            Ok(keys) => keys,
            Err(_) => return Ok(Vec::new()),
        };
        let mut out = Vec::new();
        while let Some(key) = keys.next().await {
            out.push(key?);
        }
        Ok(out)
    }

    /// Publishes this build's catalogue, so nodes that run it are compatible.
    pub async fn publish_catalogue(&self) -> anyhow::Result<String> {
        let sha = protocol::catalogue_sha256();
        let offered = OfferedCatalogue::of_this_build();
        let bucket = self.bucket(CATALOGUE_BUCKET).await?;
        if bucket.get(&sha).await?.is_none() {
            bucket
                .put(&sha, serde_json::to_vec(&offered)?.into())
                .await?;
        }
        Ok(sha)
    }

    /// Signs and writes `node`'s next assignment, then tells the node on its own queue.
    pub async fn assign(&self, node: &str, modules: &[Module]) -> anyhow::Result<Assignment> {
        self.node(node)
            .await?
            .with_context(|| format!("no node {node} in the fleet"))?;
        let generation = self.assignment(node).await?.map_or(0, |a| a.generation) + 1;
        let mut modules = modules.to_vec();
        if !modules.contains(&Module::Core) {
            modules.push(Module::Core);
        }
        modules.sort_by_key(|m| m.as_str());
        modules.dedup();
        let key = nkeys::KeyPair::from_seed(&self.control_plane.signing_seed)?;
        let name: registry::types::NodeName = node
            .parse()
            .map_err(|e| anyhow::anyhow!("{node:?} is not a node name: {e:?}"))?;
        let signed = declarations::assignment::signed_bytes(&name, generation, &modules);
        let signature = key.sign(&signed)?;
        let assignment = Assignment {
            node: node.to_owned(),
            generation,
            modules,
            signature: base64::Engine::encode(
                &base64::engine::general_purpose::URL_SAFE_NO_PAD,
                signature,
            ),
        };
        self.bucket(ASSIGN_BUCKET)
            .await?
            .put(node, serde_json::to_vec(&assignment)?.into())
            .await?;
        self.tell(node, KIND_ASSIGNMENT, generation)
            .await
            .context("telling the node its assignment changed")?;
        Ok(assignment)
    }

    /// Tells `node` on its own queue that what `kind` names changed (at `generation`): it reads
    /// it again when it takes the message, after what was queued before.
    async fn tell(&self, node: &str, kind: &str, generation: u64) -> anyhow::Result<()> {
        let mut headers = HeaderMap::new();
        headers.insert(KIND_HEADER, kind);
        headers.insert(
            "Nats-Msg-Id",
            format!("{kind}.{node}.{generation}").as_str(),
        );
        self.js
            .publish_with_headers(protocol::request_subject(node), headers, "".into())
            .await?
            .await?;
        Ok(())
    }

    /// The fleet's trust bundle, if one was published.
    pub async fn trust_bundle(&self) -> anyhow::Result<Option<TrustBundle>> {
        Ok(
            match self.bucket(TRUST_BUCKET).await?.get(TRUST_KEY).await? {
                Some(bytes) => Some(
                    serde_json::from_slice(&bytes)
                        .context("the fleet's trust bundle is unreadable")?,
                ),
                None => None,
            },
        )
    }

    /// Publishes `ca_pems` as the fleet's trust bundle (its next generation) and tells every
    /// registered node on its queue. A node down now reads it when it starts.
    pub async fn publish_trust(&self, ca_pems: Vec<String>) -> anyhow::Result<TrustBundle> {
        let pems: Vec<&str> = ca_pems.iter().map(String::as_str).collect();
        anyhow::ensure!(
            !fleet::tls::bundle_sha256s(&pems)?.is_empty(),
            "a trust bundle holds at least one CA"
        );
        let generation = self.trust_bundle().await?.map_or(0, |b| b.generation) + 1;
        let bundle = TrustBundle {
            generation,
            ca_pems,
        };
        self.bucket(TRUST_BUCKET)
            .await?
            .put(TRUST_KEY, serde_json::to_vec(&bundle)?.into())
            .await
            .context("publishing the fleet's trust bundle")?;
        let nodes = self.bucket(NODES_BUCKET).await?;
        let mut keys = nodes.keys().await?;
        while let Some(node) = keys.next().await {
            let node = node?;
            self.tell(&node, KIND_TRUST, generation)
                .await
                .with_context(|| format!("telling {node} the fleet's trust changed"))?;
        }
        Ok(bundle)
    }

    /// Dispatches one request to `node`'s queue, after the checks a dispatcher makes: the node
    /// exists, takes work, and offers the operation.
    /// Returns the request id, the stream sequence, and whether the broker had it already
    /// (the same body sent before: its events may predate this call).
    pub async fn submit(&self, node: &str, body: &[u8]) -> anyhow::Result<(String, u64, bool)> {
        let record = self
            .node(node)
            .await?
            .with_context(|| format!("no node {node} in the fleet"))?;
        anyhow::ensure!(
            record.admin == Admin::Active,
            "node {node} is in {:?}: no new work is dispatched to it",
            record.admin
        );
        let value: serde_json::Value =
            serde_json::from_slice(body).context("the request is not JSON")?;
        let request_id = value
            .get("request_id")
            .and_then(|v| v.as_str())
            .context("the request has no request_id")?
            .to_owned();
        let operation = value
            .get("operation")
            .or_else(|| value.get("action"))
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_owned();
        if let Some(presence) = self.presence(node).await? {
            let offered = self.offered(&presence.catalogue_sha256).await?;
            match offered {
                None => anyhow::bail!(
                    "node {node} runs a catalogue the fleet does not accept ({}): it is incompatible",
                    presence.catalogue_sha256
                ),
                Some(offered) if !offered.offers(&operation) => anyhow::bail!(
                    "node {node} does not offer {operation:?} (its version {} has no such operation)",
                    presence.version
                ),
                Some(_) => {}
            }
        }
        let (seq, duplicate) = fleet::requests::publish(&self.js, node, &request_id, body).await?;
        Ok((request_id, seq, duplicate))
    }

    async fn offered(&self, catalogue_sha256: &str) -> anyhow::Result<Option<OfferedCatalogue>> {
        Ok(
            match self
                .bucket(CATALOGUE_BUCKET)
                .await?
                .get(catalogue_sha256)
                .await?
            {
                Some(bytes) => Some(serde_json::from_slice(&bytes)?),
                None => None,
            },
        )
    }

    /// The events stream's last sequence number: follow from after it.
    pub async fn events_tail(&self) -> anyhow::Result<u64> {
        fleet::requests::events_tail(&self.js).await
    }

    /// The events after `after` (a stream sequence), optionally of one node, in order.
    pub async fn follow(
        &self,
        after: u64,
        node: Option<&str>,
    ) -> anyhow::Result<impl futures_util::Stream<Item = anyhow::Result<(u64, FleetEvent)>> + use<>>
    {
        fleet::requests::follow(&self.js, after, node).await
    }

    /// Waits for the final word on `request_id` from `node`: its job's final state, or the
    /// node's refusal.
    pub async fn wait(
        &self,
        node: &str,
        request_id: &str,
        after: u64,
        timeout: Duration,
    ) -> anyhow::Result<FleetEvent> {
        fleet::requests::wait(&self.js, node, request_id, after, timeout).await
    }

    pub async fn set_admin(&self, node: &str, admin: Admin) -> anyhow::Result<()> {
        let bucket = self.bucket(NODES_BUCKET).await?;
        let entry = bucket
            .entry(node)
            .await?
            .with_context(|| format!("no node {node} in the fleet"))?;
        let mut record: NodeRecord = serde_json::from_slice(&entry.value)?;
        record.admin = admin;
        bucket
            .update(node, serde_json::to_vec(&record)?.into(), entry.revision)
            .await
            .context("the node's record changed meanwhile; try again")?;
        Ok(())
    }

    /// Removes a node: its record (the fleet's service then renders the broker's configuration
    /// without it, which closes its connection), its consumer, assignment and presence.
    pub async fn remove(&self, node: &str) -> anyhow::Result<()> {
        self.node(node)
            .await?
            .with_context(|| format!("no node {node} in the fleet"))?;
        self.bucket(NODES_BUCKET).await?.purge(node).await?;
        let stream = self.js.get_stream(REQUESTS_STREAM).await?;
        let _ = stream.delete_consumer(node).await;
        let _ = self.bucket(ASSIGN_BUCKET).await?.purge(node).await;
        let _ = self.bucket(PRESENCE_BUCKET).await?.purge(node).await;
        Ok(())
    }
}

/// A node as `layerone fleet nodes` shows it.
#[derive(Debug, Serialize)]
pub struct NodeView {
    pub name: String,
    pub node_id: String,
    /// up, down, lost, maintenance, draining or incompatible.
    pub state: &'static str,
    pub last_seen_ms: Option<i64>,
    pub admin: Admin,
    /// What the fleet decides.
    pub assignment: Option<Vec<Module>>,
    pub assignment_generation: u64,
    /// What the node reports.
    pub reported: Option<Presence>,
}

impl NodeView {
    fn new(
        record: NodeRecord,
        presence: Option<Presence>,
        assignment: Option<Assignment>,
        accepted: &[String],
    ) -> NodeView {
        let (state, last_seen_ms) =
            fleet::state::node_state(&record, presence.as_ref(), accepted, now_ms());
        NodeView {
            name: record.name,
            node_id: record.node_id,
            state,
            last_seen_ms,
            admin: record.admin,
            assignment_generation: assignment.as_ref().map_or(0, |a| a.generation),
            assignment: assignment.map(|a| a.modules),
            reported: presence,
        }
    }
}
