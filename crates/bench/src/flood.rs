//! `layerone-bench flood`: one account floods a dev node with requests while another account
//! goes on with its own, against the node's default queue caps (`[api]` `queue_total`,
//! `queue_per_account`). It prints how the door answered the flood (202 until the account's
//! cap, then 429 `queue_full`), the inbox's peak size, the least free space the data
//! directory's file system had against the margin the inbox keeps, and the other account's
//! submit-to-`succeeded` latency during the flood, with the runner (`--watch`) applying all
//! along. Nothing is asserted: the figures go to docs/benchmarks.md.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::bail;
use registry::{FileSystem, JobState};

use crate::node::{self, Bins, Node};
use crate::stats::{self, Summary};

/// Clients sending the flood, each on its own keep-alive connection.
const CLIENTS: usize = 16;
/// How often the neighbour sends a request during the flood.
const NEIGHBOUR_EVERY: Duration = Duration::from_millis(100);
/// How often the inbox and the disk are sampled.
const SAMPLE_EVERY: Duration = Duration::from_millis(50);
/// The longest the flood, or the drain after it, may take.
const BOUND: Duration = Duration::from_secs(600);

pub fn run(dir: &Path, requests: u64) -> anyhow::Result<()> {
    let bins = Bins::beside_me()?;
    let mut node = Node::new(&bins, dir, "flood")?;
    node.start_api()?;
    node.start_watch()?;
    let client = node.client()?;
    let (flooder, neighbour) = (node::id(0xf1, 0), node::id(0xf2, 0));
    for (n, account) in [&flooder, &neighbour].into_iter().enumerate() {
        let rid = node::id(0xf0, n as u64);
        client.submit(&node::ensure_account(&rid, account, &format!("flood{n}")))?;
        let view = client.wait(&rid, Duration::from_secs(60))?;
        if view.state != JobState::Succeeded {
            bail!("creating account {account} ended {:?}", view.state);
        }
    }
    let caps = inbox::QueueCaps::default();
    println!("layerone-bench flood");
    println!("  disk      {}", crate::sys::disk_of(dir));
    println!("  load avg  {} (at start)", crate::sys::loadavg());
    println!(
        "  {requests} requests of one account (remove_ssh_key, the trivial operation) from {CLIENTS} clients, \
         caps {} per account and {} in total; another account sends one every {NEIGHBOUR_EVERY:?}",
        caps.per_account, caps.total
    );

    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (done, layout) = (done.clone(), node.layout.clone());
        std::thread::spawn(move || sample(&done, &layout))
    };
    let neighbour_thread = {
        let (done, client, account) = (done.clone(), node.client()?, neighbour.clone());
        std::thread::spawn(move || neighbour_latencies(&done, &client, &account))
    };

    let next = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut threads = Vec::new();
    for _ in 0..CLIENTS {
        let (next, client, account) = (next.clone(), node.client()?, flooder.clone());
        threads.push(std::thread::spawn(move || {
            let mut statuses: BTreeMap<u16, u64> = BTreeMap::new();
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= requests || started.elapsed() > BOUND {
                    return statuses;
                }
                let body = node::remove_key(&node::id(0xf3, n), &node::id(0xf4, n), &account);
                let bytes = serde_json::to_vec(&body).expect("JSON serializes");
                let status = client
                    .request("POST", "/v1/jobs", Some(&bytes), &[])
                    .map_or(0, |r| r.status);
                *statuses.entry(status).or_default() += 1;
            }
        }));
    }
    let mut statuses: BTreeMap<u16, u64> = BTreeMap::new();
    for t in threads {
        let counted = t
            .join()
            .map_err(|_| anyhow::anyhow!("a flood client panicked"))?;
        for (status, n) in counted {
            *statuses.entry(status).or_default() += n;
        }
    }
    let flood = started.elapsed();
    done.store(true, Ordering::Relaxed);
    let latencies = neighbour_thread
        .join()
        .map_err(|_| anyhow::anyhow!("the neighbour panicked"))??;
    let samples = sampler
        .join()
        .map_err(|_| anyhow::anyhow!("the sampler panicked"))??;

    // The flood's accepted requests drain.
    let drain_started = Instant::now();
    let state = node.state_ro()?;
    loop {
        let pending: i64 = state.query_row(
            "SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')",
            [],
            |r| r.get(0),
        )?;
        let waiting = waiting_in_inbox(&node.layout)?;
        if pending == 0 && waiting == 0 {
            break;
        }
        if drain_started.elapsed() > BOUND {
            bail!("{pending} jobs still pending after {BOUND:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let drain = drain_started.elapsed();

    let sent: u64 = statuses.values().sum();
    let accepted = statuses.get(&202).copied().unwrap_or(0);
    let full = statuses.get(&429).copied().unwrap_or(0);
    println!(
        "  flood: {sent} requests in {:.1} s ({:.0}/s): 202 {accepted}, 429 {full}, by status {statuses:?}",
        flood.as_secs_f64(),
        sent as f64 / flood.as_secs_f64()
    );
    println!(
        "  inbox: at most {} requests waiting for root; at most {} rows and {:.1} MiB on disk \
         (with the admitted rows not yet pruned; inbox.db and its WAL)",
        samples.peak_waiting,
        samples.peak_rows,
        samples.peak_bytes as f64 / (1 << 20) as f64
    );
    println!(
        "  disk: at least {:.0} MiB free during the flood; the inbox keeps {:.0} MiB",
        samples.min_free as f64 / (1 << 20) as f64,
        store::disk::min_free(FileSystem::Inbox) as f64 / (1 << 20) as f64
    );
    println!("  the other account, submit to succeeded during the flood: {latencies}");
    println!(
        "  after the flood: the accepted requests drained in {:.1} s",
        drain.as_secs_f64()
    );
    node.stop_watch();
    node.stop_api();
    Ok(())
}

/// The rows the inbox holds beyond root's ingest watermark: requests not yet admitted.
fn waiting_in_inbox(layout: &store::Layout) -> anyhow::Result<i64> {
    let watermark = store::StateReader::new(&layout.state_db())
        .watermark()
        .map_err(|e| anyhow::anyhow!("read the watermark: {e:?}"))?;
    let inbox = rusqlite::Connection::open_with_flags(
        layout.inbox_db(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )?;
    Ok(inbox.query_row(
        "SELECT count(*) FROM requests WHERE seq > ?1",
        [watermark],
        |r| r.get(0),
    )?)
}

#[derive(Default)]
struct Samples {
    /// The most requests waiting in the inbox (received, not yet admitted by root).
    peak_waiting: i64,
    /// The most rows inbox.db held (those waiting and those admitted, not yet pruned).
    peak_rows: i64,
    peak_bytes: u64,
    min_free: u64,
}

/// Samples the inbox's rows and size and the data directory's free space until `done`.
fn sample(done: &AtomicBool, layout: &store::Layout) -> anyhow::Result<Samples> {
    let mut samples = Samples {
        min_free: u64::MAX,
        ..Samples::default()
    };
    let inbox = layout.inbox_db();
    let conn =
        rusqlite::Connection::open_with_flags(&inbox, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    while !done.load(Ordering::Relaxed) {
        if let Ok(rows) = conn.query_row("SELECT count(*) FROM requests", [], |r| r.get(0)) {
            samples.peak_rows = samples.peak_rows.max(rows);
        }
        if let Ok(waiting) = waiting_in_inbox(layout) {
            samples.peak_waiting = samples.peak_waiting.max(waiting);
        }
        let bytes: u64 = ["", "-wal"]
            .iter()
            .filter_map(|suffix| {
                let mut name = inbox.as_os_str().to_owned();
                name.push(suffix);
                std::fs::metadata(name).ok().map(|m| m.len())
            })
            .sum();
        samples.peak_bytes = samples.peak_bytes.max(bytes);
        if let Ok(free) = store::disk::available(layout.root()) {
            samples.min_free = samples.min_free.min(free);
        }
        std::thread::sleep(SAMPLE_EVERY);
    }
    Ok(samples)
}

/// The neighbour's requests during the flood, each waited for: submit to `succeeded`.
fn neighbour_latencies(
    done: &AtomicBool,
    client: &client::NodeClient,
    account: &str,
) -> anyhow::Result<Summary> {
    let mut latencies = Vec::new();
    let mut n = 0;
    while !done.load(Ordering::Relaxed) {
        n += 1;
        let rid = node::id(0xf5, n);
        let t0 = Instant::now();
        let body = node::remove_key(&rid, &node::id(0xf6, n), account);
        let view = client.submit(&body)?;
        let mut state = view.state;
        while !matches!(
            state,
            JobState::Succeeded | JobState::Failed | JobState::Superseded
        ) {
            if t0.elapsed() > BOUND {
                bail!("the neighbour's job {rid} did not end");
            }
            std::thread::sleep(Duration::from_millis(5));
            state = client.job(&rid)?.state;
        }
        if state != JobState::Succeeded {
            bail!("the neighbour's job {rid} ended {state:?}");
        }
        latencies.push(t0.elapsed());
        std::thread::sleep(NEIGHBOUR_EVERY.saturating_sub(t0.elapsed()));
    }
    Ok(stats::summarize(latencies))
}
