//! Daemon mode: the node on the fleet's broker, in the API's process and with its user.
//!
//! - [`consume`]: the node's own queue, every request handed to the API's admission
//!   ([`admission::Gate`]), acknowledged only after the inbox COMMIT, each account's requests
//!   in their order on the queue;
//! - [`publish`]: root's events feed and the daemon's own events, to the events stream, each
//!   stored once;
//! - [`trust`]: the fleet's trust bundle, kept and put in force on the live connection;
//! - the heartbeat, into the presence bucket with a per-message TTL, with the CAs the node
//!   trusts.
//!
//! [`supervise`] waits for the node to join (its identity appears), runs the daemon, and starts
//! it again after a failure; a node cut off from the broker goes on serving its local API.

mod consume;
pub mod outbox;
mod publish;
pub mod trust;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use admission::Gate;
use async_nats::jetstream;
use tokio::sync::{Mutex, Notify, watch};

use fleet::identity::{Credentials, IdentityDir};
use fleet::protocol::{self, EventBody, ModuleReport, Presence};
use fleet::tls::Trust;
use outbox::Outbox;

/// What the daemon is started with.
#[derive(Clone, Debug)]
pub struct DaemonConfig {
    pub identity: IdentityDir,
    /// Where `fleet.db` is kept (the API user's).
    pub state_dir: PathBuf,
    /// How often the node heartbeats; the fleet sees it down after three missed.
    pub heartbeat: Duration,
    pub version: String,
    pub platform: String,
}

impl DaemonConfig {
    pub fn fleet_db(&self) -> PathBuf {
        self.state_dir.join("fleet.db")
    }
}

/// How long a request the node cannot take now (a retryable refusal: the disk full, the inbox
/// or state briefly unavailable) waits before the broker delivers it again: the refusal's
/// `retry_after`, at least `floor` (also the wait of a refusal that names none) and at most
/// `ceiling`. The same account's later requests wait as long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Redelivery {
    pub floor: Duration,
    pub ceiling: Duration,
}

impl Default for Redelivery {
    fn default() -> Self {
        Redelivery {
            floor: Duration::from_secs(1),
            ceiling: Duration::from_secs(30),
        }
    }
}

impl Redelivery {
    /// Waits of at most `ceiling` (a test's short one): the floor is the default's, or
    /// `ceiling` if that is shorter.
    pub fn at_most(ceiling: Duration) -> Redelivery {
        Redelivery {
            floor: Redelivery::default().floor.min(ceiling),
            ceiling,
        }
    }

    /// The wait before a request refused with `retry_after` (seconds) is delivered again.
    pub fn delay(&self, retry_after: Option<u32>) -> Duration {
        retry_after
            .map_or(self.floor, |secs| Duration::from_secs(secs.into()))
            .max(self.floor)
            .min(self.ceiling.max(self.floor))
    }
}

pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// What the daemon's tasks share.
pub(crate) struct Shared {
    pub gate: Gate,
    pub config: DaemonConfig,
    pub credentials: Credentials,
    pub outbox: Mutex<Outbox>,
    /// Woken when the outbox has something new.
    pub outbox_changed: Notify,
    pub client: async_nats::Client,
    pub js: jetstream::Context,
    /// The CAs the connection verifies the broker with.
    pub trust: Trust,
    /// Woken when `trust` changed: the heartbeat says so at once.
    pub trust_changed: Notify,
    pub redelivery: Redelivery,
}

impl Shared {
    pub fn node(&self) -> &str {
        &self.credentials.identity.node
    }

    /// Records an event of the daemon's own, durably, for the publisher.
    pub async fn emit(&self, body: EventBody) -> anyhow::Result<()> {
        self.outbox.lock().await.push(&body, now_ms())?;
        self.outbox_changed.notify_one();
        Ok(())
    }

    pub async fn set_link(&self, connected: bool) {
        if let Err(e) = self.outbox.lock().await.set_link(connected, now_ms()) {
            tracing::warn!(error = %e, "cannot record the broker link's state");
        }
    }
}

/// Runs the daemon whenever the node is in a fleet, until `stop` is set: waits for the identity
/// to appear (`layerone join` writes it), and starts the daemon again, after a pause, when it
/// fails.
pub async fn supervise(gate: Gate, config: DaemonConfig, stop: watch::Receiver<bool>) {
    supervise_with(gate, config, Redelivery::default(), stop).await;
}

/// [`supervise`], with the waits of `redelivery` (a dev node's, shorter for a test).
pub async fn supervise_with(
    gate: Gate,
    config: DaemonConfig,
    redelivery: Redelivery,
    mut stop: watch::Receiver<bool>,
) {
    // Failed runs in a row: the pause before the next grows with them (full jitter).
    let mut failures = 0;
    loop {
        if *stop.borrow_and_update() {
            return;
        }
        // Set before the identity is looked at, so a join in between wakes the wait below.
        let joined = IdentityWatch::new(&config.identity.0);
        match config.identity.load() {
            Ok(Some(credentials)) => {
                let node = credentials.identity.node.clone();
                let started = tokio::time::Instant::now();
                let run = run(
                    gate.clone(),
                    config.clone(),
                    redelivery,
                    credentials,
                    stop.clone(),
                );
                // The ceiling of the pause before the next run.
                let cap = match run.await {
                    Ok(()) => return,
                    Err(e) if fleet::connect::is_refused(&e) => {
                        if record_refusal(&config, now_ms()) {
                            tracing::error!(
                                node,
                                "the broker refuses this node's key: the fleet has no node {node} with it (it was removed, or another machine joined under its name); join again with a new token (`layerone join TOKEN`)"
                            );
                        }
                        REFUSED_CAP
                    }
                    Err(e) => {
                        tracing::error!(error = %format!("{e:#}"), "the fleet daemon stopped; starting it again");
                        fleet::connect::RECONNECT_CAP
                    }
                };
                if started.elapsed() >= SETTLED {
                    failures = 0;
                }
                failures += 1;
                tokio::select! {
                    _ = stop.changed() => {}
                    () = joined.changed(fleet::connect::full_jitter(failures, fleet::connect::RECONNECT_BASE, cap)) => {}
                }
                continue;
            }
            // Not in a fleet: nothing runs until `layerone join` writes the identity.
            Ok(None) => {
                tokio::select! {
                    _ = stop.changed() => {}
                    () = joined.changed(IDENTITY_LOOK) => {}
                }
                continue;
            }
            Err(e) => {
                tracing::error!(error = %format!("{e:#}"), "the node's fleet identity is unreadable")
            }
        }
        tokio::select! {
            _ = stop.changed() => {}
            () = tokio::time::sleep(Duration::from_secs(2)) => {}
        }
    }
}

/// A run that lasted this long was not a failure in a row: the next pause starts small again.
const SETTLED: Duration = Duration::from_secs(60);

/// The ceiling of the pause after a run the broker refused: such a node tries at most about
/// once a minute, not every few seconds (a join in between wakes it at once). Other failures
/// wait as a connection's reconnections do (`fleet::connect::full_jitter`, capped at 15 s).
const REFUSED_CAP: Duration = Duration::from_secs(60);

/// Records in `fleet.db` that the broker refuses the node's key since `now_ms` (for `layerone
/// fleet status`; the run that connects clears it); returns whether it is new.
fn record_refusal(config: &DaemonConfig, now_ms: i64) -> bool {
    let recorded = std::fs::create_dir_all(&config.state_dir)
        .map_err(anyhow::Error::from)
        .and_then(|()| Outbox::open(&config.fleet_db())?.set_refused(Some(now_ms)));
    match recorded {
        Ok(changed) => changed,
        Err(e) => {
            tracing::warn!(error = %format!("{e:#}"), "cannot record the broker's refusal");
            true
        }
    }
}

/// The longest the daemon waits before it looks at the node's identity again, whatever the
/// watch said (an event missed): a node not in a fleet looks for a join, a joined one for a
/// rescue or a new join.
const IDENTITY_LOOK: Duration = Duration::from_secs(60);

/// How often the identity is looked at where it cannot be watched.
const UNWATCHED_LOOK: Duration = Duration::from_secs(2);

/// An inotify watch of the identity's directory, or, while it does not exist, of its nearest
/// existing parent (a join makes it): woken by a file written, moved in or removed there.
struct IdentityWatch(Option<tokio::io::unix::AsyncFd<inotify::Inotify>>);

impl IdentityWatch {
    fn new(dir: &std::path::Path) -> IdentityWatch {
        let Some(existing) = dir.ancestors().find(|d| d.is_dir()) else {
            return IdentityWatch(None);
        };
        let watched = (|| -> std::io::Result<_> {
            let inotify = inotify::Inotify::init()?;
            inotify.watches().add(
                existing,
                inotify::WatchMask::CREATE
                    | inotify::WatchMask::CLOSE_WRITE
                    | inotify::WatchMask::MOVED_TO
                    | inotify::WatchMask::DELETE,
            )?;
            // SAFETY: `Inotify` owns its descriptor and closes it only when dropped; the
            // AsyncFd owns the `Inotify`, so the descriptor stays open and the same for its
            // whole life.
            unsafe {
                tokio::io::unix::AsyncFd::register_with_interest(
                    inotify,
                    tokio::io::Interest::READABLE,
                )
            }
            .map_err(std::io::Error::from)
        })();
        match watched {
            Ok(fd) => IdentityWatch(Some(fd)),
            Err(e) => {
                // Said once: the watch is made again before each look.
                static SAID: std::sync::atomic::AtomicBool =
                    std::sync::atomic::AtomicBool::new(false);
                if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
                    tracing::warn!(dir = %existing.display(), error = %e, "cannot watch the node's fleet identity; looking at it every 2 s");
                }
                IdentityWatch(None)
            }
        }
    }

    /// Returns once something changed there, or after `at_most`; without a watch (inotify's
    /// limits reached, no directory at all), after 2 s, as before there was one.
    async fn changed(&self, at_most: Duration) {
        match &self.0 {
            Some(fd) => {
                let _ = tokio::time::timeout(at_most, fd.readable()).await;
            }
            None => tokio::time::sleep(UNWATCHED_LOOK.min(at_most)).await,
        }
    }
}

/// The daemon, with the node's credentials, until `stop` is set.
pub async fn run(
    gate: Gate,
    config: DaemonConfig,
    redelivery: Redelivery,
    credentials: Credentials,
    mut stop: watch::Receiver<bool>,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(&config.state_dir)?;
    let outbox = Outbox::open(&config.fleet_db())?;
    let identity = &credentials.identity;
    // The bundle the daemon kept over the identity's CA: what the fleet said last.
    let trust = match trust::load(&config.state_dir)? {
        Some(bundle) => Trust::new(&bundle.pems())?,
        None => Trust::new(&[&credentials.ca_pem])?,
    };
    // No retry in the background: the supervisor connects again itself, and each background
    // retry would outlive this run, so a removed node, refused for ever, piled up one more
    // at every restart.
    let client = fleet::connect::node_trusting(
        &identity.node,
        &credentials.seed,
        &trust,
        &identity.brokers,
        false,
    )
    .await?;
    outbox.set_refused(None)?;
    let js = jetstream::new(client.clone());
    let shared = Arc::new(Shared {
        gate,
        config,
        credentials,
        outbox: Mutex::new(outbox),
        outbox_changed: Notify::new(),
        client: client.clone(),
        js,
        trust,
        trust_changed: Notify::new(),
        redelivery,
    });
    trust::refresh(&shared).await;
    shared
        .emit(EventBody::Started {
            version: shared.config.version.clone(),
        })
        .await?;
    tracing::info!(node = shared.node(), "the fleet daemon is running");

    let mut tasks = tokio::task::JoinSet::new();
    tasks.spawn(publish::run(shared.clone()));
    tasks.spawn(consume::run(shared.clone()));
    tasks.spawn(heartbeat(shared.clone()));
    tasks.spawn(identity_unchanged(shared.clone()));
    let result = tokio::select! {
        _ = stop.wait_for(|s| *s) => Ok(()),
        Some(done) = tasks.join_next() => match done {
            Ok(Ok(())) => Err(anyhow::anyhow!("a daemon task ended")),
            Ok(Err(e)) => Err(e),
            Err(e) => Err(anyhow::anyhow!("a daemon task panicked: {e}")),
        },
    };
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
    if result.is_ok() {
        // Stopping: said once, if the broker takes it in time; else the next start publishes it.
        shared.emit(EventBody::Stopping).await?;
        let _ = tokio::time::timeout(Duration::from_secs(2), publish::drain_outbox(&shared)).await;
        let _ = client.flush().await;
    }
    result
}

/// Ends (and the supervisor starts the daemon again with what it reads) when the identity on
/// disk changes: `layerone fleet rescue` pointed the node at other brokers, or it joined anew.
async fn identity_unchanged(shared: Arc<Shared>) -> anyhow::Result<()> {
    loop {
        let changed = IdentityWatch::new(&shared.config.identity.0);
        match shared.config.identity.load() {
            Ok(Some(now))
                if now.identity == shared.credentials.identity
                    && now.ca_pem == shared.credentials.ca_pem
                    && now.seed == shared.credentials.seed => {}
            _ => return Err(anyhow::anyhow!("the node's fleet identity changed")),
        }
        changed.changed(IDENTITY_LOOK).await;
    }
}

/// The last value of `key` in `bucket`, by a direct get (what a node may read of a bucket:
/// its own assignment, the fleet's trust bundle), with its sequence in the bucket's stream;
/// `None` if there is none.
pub(crate) async fn read_key(
    js: &jetstream::Context,
    bucket: &str,
    key: &str,
) -> anyhow::Result<Option<(u64, Vec<u8>)>> {
    let stream = js
        .get_stream_no_info(format!("KV_{bucket}"))
        .await
        .map_err(|e| anyhow::anyhow!("the bucket {bucket}: {e}"))?;
    match stream
        .direct_get_last_for_subject(protocol::kv_subject(bucket, key))
        .await
    {
        Ok(entry) => Ok(Some((entry.sequence, entry.payload.to_vec()))),
        Err(e) if e.kind() == async_nats::jetstream::stream::DirectGetErrorKind::NotFound => {
            Ok(None)
        }
        Err(e) => Err(anyhow::anyhow!("reading {key} of {bucket}: {e}")),
    }
}

/// The node's heartbeat: its presence, with a TTL of three intervals, at every interval and at
/// once when the node's trust changed.
async fn heartbeat(shared: Arc<Shared>) -> anyhow::Result<()> {
    let interval = shared.config.heartbeat;
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let catalogue_sha256 = protocol::catalogue_sha256();
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = shared.trust_changed.notified() => {}
        }
        let (modules, generation) = shared.gate.assignment().await.unwrap_or_default();
        let presence = Presence {
            name: shared.node().to_owned(),
            node_id: shared.credentials.identity.node_id.clone(),
            version: shared.config.version.clone(),
            platform: shared.config.platform.clone(),
            catalogue_sha256: catalogue_sha256.clone(),
            modules: modules
                .into_iter()
                .map(|(module, ready, reason)| ModuleReport {
                    module,
                    ready,
                    reason,
                })
                .collect(),
            assignment_generation: generation,
            at_ms: now_ms(),
            interval_ms: interval.as_millis() as u64,
            trusted_ca_sha256: shared.trust.sha256s(),
        };
        let message = async_nats::jetstream::message::PublishMessage::build()
            .payload(serde_json::to_vec(&presence)?.into())
            .ttl(interval * 3);
        let sent = shared
            .js
            .send_publish(
                protocol::kv_subject(protocol::PRESENCE_BUCKET, shared.node()),
                message,
            )
            .await;
        let stored = match sent {
            Ok(ack) => tokio::time::timeout(interval, ack)
                .await
                .ok()
                .and_then(Result::ok),
            Err(_) => None,
        };
        shared.set_link(stored.is_some()).await;
        if stored.is_none() {
            tracing::warn!(
                node = shared.node(),
                "a heartbeat was not stored by the broker"
            );
        }
    }
}
