//! The measurements: the disk's limit, admission, latencies over HTTPS, end to end, runner
//! throughput and idle cost. Every loop is bounded in count and in time.

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use registry::JobState;

use crate::child::{self, Usage};
use crate::node::{self, Node};
use crate::stats::{Summary, summarize};
use crate::sys;

// ----------------------------------------------------------------------------- the limit

#[derive(Clone, Copy, Debug)]
pub struct Limit {
    pub wal_per_s: f64,
    pub delete_per_s: f64,
    /// Commits made in rollback-journal mode, and how far the file change counter moved:
    /// equal when the counter is an honest commit count.
    pub counter_check: (u64, u64),
}

/// Single-row durable commits per second of a bare rusqlite loop, in the inbox's mode (WAL,
/// synchronous FULL) and in state.db's (rollback journal DELETE, synchronous FULL).
pub fn limit(dir: &Path, time: Duration, max: u64) -> anyhow::Result<Limit> {
    let run = |name: &str, journal: &str| -> anyhow::Result<(f64, u64, u64)> {
        let path = dir.join(name);
        let conn = rusqlite::Connection::open(&path)?;
        conn.pragma_update(None, "journal_mode", journal)?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB NOT NULL)")?;
        let body = vec![7u8; 200];
        let before = node::commit_counter(&path)?;
        let mut insert = conn.prepare("INSERT INTO t (v) VALUES (?1)")?;
        let started = Instant::now();
        let mut n = 0;
        while n < max && started.elapsed() < time {
            insert.execute([&body])?;
            n += 1;
        }
        let rate = n as f64 / started.elapsed().as_secs_f64();
        let after = node::commit_counter(&path)?;
        Ok((rate, n, u64::from(after.wrapping_sub(before))))
    };
    let (wal_per_s, _, _) = run("limit-wal.db", "WAL")?;
    let (delete_per_s, commits, counted) = run("limit-delete.db", "DELETE")?;
    Ok(Limit {
        wal_per_s,
        delete_per_s,
        counter_check: (commits, counted),
    })
}

// ----------------------------------------------------------------------------- admission

#[derive(Clone, Copy, Debug)]
pub struct Admission {
    pub clients: usize,
    pub accepted: u64,
    pub refused: u64,
    pub per_s: f64,
    pub latency: Summary,
    /// TCP+TLS connections the clients opened: one each when keep-alive works.
    pub connections: u64,
}

/// `clients` concurrent clients, each on its own keep-alive connection, submit new
/// `ensure_account` requests for at most `time` or `max` requests in all. A request counts
/// as accepted on a 202 whose job is `received` (the API answers it after the inbox COMMIT).
pub fn admission(
    node: &Node,
    clients: usize,
    time: Duration,
    max: u64,
    next_id: &Arc<AtomicU64>,
) -> anyhow::Result<Admission> {
    let barrier = Arc::new(Barrier::new(clients + 1));
    let issued = Arc::new(AtomicU64::new(0));
    let mut threads = Vec::new();
    for _ in 0..clients {
        let client = node.client()?;
        // The handshake happens here, before the clock starts: keep-alive is what is measured.
        client.health().context("warm a connection")?;
        let (barrier, issued, next_id) = (barrier.clone(), issued.clone(), next_id.clone());
        threads.push(std::thread::spawn(move || {
            let mut latencies = Vec::new();
            let mut refused = 0u64;
            barrier.wait();
            let started = Instant::now();
            while started.elapsed() < time && issued.fetch_add(1, Ordering::Relaxed) < max {
                let n = next_id.fetch_add(1, Ordering::Relaxed);
                let body = node::ensure_account(
                    &node::id(0xad, n),
                    &node::id(0xac, n),
                    &format!("a{n:x}"),
                );
                let bytes = serde_json::to_vec(&body).expect("JSON serializes");
                let t0 = Instant::now();
                let resp = client.request("POST", "/v1/jobs", Some(&bytes), &[]);
                let elapsed = t0.elapsed();
                match resp {
                    Ok(r)
                        if r.status == 202 && r.json().is_ok_and(|v| v["state"] == "received") =>
                    {
                        latencies.push(elapsed)
                    }
                    _ => refused += 1,
                }
            }
            (latencies, refused, client.connections_opened())
        }));
    }
    barrier.wait();
    let started = Instant::now();
    let mut all = Vec::new();
    let mut refused = 0;
    let mut connections = 0;
    for t in threads {
        let (l, r, c) = t
            .join()
            .map_err(|_| anyhow::anyhow!("a client thread panicked"))?;
        all.extend(l);
        refused += r;
        connections += c;
    }
    let wall = started.elapsed();
    Ok(Admission {
        clients,
        accepted: all.len() as u64,
        refused,
        per_s: all.len() as f64 / wall.as_secs_f64(),
        latency: summarize(all),
        connections,
    })
}

// ----------------------------------------------------------------------------- reads

/// `GET /v1/jobs/{id}` of existing jobs, one client, sequentially.
pub fn lookups(node: &Node, ids: &[String], time: Duration, max: usize) -> anyhow::Result<Summary> {
    let client = node.client()?;
    client.health()?;
    let mut samples = Vec::new();
    let started = Instant::now();
    for id in ids.iter().cycle().take(max) {
        if started.elapsed() > time {
            break;
        }
        let t0 = Instant::now();
        let view = client.job(id)?;
        samples.push(t0.elapsed());
        if view.request_id != *id {
            bail!("asked for job {id}, got {}", view.request_id);
        }
    }
    Ok(summarize(samples))
}

/// `GET /v1/events?after=…&wait=0&limit=10` near the head of the feed, one client,
/// sequentially: pages of the same size whatever the feed's length.
pub fn events(node: &Node, time: Duration, max: usize) -> anyhow::Result<Summary> {
    let last: i64 =
        node.state_ro()?
            .query_row("SELECT coalesce(max(cursor), 0) FROM events", [], |r| {
                r.get(0)
            })?;
    let after = (last - 10).max(0);
    let client = node.client()?;
    client.health()?;
    let mut samples = Vec::new();
    let started = Instant::now();
    while samples.len() < max && started.elapsed() < time {
        let t0 = Instant::now();
        let page = client.events(after, 0, 10)?;
        samples.push(t0.elapsed());
        if page.events.is_empty() {
            bail!("the events feed is empty after {after}");
        }
    }
    Ok(summarize(samples))
}

// ----------------------------------------------------------------------------- end to end

#[derive(Clone, Copy, Debug)]
pub struct EndToEnd {
    /// How many jobs ran (their request ids are `node::id(tag, 1..=jobs)`).
    pub jobs: usize,
    /// From sending the request to reading its `succeeded` event on the feed.
    pub visible: Summary,
    /// The 202 alone.
    pub accepted: Summary,
}

/// Sequential trivial jobs on a node with the API and the watching runner: each is submitted,
/// then the events feed is long-polled until the job's `succeeded` event is read.
pub fn end_to_end(node: &Node, count: usize, time: Duration, tag: u32) -> anyhow::Result<EndToEnd> {
    let client = node.client()?;
    client.health()?;
    let mut cursor = client.events(0, 0, 1)?.next;
    // Start from the head of the feed.
    loop {
        let page = client.events(cursor, 0, 1000)?;
        if page.events.is_empty() {
            break;
        }
        cursor = page.next;
    }
    let account = node::id(tag, 0);
    let (mut visible, mut accepted) = (Vec::new(), Vec::new());
    let started = Instant::now();
    for i in 1..=count as u64 {
        if started.elapsed() > time {
            break;
        }
        let rid = node::id(tag, i);
        let body = node::remove_key(&rid, &node::id(tag + 1, i), &account);
        let bytes = serde_json::to_vec(&body)?;
        let t0 = Instant::now();
        let resp = client.request("POST", "/v1/jobs", Some(&bytes), &[])?;
        accepted.push(t0.elapsed());
        if resp.status != 202 {
            bail!("submit answered {}", resp.status);
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        'wait: loop {
            let page = client.events(cursor, 5, 1000)?;
            cursor = page.next;
            for e in &page.events {
                if e.request_id.as_deref() == Some(rid.as_str()) {
                    match e.state {
                        Some(JobState::Succeeded) => break 'wait,
                        Some(JobState::Failed | JobState::Superseded) => {
                            bail!("the trivial job {rid} ended {:?}", e.state)
                        }
                        _ => {}
                    }
                }
            }
            if Instant::now() > deadline {
                bail!("job {rid} did not succeed within 20 s");
            }
        }
        visible.push(t0.elapsed());
    }
    Ok(EndToEnd {
        jobs: visible.len(),
        visible: summarize(visible),
        accepted: summarize(accepted),
    })
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Purge {
    pub total: Duration,
    /// Programs the job ran (Sim models of userdel, apachectl...) and their summed wall time,
    /// from the provider's audit log.
    pub programs: usize,
    pub programs_ms: u64,
}

/// Creates an account with `keys` SSH keys and `domains` web domains through the API and the
/// watching runner, then times `remove_account` from submission to its `succeeded` event.
pub fn purge(node: &Node, tag: u32, keys: u64, domains: u64) -> anyhow::Result<Purge> {
    let client = node.client()?;
    let account = node::id(tag, 0);
    let mut bodies = vec![node::ensure_account(
        &node::id(tag + 1, 0),
        &account,
        &format!("p{tag:x}"),
    )];
    for k in 1..=keys {
        bodies.push(node::ensure_key(
            &node::id(tag + 1, k),
            &node::id(tag + 2, k),
            &account,
        ));
    }
    for d in 1..=domains {
        bodies.push(node::ensure_domain(
            &node::id(tag + 1, 100 + d),
            &node::id(tag + 3, d),
            &account,
            &format!("d{d}.p{tag:x}.example.com"),
        ));
    }
    for body in &bodies {
        let view = client.submit(body)?;
        let done = client.wait(&view.request_id, Duration::from_secs(60))?;
        if done.state != JobState::Succeeded {
            bail!(
                "setting up the purge: {} ended {:?}",
                view.request_id,
                done.error
            );
        }
    }
    let since = testkit::audit_records(&node.provider)?.len();
    let t0 = Instant::now();
    let view = client.submit(&node::remove_account(&node::id(tag + 1, 999), &account))?;
    let done = client.wait(&view.request_id, Duration::from_secs(120))?;
    let total = t0.elapsed();
    if done.state != JobState::Succeeded {
        bail!("remove_account ended {:?}: {:?}", done.state, done.error);
    }
    let records = testkit::audit_records(&node.provider)?;
    let ran = records.get(since..).unwrap_or_default();
    Ok(Purge {
        total,
        programs: ran.len(),
        programs_ms: ran.iter().map(|r| r.ms).sum(),
    })
}

// ----------------------------------------------------------------------------- runner

#[derive(Clone, Copy, Debug)]
pub struct Throughput {
    pub jobs: usize,
    pub applied: i64,
    pub pass: Usage,
    pub per_s: f64,
    pub commits: u32,
    pub commits_per_job: f64,
    /// fsync + fdatasync calls per job in a second, smaller pass under strace.
    pub syncs_per_job: Option<f64>,
    pub strace_jobs: usize,
}

fn succeeded(node: &Node) -> anyhow::Result<i64> {
    Ok(node.state_ro()?.query_row(
        "SELECT count(*) FROM jobs WHERE state = 'succeeded'",
        [],
        |r| r.get(0),
    )?)
}

/// Queues `jobs` trivial jobs, runs one `--once` pass, and counts what it applied and the
/// commits it made on state.db; then the same for `strace_jobs` jobs under `strace -f -c`.
pub fn throughput(node: &Node, jobs: usize, strace_jobs: usize) -> anyhow::Result<Throughput> {
    let account = node::id(0x7a, 0);
    let bodies = |tag: u32, n: usize| {
        let account = account.clone();
        (1..=n as u64)
            .map(move |i| node::remove_key(&node::id(tag, i), &node::id(tag + 1, i), &account))
    };
    node.queue(bodies(0x70, jobs))?;
    let before = (node.state_commits()?, succeeded(node)?);
    let args = node.once_args();
    let args: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
    let pass = child::measure(node.runner(), &args)?;
    let after = (node.state_commits()?, succeeded(node)?);
    let applied = after.1 - before.1;
    let commits = after.0.wrapping_sub(before.0);

    node.queue(bodies(0x72, strace_jobs))?;
    let syncs = child::count_syncs(node.runner(), &args, &node.dir)?;
    Ok(Throughput {
        jobs,
        applied,
        pass,
        per_s: applied as f64 / pass.wall.as_secs_f64(),
        commits,
        commits_per_job: f64::from(commits) / applied.max(1) as f64,
        syncs_per_job: syncs.map(|s| s as f64 / strace_jobs as f64),
        strace_jobs,
    })
}

// ----------------------------------------------------------------------------- idle

#[derive(Clone, Copy, Debug)]
pub struct IdleOnce {
    pub runs: usize,
    pub wall_mean: Duration,
    pub wall_min: Duration,
    pub cpu_mean: Duration,
    pub rss_mean_kib: u64,
    pub rss_max_kib: u64,
    pub floor_kib: u64,
    pub commits: u32,
}

/// `layerone-runner --once` with nothing to do, `runs` times.
pub fn idle_once(node: &Node, runs: usize) -> anyhow::Result<IdleOnce> {
    let args = node.once_args();
    let args: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
    // One pass first, so what follows finds truly nothing to do.
    child::measure(node.runner(), &args)?;
    let before = node.state_commits()?;
    let mut usages = Vec::new();
    for _ in 0..runs {
        usages.push(child::measure(node.runner(), &args)?);
    }
    let commits = node.state_commits()?.wrapping_sub(before);
    let n = usages.len() as u32;
    Ok(IdleOnce {
        runs: usages.len(),
        wall_mean: usages.iter().map(|u| u.wall).sum::<Duration>() / n,
        wall_min: usages.iter().map(|u| u.wall).min().unwrap_or_default(),
        cpu_mean: usages.iter().map(|u| u.cpu).sum::<Duration>() / n,
        rss_mean_kib: usages.iter().map(|u| u.max_rss_kib).sum::<u64>() / u64::from(n),
        rss_max_kib: usages.iter().map(|u| u.max_rss_kib).max().unwrap_or(0),
        floor_kib: usages.iter().map(|u| u.floor_kib).max().unwrap_or(0),
        commits,
    })
}

#[derive(Clone, Copy, Debug)]
pub struct IdleProcess {
    pub rss_kib: u64,
    pub cpu: Duration,
    pub wakeups: u64,
    pub window: Duration,
}

/// The RSS of a running process, and the CPU time and context switches it spends over
/// `window` while nothing is asked of it.
pub fn idle_process(pid: u32, window: Duration) -> anyhow::Result<IdleProcess> {
    let (cpu0, sw0) = sys::cpu_and_switches(pid);
    std::thread::sleep(window);
    let (cpu1, sw1) = sys::cpu_and_switches(pid);
    Ok(IdleProcess {
        rss_kib: sys::status_kib(pid, "VmRSS:").context("read VmRSS")?,
        cpu: cpu1.saturating_sub(cpu0),
        wakeups: sw1.saturating_sub(sw0),
        window,
    })
}
