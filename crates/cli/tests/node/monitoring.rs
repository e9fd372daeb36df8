//! What an operator's monitoring sees: a full disk said by the API (503 `disk_full`), by the
//! runner's step failures, on the events feed, in `layerone status` and in the metrics, and
//! nothing lost once space is back (on a small tmpfs, as root, as CI runs); and the
//! Prometheus metrics after a known history, read back by an independent parser (the
//! Prometheus Python client's, `scripts/prometheus-client.requirements`).

use crate::common;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use registry::{EventKind, FileSystem, JobState};
use serde_json::Value;

const LAYERONE: &str = env!("CARGO_BIN_EXE_layerone");

fn error_code(response: &client::Response) -> String {
    let body: Value = serde_json::from_slice(&response.body).unwrap();
    body["code"].as_str().unwrap_or_default().to_owned()
}

/// `layerone status --root ROOT`, whose data directory is linked to the node's.
#[allow(clippy::disallowed_methods)] // The test runs the real binary it checks.
fn status(node: &Node) -> String {
    let root = node.dir.path().join("status-root");
    let data = root.join("var/lib/layerone");
    if !data.exists() {
        std::fs::create_dir_all(data.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(node.layout.root(), &data).unwrap();
    }
    let out = Command::new(LAYERONE)
        .args(["status", "--root"])
        .arg(&root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The disk events of the feed after `after`, as (kind, file system).
fn disk_events(api: &Api, after: i64) -> Vec<(EventKind, FileSystem)> {
    api.client
        .events(after, 0, 1000)
        .unwrap()
        .events
        .into_iter()
        .filter_map(|e| Some((e.kind, e.disk?.filesystem)))
        .collect()
}

#[test]
fn a_full_disk_is_refused_with_disk_full_said_everywhere_and_what_was_accepted_is_applied_after() {
    let mut node = Node::new();
    let data = node.layout.root().to_owned();
    let _tmpfs = Tmpfs::mount(&data, "32m");
    node.layout.prepare_api_side(None).unwrap();
    node.layout.prepare_root_side(None).unwrap();
    let api = start_api(&node);
    assert!(status(&node).contains("disk       ok"));

    // Accepted while there is room, not yet applied.
    let mut accepted = vec![ensure_account(1, 10, "shop1")];
    accepted.extend((0..4).map(|i| ensure_key(2 + i, 20 + i, 10)));
    for body in &accepted {
        api.client.submit(body).unwrap();
    }
    let cursor = api.client.events(0, 0, 1000).unwrap().next;

    let filler = fill(&data, 256 * 1024);
    let refused = api
        .client
        .request(
            "POST",
            "/v1/jobs",
            Some(ensure_key(9, 29, 10).to_string().as_bytes()),
            &[("content-type", "application/json")],
        )
        .unwrap();
    assert_eq!(
        refused.status,
        503,
        "{:?}",
        String::from_utf8_lossy(&refused.body)
    );
    assert_eq!(error_code(&refused), "disk_full");
    assert!(
        refused.header("retry-after").is_some(),
        "503 without Retry-After"
    );
    let body: Value = serde_json::from_slice(&refused.body).unwrap();
    assert!(
        body["message"].as_str().unwrap().contains("inbox"),
        "the message names the file system: {body}"
    );
    assert!(
        !String::from_utf8_lossy(&refused.body).contains('/'),
        "no path in the answer: {body}"
    );

    // The runner records the condition once, admits and applies nothing, and its steps say
    // which file system is full.
    node.pass();
    node.pass();
    let failures = node.state().step_failures(20).unwrap();
    for step in ["ingest", "apply"] {
        assert!(
            failures.iter().any(|(s, _, message)| s == step
                && message.starts_with("disk_full: the state file system is full")),
            "{step}: {failures:?}"
        );
    }
    let full = disk_events(&api, cursor);
    assert_eq!(
        full,
        [
            (EventKind::DiskFull, FileSystem::State),
            (EventKind::DiskFull, FileSystem::Inbox),
            (EventKind::DiskFull, FileSystem::Blobs),
        ],
        "one event per file system, not one per pass"
    );
    for body in &accepted {
        let rid = body["request_id"].as_str().unwrap();
        assert_eq!(api.client.job(rid).unwrap().state, JobState::Received);
    }
    let shown = status(&node);
    assert!(shown.contains("disk full  state since"), "{shown}");
    assert!(shown.contains("disk full  inbox since"), "{shown}");
    let metrics = String::from_utf8(
        api.client
            .request("GET", "/v1/metrics", None, &[])
            .unwrap()
            .body,
    )
    .unwrap();
    assert!(
        metrics.contains("layerone_disk_full{filesystem=\"state\"} 1"),
        "{metrics}"
    );

    // Space is back: the condition ends once, and everything accepted before is applied.
    let cursor = api.client.events(0, 0, 1000).unwrap().next;
    std::fs::remove_file(filler).unwrap();
    node.pass();
    for body in &accepted {
        let rid = body["request_id"].as_str().unwrap();
        assert_eq!(
            api.client.job(rid).unwrap().state,
            JobState::Succeeded,
            "{body}"
        );
    }
    assert_eq!(
        disk_events(&api, cursor),
        [
            (EventKind::DiskOk, FileSystem::State),
            (EventKind::DiskOk, FileSystem::Inbox),
            (EventKind::DiskOk, FileSystem::Blobs),
        ]
    );
    assert!(status(&node).contains("disk       ok"));
    api.client.submit(&ensure_key(9, 29, 10)).unwrap();
    assert_eq!(node.state().integrity_check().unwrap(), "ok");
    drop(api);
    node.inbox = None;
}

/// The Prometheus client's parser, from its virtualenv under target/ (`./scripts/test`
/// installs it).
fn parse_metrics(text: &str) -> Vec<Value> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = root.join("target/promvenv/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: ./scripts/test installs scripts/prometheus-client.requirements there",
        python.display()
    );
    #[allow(clippy::disallowed_methods)] // The independent parser the test reads back with.
    let mut child = Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/metrics_parse.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the parser refused the metrics: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `GET /v1/metrics`'s text.
fn metrics_text(api: &Api) -> String {
    let response = api.client.request("GET", "/v1/metrics", None, &[]).unwrap();
    assert_eq!(response.status, 200);
    String::from_utf8(response.body).unwrap()
}

/// Every sample the parser read, by name and labels (sorted `k=v` pairs).
fn samples(families: &[Value]) -> BTreeMap<(String, String), f64> {
    let mut all = BTreeMap::new();
    for family in families {
        for s in family["samples"].as_array().unwrap() {
            let labels: BTreeMap<String, String> =
                serde_json::from_value(s["labels"].clone()).unwrap();
            let labels: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            all.insert(
                (s["name"].as_str().unwrap().to_owned(), labels.join(",")),
                s["value"].as_f64().unwrap(),
            );
        }
    }
    all
}

#[test]
fn a_known_history_reads_back_from_the_metrics_through_an_independent_parser() {
    let mut node = Node::new();
    let api = start_api(&node);
    // One account, two keys, one key for an account that does not exist (failed).
    for body in [
        ensure_account(1, 10, "shop1"),
        ensure_key(2, 20, 10),
        ensure_key(3, 21, 10),
        ensure_key(4, 22, 11),
    ] {
        api.client.submit(&body).unwrap();
    }
    node.pass();
    assert_eq!(api.client.job(&id(4)).unwrap().state, JobState::Failed);
    // One drift finding: the account's authorized_keys gone behind the node's back.
    std::fs::remove_file(node.path("/home/shop1/.ssh/authorized_keys")).unwrap();
    node.drift_check_due();
    node.pass();
    // One request received and not yet admitted, for at least WAITING when the metrics are
    // read, and at most as long as it took from submitting it to reading them.
    const WAITING: Duration = Duration::from_millis(50);
    let submitted = Instant::now();
    api.client.submit(&ensure_key(5, 23, 10)).unwrap();
    std::thread::sleep(WAITING);

    let response = api.client.request("GET", "/v1/metrics", None, &[]).unwrap();
    let since_submitted = submitted.elapsed();
    assert_eq!(response.status, 200);
    assert!(
        response
            .header("content-type")
            .unwrap()
            .starts_with("text/plain; version=0.0.4"),
        "{:?}",
        response.headers
    );
    let text = String::from_utf8(response.body).unwrap();
    let families = parse_metrics(&text);
    let types: BTreeMap<&str, &str> = families
        .iter()
        .map(|f| (f["name"].as_str().unwrap(), f["type"].as_str().unwrap()))
        .collect();
    assert_eq!(types["layerone_job_duration_seconds"], "histogram");
    assert_eq!(types["layerone_runner_pass_duration_seconds"], "histogram");
    assert_eq!(types["layerone_runner_step_failures"], "counter");
    assert_eq!(types["layerone_jobs"], "gauge");
    let s = samples(&families);
    let get = |name: &str, labels: &str| {
        *s.get(&(name.to_owned(), labels.to_owned()))
            .unwrap_or_else(|| panic!("no {name}{{{labels}}} in\n{text}"))
    };
    assert_eq!(
        get("layerone_jobs", "operation=ensure_account,state=succeeded"),
        1.0
    );
    assert_eq!(
        get("layerone_jobs", "operation=ensure_ssh_key,state=succeeded"),
        2.0
    );
    assert_eq!(
        get("layerone_jobs", "operation=ensure_ssh_key,state=failed"),
        1.0
    );
    assert_eq!(
        get(
            "layerone_job_duration_seconds_count",
            "operation=ensure_ssh_key"
        ),
        3.0
    );
    assert_eq!(
        get(
            "layerone_job_duration_seconds_bucket",
            "le=+Inf,operation=ensure_ssh_key"
        ),
        3.0
    );
    assert!(get("layerone_runner_pass_duration_seconds_count", "") >= 2.0);
    assert_eq!(
        get(
            "layerone_drift_findings",
            "aspect=authorized_keys_missing,family=ssh_key"
        ),
        1.0
    );
    assert_eq!(get("layerone_inbox_waiting_requests", ""), 1.0);
    // Both ends of the wait are whole milliseconds of the API's clock: one more either way.
    let oldest = get("layerone_inbox_oldest_waiting_seconds", "");
    let between = WAITING.as_secs_f64() - 0.001..=since_submitted.as_secs_f64() + 0.001;
    assert!(
        between.contains(&oldest),
        "the oldest request waited {oldest} s, not within {between:?}"
    );
    for fs in ["state", "inbox", "blobs"] {
        assert_eq!(get("layerone_disk_full", &format!("filesystem={fs}")), 0.0);
        assert!(get("layerone_disk_available_bytes", &format!("filesystem={fs}")) > 0.0);
    }
    assert_eq!(get("layerone_runner_step_failures_total", ""), 0.0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as f64;
    assert!(get("layerone_tls_certificate_expiry_timestamp_seconds", "") > now);
    for lane in ["main", "long"] {
        for job_state in ["queued", "running"] {
            let labels = format!("lane={lane},state={job_state}");
            assert_eq!(get("layerone_queue_depth", &labels), 0.0, "{labels}");
        }
        let labels = format!("lane={lane}");
        assert_eq!(get("layerone_queue_oldest_queued_seconds", &labels), 0.0);
    }

    // The queue. A pass that stops right after admitting (its crash point) leaves what it
    // admitted queued: keys 5 and 6 in the main lane, a usage walk (a long operation) in the
    // long lane.
    api.client.submit(&ensure_key(6, 24, 10)).unwrap();
    api.client
        .submit(&account_op(7, "observe_account_usage", 10))
        .unwrap();
    let before_ingest = Instant::now();
    assert!(!node.run(Some(crash::runner::INGEST_AFTER_COMMIT)).success());
    let ingested = Instant::now();
    std::thread::sleep(WAITING);
    let queue = |ingested: Instant| {
        let asked = Instant::now();
        let s = samples(&parse_metrics(&metrics_text(&api)));
        // Queued between `before_ingest` and `ingested`, in whole milliseconds.
        let between = (asked - ingested).as_secs_f64() - 0.001
            ..=before_ingest.elapsed().as_secs_f64() + 0.001;
        let mut depth = BTreeMap::new();
        for lane in ["main", "long"] {
            for job_state in ["queued", "running"] {
                let key = (
                    "layerone_queue_depth".to_owned(),
                    format!("lane={lane},state={job_state}"),
                );
                depth.insert(format!("{lane} {job_state}"), s[&key]);
            }
            let age = s[&(
                "layerone_queue_oldest_queued_seconds".to_owned(),
                format!("lane={lane}"),
            )];
            assert!(
                between.contains(&age),
                "the oldest job queued in the {lane} lane waited {age} s, not within {between:?}"
            );
        }
        depth
    };
    let depth = |pairs: [(&str, f64); 4]| -> BTreeMap<String, f64> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
    };
    assert_eq!(
        queue(ingested),
        depth([
            ("main queued", 2.0),
            ("main running", 0.0),
            ("long queued", 1.0),
            ("long running", 0.0),
        ])
    );
    // A pass that stops right after its first claim: key 5 is running (the usage walk waits
    // for the account's older jobs); the oldest queued is still one queued at that ingest.
    assert!(!node.run(Some(crash::runner::CLAIM_AFTER_COMMIT)).success());
    assert_eq!(api.client.job(&id(5)).unwrap().state, JobState::Running);
    assert_eq!(
        queue(ingested),
        depth([
            ("main queued", 1.0),
            ("main running", 1.0),
            ("long queued", 1.0),
            ("long running", 0.0),
        ])
    );

    // Behind the key like every endpoint but health.
    let keyless = client::NodeClient::new(
        &format!("https://{}", api.api.as_ref().unwrap().addr),
        None,
        &api::tls::pin_sha256(
            &std::fs::read_to_string(node.dir.path().join("tls/cert.pem")).unwrap(),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(
        keyless
            .request("GET", "/v1/metrics", None, &[])
            .unwrap()
            .status,
        401
    );
    drop(api);
    node.inbox = None;
}
