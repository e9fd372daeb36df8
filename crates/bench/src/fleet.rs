//! `layerone-bench fleet`: the fleet's figures, against a real nats-server (TLS, file store)
//! started here from a configuration `layerone fleet init --files-only` made, as the fleet
//! tests start it.
//!
//! 1. One real node: a `layerone-dev` joined with `layerone join`, the fleet service
//!    (`layerone fleet serve`) beside the broker, and a control-plane client in this process
//!    that publishes requests to the node's queue and follows the events stream. It measures
//!    dispatch (publish -> the node's `accepted` event on FLEET_EVT, which the daemon records
//!    after the inbox COMMIT and before the ack), the lag of root's events (recorded in
//!    state.db -> on FLEET_EVT), the broker's messages and bytes per job (`/varz`), and the
//!    time from `kill -9` of the node to the fleet's `node_down`.
//! 2. Idle cost: a joined and a lone dev node, and a bare `layerone-api`, over the same minute.
//! 3. One broker with 1,000 simulated nodes in this process ([`SimNode`]): each its own nkey
//!    user with the node's permissions in a configuration rendered by
//!    `fleet::broker_config::render`, its own durable consumer made by the control plane; it
//!    pulls its queue, acks, publishes an `accepted` event and heartbeats, and does nothing
//!    else (no validation, no inbox, no outbox, no root). Dispatch one at a time and at 100,
//!    250 and 500 dispatches a second; then the same broker with 10 simulated nodes at 500 a
//!    second, which separates what 1,000 nodes cost the broker from what the machine allows.
//! 4. Reconnection (2c in the output): 1,000 simulated nodes that know the broker by a
//!    name; the broker killed, and started again 5 s later on another loopback address, which
//!    the hosts file of the stage's own mount namespace gives the name (the stage runs as
//!    `fleet-reconnect DIR` under `unshare`): how soon the nodes are back, how many CONNECTs the
//!    broker takes in a second at most, and whether a request is delivered again.
//!
//! Every loop is bounded in count and in time; nothing is asserted.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use async_nats::HeaderMap;
use async_nats::jetstream::consumer::{self, PullConsumer};
use async_nats::jetstream::{self, AckKind};
use fleet::protocol::{
    self, EVENTS_STREAM, EventBody, FleetEvent, PRESENCE_BUCKET, Presence, REQUESTS_STREAM,
};
use fleet_control::admin::AdminDir;
use futures_util::StreamExt;
use serde_json::Value;

use crate::child;
use crate::node::{self, Bins, free_port};
use crate::stats::{Summary, ms, summarize};
use crate::sys;

/// Where the fleet tests and `./scripts/test` put the broker.
pub const NATS_SERVER: &str = "/usr/local/bin/nats-server";
/// Sequential dispatches to the real node, and to the simulated nodes.
const DISPATCHES: usize = 300;
/// The real node's heartbeat while dispatch and `node_down` are measured.
const REAL_HEARTBEAT_MS: u64 = 1000;
/// `kill -9` of the joined node, this many times.
const KILLS: usize = 5;
/// The default heartbeat of `layerone-api` and `layerone-dev`, for the idle cost.
const IDLE_HEARTBEAT_MS: u64 = 5000;
/// The idle cost's window: ten minutes, so that what the daemon does on its slow timers (the
/// assignment every 30 s, the publisher's own look every minute) is in it many times.
const IDLE_WINDOW: Duration = Duration::from_secs(600);
/// The broker's background traffic is measured over this long before dispatching.
const BACKGROUND_WINDOW: Duration = Duration::from_secs(10);
const SIM_NODES: usize = 1000;
/// The same broker with this many simulated nodes, at the highest rate only: what the number
/// of nodes costs, apart from the machine.
const FEW_SIM_NODES: usize = 10;
/// The simulated nodes heartbeat at the default interval, spread over it.
const SIM_HEARTBEAT: Duration = Duration::from_millis(IDLE_HEARTBEAT_MS);
/// Open-loop dispatch to the simulated nodes: (dispatches per second, for how long).
const RATES: [(u32, Duration); 3] = [
    (100, Duration::from_secs(10)),
    (250, Duration::from_secs(8)),
    (500, Duration::from_secs(6)),
];

/// The fleet's binaries, beside the benchmark's.
struct FleetBins {
    layerone: PathBuf,
    dev: PathBuf,
    node: Bins,
}

impl FleetBins {
    fn beside_me() -> anyhow::Result<FleetBins> {
        let node = Bins::beside_me()?;
        let dir = node.api.parent().context("the binaries' directory")?;
        let bins = FleetBins {
            layerone: dir.join("layerone"),
            dev: dir.join("layerone-dev"),
            node: node.clone(),
        };
        for bin in [&bins.layerone, &bins.dev] {
            if !bin.exists() {
                bail!(
                    "{} is missing: build every binary in one build first, \
                     `cargo build --release --workspace --bins`",
                    bin.display()
                );
            }
        }
        if !Path::new(NATS_SERVER).exists() {
            bail!("{NATS_SERVER} is missing (./scripts/test installs it)");
        }
        Ok(bins)
    }
}

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

fn port_open(port: u16) -> bool {
    port_open_on("127.0.0.1", port)
}

fn port_open_on(address: &str, port: u16) -> bool {
    std::net::TcpStream::connect((address, port)).is_ok()
}

// ----------------------------------------------------------------------------- the broker

/// A nats-server started from a configuration file, stopped on drop.
struct Broker {
    child: Child,
    monitor_port: u16,
}

/// The broker's counters (`/varz`).
#[derive(Clone, Copy, Debug, Default)]
struct Varz {
    in_msgs: u64,
    out_msgs: u64,
    in_bytes: u64,
    out_bytes: u64,
    connections: u64,
    /// Every client connection the server accepted since it started.
    total_connections: u64,
}

impl Varz {
    fn minus(self, o: Varz) -> Varz {
        Varz {
            in_msgs: self.in_msgs.saturating_sub(o.in_msgs),
            out_msgs: self.out_msgs.saturating_sub(o.out_msgs),
            in_bytes: self.in_bytes.saturating_sub(o.in_bytes),
            out_bytes: self.out_bytes.saturating_sub(o.out_bytes),
            connections: self.connections,
            total_connections: self.total_connections.saturating_sub(o.total_connections),
        }
    }
}

impl Broker {
    fn start(conf: &Path, port: u16, monitor_port: u16, log: &Path) -> anyhow::Result<Broker> {
        Broker::start_on(conf, "127.0.0.1", port, monitor_port, log)
    }

    /// Starts the broker whose configuration listens on `address:port` (its monitoring port is
    /// on 127.0.0.1 whatever the address).
    fn start_on(
        conf: &Path,
        address: &str,
        port: u16,
        monitor_port: u16,
        log: &Path,
    ) -> anyhow::Result<Broker> {
        let child = child::start(Path::new(NATS_SERVER), &[os("-c"), conf.as_os_str()], log)?;
        let mut broker = Broker {
            child,
            monitor_port,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !(port_open_on(address, port) && port_open(monitor_port)) {
            if let Ok(Some(status)) = broker.child.try_wait() {
                bail!("nats-server exited {status}; see {}", log.display());
            }
            if Instant::now() > deadline {
                bail!(
                    "nats-server did not listen within 20 s; see {}",
                    log.display()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(broker)
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills it as `kill -9` would, and reaps it.
    fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// `GET /varz` on the monitoring port, over plain HTTP/1.0.
    fn varz(&self) -> anyhow::Result<Varz> {
        use std::io::{Read, Write};
        let mut conn = std::net::TcpStream::connect(("127.0.0.1", self.monitor_port))?;
        conn.set_read_timeout(Some(Duration::from_secs(5)))?;
        conn.write_all(b"GET /varz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
        let mut text = String::new();
        conn.read_to_string(&mut text)?;
        let body = text
            .split_once("\r\n\r\n")
            .map(|(_, b)| b)
            .context("the monitoring endpoint's answer has no body")?;
        let v: Value = serde_json::from_str(body).context("/varz is not JSON")?;
        let n = |k: &str| v[k].as_u64().unwrap_or(0);
        Ok(Varz {
            in_msgs: n("in_msgs"),
            out_msgs: n("out_msgs"),
            in_bytes: n("in_bytes"),
            out_bytes: n("out_bytes"),
            connections: n("connections"),
            total_connections: n("total_connections"),
        })
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        child::stop(&mut self.child, Duration::from_secs(10));
    }
}

/// `layerone fleet init --files-only` in `admin`: the CA, the broker's certificate and derived
/// configuration (with a monitoring port), the control plane's credential.
fn init_files(bins: &FleetBins, admin: &Path, port: u16, monitor_port: u16) -> anyhow::Result<()> {
    let listen = format!("127.0.0.1:{port}");
    let url = format!("tls://127.0.0.1:{port}");
    let monitor = monitor_port.to_string();
    child::run(
        &bins.layerone,
        &[
            os("fleet"),
            os("init"),
            os("--dir"),
            admin.as_os_str(),
            os("--listen"),
            os(&listen),
            os("--broker"),
            os(&url),
            os("--monitor-port"),
            os(&monitor),
            os("--files-only"),
        ],
        &admin.with_extension("init.log"),
    )
}

/// The control plane's credential (`control-plane.json`), and where it is.
#[derive(Clone)]
struct Credential {
    path: PathBuf,
    control_plane: fleet_control::admin::ControlPlane,
}

impl Credential {
    fn load(admin: &Path) -> anyhow::Result<Credential> {
        let path = AdminDir(admin.to_owned()).control_plane();
        Ok(Credential {
            control_plane: fleet_control::admin::ControlPlane::load(&path)?,
            path,
        })
    }

    async fn connect(&self) -> anyhow::Result<ControlPlane> {
        Ok(ControlPlane {
            js: jetstream::new(self.control_plane.connect().await?),
        })
    }
}

/// A fleet as an operator makes it: `fleet init --files-only`, the broker, `fleet init` again
/// (streams, buckets, catalogue), and `fleet serve` beside it.
struct RealFleet {
    dir: PathBuf,
    credential: Credential,
    service: Option<Child>,
    // Dropped last: the service and the nodes go first.
    broker: Broker,
}

impl RealFleet {
    fn init(bins: &FleetBins, dir: &Path) -> anyhow::Result<RealFleet> {
        std::fs::create_dir_all(dir)?;
        let admin = dir.join("admin");
        let (port, monitor_port) = (free_port()?, free_port()?);
        init_files(bins, &admin, port, monitor_port)?;
        let broker = Broker::start(
            &admin.join("broker.conf"),
            port,
            monitor_port,
            &dir.join("broker.log"),
        )?;
        let listen = format!("127.0.0.1:{port}");
        let url = format!("tls://127.0.0.1:{port}");
        child::run(
            &bins.layerone,
            &[
                os("fleet"),
                os("init"),
                os("--dir"),
                admin.as_os_str(),
                os("--listen"),
                os(&listen),
                os("--broker"),
                os(&url),
                os("--no-units"),
            ],
            &dir.join("init-broker.log"),
        )?;
        let service = child::start(
            &bins.layerone,
            &[os("fleet"), os("serve"), os("--dir"), admin.as_os_str()],
            &dir.join("service.log"),
        )?;
        Ok(RealFleet {
            credential: Credential::load(&admin)?,
            dir: dir.to_owned(),
            service: Some(service),
            broker,
        })
    }

    /// `layerone fleet token NAME`, then `layerone join TOKEN --dev ROOT`.
    fn join(&self, bins: &FleetBins, node: &DevNode, name: &str) -> anyhow::Result<()> {
        let token = child::output(
            &bins.layerone,
            &[
                os("fleet"),
                os("token"),
                os(name),
                os("--creds"),
                self.credential.path.as_os_str(),
            ],
            &self.dir.join(format!("token-{name}.log")),
        )?;
        child::run(
            &bins.layerone,
            &[
                os("join"),
                os(token.trim()),
                os("--dev"),
                node.root.as_os_str(),
            ],
            &self.dir.join(format!("join-{name}.log")),
        )
    }
}

impl Drop for RealFleet {
    fn drop(&mut self) {
        if let Some(mut c) = self.service.take() {
            child::stop(&mut c, Duration::from_secs(5));
        }
    }
}

// ----------------------------------------------------------------------------- dev nodes

/// A `layerone-dev` (API, watching runner and, once joined, the fleet daemon, in one process)
/// in a sandbox of its own.
struct DevNode {
    bin: PathBuf,
    root: PathBuf,
    log: PathBuf,
    heartbeat_ms: u64,
    child: Option<Child>,
}

impl DevNode {
    fn start(bin: &Path, parent: &Path, name: &str, heartbeat_ms: u64) -> anyhow::Result<DevNode> {
        let root = parent.join(name);
        std::fs::create_dir_all(&root)?;
        let mut node = DevNode {
            bin: bin.to_owned(),
            log: parent.join(format!("{name}.log")),
            root,
            heartbeat_ms,
            child: None,
        };
        node.restart()?;
        Ok(node)
    }

    /// Starts it (again: same sandbox, same identity), and waits for its `dev.json`.
    fn restart(&mut self) -> anyhow::Result<()> {
        self.stop();
        let dev_json = self.root.join("dev.json");
        let _ = std::fs::remove_file(&dev_json);
        let heartbeat = self.heartbeat_ms.to_string();
        let child = child::start(
            &self.bin,
            &[
                os("--root"),
                self.root.as_os_str(),
                os("--listen"),
                os("127.0.0.1:0"),
                os("--fleet-heartbeat-ms"),
                os(&heartbeat),
            ],
            &self.log,
        )?;
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(60);
        while !dev_json.is_file() {
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                bail!("layerone-dev exited {status}; see {}", self.log.display());
            }
            if Instant::now() > deadline {
                bail!(
                    "layerone-dev did not start within 60 s; see {}",
                    self.log.display()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// `kill -9`, and when it was sent (and in wall ms).
    fn kill9(&mut self) -> Option<(Instant, i64)> {
        let mut child = self.child.take()?;
        let at = (Instant::now(), now_us() / 1000);
        let _ = child.kill();
        let _ = child.wait();
        Some(at)
    }

    fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            child::stop(&mut c, Duration::from_secs(10));
        }
    }
}

impl Drop for DevNode {
    fn drop(&mut self) {
        self.stop();
    }
}

// ----------------------------------------------------------------------------- the control plane

/// The control plane's connection (its JetStream context holds the client).
struct ControlPlane {
    js: jetstream::Context,
}

/// What the control plane's follower of the events stream saw.
#[derive(Default)]
struct Seen {
    /// Dispatched requests whose `accepted` event has not arrived: when each was published,
    /// and the wall time then (µs).
    pending: HashMap<String, (Instant, i64)>,
    /// Publish -> `accepted` on FLEET_EVT.
    accepted: Vec<Duration>,
    /// The `accepted` event's own time on the node -> on FLEET_EVT.
    accepted_lag: Vec<Duration>,
    /// Root's job events: recorded in state.db (`at_ms`) -> on FLEET_EVT.
    root_lag: Vec<Duration>,
    succeeded: usize,
    /// `node_down`: when it arrived (and in wall ms), the node, its last heartbeat (wall ms).
    down: Vec<(Instant, i64, String, i64)>,
    up: Vec<(Instant, String)>,
    /// Requests whose `accepted` event came.
    done: std::collections::HashSet<String>,
    /// `accepted` events of requests already accepted: a request delivered again.
    again: usize,
}

/// The follower's record, and a version bumped at each change, to wait on.
struct Tracker {
    seen: Mutex<Seen>,
    changed: tokio::sync::watch::Sender<u64>,
}

impl Tracker {
    fn new() -> Arc<Tracker> {
        Arc::new(Tracker {
            seen: Mutex::new(Seen::default()),
            changed: tokio::sync::watch::Sender::new(0),
        })
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen
            .lock()
            .expect("no thread panics holding the tracker")
    }

    fn record(&self, at: Instant, wall_us: i64, event: FleetEvent) {
        let lag = |at_ms: i64| Duration::from_micros((wall_us - at_ms * 1000).max(0) as u64);
        {
            let mut seen = self.seen();
            match event.body {
                EventBody::Accepted { request_id, .. } => {
                    if let Some((start, _)) = seen.pending.remove(&request_id) {
                        seen.accepted.push(at - start);
                        seen.accepted_lag.push(lag(event.at_ms));
                    } else if seen.done.contains(&request_id) {
                        seen.again += 1;
                    }
                    seen.done.insert(request_id);
                }
                EventBody::Job { state, .. } => {
                    seen.root_lag.push(lag(event.at_ms));
                    if state == registry::JobState::Succeeded {
                        seen.succeeded += 1;
                    }
                }
                EventBody::NodeDown { last_seen_ms } => {
                    seen.down
                        .push((at, wall_us / 1000, event.node, last_seen_ms));
                }
                EventBody::NodeUp { .. } => seen.up.push((at, event.node)),
                _ => return,
            }
        }
        self.changed.send_modify(|v| *v += 1);
    }

    /// Waits until `ok` holds, at most `timeout`; returns whether it held.
    async fn wait_for(&self, timeout: Duration, mut ok: impl FnMut(&Seen) -> bool) -> bool {
        let mut rx = self.changed.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if ok(&self.seen()) {
                return true;
            }
            match tokio::time::timeout_at(deadline, rx.changed()).await {
                Ok(Ok(())) => {}
                _ => return ok(&self.seen()),
            }
        }
    }
}

impl ControlPlane {
    /// Follows the events stream from its tail (an ordered consumer, as `layerone fleet
    /// events --follow` does) into `tracker`.
    async fn follow(&self, filter: &str, tracker: Arc<Tracker>) -> anyhow::Result<()> {
        let stream = self.js.get_stream(EVENTS_STREAM).await?;
        let consumer = stream
            .create_consumer(consumer::pull::OrderedConfig {
                filter_subject: filter.to_owned(),
                deliver_policy: consumer::DeliverPolicy::New,
                ..Default::default()
            })
            .await?;
        let mut messages = consumer.messages().await?;
        tokio::spawn(async move {
            while let Some(m) = messages.next().await {
                let Ok(m) = m else { continue };
                let (at, wall) = (Instant::now(), now_us());
                if let Ok(event) = serde_json::from_slice::<FleetEvent>(&m.payload) {
                    tracker.record(at, wall, event);
                }
            }
        });
        Ok(())
    }

    /// Publishes a request to `node`'s queue as `layerone fleet submit` does (its subject and
    /// message id; without the dispatcher's reads of the node's record, presence and
    /// catalogue), noting it in `tracker` first. Returns publish -> stored by the broker.
    async fn dispatch(
        &self,
        tracker: &Tracker,
        node: &str,
        request_id: &str,
        body: Vec<u8>,
    ) -> anyhow::Result<Duration> {
        let mut headers = HeaderMap::new();
        headers.insert(
            "Nats-Msg-Id",
            format!("request.{node}.{request_id}").as_str(),
        );
        let t0 = Instant::now();
        tracker
            .seen()
            .pending
            .insert(request_id.to_owned(), (t0, now_us()));
        self.js
            .publish_with_headers(protocol::request_subject(node), headers, body.into())
            .await?
            .await
            .context("the broker did not store a request")?;
        Ok(t0.elapsed())
    }

    async fn presence(&self, node: &str) -> anyhow::Result<Option<Presence>> {
        let bucket = self.js.get_key_value(PRESENCE_BUCKET).await?;
        Ok(match bucket.get(node).await? {
            Some(bytes) => serde_json::from_slice(&bytes).ok(),
            None => None,
        })
    }

    async fn wait_present(&self, node: &str, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        while self.presence(node).await?.is_none() {
            if Instant::now() > deadline {
                bail!("{node} sent no heartbeat within {timeout:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }
}

fn trivial_request(tag: u32, i: u64) -> (String, Vec<u8>) {
    let request_id = node::id(tag, i);
    let body = node::remove_key(&request_id, &node::id(tag + 1, i), &node::id(tag, 0));
    (request_id, body.to_string().into_bytes())
}

/// What one dispatch phase measured.
#[derive(Clone, Copy, Debug, Default)]
struct Dispatch {
    dispatched: usize,
    /// Dispatches per second actually sent.
    rate: f64,
    /// Publish -> stored by the broker (the publish ack).
    stored: Summary,
    /// Publish -> the node's `accepted` event on FLEET_EVT.
    accepted: Summary,
    /// Dispatched without an `accepted` event in time.
    missing: usize,
    /// CPU over the phase, in % of one core: the broker's, and the nodes' (the real node, or
    /// this process with the simulated nodes and the control plane).
    broker_cpu: f64,
    bench_cpu: f64,
}

/// One request at a time: publish, then wait for its `accepted` event.
async fn closed_loop(
    cp: &ControlPlane,
    tracker: &Tracker,
    nodes: &[String],
    count: usize,
    tag: u32,
) -> anyhow::Result<Dispatch> {
    tracker.seen().accepted.clear();
    let mut stored = Vec::new();
    let started = Instant::now();
    for i in 0..count {
        let (rid, body) = trivial_request(tag, i as u64 + 1);
        let node = &nodes[(i * 7919) % nodes.len()];
        stored.push(cp.dispatch(tracker, node, &rid, body).await?);
        if !tracker
            .wait_for(Duration::from_secs(20), |s| !s.pending.contains_key(&rid))
            .await
        {
            bail!("no `accepted` event from {node} for {rid} within 20 s");
        }
    }
    let wall = started.elapsed();
    let accepted = std::mem::take(&mut tracker.seen().accepted);
    Ok(Dispatch {
        dispatched: count,
        rate: count as f64 / wall.as_secs_f64(),
        stored: summarize(stored),
        accepted: summarize(accepted),
        ..Dispatch::default()
    })
}

/// `rate` dispatches a second for `time`, each to the next node, whatever the answers: the
/// latency of each from its own publish.
async fn open_loop(
    cp: &Arc<ControlPlane>,
    tracker: &Arc<Tracker>,
    nodes: &[String],
    rate: u32,
    time: Duration,
    tag: u32,
) -> anyhow::Result<Dispatch> {
    {
        let mut seen = tracker.seen();
        seen.accepted.clear();
        seen.pending.clear();
    }
    let count = (f64::from(rate) * time.as_secs_f64()) as usize;
    let mut tick = tokio::time::interval(Duration::from_secs(1) / rate);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut tasks = tokio::task::JoinSet::new();
    let started = Instant::now();
    for i in 0..count {
        tick.tick().await;
        let (rid, body) = trivial_request(tag, i as u64 + 1);
        let node = nodes[(i * 7919) % nodes.len()].clone();
        let (cp, tracker) = (cp.clone(), tracker.clone());
        tasks.spawn(async move { cp.dispatch(&tracker, &node, &rid, body).await });
    }
    let sent = started.elapsed();
    let mut stored = Vec::new();
    while let Some(done) = tasks.join_next().await {
        stored.push(done??);
    }
    tracker
        .wait_for(Duration::from_secs(30), |s| s.pending.is_empty())
        .await;
    let mut seen = tracker.seen();
    let missing = seen.pending.len();
    seen.pending.clear();
    Ok(Dispatch {
        dispatched: count,
        rate: count as f64 / sent.as_secs_f64(),
        stored: summarize(stored),
        accepted: summarize(std::mem::take(&mut seen.accepted)),
        missing,
        ..Dispatch::default()
    })
}

/// CPU of each pid over what `f` does, in % of one core.
fn cpu_during<T>(pids: &[u32], f: impl FnOnce() -> T) -> (T, Vec<f64>) {
    let before: Vec<Duration> = pids.iter().map(|p| sys::cpu_and_switches(*p).0).collect();
    let t0 = Instant::now();
    let out = f();
    let wall = t0.elapsed().as_secs_f64().max(1e-9);
    let pct = pids
        .iter()
        .zip(before)
        .map(|(p, b)| 100.0 * sys::cpu_and_switches(*p).0.saturating_sub(b).as_secs_f64() / wall)
        .collect();
    (out, pct)
}

// ----------------------------------------------------------------------------- simulated nodes

/// A node in this process that speaks the node's protocol and nothing more: its own nkey
/// user and inbox prefix (`fleet::connect::node`), its durable consumer pulled as the daemon
/// pulls it, each request acknowledged and answered with an `accepted` event (message id
/// `<node>.o.<n>`, stored before the next), and a heartbeat with a TTL of three intervals.
/// It skips what makes a node a node: validation, the inbox COMMIT, the outbox in fleet.db,
/// root and its events, the assignment.
struct SimNode {
    client: async_nats::Client,
}

impl SimNode {
    async fn start(
        name: String,
        seed: String,
        credential: Arc<Credential>,
        heartbeat_offset: Duration,
        catalogue_sha256: Arc<String>,
    ) -> anyhow::Result<SimNode> {
        let client = fleet::connect::node(
            &name,
            &seed,
            &[&credential.control_plane.ca_pem],
            &credential.control_plane.brokers,
            false,
        )
        .await?;
        let js = jetstream::new(client.clone());
        let stream = js
            .get_stream_no_info(REQUESTS_STREAM)
            .await
            .map_err(|e| anyhow::anyhow!("{name}: the requests stream: {e}"))?;
        let consumer: PullConsumer = stream
            .get_consumer(&name)
            .await
            .map_err(|e| anyhow::anyhow!("{name}: its consumer: {e}"))?;
        let mut messages = consumer
            .messages()
            .await
            .map_err(|e| anyhow::anyhow!("{name}: pulling: {e}"))?;
        {
            let (js, name) = (js.clone(), name.clone());
            tokio::spawn(async move {
                let mut n = 0u64;
                while let Some(m) = messages.next().await {
                    let Ok(m) = m else { continue };
                    let request_id = serde_json::from_slice::<Value>(&m.payload)
                        .ok()
                        .and_then(|v| v.get("request_id")?.as_str().map(str::to_owned))
                        .unwrap_or_default();
                    let _ = m.ack_with(AckKind::Ack).await;
                    n += 1;
                    let now = now_us() / 1000;
                    let event = FleetEvent {
                        id: format!("{name}.o.{n}"),
                        node: name.clone(),
                        at_ms: now,
                        body: EventBody::Accepted {
                            job: registry::JobView::received(&request_id, "remove_ssh_key", now),
                            request_id,
                        },
                    };
                    let mut headers = HeaderMap::new();
                    headers.insert("Nats-Msg-Id", event.id.as_str());
                    let Ok(bytes) = serde_json::to_vec(&event) else {
                        continue;
                    };
                    if let Ok(ack) = js
                        .publish_with_headers(
                            protocol::node_events_subject(&name, "accepted"),
                            headers,
                            bytes.into(),
                        )
                        .await
                    {
                        let _ = ack.await;
                    }
                }
            });
        }
        tokio::spawn(async move {
            tokio::time::sleep(heartbeat_offset).await;
            let mut tick = tokio::time::interval(SIM_HEARTBEAT);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let presence = Presence {
                    name: name.clone(),
                    node_id: String::new(),
                    version: env!("CARGO_PKG_VERSION").to_owned(),
                    platform: "sim".to_owned(),
                    catalogue_sha256: catalogue_sha256.to_string(),
                    modules: vec![],
                    assignment_generation: 0,
                    at_ms: now_us() / 1000,
                    interval_ms: SIM_HEARTBEAT.as_millis() as u64,
                    trusted_ca_sha256: vec![],
                };
                let Ok(bytes) = serde_json::to_vec(&presence) else {
                    continue;
                };
                let message = jetstream::message::PublishMessage::build()
                    .payload(bytes.into())
                    .ttl(SIM_HEARTBEAT * 3);
                if let Ok(ack) = js
                    .send_publish(protocol::kv_subject(PRESENCE_BUCKET, &name), message)
                    .await
                {
                    let _ = tokio::time::timeout(SIM_HEARTBEAT, ack).await;
                }
            }
        });
        Ok(SimNode { client })
    }
}

// ----------------------------------------------------------------------------- the run

#[derive(Clone, Copy, Debug, Default)]
struct Idle {
    rss_kib: u64,
    cpu: Duration,
    wakeups: u64,
}

fn print_dispatch(what: &str, d: &Dispatch) {
    println!(
        "  {what}: {} dispatched at {:.0}/s; -> accepted {}; -> stored (publish ack) p50 {:.2} ms, p99 {:.2} ms{}",
        d.dispatched,
        d.rate,
        d.accepted,
        ms(d.stored.p50),
        ms(d.stored.p99),
        if d.missing > 0 {
            format!("; {} without an accepted event within 30 s", d.missing)
        } else {
            String::new()
        }
    );
}

fn print_cpu(d: &Dispatch, other: &str) {
    println!(
        "      CPU over the phase, % of one core: nats-server {:.0}%, {other} {:.0}%",
        d.broker_cpu, d.bench_cpu
    );
}

fn print_idle(what: &str, i: &Idle) {
    println!(
        "  {what:<40} RSS {:6.1} MiB; CPU {:.3} s over {:?} ({:.3}%), {} wakeups",
        i.rss_kib as f64 / 1024.0,
        i.cpu.as_secs_f64(),
        IDLE_WINDOW,
        100.0 * i.cpu.as_secs_f64() / IDLE_WINDOW.as_secs_f64(),
        i.wakeups
    );
}

/// One broker's simulated nodes: how many, dispatch one at a time, then at each rate.
struct Simulated {
    nodes: usize,
    closed: Dispatch,
    open: Vec<(u32, Dispatch)>,
}

/// How long a session's call of `node` takes to answer `peer_down`: the check of the peer's
/// state, and, while its heartbeat still lives, the call put on its queue and the wait that
/// ends when the heartbeat does.
async fn stand_in_down(
    peers: &mcp::peers::Peers,
    node: &str,
    tag: u64,
) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let peer = peers
        .fresh(node)
        .await?
        .with_context(|| format!("{node} is not in the fleet"))?;
    if peer.state == "up" {
        let (request_id, body) = trivial_request(9, tag);
        match peers
            .call(node, &request_id, &body, Duration::from_secs(30))
            .await?
        {
            mcp::peers::PeerAnswer::WentDown { .. } => {}
            other => bail!("a call of the killed {node} answered {other:?}, not that it went down"),
        }
    }
    Ok(started.elapsed())
}

/// The figures the summary repeats.
#[derive(Default)]
struct Figures {
    real: Dispatch,
    root_lag: Summary,
    accepted_lag: Summary,
    per_job: Option<(f64, f64, f64, f64)>,
    down: Vec<Duration>,
    /// A session's stand-in for the killed node, called right after `kill -9` and again once
    /// the fleet saw it down: until its `peer_down`.
    stand_in_at_kill: Vec<Duration>,
    stand_in_known_down: Vec<Duration>,
    /// The node's last heartbeat -> `node_down`, ms.
    since_beat: Vec<i64>,
    idle: Option<(Idle, Idle, Idle)>,
    sims: Vec<Simulated>,
}

pub fn run(dir: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let bins = FleetBins::beside_me()?;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("layerone-bench fleet");
    println!("  machine   {cores} cores ({})", sys::cpu_model());
    println!("  disk      {}", sys::disk_of(dir));
    println!("  load avg  {} (at start)", sys::loadavg());
    println!(
        "  broker    {NATS_SERVER}, TLS, JetStream file store, configuration from `layerone fleet init --files-only`"
    );
    let mut figures = Figures::default();
    real_node(&bins, &rt, &dir.join("real"), &mut figures)?;
    idle_cost(&bins, &rt, &dir.join("idle"), &mut figures)?;
    println!(
        "\n2. {SIM_NODES} simulated nodes on one broker, in this process (each: own nkey user with node_permissions, own TLS connection, own durable consumer; heartbeat {IDLE_HEARTBEAT_MS} ms)"
    );
    simulated(
        &bins,
        &rt,
        &dir.join("sim"),
        SIM_NODES,
        &RATES,
        &mut figures,
    )?;
    let (rate, time) = RATES[RATES.len() - 1];
    println!(
        "\n2b. The same with {FEW_SIM_NODES} simulated nodes, at {rate}/s only: what the number of nodes costs the broker"
    );
    simulated(
        &bins,
        &rt,
        &dir.join("few"),
        FEW_SIM_NODES,
        &[(rate, time)],
        &mut figures,
    )?;
    reconnection_stage(&dir.join("reconnect"))?;
    print_summary(&figures);
    println!(
        "\nload avg {} (at end); whole run {:.0} s",
        sys::loadavg(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Dispatch, events lag, broker traffic per job and `node_down`, with one real node.
fn real_node(
    bins: &FleetBins,
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    figures: &mut Figures,
) -> anyhow::Result<()> {
    println!(
        "\n1. One real node: a joined layerone-dev (heartbeat {REAL_HEARTBEAT_MS} ms), the fleet service, a control plane in this process"
    );
    let fleet = RealFleet::init(bins, dir)?;
    let mut node = DevNode::start(&bins.dev, dir, "n1", REAL_HEARTBEAT_MS)?;
    fleet.join(bins, &node, "n1")?;
    let tracker = Tracker::new();
    let cp = rt.block_on(async {
        let cp = fleet.credential.connect().await?;
        cp.wait_present("n1", Duration::from_secs(60)).await?;
        cp.follow("fleet.evt.>", tracker.clone()).await?;
        anyhow::Ok(cp)
    })?;
    // Its first passes and the daemon's start-up events, out of the way.
    std::thread::sleep(Duration::from_secs(2));

    let v0 = fleet.broker.varz()?;
    std::thread::sleep(BACKGROUND_WINDOW);
    let v1 = fleet.broker.varz()?;
    let background = v1.minus(v0);
    let per_s = |n: u64| n as f64 / BACKGROUND_WINDOW.as_secs_f64();
    println!(
        "  broker background over {:?} (heartbeats, pings, pull heartbeats; {} connections): {:.1} msgs/s in, {:.1} out, {:.0} B/s in, {:.0} out",
        BACKGROUND_WINDOW,
        v1.connections,
        per_s(background.in_msgs),
        per_s(background.out_msgs),
        per_s(background.in_bytes),
        per_s(background.out_bytes)
    );

    {
        let mut seen = tracker.seen();
        seen.root_lag.clear();
        seen.accepted_lag.clear();
        seen.succeeded = 0;
    }
    let v2 = fleet.broker.varz()?;
    let t2 = Instant::now();
    let nodes = vec!["n1".to_owned()];
    let node_pid = node.pid().context("n1 is running")?;
    let (d, cpu) = cpu_during(&[fleet.broker.pid(), node_pid], || {
        rt.block_on(async {
            let d = closed_loop(&cp, &tracker, &nodes, DISPATCHES, 0xd1).await?;
            // Every job's final event, so the broker's counters hold whole jobs.
            tracker
                .wait_for(Duration::from_secs(60), |s| s.succeeded >= DISPATCHES)
                .await;
            anyhow::Ok(d)
        })
    });
    let mut d = d?;
    (d.broker_cpu, d.bench_cpu) = (cpu[0], cpu[1]);
    let v3 = fleet.broker.varz()?;
    let span = t2.elapsed().as_secs_f64();
    let (root_lag, accepted_lag, succeeded) = {
        let mut seen = tracker.seen();
        (
            summarize(std::mem::take(&mut seen.root_lag)),
            summarize(std::mem::take(&mut seen.accepted_lag)),
            seen.succeeded,
        )
    };
    println!(
        "  dispatch, one at a time: control plane publishes a trivial job (remove_ssh_key) to fleet.req.n1,"
    );
    println!(
        "  the daemon pulls it, admits it through the API's gate (validation, inbox COMMIT), records `accepted` and acks"
    );
    print_dispatch("publish -> `accepted` on FLEET_EVT", &d);
    print_cpu(&d, "layerone-dev");
    println!("  `accepted` recorded on the node -> on FLEET_EVT {accepted_lag} (ms resolution)");
    println!(
        "\n3. Events lag: root's job events (queued, running, succeeded), recorded in state.db -> on FLEET_EVT"
    );
    println!("  {root_lag} (ms resolution: at_ms is whole milliseconds)");

    let jobs = succeeded.min(DISPATCHES) as f64;
    let traffic = v3.minus(v2);
    let net = |n: u64, bg: u64| {
        (n as f64 - bg as f64 / BACKGROUND_WINDOW.as_secs_f64() * span).max(0.0) / jobs.max(1.0)
    };
    let per_job = (
        net(traffic.in_msgs, background.in_msgs),
        net(traffic.out_msgs, background.out_msgs),
        net(traffic.in_bytes, background.in_bytes),
        net(traffic.out_bytes, background.out_bytes),
    );
    println!(
        "\n5a. Broker traffic per job (/varz over {:.1} s, {succeeded} jobs to `succeeded`, the background rate above subtracted)",
        span
    );
    println!(
        "  {:.1} msgs in, {:.1} msgs out, {:.0} bytes in, {:.0} bytes out per job (raw: {} / {} msgs, {} / {} bytes)",
        per_job.0,
        per_job.1,
        per_job.2,
        per_job.3,
        traffic.in_msgs,
        traffic.out_msgs,
        traffic.in_bytes,
        traffic.out_bytes
    );
    figures.real = d;
    figures.root_lag = root_lag;
    figures.accepted_lag = accepted_lag;
    figures.per_job = Some(per_job);

    println!(
        "\n4. A node that stops: kill -9 of n1 -> the fleet service's `node_down` on FLEET_EVT (heartbeat {REAL_HEARTBEAT_MS} ms, TTL 3 intervals), and an operator session's stand-in for n1 (`mcp::peers`, as `layerone mcp --fleet-credential` calls a peer)"
    );
    let peers = rt.block_on(mcp::peers::Peers::open(cp.js.clone(), None))?;
    for k in 0..KILLS {
        if k > 0 {
            let ups = tracker.seen().up.len();
            node.restart()?;
            if !rt.block_on(tracker.wait_for(Duration::from_secs(60), |s| s.up.len() > ups)) {
                bail!("n1 was not seen up again within 60 s");
            }
        }
        // A few heartbeats, so the fleet has seen it alive, and each kill at another point
        // of the heartbeat's period.
        std::thread::sleep(Duration::from_millis(
            3 * REAL_HEARTBEAT_MS + k as u64 * REAL_HEARTBEAT_MS / KILLS as u64,
        ));
        let downs = tracker.seen().down.len();
        let Some((killed, killed_wall_ms)) = node.kill9() else {
            bail!("n1 is not running");
        };
        let at_kill = rt.block_on(stand_in_down(&peers, "n1", k as u64))?;
        if !rt.block_on(tracker.wait_for(Duration::from_secs(30), |s| s.down.len() > downs)) {
            bail!("no node_down for n1 within 30 s of kill -9");
        }
        let known_down = rt.block_on(stand_in_down(&peers, "n1", 100 + k as u64))?;
        println!(
            "  kill {}: an operator session's call of n1 answers peer_down {:.0} ms after it is made at the kill, {:.1} ms once the fleet saw n1 down",
            k + 1,
            ms(at_kill),
            ms(known_down)
        );
        figures.stand_in_at_kill.push(at_kill);
        figures.stand_in_known_down.push(known_down);
        let (at, at_wall_ms, who, last_seen) = tracker.seen().down[downs].clone();
        let took = at - killed;
        let since_beat = at_wall_ms - last_seen;
        println!(
            "  kill {}: node_down ({who}) {:.0} ms after kill -9 = {:.2} intervals; {} ms after its last heartbeat ({} ms before the kill) = {:.2} intervals",
            k + 1,
            ms(took),
            ms(took) / REAL_HEARTBEAT_MS as f64,
            since_beat,
            killed_wall_ms - last_seen,
            since_beat as f64 / REAL_HEARTBEAT_MS as f64
        );
        figures.down.push(took);
        figures.since_beat.push(since_beat);
    }
    drop(node);
    drop(cp);
    drop(fleet);
    Ok(())
}

/// A joined and a lone dev node and a bare `layerone-api`, over the same idle minute.
fn idle_cost(
    bins: &FleetBins,
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    figures: &mut Figures,
) -> anyhow::Result<()> {
    println!(
        "\n5b. Idle cost over {IDLE_WINDOW:?}, measured together: a joined layerone-dev (daemon running, heartbeat {IDLE_HEARTBEAT_MS} ms), one not joined, and layerone-api alone"
    );
    let fleet = RealFleet::init(bins, &dir.join("fleet"))?;
    let joined = DevNode::start(&bins.dev, dir, "joined", IDLE_HEARTBEAT_MS)?;
    let alone = DevNode::start(&bins.dev, dir, "alone", IDLE_HEARTBEAT_MS)?;
    let mut api = node::Node::new(&bins.node, dir, "api")?;
    api.start_api()?;
    fleet.join(bins, &joined, "joined")?;
    rt.block_on(async {
        let cp = fleet.credential.connect().await?;
        cp.wait_present("joined", Duration::from_secs(60)).await
    })?;
    // The daemon's start-up (its first rounds, the assignment read) and the runners' first
    // passes, out of the window.
    std::thread::sleep(Duration::from_secs(5));
    let pids = [
        joined.pid().context("joined")?,
        alone.pid().context("alone")?,
        api.api_pid().context("api")?,
    ];
    let v0 = fleet.broker.varz()?;
    let before: Vec<(Duration, u64)> = pids.iter().map(|p| sys::cpu_and_switches(*p)).collect();
    std::thread::sleep(IDLE_WINDOW);
    let idle: Vec<Idle> = pids
        .iter()
        .zip(before)
        .map(|(p, (cpu0, sw0))| {
            let (cpu1, sw1) = sys::cpu_and_switches(*p);
            Idle {
                rss_kib: sys::status_kib(*p, "VmRSS:").unwrap_or(0),
                cpu: cpu1.saturating_sub(cpu0),
                wakeups: sw1.saturating_sub(sw0),
            }
        })
        .collect();
    let traffic = fleet.broker.varz()?.minus(v0);
    let (j, a, p) = (idle[0], idle[1], idle[2]);
    print_idle("layerone-dev, joined", &j);
    print_idle("layerone-dev, not joined", &a);
    print_idle("layerone-api alone (for the target)", &p);
    println!(
        "  the daemon's share: RSS {:+.1} MiB, CPU {:+.3} s, {:+} wakeups over the window",
        (j.rss_kib as f64 - a.rss_kib as f64) / 1024.0,
        j.cpu.as_secs_f64() - a.cpu.as_secs_f64(),
        j.wakeups as i64 - a.wakeups as i64
    );
    println!(
        "  broker traffic over the window (the joined node, the fleet service; {} connections): {} msgs in, {} out, {} bytes in, {} out",
        traffic.connections, traffic.in_msgs, traffic.out_msgs, traffic.in_bytes, traffic.out_bytes
    );
    figures.idle = Some((j, a, p));
    Ok(())
}

/// `count` simulated nodes on one broker: dispatch one at a time, then at each of `rates`.
/// A broker with simulated nodes, each with its own nkey user, durable consumer and
/// connection: what stages 2 and 3 stand on.
struct SimFleet {
    conf: PathBuf,
    spec: fleet::broker_config::BrokerSpec,
    users: fleet::broker_config::Users,
    port: u16,
    monitor_port: u16,
    broker: Broker,
    cp: Arc<ControlPlane>,
    nodes: Vec<SimNode>,
    names: Vec<String>,
    tracker: Arc<Tracker>,
}

impl SimFleet {
    /// Starts the broker of the fleet files in `admin` (its client listener on `address`)
    /// with `count` node users, the streams and each node's consumer, and the nodes.
    fn start(
        rt: &tokio::runtime::Runtime,
        dir: &Path,
        admin: &Path,
        (address, port, monitor_port): (&str, u16, u16),
        count: usize,
    ) -> anyhow::Result<SimFleet> {
        let credential = Arc::new(Credential::load(admin)?);
        let spec = AdminDir(admin.to_owned()).load_settings()?.broker;
        let keys: Vec<(String, String, String)> = (0..count)
            .map(|i| {
                let key = nkeys::KeyPair::new_user();
                Ok((format!("sim{i:04}"), key.seed()?, key.public_key()))
            })
            .collect::<anyhow::Result<_>>()?;
        let users = fleet::broker_config::Users {
            control_plane: credential.control_plane.public_key()?,
            join_password: credential.control_plane.join_password.clone(),
            nodes: keys
                .iter()
                .map(|(name, _, public)| (name.clone(), public.clone()))
                .collect(),
            operators: Vec::new(),
        };
        let conf = admin.join("broker.conf");
        std::fs::write(&conf, fleet::broker_config::render(&spec, &users))?;
        let broker = Broker::start_on(&conf, address, port, monitor_port, &dir.join("broker.log"))?;
        let names: Vec<String> = keys.iter().map(|(n, _, _)| n.clone()).collect();
        let tracker = Tracker::new();
        let catalogue = Arc::new(protocol::catalogue_sha256());
        let (cp, nodes) = rt.block_on(async {
            let cp = Arc::new(credential.connect().await?);
            fleet::setup::ensure_streams_and_buckets(&cp.js, 1).await?;
            let t0 = Instant::now();
            let made: Vec<anyhow::Result<()>> = futures_util::stream::iter(names.iter())
                .map(|name| fleet::setup::ensure_node_consumer(&cp.js, name))
                .buffer_unordered(16)
                .collect()
                .await;
            made.into_iter().collect::<anyhow::Result<Vec<()>>>()?;
            println!(
                "  {count} durable consumers created by the control plane in {:.1} s",
                t0.elapsed().as_secs_f64()
            );
            let t0 = Instant::now();
            let started: Vec<anyhow::Result<SimNode>> =
                futures_util::stream::iter(keys.iter().enumerate())
                    .map(|(i, (name, seed, _))| {
                        SimNode::start(
                            name.clone(),
                            seed.clone(),
                            credential.clone(),
                            SIM_HEARTBEAT * i as u32 / count as u32,
                            catalogue.clone(),
                        )
                    })
                    .buffer_unordered(32)
                    .collect()
                    .await;
            let nodes = started.into_iter().collect::<anyhow::Result<Vec<_>>>()?;
            println!(
                "  {} nodes connected (TLS, nkey), found their consumers and started pulling in {:.1} s",
                nodes.len(),
                t0.elapsed().as_secs_f64()
            );
            cp.follow("fleet.evt.node.*.accepted", tracker.clone()).await?;
            anyhow::Ok((cp, nodes))
        })?;
        Ok(SimFleet {
            conf,
            spec,
            users,
            port,
            monitor_port,
            broker,
            cp,
            nodes,
            names,
            tracker,
        })
    }

    /// Closes every node's connection (each drains first).
    fn stop(self, rt: &tokio::runtime::Runtime) {
        rt.block_on(async {
            for n in &self.nodes {
                let _ = n.client.drain().await;
            }
        });
    }
}

fn simulated(
    bins: &FleetBins,
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    count: usize,
    rates: &[(u32, Duration)],
    figures: &mut Figures,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    let admin = dir.join("admin");
    let (port, monitor_port) = (free_port()?, free_port()?);
    init_files(bins, &admin, port, monitor_port)?;
    let sims = SimFleet::start(rt, dir, &admin, ("127.0.0.1", port, monitor_port), count)?;
    let (broker, cp, names, tracker) = (&sims.broker, &sims.cp, &sims.names, &sims.tracker);
    // Every node heartbeats once, and the pulls settle.
    std::thread::sleep(SIM_HEARTBEAT + Duration::from_secs(1));
    let me = std::process::id();
    let pids = [broker.pid(), me];
    let v0 = broker.varz()?;
    let ((), idle_cpu) = cpu_during(&pids, || std::thread::sleep(BACKGROUND_WINDOW));
    let bg = broker.varz()?.minus(v0);
    println!(
        "  idle, {} connections: nats-server RSS {:.0} MiB, CPU {:.1}%; this process RSS {:.0} MiB, CPU {:.1}% of one core; broker {:.0} msgs/s in, {:.0} out",
        bg.connections,
        sys::status_kib(broker.pid(), "VmRSS:").unwrap_or(0) as f64 / 1024.0,
        idle_cpu[0],
        sys::status_kib(me, "VmRSS:").unwrap_or(0) as f64 / 1024.0,
        idle_cpu[1],
        bg.in_msgs as f64 / BACKGROUND_WINDOW.as_secs_f64(),
        bg.out_msgs as f64 / BACKGROUND_WINDOW.as_secs_f64()
    );

    let (d, cpu) = cpu_during(&pids, || {
        rt.block_on(closed_loop(cp, tracker, names, DISPATCHES, 0x51))
    });
    let mut d = d?;
    (d.broker_cpu, d.bench_cpu) = (cpu[0], cpu[1]);
    print_dispatch("one at a time, each to another node", &d);
    print_cpu(&d, "this process (control plane and nodes)");
    let closed = d;
    let mut open = Vec::new();
    for (i, (rate, time)) in rates.iter().enumerate() {
        let (d, cpu) = cpu_during(&pids, || {
            rt.block_on(open_loop(
                cp,
                tracker,
                names,
                *rate,
                *time,
                0x60 + 2 * i as u32,
            ))
        });
        let mut d = d?;
        (d.broker_cpu, d.bench_cpu) = (cpu[0], cpu[1]);
        print_dispatch(&format!("{rate}/s for {time:?}, spread over the nodes"), &d);
        print_cpu(&d, "this process (control plane and nodes)");
        open.push((*rate, d));
    }
    figures.sims.push(Simulated {
        nodes: count,
        closed,
        open,
    });
    println!(
        "  nats-server RSS {:.0} MiB at the end",
        sys::status_kib(broker.pid(), "VmRSS:").unwrap_or(0) as f64 / 1024.0
    );
    sims.stop(rt);
    Ok(())
}

// ----------------------------------------------------------------------------- reconnection

/// The name the reconnection stage's nodes and control plane know the broker by: one the
/// broker's certificate holds (`fleet init` always names `localhost`), resolved through the
/// hosts file of the stage's own mount namespace, never the machine's.
const BROKER_NAME: &str = "localhost";
/// The loopback addresses the broker listens on, before and after it moves.
const FIRST_ADDRESS: &str = "127.0.0.1";
const MOVED_ADDRESS: &str = "127.0.0.2";
/// The longest the stage waits for every node to be back.
const BACK_WITHIN: Duration = Duration::from_secs(180);
/// How long the broker stays away: a restart on another machine's address takes seconds.
const OUTAGE: Duration = Duration::from_secs(5);
/// How often the stage counts the connected nodes and the broker's accepted connections.
const SAMPLE: Duration = Duration::from_millis(100);

/// Stage 2c: this benchmark again (`fleet-reconnect DIR`) in a mount namespace of its own,
/// where a hosts file of its own is bind-mounted over `/etc/hosts`.
fn reconnection_stage(dir: &Path) -> anyhow::Result<()> {
    println!(
        "\n2c. Reconnection: {SIM_NODES} simulated nodes know the broker as {BROKER_NAME}; it is killed (-9), and {OUTAGE:?} later started on {MOVED_ADDRESS} instead of {FIRST_ADDRESS} (the hosts file of this stage's own mount namespace says so)"
    );
    // SAFETY: geteuid(2) takes nothing and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        println!("  skipped: a mount namespace of its own needs root");
        return Ok(());
    }
    child::in_own_mount_namespace(
        &std::env::current_exe()?,
        &[os("fleet-reconnect"), dir.as_os_str()],
    )
}

/// Writes the stage's hosts file in place (the bind mount holds its inode): the broker's name
/// at `address`.
fn write_hosts(hosts: &Path, address: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(hosts)?;
    file.write_all(format!("{address} {BROKER_NAME}\n").as_bytes())?;
    Ok(())
}

/// One request to each node, all at once; waits for every `accepted` event.
async fn one_each(
    cp: &Arc<ControlPlane>,
    tracker: &Arc<Tracker>,
    nodes: &[String],
    tag: u32,
) -> anyhow::Result<Vec<String>> {
    let mut tasks = tokio::task::JoinSet::new();
    let mut ids = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        let (rid, body) = trivial_request(tag, i as u64 + 1);
        ids.push(rid.clone());
        let (cp, tracker, node) = (cp.clone(), tracker.clone(), node.clone());
        tasks.spawn(async move { cp.dispatch(&tracker, &node, &rid, body).await });
    }
    while let Some(done) = tasks.join_next().await {
        done??;
    }
    if !tracker
        .wait_for(Duration::from_secs(60), |s| s.pending.is_empty())
        .await
    {
        bail!(
            "{} requests without an `accepted` event within 60 s",
            tracker.seen().pending.len()
        );
    }
    Ok(ids)
}

/// `layerone-bench fleet-reconnect DIR`: stage 2c itself, run by [`reconnection_stage`] in its
/// own mount namespace.
pub fn reconnect_in_namespace(dir: &Path) -> anyhow::Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    std::fs::create_dir_all(dir)?;
    let hosts = dir.join("hosts");
    write_hosts(&hosts, FIRST_ADDRESS)?;
    child::run(
        Path::new("/usr/bin/mount"),
        &[os("--bind"), hosts.as_os_str(), os("/etc/hosts")],
        &dir.join("mount.log"),
    )?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let admin = dir.join("admin");
    let (port, monitor_port) = (free_port()?, free_port()?);
    fleet_control::admin::init_files(&fleet_control::admin::InitOptions {
        dir: AdminDir(admin.clone()),
        name: "bench".into(),
        listen: format!("{FIRST_ADDRESS}:{port}"),
        brokers: vec![format!("tls://{BROKER_NAME}:{port}")],
        server_names: Vec::new(),
        replicas: 1,
        monitor_port,
        cluster: None,
        from: None,
    })?;
    let mut sims = SimFleet::start(
        &rt,
        dir,
        &admin,
        (FIRST_ADDRESS, port, monitor_port),
        SIM_NODES,
    )?;
    // Every node heartbeats once, and the pulls settle; then each takes a request.
    std::thread::sleep(SIM_HEARTBEAT + Duration::from_secs(1));
    let before = rt.block_on(one_each(&sims.cp, &sims.tracker, &sims.names, 0x90))?;
    println!(
        "  before: each of the {} nodes took a request ({} accepted)",
        sims.names.len(),
        before.len()
    );

    sims.broker.kill9();
    let killed = Instant::now();
    std::thread::sleep(OUTAGE);
    write_hosts(&hosts, MOVED_ADDRESS)?;
    sims.spec.listen = format!("{MOVED_ADDRESS}:{}", sims.port);
    std::fs::write(
        &sims.conf,
        fleet::broker_config::render(&sims.spec, &sims.users),
    )?;
    sims.broker = Broker::start_on(
        &sims.conf,
        MOVED_ADDRESS,
        sims.port,
        sims.monitor_port,
        &dir.join("broker-moved.log"),
    )?;
    let listening = Instant::now();
    // (since listening, nodes connected, connections the broker accepted)
    let mut samples: Vec<(Duration, usize, u64)> = Vec::new();
    loop {
        let connected = sims
            .nodes
            .iter()
            .filter(|n| n.client.connection_state() == async_nats::connection::State::Connected)
            .count();
        let accepted = sims.broker.varz().map_or(0, |v| v.total_connections);
        samples.push((listening.elapsed(), connected, accepted));
        if connected == sims.nodes.len() || listening.elapsed() > BACK_WITHIN {
            break;
        }
        std::thread::sleep(SAMPLE);
    }
    let count = sims.nodes.len();
    let at = |share: usize| {
        samples
            .iter()
            .find(|(_, connected, _)| *connected * 100 >= count * share)
            .map(|(t, _, _)| *t)
    };
    // The most connections the broker accepted within any one second.
    let peak = samples
        .iter()
        .map(|(t, _, n)| {
            let floor = samples
                .iter()
                .find(|(u, _, _)| *t <= *u + Duration::from_secs(1))
                .map_or(0, |(_, _, m)| *m);
            n.saturating_sub(floor)
        })
        .max()
        .unwrap_or(0);
    let secs = |t: Option<Duration>| {
        t.map_or("not within the wait".to_owned(), |t| {
            format!("{:.1} s", t.as_secs_f64())
        })
    };
    println!(
        "  the broker listening again {:.1} s after the kill, on {MOVED_ADDRESS}",
        (listening - killed).as_secs_f64()
    );
    println!(
        "  nodes back (connected again, without a restart): half {}, 99% {}, all {} after it listened",
        secs(at(50)),
        secs(at(99)),
        secs(at(100))
    );
    println!(
        "  connections the broker accepted: {} in all, at most {peak} within one second",
        samples.last().map_or(0, |(_, _, n)| *n)
    );
    let after = rt.block_on(one_each(&sims.cp, &sims.tracker, &sims.names, 0x92))?;
    // Give a request of before that the broker would deliver again the time to show.
    std::thread::sleep(Duration::from_secs(2));
    let again = sims.tracker.seen().again;
    println!(
        "  after: each node took a new request ({} accepted); requests delivered a second time: {again}",
        after.len()
    );
    sims.stop(&rt);
    Ok(())
}

fn print_summary(f: &Figures) {
    println!("\nSummary                                             p50 ms    p99 ms   target");
    println!(
        "  dispatch -> accepted, one real node           {:9.2} {:9.2}",
        ms(f.real.accepted.p50),
        ms(f.real.accepted.p99)
    );
    for Simulated {
        nodes: count,
        closed,
        open,
    } in &f.sims
    {
        let target = if *count == SIM_NODES { "p99 < 50" } else { "" };
        let line = format!(
            "  dispatch -> accepted, {count:>4} nodes, one at a time {:6.2} {:9.2}   {target}",
            ms(closed.accepted.p50),
            ms(closed.accepted.p99)
        );
        println!("{}", line.trim_end());
        for (rate, d) in open {
            let line = format!(
                "  dispatch -> accepted, {count:>4} nodes, {rate:>3}/s     {:9.2} {:9.2}   {target}{}",
                ms(d.accepted.p50),
                ms(d.accepted.p99),
                if d.missing > 0 {
                    format!(" ({} missing)", d.missing)
                } else {
                    String::new()
                }
            );
            println!("{}", line.trim_end());
        }
    }
    println!(
        "  root's events -> FLEET_EVT, one real node     {:9.2} {:9.2}   p99 < 100",
        ms(f.root_lag.p50),
        ms(f.root_lag.p99)
    );
    if !f.down.is_empty() {
        let mut down = f.down.clone();
        down.sort();
        println!(
            "  kill -9 -> node_down, ms (min / median / max of {}) {:.0} / {:.0} / {:.0}   <= 3 heartbeats = {} ms",
            down.len(),
            ms(down[0]),
            ms(down[down.len() / 2]),
            ms(down[down.len() - 1]),
            3 * REAL_HEARTBEAT_MS
        );
        for (what, list) in [
            (
                "a session's call of the node at the kill -> peer_down",
                &f.stand_in_at_kill,
            ),
            (
                "a session's call of the node known down -> peer_down",
                &f.stand_in_known_down,
            ),
        ] {
            let mut list = list.clone();
            list.sort();
            if !list.is_empty() {
                println!(
                    "  {what}, ms (min / median / max) {:.1} / {:.1} / {:.1}",
                    ms(list[0]),
                    ms(list[list.len() / 2]),
                    ms(list[list.len() - 1])
                );
            }
        }
        let mut beat = f.since_beat.clone();
        beat.sort_unstable();
        println!(
            "  last heartbeat -> node_down, ms (min / median / max)   {} / {} / {}   (TTL 3 heartbeats)",
            beat[0],
            beat[beat.len() / 2],
            beat[beat.len() - 1]
        );
    }
    if let Some((i, o, b, by)) = f.per_job {
        println!("  broker per job: {i:.1} msgs in, {o:.1} out, {b:.0} bytes in, {by:.0} out");
    }
    if let Some((j, a, p)) = &f.idle {
        println!(
            "  idle {:?}, the daemon's share: RSS {:+.1} MiB, CPU {:+.3} s; layerone-api alone: RSS {:.1} MiB, CPU {:.3} s   share <= the API's",
            IDLE_WINDOW,
            (j.rss_kib as f64 - a.rss_kib as f64) / 1024.0,
            j.cpu.as_secs_f64() - a.cpu.as_secs_f64(),
            p.rss_kib as f64 / 1024.0,
            p.cpu.as_secs_f64()
        );
    }
}
