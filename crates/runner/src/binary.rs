//! The whole life of a runner binary: [`main`], parameterised by how programs run (the
//! executor) and by whether crash points can be armed, so the packaged `layerone-runner`
//! (`src/bin/layerone-runner.rs`: [`main`] with the real executor and no crash-point arming)
//! and the simulated and crash-point runners (`crates/devnode`) run the same
//! code from the same command line ([`RunnerArgs`]); [`main`] acts on this machine
//! ([`RealMachine`]), [`main_on`] on the machine the binary builds (a simulated one).
//!
//! The process starts clean before it parses anything: inherited descriptors beyond stdio are
//! closed, crash points are armed (only where the binary passed a way to arm them; the `state`
//! crate calls its own points directly), and the environment is cleared, so nothing a caller left behind reaches root's work or the programs
//! it runs. Then the root check, on a machine whose changes need root
//! (`Machine::changes_need_root`), and `--once` or `--watch`, on the system clock.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Context as _;
use provider::{Executor, Machine, Platform, Provider, ProviderConfig, RealMachine};
use registry::Hex32;
use store::{ApiIdentity, Layout};

use crate::RunnerConfig;

/// Applies the operations the API admitted into inbox.db to this server.
#[derive(clap::Parser, Debug)]
#[command(name = "layerone-runner", version)]
pub struct RunnerArgs {
    /// The node's data directory (inbox/, state/, blobs/).
    #[arg(long, default_value = "/var/lib/layerone")]
    pub data_dir: PathBuf,
    /// The system root every system path is mapped under: `/` in production.
    #[arg(long, default_value = "/")]
    pub root: PathBuf,
    /// The platform profile: debian or cloudlinux.
    #[arg(long, default_value = "debian")]
    pub platform: Platform,
    /// This node's id: node-scope requests must name it.
    #[arg(long)]
    pub node_id: Hex32,
    /// The API's user (its uid and gid own the inbox and read state.db).
    #[arg(long)]
    pub api_user: Option<String>,
    /// Run one pass, and exit once no long job (a backup, a restore, a usage walk) it
    /// started is still running (for the systemd oneshot service).
    #[arg(long, conflicts_with = "watch")]
    pub once: bool,
    /// Run passes on inbox changes and every 15 s.
    #[arg(long)]
    pub watch: bool,
    /// How long one pass may keep applying jobs, in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    pub budget_ms: u64,
    /// The MariaDB server socket (default: the platform's). Under a simulated runner, makes
    /// the MariaDB operations real against that server (the tests' throw-away one).
    #[arg(long)]
    pub mariadb_socket: Option<PathBuf>,
    /// The log filter (`info`, `warn`, `runner=debug`...).
    #[arg(long, default_value = "info")]
    pub log: String,
}

impl AsRef<RunnerArgs> for RunnerArgs {
    fn as_ref(&self) -> &RunnerArgs {
        self
    }
}

/// Runs a runner binary on this machine ([`RealMachine`]): [`main_on`], with the executor
/// the binary builds from its command line.
pub fn main<A>(
    arm_crash_points: Option<fn()>,
    executor: impl FnOnce(&A) -> anyhow::Result<Arc<dyn Executor>>,
) -> anyhow::Result<()>
where
    A: clap::Parser + AsRef<RunnerArgs>,
{
    main_on(arm_crash_points, |args: &A| {
        Ok(Backend {
            executor: executor(args)?,
            machine: Arc::new(RealMachine),
        })
    })
}

/// How a runner binary's provider reaches the system: the executor its programs run through
/// and the machine it acts on, chosen together by the binary (the real ones, or the
/// simulator's).
pub struct Backend {
    pub executor: Arc<dyn Executor>,
    pub machine: Arc<dyn Machine>,
}

/// Runs a runner binary: starts clean (calling `arm_crash_points` first when given, before
/// the environment is cleared), parses the command line `A` (the shared [`RunnerArgs`],
/// possibly with flags of the binary's own), builds the executor and the machine from it,
/// and runs one pass (`--once`) or the watch. A runner on a machine whose changes need root
/// (`Machine::changes_need_root`: a server) must run as root.
pub fn main_on<A>(
    arm_crash_points: Option<fn()>,
    backend: impl FnOnce(&A) -> anyhow::Result<Backend>,
) -> anyhow::Result<()>
where
    A: clap::Parser + AsRef<RunnerArgs>,
{
    sanitize_process(arm_crash_points);
    let parsed = A::parse();
    let Backend { executor, machine } = backend(&parsed)?;
    let args = parsed.as_ref();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(&args.log))
        .with_writer(std::io::stderr)
        .init();
    if machine.changes_need_root() && !rustix::process::geteuid().is_root() {
        anyhow::bail!("layerone-runner applies changes to the system and must run as root");
    }
    let api = match &args.api_user {
        Some(name) => Some(lookup_api_user(name)?),
        None => None,
    };
    let data_dir = std::path::absolute(&args.data_dir)?;
    let root = std::path::absolute(&args.root)?;
    // Every runner binary runs on the system's time: only an in-process simulation gives
    // the runner a clock of its own.
    let clock = clock::system();
    let config = RunnerConfig {
        layout: Layout::new(&data_dir),
        provider: Arc::new({
            let provider = Provider::new(ProviderConfig {
                platform: args.platform,
                root,
                executor,
                machine,
                audit_dir: data_dir.join("log"),
            })
            .with_clock(clock.clone());
            match &args.mariadb_socket {
                Some(socket) => provider.with_mariadb_socket(std::path::absolute(socket)?),
                None => provider,
            }
        }),
        node_id: args.node_id.clone(),
        budget: Duration::from_millis(args.budget_ms),
        api,
        clock,
        events_kept: crate::steps::EVENTS_KEPT,
    };
    declarations::registry()
        .check_structure()
        .context("the operation registry is inconsistent")?;
    ops::handlers()
        .check(declarations::registry())
        .context("the handlers do not cover the declared operations")?;
    if args.watch {
        let stop = Arc::new(AtomicBool::new(false));
        for signal in [libc::SIGTERM, libc::SIGINT] {
            signal_flag(signal, stop.clone());
        }
        crate::watch::watch(&config, &stop);
        return Ok(());
    }
    let report = crate::run_once(&config)?;
    if !report.failed_steps.is_empty() {
        tracing::warn!(failed_steps = ?report.failed_steps, "pass finished with failed steps");
    }
    Ok(())
}

fn sanitize_process(arm_crash_points: Option<fn()>) {
    // SAFETY: called first thing in main, before any thread exists, so no other code can
    // hold or use these descriptors or read the environment concurrently.
    unsafe {
        libc::close_range(3, u32::MAX, 0);
    }
    if let Some(arm) = arm_crash_points {
        arm();
    }
    let keys: Vec<_> = std::env::vars_os().map(|(k, _)| k).collect();
    for key in keys {
        // SAFETY: still single-threaded (see above).
        unsafe { std::env::remove_var(key) };
    }
}

/// The API user's uid and gid, from the system's passwd.
fn lookup_api_user(name: &str) -> anyhow::Result<ApiIdentity> {
    let passwd = std::fs::read_to_string("/etc/passwd")?;
    passwd
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.len() >= 4 && f[0] == name)
        .and_then(|f| {
            Some(ApiIdentity {
                uid: f[2].parse().ok()?,
                gid: f[3].parse().ok()?,
            })
        })
        .with_context(|| format!("no user {name} in /etc/passwd"))
}

static STOP: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();

extern "C" fn on_signal(_: libc::c_int) {
    if let Some(stop) = STOP.get() {
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

fn signal_flag(signal: libc::c_int, stop: Arc<AtomicBool>) {
    let _ = STOP.set(stop);
    // SAFETY: the handler only does an atomic store, which is async-signal-safe.
    unsafe {
        libc::signal(signal, on_signal as *const () as libc::sighandler_t);
    }
}
