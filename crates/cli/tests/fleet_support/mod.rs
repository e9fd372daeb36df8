//! What the fleet tests share: a real nats-server on a loopback port of its own, the fleet's
//! administrative directory made by `layerone fleet init`, the fleet service, and dev nodes
//! (`layerone-dev`) that join it with `layerone join`.
#![allow(dead_code)]

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const LAYERONE: &str = env!("CARGO_BIN_EXE_layerone");
/// Where the node runs the broker's configuration test from, and where `./scripts/test` puts
/// it (`scripts/nats-server.requirements`).
pub const NATS_SERVER: &str = "/usr/local/bin/nats-server";

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[allow(clippy::disallowed_methods)] // Tests start the real binaries they test.
pub fn command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    Command::new(program)
}

/// Runs `layerone ARGS`; panics with its output unless it succeeded.
pub fn layerone(args: &[&str]) -> String {
    succeeded(&format!("layerone {args:?}"), layerone_output(args))
}

/// What `what` printed; panics with its output unless it succeeded.
pub fn succeeded(what: &str, out: Output) -> String {
    assert!(
        out.status.success(),
        "{what} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub fn layerone_output(args: &[&str]) -> Output {
    command(LAYERONE)
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap()
}

pub fn wait_until(what: &str, timeout: Duration, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A TCP relay to the broker that a test cuts and heals: a node that reaches the broker only
/// through it is partitioned by [`Relay::cut`] (its connections closed, new ones closed as
/// they come) and can come back after [`Relay::heal`]. TLS passes through it untouched.
pub struct Relay {
    pub port: u16,
    shared: std::sync::Arc<RelayShared>,
}

#[derive(Default)]
struct RelayShared {
    cut: std::sync::atomic::AtomicBool,
    stopped: std::sync::atomic::AtomicBool,
    /// Both ends of every relayed connection, to close them at a cut.
    live: std::sync::Mutex<Vec<std::net::TcpStream>>,
}

impl RelayShared {
    fn close_all(&self) {
        for stream in self.live.lock().unwrap().drain(..) {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }
}

impl Relay {
    /// Relays 127.0.0.1:`self.port` to 127.0.0.1:`upstream`.
    pub fn start(upstream: u16) -> Relay {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared = std::sync::Arc::new(RelayShared::default());
        let relay = shared.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if relay.stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                if relay.cut.load(Ordering::SeqCst) {
                    continue;
                }
                let Ok(server) = std::net::TcpStream::connect(("127.0.0.1", upstream)) else {
                    continue;
                };
                let mut live = relay.live.lock().unwrap();
                live.push(client.try_clone().unwrap());
                live.push(server.try_clone().unwrap());
                drop(live);
                for (mut from, mut to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(std::net::Shutdown::Both);
                        let _ = from.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        Relay { port, shared }
    }

    pub fn url(&self) -> String {
        format!("tls://127.0.0.1:{}", self.port)
    }

    /// How many connections it relays (or relayed until they closed by themselves).
    pub fn connections(&self) -> usize {
        self.shared.live.lock().unwrap().len() / 2
    }

    /// Cuts every connection through the relay, and every one made until [`Relay::heal`].
    pub fn cut(&self) {
        self.shared
            .cut
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.shared.close_all();
    }

    pub fn heal(&self) {
        self.shared
            .cut
            .store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.shared
            .stopped
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.shared.close_all();
        // Wakes the accepting thread, which then sees it is stopped.
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn port_open(port: u16) -> bool {
    std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
}

/// A killed-on-drop child.
pub struct Process(pub Option<Child>);

impl Process {
    pub fn kill(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Runs `cmd` to its end or `bound`, whichever comes first (killed then), with its output
/// captured in files so that a chatty child cannot block on a full pipe.
pub fn run_bounded(mut cmd: Command, what: &str, bound: Duration) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let (out_path, err_path) = (dir.path().join("out"), dir.path().join("err"));
    let child = cmd
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let mut process = Process(Some(child));
    let started = Instant::now();
    let status = loop {
        let child = process.0.as_mut().unwrap();
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < bound,
            "{what} ran past {bound:?}: {}",
            std::fs::read_to_string(&err_path).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    process.0 = None;
    Output {
        status,
        stdout: std::fs::read(&out_path).unwrap(),
        stderr: std::fs::read(&err_path).unwrap(),
    }
}

/// A real nats-server with a configuration file.
pub struct Broker {
    pub conf: PathBuf,
    pub port: u16,
    pub log: PathBuf,
    process: Process,
}

impl Broker {
    pub fn start(conf: &Path, port: u16) -> Broker {
        let mut broker = Broker {
            conf: conf.to_owned(),
            port,
            log: conf.with_extension("log"),
            process: Process(None),
        };
        broker.restart();
        broker
    }

    pub fn restart(&mut self) {
        self.process.kill();
        let log = std::fs::File::create(&self.log).unwrap();
        let child = command(NATS_SERVER)
            .arg("-c")
            .arg(&self.conf)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("{NATS_SERVER}: {e} (./scripts/test installs it)"));
        self.process = Process(Some(child));
        let port = self.port;
        wait_until("the broker's port", Duration::from_secs(20), || {
            port_open(port)
        });
    }

    pub fn kill(&mut self) {
        self.process.kill();
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// A runtime of two workers, for a test's own broker connections.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A fleet: its administrative directory, its broker, its service.
pub struct Fleet {
    pub dir: tempfile::TempDir,
    pub admin: PathBuf,
    pub port: u16,
    pub broker: Broker,
    service: Process,
}

impl Fleet {
    pub fn url(&self) -> String {
        format!("tls://127.0.0.1:{}", self.port)
    }

    /// `layerone fleet init` as an operator runs it, but with the broker started here.
    pub fn init() -> Fleet {
        let dir = tempfile::tempdir().unwrap();
        let admin = dir.path().join("admin");
        let port = free_port();
        let listen = format!("127.0.0.1:{port}");
        let url = format!("tls://127.0.0.1:{port}");
        let admin_s = admin.to_str().unwrap();
        layerone(&[
            "fleet",
            "init",
            "--dir",
            admin_s,
            "--listen",
            &listen,
            "--broker",
            &url,
            "--files-only",
        ]);
        let broker = Broker::start(&admin.join("broker.conf"), port);
        layerone(&[
            "fleet",
            "init",
            "--dir",
            admin_s,
            "--listen",
            &listen,
            "--broker",
            &url,
            "--no-units",
        ]);
        let mut fleet = Fleet {
            dir,
            admin,
            port,
            broker,
            service: Process(None),
        };
        fleet.start_service();
        fleet
    }

    pub fn start_service(&mut self) {
        self.service.kill();
        let log = std::fs::File::create(self.dir.path().join("service.log")).unwrap();
        let child = command(LAYERONE)
            .args(["fleet", "serve", "--dir", self.admin.to_str().unwrap()])
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.service = Process(Some(child));
    }

    pub fn service_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("service.log")).unwrap_or_default()
    }

    pub fn creds(&self) -> String {
        self.admin
            .join("control-plane.json")
            .to_str()
            .unwrap()
            .to_owned()
    }

    /// A connection with the control plane's credential, for reading what the fleet holds.
    pub async fn control_plane(&self) -> async_nats::Client {
        let creds: Value =
            serde_json::from_str(&std::fs::read_to_string(self.creds()).unwrap()).unwrap();
        let brokers: Vec<String> = serde_json::from_value(creds["brokers"].clone()).unwrap();
        fleet::connect::control_plane(
            creds["seed"].as_str().unwrap(),
            &[creds["ca_pem"].as_str().unwrap()],
            &brokers,
        )
        .await
        .unwrap()
    }

    /// `layerone fleet SUBCOMMAND ... --creds` (the credential goes last).
    pub fn cli(&self, args: &[&str]) -> String {
        let creds = self.creds();
        let mut all = vec!["fleet"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--creds", &creds]);
        layerone(&all)
    }

    pub fn nodes(&self) -> Vec<Value> {
        serde_json::from_str(&self.cli(&["nodes", "--json"])).unwrap()
    }

    pub fn node_state(&self, name: &str) -> Option<String> {
        self.nodes()
            .into_iter()
            .find(|n| n["name"] == name)
            .map(|n| n["state"].as_str().unwrap().to_owned())
    }

    pub fn wait_state(&self, name: &str, state: &str, timeout: Duration) {
        wait_until(&format!("{name} {state}"), timeout, || {
            self.node_state(name).as_deref() == Some(state)
        });
    }

    /// Joins `node` with a fresh token for `name`.
    pub fn join(&self, node: &DevNode, name: &str) {
        let token = self.cli(&["token", name]).trim().to_owned();
        layerone(&["join", &token, "--dev", node.root.to_str().unwrap()]);
    }

    /// Submits `request` to `node` over the broker and waits for its final event.
    pub fn submit_wait(&self, node: &str, request: &Value) -> Value {
        let out = self.cli(&[
            "submit",
            node,
            &request.to_string(),
            "--wait",
            "--timeout",
            "60",
        ]);
        serde_json::from_str(&out).unwrap()
    }

    /// Every event on the stream, in order.
    pub fn events(&self) -> Vec<Value> {
        self.cli(&["events"])
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// A dev node (`layerone-dev`) in its own sandbox, heartbeating every half second once it is in
/// a fleet.
pub struct DevNode {
    pub root: PathBuf,
    pub info: Value,
    process: Process,
    log: PathBuf,
    /// Its options beyond the sandbox, the address and the heartbeat (`--platform`).
    options: Vec<String>,
}

impl DevNode {
    pub fn start(parent: &Path, name: &str) -> DevNode {
        DevNode::start_with(parent, name, &[])
    }

    /// A dev node started with `options` besides (`["--platform", "cloudlinux"]`).
    pub fn start_with(parent: &Path, name: &str, options: &[&str]) -> DevNode {
        let root = parent.join(name);
        std::fs::create_dir_all(&root).unwrap();
        let mut node = DevNode {
            info: Value::Null,
            log: parent.join(format!("{name}.log")),
            root,
            process: Process(None),
            options: options.iter().map(|o| (*o).to_owned()).collect(),
        };
        node.restart();
        node
    }

    pub fn restart(&mut self) {
        self.process.kill();
        let dev_json = self.root.join("dev.json");
        let _ = std::fs::remove_file(&dev_json);
        let log = std::fs::File::create(&self.log).unwrap();
        let child = command(&*super::common::DEV_NODE)
            .args(["--root", self.root.to_str().unwrap()])
            .args(["--listen", "127.0.0.1:0", "--fleet-heartbeat-ms", "500"])
            .args(&self.options)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.process = Process(Some(child));
        let deadline = Instant::now() + Duration::from_secs(60);
        while !dev_json.is_file() {
            if let Some(child) = self.process.0.as_mut()
                && let Some(status) = child.try_wait().unwrap()
            {
                panic!("layerone-dev exited {status}: {}", self.log());
            }
            assert!(Instant::now() < deadline, "the dev node did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        self.info = serde_json::from_str(&std::fs::read_to_string(&dev_json).unwrap()).unwrap();
    }

    /// Its process's id (the API, the fleet daemon and the runner are one process).
    pub fn pid(&self) -> u32 {
        self.process.0.as_ref().expect("the dev node runs").id()
    }

    /// Kills it as `kill -9` would.
    pub fn kill(&mut self) {
        self.process.kill();
    }

    pub fn log(&self) -> String {
        let mut text = String::new();
        if let Ok(mut f) = std::fs::File::open(&self.log) {
            let _ = f.read_to_string(&mut text);
        }
        text
    }

    pub fn node_id(&self) -> String {
        self.info["node_id"].as_str().unwrap().to_owned()
    }

    pub fn dev_json(&self) -> String {
        self.root.join("dev.json").to_str().unwrap().to_owned()
    }

    /// `layerone job submit --wait` over HTTPS.
    pub fn submit_https(&self, request: &Value) -> Value {
        let out = layerone(&[
            "job",
            "submit",
            "--dev",
            &self.dev_json(),
            "--wait",
            &request.to_string(),
        ]);
        serde_json::from_str(&out).unwrap()
    }
}

/// An `ensure_account` request for `username`.
pub fn ensure_account(request_id: &str, id: &str, username: &str) -> Value {
    serde_json::json!({
        "request_id": request_id,
        "operation": "ensure_account",
        "resource": {"id": id, "username": username, "shell": "bash"}
    })
}

/// A fleet with one node, `n1`, joined and up.
pub fn one_node_fleet() -> (Fleet, DevNode) {
    let fleet = Fleet::init();
    let node = DevNode::start(fleet.dir.path(), "n1");
    fleet.join(&node, "n1");
    fleet.wait_state("n1", "up", Duration::from_secs(30));
    (fleet, node)
}

/// 32 hex digits from a number.
pub fn hex32(n: u64) -> String {
    format!("{n:032x}")
}
