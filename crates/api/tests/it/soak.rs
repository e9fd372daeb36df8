//! The short soak CI runs: 64 clients for a few seconds of mixed operations against the real
//! API on 127.0.0.1 (real HTTPS, real SQLite), while root's side admits and completes jobs as
//! the runner would (the harness's store handles). No answer may be an error other than the
//! documented 429 and 503, and every request answered 202 must afterwards be in state.db (so
//! it was in the inbox) in a final state. The full 60 s run against a node with the real
//! runner, with its figures, is `layerone-bench soak`.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use common::{Node, hex32};
use serde_json::json;

const CLIENTS: usize = 64;
const DURATION: Duration = Duration::from_secs(8);
/// The most requests one client sends, whatever the machine's speed.
const PER_CLIENT_MAX: usize = 2_000;

#[test]
fn sixty_four_clients_of_mixed_operations_get_no_error_and_every_202_ends_final() {
    let node = Arc::new(Node::start());
    let stop = Arc::new(AtomicBool::new(false));
    let barrier = Arc::new(Barrier::new(CLIENTS + 2));
    let mut clients = Vec::new();
    for _ in 0..CLIENTS {
        let (node, stop, barrier) = (node.clone(), stop.clone(), barrier.clone());
        clients.push(std::thread::spawn(move || {
            let client = node.client();
            let mut accepted = Vec::new();
            let mut errors = Vec::new();
            barrier.wait();
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) && i < PER_CLIENT_MAX {
                let rid = hex32();
                let (method, path, body) = match i % 4 {
                    0 | 1 => (
                        "POST",
                        "/v1/jobs".to_owned(),
                        Some(node.example_envelope(&rid).to_string()),
                    ),
                    2 => match accepted.last() {
                        Some(last) => ("GET", format!("/v1/jobs/{last}"), None),
                        None => ("GET", "/v1/health".to_owned(), None),
                    },
                    _ => ("GET", "/v1/events?after=0&limit=20".to_owned(), None),
                };
                match client.request(method, &path, body.as_deref().map(str::as_bytes), &[]) {
                    Ok(r) if r.status == 202 && method == "POST" => accepted.push(rid),
                    Ok(r) if r.status < 300 || r.status == 429 || r.status == 503 => {}
                    Ok(r) => errors.push(format!(
                        "{method} {path}: {} {}",
                        r.status,
                        String::from_utf8_lossy(&r.body)
                    )),
                    Err(e) => errors.push(format!("{method} {path}: {e}")),
                }
                i += 1;
            }
            (accepted, errors)
        }));
    }
    // Root's side, as the runner: admit what the inbox holds and complete it, until the
    // clients have stopped and nothing is left.
    let root = {
        let (node, stop, barrier) = (node.clone(), stop.clone(), barrier.clone());
        std::thread::spawn(move || {
            barrier.wait();
            loop {
                let stopped = stop.load(Ordering::Relaxed);
                let admitted = node.ingest().admitted;
                let mut finished = 0;
                while node.finish_next(json!({})).is_some() {
                    finished += 1;
                }
                if stopped && admitted == 0 && finished == 0 {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    barrier.wait();
    std::thread::sleep(DURATION);
    stop.store(true, Ordering::Relaxed);
    let mut accepted = Vec::new();
    let mut errors = Vec::new();
    for c in clients {
        let (a, e) = c.join().expect("a client thread");
        accepted.extend(a);
        errors.extend(e);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while !root.is_finished() {
        assert!(Instant::now() < deadline, "root's side did not finish");
        std::thread::sleep(Duration::from_millis(50));
    }
    root.join().expect("root's side");
    assert!(
        errors.is_empty(),
        "{} errors, first: {:?}",
        errors.len(),
        &errors[..errors.len().min(5)]
    );
    assert!(
        accepted.len() >= CLIENTS,
        "only {} requests accepted",
        accepted.len()
    );
    let db = rusqlite::Connection::open(node.layout.state_db()).expect("state.db");
    let mut query = db
        .prepare("SELECT state FROM jobs WHERE request_id = ?1")
        .expect("a query");
    for rid in &accepted {
        let state: String = query
            .query_row([rid.as_str()], |r| r.get(0))
            .unwrap_or_else(|e| panic!("{rid} answered 202 but is not in state.db: {e}"));
        assert!(
            matches!(state.as_str(), "succeeded" | "failed" | "superseded"),
            "{rid} is {state}"
        );
    }
}
