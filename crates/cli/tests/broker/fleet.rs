//! The fleet on a real nats-server (127.0.0.1) with real node binaries: `layerone fleet init`,
//! the fleet service, dev nodes that join with one-time tokens, requests over the broker and
//! their results on the events stream.

use std::time::Duration;

use crate::fleet_support;

use fleet_support::{DevNode, Fleet, ensure_account, hex32, layerone};

#[test]
fn three_dev_nodes_join_take_requests_over_the_broker_and_report_on_the_events_stream() {
    let fleet = Fleet::init();
    let nodes: Vec<DevNode> = ["n1", "n2", "n3"]
        .iter()
        .map(|name| DevNode::start(fleet.dir.path(), name))
        .collect();
    // The first node registers itself with `fleet init --node`; the others join with tokens.
    let url = fleet.url();
    layerone(&[
        "fleet",
        "init",
        "--dir",
        fleet.admin.to_str().unwrap(),
        "--listen",
        &format!("127.0.0.1:{}", fleet.port),
        "--broker",
        &url,
        "--no-units",
        "--node",
        "n1",
        "--dev",
        nodes[0].root.to_str().unwrap(),
    ]);
    fleet.join(&nodes[1], "n2");
    fleet.join(&nodes[2], "n3");
    for name in ["n1", "n2", "n3"] {
        fleet.wait_state(name, "up", Duration::from_secs(30));
    }

    for (i, name) in ["n1", "n2", "n3"].iter().enumerate() {
        let request = ensure_account(
            &hex32(100 + i as u64),
            &hex32(200 + i as u64),
            &format!("fleet{i}"),
        );
        let event = fleet.submit_wait(name, &request);
        assert_eq!(event["node"], *name, "{event}");
        // The final job event, or the node's answer that it had the job already.
        assert!(
            event["kind"] == "job" || event["kind"] == "accepted",
            "{event}"
        );
        let job = &event["job"];
        assert_eq!(job["state"], "succeeded", "{event}");
        assert_eq!(job["operation"], "ensure_account", "{event}");
    }

    // The same request id through HTTPS and through the broker is one job.
    let request = ensure_account(&hex32(300), &hex32(301), "both");
    let over_https = nodes[0].submit_https(&request);
    assert_eq!(over_https["state"], "succeeded", "{over_https}");
    let over_broker = fleet.submit_wait("n1", &request);
    // The node's answer that it has the job, or the job's final event when the node's outbox
    // publishes the HTTPS job's only after the wait began listening: either is that one job.
    assert!(
        over_broker["kind"] == "accepted" || over_broker["kind"] == "job",
        "{over_broker}"
    );
    assert_eq!(
        over_broker["job"]["timings"], over_https["timings"],
        "one job: {over_broker}"
    );
    let events = fleet.events();
    let finals = events
        .iter()
        .filter(|e| {
            e["kind"] == "job" && e["request_id"] == hex32(300) && e["state"] == "succeeded"
        })
        .count();
    assert_eq!(finals, 1, "one job, one final event");

    // The node's audit trail says where each came in: the broker's stream and sequence for
    // the first, HTTPS for the one that reached the node there first.
    let n1 = client::DevInfo::load(std::path::Path::new(&nodes[0].dev_json()))
        .unwrap()
        .client()
        .unwrap();
    let page = n1
        .request("GET", "/v1/audit?limit=1000", None, &[])
        .unwrap();
    let entries = page.json().unwrap()["entries"].as_array().unwrap().clone();
    let origins = |request: u64| -> Vec<serde_json::Value> {
        entries
            .iter()
            .filter(|e| e["request_id"] == hex32(request))
            .map(|e| e["origin"].clone())
            .collect()
    };
    let over_fleet = origins(100);
    assert!(!over_fleet.is_empty(), "{entries:?}");
    for origin in &over_fleet {
        assert_eq!(origin["via"], "fleet", "{origin}");
        assert_eq!(origin["stream"], "FLEET_REQ", "{origin}");
        assert!(origin["sequence"].as_u64().unwrap() > 0, "{origin}");
    }
    let over_https = origins(300);
    assert!(!over_https.is_empty(), "{entries:?}");
    assert!(
        over_https
            .iter()
            .all(|o| *o == serde_json::json!({"via": "api"})),
        "{over_https:?}"
    );
}

/// The fleet's events of `kind`, in order.
fn fleet_events(fleet: &Fleet, kind: &str) -> Vec<serde_json::Value> {
    fleet
        .events()
        .into_iter()
        .filter(|e| e["kind"] == kind)
        .collect()
}

#[test]
fn a_node_that_stops_is_down_for_the_fleet_and_up_again_with_its_downtime() {
    let fleet = Fleet::init();
    let mut node = DevNode::start(fleet.dir.path(), "n1");
    fleet.join(&node, "n1");
    fleet.wait_state("n1", "up", Duration::from_secs(30));
    node.kill();
    // Three heartbeats of 500 ms without one: the presence key expires and the fleet says so.
    fleet_support::wait_until("node_down", Duration::from_secs(30), || {
        !fleet_events(&fleet, "node_down").is_empty()
    });
    let down = &fleet_events(&fleet, "node_down")[0];
    assert_eq!(down["node"], "n1", "{down}");
    assert!(down["last_seen_ms"].as_i64().unwrap() > 0, "{down}");
    assert_eq!(fleet.node_state("n1").as_deref(), Some("down"));
    node.restart();
    fleet_support::wait_until("node_up", Duration::from_secs(30), || {
        !fleet_events(&fleet, "node_up").is_empty()
    });
    let up = &fleet_events(&fleet, "node_up")[0];
    assert!(up["downtime_ms"].as_i64().unwrap() >= 500, "{up}");
    fleet.wait_state("n1", "up", Duration::from_secs(30));
    assert_eq!(fleet_events(&fleet, "node_down").len(), 1, "said once");
    // Its lifecycle: started twice (one per start), stopping never (killed).
    let started = fleet_events(&fleet, "started");
    assert_eq!(started.len(), 2, "{started:?}");
}

#[test]
fn a_request_refused_at_validation_is_answered_terminated_and_a_dead_letter_and_one_not_taken_never_is()
 {
    let mut fleet = Fleet::init();
    let node = DevNode::start(fleet.dir.path(), "n1");
    fleet.join(&node, "n1");
    fleet.wait_state("n1", "up", Duration::from_secs(30));

    // Refused with the API's words, once, and gone from the queue.
    let mut bad = ensure_account(&hex32(1), &hex32(2), "shop1");
    bad["resource"]["username"] = "Not A Name".into();
    let refused = fleet.submit_wait("n1", &bad);
    assert_eq!(refused["kind"], "refused", "{refused}");
    assert_eq!(refused["request_id"], hex32(1));
    assert_eq!(refused["field"], "resource.username", "{refused}");
    assert!(!refused["code"].as_str().unwrap().is_empty());
    // The same request id with another body: the API's 409, as a refusal.
    let good = ensure_account(&hex32(3), &hex32(4), "shop1");
    assert_eq!(fleet.submit_wait("n1", &good)["job"]["state"], "succeeded");
    let mut other = good.clone();
    other["resource"]["shell"] = "nologin".into();
    let conflict = fleet.submit_wait("n1", &other);
    assert_eq!(conflict["code"], "request_id_conflict", "{conflict}");

    // Each refused request is a dead letter: the node copied it to the dead-letter stream and
    // terminated it, and the fleet service said so from the broker's advisory.
    let mut dead_letters = Vec::new();
    fleet_support::wait_until("the dead_letter events", Duration::from_secs(20), || {
        dead_letters = fleet
            .events()
            .into_iter()
            .filter(|e| e["kind"] == "dead_letter" && e["node"] == "n1")
            .collect();
        dead_letters.len() == 2
    });

    // A node that takes its request but never acknowledges it: here the control plane pulls
    // a stopped node's queue and gives each delivery back, more often than a request was once
    // delivered at most (five times): it is delivered again every time, and is no dead letter.
    let mut ghost = DevNode::start(fleet.dir.path(), "ghost");
    fleet.join(&ghost, "ghost");
    fleet.wait_state("ghost", "up", Duration::from_secs(30));
    ghost.kill();
    let request = ensure_account(&hex32(5), &hex32(6), "ghost1");
    fleet.cli(&["submit", "ghost", &request.to_string()]);
    let cp: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fleet.creds()).unwrap()).unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = rt
        .block_on(fleet::connect::control_plane(
            cp["seed"].as_str().unwrap(),
            &[cp["ca_pem"].as_str().unwrap()],
            &[fleet.url()],
        ))
        .unwrap();
    let js = rt.block_on(async { async_nats::jetstream::new(client) });
    // A fleet made by an earlier version limited a request to five deliveries: the fleet
    // service, started again, gives its nodes' consumers this version's configuration.
    let max_deliver = |js: &async_nats::jetstream::Context| {
        rt.block_on(async {
            let stream = js.get_stream("FLEET_REQ").await.unwrap();
            let consumer: async_nats::jetstream::consumer::PullConsumer =
                stream.get_consumer("ghost").await.unwrap();
            consumer.get_info().await.unwrap().config.max_deliver
        })
    };
    assert_eq!(max_deliver(&js), -1, "no limit of deliveries");
    rt.block_on(async {
        let stream = js.get_stream("FLEET_REQ").await.unwrap();
        let consumer: async_nats::jetstream::consumer::PullConsumer =
            stream.get_consumer("ghost").await.unwrap();
        let mut old = consumer.get_info().await.unwrap().config;
        old.max_deliver = 5;
        stream.update_consumer(old).await.unwrap();
    });
    assert_eq!(max_deliver(&js), 5);
    fleet.start_service();
    fleet_support::wait_until("the consumer updated", Duration::from_secs(20), || {
        max_deliver(&js) == -1
    });
    let copies = rt.block_on(async {
        use futures_util::StreamExt as _;
        let stream = js.get_stream("FLEET_REQ").await.unwrap();
        let consumer: async_nats::jetstream::consumer::PullConsumer =
            stream.get_consumer("ghost").await.unwrap();
        let wanted = 12;
        let mut naks = 0;
        for _ in 0..100 {
            let mut batch = consumer
                .fetch()
                .max_messages(1)
                .expires(Duration::from_millis(500))
                .messages()
                .await
                .unwrap();
            while let Some(message) = batch.next().await {
                let message = message.unwrap();
                assert_eq!(message.info().unwrap().delivered, naks + 1);
                message
                    .ack_with(async_nats::jetstream::AckKind::Nak(None))
                    .await
                    .unwrap();
                naks += 1;
            }
            if naks >= wanted {
                break;
            }
        }
        assert_eq!(naks, wanted, "delivered again every time");
        // What the dead-letter stream holds: each copy's original sequence, subject and body.
        let mut dlq = js.get_stream("FLEET_DLQ").await.unwrap();
        let last = dlq.info().await.unwrap().state.last_sequence;
        let mut copies = Vec::new();
        for seq in 1..=last {
            let message = dlq.get_raw_message(seq).await.unwrap();
            let original: u64 = message
                .headers
                .get("Layerone-Original-Sequence")
                .unwrap()
                .as_str()
                .parse()
                .unwrap();
            copies.push((
                original,
                message.subject.to_string(),
                serde_json::from_slice::<serde_json::Value>(&message.payload).unwrap(),
            ));
        }
        copies
    });
    let mut expected: Vec<(u64, String, serde_json::Value)> = dead_letters
        .iter()
        .map(|e| e["stream_sequence"].as_u64().unwrap())
        .zip([bad, other])
        .map(|(seq, body)| (seq, "fleet.dlq.n1".to_owned(), body))
        .collect();
    expected.sort_by_key(|(seq, ..)| *seq);
    assert_eq!(
        copies, expected,
        "the dead letters are the refused requests themselves"
    );
    assert!(
        !fleet
            .events()
            .iter()
            .any(|e| e["kind"] == "dead_letter" && e["node"] == "ghost"),
        "a request not taken is no dead letter"
    );
}

/// The control plane's connection, from its credential file, on a runtime of its own.
fn control_plane(fleet: &Fleet) -> (tokio::runtime::Runtime, async_nats::jetstream::Context) {
    let cp: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fleet.creds()).unwrap()).unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let brokers: Vec<String> = serde_json::from_value(cp["brokers"].clone()).unwrap();
    let js = rt.block_on(async {
        let client = fleet::connect::control_plane(
            cp["seed"].as_str().unwrap(),
            &[cp["ca_pem"].as_str().unwrap()],
            &brokers,
        )
        .await
        .unwrap();
        async_nats::jetstream::new(client)
    });
    (rt, js)
}

fn submit_refusal(fleet: &Fleet, node: &str, request: &serde_json::Value) -> String {
    let out = fleet_support::layerone_output(&[
        "fleet",
        "submit",
        node,
        &request.to_string(),
        "--creds",
        &fleet.creds(),
    ]);
    assert!(!out.status.success(), "dispatched: {out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn the_fleet_refuses_at_dispatch_what_a_node_cannot_take_draining_incompatible_or_not_offered() {
    let fleet = Fleet::init();
    let node = DevNode::start(fleet.dir.path(), "n1");
    fleet.join(&node, "n1");
    fleet.wait_state("n1", "up", Duration::from_secs(30));
    let request = ensure_account(&hex32(7), &hex32(8), "mixed1");

    // Draining: nothing new is dispatched; active again, it is.
    fleet.cli(&["drain", "n1"]);
    assert_eq!(fleet.node_state("n1").as_deref(), Some("draining"));
    assert!(submit_refusal(&fleet, "n1", &request).contains("no new work"));
    fleet.cli(&["activate", "n1"]);
    fleet.wait_state("n1", "up", Duration::from_secs(10));

    // A node whose version offers other operations: its catalogue says which.
    let (rt, js) = control_plane(&fleet);
    let presence: serde_json::Value = fleet.nodes()[0]["reported"].clone();
    let sha = presence["catalogue_sha256"].as_str().unwrap().to_owned();
    rt.block_on(async {
        let catalogue = js.get_key_value("fleet_catalogue").await.unwrap();
        let mut older = fleet::protocol::OfferedCatalogue::of_this_build();
        older.operations.retain(|name, _| name == "observe_runtime");
        catalogue
            .put(&sha, serde_json::to_vec(&older).unwrap().into())
            .await
            .unwrap();
    });
    let refused = submit_refusal(&fleet, "n1", &request);
    assert!(
        refused.contains("does not offer \"ensure_account\""),
        "{refused}"
    );

    // A catalogue the fleet does not accept: incompatible.
    rt.block_on(async {
        let catalogue = js.get_key_value("fleet_catalogue").await.unwrap();
        catalogue.purge(&sha).await.unwrap();
    });
    assert_eq!(fleet.node_state("n1").as_deref(), Some("incompatible"));
    assert!(submit_refusal(&fleet, "n1", &request).contains("incompatible"));
}

#[test]
fn a_cut_off_node_keeps_serving_its_api_says_since_when_and_is_rescued_with_another_broker_address()
{
    let mut fleet = Fleet::init();
    let node = DevNode::start(fleet.dir.path(), "n1");
    fleet.join(&node, "n1");
    fleet.wait_state("n1", "up", Duration::from_secs(30));
    let root = node.root.to_str().unwrap().to_owned();

    fleet.broker.kill();
    // Its local API goes on.
    let local = ensure_account(&hex32(9), &hex32(10), "local1");
    assert_eq!(node.submit_https(&local)["state"], "succeeded");
    fleet_support::wait_until("the cut-off status", Duration::from_secs(30), || {
        layerone(&["fleet", "status", "--dev", &root]).contains("CUT OFF since")
    });

    // The broker comes back at another address; the operator points the node (and the
    // control plane) at it.
    let port = fleet_support::free_port();
    let conf = std::fs::read_to_string(&fleet.broker.conf)
        .unwrap()
        .replace(
            &format!("listen: \"127.0.0.1:{}\"", fleet.port),
            &format!("listen: \"127.0.0.1:{port}\""),
        );
    std::fs::write(&fleet.broker.conf, conf).unwrap();
    fleet.broker.port = port;
    fleet.broker.restart();
    let url = format!("tls://127.0.0.1:{port}");
    let creds = std::fs::read_to_string(fleet.creds()).unwrap();
    std::fs::write(fleet.creds(), creds.replace(&fleet.url(), &url)).unwrap();
    fleet.port = port;
    layerone(&["fleet", "rescue", "--broker", &url, "--dev", &root]);

    // What it did while cut off reaches the fleet, under the same name.
    fleet_support::wait_until(
        "the local job's final event",
        Duration::from_secs(60),
        || {
            fleet.events().iter().any(|e| {
                e["kind"] == "job" && e["request_id"] == hex32(9) && e["state"] == "succeeded"
            })
        },
    );
    fleet_support::wait_until("connected again", Duration::from_secs(30), || {
        layerone(&["fleet", "status", "--dev", &root]).contains("connected since")
    });
    let identity: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(node.root.join("sysroot/etc/layerone/fleet/identity.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(identity["node"], "n1");
    assert_eq!(identity["brokers"][0], url.as_str());
}

#[test]
fn an_assignment_reaches_root_signed_and_what_it_leaves_out_or_cannot_run_is_refused_loudly() {
    let fleet = Fleet::init();
    let node = DevNode::start(fleet.dir.path(), "n1");
    fleet.join(&node, "n1");
    fleet.wait_state("n1", "up", Duration::from_secs(30));
    let root = node.root.to_str().unwrap().to_owned();
    // This node's Postfix is missing: the mail module cannot run here.
    std::fs::remove_file(node.root.join("sysroot/usr/sbin/postfix")).unwrap();

    fleet.cli(&["assign", "n1", "web", "php", "mysql", "mail"]);
    fleet_support::wait_until("assignment_applied", Duration::from_secs(30), || {
        !fleet_events(&fleet, "assignment_applied").is_empty()
    });
    let applied = &fleet_events(&fleet, "assignment_applied")[0];
    assert_eq!(applied["generation"], 1, "{applied}");
    // Each assigned module said ready or unavailable, never nothing.
    let ready = fleet_events(&fleet, "module_ready");
    let unavailable = fleet_events(&fleet, "module_unavailable");
    let said: std::collections::BTreeSet<String> = ready
        .iter()
        .chain(&unavailable)
        .map(|e| e["module"].as_str().unwrap().to_owned())
        .collect();
    for module in ["core", "web", "php", "mysql", "mail"] {
        assert!(said.contains(module), "{module}: {ready:?} {unavailable:?}");
    }
    let names = |events: &[serde_json::Value]| -> Vec<String> {
        events
            .iter()
            .map(|e| e["module"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(&unavailable), ["mail"], "{unavailable:?}");
    assert!(
        unavailable[0]["reason"]
            .as_str()
            .unwrap()
            .contains("Postfix"),
        "{unavailable:?}"
    );
    assert_eq!(names(&ready).len(), 4, "{ready:?}");
    // The node reports what it runs, and its status says it, loudly.
    fleet_support::wait_until("the reported modules", Duration::from_secs(10), || {
        fleet.nodes()[0]["reported"]["assignment_generation"] == 1
    });
    let reported = fleet.nodes()[0]["reported"]["modules"].clone();
    assert!(
        reported
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["module"] == "mail" && m["ready"] == false),
        "{reported}"
    );
    let status = layerone(&["fleet", "status", "--dev", &root]);
    assert!(status.contains("assignment generation 1"), "{status}");
    assert!(status.contains("mail     UNAVAILABLE: Postfix"), "{status}");
    // Its operations say why.
    let account = ensure_account(&hex32(11), &hex32(12), "assigned1");
    assert_eq!(
        fleet.submit_wait("n1", &account)["job"]["state"],
        "succeeded"
    );
    let mail_domain = serde_json::json!({
        "request_id": hex32(15),
        "operation": "ensure_mail_domain",
        "resource": {"id": hex32(16), "account": hex32(12), "domain": "mail.example.com"}
    });
    let refused = fleet.submit_wait("n1", &mail_domain);
    assert_eq!(refused["code"], "module_unavailable", "{refused}");
    assert!(
        refused["message"].as_str().unwrap().contains("Postfix"),
        "{refused}"
    );

    // An operation of a module left out: refused at the node's door.
    fleet.cli(&["assign", "n1", "mail"]);
    fleet_support::wait_until("generation 2", Duration::from_secs(30), || {
        fleet_events(&fleet, "assignment_applied")
            .iter()
            .any(|e| e["generation"] == 2)
    });
    let domain = serde_json::json!({
        "request_id": hex32(13),
        "operation": "ensure_web_domain",
        "resource": {"id": hex32(14), "account": hex32(12), "domain": "shop.example.com"}
    });
    let refused = fleet.submit_wait("n1", &domain);
    assert_eq!(refused["kind"], "refused", "{refused}");
    assert_eq!(refused["code"], "module_not_assigned", "{refused}");
    assert!(
        refused["message"].as_str().unwrap().contains("web"),
        "{refused}"
    );
}

/// The files of a node's `fleet.db` (the database and its write-ahead log) as the file system
/// shows them: what changes when anything is written to it.
fn fleet_db_files(root: &std::path::Path) -> Vec<(std::path::PathBuf, u64, std::time::SystemTime)> {
    node_files(root)
        .into_iter()
        .filter(|(path, _, _)| {
            path.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("fleet.db"))
        })
        .collect()
}

/// Every file beneath `root` with its size and modification time.
fn node_files(root: &std::path::Path) -> Vec<(std::path::PathBuf, u64, std::time::SystemTime)> {
    let mut found = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                dirs.push(path);
            } else {
                found.push((path, meta.len(), meta.modified().unwrap()));
            }
        }
    }
    found
}

/// `write_bytes` of `/proc/PID/io`: what the process caused to be written to storage (a page
/// it dirtied in a disk file's cache counts when it is dirtied).
fn written_to_storage(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("write_bytes: "))
        .expect("write_bytes in /proc/PID/io")
        .trim()
        .parse()
        .unwrap()
}

/// The sync calls of every thread of process `pid` over `window`, counted by strace.
fn syncs_over(pid: u32, window: Duration) -> (u64, String) {
    const SYNCS: &[&str] = &[
        "fsync",
        "fdatasync",
        "sync_file_range",
        "syncfs",
        "sync",
        "msync",
    ];
    const SENDS: &str = "writev,sendto,sendmsg";
    #[allow(clippy::disallowed_methods)] // strace is the test's own instrument.
    // The calls that send a heartbeat to the broker are the witness that strace saw the process at all
    // (it prints nothing of a call never made); with a seccomp filter the process stops only
    // at the calls traced, so the tracing barely changes what it costs.
    let out = std::process::Command::new("timeout")
        .args(["-s", "INT", &window.as_secs().to_string()])
        .args(["strace", "-f", "--seccomp-bpf", "-qq", "-c", "-e"])
        .arg(format!("trace={SENDS},{}", SYNCS.join(",")))
        .args(["-p", &pid.to_string()])
        .output()
        .expect("strace (scripts/test installs it)");
    let summary = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        SENDS.split(',').any(|call| summary.contains(call)),
        "strace did not see the process send: {summary}"
    );
    // `% time seconds usecs/call calls [errors] syscall`: the calls of each sync call.
    let calls = summary
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let name = fields.last()?;
            SYNCS
                .contains(name)
                .then(|| fields.get(3)?.parse::<u64>().ok())?
        })
        .sum();
    (calls, summary)
}

#[test]
fn an_idle_joined_node_writes_and_syncs_nothing_for_a_minute() {
    let (fleet, node) = fleet_support::one_node_fleet();
    // One request over the broker: the daemon consumed, published and recorded its link.
    let event = fleet.submit_wait("n1", &ensure_account(&hex32(1), &hex32(2), "idle1"));
    assert!(
        event["kind"] == "job" || event["kind"] == "accepted",
        "{event}"
    );
    let files = fleet_db_files(&node.root);
    assert!(
        !files.is_empty(),
        "no fleet.db under {}",
        node.root.display()
    );
    // Settled: what the request left to publish is published (at most 30 s).
    let mut last = files;
    let mut stable_since = std::time::Instant::now();
    fleet_support::wait_until("fleet.db settled", Duration::from_secs(30), || {
        let now = fleet_db_files(&node.root);
        if now != last {
            last = now;
            stable_since = std::time::Instant::now();
        }
        stable_since.elapsed() >= Duration::from_secs(3)
    });
    // A minute of the node's process (the API, the fleet daemon and the runner), on the
    // machine's disk, not a tmpfs: 120 heartbeats, sixty of the publisher's rounds, four of
    // the runner's idle passes. No sync; no file of the node written, its databases' WAL and
    // shared-memory files included (a page written through a mapping changes the file's
    // modification time too), but the runner's lock file, where each pass records its times
    // (the runner's liveness, `layerone status`; no sync).
    let pid = node.pid();
    let files_before = node_files(&node.root);
    let before = written_to_storage(pid);
    let (syncs, summary) = syncs_over(pid, Duration::from_secs(60));
    let written = written_to_storage(pid) - before;
    let changed: Vec<_> = node_files(&node.root)
        .into_iter()
        .filter(|f| !files_before.contains(f))
        .map(|(path, _, _)| path)
        .collect();
    eprintln!(
        "an idle minute: {written} bytes written to storage (the runner's pass records), \
         {syncs} syncs, files changed: {changed:?}"
    );
    assert_eq!(syncs, 0, "{summary}\n{}", node.log());
    assert!(
        changed.iter().all(|p| p.ends_with("state/runner.lock")),
        "{changed:?}\n{}",
        node.log()
    );
    assert_eq!(fleet_db_files(&node.root), last, "{}", node.log());
    assert_eq!(fleet.node_state("n1").as_deref(), Some("up"));
}
