//! The fleet's security on a real nats-server (127.0.0.1), with nodes that joined through the
//! real `layerone join`: what a node's own credential lets it do on the broker and what the
//! broker refuses, join tokens refused when used twice, expired or wrong, a name held by
//! another key, a broker that fails the token's CA pin receiving no byte of the credential,
//! and a removed node's credential refused at once.
//!
//! Every refusal is the server's own: a permission violation arrives asynchronously as
//! `-ERR 'Permissions Violation for ... "SUBJECT"'`, read here through the test's own
//! connection's event callback, and each test then reads the streams and buckets with the
//! control plane's credential to show nothing changed. Each refusal has its positive control
//! beside it (the node doing the same to its own subjects), so a broker that refused
//! everything would fail the tests too.

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, AckKind};
use fleet::identity::{Credentials, IdentityDir};
use fleet::protocol::{
    self, ASSIGN_BUCKET, Assignment, EVENTS_STREAM, EventBody, FleetEvent, PRESENCE_BUCKET,
    REQUESTS_STREAM, TRUST_BUCKET, TRUST_KEY, TrustBundle,
};
use fleet::token::JoinToken;
use futures_util::{FutureExt as _, StreamExt as _};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::Value;

use crate::fleet_support;

use fleet_support::{DevNode, Fleet, ensure_account, hex32, layerone, layerone_output, runtime};

/// How long a test waits for something the server or a node does by itself.
const PATIENCE: Duration = Duration::from_secs(30);

/// A node's credentials as `layerone join` wrote them in its dev root.
fn credentials(node: &DevNode) -> Credentials {
    IdentityDir(node.root.join("sysroot/etc/layerone/fleet"))
        .load()
        .unwrap()
        .expect("the node has joined")
}

fn public_key(seed: &str) -> String {
    nkeys::KeyPair::from_seed(seed).unwrap().public_key()
}

/// A connection made with a node's own seed, its own inbox prefix and the fleet CA, as
/// `fleet::connect::node` makes it, whose events (the server's errors among them) the test
/// reads.
struct AsNode {
    name: String,
    client: async_nats::Client,
    events: Arc<Mutex<Vec<String>>>,
}

impl AsNode {
    async fn connect(
        name: &str,
        credentials: &Credentials,
    ) -> Result<AsNode, async_nats::ConnectError> {
        let events = Arc::new(Mutex::new(Vec::new()));
        let log = events.clone();
        let options = async_nats::ConnectOptions::new()
            .name(format!("test as node {name}"))
            .nkey(credentials.seed.clone())
            .custom_inbox_prefix(protocol::node_inbox_prefix(name))
            .require_tls(true)
            .tls_client_config(fleet::tls::client_config(&[&credentials.ca_pem]).unwrap())
            .connection_timeout(Duration::from_secs(5))
            // One try after a disconnection, then closed: what the test sees of a refused key
            // stays the test's own.
            .max_reconnects(Some(1))
            .event_callback(move |event| {
                let log = log.clone();
                async move { log.lock().unwrap().push(event.to_string()) }
            });
        let addrs: Vec<async_nats::ServerAddr> = credentials
            .identity
            .brokers
            .iter()
            .map(|b| b.parse().unwrap())
            .collect();
        let client = options.connect(addrs).await?;
        Ok(AsNode {
            name: name.to_owned(),
            client,
            events,
        })
    }

    fn events(&self) -> Vec<String> {
        self.events.lock().unwrap().clone()
    }

    /// Waits for the first event `ok` accepts and returns its text.
    fn wait_event(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(event) = self.events().into_iter().find(|e| ok(e)) {
                return event;
            }
            assert!(
                Instant::now() < deadline,
                "node {}: no {what} within {PATIENCE:?}; its events: {:#?}",
                self.name,
                self.events()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The server's permission violation of `kind` (`Publish`, `Subscription`) naming
    /// `subject`, as async-nats surfaces it.
    fn violation(&self, kind: &str, subject: &str) -> String {
        let text = format!("Permissions Violation for {kind} to \"{subject}\"");
        self.wait_event(&text, |e| {
            e.starts_with("server error") && e.contains(&text)
        })
    }

    fn violations(&self) -> Vec<String> {
        self.events()
            .into_iter()
            .filter(|e| e.contains("Permissions Violation"))
            .collect()
    }
}

/// The control plane's own view of the broker, for checking what a refused node did not change.
struct ControlPlane {
    client: async_nats::Client,
    js: jetstream::Context,
}

impl ControlPlane {
    async fn connect(fleet: &Fleet) -> ControlPlane {
        let client = fleet.control_plane().await;
        ControlPlane {
            js: jetstream::new(client.clone()),
            client,
        }
    }

    /// What node `name`'s consumer holds: (pending, ack pending, last delivered stream sequence).
    async fn queue(&self, name: &str) -> (u64, usize, u64) {
        let info = self
            .js
            .get_stream(REQUESTS_STREAM)
            .await
            .unwrap()
            .consumer_info(name)
            .await
            .unwrap();
        (
            info.num_pending,
            info.num_ack_pending,
            info.delivered.stream_sequence,
        )
    }

    /// How many messages `stream` holds on each subject matching `filter`.
    async fn subjects(&self, stream: &str, filter: &str) -> Vec<(String, usize)> {
        let mut out: Vec<(String, usize)> = self
            .js
            .get_stream(stream)
            .await
            .unwrap()
            .info_with_subjects(filter)
            .await
            .unwrap()
            .map(Result::unwrap)
            .collect()
            .await;
        out.sort();
        out
    }

    /// A key's (revision, value) in a bucket.
    async fn entry(&self, bucket: &str, key: &str) -> Option<(u64, Vec<u8>)> {
        let kv = self.js.get_key_value(bucket).await.unwrap();
        kv.entry(key)
            .await
            .unwrap()
            .map(|e| (e.revision, e.value.to_vec()))
    }

    /// The payload of the last message on `subject` in `stream`, if any.
    async fn last_on(&self, stream: &str, subject: &str) -> Option<Vec<u8>> {
        let stream = self.js.get_stream(stream).await.unwrap();
        stream
            .get_last_raw_message_by_subject(subject)
            .await
            .ok()
            .map(|m| m.payload.to_vec())
    }
}

/// Node `name`'s event, as its daemon would publish it.
fn event_json(id: &str, node: &str) -> Vec<u8> {
    serde_json::to_vec(&FleetEvent {
        id: id.to_owned(),
        node: node.to_owned(),
        at_ms: 0,
        body: EventBody::Stopping,
    })
    .unwrap()
}

/// Two joined nodes, then stopped, so nothing but the test uses their credentials and nothing
/// consumes their queues.
fn two_stopped_nodes(fleet: &Fleet) -> (DevNode, DevNode) {
    let mut a = DevNode::start(fleet.dir.path(), "n1");
    let mut b = DevNode::start(fleet.dir.path(), "n2");
    fleet.join(&a, "n1");
    fleet.join(&b, "n2");
    fleet.wait_state("n1", "up", PATIENCE);
    fleet.wait_state("n2", "up", PATIENCE);
    a.kill();
    b.kill();
    (a, b)
}

/// `fleet submit NODE REQUEST` without waiting: the request's stream sequence.
fn dispatch(fleet: &Fleet, node: &str, request: &Value) -> u64 {
    let out: Value =
        serde_json::from_str(&fleet.cli(&["submit", node, &request.to_string()])).unwrap();
    out["sequence"].as_u64().unwrap()
}

#[test]
fn a_node_cannot_touch_another_nodes_queue_assignment_events_or_inbox_but_can_its_own() {
    let fleet = Fleet::init();
    let (a, b) = two_stopped_nodes(&fleet);
    fleet.cli(&["assign", "n1", "web"]);
    fleet.cli(&["assign", "n2", "web"]);
    let b_request = ensure_account(&hex32(20), &hex32(21), "bonly");
    let b_seq = dispatch(&fleet, "n2", &b_request);
    let a_request = ensure_account(&hex32(10), &hex32(11), "aonly");
    dispatch(&fleet, "n1", &a_request);

    let rt = runtime();
    let cp = rt.block_on(ControlPlane::connect(&fleet));
    let a_creds = credentials(&a);
    assert_eq!(a_creds.identity.node, "n1");
    assert_ne!(a_creds.seed, credentials(&b).seed);
    let node_a = rt.block_on(AsNode::connect("n1", &a_creds)).unwrap();

    // What the refusals must leave as it is.
    let before = rt.block_on(async {
        (
            cp.queue("n2").await,
            cp.entry(ASSIGN_BUCKET, "n1").await,
            cp.entry(ASSIGN_BUCKET, "n2").await,
            cp.subjects(EVENTS_STREAM, "fleet.evt.node.n2.>").await,
            cp.subjects(REQUESTS_STREAM, ">").await,
            cp.entry(TRUST_BUCKET, TRUST_KEY).await,
        )
    });
    assert_eq!(
        before.0.0, 2,
        "n2's queue: its assignment notice and its request"
    );
    assert!(
        before.1.is_some() && before.2.is_some(),
        "both are assigned"
    );

    // Everything node A must not publish, each with what a client would send there.
    let forged_assignment = serde_json::to_vec(&Assignment {
        node: "n1".into(),
        generation: 99,
        modules: vec![registry::Module::Core, registry::Module::Mail],
        signature: "forged".into(),
    })
    .unwrap();
    let kv_b = protocol::kv_subject(ASSIGN_BUCKET, "n2");
    let kv_trust = protocol::kv_subject(TRUST_BUCKET, TRUST_KEY);
    let forged_trust = serde_json::to_vec(&TrustBundle {
        generation: 99,
        ca_pems: vec![fleet::tls::create_ca("forged").unwrap().cert_pem],
    })
    .unwrap();
    let forbidden: Vec<(String, Vec<u8>)> = vec![
        // Consume B's queue: pull from its consumer, read it, acknowledge or end B's messages.
        (
            format!("$JS.API.CONSUMER.MSG.NEXT.{REQUESTS_STREAM}.n2"),
            br#"{"batch":1,"expires":1000000000}"#.to_vec(),
        ),
        (format!("$JS.API.CONSUMER.INFO.{REQUESTS_STREAM}.n2"), Vec::new()),
        (
            format!("$JS.ACK.{REQUESTS_STREAM}.n2.1.{b_seq}.1.0.0"),
            b"+TERM".to_vec(),
        ),
        // Make a consumer of its own on B's subject.
        (
            format!("$JS.API.CONSUMER.CREATE.{REQUESTS_STREAM}.thief.fleet.req.n2"),
            format!(
                r#"{{"stream_name":"{REQUESTS_STREAM}","config":{{"name":"thief","filter_subject":"fleet.req.n2","ack_policy":"explicit"}}}}"#
            )
            .into_bytes(),
        ),
        // Dispatch work to B.
        (protocol::request_subject("n2"), b_request.to_string().into_bytes()),
        // Read B's assignment: direct get by subject, and the two forms with the subject in
        // the body.
        (
            format!("$JS.API.DIRECT.GET.KV_{ASSIGN_BUCKET}.{kv_b}"),
            Vec::new(),
        ),
        (
            format!("$JS.API.DIRECT.GET.KV_{ASSIGN_BUCKET}"),
            format!(r#"{{"last_by_subj":"{kv_b}"}}"#).into_bytes(),
        ),
        (
            format!("$JS.API.STREAM.MSG.GET.KV_{ASSIGN_BUCKET}"),
            format!(r#"{{"last_by_subj":"{kv_b}"}}"#).into_bytes(),
        ),
        // Write any assignment, its own too.
        (
            protocol::kv_subject(ASSIGN_BUCKET, "n1"),
            forged_assignment.clone(),
        ),
        (kv_b.clone(), forged_assignment.clone()),
        // Write the fleet's trust bundle (a CA of its own for every node), or read the trust
        // bucket with the subject in the body.
        (kv_trust.clone(), forged_trust),
        (
            format!("$JS.API.DIRECT.GET.KV_{TRUST_BUCKET}"),
            format!(r#"{{"last_by_subj":"{kv_trust}"}}"#).into_bytes(),
        ),
        // Speak for B: its events, its heartbeat.
        (
            protocol::node_events_subject("n2", "job"),
            event_json("forged.by.n1", "n2"),
        ),
        (
            protocol::kv_subject(PRESENCE_BUCKET, "n2"),
            b"forged by n1".to_vec(),
        ),
    ];
    // Everything it must not subscribe to: the shared inbox, B's inbox, B's queue as it is
    // dispatched, every event, everything.
    let forbidden_subscriptions = [
        "_INBOX.>".to_owned(),
        format!("{}.>", protocol::node_inbox_prefix("n2")),
        protocol::request_subject("n2"),
        "fleet.evt.>".to_owned(),
        ">".to_owned(),
    ];

    let started = Instant::now();
    let mut stolen = rt.block_on(async {
        let reply = node_a.client.new_inbox();
        let replies = node_a.client.subscribe(format!("{reply}.>")).await.unwrap();
        for (i, (subject, body)) in forbidden.iter().enumerate() {
            node_a
                .client
                .publish_with_reply(subject.clone(), format!("{reply}.{i}"), body.clone().into())
                .await
                .unwrap();
        }
        let mut subscriptions = Vec::new();
        for subject in &forbidden_subscriptions {
            subscriptions.push(node_a.client.subscribe(subject.clone()).await.unwrap());
        }
        node_a.client.flush().await.unwrap();
        // An answer to any refused request would land here.
        subscriptions.push(replies);
        subscriptions
    });
    for (subject, _) in &forbidden {
        node_a.violation("Publish", subject);
    }
    for subject in &forbidden_subscriptions {
        node_a.violation("Subscription", subject);
    }
    eprintln!(
        "the server refused {} publications and {} subscriptions in {:?}",
        forbidden.len(),
        forbidden_subscriptions.len(),
        started.elapsed()
    );

    // Nothing changed: B's request is still queued and was never delivered, no assignment
    // was written, nothing was published for B.
    let after = rt.block_on(async {
        (
            cp.queue("n2").await,
            cp.entry(ASSIGN_BUCKET, "n1").await,
            cp.entry(ASSIGN_BUCKET, "n2").await,
            cp.subjects(EVENTS_STREAM, "fleet.evt.node.n2.>").await,
            cp.subjects(REQUESTS_STREAM, ">").await,
            cp.entry(TRUST_BUCKET, TRUST_KEY).await,
        )
    });
    assert_eq!(after, before, "a refused node changed the fleet's state");
    assert!(
        !after.3.iter().any(|(s, _)| s == "fleet.evt.node.n2.job"),
        "{:?}",
        after.3
    );
    rt.block_on(async {
        let requests = cp.js.get_stream(REQUESTS_STREAM).await.unwrap();
        let queued = requests.get_raw_message(b_seq).await.unwrap();
        assert_eq!(
            serde_json::from_slice::<Value>(&queued.payload).unwrap(),
            b_request,
            "B's request is still queued"
        );
        let presence = cp
            .last_on(
                &format!("KV_{PRESENCE_BUCKET}"),
                &protocol::kv_subject(PRESENCE_BUCKET, "n2"),
            )
            .await
            .unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&presence).contains("forged"),
            "n1 wrote n2's heartbeat"
        );
    });

    // The positive control, on the same connection: node A does all of it to its own.
    rt.block_on(async {
        let own_inbox = format!("{}.probe", protocol::node_inbox_prefix("n1"));
        let mut own = node_a.client.subscribe(own_inbox.clone()).await.unwrap();
        let js = jetstream::new(node_a.client.clone());
        // Its own assignment, by direct get, as the daemon reads it (a round trip: the server
        // has registered the subscription above by the time it answers).
        let entry = js
            .get_stream_no_info(format!("KV_{ASSIGN_BUCKET}"))
            .await
            .unwrap()
            .direct_get_last_for_subject(protocol::kv_subject(ASSIGN_BUCKET, "n1"))
            .await
            .unwrap();
        let assignment: Assignment = serde_json::from_slice(&entry.payload).unwrap();
        assert_eq!((assignment.node.as_str(), assignment.generation), ("n1", 1));
        // The fleet's trust bundle, by direct get, as the daemon reads it: the CA it joined with.
        let entry = js
            .get_stream_no_info(format!("KV_{TRUST_BUCKET}"))
            .await
            .unwrap()
            .direct_get_last_for_subject(kv_trust.clone())
            .await
            .unwrap();
        let bundle: TrustBundle = serde_json::from_slice(&entry.payload).unwrap();
        assert_eq!(bundle.ca_pems, vec![a_creds.ca_pem.clone()]);
        // Its own queue: the assignment notice, then its request, each acknowledged.
        let consumer: jetstream::consumer::PullConsumer = js
            .get_stream_no_info(REQUESTS_STREAM)
            .await
            .unwrap()
            .get_consumer("n1")
            .await
            .unwrap();
        let mut pulled = Vec::new();
        let mut batch = consumer.fetch().max_messages(2).messages().await.unwrap();
        while let Some(message) = batch.next().await {
            let message = message.unwrap();
            message.double_ack_with(AckKind::Ack).await.unwrap();
            pulled.push(message.payload.to_vec());
        }
        assert!(
            pulled
                .iter()
                .any(|p| serde_json::from_slice::<Value>(p).ok().as_ref() == Some(&a_request)),
            "n1 pulled its own request"
        );
        assert_eq!(cp.queue("n1").await.0, 0, "n1's queue is empty");
        // Its own event, stored once on the events stream.
        let ack = js
            .publish(
                protocol::node_events_subject("n1", "stopping"),
                event_json("own.by.n1", "n1").into(),
            )
            .await
            .unwrap()
            .await
            .unwrap();
        assert_eq!(ack.stream, EVENTS_STREAM);
        let stored = cp
            .last_on(
                EVENTS_STREAM,
                &protocol::node_events_subject("n1", "stopping"),
            )
            .await
            .unwrap();
        assert_eq!(stored, event_json("own.by.n1", "n1"));
        // Its own inbox receives; the refused subscriptions receive nothing. The control plane
        // publishes the probe of A's own inbox last, so whatever a refused subscription would
        // have received reached the client before it.
        for subject in [
            "_INBOX.probe".to_owned(),
            format!("{}.probe", protocol::node_inbox_prefix("n2")),
            protocol::request_subject("n2"),
            own_inbox.clone(),
        ] {
            cp.client
                .publish(subject, b"probe".to_vec().into())
                .await
                .unwrap();
        }
        cp.client.flush().await.unwrap();
        let received = tokio::time::timeout(PATIENCE, own.next())
            .await
            .expect("n1's own inbox receives")
            .unwrap();
        assert_eq!(received.subject.as_str(), own_inbox);
        for subscription in &mut stolen {
            if let Some(Some(message)) = subscription.next().now_or_never() {
                panic!(
                    "n1 received {} through a refused subscription",
                    message.subject
                );
            }
        }
    });
    // No violation names anything of its own.
    for violation in node_a.violations() {
        assert!(
            forbidden
                .iter()
                .any(|(s, _)| violation.contains(&format!("\"{s}\"")))
                || forbidden_subscriptions
                    .iter()
                    .any(|s| violation.contains(&format!("\"{s}\""))),
            "an unexpected refusal: {violation}"
        );
    }
}

/// `layerone join TOKEN --dev ROOT`, expected to be refused with `code`: the refusal's text.
fn join_refused(token: &str, node: &DevNode, code: &str) -> String {
    let out = layerone_output(&["join", token, "--dev", node.root.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success() && stderr.contains(&format!("[{code}]")),
        "join should be refused with {code}: {stderr}"
    );
    stderr
}

fn registered(fleet: &Fleet) -> Vec<(String, String)> {
    let mut nodes: Vec<(String, String)> = fleet
        .nodes()
        .iter()
        .map(|n| {
            (
                n["name"].as_str().unwrap().to_owned(),
                n["node_id"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    nodes.sort();
    nodes
}

#[test]
fn join_tokens_are_refused_used_twice_expired_or_with_a_wrong_secret_and_a_taken_name_is_kept() {
    let fleet = Fleet::init();
    let n1 = DevNode::start(fleet.dir.path(), "n1");
    let n2 = DevNode::start(fleet.dir.path(), "n2");
    let intruder = DevNode::start(fleet.dir.path(), "intruder");

    // Used twice: the second use, from another node, is refused.
    let token = fleet.cli(&["token", "n1"]).trim().to_owned();
    layerone(&["join", &token, "--dev", n1.root.to_str().unwrap()]);
    join_refused(&token, &intruder, "token_used");
    join_refused(&token, &n1, "token_used");
    assert_eq!(registered(&fleet), vec![("n1".to_owned(), n1.node_id())]);

    // Expired: a token good for one second, used after it.
    let expiring = fleet.cli(&["token", "n2", "--ttl", "1"]).trim().to_owned();
    std::thread::sleep(Duration::from_millis(1500));
    join_refused(&expiring, &n2, "token_expired");

    // A wrong secret is refused and does not use the token up: the right one still joins.
    let good = fleet.cli(&["token", "n2"]).trim().to_owned();
    let mut wrong = JoinToken::parse(&good).unwrap();
    wrong.secret = fleet::token::random_hex(32);
    join_refused(&wrong.encode(), &n2, "token_invalid");
    // An id the fleet never minted.
    let mut unknown = JoinToken::parse(&good).unwrap();
    unknown.id = fleet::token::random_hex(8);
    join_refused(&unknown.encode(), &n2, "token_unknown");
    layerone(&["join", &good, "--dev", n2.root.to_str().unwrap()]);

    // A name registered with another key: refused, and the record is not overwritten.
    let n1_key = public_key(&credentials(&n1).seed);
    let record_before = fleet
        .nodes()
        .into_iter()
        .find(|n| n["name"] == "n1")
        .unwrap();
    let fresh = fleet.cli(&["token", "n1"]).trim().to_owned();
    let refusal = join_refused(&fresh, &intruder, "node_exists");
    // The refusal names the way out for a machine that replaces the node.
    assert!(
        refusal.contains("`layerone fleet remove n1`") && refusal.contains("new token"),
        "{refusal}"
    );
    let unnamed = fleet.cli(&["token"]).trim().to_owned();
    let out = layerone_output(&[
        "join",
        &unnamed,
        "--name",
        "n1",
        "--dev",
        intruder.root.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("[node_exists]"),
        "{stderr}"
    );
    assert_eq!(
        registered(&fleet),
        vec![
            ("n1".to_owned(), n1.node_id()),
            ("n2".to_owned(), n2.node_id())
        ]
    );
    let record_after = fleet
        .nodes()
        .into_iter()
        .find(|n| n["name"] == "n1")
        .unwrap();
    assert_eq!(record_after["node_id"], record_before["node_id"]);
    // The refusal did not spend the token: n1 itself (its own key) rejoins with it.
    layerone(&["join", &fresh, "--dev", n1.root.to_str().unwrap()]);
    let rt = runtime();
    let cp = rt.block_on(ControlPlane::connect(&fleet));
    let (_, record) = rt.block_on(cp.entry(protocol::NODES_BUCKET, "n1")).unwrap();
    let record: protocol::NodeRecord = serde_json::from_slice(&record).unwrap();
    assert_eq!(
        record.public_key, n1_key,
        "n1's key is the one it joined with"
    );
    assert!(
        !intruder
            .root
            .join("sysroot/etc/layerone/fleet/identity.json")
            .exists(),
        "the refused node wrote no identity"
    );
    // The refused node's key is not a user of the broker: the server turns it away.
    let intruder_seed =
        std::fs::read_to_string(intruder.root.join("sysroot/etc/layerone/fleet/node.nk")).unwrap();
    let mut as_intruder = credentials(&n1);
    as_intruder.seed = intruder_seed.trim().to_owned();
    let refused = rt
        .block_on(AsNode::connect("n1", &as_intruder))
        .err()
        .expect("the broker refuses a key it was never given");
    assert_eq!(
        refused.kind(),
        async_nats::ConnectErrorKind::AuthorizationViolation,
        "{refused}"
    );
    // And n1, whose name the intruder asked for, still takes work.
    let event = fleet.submit_wait("n1", &ensure_account(&hex32(1), &hex32(2), "kept"));
    assert_eq!(event["job"]["state"], "succeeded", "{event}");
}

/// What one client sent a fake broker.
#[derive(Debug)]
struct Recorded {
    /// Every byte, as it came off the socket.
    raw: Vec<u8>,
    /// How the TLS handshake ended, as the fake's rustls saw it.
    handshake: Result<(), String>,
    /// What the client sent inside TLS, had the handshake completed.
    plaintext: Vec<u8>,
}

/// Reads from the socket, keeping a copy of every byte.
struct Tee<'a> {
    socket: &'a TcpStream,
    raw: &'a mut Vec<u8>,
}

impl std::io::Read for Tee<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = (&mut &*self.socket).read(buf)?;
        self.raw.extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

impl std::io::Write for Tee<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        (&mut &*self.socket).write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        (&mut &*self.socket).flush()
    }
}

/// A broker that is not the fleet's: it speaks NATS's plaintext INFO line asking for TLS, then
/// answers the handshake with the certificate chain it was given, recording every byte each
/// client sends.
struct FakeBroker {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Vec<Recorded>>>,
}

impl FakeBroker {
    fn start(chain: Vec<CertificateDer<'static>>, key: PrivateKeyDer<'static>) -> FakeBroker {
        let config = Arc::new(
            rustls::ServerConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap(),
        );
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut recorded = Vec::new();
            while !stopped.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((socket, _)) => recorded.push(serve(socket, config.clone(), port)),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    Err(e) => panic!("the fake broker's listener: {e}"),
                }
            }
            recorded
        });
        FakeBroker {
            port,
            stop,
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("tls://127.0.0.1:{}", self.port)
    }

    /// Stops listening; what every client sent.
    fn finish(mut self) -> Vec<Recorded> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().unwrap().join().unwrap()
    }
}

fn serve(socket: TcpStream, config: Arc<rustls::ServerConfig>, port: u16) -> Recorded {
    socket.set_nonblocking(false).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let info = format!(
        "INFO {{\"server_id\":\"x\",\"server_name\":\"x\",\"version\":\"2.15.1\",\"proto\":1,\
         \"host\":\"127.0.0.1\",\"port\":{port},\"headers\":true,\"max_payload\":1048576,\
         \"tls_required\":true}}\r\n"
    );
    (&socket).write_all(info.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let mut plaintext = Vec::new();
    let mut tls = rustls::ServerConnection::new(config).unwrap();
    let mut tee = Tee {
        socket: &socket,
        raw: &mut raw,
    };
    let mut handshake = Err("the client went away".to_owned());
    for _ in 0..100 {
        if !tls.is_handshaking() {
            handshake = Ok(());
            break;
        }
        if let Err(e) = tls.complete_io(&mut tee) {
            handshake = Err(e.to_string());
            break;
        }
    }
    let mut buf = [0u8; 4096];
    if handshake.is_ok() {
        // A broker the client trusted: what it says first, in the clear inside TLS.
        let mut stream = rustls::Stream::new(&mut tls, &mut tee);
        while !plaintext.windows(2).any(|w| w == b"\r\n") {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => plaintext.extend_from_slice(&buf[..n]),
            }
        }
    } else {
        // Whatever else the client sends before it closes.
        while let Ok(n) = tee.read(&mut buf) {
            if n == 0 {
                break;
            }
        }
    }
    Recorded {
        raw,
        handshake,
        plaintext,
    }
}

/// The TLS records of `raw` as (content type, length); panics unless `raw` is nothing but
/// whole TLS records.
fn tls_records(raw: &[u8]) -> Vec<(u8, usize)> {
    let mut records = Vec::new();
    let mut rest = raw;
    while !rest.is_empty() {
        assert!(rest.len() >= 5, "a truncated TLS record header: {rest:?}");
        let (kind, version) = (rest[0], [rest[1], rest[2]]);
        assert!(
            (20..=23).contains(&kind) && matches!(version, [3, 1] | [3, 3]),
            "not a TLS record: {:?}",
            &rest[..5]
        );
        let len = usize::from(u16::from_be_bytes([rest[3], rest[4]]));
        assert!(rest.len() >= 5 + len, "a truncated TLS record");
        records.push((kind, len));
        rest = &rest[5 + len..];
    }
    records
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn certs(pem: &str) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(pem.as_bytes())
        .map(Result::unwrap)
        .collect()
}

#[test]
fn a_broker_that_fails_the_tokens_ca_pin_receives_no_byte_of_the_credential() {
    let fleet = Fleet::init();
    let node = DevNode::start(fleet.dir.path(), "n1");
    let real = fleet.cli(&["token", "n1"]).trim().to_owned();
    let token = JoinToken::parse(&real).unwrap();

    // The fleet's CA, and another one of the same name (an impostor's).
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(fleet.admin.join("fleet.json")).unwrap())
            .unwrap();
    let name = settings["ca_common_name"].as_str().unwrap();
    let fleet_ca = fleet::tls::CaPair {
        cert_pem: std::fs::read_to_string(fleet.admin.join("ca.pem")).unwrap(),
        key_pem: std::fs::read_to_string(fleet.admin.join("ca.key")).unwrap(),
    };
    assert_eq!(
        fleet::tls::pem_sha256(&fleet_ca.cert_pem).unwrap(),
        token.ca_sha256
    );
    let other_ca = fleet::tls::create_ca(name).unwrap();
    let here = ["127.0.0.1".to_owned()];
    let (other_chain, other_key) = fleet::tls::issue_broker_cert(&other_ca, name, &here).unwrap();
    let (fleet_chain, fleet_key) = fleet::tls::issue_broker_cert(&fleet_ca, name, &here).unwrap();
    let key = |pem: &str| PrivateKeyDer::from_pem_slice(pem.as_bytes()).unwrap();
    let other_leaf = certs(&other_chain)[0].clone();
    let fleet_ca_der = certs(&fleet_ca.cert_pem)[0].clone();

    let join_against = |broker: &FakeBroker| {
        let mut rewritten = token.clone();
        rewritten.brokers = vec![broker.url()];
        layerone_output(&[
            "join",
            &rewritten.encode(),
            "--dev",
            node.root.to_str().unwrap(),
        ])
    };
    let secrets: [(&str, &str); 3] = [
        ("the join password", &token.join_password),
        ("the token's secret", &token.secret),
        ("the token's id", &token.id),
    ];

    for (what, chain) in [
        ("a chain of another CA", certs(&other_chain)),
        (
            "another CA's certificate beside the pinned CA's",
            vec![other_leaf.clone(), fleet_ca_der.clone()],
        ),
    ] {
        let broker = FakeBroker::start(chain, key(&other_key));
        let out = join_against(&broker);
        let recorded = broker.finish();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains("reaching the broker the token names"),
            "{what}: {stderr}"
        );
        assert!(!recorded.is_empty(), "{what}: the joining node never came");
        for client in &recorded {
            let error = client.handshake.as_ref().expect_err(what);
            assert!(error.contains("received fatal alert"), "{what}: {error}");
            assert!(client.plaintext.is_empty());
            for (secret, value) in secrets {
                assert!(
                    !contains(&client.raw, value.as_bytes()),
                    "{what}: {secret} was sent"
                );
            }
            assert!(
                !contains(&client.raw, b"CONNECT"),
                "{what}: a plaintext CONNECT"
            );
            // A ClientHello first, then at most an alert (or TLS 1.3's change-cipher-spec): the
            // client ended the handshake, and no record could hold a CONNECT.
            let records = tls_records(&client.raw);
            assert!(
                records.first().map(|r| r.0) == Some(22) && client.raw[5] == 1,
                "{what}: the first record is not a ClientHello: {records:?}"
            );
            assert!(
                records[1..].iter().all(|(_, len)| *len <= 32),
                "{what}: the client sent more than an alert after its ClientHello: {records:?}"
            );
            eprintln!(
                "{what}: the client sent {} bytes, records {records:?}, and ended with: {error}",
                client.raw.len()
            );
        }
    }

    // The control: a broker whose certificate the fleet CA issued passes the pin and is sent
    // the join password at once, inside TLS. The recording would have seen it.
    let broker = FakeBroker::start(certs(&fleet_chain), key(&fleet_key));
    let out = join_against(&broker);
    let recorded = broker.finish();
    assert!(
        !out.status.success(),
        "the fake broker closed after CONNECT"
    );
    let client = recorded.first().expect("the joining node came");
    assert_eq!(client.handshake, Ok(()));
    let plaintext = String::from_utf8_lossy(&client.plaintext);
    assert!(
        plaintext.starts_with("CONNECT {") && plaintext.contains(&token.join_password),
        "{plaintext}"
    );
    assert!(!contains(&client.raw, token.join_password.as_bytes()));

    // The token never reached the fleet: it is still good.
    layerone(&["join", &real, "--dev", node.root.to_str().unwrap()]);
    fleet.wait_state("n1", "up", PATIENCE);
}

#[test]
fn removing_a_node_revokes_its_credential_at_once_and_it_takes_no_more_work() {
    let fleet = Fleet::init();
    let n1 = DevNode::start(fleet.dir.path(), "n1");
    let n2 = DevNode::start(fleet.dir.path(), "n2");
    fleet.join(&n1, "n1");
    fleet.join(&n2, "n2");
    fleet.wait_state("n1", "up", PATIENCE);
    fleet.wait_state("n2", "up", PATIENCE);
    // Before: n2 takes work.
    let event = fleet.submit_wait("n2", &ensure_account(&hex32(1), &hex32(2), "before"));
    assert_eq!(event["job"]["state"], "succeeded", "{event}");

    let rt = runtime();
    let cp = rt.block_on(ControlPlane::connect(&fleet));
    let n2_creds = credentials(&n2);
    let n1_creds = credentials(&n1);
    let as_n2 = rt.block_on(AsNode::connect("n2", &n2_creds)).unwrap();
    let as_n1 = rt.block_on(AsNode::connect("n1", &n1_creds)).unwrap();
    let own_queue = |node: &AsNode| {
        let client = node.client.clone();
        let name = node.name.clone();
        async move {
            let js = jetstream::new(client);
            let stream = js.get_stream_no_info(REQUESTS_STREAM).await?;
            stream
                .get_consumer::<jetstream::consumer::pull::Config>(&name)
                .await?;
            Ok::<(), async_nats::Error>(())
        }
    };
    rt.block_on(own_queue(&as_n2))
        .expect("n2 reads its own queue");

    let removed = Instant::now();
    fleet.cli(&["remove", "n2"]);
    // The server closes n2's connection as soon as the fleet service has reloaded it without
    // n2's user.
    let closed = as_n2.wait_event("authorization violation", |e| {
        e.to_lowercase().contains("authorization violation")
    });
    eprintln!(
        "n2's connection was refused {:?} after the removal: {closed}",
        removed.elapsed()
    );
    as_n2.wait_event("the connection closed", |e| e.contains("max reconnects"));
    // A new connection with n2's seed is refused.
    let refused = rt
        .block_on(AsNode::connect("n2", &n2_creds))
        .err()
        .expect("the broker refuses a removed node's key");
    assert_eq!(
        refused.kind(),
        async_nats::ConnectErrorKind::AuthorizationViolation,
        "{refused}"
    );
    // The control: n1, on the same broker after the same reload, still reads its queue and
    // still takes work.
    rt.block_on(own_queue(&as_n1))
        .expect("n1 reads its own queue");
    assert!(
        !as_n1
            .events()
            .iter()
            .any(|e| e.to_lowercase().contains("violation")),
        "{:?}",
        as_n1.events()
    );
    let event = fleet.submit_wait("n1", &ensure_account(&hex32(3), &hex32(4), "after"));
    assert_eq!(event["job"]["state"], "succeeded", "{event}");

    // The dev node n2 takes no more work: the fleet dispatches nothing to it, and even a
    // request put on its queue, with its consumer made again, is never delivered, while n2's
    // daemon is refused each time it tries to reconnect.
    let out = layerone_output(&[
        "fleet",
        "submit",
        "n2",
        &ensure_account(&hex32(5), &hex32(6), "refused").to_string(),
        "--creds",
        &fleet.creds(),
    ]);
    assert!(
        !out.status.success(),
        "the fleet dispatched to a removed node"
    );
    let request = ensure_account(&hex32(7), &hex32(8), "stranded");
    // The broker logs each refused connection with its key; the test's own connections with
    // n2's key are closed by now, so these are n2's daemon's.
    let n2_key = public_key(&n2_creds.seed);
    let refusals = || fleet.broker.log().matches(n2_key.as_str()).count();
    rt.block_on(async {
        fleet::setup::ensure_node_consumer(&cp.js, "n2")
            .await
            .unwrap();
        cp.js
            .publish(protocol::request_subject("n2"), request.to_string().into())
            .await
            .unwrap()
            .await
            .unwrap();
    });
    let seen = refusals();
    fleet_support::wait_until("n2's daemon refused twice more", PATIENCE, || {
        refusals() >= seen + 2
    });
    let (pending, ack_pending, _) = rt.block_on(cp.queue("n2"));
    assert_eq!(
        (pending, ack_pending),
        (1, 0),
        "the request was never delivered"
    );
    let show = |id: &str| layerone_output(&["job", "show", "--dev", &n2.dev_json(), id]);
    assert!(
        show(&hex32(1)).status.success(),
        "n2 shows the job it took before"
    );
    let stranded = show(&hex32(7));
    assert!(
        !stranded.status.success(),
        "n2 has the job: {}",
        String::from_utf8_lossy(&stranded.stdout)
    );
    // Never a silent denial: n2's status says the broker refuses its key, and what to do.
    let status = || layerone(&["fleet", "status", "--dev", n2.root.to_str().unwrap()]);
    fleet_support::wait_until("n2's status names the refusal", PATIENCE, || {
        let status = status();
        status.contains("REFUSES this node's key") && status.contains("layerone join TOKEN")
    });
    // A new join under its name (its key kept) brings it back at once, without a restart: the
    // request put on its queue while it was refused runs, once.
    fleet.join(&n2, "n2");
    fleet.wait_state("n2", "up", PATIENCE);
    fleet_support::wait_until("the stranded request ran", PATIENCE, || {
        show(&hex32(7)).status.success()
    });
    let job = layerone(&["job", "show", "--dev", &n2.dev_json(), &hex32(7)]);
    assert!(job.contains("succeeded"), "{job}");
    assert!(status().contains("connected since"), "{}", status());
}
