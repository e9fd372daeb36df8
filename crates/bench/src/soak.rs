//! `layerone-bench soak [SECONDS]`: 64 clients for 60 s (or SECONDS) of mixed operations
//! against a node with the API and the watching runner, on loopback. Every answer other than
//! 2xx, the documented 429 and 503, or a transport error counts as an error; afterwards every
//! request answered 202 must be in state.db (so it was in the inbox) in a final state. The
//! API's resident memory (`VmRSS`) is read after a warm-up and at the end, and its growth
//! printed. Bounded in time and count.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::node::{self, Bins, Node};
use crate::stats::{Summary, ms, summarize};
use crate::sys;

const CLIENTS: usize = 64;
const WARM_UP: Duration = Duration::from_secs(5);
/// How long the runner may go, after the last request, without bringing one more job to its
/// end: a runner still working through the backlog is waited for, a stuck one is not.
const STALL: Duration = Duration::from_secs(60);
/// The longest wait after the last request, however the backlog moves.
const SETTLE_MAX: Duration = Duration::from_secs(30 * 60);
/// The most requests one client sends, whatever the duration.
const PER_CLIENT_MAX: u64 = 200_000;

struct ClientRun {
    accepted: Vec<String>,
    statuses: HashMap<u16, u64>,
    transport_errors: u64,
    latencies: Vec<Duration>,
}

pub fn run(dir: &std::path::Path, seconds: u64) -> anyhow::Result<()> {
    let bins = Bins::beside_me()?;
    let mut node = Node::new(&bins, dir, "soak")?;
    node.start_api()?;
    node.start_watch()?;
    let pid = node.api_pid().context("the API's pid")?;
    let time = Duration::from_secs(seconds);
    let barrier = Arc::new(Barrier::new(CLIENTS + 1));
    let next = Arc::new(AtomicU64::new(1));
    let stop = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    for c in 0..CLIENTS {
        let client = node.client()?;
        client.health().context("warm a connection")?;
        let (barrier, next, stop) = (barrier.clone(), next.clone(), stop.clone());
        threads.push(std::thread::spawn(move || {
            let mut run = ClientRun {
                accepted: Vec::new(),
                statuses: HashMap::new(),
                transport_errors: 0,
                latencies: Vec::new(),
            };
            // Each client owns one account: it declares it, then adds and removes keys on it,
            // reads its jobs back and pages the events feed.
            let account = node::id(0x50, c as u64);
            barrier.wait();
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) && i < PER_CLIENT_MAX {
                let n = next.fetch_add(1, Ordering::Relaxed);
                let rid = node::id(0x51, n);
                let (method, path, body) = match i % 5 {
                    0 => (
                        "POST",
                        "/v1/jobs".to_owned(),
                        Some(node::ensure_account(&rid, &account, &format!("s{c:x}"))),
                    ),
                    1 => (
                        "POST",
                        "/v1/jobs".to_owned(),
                        Some(node::ensure_key(&rid, &node::id(0x52, n), &account)),
                    ),
                    2 => (
                        "POST",
                        "/v1/jobs".to_owned(),
                        Some(node::remove_key(&rid, &node::id(0x52, n - 1), &account)),
                    ),
                    3 => match run.accepted.last() {
                        Some(last) => ("GET", format!("/v1/jobs/{last}"), None),
                        None => ("GET", "/v1/health".to_owned(), None),
                    },
                    _ => ("GET", "/v1/events?after=0&limit=20".to_owned(), None),
                };
                let bytes = body.map(|b| serde_json::to_vec(&b).expect("JSON serializes"));
                let t0 = Instant::now();
                match client.request(method, &path, bytes.as_deref(), &[]) {
                    Ok(resp) => {
                        run.latencies.push(t0.elapsed());
                        *run.statuses.entry(resp.status).or_default() += 1;
                        if method == "POST" && resp.status == 202 {
                            run.accepted.push(rid);
                        }
                    }
                    Err(_) => run.transport_errors += 1,
                }
                i += 1;
            }
            run
        }));
    }
    barrier.wait();
    let started = Instant::now();
    std::thread::sleep(WARM_UP.min(time));
    let rss_warm = sys::status_kib(pid, "VmRSS:").context("the API's VmRSS")?;
    std::thread::sleep(time.saturating_sub(started.elapsed()));
    stop.store(true, Ordering::Relaxed);
    let mut accepted = Vec::new();
    let mut statuses: HashMap<u16, u64> = HashMap::new();
    let mut transport_errors = 0;
    let mut latencies = Vec::new();
    for t in threads {
        let run = t
            .join()
            .map_err(|_| anyhow::anyhow!("a client thread panicked"))?;
        accepted.extend(run.accepted);
        for (s, n) in run.statuses {
            *statuses.entry(s).or_default() += n;
        }
        transport_errors += run.transport_errors;
        latencies.extend(run.latencies);
    }
    let wall = started.elapsed();
    let rss_end = sys::status_kib(pid, "VmRSS:").context("the API's VmRSS")?;
    let requests: u64 = statuses.values().sum();
    let errors: u64 = statuses
        .iter()
        .filter(|(s, _)| !(200..300).contains(*s) && **s != 429 && **s != 503)
        .map(|(_, n)| n)
        .sum::<u64>()
        + transport_errors;
    let documented: u64 = statuses
        .iter()
        .filter(|(s, _)| **s == 429 || **s == 503)
        .map(|(_, n)| n)
        .sum();

    // Every 202 in state.db, final. The watching runner still commits while this reads: a
    // pass that finds the database locked is read again a second later, as a client would.
    let settling = Instant::now();
    let mut progress = (u64::MAX, Instant::now());
    let (missing, unfinished) = loop {
        let stuck = progress.1.elapsed() > STALL || settling.elapsed() > SETTLE_MAX;
        let counted = match count_final(&node, &accepted) {
            Err(e) if is_busy(&e) && !stuck => None,
            counted => Some(counted?),
        };
        if let Some((missing, unfinished)) = counted {
            if (missing == 0 && unfinished == 0) || stuck {
                break (missing, unfinished);
            }
            if missing + unfinished < progress.0 {
                progress = (missing + unfinished, Instant::now());
            }
        }
        std::thread::sleep(Duration::from_secs(1));
    };
    let settled = started.elapsed();
    node.stop_watch();
    node.stop_api();

    let latency: Summary = summarize(latencies);
    let mut by_status: Vec<_> = statuses.into_iter().collect();
    by_status.sort_unstable();
    println!(
        "soak: {CLIENTS} clients for {:.0} s of mixed operations (declare an account, add a key, remove a key, read a job, page the events feed)",
        wall.as_secs_f64()
    );
    println!(
        "  requests: {requests} ({:.0}/s), by status: {by_status:?}",
        requests as f64 / wall.as_secs_f64()
    );
    println!(
        "  errors (not 2xx, 429 or 503, or no answer): {errors}; documented 429/503: {documented}"
    );
    println!(
        "  latency: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        ms(latency.p50),
        ms(latency.p99),
        ms(latency.max)
    );
    println!(
        "  accepted (202): {}; afterwards missing from state.db: {missing}, not final: {unfinished} (settled {:.0} s after the start: {:.0} jobs/s to their end)",
        accepted.len(),
        settled.as_secs_f64(),
        accepted.len() as f64 / settled.as_secs_f64()
    );
    println!(
        "  API RSS: {rss_warm} KiB after {} s of warm-up, {rss_end} KiB at the end ({:+} KiB)",
        WARM_UP.as_secs(),
        rss_end as i64 - rss_warm as i64
    );
    if errors > 0 || missing > 0 || unfinished > 0 {
        bail!("the soak failed: {errors} errors, {missing} missing, {unfinished} not final");
    }
    Ok(())
}

/// How many of the `accepted` request ids have no job in state.db, and how many a job not yet
/// final. One statement reads every job's state: a pass of one query per request would hold
/// and take the shared lock hundreds of thousands of times while the runner commits, and one
/// of them would find the runner's lock held past the reader's busy timeout.
fn count_final(node: &Node, accepted: &[String]) -> anyhow::Result<(u64, u64)> {
    let db = node.state_ro()?;
    let mut query = db.prepare("SELECT request_id, state FROM jobs")?;
    let states: HashMap<String, String> = query
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let (mut missing, mut unfinished) = (0u64, 0u64);
    for rid in accepted {
        match states.get(rid).map(String::as_str) {
            None => missing += 1,
            Some("succeeded" | "failed" | "superseded") => {}
            Some(_) => unfinished += 1,
        }
    }
    Ok((missing, unfinished))
}

/// Whether `e` is SQLite saying another connection holds the lock.
fn is_busy(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        matches!(
            cause.downcast_ref::<rusqlite::Error>(),
            Some(rusqlite::Error::SqliteFailure(f, _))
                if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    })
}
