//! This node's peers, for a session started with an operator's credential (`layerone fleet
//! operator add`; `layerone mcp --fleet-credential`): which nodes the fleet has, in which
//! state, assigned which modules, offering which operations in which shape; and a call of an
//! operation's tool on one of them, put on that peer's queue under the operator's credential
//! and answered from the peer's events.
//!
//! The session's tools stay one per operation however many nodes the fleet has: a peer is the
//! `target_node` argument of a tool. A peer is checked before anything is sent: known to the
//! fleet, offering the operation (its assignment and its catalogue), in the same shape as this
//! node's (the operation's SHA-256 in the peer's catalogue, `fleet_catalogue`), and up (its
//! heartbeat is alive, and the fleet has not put it in maintenance or draining). A peer that
//! goes down while a call waits ends the wait at once.
//!
//! Each check that fails is a tool error with its own code, and nothing is sent
//! (`server.rs`): `unknown_node`, `module_not_assigned`, `operation_not_offered`,
//! `schema_differs`, `peer_down`, `peer_unavailable`. What the session reaches is listed in
//! the `layerone://fleet/operations` resource.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_nats::jetstream;
use fleet::protocol::{EventBody, FleetEvent, OfferedCatalogue};
use fleet::state::{FleetState, node_state};
use registry::{CatalogueEntry, Module};
use serde::Serialize;

/// How often the session reads the fleet's state again, to see peers join, leave, go down and
/// come back.
pub const REFRESH: Duration = Duration::from_secs(2);
/// How often a call waiting on a peer checks that the peer still heartbeats.
const WATCH: Duration = Duration::from_millis(500);

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// One node of the fleet as the session last read it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PeerView {
    pub node_id: String,
    /// up, down, lost, maintenance, draining or incompatible (`fleet::state::node_state`).
    pub state: &'static str,
    /// Its last heartbeat (ms since the epoch), if it was ever seen.
    pub last_seen_ms: Option<i64>,
    /// The modules the fleet assigned it; `None`: no assignment yet, so it runs every module.
    pub modules: Option<Vec<Module>>,
    /// The SHA-256 of the catalogue it reported last.
    pub catalogue_sha256: Option<String>,
    /// That catalogue's operations, when the fleet accepts it (kept while the node is down).
    #[serde(skip)]
    pub catalogue: Option<OfferedCatalogue>,
}

impl PeerView {
    fn runs(&self, module: Module) -> bool {
        module == Module::Core
            || self
                .modules
                .as_ref()
                .is_none_or(|modules| modules.contains(&module))
    }

    /// Why this peer cannot take `operation` of `module` whose SHA-256 here is `sha256`, if it
    /// cannot: not assigned its module, not in its catalogue, or in another shape.
    pub fn refuses(&self, operation: &str, module: Module, sha256: &str) -> Option<PeerRefusal> {
        if !self.runs(module) {
            return Some(PeerRefusal::ModuleNotAssigned);
        }
        let catalogue = self.catalogue.as_ref()?;
        match catalogue.operation_sha256(operation) {
            None => Some(PeerRefusal::NotOffered),
            Some(theirs) if theirs != sha256 => Some(PeerRefusal::SchemaDiffers {
                theirs: theirs.to_owned(),
            }),
            Some(_) => None,
        }
    }
}

/// Why a peer cannot take an operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PeerRefusal {
    ModuleNotAssigned,
    NotOffered,
    /// The peer's operation has another SHA-256: another request or result schema, scope or
    /// module.
    SchemaDiffers {
        theirs: String,
    },
}

/// The fleet as the session last read it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FleetView {
    pub nodes: BTreeMap<String, PeerView>,
}

impl FleetView {
    /// The operations of `registry` that a session on node `this_node` reaches: this node's
    /// (every one, unless the fleet assigned it modules) and every peer's that the fleet still
    /// has (down or not: a call to a down peer answers that it is down).
    pub fn reachable(
        &self,
        catalogue: &[CatalogueEntry],
        this_node: Option<&str>,
    ) -> BTreeSet<&'static str> {
        let local = this_node.and_then(|name| self.nodes.get(name));
        catalogue
            .iter()
            .filter(|entry| {
                let module = entry.module;
                local.is_none_or(|me| me.runs(module))
                    || self.nodes.iter().any(|(name, peer)| {
                        Some(name.as_str()) != this_node
                            && peer
                                .refuses(entry.operation, module, &entry.sha256)
                                .is_none()
                    })
            })
            .map(|entry| entry.operation)
            .collect()
    }

    /// The resource `layerone://fleet/operations`: every node with its state, and every
    /// operation of this node's catalogue with the nodes that offer it and those that offer it
    /// in another shape.
    pub fn operations_document(
        &self,
        catalogue: &[CatalogueEntry],
        this_node: Option<&str>,
    ) -> serde_json::Value {
        let mut operations = serde_json::Map::new();
        for entry in catalogue {
            let mut offered = Vec::new();
            let mut differs = Vec::new();
            for (name, peer) in &self.nodes {
                match peer.refuses(entry.operation, entry.module, &entry.sha256) {
                    None => offered.push(name.clone()),
                    Some(PeerRefusal::SchemaDiffers { .. }) => differs.push(name.clone()),
                    Some(_) => {}
                }
            }
            operations.insert(
                entry.operation.to_owned(),
                serde_json::json!({
                    "module": entry.module.as_str(),
                    "sha256": entry.sha256,
                    "nodes": offered,
                    "schema_differs": differs,
                }),
            );
        }
        serde_json::json!({
            "this_node": this_node,
            "read_at_ms": now_ms(),
            "nodes": self.nodes,
            "operations": operations,
        })
    }
}

/// What became of a call on a peer.
#[derive(Debug)]
pub enum PeerAnswer {
    /// The peer's final word: its job's final event, or its refusal.
    Final(Box<FleetEvent>),
    /// The peer stopped heartbeating while the call waited; the request stays on its queue.
    WentDown { last_seen_ms: Option<i64> },
    /// No final word within the wait.
    TimedOut,
}

/// The fleet, read with an operator's credential.
pub struct Peers {
    js: jetstream::Context,
    state: FleetState,
    /// This node's name in the fleet, when it joined one.
    pub this_node: Option<String>,
    view: Mutex<FleetView>,
}

/// The catalogues one reading of the fleet found, by SHA-256: most nodes share one.
type Catalogues = HashMap<String, Option<OfferedCatalogue>>;

impl Peers {
    pub async fn open(js: jetstream::Context, this_node: Option<String>) -> anyhow::Result<Peers> {
        let state = FleetState::open(js.clone()).await?;
        let peers = Peers {
            js,
            state,
            this_node,
            view: Mutex::new(FleetView::default()),
        };
        peers.refresh().await?;
        Ok(peers)
    }

    /// The fleet as last read.
    pub fn view(&self) -> FleetView {
        self.view
            .lock()
            .expect("the fleet view's lock is never poisoned: nothing panics holding it")
            .clone()
    }

    /// The catalogue of `sha256`, read once per reading of the fleet (`read`).
    async fn catalogue(
        &self,
        sha256: &str,
        read: &mut Catalogues,
    ) -> anyhow::Result<Option<OfferedCatalogue>> {
        if let Some(known) = read.get(sha256) {
            return Ok(known.clone());
        }
        let catalogue = self.state.catalogue(sha256).await?;
        read.insert(sha256.to_owned(), catalogue.clone());
        Ok(catalogue)
    }

    /// One node as it is now: `None` if the fleet has no record of it. A node that no longer
    /// heartbeats keeps the catalogue it reported last (`previous`).
    pub async fn read_node(
        &self,
        name: &str,
        accepted: &[String],
        previous: Option<&PeerView>,
        catalogues: &mut Catalogues,
    ) -> anyhow::Result<Option<PeerView>> {
        let Some(record) = self.state.record(name).await? else {
            return Ok(None);
        };
        let presence = self.state.presence(name).await?;
        let assignment = self.state.assignment(name).await?;
        let (state, last_seen_ms) = node_state(&record, presence.as_ref(), accepted, now_ms());
        let (catalogue_sha256, catalogue) = match &presence {
            Some(p) => (
                Some(p.catalogue_sha256.clone()),
                self.catalogue(&p.catalogue_sha256, catalogues).await?,
            ),
            None => match previous {
                Some(previous) => (
                    previous.catalogue_sha256.clone(),
                    previous.catalogue.clone(),
                ),
                None => (None, None),
            },
        };
        Ok(Some(PeerView {
            node_id: record.node_id,
            state,
            last_seen_ms: last_seen_ms.or(previous.and_then(|p| p.last_seen_ms)),
            modules: assignment.map(|a| a.modules),
            catalogue_sha256,
            catalogue,
        }))
    }

    /// Reads the whole fleet again.
    pub async fn refresh(&self) -> anyhow::Result<FleetView> {
        let previous = self.view();
        let accepted = self.state.accepted_catalogues().await?;
        let mut nodes = BTreeMap::new();
        let mut catalogues = Catalogues::new();
        for name in self.state.node_names().await? {
            if let Some(node) = self
                .read_node(&name, &accepted, previous.nodes.get(&name), &mut catalogues)
                .await?
            {
                nodes.insert(name, node);
            }
        }
        let view = FleetView { nodes };
        *self
            .view
            .lock()
            .expect("the fleet view's lock is never poisoned: nothing panics holding it") =
            view.clone();
        Ok(view)
    }

    /// `name` as it is now, read again, and the view updated with it.
    pub async fn fresh(&self, name: &str) -> anyhow::Result<Option<PeerView>> {
        let accepted = self.state.accepted_catalogues().await?;
        let previous = self.view().nodes.get(name).cloned();
        let node = self
            .read_node(name, &accepted, previous.as_ref(), &mut Catalogues::new())
            .await?;
        let mut view = self
            .view
            .lock()
            .expect("the fleet view's lock is never poisoned: nothing panics holding it");
        match &node {
            Some(node) => view.nodes.insert(name.to_owned(), node.clone()),
            None => view.nodes.remove(name),
        };
        Ok(node)
    }

    /// Puts `body` (a request whose id is `request_id`) on `node`'s queue and waits, at most
    /// `wait`, for the peer's final word, watching that it stays up.
    pub async fn call(
        &self,
        node: &str,
        request_id: &str,
        body: &[u8],
        wait: Duration,
    ) -> anyhow::Result<PeerAnswer> {
        let tail = fleet::requests::events_tail(&self.js).await?;
        fleet::requests::publish(&self.js, node, request_id, body).await?;
        let answer = fleet::requests::wait(&self.js, node, request_id, tail, wait);
        tokio::pin!(answer);
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            tokio::select! {
                found = &mut answer => {
                    return Ok(match found {
                        Ok(event) => PeerAnswer::Final(Box::new(event)),
                        Err(_) if tokio::time::Instant::now() >= deadline => PeerAnswer::TimedOut,
                        Err(e) => return Err(e),
                    });
                }
                () = tokio::time::sleep(WATCH) => {
                    if self.state.presence(node).await?.is_none() {
                        let last_seen_ms = self.view().nodes.get(node).and_then(|p| p.last_seen_ms);
                        return Ok(PeerAnswer::WentDown { last_seen_ms });
                    }
                }
            }
        }
    }
}

/// The job view a peer's final event carries, or its refusal as `{code, message, field}`.
pub enum PeerOutcome {
    Job(Box<registry::JobView>),
    Refused {
        code: String,
        message: String,
        field: String,
    },
    /// A final event without the job's view (a node of an older version).
    Bare(registry::JobState),
}

pub fn outcome(event: FleetEvent) -> PeerOutcome {
    match event.body {
        EventBody::Job {
            job: Some(view), ..
        }
        | EventBody::Accepted { job: view, .. } => PeerOutcome::Job(Box::new(view)),
        EventBody::Job { state, .. } => PeerOutcome::Bare(state),
        EventBody::Refused {
            code,
            message,
            field,
            ..
        } => PeerOutcome::Refused {
            code,
            message,
            field,
        },
        other => PeerOutcome::Refused {
            code: "unexpected_event".into(),
            message: format!("the peer's events ended the call with {}", other.kind()),
            field: String::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(modules: Option<Vec<Module>>, catalogue: Option<OfferedCatalogue>) -> PeerView {
        PeerView {
            node_id: "ab".repeat(16),
            state: "up",
            last_seen_ms: Some(1),
            modules,
            catalogue_sha256: Some("c".repeat(64)),
            catalogue,
        }
    }

    #[test]
    fn a_peer_refuses_what_it_is_not_assigned_does_not_offer_or_offers_in_another_shape() {
        let catalogue = declarations::registry().catalogue();
        let ours = OfferedCatalogue::of_this_build();
        let entry = |name: &str| {
            catalogue
                .iter()
                .find(|e| e.operation == name)
                .unwrap()
                .clone()
        };
        let mailbox = entry("ensure_mailbox");
        let account = entry("ensure_account");
        let web_only = peer(Some(vec![Module::Core, Module::Web]), Some(ours.clone()));
        assert_eq!(
            web_only.refuses(mailbox.operation, mailbox.module, &mailbox.sha256),
            Some(PeerRefusal::ModuleNotAssigned)
        );
        assert_eq!(
            web_only.refuses(account.operation, account.module, &account.sha256),
            None
        );
        let mut other = ours.clone();
        other
            .operations
            .insert("ensure_account".into(), "0".repeat(64));
        other.operations.remove("ensure_mailbox");
        let older = peer(None, Some(other));
        assert_eq!(
            older.refuses(account.operation, account.module, &account.sha256),
            Some(PeerRefusal::SchemaDiffers {
                theirs: "0".repeat(64)
            })
        );
        assert_eq!(
            older.refuses(mailbox.operation, mailbox.module, &mailbox.sha256),
            Some(PeerRefusal::NotOffered)
        );

        // A mail peer joining a web-only fleet makes the mail operations reachable.
        let mut view = FleetView::default();
        view.nodes.insert("me".into(), web_only.clone());
        let web = view.reachable(&catalogue, Some("me"));
        assert!(web.contains("ensure_account") && !web.contains("ensure_mailbox"));
        view.nodes.insert(
            "mail".into(),
            peer(Some(vec![Module::Core, Module::Mail]), Some(ours)),
        );
        let both = view.reachable(&catalogue, Some("me"));
        assert!(both.contains("ensure_mailbox") && both.is_superset(&web));
        let document = view.operations_document(&catalogue, Some("me"));
        assert_eq!(
            document["operations"]["ensure_mailbox"]["nodes"],
            serde_json::json!(["mail"])
        );
        // Outside a fleet's assignment this node reaches every operation.
        assert_eq!(
            FleetView::default().reachable(&catalogue, None).len(),
            catalogue.len()
        );
    }
}
