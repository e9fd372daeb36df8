//! The fleet under faults, on a real nats-server and real node binaries: the broker killed and
//! restarted while 500 requests are in flight, a node killed -9 while consuming. After each,
//! none is lost, none applied twice, and every event is on the stream once (its message count
//! equals its number of distinct message ids, and every job's final event is there).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, consumer};
use futures_util::StreamExt as _;

mod common;
mod fleet_support;

use fleet_support::{DevNode, Fleet, ensure_account, hex32, layerone, wait_until};

const REQUESTS: usize = 500;

fn runtime() -> tokio::runtime::Runtime {
    let _ = rustls::crypto::ring::default_provider().install_default();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn control_plane(fleet: &Fleet) -> fleet_cp::ControlPlane {
    serde_json::from_str(&std::fs::read_to_string(fleet.creds()).unwrap()).unwrap()
}

/// The control plane's credential, as the file holds it.
mod fleet_cp {
    #[derive(serde::Deserialize, Clone)]
    pub struct ControlPlane {
        pub brokers: Vec<String>,
        pub ca_pem: String,
        pub seed: String,
    }
}

async fn connect(cp: &fleet_cp::ControlPlane) -> jetstream::Context {
    let client = fleet::connect::control_plane(&cp.seed, &[&cp.ca_pem], &cp.brokers)
        .await
        .unwrap();
    jetstream::new(client)
}

/// A fleet with one node, `n1`, up.
fn one_node_fleet() -> (Fleet, DevNode) {
    let fleet = Fleet::init();
    let node = DevNode::start(fleet.dir.path(), "n1");
    fleet.join(&node, "n1");
    fleet.wait_state("n1", "up", Duration::from_secs(30));
    (fleet, node)
}

/// Publishes `REQUESTS` requests to `node`'s queue from a thread, each retried (same message
/// id) until the broker stored it; says on `progress` how many are stored.
fn publish_in_background(
    fleet: &Fleet,
    node: &str,
    progress: Arc<AtomicUsize>,
) -> std::thread::JoinHandle<()> {
    let cp = control_plane(fleet);
    let node = node.to_owned();
    std::thread::spawn(move || {
        runtime().block_on(async move {
            let mut js = connect(&cp).await;
            let deadline = Instant::now() + Duration::from_secs(180);
            for i in 0..REQUESTS {
                let body = ensure_account(
                    &hex32(10_000 + i as u64),
                    &hex32(20_000 + i as u64),
                    &format!("f{i}"),
                )
                .to_string();
                loop {
                    assert!(Instant::now() < deadline, "could not publish request {i}");
                    let mut headers = async_nats::HeaderMap::new();
                    headers.insert("Nats-Msg-Id", format!("request.{node}.{i}").as_str());
                    let sent = js
                        .publish_with_headers(
                            fleet::protocol::request_subject(&node),
                            headers,
                            body.clone().into(),
                        )
                        .await;
                    let stored = match sent {
                        Ok(ack) => tokio::time::timeout(Duration::from_secs(5), ack)
                            .await
                            .ok()
                            .and_then(Result::ok),
                        Err(_) => None,
                    };
                    if stored.is_some() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    if let Ok(reconnected) =
                        tokio::time::timeout(Duration::from_secs(5), connect(&cp)).await
                    {
                        js = reconnected;
                    }
                }
                progress.store(i + 1, Ordering::SeqCst);
            }
        })
    })
}

/// Every message of the events stream: its message id and its event.
fn read_events(fleet: &Fleet) -> Vec<(String, serde_json::Value)> {
    let cp = control_plane(fleet);
    runtime().block_on(async move {
        let js = connect(&cp).await;
        let stream = js.get_stream(fleet::protocol::EVENTS_STREAM).await.unwrap();
        let last = stream.get_info().await.unwrap().state.last_sequence;
        let mut out = Vec::new();
        if last == 0 {
            return out;
        }
        let consumer = stream
            .create_consumer(consumer::pull::OrderedConfig {
                deliver_policy: consumer::DeliverPolicy::All,
                ..Default::default()
            })
            .await
            .unwrap();
        let mut messages = consumer.messages().await.unwrap();
        while let Some(message) = messages.next().await {
            let message = message.unwrap();
            let seq = message.info().unwrap().stream_sequence;
            let id = message
                .headers
                .as_ref()
                .and_then(|h| h.get("Nats-Msg-Id"))
                .map(|v| v.as_str().to_owned())
                .unwrap_or_default();
            out.push((id, serde_json::from_slice(&message.payload).unwrap()));
            if seq >= last {
                break;
            }
        }
        out
    })
}

/// The final job events of the published requests, by request id, once all are there.
fn wait_for_every_final_event(fleet: &Fleet) -> Vec<(String, serde_json::Value)> {
    let wanted: BTreeSet<String> = (0..REQUESTS).map(|i| hex32(10_000 + i as u64)).collect();
    let mut events = Vec::new();
    wait_until("every job's final event", Duration::from_secs(240), || {
        events = read_events(fleet);
        let done: BTreeSet<String> = events
            .iter()
            .filter(|(_, e)| e["kind"] == "job" && e["state"] == "succeeded")
            .map(|(_, e)| e["request_id"].as_str().unwrap().to_owned())
            .collect();
        wanted.is_subset(&done)
    });
    events
}

/// None lost, none applied twice, every event stored once: the stream's message ids are
/// distinct, the node's root-feed events are exactly the entries of its state.db's events feed
/// (no gap, none twice), and every request is one job that succeeded once. With `one_attempt`,
/// every job also ran once (a node killed while a job runs runs that job again when it
/// restarts: the runner's recovery, on the same job, which the feed shows as a second
/// `queued` and `running`).
fn check_exactly_once(events: &[(String, serde_json::Value)], node: &DevNode, one_attempt: bool) {
    let ids: BTreeSet<&String> = events.iter().map(|(id, _)| id).collect();
    assert!(
        events.iter().all(|(id, _)| !id.is_empty()),
        "every event has a message id"
    );
    assert_eq!(
        ids.len(),
        events.len(),
        "the stream holds each message id once"
    );
    let mut changes: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (_, event) in events.iter().filter(|(_, e)| e["kind"] == "job") {
        let key = (
            event["request_id"].as_str().unwrap().to_owned(),
            event["state"].as_str().unwrap().to_owned(),
        );
        *changes.entry(key).or_default() += 1;
        if one_attempt && event["state"] == "succeeded" {
            assert_eq!(event["job"]["attempts"], 1, "applied once: {event}");
        }
    }
    let twice: Vec<_> = changes
        .iter()
        .filter(|((_, state), n)| **n > 1 && (one_attempt || state == "succeeded"))
        .collect();
    assert!(twice.is_empty(), "job changes published twice: {twice:?}");
    let published: BTreeSet<i64> = events
        .iter()
        .filter_map(|(id, _)| id.strip_prefix("n1.s."))
        .filter(|rest| !rest.contains('.'))
        .map(|cursor| cursor.parse().unwrap())
        .collect();
    let state = rusqlite::Connection::open(node.root.join("data/state/state.db")).unwrap();
    let mut stmt = state
        .prepare("SELECT cursor FROM events ORDER BY cursor")
        .unwrap();
    let feed: BTreeSet<i64> = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        published, feed,
        "the node published its events feed whole, once"
    );
    for i in 0..REQUESTS {
        let id = hex32(10_000 + i as u64);
        assert_eq!(
            changes.get(&(id.clone(), "succeeded".into())),
            Some(&1),
            "request {id} succeeded once"
        );
    }
}

#[test]
fn the_broker_killed_and_restarted_under_500_requests_loses_nothing_and_duplicates_nothing() {
    let (mut fleet, node) = one_node_fleet();
    let progress = Arc::new(AtomicUsize::new(0));
    let publisher = publish_in_background(&fleet, "n1", progress.clone());
    wait_until("150 requests stored", Duration::from_secs(60), || {
        progress.load(Ordering::SeqCst) >= 150
    });
    fleet.broker.kill();
    std::thread::sleep(Duration::from_secs(1));
    fleet.broker.restart();
    publisher.join().unwrap();
    let events = wait_for_every_final_event(&fleet);
    check_exactly_once(&events, &node, true);
    // The fleet service came through the restart too: the node is still seen up.
    fleet.start_service();
    fleet.wait_state("n1", "up", Duration::from_secs(30));
}

#[test]
fn a_node_killed_9_while_consuming_loses_nothing_and_duplicates_nothing() {
    let (fleet, mut node) = one_node_fleet();
    let progress = Arc::new(AtomicUsize::new(0));
    let publisher = publish_in_background(&fleet, "n1", progress.clone());
    wait_until("150 requests stored", Duration::from_secs(60), || {
        progress.load(Ordering::SeqCst) >= 150
    });
    node.kill();
    std::thread::sleep(Duration::from_millis(500));
    node.restart();
    publisher.join().unwrap();
    let events = wait_for_every_final_event(&fleet);
    check_exactly_once(&events, &node, false);
    let status = layerone(&["fleet", "status", "--dev", node.root.to_str().unwrap()]);
    assert!(status.contains("node n1"), "{status}");
}
