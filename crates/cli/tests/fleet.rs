//! The fleet on a real nats-server (127.0.0.1) with real node binaries: `layerone fleet init`,
//! the fleet service, dev nodes that join with one-time tokens, requests over the broker and
//! their results on the events stream.

use std::time::Duration;

mod common;
mod fleet_support;

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
    assert_eq!(over_broker["kind"], "accepted", "{over_broker}");
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
