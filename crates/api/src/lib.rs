//! The node's network-facing API (docs/design.md sections 2 and 9): `layerone-api`, run as an
//! unprivileged user.
//!
//! It validates a request through the registry, writes it to its own inbox (group commit, 202
//! only after COMMIT), and answers reads from root's state.db opened read-only. It cannot
//! change the OS and cannot forge a result: it has no write access to state.db, by file
//! ownership, not by code.
//!
//! - [`config`]: what it is started with, and its [`Limits`].
//! - `routes`: the endpoints; `error`: the one status mapping; `auth`: the bearer key;
//!   `limits`: rate limiting and the streamed body cap; `watch`: state change notification
//!   for the events long-poll.
//! - [`RunningApi::gate`]: the same admission (the `admission` crate's) for the fleet
//!   daemon's broker consumer.
//! - `local`: the same routes on a unix socket for operators on the machine, authenticated by
//!   the kernel's peer credentials ([`LocalSocket`], [`Operators`]).
//! - [`tls`]: rustls configuration and the self-signed placeholder certificate.
//!
//! [`start`] binds and returns at once with the bound address (port 0 works), for tests and
//! `layerone-dev`; [`serve`] runs until a shutdown future resolves, for the binary.

mod auth;
pub mod binary;
pub mod config;
mod error;
mod limits;
mod local;
mod routes;
pub mod tls;
mod watch;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use admission::{Admission, Gate};
use anyhow::Context;
use axum_server::tls_rustls::{RustlsAcceptor, RustlsConfig};
use inbox::Inbox;
use store::{Layout, StateReader};
use tokio::task::JoinHandle;

pub use auth::{generate_api_key, key_sha256, parse_key_sha256};
pub use config::{ApiConfig, FrontDoor, FrontDoorError, Limits, Network};
pub use error::ApiError;
pub use local::{LocalSocket, Operators, Peer};

use routes::App;
/// The longest an events long-poll waits (`wait=`): a proxy in front must wait longer.
pub use routes::events::MAX_WAIT_SECS as MAX_EVENTS_WAIT_SECS;

/// How long a graceful stop waits for requests in flight before closing connections.
const GRACE: Duration = Duration::from_secs(5);
/// How often rows root has already admitted are pruned from the inbox, and root's side of the
/// queue read even without a change of its state directory.
const PRUNE_EVERY: Duration = Duration::from_secs(10);
/// The shortest time between two reads of root's side of the queue: a busy runner changes its
/// state directory with every job, and the counts need not follow each.
const BACKLOG_EVERY: Duration = Duration::from_millis(200);

/// A running API: where it listens, and how to stop it.
pub struct RunningApi {
    pub addr: SocketAddr,
    stopper: Stopper,
    server: JoinHandle<std::io::Result<()>>,
    /// The local door's server, when there is one.
    local: Option<JoinHandle<std::io::Result<()>>>,
    background: Vec<JoinHandle<()>>,
    app: Arc<App>,
    writer: std::thread::JoinHandle<()>,
}

impl std::fmt::Debug for RunningApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningApi")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

/// Stops a running API from anywhere (a signal handler, a test). Cheap to clone.
#[derive(Clone)]
pub struct Stopper {
    /// Every door's server.
    servers: axum_server::Control,
    stopping: tokio::sync::watch::Sender<bool>,
}

impl std::fmt::Debug for Stopper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stopper").finish_non_exhaustive()
    }
}

impl Stopper {
    /// Stops accepting connections, ends long-polls early, and lets requests in flight finish
    /// (for a few seconds at most).
    pub fn stop(&self) {
        self.stopping.send_replace(true);
        self.servers.graceful_shutdown(Some(GRACE));
    }
}

impl RunningApi {
    pub fn stopper(&self) -> Stopper {
        self.stopper.clone()
    }

    /// The node's admission and reads, for another door (the fleet daemon).
    pub fn gate(&self) -> Gate {
        Gate::new(
            self.app.admission.clone(),
            self.app.changes.clone(),
            self.app.stopping.subscribe(),
        )
    }

    /// Stops the API and waits until it has.
    pub async fn stop(self) -> anyhow::Result<()> {
        self.stopper.stop();
        self.join().await
    }

    /// Waits until the API has stopped (after [`Stopper::stop`]), then closes the inbox and
    /// waits for its writer thread, so every admitted request is on disk when this returns.
    pub async fn join(self) -> anyhow::Result<()> {
        let served = self.server.await;
        if let Some(local) = self.local {
            match local.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!(error = %e, "the local socket's server failed"),
                Err(e) => tracing::warn!(error = %e, "the local socket's server task failed"),
            }
        }
        for task in &self.background {
            task.abort();
        }
        for task in self.background {
            let _ = task.await;
        }
        match Arc::into_inner(self.app) {
            Some(app) => {
                drop(app);
                let writer = self.writer;
                let _ = tokio::task::spawn_blocking(move || writer.join()).await;
            }
            // A straggling blocking read still holds the state; the writer thread ends when it
            // lets go, and every 202 was already sent after its COMMIT.
            None => tracing::debug!(
                "the API state is still referenced; not waiting for the inbox writer"
            ),
        }
        served
            .context("the server task failed")?
            .context("the server failed")
    }
}

/// Checks the registry, opens the inbox and the state reader, binds `config.listen` and starts
/// serving in the background. Returns once the socket is bound.
pub async fn start(config: ApiConfig) -> anyhow::Result<RunningApi> {
    // Explicit, so nothing in the process can pick another provider by accident; an earlier
    // caller having installed ring already is fine.
    let _ = rustls::crypto::ring::default_provider().install_default();

    let registry = declarations::registry();
    registry
        .check_structure()
        .context("the operation registry is inconsistent; refusing to start")?;

    let layout = Layout::new(&config.data_dir);
    let tls = tls::server_config(&config.tls_cert, &config.tls_key)
        .context("loading the TLS certificate and key")?;
    // Read once: the API serves the certificate it started with until it is restarted.
    let tls_not_after = std::fs::read_to_string(&config.tls_cert)
        .ok()
        .and_then(|pem| tls::not_after(&pem).ok());
    let (inbox, writer) = Inbox::open_capped(&layout.inbox_db(), config.limits.queue)
        .with_context(|| format!("opening {}", layout.inbox_db().display()))?;

    let listener = std::net::TcpListener::bind(config.listen)
        .with_context(|| format!("binding {}", config.listen))?;
    let addr = listener.local_addr().context("reading the bound address")?;

    let (changes, watch_task) = watch::spawn(&layout.state_dir());
    let (stopping, _) = tokio::sync::watch::channel(false);
    let limits = config.limits.clone();
    let admission = Arc::new(Admission::new(
        registry,
        config.node_id.clone(),
        inbox,
        StateReader::new(&layout.state_db()),
    ));
    let app = Arc::new(App {
        admission,
        key_sha256: config.key_sha256,
        layout: layout.clone(),
        changes,
        stopping: stopping.clone(),
        limiter: limits::RateLimiter::new(&limits),
        limits: limits.clone(),
        openapi: std::sync::OnceLock::new(),
        catalogue: std::sync::OnceLock::new(),
        catalogue_sha256: std::sync::OnceLock::new(),
        tls_not_after,
    });

    let servers = axum_server::Control::new();
    let acceptor = limits::Door::new(RustlsAcceptor::new(RustlsConfig::from_config(tls)), &limits);
    let server = axum_server::from_tcp(listener)
        .context("preparing the listener")?
        .acceptor(acceptor)
        .handle(axum_server::Handle::with_control(servers.clone()));
    let service = routes::router(app.clone(), routes::Door::Https)
        .into_make_service_with_connect_info::<SocketAddr>();
    let server = tokio::spawn(http_rules(server, &limits).serve(service));
    let local = match &config.local_socket {
        None => None,
        Some(socket) => {
            let (listener, door) = local::bind(socket, &limits)?;
            let server = axum_server::from_unix(listener)
                .context("preparing the local socket")?
                .acceptor(door)
                .handle(axum_server::Handle::with_control(servers.clone()));
            let service = routes::router(app.clone(), routes::Door::Local).into_make_service();
            tracing::info!(path = %socket.path.display(), "layerone-api listening on the local socket");
            Some(tokio::spawn(http_rules(server, &limits).serve(service)))
        }
    };

    let prune_task = tokio::spawn(follow_root(app.clone()));
    tracing::info!(%addr, node_id = %config.node_id, "layerone-api listening");
    Ok(RunningApi {
        addr,
        stopper: Stopper { servers, stopping },
        server,
        local,
        background: vec![watch_task, prune_task],
        app,
        writer,
    })
}

/// The HTTP rules every door applies once a connection is through its own checks: a whole
/// first request in time, each later head in time, and a head that fits the limits.
fn http_rules<A: axum_server::Address, Acc>(
    server: axum_server::Server<A, Acc>,
    limits: &Limits,
) -> axum_server::Server<A, Acc> {
    let mut server = server
        .first_request_timeout(limits.header_read_timeout)
        .http1_only();
    server
        .http_builder()
        .http1()
        .keep_alive(true)
        .header_read_timeout(limits.header_read_timeout)
        // hyper refuses a buffer under 8 KiB; the head must fit in it.
        .max_buf_size(limits.max_header_bytes.max(8192))
        .max_headers(limits.max_headers);
    server
}

/// Runs the API until `shutdown` resolves, then stops it gracefully.
pub async fn serve(
    config: ApiConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let running = start(config).await?;
    let stopper = running.stopper();
    let waiter = tokio::spawn(async move {
        shutdown.await;
        tracing::info!("stopping");
        stopper.stop();
    });
    let result = running.join().await;
    waiter.abort();
    result
}

/// Follows root's side of the queue: after each change of root's state directory (at most
/// every [`BACKLOG_EVERY`], and at least every [`PRUNE_EVERY`]) it reads the ingest watermark
/// and the pending jobs by owner ([`StateReader::backlog`]) and hands them to the inbox, which
/// counts each account's queue against its caps; every [`PRUNE_EVERY`] it also deletes the
/// inbox rows root has admitted (at or below its watermark).
async fn follow_root(app: Arc<App>) {
    let mut changes = app.changes.clone();
    // The watermark last pruned to, and when: an idle node costs one read every tick and no
    // write.
    let mut pruned = 0;
    let mut last_prune = tokio::time::Instant::now();
    loop {
        let reader_app = app.clone();
        match tokio::task::spawn_blocking(move || reader_app.admission.reader().backlog()).await {
            Ok(Ok(backlog)) => {
                let watermark = backlog.watermark;
                app.admission.inbox().backlog(backlog);
                if watermark > pruned && last_prune.elapsed() >= PRUNE_EVERY {
                    app.admission.inbox().prune(watermark);
                    pruned = watermark;
                    last_prune = tokio::time::Instant::now();
                }
            }
            Ok(Err(store::ReadError::Unavailable { .. })) => {}
            Ok(Err(e)) => {
                tracing::warn!(error = ?e, "cannot read root's side of the queue; the inbox keeps its last counts")
            }
            Err(e) => tracing::warn!(error = %e, "the queue's read did not finish"),
        }
        tokio::time::sleep(BACKLOG_EVERY).await;
        // Whatever changed during the sleep is read next: a change seen now wakes at once.
        let _ = tokio::time::timeout(PRUNE_EVERY, changes.changed()).await;
    }
}
