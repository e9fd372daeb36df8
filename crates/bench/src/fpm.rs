//! `layerone-bench fpm [TENANTS]`: what a PHP-FPM master per tenant costs against one shared
//! master per PHP version, on this machine's real PHP-FPM 8.2 (Debian's `php8.2-fpm`, as
//! root). The same pools, rendered by the node's own renderer (`ops::php::pool::render_pool`,
//! `pm = ondemand`, so an idle pool has no child), are run both ways in turn: all of them as
//! sections of one master, then each as the whole configuration of a master of its own, as
//! `php8.2-fpm@<uid>.service` runs it. Each arrangement is measured once every pool's socket
//! is up and the masters have settled: the masters' resident and proportional set sizes
//! (`/proc/PID/smaps_rollup`: PSS shares each page among the processes that map it, so the
//! sum of PSS is what the masters cost together), `MemAvailable`'s drop, and the time to
//! start. Printed, never asserted (docs/benchmarks.md).

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use ops::account::AccountInfo;
use ops::php::pool::{PoolLimits, render_pool};
use registry::Hex32;
use registry::types::{PhpOptions, PhpVersion};

use crate::child;

const FPM: &str = "/usr/sbin/php-fpm8.2";
/// The uid the pools run as: `nobody`, which every Debian has.
const POOL_UID: u32 = 65534;
const SETTLE: Duration = Duration::from_secs(3);

/// One arrangement's figures.
struct Figures {
    masters: usize,
    started: Duration,
    rss_kib: u64,
    pss_kib: u64,
    available_drop_kib: i64,
}

pub fn run(dir: &Path, tenants: usize) -> anyhow::Result<()> {
    // SAFETY: geteuid(2) takes nothing and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        bail!("run as root: the FPM masters bind their pools' sockets and become the pools' user");
    }
    if !Path::new(FPM).exists() {
        bail!("{FPM} is missing: install php8.2-fpm");
    }
    println!(
        "PHP-FPM 8.2, {tenants} idle tenants (pm = ondemand: no child until a request), {} cores",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let shared = measure(dir, tenants, false)?;
    let own = measure(dir, tenants, true)?;
    for (name, f) in [
        ("one shared master", &shared),
        ("a master per tenant", &own),
    ] {
        println!(
            "{name:<22} {:>5} master(s): RSS {:>8} KiB, PSS {:>8} KiB, MemAvailable -{:>8} KiB, started in {:.2} s",
            f.masters,
            f.rss_kib,
            f.pss_kib,
            f.available_drop_kib,
            f.started.as_secs_f64()
        );
    }
    let per = |v: u64| v as f64 / own.masters.max(1) as f64;
    println!(
        "a tenant's own master, idle: RSS {:.0} KiB, PSS {:.0} KiB; {tenants} tenants cost {:.1} MiB of PSS more than one shared master",
        per(own.rss_kib),
        per(own.pss_kib),
        (own.pss_kib as f64 - shared.pss_kib as f64) / 1024.0
    );
    Ok(())
}

/// Starts the arrangement, measures it, stops it.
fn measure(dir: &Path, tenants: usize, own_masters: bool) -> anyhow::Result<Figures> {
    let dir = dir.join(if own_masters { "own" } else { "shared" });
    std::fs::create_dir_all(dir.join("run"))?;
    let pools: Vec<(String, PathBuf)> = (0..tenants)
        .map(|i| {
            let socket = dir.join("run").join(format!("t{i}.sock"));
            (pool(i, &socket, own_masters), socket)
        })
        .collect();
    let mut configs = Vec::new();
    if own_masters {
        for (i, (text, _)) in pools.iter().enumerate() {
            let conf = dir.join(format!("{i}.conf"));
            std::fs::write(&conf, text)?;
            configs.push(conf);
        }
    } else {
        let mut text = format!(
            "[global]\nerror_log = {}\ndaemonize = no\n",
            dir.join("fpm.log").display()
        );
        for (pool, _) in &pools {
            text.push_str(pool);
        }
        let conf = dir.join("fpm.conf");
        std::fs::write(&conf, text)?;
        configs.push(conf);
    }
    let before = mem_available_kib()?;
    let began = Instant::now();
    let mut masters: Vec<Child> = Vec::new();
    let result = (|| {
        for conf in &configs {
            masters.push(child::start(
                Path::new(FPM),
                &["-F".as_ref(), "-y".as_ref(), conf.as_os_str()],
                &conf.with_extension("log"),
            )?);
        }
        let deadline = Instant::now() + Duration::from_secs(120);
        for (_, socket) in &pools {
            while !socket.exists() {
                if Instant::now() > deadline {
                    bail!("{} did not appear in 120 s", socket.display());
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let started = began.elapsed();
        std::thread::sleep(SETTLE);
        let (mut rss_kib, mut pss_kib) = (0, 0);
        for master in &masters {
            let (rss, pss) = rollup(master.id())?;
            rss_kib += rss;
            pss_kib += pss;
        }
        Ok(Figures {
            masters: masters.len(),
            started,
            rss_kib,
            pss_kib,
            available_drop_kib: before as i64 - mem_available_kib()? as i64,
        })
    })();
    for master in &mut masters {
        child::stop(master, Duration::from_secs(10));
    }
    result
}

/// Tenant `i`'s pool as the node renders it: the whole configuration of its own master, or
/// its section of the shared one.
fn pool(i: usize, socket: &Path, own_master: bool) -> String {
    let account: Hex32 = format!("{i:032x}").parse().expect("32 hex digits");
    let info = AccountInfo {
        username: "nobody".into(),
        uid: POOL_UID,
        gid: POOL_UID,
        home: "/nonexistent".into(),
    };
    let options = PhpOptions::default();
    render_pool(
        &account,
        &info,
        Path::new("/nonexistent"),
        socket,
        PhpVersion::V8_2,
        &options,
        PoolLimits::derive(None, &options),
        own_master,
    )
}

/// `Rss` and `Pss` of a process, in KiB, from `/proc/PID/smaps_rollup`.
fn rollup(pid: u32) -> anyhow::Result<(u64, u64)> {
    let path = format!("/proc/{pid}/smaps_rollup");
    let text = std::fs::read_to_string(&path).with_context(|| format!("read {path}"))?;
    let field = |name: &str| -> anyhow::Result<u64> {
        text.lines()
            .find_map(|l| {
                l.strip_prefix(name)?
                    .trim()
                    .strip_suffix("kB")?
                    .trim()
                    .parse()
                    .ok()
            })
            .with_context(|| format!("{path} has no {name}"))
    };
    Ok((field("Rss:")?, field("Pss:")?))
}

/// `MemAvailable` from `/proc/meminfo`, in KiB.
fn mem_available_kib() -> anyhow::Result<u64> {
    let text = std::fs::read_to_string("/proc/meminfo")?;
    text.lines()
        .find_map(|l| {
            l.strip_prefix("MemAvailable:")?
                .trim()
                .strip_suffix("kB")?
                .trim()
                .parse()
                .ok()
        })
        .context("/proc/meminfo has no MemAvailable")
}
