//! Rotating the fleet's CA on a real nats-server with real node binaries, as `docs/fleet.md`
//! says an operator does it: `layerone fleet ca rotate`, then `layerone fleet ca finish`, while
//! requests go on through `layerone fleet submit`. None is lost, none runs twice; afterwards the
//! broker's handshake fails a client that trusts only the old CA, the nodes trust only the new
//! one, connect again through a broker restart and keep working, and a new token joins a node.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::fleet_support;

use fleet_support::{
    DevNode, Fleet, ensure_account, hex32, layerone, layerone_output, succeeded, wait_until,
};

const PATIENCE: Duration = Duration::from_secs(60);

fn runtime() -> tokio::runtime::Runtime {
    let _ = rustls::crypto::ring::default_provider().install_default();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// `layerone fleet ca SUBCOMMAND --dir ADMIN ARGS`.
fn ca(fleet: &Fleet, subcommand: &str, args: &[&str]) -> std::process::Output {
    let admin = fleet.admin.to_str().unwrap();
    let mut all = vec!["fleet", "ca", subcommand, "--dir", admin];
    all.extend_from_slice(args);
    layerone_output(&all)
}

/// Request `i`, for the node it goes to.
fn request(i: u64) -> Value {
    ensure_account(&hex32(1_000 + i), &hex32(2_000 + i), &format!("rot{i}"))
}

/// `fleet submit NODE REQUEST`, without waiting; panics unless the broker stored it.
fn submit(fleet: &Fleet, node: &str, i: u64) {
    let out: Value =
        serde_json::from_str(&fleet.cli(&["submit", node, &request(i).to_string()])).unwrap();
    assert_eq!(out["request_id"], hex32(1_000 + i), "{out}");
}

/// What each node reports it trusts, from `fleet nodes --json`.
fn trusted(fleet: &Fleet) -> BTreeMap<String, Vec<String>> {
    fleet
        .nodes()
        .into_iter()
        .filter_map(|n| {
            let cas = n["reported"]["trusted_ca_sha256"].as_array()?.clone();
            Some((
                n["name"].as_str().unwrap().to_owned(),
                cas.iter().map(|c| c.as_str().unwrap().to_owned()).collect(),
            ))
        })
        .collect()
}

fn sha(pem: &str) -> String {
    fleet::tls::pem_sha256(pem).unwrap()
}

/// A control-plane connection that trusts only `ca_pem`: the error, if the broker is refused.
fn connect_trusting(fleet: &Fleet, ca_pem: &str) -> Result<(), String> {
    let cp: Value = serde_json::from_str(&read(std::path::Path::new(&fleet.creds()))).unwrap();
    let brokers: Vec<String> = serde_json::from_value(cp["brokers"].clone()).unwrap();
    runtime().block_on(async {
        fleet::connect::control_plane(cp["seed"].as_str().unwrap(), &[ca_pem], &brokers)
            .await
            .map(drop)
            .map_err(|e| format!("{e:#}"))
    })
}

#[test]
fn rotating_the_fleet_ca_loses_no_request_runs_none_twice_and_leaves_only_the_new_ca_trusted() {
    let mut fleet = Fleet::init();
    let n1 = DevNode::start(fleet.dir.path(), "n1");
    let mut n2 = DevNode::start(fleet.dir.path(), "n2");
    fleet.join(&n1, "n1");
    fleet.join(&n2, "n2");
    fleet.wait_state("n1", "up", PATIENCE);
    fleet.wait_state("n2", "up", PATIENCE);
    let old_ca = read(&fleet.admin.join("ca.pem"));
    let old = sha(&old_ca);
    wait_until("both nodes report the old CA", PATIENCE, || {
        trusted(&fleet)
            .values()
            .all(|cas| cas == &vec![old.clone()])
            && trusted(&fleet).len() == 2
    });

    // Before: four requests, waited for.
    for i in 0..4 {
        let node = ["n1", "n2"][i as usize % 2];
        let event = fleet.submit_wait(node, &request(i));
        assert_eq!(event["job"]["state"], "succeeded", "{event}");
    }

    // During: a submitter that keeps dispatching through `fleet submit` (each run reads the
    // control plane's credential as the rotation rewrites it) until the rotation is over.
    // While `hold_n2` is set it sends n2's share to n1 (and says so in `held`), so n2 can be
    // killed with no job of its own running: a job killed while it runs is run again by the
    // runner's recovery, which is not what this test is about.
    let done = AtomicBool::new(false);
    let hold_n2 = AtomicBool::new(false);
    let held = AtomicBool::new(false);
    let sent = std::sync::Mutex::new(Vec::<(u64, &str)>::new());
    let new_ca = std::thread::scope(|scope| {
        let submitter = scope.spawn(|| {
            let deadline = Instant::now() + Duration::from_secs(240);
            for i in 100..400u64 {
                if done.load(Ordering::SeqCst) && sent.lock().unwrap().len() >= 10 {
                    break;
                }
                assert!(Instant::now() < deadline, "the submitter ran out of time");
                let hold = hold_n2.load(Ordering::SeqCst);
                held.store(hold, Ordering::SeqCst);
                let node = if hold {
                    "n1"
                } else {
                    ["n1", "n2"][i as usize % 2]
                };
                submit(&fleet, node, i);
                sent.lock().unwrap().push((i, node));
                std::thread::sleep(Duration::from_millis(50));
            }
        });

        let out = succeeded("fleet ca rotate", ca(&fleet, "rotate", &[]));
        assert!(out.contains("rotating the fleet CA"), "{out}");
        let new_ca = read(&fleet.admin.join("ca-next.pem"));
        let new = sha(&new_ca);
        let cp: Value = serde_json::from_str(&read(std::path::Path::new(&fleet.creds()))).unwrap();
        assert_eq!(
            cp["ca_pem"].as_str().unwrap(),
            format!("{old_ca}{new_ca}"),
            "the credential trusts both"
        );
        assert_eq!(
            cp["ca_sha256"], old,
            "tokens still pin the old CA: the broker presents it"
        );
        wait_until("both nodes trust both CAs", PATIENCE, || {
            let t = trusted(&fleet);
            t.len() == 2 && t.values().all(|cas| cas == &vec![old.clone(), new.clone()])
        });

        // A node down when finish runs: refused, named; it comes back, reads the bundle when it
        // starts, and trusts both. Its requests queued meanwhile wait for it.
        hold_n2.store(true, Ordering::SeqCst);
        wait_until("the submitter holds n2's requests", PATIENCE, || {
            held.load(Ordering::SeqCst)
        });
        let to_n2: Vec<u64> = sent
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, node)| *node == "n2")
            .map(|(i, _)| *i)
            .collect();
        wait_until("n2's requests so far are done", PATIENCE, || {
            let events = fleet.events();
            to_n2.iter().all(|i| {
                events.iter().any(|e| {
                    e["kind"] == "job"
                        && e["state"] == "succeeded"
                        && e["request_id"] == hex32(1_000 + i)
                })
            })
        });
        n2.kill();
        hold_n2.store(false, Ordering::SeqCst);
        fleet.wait_state("n2", "down", PATIENCE);
        let refused = ca(&fleet, "finish", &[]);
        assert!(!refused.status.success());
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(
            stderr.contains("these nodes are down") && stderr.contains("n2"),
            "{stderr}"
        );
        assert!(
            fleet.admin.join("ca-next.pem").exists(),
            "nothing was finished"
        );
        n2.restart();
        fleet.wait_state("n2", "up", PATIENCE);
        let out = succeeded("fleet ca finish", ca(&fleet, "finish", &["--wait", "60"]));
        assert!(
            out.contains("the broker presents a certificate of the new CA"),
            "{out}"
        );
        done.store(true, Ordering::SeqCst);
        submitter.join().unwrap();
        new_ca
    });
    let sent: Vec<u64> = sent
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|(i, _)| i)
        .collect();
    let new = sha(&new_ca);

    // The old CA is gone from what the broker presents, what the nodes trust, the credential,
    // the administrative directory and the tokens.
    let refused = connect_trusting(&fleet, &old_ca).expect_err("a client of the old CA connected");
    assert!(
        refused.to_lowercase().contains("certificate"),
        "refused in the TLS handshake: {refused}"
    );
    connect_trusting(&fleet, &new_ca).expect("a client of the new CA connects");
    wait_until("both nodes trust the new CA only", PATIENCE, || {
        let t = trusted(&fleet);
        t.len() == 2 && t.values().all(|cas| cas == &vec![new.clone()])
    });
    for node in [&n1, &n2] {
        let kept: Value =
            serde_json::from_str(&read(&node.root.join("data/fleet/trust.json"))).unwrap();
        assert_eq!(kept["ca_pems"], serde_json::json!([new_ca]), "{kept}");
        let status = layerone(&["fleet", "status", "--dev", node.root.to_str().unwrap()]);
        assert!(
            status.contains(&format!(
                "trust      the fleet's bundle, generation 3: {new}\n"
            )),
            "{status}"
        );
    }
    let cp: Value = serde_json::from_str(&read(std::path::Path::new(&fleet.creds()))).unwrap();
    assert_eq!(
        (
            cp["ca_pem"].as_str().unwrap(),
            cp["ca_sha256"].as_str().unwrap()
        ),
        (new_ca.as_str(), new.as_str())
    );
    assert_eq!(read(&fleet.admin.join("ca.pem")), new_ca);
    assert!(!fleet.admin.join("ca-next.pem").exists() && !fleet.admin.join("ca-next.key").exists());
    let token = fleet.cli(&["token", "n3"]).trim().to_owned();
    assert_eq!(
        fleet::token::JoinToken::parse(&token).unwrap().ca_sha256,
        new
    );

    // After: every connection made again (the broker restarted), the nodes reconnect with
    // what they trust now and keep working; a new node joins with a new token.
    fleet.broker.restart();
    fleet.start_service();
    let n3 = DevNode::start(fleet.dir.path(), "n3");
    layerone(&["join", &token, "--dev", n3.root.to_str().unwrap()]);
    for name in ["n1", "n2", "n3"] {
        fleet.wait_state(name, "up", PATIENCE);
    }
    for i in 500..506u64 {
        let node = ["n1", "n2", "n3"][i as usize % 3];
        let event = fleet.submit_wait(node, &request(i));
        assert_eq!(event["job"]["state"], "succeeded", "{event}");
    }

    // Exactly once: every request submitted before, during and after is one job that
    // succeeded once, on its first attempt, and nothing was refused.
    let wanted: Vec<u64> = (0..4).chain(sent.iter().copied()).chain(500..506).collect();
    eprintln!(
        "{} requests during the rotation; {} in all",
        sent.len(),
        wanted.len()
    );
    let mut events = Vec::new();
    wait_until(
        "every request's final event",
        Duration::from_secs(180),
        || {
            events = fleet.events();
            wanted.iter().all(|i| {
                events.iter().any(|e| {
                    e["kind"] == "job"
                        && e["state"] == "succeeded"
                        && e["request_id"] == hex32(1_000 + i)
                })
            })
        },
    );
    for i in &wanted {
        let id = hex32(1_000 + i);
        let finals: Vec<&Value> = events
            .iter()
            // A job event carries the job's view when its state is final.
            .filter(|e| e["kind"] == "job" && e["request_id"] == id && e["job"].is_object())
            .collect();
        assert_eq!(finals.len(), 1, "request {i}: {finals:?}");
        assert_eq!(finals[0]["state"], "succeeded", "{}", finals[0]);
        if finals[0]["job"]["attempts"] != 1 {
            let all: Vec<&Value> = events
                .iter()
                .filter(|e| e.to_string().contains(&id))
                .collect();
            eprintln!("DIAG {all:#?}");
        }
        assert_eq!(finals[0]["job"]["attempts"], 1, "run once: {}", finals[0]);
    }
    let refused: Vec<&Value> = events.iter().filter(|e| e["kind"] == "refused").collect();
    assert!(refused.is_empty(), "{refused:?}");
}
