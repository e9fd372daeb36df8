//! The API's binaries: the packaged `layerone-api` (`src/bin/layerone-api.rs`) and the dev
//! node's `layerone-dev-api`, one command line and one start, differing only in whether the
//! process may run as root ([`AsRoot`]).
//!
//! Parses flags, refuses to run as root unless allowed, and serves until SIGTERM or SIGINT.
//! In a fleet, the fleet daemon (`fleet_daemon`) runs beside it with the same admission.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use registry::Hex32;

use crate::{ApiConfig, Limits};

/// The layerone node's HTTPS API. Validates requests, writes them to its inbox for the runner,
/// and answers reads from the runner's state database (read-only).
#[derive(Debug, Parser)]
#[command(name = "layerone-api", version)]
pub struct Args {
    /// The node's data directory (holds inbox/, state/ and blobs/).
    #[arg(long, value_name = "DIR")]
    data_dir: PathBuf,
    /// The address and port to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8443")]
    listen: SocketAddr,
    /// The TLS certificate chain (PEM, end-entity first).
    #[arg(long, value_name = "PEM")]
    tls_cert: PathBuf,
    /// The TLS private key (PEM).
    #[arg(long, value_name = "PEM")]
    tls_key: PathBuf,
    /// A file holding the hex SHA-256 of the API key (the key itself is never on the node).
    #[arg(long, value_name = "FILE")]
    api_key_sha256_file: PathBuf,
    /// This node's id (32 lowercase hex digits); node-scope requests must name it.
    #[arg(long, value_name = "HEX32")]
    node_id: Hex32,
    /// The node's configuration file: its `[api]` table sets the front door's limits (the
    /// connection caps, per source and in all, the deadlines, the allowlist of source
    /// networks); the flags below override it.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Requests per second allowed from one client address (0: no limit).
    #[arg(long, value_name = "N", default_value_t = Limits::default().rate_per_sec)]
    rate_per_sec: u32,
    /// Requests one client address may send in a burst.
    #[arg(long, value_name = "N", default_value_t = Limits::default().burst)]
    rate_burst: u32,
    /// Connections through their TLS handshake open at once; one over the cap is closed at
    /// once (default: the configuration file's `api.max_connections`, else 1024).
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
    /// Also serve the API on this unix socket, for operators on the machine (`layerone mcp`):
    /// mode 0660 in the group of its directory (the operators' group), each connection admitted
    /// by its peer credentials (root or a member of that group), no key.
    #[arg(long, value_name = "PATH")]
    local_socket: Option<PathBuf>,
    /// The node's fleet identity (`layerone join` writes it): while it is absent, the node is
    /// on its own; once it appears, the fleet daemon runs in this process.
    #[arg(long, value_name = "DIR", default_value = "/etc/layerone/fleet")]
    fleet_dir: PathBuf,
    /// How often the fleet daemon heartbeats, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    fleet_heartbeat_ms: u64,
}

/// Whether the process may run as root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsRoot {
    /// The packaged `layerone-api`: the API is the unprivileged side of the node, so as root
    /// it refuses to start (running it as root would let a bug in it write root's state).
    Refuse,
    /// The dev node's `layerone-dev-api`, for development and the benchmark, which the
    /// packages do not ship.
    Allow,
}

/// Runs an API binary: parses the command line, refuses root unless `as_root` allows it, and
/// serves until SIGTERM or SIGINT (with the fleet daemon beside it once the node has a fleet
/// identity).
pub fn main(as_root: AsRoot) -> ExitCode {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    if rustix::process::geteuid().is_root() && as_root == AsRoot::Refuse {
        eprintln!(
            "layerone-api: refusing to run as root. The API is the unprivileged side of the node: run it as the \
             layerone-api user."
        );
        return ExitCode::from(2);
    }
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("layerone-api: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    let hash_text = std::fs::read_to_string(&args.api_key_sha256_file)
        .with_context(|| format!("reading {}", args.api_key_sha256_file.display()))?;
    let key_sha256 = crate::parse_key_sha256(&hash_text)
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("parsing {}", args.api_key_sha256_file.display()))?;
    let daemon = fleet_daemon::DaemonConfig {
        identity: fleet::identity::IdentityDir(args.fleet_dir),
        state_dir: store::Layout::new(&args.data_dir).fleet_dir(),
        heartbeat: std::time::Duration::from_millis(args.fleet_heartbeat_ms.max(100)),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        platform: "linux".to_owned(),
    };
    let front_door = match &args.config {
        None => crate::FrontDoor::default(),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            crate::FrontDoor::from_config_file(&text)
                .with_context(|| format!("in {}", path.display()))?
        }
    };
    // Checked as it was parsed: this applies what passed.
    let limits = front_door.limits(Limits::default())?;
    let config = ApiConfig {
        data_dir: args.data_dir,
        listen: args.listen,
        tls_cert: args.tls_cert,
        tls_key: args.tls_key,
        key_sha256,
        node_id: args.node_id,
        local_socket: match args.local_socket {
            None => None,
            Some(path) => Some(crate::LocalSocket {
                operators: crate::Operators::of_directory(&path)?,
                path,
            }),
        },
        limits: Limits {
            rate_per_sec: args.rate_per_sec,
            burst: args.rate_burst,
            max_connections: args.max_connections.unwrap_or(limits.max_connections),
            ..limits
        },
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let running = crate::start(config).await?;
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let daemon = tokio::spawn(fleet_daemon::supervise(running.gate(), daemon, stopped));
        shutdown_signal().await;
        tracing::info!("stopping");
        stop.send_replace(true);
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), daemon).await;
        running.stop().await
    })
}

/// Resolves on SIGTERM (systemd's stop) or SIGINT.
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot listen for SIGTERM; stopping on SIGINT only");
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
