//! The fleet's names and messages on the broker: every subject, stream, bucket and header a
//! node or a control plane uses, and the JSON each carries. `docs/fleet.md` is generated from
//! this module ([`document`]); a control plane in another language implements these.

use std::collections::BTreeMap;

use registry::Module;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The work-queue stream of requests: node X's on `fleet.req.X`, one durable pull consumer
/// named X per node, created by the fleet when X joins.
pub const REQUESTS_STREAM: &str = "FLEET_REQ";
/// The events stream: node X publishes on `fleet.evt.node.X.<kind>`, the fleet's own events
/// (node down and up, dead letters) on `fleet.evt.fleet.<kind>`.
pub const EVENTS_STREAM: &str = "FLEET_EVT";
/// Requests a node refused for good: the node copies each here (`fleet.dlq.<node>`) before it
/// terminates it on its queue, and the fleet service says so with a `dead_letter` event when
/// the broker's terminated advisory comes.
pub const DEAD_LETTER_STREAM: &str = "FLEET_DLQ";
/// The fleet's record of each node (key: the node's name), written by the fleet only.
pub const NODES_BUCKET: &str = "fleet_nodes";
/// Each node's signed assignment (key: the node's name), written by the control plane; a node
/// reads its own key by direct get.
pub const ASSIGN_BUCKET: &str = "fleet_assign";
/// Heartbeats (key: the node's name), each with a per-message TTL: a node that stops
/// heartbeating disappears from the bucket, and watchers see the delete marker.
pub const PRESENCE_BUCKET: &str = "fleet_presence";
/// One-time join tokens (key: the token's id), written by `layerone fleet token`.
pub const TOKENS_BUCKET: &str = "fleet_tokens";
/// The catalogue of every version of the node in the fleet (key: the catalogue's hash).
pub const CATALOGUE_BUCKET: &str = "fleet_catalogue";
/// The CAs the fleet's brokers may present a certificate of ([`TrustBundle`], key
/// [`TRUST_KEY`]), written by the control plane; each node reads it by direct get over its
/// connection, verified by a CA it already trusts.
pub const TRUST_BUCKET: &str = "fleet_trust";
/// The one key of [`TRUST_BUCKET`].
pub const TRUST_KEY: &str = "bundle";
/// The join service's subject (core request and reply, not JetStream).
pub const JOIN_SUBJECT: &str = "fleet.join";
/// The joining user's name on the broker (its password is in the join token).
pub const JOIN_USER: &str = "join";
/// The inbox prefix of a joining client.
pub const JOIN_INBOX_PREFIX: &str = "_INBOX_JOIN";

/// How long the events stream recognises a message id it stored (JetStream's
/// `duplicate_window`): a publisher that lost an ack and retries within it stores nothing twice.
pub const DUPLICATE_WINDOW_SECS: u64 = 3600;
/// How many times a request is delivered at most: no limit (-1). A request the node cannot
/// take now is redelivered until it can; only one the node refused for good, which the node
/// terminates itself, goes to the dead-letter stream.
pub const MAX_DELIVER: i64 = -1;
/// The reason a node gives when it terminates a request it refused for good (`+TERM
/// refused <code>`): the broker's terminated advisory carries it, and the fleet service makes
/// a dead letter only of a request terminated with it (not of one an operator deleted).
pub const TERM_REASON_REFUSED: &str = "refused";
/// How long a node has to acknowledge a delivered request before it is redelivered.
pub const ACK_WAIT_SECS: u64 = 30;

/// The header that carries a request's kind on the node's queue: absent for an operation's
/// request, [`KIND_ASSIGNMENT`] for "your assignment changed, read it".
pub const KIND_HEADER: &str = "Layerone-Kind";
pub const KIND_ASSIGNMENT: &str = "assignment";
/// "The fleet's trust bundle changed, read it" (a rotation of the fleet's CA).
pub const KIND_TRUST: &str = "trust";

pub fn request_subject(node: &str) -> String {
    format!("{}.{node}", request_subject_prefix())
}

/// What every node's queue subject starts with.
pub fn request_subject_prefix() -> &'static str {
    "fleet.req"
}

pub fn node_events_subject(node: &str, kind: &str) -> String {
    format!("fleet.evt.node.{node}.{kind}")
}

pub fn fleet_events_subject(kind: &str) -> String {
    format!("fleet.evt.fleet.{kind}")
}

/// Node X's subject in [`DEAD_LETTER_STREAM`].
pub fn dead_letter_subject(node: &str) -> String {
    format!("fleet.dlq.{node}")
}

/// Node X's inbox prefix: the only subjects it may subscribe to.
pub fn node_inbox_prefix(node: &str) -> String {
    format!("_INBOX_{node}")
}

/// The key subject of a bucket's entry.
pub fn kv_subject(bucket: &str, key: &str) -> String {
    format!("$KV.{bucket}.{key}")
}

/// Whether `name` can name a node: `registry::types::NodeName`, a subject token and a DNS
/// label.
pub fn valid_node_name(name: &str) -> bool {
    name.parse::<registry::types::NodeName>().is_ok()
}

/// What the broker lets a node publish and subscribe to: its own queue, its own assignment,
/// its own events and heartbeat, its own dead letters, its own inbox. Nothing else
/// (`docs/security.md`).
pub fn node_permissions(node: &str) -> Permissions {
    Permissions {
        publish: vec![
            format!("$JS.API.CONSUMER.INFO.{REQUESTS_STREAM}.{node}"),
            format!("$JS.API.CONSUMER.MSG.NEXT.{REQUESTS_STREAM}.{node}"),
            format!("$JS.ACK.{REQUESTS_STREAM}.{node}.>"),
            format!("fleet.evt.node.{node}.>"),
            dead_letter_subject(node),
            kv_subject(PRESENCE_BUCKET, node),
            format!(
                "$JS.API.DIRECT.GET.KV_{ASSIGN_BUCKET}.{}",
                kv_subject(ASSIGN_BUCKET, node)
            ),
            format!(
                "$JS.API.DIRECT.GET.KV_{TRUST_BUCKET}.{}",
                kv_subject(TRUST_BUCKET, TRUST_KEY)
            ),
        ],
        subscribe: vec![format!("{}.>", node_inbox_prefix(node))],
    }
}

/// An operator's inbox prefix. Node names are DNS labels (no `_`), so no node's prefix is an
/// operator's.
pub fn operator_inbox_prefix(operator: &str) -> String {
    format!("_INBOX_OP_{operator}")
}

/// What an operator's credential (an MCP session's, `layerone fleet operator add`) lets it do:
/// submit requests to any node's queue, read the events stream through consumers of its own,
/// and read the nodes, presence, assignment and catalogue buckets by direct get. It cannot
/// write a bucket, publish an event or a heartbeat, read a join token, touch a node's
/// consumer, read another's requests, or create, change or delete a stream
/// (`docs/security.md`).
pub fn operator_permissions(operator: &str) -> Permissions {
    let mut publish = vec![
        format!("{}.*", request_subject_prefix()),
        // The events stream: its info, direct gets, and consumers of its own. Only readers'
        // ordered consumers live on it (no durable), and an ordered consumer remakes itself.
        format!("$JS.API.STREAM.INFO.{EVENTS_STREAM}"),
        format!("$JS.API.DIRECT.GET.{EVENTS_STREAM}"),
        format!("$JS.API.DIRECT.GET.{EVENTS_STREAM}.>"),
        format!("$JS.API.CONSUMER.CREATE.{EVENTS_STREAM}"),
        format!("$JS.API.CONSUMER.CREATE.{EVENTS_STREAM}.>"),
        format!("$JS.API.CONSUMER.INFO.{EVENTS_STREAM}.*"),
        format!("$JS.API.CONSUMER.MSG.NEXT.{EVENTS_STREAM}.*"),
        format!("$JS.API.CONSUMER.DELETE.{EVENTS_STREAM}.*"),
    ];
    // The buckets it reads: their info and direct gets (by key, or in a batch), never a
    // consumer (a node's assignment consumer and the fleet service's watches live there).
    for bucket in OPERATOR_READS {
        publish.extend([
            format!("$JS.API.STREAM.INFO.KV_{bucket}"),
            format!("$JS.API.DIRECT.GET.KV_{bucket}"),
            format!("$JS.API.DIRECT.GET.KV_{bucket}.>"),
        ]);
    }
    Permissions {
        publish,
        subscribe: vec![format!("{}.>", operator_inbox_prefix(operator))],
    }
}

/// The buckets an operator reads (never writes).
pub const OPERATOR_READS: [&str; 4] = [
    NODES_BUCKET,
    PRESENCE_BUCKET,
    ASSIGN_BUCKET,
    CATALOGUE_BUCKET,
];

/// What a joining client may do: send one join request and read its answer.
pub fn join_permissions() -> Permissions {
    Permissions {
        publish: vec![JOIN_SUBJECT.to_owned()],
        subscribe: vec![format!("{JOIN_INBOX_PREFIX}.>")],
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Permissions {
    pub publish: Vec<String>,
    pub subscribe: Vec<String>,
}

/// What the fleet decides about a node, apart from its assignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Admin {
    /// Takes work.
    Active,
    /// No new work is dispatched to it; what is queued waits.
    Maintenance,
    /// Like maintenance, on the way out of the fleet.
    Draining,
}

/// The fleet's record of a node (`fleet_nodes`), written by the join service and `layerone
/// fleet drain|remove`; never by the node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NodeRecord {
    pub name: String,
    /// The node's id (its node-scope requests name it).
    pub node_id: String,
    /// The node's nkey (a user public key, `U...`): its credential on the broker.
    pub public_key: String,
    pub joined_at_ms: i64,
    pub admin: Admin,
    /// When the fleet last saw its heartbeat, recorded when it went down.
    #[serde(default)]
    pub last_seen_ms: Option<i64>,
}

/// What a node reports about itself with every heartbeat (`fleet_presence`), apart from what
/// the fleet decides about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Presence {
    pub name: String,
    pub node_id: String,
    pub version: String,
    pub platform: String,
    /// The SHA-256 of the node's catalogue: which operations, in which shapes, it offers.
    pub catalogue_sha256: String,
    /// The modules it runs now, each ready or not with the reason.
    pub modules: Vec<ModuleReport>,
    /// The generation of the assignment it applied last (0: none yet).
    pub assignment_generation: u64,
    pub at_ms: i64,
    /// How often it heartbeats; the fleet calls it down after three missed.
    pub interval_ms: u64,
    /// The SHA-256 of every CA it verifies the broker with now: `layerone fleet ca finish`
    /// waits until every node trusts the new CA.
    #[serde(default)]
    pub trusted_ca_sha256: Vec<String>,
}

/// The CAs a broker of the fleet may present a certificate of (`fleet_trust`, key `bundle`).
/// Outside a rotation it holds the fleet's CA; `layerone fleet ca rotate` adds the new one,
/// `layerone fleet ca finish` removes the old one once the broker's certificate is the new
/// CA's. A node trusts exactly the CAs of the last bundle it read, kept in its state directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrustBundle {
    /// One more at every change.
    pub generation: u64,
    /// Each CA's certificate, PEM; at least one.
    pub ca_pems: Vec<String>,
}

impl TrustBundle {
    /// The bundle's PEM texts, as the TLS configuration takes them.
    pub fn pems(&self) -> Vec<&str> {
        self.ca_pems.iter().map(String::as_str).collect()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ModuleReport {
    pub module: Module,
    pub ready: bool,
    pub reason: Option<String>,
}

/// A node's assignment (`fleet_assign`), signed by the fleet's key, which the node pinned when
/// it joined. Root checks the signature: anyone holding the local API key could write the same
/// inbox row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Assignment {
    pub node: String,
    pub generation: u64,
    pub modules: Vec<Module>,
    /// base64url (no padding) of the ed25519 signature of
    /// `declarations::assignment::signed_bytes`.
    pub signature: String,
}

/// What `fleet_catalogue` holds under a catalogue's SHA-256: every operation of that catalogue
/// by name, with the SHA-256 of its request and result schemas, scope and module
/// (`registry::CatalogueEntry::sha256`), so that an operation a peer offers in another shape is
/// told apart from this node's without comparing schemas.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OfferedCatalogue {
    /// Operation name → its SHA-256.
    pub operations: BTreeMap<String, String>,
}

impl OfferedCatalogue {
    /// This build's catalogue.
    pub fn of_this_build() -> OfferedCatalogue {
        OfferedCatalogue {
            operations: declarations::registry()
                .catalogue()
                .iter()
                .map(|e| (e.operation.to_owned(), e.sha256.clone()))
                .collect(),
        }
    }

    pub fn offers(&self, operation: &str) -> bool {
        self.operations.contains_key(operation)
    }

    /// The SHA-256 of `operation` in this catalogue, if it offers it.
    pub fn operation_sha256(&self, operation: &str) -> Option<&str> {
        self.operations.get(operation).map(String::as_str)
    }
}

/// A join token's record (`fleet_tokens`): the node it admits, until when, and the hash of its
/// secret (the secret itself is only in the token).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TokenRecord {
    /// The node it admits; `None`: the name the joining node gives.
    pub node: Option<String>,
    pub secret_sha256: String,
    pub expires_at_ms: i64,
    /// Set by the join service when the token is used: a second use is refused.
    pub used_at_ms: Option<i64>,
}

/// A joining node's request on [`JOIN_SUBJECT`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JoinRequest {
    pub token_id: String,
    pub secret: String,
    /// The name the node asks for (the token's, if it names one).
    pub node: Option<String>,
    pub node_id: String,
    /// The nkey the node made for itself; its seed never leaves the node.
    pub public_key: String,
}

/// The join service's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum JoinReply {
    Joined {
        node: String,
        /// The fleet's assignment-signing public key, pinned by the node.
        fleet_key: String,
        /// The fleet's CAs (PEM; two while the CA is rotated) the node verifies every broker
        /// with from now on, until its trust bundle changes.
        ca_pem: String,
        brokers: Vec<String>,
    },
    Refused {
        code: String,
        message: String,
    },
}

/// One event on the events stream. `id` is also the message's `Nats-Msg-Id`: the stream stores
/// each once, however often a node that lost an ack publishes it again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FleetEvent {
    pub id: String,
    pub node: String,
    pub at_ms: i64,
    #[serde(flatten)]
    pub body: EventBody,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventBody {
    /// A job changed state; a final state carries the job's view (its result or error).
    Job {
        request_id: String,
        operation: String,
        state: registry::JobState,
        job: Option<registry::JobView>,
    },
    /// A request the node took from its queue: durable in its inbox (or known already, the same
    /// job), with the job's view at that moment. A redelivered request is answered again.
    Accepted {
        request_id: String,
        job: registry::JobView,
    },
    /// The drift check found something, or found it gone.
    Drift {
        event: registry::Event,
    },
    /// The runner found one of the node's file systems full, or with space again.
    Disk {
        event: registry::Event,
    },
    /// A request the node refused at admission: the API's `{code, message, field}`. The message
    /// was copied to the dead-letter stream and terminated, never redelivered.
    Refused {
        request_id: Option<String>,
        code: String,
        message: String,
        field: String,
    },
    /// Root's feed no longer held events the node had not published (it keeps the last
    /// 100,000): those between `after` and `before`, exclusive, are lost to the fleet.
    EventsLost {
        after: i64,
        before: i64,
    },
    Started {
        version: String,
    },
    Stopping,
    AssignmentApplied {
        generation: u64,
        modules: Vec<Module>,
    },
    /// An assignment the node could not apply (a module still in use, a bad signature...).
    AssignmentRefused {
        generation: u64,
        code: String,
        message: String,
    },
    ModuleReady {
        module: Module,
    },
    ModuleUnavailable {
        module: Module,
        reason: String,
    },
    /// The node's consumer held requests it had not delivered while the node waited for work,
    /// for half a heartbeat twice in a row: the node pulled its queue anew (bound it again)
    /// and says so, once per stall. `paused`: the broker says the consumer is paused (an
    /// operator paused it; pulling anew does not lift that).
    QueueStalled {
        pending: u64,
        paused: bool,
    },
    /// Fleet side: a node's heartbeats stopped.
    NodeDown {
        last_seen_ms: i64,
    },
    /// Fleet side: a node is back, after this long down.
    NodeUp {
        downtime_ms: i64,
    },
    /// Fleet side: the node refused a request for good (its `refused` event says why), copied
    /// it to the dead-letter stream and terminated it; `deliveries` is how often the broker
    /// had delivered it.
    DeadLetter {
        stream_sequence: u64,
        deliveries: i64,
    },
}

impl EventBody {
    /// The last token of the event's subject.
    pub fn kind(&self) -> &'static str {
        match self {
            EventBody::Job { .. } => "job",
            EventBody::Accepted { .. } => "accepted",
            EventBody::Drift { .. } => "drift",
            EventBody::Disk { .. } => "disk",
            EventBody::Refused { .. } => "refused",
            EventBody::EventsLost { .. } => "events_lost",
            EventBody::Started { .. } => "started",
            EventBody::Stopping => "stopping",
            EventBody::AssignmentApplied { .. } => "assignment_applied",
            EventBody::AssignmentRefused { .. } => "assignment_refused",
            EventBody::ModuleReady { .. } => "module_ready",
            EventBody::ModuleUnavailable { .. } => "module_unavailable",
            EventBody::QueueStalled { .. } => "queue_stalled",
            EventBody::NodeDown { .. } => "node_down",
            EventBody::NodeUp { .. } => "node_up",
            EventBody::DeadLetter { .. } => "dead_letter",
        }
    }
}

/// The reference part of `docs/fleet.md`: every name and message of this module, generated
/// (`layerone fleet reference` prints it; a test keeps the document equal to it).
pub fn reference() -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "### Streams\n");
    let _ = writeln!(out, "| stream | subjects | kind |\n| --- | --- | --- |");
    let _ = writeln!(
        out,
        "| `{REQUESTS_STREAM}` | `fleet.req.<node>` | work queue; one durable pull consumer per node, named after it, filtered to its subject; acknowledged explicitly, {ACK_WAIT_SECS} s to acknowledge, delivered again until acknowledged or terminated (no limit of deliveries) |"
    );
    let _ = writeln!(
        out,
        "| `{EVENTS_STREAM}` | `fleet.evt.node.<node>.<kind>`, `fleet.evt.fleet.<kind>` | limits; de-duplicated by `Nats-Msg-Id` within {DUPLICATE_WINDOW_SECS} s |"
    );
    let _ = writeln!(
        out,
        "| `{DEAD_LETTER_STREAM}` | `fleet.dlq.<node>` | limits; each request a node refused for good, copied there by the node before it terminated it (message id `dlq.<sequence>`), header `Layerone-Original-Sequence` |"
    );
    let _ = writeln!(out, "\n### Buckets\n");
    let _ = writeln!(
        out,
        "| bucket | key | value | written by |\n| --- | --- | --- | --- |"
    );
    let _ = writeln!(
        out,
        "| `{NODES_BUCKET}` | node name | `NodeRecord` | the fleet service, `fleet drain/maintenance/activate/remove` |"
    );
    let _ = writeln!(
        out,
        "| `{ASSIGN_BUCKET}` | node name | `Assignment` | the control plane (`fleet assign`); the node reads its own key by direct get |"
    );
    let _ = writeln!(
        out,
        "| `{PRESENCE_BUCKET}` | node name | `Presence`, with a per-message TTL of three heartbeats | the node |"
    );
    let _ = writeln!(
        out,
        "| `{TOKENS_BUCKET}` | token id | `TokenRecord` | `fleet token`; the fleet service marks it used |"
    );
    let _ = writeln!(
        out,
        "| `{CATALOGUE_BUCKET}` | catalogue SHA-256 | `OfferedCatalogue`: each operation of that catalogue with its own SHA-256 | `fleet init` (the catalogues the fleet accepts) |"
    );
    let _ = writeln!(
        out,
        "| `{TRUST_BUCKET}` | `{TRUST_KEY}` | `TrustBundle` | `fleet init`, `fleet ca rotate`, `fleet ca finish`; every node reads it by direct get |"
    );
    let _ = writeln!(out, "\n### Other subjects and headers\n");
    let _ = writeln!(
        out,
        "- `{JOIN_SUBJECT}`: core request and reply; `JoinRequest` in, `JoinReply` out; the joining client is the `{JOIN_USER}` user with inbox prefix `{JOIN_INBOX_PREFIX}`."
    );
    let _ = writeln!(
        out,
        "- `{KIND_HEADER}: {KIND_ASSIGNMENT}` on a node's queue: its assignment changed; the node reads it again. Without the header, the message is a request, the body `POST /v1/jobs` takes."
    );
    let _ = writeln!(
        out,
        "- `{KIND_HEADER}: {KIND_TRUST}` on a node's queue: the fleet's trust bundle changed; the node reads it again, keeps it, and verifies the broker against exactly its CAs."
    );
    let _ = writeln!(
        out,
        "- `Nats-Msg-Id`: every request (`request.<node>.<request_id>.<first 16 hex of the body's SHA-256>`) and every event (`FleetEvent.id`)."
    );
    let _ = writeln!(
        out,
        "- The assignment's signature: ed25519 by the fleet's key over `layerone-assignment:v1\\n<node>\\n<generation>\\n<modules, sorted, comma-separated>`, base64url without padding."
    );
    for (title, perms) in [
        ("What a node may do (node `X`)", node_permissions("X")),
        (
            "What an operator may do (operator `O`)",
            operator_permissions("O"),
        ),
    ] {
        let _ = writeln!(out, "\n### {title}\n");
        for (what, subjects) in [("publish", &perms.publish), ("subscribe", &perms.subscribe)] {
            let _ = writeln!(
                out,
                "- {what}: {}",
                subjects
                    .iter()
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    let _ = writeln!(out, "\n### Messages (JSON Schema)\n");
    let settings = schemars::generate::SchemaSettings::draft2020_12();
    let mut schemas = vec![];
    macro_rules! schema {
        ($($t:ty),*) => {$(
            schemas.push((stringify!($t), schemars::SchemaGenerator::new(settings.clone()).into_root_schema_for::<$t>()));
        )*};
    }
    schema!(
        FleetEvent,
        Presence,
        NodeRecord,
        Assignment,
        TokenRecord,
        TrustBundle,
        OfferedCatalogue,
        JoinRequest,
        JoinReply
    );
    let mut narrowed = 0;
    for (name, schema) in schemas {
        let mut schema = schema.to_value();
        narrowed += registry::openapi::with_declared_aspects(&mut schema, declarations::registry());
        // Written as a schema: its well-known keywords first, as schemars orders them.
        let schema = schemars::Schema::try_from(schema).expect("still an object");
        let _ = writeln!(
            out,
            "#### `{name}`\n\n```json\n{}\n```\n",
            serde_json::to_string_pretty(&schema).expect("a schema serialises")
        );
    }
    assert_eq!(narrowed, 1, "a fleet event's drift has its aspects listed");
    out
}

/// The SHA-256 of this build's catalogue (`registry::Registry::catalogue_sha256`): what a
/// node reports and the fleet compares.
pub fn catalogue_sha256() -> String {
    declarations::registry().catalogue_sha256()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names_are_subject_tokens_and_dns_labels() {
        for good in ["web-1", "a", "0node", &"a".repeat(63)] {
            assert!(valid_node_name(good), "{good}");
        }
        for bad in [
            "",
            "-a",
            "Web",
            "a.b",
            "a*",
            "a>",
            "a b",
            &"a".repeat(64),
            "é",
        ] {
            assert!(!valid_node_name(bad), "{bad}");
        }
    }
}
