//! An operator's credential on a real nats-server (127.0.0.1): issued by `layerone fleet
//! operator add`, rendered into the broker's configuration, it submits to a node's queue and
//! reads the node's result from the events stream and the fleet's state from its buckets; the
//! broker refuses it every write, every node's consumer, join tokens, other clients' inboxes
//! and stream management (the server's own `Permissions Violation` errors); removed, its key is
//! refused.

use std::os::unix::fs::PermissionsExt as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_nats::jetstream;
use fleet::operator::OperatorCredential;
use fleet::protocol::{
    self, ASSIGN_BUCKET, CATALOGUE_BUCKET, EVENTS_STREAM, EventBody, NODES_BUCKET, PRESENCE_BUCKET,
    Presence, REQUESTS_STREAM, TOKENS_BUCKET, TRUST_BUCKET, TRUST_KEY,
};
use futures_util::StreamExt as _;
use serde_json::Value;

use crate::fleet_support;

use fleet_support::{DevNode, Fleet, ensure_account, hex32, layerone, layerone_output, runtime};

/// How long a test waits for something the server or a node does by itself.
const PATIENCE: Duration = Duration::from_secs(30);

/// A connection made as `fleet::connect::operator` makes it, whose events (the server's errors
/// among them) the test reads.
async fn connect_as(
    credential: &OperatorCredential,
    events: Arc<Mutex<Vec<String>>>,
) -> Result<async_nats::Client, async_nats::ConnectError> {
    let addrs: Vec<async_nats::ServerAddr> = credential
        .brokers
        .iter()
        .map(|b| b.parse().unwrap())
        .collect();
    async_nats::ConnectOptions::new()
        .name("test as operator")
        .nkey(credential.seed.clone())
        .custom_inbox_prefix(protocol::operator_inbox_prefix(&credential.name))
        .require_tls(true)
        .tls_client_config(fleet::tls::client_config(&[&credential.ca_pem]).unwrap())
        .connection_timeout(Duration::from_secs(5))
        .max_reconnects(Some(1))
        .event_callback(move |event| {
            let events = events.clone();
            async move { events.lock().unwrap().push(event.to_string()) }
        })
        .connect(addrs)
        .await
}

/// Waits until the server's permission violation of `kind` naming `subject` is among `events`.
fn violation(events: &Mutex<Vec<String>>, kind: &str, subject: &str) {
    let text = format!("Permissions Violation for {kind} to \"{subject}\"");
    let deadline = Instant::now() + PATIENCE;
    loop {
        let seen = events.lock().unwrap().clone();
        if seen.iter().any(|e| e.contains(&text)) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "no {text} within {PATIENCE:?}; the operator's events: {seen:#?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The fleet's state as the control plane reads it: what the refusals must leave as it is.
async fn state(js: &jetstream::Context) -> Vec<(String, Option<u64>)> {
    let mut out = Vec::new();
    for (bucket, key) in [
        (ASSIGN_BUCKET, "n1"),
        (NODES_BUCKET, "n1"),
        (TRUST_BUCKET, TRUST_KEY),
    ] {
        let kv = js.get_key_value(bucket).await.unwrap();
        let revision = kv.entry(key).await.unwrap().map(|e| e.revision);
        out.push((format!("{bucket}/{key}"), revision));
    }
    let mut streams: Vec<String> = js.stream_names().map(Result::unwrap).collect().await;
    streams.sort();
    out.extend(streams.into_iter().map(|s| (s, None)));
    out
}

#[test]
fn an_operator_submits_to_a_node_and_reads_the_fleet_but_writes_nothing_and_is_refused_once_removed()
 {
    let fleet = Fleet::init();
    let node = DevNode::start(fleet.dir.path(), "n1");
    fleet.join(&node, "n1");
    fleet.wait_state("n1", "up", PATIENCE);
    let admin = fleet.admin.to_str().unwrap().to_owned();
    let path = fleet.dir.path().join("operator.json");
    let path_s = path.to_str().unwrap().to_owned();
    layerone(&[
        "fleet", "operator", "add", "ops", "--dir", &admin, "--out", &path_s,
    ]);
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let again = layerone_output(&[
        "fleet", "operator", "add", "ops", "--dir", &admin, "--out", &path_s,
    ]);
    assert!(!again.status.success(), "a second operator named ops");
    let listed: Value = serde_json::from_str(&layerone(&[
        "fleet", "operator", "list", "--dir", &admin, "--json",
    ]))
    .unwrap();
    let credential = OperatorCredential::load(&path).unwrap();
    assert_eq!(listed[0]["name"], "ops");
    assert_eq!(listed[0]["public_key"], credential.public_key().unwrap());

    let rt = runtime();
    let _in_runtime = rt.enter();
    let events = Arc::new(Mutex::new(Vec::new()));
    let client = rt
        .block_on(connect_as(&credential, events.clone()))
        .unwrap();
    let js = jetstream::new(client.clone());

    // What it may do: read the fleet's buckets and the events stream, submit to a node.
    let request_id = hex32(30);
    let finished = rt.block_on(async {
        let presence = js
            .get_stream_no_info(format!("KV_{PRESENCE_BUCKET}"))
            .await
            .unwrap()
            .direct_get_last_for_subject(protocol::kv_subject(PRESENCE_BUCKET, "n1"))
            .await
            .unwrap();
        let presence: Presence = serde_json::from_slice(&presence.payload).unwrap();
        assert_eq!(presence.name, "n1");
        let catalogue = js.get_key_value(CATALOGUE_BUCKET).await.unwrap();
        assert!(
            catalogue
                .get(&presence.catalogue_sha256)
                .await
                .unwrap()
                .is_some(),
            "the node's catalogue, read by its hash"
        );
        let record = js.get_key_value(NODES_BUCKET).await.unwrap();
        assert!(record.get("n1").await.unwrap().is_some());

        // As `layerone fleet submit --wait` sends and reads it, under the operator's credential.
        let tail = fleet::requests::events_tail(&js).await.unwrap();
        let body = ensure_account(&request_id, &hex32(31), "byoperator").to_string();
        let (_, duplicate) = fleet::requests::publish(&js, "n1", &request_id, body.as_bytes())
            .await
            .unwrap();
        assert!(!duplicate);
        fleet::requests::wait(&js, "n1", &request_id, tail, PATIENCE)
            .await
            .expect("the node's final event for the operator's request")
    });
    match finished.body {
        EventBody::Job { state, .. } => assert_eq!(state, registry::JobState::Succeeded),
        other => panic!("{other:?}"),
    }

    // What it may not do, each with what a client would send there.
    let cp = jetstream::new(rt.block_on(fleet.control_plane()));
    let before = rt.block_on(state(&cp));
    let forbidden: Vec<String> = vec![
        // Write the fleet's state.
        protocol::kv_subject(ASSIGN_BUCKET, "n1"),
        protocol::kv_subject(NODES_BUCKET, "n1"),
        protocol::kv_subject(PRESENCE_BUCKET, "n1"),
        protocol::kv_subject(CATALOGUE_BUCKET, "forged"),
        protocol::kv_subject(TRUST_BUCKET, TRUST_KEY),
        protocol::kv_subject(TOKENS_BUCKET, "forged"),
        // Speak for a node or the fleet.
        protocol::node_events_subject("n1", "job"),
        protocol::fleet_events_subject("node_down"),
        protocol::JOIN_SUBJECT.to_owned(),
        // Read join tokens or the trust bucket.
        format!("$JS.API.DIRECT.GET.KV_{TOKENS_BUCKET}"),
        format!("$JS.API.STREAM.MSG.GET.KV_{TOKENS_BUCKET}"),
        format!("$JS.API.DIRECT.GET.KV_{TRUST_BUCKET}"),
        // A node's consumers: its queue, its assignment's.
        format!("$JS.API.CONSUMER.MSG.NEXT.{REQUESTS_STREAM}.n1"),
        format!("$JS.API.CONSUMER.DELETE.{REQUESTS_STREAM}.n1"),
        format!("$JS.API.CONSUMER.CREATE.{REQUESTS_STREAM}.thief.fleet.req.n1"),
        format!("$JS.API.CONSUMER.CREATE.KV_{ASSIGN_BUCKET}.thief"),
        format!("$JS.API.CONSUMER.DELETE.KV_{ASSIGN_BUCKET}.n1"),
        format!("$JS.ACK.{REQUESTS_STREAM}.n1.1.1.1.0.0"),
        // Manage streams.
        "$JS.API.STREAM.CREATE.THIEF".to_owned(),
        format!("$JS.API.STREAM.DELETE.{EVENTS_STREAM}"),
        format!("$JS.API.STREAM.PURGE.{EVENTS_STREAM}"),
        format!("$JS.API.STREAM.UPDATE.{REQUESTS_STREAM}"),
        format!("$JS.API.STREAM.MSG.DELETE.{EVENTS_STREAM}"),
    ];
    let forbidden_subscriptions = [
        "_INBOX.>".to_owned(),
        format!("{}.>", protocol::node_inbox_prefix("n1")),
        protocol::request_subject("n1"),
        "fleet.evt.>".to_owned(),
        ">".to_owned(),
    ];
    let _subscriptions = rt.block_on(async {
        for subject in &forbidden {
            client
                .publish(subject.clone(), b"{}".to_vec().into())
                .await
                .unwrap();
        }
        let mut subscriptions = Vec::new();
        for subject in &forbidden_subscriptions {
            subscriptions.push(client.subscribe(subject.clone()).await.unwrap());
        }
        client.flush().await.unwrap();
        subscriptions
    });
    for subject in &forbidden {
        violation(&events, "Publish", subject);
    }
    for subject in &forbidden_subscriptions {
        violation(&events, "Subscription", subject);
    }
    assert_eq!(
        rt.block_on(state(&cp)),
        before,
        "a refused operator changed the fleet's state"
    );

    // Removed, its key is refused.
    layerone(&["fleet", "operator", "remove", "ops", "--dir", &admin]);
    let refused = rt.block_on(credential.connect());
    assert!(
        refused.is_err(),
        "a removed operator's credential still connects"
    );
    assert!(
        format!("{:#}", refused.unwrap_err()).contains("authorization"),
        "refused as unauthorised"
    );
    drop(node);
}
