//! `layerone-bench`: measures a dev node against the physical limit of its disk, in one run.
//!
//! It drives the real release binaries (`layerone-api`, and the runner code as
//! `layerone-sim-runner` on the simulator) on dev nodes in a temporary directory, and prints,
//! with the machine's cores and the disk under that directory: the disk's durable commit rate
//! in the inbox's and
//! state.db's modes; admission over HTTPS with keep-alive at 1, 16 and 64 clients; end-to-end
//! latency of a trivial job through the watching runner; the runner's throughput and commits
//! per job; the idle cost of a pass and of the two services; and all of it again on a node
//! with 10,000 accounts and 100,000 resources. `layerone-bench fleet` measures the fleet
//! instead, against a real nats-server (`fleet`); `layerone-bench simulate` runs the
//! deterministic simulation's histories at scale (`simulate`); `layerone-bench attack` the
//! front door under one abusive source (`attack`); `layerone-bench soak` 64 clients for a
//! minute (`soak`); `layerone-bench flood` one account's flood against the queue caps
//! (`flood`); `layerone-bench fpm` a PHP-FPM master per tenant against one shared master
//! (`fpm`); `layerone-bench probe` one site's latency as its visitors see it (`probe`, run on
//! the real node by the qualification while a neighbour attacks its limits). See docs/benchmarks.md for the figures and what limits them. Nothing here is a test: the figures are printed, never asserted.

mod attack;
mod child;
mod fleet;
mod flood;
mod fpm;
mod measure;
mod node;
mod probe;
mod scale;
mod simulate;
mod soak;
mod stats;
mod sys;

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use measure::{Admission, IdleOnce, IdleProcess};
use node::{Bins, Node};
use stats::{Summary, ms};

const CLIENTS: [usize; 3] = [1, 16, 64];
const PHASE: Duration = Duration::from_secs(3);
const PHASE_MAX: u64 = 30_000;
const E2E_JOBS: usize = 200;
const READS: usize = 500;
const IDLE_WINDOW: Duration = Duration::from_secs(3);
const ONCE_RUNS: usize = 10;
const PURGE_KEYS: u64 = 6;
const PURGE_DOMAINS: u64 = 3;
const MIX: scale::Mix = scale::Mix {
    accounts: 10_000,
    keys_per_account: 6,
    domains_per_account: 3,
};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--measure-child") {
        return child::measure_child_main(&args[1..]);
    }
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] => run(),
        ["fleet"] => in_temp_dir(fleet::run),
        // Stage 2c of `fleet`, which runs it in a mount namespace of its own.
        ["fleet-reconnect", dir] => fleet::reconnect_in_namespace(std::path::Path::new(dir)),
        ["attack"] => in_temp_dir(|dir| attack::run(dir, 20)),
        ["attack", seconds] => match seconds.parse::<u64>() {
            Ok(s) if (1..=600).contains(&s) => in_temp_dir(|dir| attack::run(dir, s)),
            _ => {
                eprintln!("layerone-bench attack [SECONDS]: SECONDS is 1 to 600");
                return ExitCode::from(2);
            }
        },
        ["flood"] => in_temp_dir(|dir| flood::run(dir, 200_000)),
        ["flood", requests] => match requests.parse::<u64>() {
            Ok(n) if (1..=10_000_000).contains(&n) => in_temp_dir(|dir| flood::run(dir, n)),
            _ => {
                eprintln!("layerone-bench flood [REQUESTS]: REQUESTS is 1 to 10000000");
                return ExitCode::from(2);
            }
        },
        ["fpm"] => in_temp_dir(|dir| fpm::run(dir, 500)),
        ["fpm", tenants] => match tenants.parse::<usize>() {
            Ok(n) if (1..=2000).contains(&n) => in_temp_dir(|dir| fpm::run(dir, n)),
            _ => {
                eprintln!("layerone-bench fpm [TENANTS]: TENANTS is 1 to 2000");
                return ExitCode::from(2);
            }
        },
        ["probe", host, path, seconds] => match seconds.parse::<u64>() {
            Ok(s) if (1..=600).contains(&s) => probe::run(host, path, s),
            _ => {
                eprintln!("layerone-bench probe HOST PATH SECONDS: SECONDS is 1 to 600");
                return ExitCode::from(2);
            }
        },
        ["simulate", ref rest @ ..] => in_temp_dir(|dir| simulate::run(rest, dir)),
        ["soak"] => in_temp_dir(|dir| soak::run(dir, 60)),
        ["soak", seconds] => match seconds.parse::<u64>() {
            Ok(s) if (1..=3600).contains(&s) => in_temp_dir(|dir| soak::run(dir, s)),
            _ => {
                eprintln!("layerone-bench soak [SECONDS]: SECONDS is 1 to 3600");
                return ExitCode::from(2);
            }
        },
        _ => {
            eprintln!(
                "usage: cargo build --release --workspace --bins && target/release/layerone-bench [fleet | attack [SECONDS] | soak [SECONDS] | flood [REQUESTS] | fpm [TENANTS] | probe HOST PATH SECONDS | simulate [--histories N] [--minutes M] [--first S] [--seed S]]\n\
                 Prints the node's figures of docs/benchmarks.md in one run (about two minutes);\n\
                 `fleet`: the fleet's figures instead, against {} (about four minutes);\n\
                 `attack`: one abusive source against the front door, 20 s (or SECONDS) per attack;\n\
                 `soak`: 64 clients of mixed operations for 60 s (or SECONDS), then every 202 checked final;\n\
                 `flood`: one account's 200,000 requests (or REQUESTS) against the queue caps, another's latency meanwhile;\n\
                 `fpm`: 500 (or TENANTS) idle tenants' PHP-FPM pools in one shared master, then a master each (as root);\n\
                 `probe`: GET http://HOST/PATH on 127.0.0.1:80 for SECONDS, one new connection per request;\n\
                 `simulate`: the deterministic simulation's histories (10,000 unless told), or with\n\
                 --seed the one history of that seed and its trace hash.",
                fleet::NATS_SERVER
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("layerone-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The node-level figures measured twice: on an empty node and at scale.
#[derive(Default)]
struct NodeFigures {
    admission: Vec<Admission>,
    e2e: Option<measure::EndToEnd>,
    lookups: Summary,
    events: Summary,
    purge: measure::Purge,
    once: Option<IdleOnce>,
    api_idle: Option<IdleProcess>,
    watch_idle: Option<IdleProcess>,
}

/// Runs `f` in a fresh temporary directory, removed afterwards unless LAYERONE_BENCH_KEEP is
/// set (it keeps the nodes, their logs, databases and sysroots, for a look or a profile).
fn in_temp_dir(f: impl FnOnce(&std::path::Path) -> anyhow::Result<()>) -> anyhow::Result<()> {
    let top = tempfile::Builder::new()
        .prefix("layerone-bench-")
        .tempdir()?;
    let dir = top.path().to_owned();
    let result = f(&dir);
    if std::env::var_os("LAYERONE_BENCH_KEEP").is_some() {
        eprintln!("keeping {}", top.keep().display());
    }
    result
}

fn run() -> anyhow::Result<()> {
    in_temp_dir(run_in)
}

fn run_in(dir: &std::path::Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let bins = Bins::beside_me()?;
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());

    println!("layerone-bench");
    println!("  machine   {cores} cores ({})", sys::cpu_model());
    println!("  disk      {}", sys::disk_of(dir));
    println!("  temp dir  {}", dir.display());
    println!("  load avg  {} (at start)", sys::loadavg());
    println!(
        "  binaries  {}",
        bins.api
            .parent()
            .map_or(String::new(), |p| p.display().to_string())
    );
    println!(
        "  trivial operation: remove_ssh_key of a key of an account the node does not have \
         (reads state.db, starts no program, writes no file)"
    );

    // 1. The limit.
    println!("\n1. The limit: durable single-row commits of a bare rusqlite loop, same disk");
    let limit = measure::limit(dir, Duration::from_secs(2), 5000)?;
    println!(
        "  inbox mode  (WAL, synchronous FULL)                {:8.0} commits/s",
        limit.wal_per_s
    );
    println!(
        "  state mode  (rollback journal DELETE, sync FULL)   {:8.0} commits/s",
        limit.delete_per_s
    );
    println!(
        "  check: {} commits moved the file change counter by {} (the commit count used below)",
        limit.counter_check.0, limit.counter_check.1
    );

    let ids = Arc::new(AtomicU64::new(0));
    let mut empty = NodeFigures::default();
    let mut big = NodeFigures::default();

    // 2. Admission on an empty node.
    println!("\n2. Admission: POST /v1/jobs over HTTPS, keep-alive, 202 after the inbox COMMIT");
    println!(
        "   (ensure_account requests; runner stopped; at most {PHASE:?} or {PHASE_MAX} requests per phase)"
    );
    {
        let mut a = Node::new(&bins, dir, "admission")?;
        // The door's speed, not its caps: the phases queue more than the default total.
        a.start_api_configured(Some("[api]\nqueue_total = 1000000\n"))?;
        for clients in CLIENTS {
            let r = measure::admission(&a, clients, PHASE, PHASE_MAX, &ids)?;
            print_admission(&r, &limit);
            empty.admission.push(r);
        }
        std::thread::sleep(Duration::from_secs(1));
        let burst_idle = Some(measure::idle_process(
            a.api_pid().expect("started"),
            IDLE_WINDOW,
        )?);
        print_idle(
            "layerone-api, idle after the 64-client burst",
            burst_idle.as_ref(),
        );
    }

    // 3. End to end, idle services, reads and purge on an empty node.
    println!(
        "\n3. End to end: submit -> `succeeded` read on GET /v1/events (long-poll), layerone-runner --watch"
    );
    let mut b = Node::new(&bins, dir, "e2e")?;
    b.start_api()?;
    b.start_watch()?;
    let e2e = measure::end_to_end(&b, E2E_JOBS, Duration::from_secs(30), 0xe0)?;
    println!("  submit -> visible   {}", e2e.visible);
    println!("  202 alone           {}", e2e.accepted);
    let e2e_ids: Vec<String> = (1..=e2e.jobs as u64).map(|i| node::id(0xe0, i)).collect();
    empty.lookups = measure::lookups(&b, &e2e_ids, Duration::from_secs(5), READS)?;
    println!("  job lookup          {}", empty.lookups);
    empty.events = measure::events(&b, Duration::from_secs(5), READS)?;
    println!("  events page         {}", empty.events);
    empty.purge = measure::purge(&b, 0xb0, PURGE_KEYS, PURGE_DOMAINS)?;
    print_purge(&empty.purge);
    empty.e2e = Some(e2e);
    std::thread::sleep(Duration::from_secs(1));
    empty.api_idle = Some(measure::idle_process(
        b.api_pid().expect("started"),
        IDLE_WINDOW,
    )?);
    empty.watch_idle = Some(measure::idle_process(
        b.watch_pid().expect("started"),
        IDLE_WINDOW,
    )?);
    drop(b);

    // 4. Runner throughput and the idle pass.
    println!("\n4. Runner throughput: N trivial jobs queued, one `layerone-runner --once` pass");
    let c = Node::new(&bins, dir, "runner")?;
    let n = ((limit.delete_per_s * 2.0) as usize).clamp(200, 3000);
    let t = measure::throughput(&c, n, 100)?;
    let allowed = limit.delete_per_s / t.commits_per_job.max(1.0);
    println!(
        "  {} jobs queued, {} applied in {:.0} ms (process start to exit): {:.0} jobs/s",
        t.jobs,
        t.applied,
        ms(t.pass.wall),
        t.per_s
    );
    println!(
        "  state.db commits: {} = {:.3} per job (ingest included); the limit allows {:.0} jobs/s at that rate: {:.0}% of it",
        t.commits,
        t.commits_per_job,
        allowed,
        100.0 * t.per_s / allowed
    );
    if let Some(s) = t.syncs_per_job {
        println!(
            "  fsync + fdatasync calls per job (strace -f -c, {} jobs): {s:.2}",
            t.strace_jobs
        );
    }
    println!("\n5. Idle cost");
    let once = measure::idle_once(&c, ONCE_RUNS)?;
    print_once("layerone-runner --once, nothing to do", &once);
    empty.once = Some(once);
    drop(c);
    print_idle("layerone-api (idle)", empty.api_idle.as_ref());
    print_idle("layerone-runner --watch (idle)", empty.watch_idle.as_ref());

    // 6. Scale.
    println!(
        "\n6. Scale: {} accounts, {} resources ({} SSH keys and {} web domains per account)",
        MIX.accounts,
        MIX.resources(),
        MIX.keys_per_account,
        MIX.domains_per_account
    );
    let mut d = Node::new(&bins, dir, "scale")?;
    let seeded = Instant::now();
    scale::seed(&d, &MIX)?;
    let (accounts, resources, jobs) = scale::counts(&d)?;
    println!(
        "  seeded by one bulk transaction + sysroot files in {:.1} s: {accounts} accounts, {resources} resources, {jobs} jobs",
        seeded.elapsed().as_secs_f64()
    );
    let once = measure::idle_once(&d, ONCE_RUNS / 2)?;
    print_once("layerone-runner --once, nothing to do", &once);
    big.once = Some(once);
    d.start_api()?;
    d.start_watch()?;
    let e2e = measure::end_to_end(&d, E2E_JOBS, Duration::from_secs(30), 0xe0)?;
    println!("  submit -> visible   {}", e2e.visible);
    big.e2e = Some(e2e);
    big.lookups = measure::lookups(
        &d,
        &scale::some_request_ids(&MIX, READS as u64),
        Duration::from_secs(5),
        READS,
    )?;
    println!("  job lookup          {}", big.lookups);
    big.events = measure::events(&d, Duration::from_secs(5), READS)?;
    println!("  events page         {}", big.events);
    big.purge = measure::purge(&d, 0xb0, PURGE_KEYS, PURGE_DOMAINS)?;
    print_purge(&big.purge);
    std::thread::sleep(Duration::from_secs(1));
    big.api_idle = Some(measure::idle_process(
        d.api_pid().expect("started"),
        IDLE_WINDOW,
    )?);
    big.watch_idle = Some(measure::idle_process(
        d.watch_pid().expect("started"),
        IDLE_WINDOW,
    )?);
    print_idle("layerone-api (idle)", big.api_idle.as_ref());
    print_idle("layerone-runner --watch (idle)", big.watch_idle.as_ref());
    d.stop_watch();
    for clients in CLIENTS {
        let r = measure::admission(&d, clients, PHASE, PHASE_MAX, &ids)?;
        print_admission(&r, &limit);
        big.admission.push(r);
    }
    drop(d);

    print_summary(&limit, &empty, &big, &t, cores);
    println!(
        "\nload avg {} (at end); whole run {:.0} s",
        sys::loadavg(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn print_admission(r: &Admission, limit: &measure::Limit) {
    println!(
        "  {:>2} clients: {:6} accepted, {:6.0} jobs/s = {:5.2} x WAL limit; {}; {} refused; {} connections",
        r.clients,
        r.accepted,
        r.per_s,
        r.per_s / limit.wal_per_s,
        r.latency,
        r.refused,
        r.connections
    );
}

fn print_purge(p: &measure::Purge) {
    println!(
        "  purge one account with {PURGE_KEYS} SSH keys and {PURGE_DOMAINS} web domains: {:.1} ms (submit -> succeeded); {} programs (Sim) took {} ms of it",
        ms(p.total),
        p.programs,
        p.programs_ms
    );
}

fn print_once(what: &str, o: &IdleOnce) {
    println!(
        "  {what}: wall {:.2} ms mean ({:.2} min), CPU {:.2} ms, peak RSS {:.1} MiB mean ({:.1} max; measuring floor {:.1}), {} runs, {} commits",
        ms(o.wall_mean),
        ms(o.wall_min),
        ms(o.cpu_mean),
        o.rss_mean_kib as f64 / 1024.0,
        o.rss_max_kib as f64 / 1024.0,
        o.floor_kib as f64 / 1024.0,
        o.runs,
        o.commits
    );
}

fn print_idle(what: &str, p: Option<&IdleProcess>) {
    if let Some(p) = p {
        println!(
            "  {what}: RSS {:.1} MiB; CPU {:.2} ms over {:?} ({:.3}%), {} wakeups",
            p.rss_kib as f64 / 1024.0,
            ms(p.cpu),
            p.window,
            100.0 * p.cpu.as_secs_f64() / p.window.as_secs_f64(),
            p.wakeups
        );
    }
}

fn print_summary(
    limit: &measure::Limit,
    empty: &NodeFigures,
    big: &NodeFigures,
    t: &measure::Throughput,
    cores: usize,
) {
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
    println!(
        "\nSummary ({cores} cores)                         empty node        at scale      scale/empty"
    );
    for (i, clients) in CLIENTS.iter().enumerate() {
        if let (Some(e), Some(b)) = (empty.admission.get(i), big.admission.get(i)) {
            println!(
                "  admission {clients:>2} clients, jobs/s           {:10.0} {:14.0} {:14.2}",
                e.per_s,
                b.per_s,
                b.per_s / e.per_s
            );
            println!(
                "  admission {clients:>2} clients, p50 / p99 ms     {:5.2} / {:5.2} {:8.2} / {:5.2} {:8.2} / {:4.2}",
                ms(e.latency.p50),
                ms(e.latency.p99),
                ms(b.latency.p50),
                ms(b.latency.p99),
                ratio(b.latency.p50, e.latency.p50),
                ratio(b.latency.p99, e.latency.p99)
            );
        }
    }
    if let (Some(e), Some(b)) = (&empty.e2e, &big.e2e) {
        println!(
            "  end to end, p50 / p99 ms                {:5.2} / {:5.2} {:8.2} / {:5.2} {:8.2} / {:4.2}",
            ms(e.visible.p50),
            ms(e.visible.p99),
            ms(b.visible.p50),
            ms(b.visible.p99),
            ratio(b.visible.p50, e.visible.p50),
            ratio(b.visible.p99, e.visible.p99)
        );
    }
    for (name, e, b) in [
        ("job lookup", empty.lookups, big.lookups),
        ("events page", empty.events, big.events),
    ] {
        println!(
            "  {name:<12} p50 / p99 ms                {:5.2} / {:5.2} {:8.2} / {:5.2} {:8.2} / {:4.2}",
            ms(e.p50),
            ms(e.p99),
            ms(b.p50),
            ms(b.p99),
            ratio(b.p50, e.p50),
            ratio(b.p99, e.p99)
        );
    }
    println!(
        "  purge one account (1+{PURGE_KEYS}+{PURGE_DOMAINS} resources), ms {:10.1} {:14.1} {:14.2}",
        ms(empty.purge.total),
        ms(big.purge.total),
        ratio(big.purge.total, empty.purge.total)
    );
    if let (Some(e), Some(b)) = (&empty.once, &big.once) {
        println!(
            "  --once idle: wall ms / peak RSS MiB     {:5.2} / {:5.1} {:8.2} / {:5.1}",
            ms(e.wall_mean),
            e.rss_mean_kib as f64 / 1024.0,
            ms(b.wall_mean),
            b.rss_mean_kib as f64 / 1024.0
        );
    }
    for (name, e, b) in [
        ("api idle RSS MiB", empty.api_idle, big.api_idle),
        ("watch idle RSS MiB", empty.watch_idle, big.watch_idle),
    ] {
        if let (Some(e), Some(b)) = (e, b) {
            println!(
                "  {name:<20}                  {:10.1} {:14.1}",
                e.rss_kib as f64 / 1024.0,
                b.rss_kib as f64 / 1024.0
            );
        }
    }
    println!(
        "  runner: {:.0} jobs/s, {:.3} state.db commits per job; limits: WAL {:.0}/s, DELETE {:.0}/s",
        t.per_s, t.commits_per_job, limit.wal_per_s, limit.delete_per_s
    );
}
