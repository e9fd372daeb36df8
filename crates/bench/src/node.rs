//! A dev node in a temporary directory, run from the real release binaries: a Sim sysroot, a
//! data directory, a self-signed TLS pair and an API key, the API (`layerone-dev-api`: the packaged
//! `layerone-api`'s code and command line, allowed to run as root) and the
//! simulated runner `layerone-sim-runner` (the runner code on the simulator, `crates/devnode`)
//! as child processes, and the real client to reach them.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use client::NodeClient;
use inbox::Inbox;
use provider::{Platform, Provider, ProviderConfig};
use registry::Hex32;
use serde_json::{Value, json};
use store::Layout;

use crate::child;

/// The node's release binaries, found next to the benchmark's own executable.
#[derive(Clone, Debug)]
pub struct Bins {
    pub api: PathBuf,
    pub runner: PathBuf,
}

impl Bins {
    pub fn beside_me() -> anyhow::Result<Bins> {
        let me = std::env::current_exe()?;
        let dir = me.parent().context("the benchmark's directory")?;
        let bins = Bins {
            // The packaged API refuses root; the benchmark runs as root, so it starts the dev
            // node's API, the same command line and the same serving code allowed to.
            api: dir.join("layerone-dev-api"),
            runner: dir.join("layerone-sim-runner"),
        };
        // The runner starts the tenant worker beside it for any work in a home.
        let worker = dir.join("layerone-tenant");
        for bin in [&bins.api, &bins.runner, &worker] {
            if !bin.exists() {
                bail!(
                    "{} is missing: build every binary in one build first, \
                     `cargo build --release --workspace --bins && target/release/layerone-bench`",
                    bin.display()
                );
            }
        }
        Ok(bins)
    }
}

pub struct Node {
    pub dir: PathBuf,
    pub layout: Layout,
    pub sysroot: PathBuf,
    pub provider: Provider,
    pub node_id: Hex32,
    pub url: String,
    key: String,
    pin: String,
    cert: PathBuf,
    tls_key: PathBuf,
    key_file: PathBuf,
    port: u16,
    bins: Bins,
    pub api: Option<Child>,
    pub watch: Option<Child>,
}

/// A 32-hex id: `tag` in the first 8 digits, `n` in the rest, so each kind of id in the
/// benchmark has its own range.
pub fn id(tag: u32, n: u64) -> String {
    format!("{tag:08x}{n:024x}")
}

pub const KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGn4w0x3qmW1b4PQ1b1pDpDkHc3uqm3n8dHTV1G4ZvDN ops@example";

pub fn ensure_account(req: &str, account: &str, username: &str) -> Value {
    json!({"request_id": req, "operation": "ensure_account",
           "resource": {"id": account, "username": username, "shell": "bash"}})
}

pub fn remove_account(req: &str, account: &str) -> Value {
    json!({"request_id": req, "operation": "remove_account", "resource": {"id": account}})
}

pub fn ensure_key(req: &str, key: &str, account: &str) -> Value {
    json!({"request_id": req, "operation": "ensure_ssh_key",
           "resource": {"id": key, "account": account, "key": KEY}})
}

/// The benchmark's trivial operation: removing an SSH key of an account this node does not
/// have. It reads two indexed rows of state.db, finds nothing to change on the system, starts
/// no program and writes no file, and succeeds with `"state": "absent"`.
pub fn remove_key(req: &str, key: &str, account: &str) -> Value {
    json!({"request_id": req, "operation": "remove_ssh_key",
           "resource": {"id": key, "account": account}})
}

pub fn ensure_domain(req: &str, domain_id: &str, account: &str, domain: &str) -> Value {
    json!({"request_id": req, "operation": "ensure_web_domain",
           "resource": {"id": domain_id, "account": account, "domain": domain,
                        "aliases": [format!("www.{domain}")]}})
}

pub fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

impl Node {
    /// A fresh node under `parent`, with state.db created by one runner pass.
    pub fn new(bins: &Bins, parent: &Path, name: &str) -> anyhow::Result<Node> {
        let dir = parent.join(name);
        std::fs::create_dir_all(&dir)?;
        let sysroot = dir.join("sysroot");
        std::fs::create_dir_all(&sysroot)?;
        let layout = Layout::new(dir.join("data"));
        let sim = simulator::SimExecutor::new(vec![]);
        let machine = std::sync::Arc::new(sim.machine());
        let provider = Provider::new(ProviderConfig {
            platform: Platform::Debian,
            root: sysroot.clone(),
            executor: std::sync::Arc::new(sim),
            machine,
            audit_dir: layout.root().join("log"),
        });
        testkit::seed_accounts(&provider)?;
        provider.ensure_dir(
            &provider.sysconf(provider.apache_layout().vhosts_dir),
            0o755,
        )?;
        layout.prepare_api_side(None)?;
        layout.prepare_root_side(None)?;
        let tls_dir = dir.join("tls");
        std::fs::create_dir_all(&tls_dir)?;
        let (cert, tls_key) = api::tls::write_key_pair(&tls_dir, "localhost")?;
        let pin = api::tls::pin_sha256(&std::fs::read_to_string(&cert)?)?;
        let key = api::generate_api_key();
        let key_file = dir.join("api-key.sha256");
        std::fs::write(&key_file, hex::encode(api::key_sha256(&key)))?;
        let port = free_port()?;
        let node = Node {
            layout,
            sysroot,
            provider,
            node_id: id(0xfeed, 1).parse().expect("a valid id"),
            url: format!("https://127.0.0.1:{port}"),
            key,
            pin,
            cert,
            tls_key,
            key_file,
            port,
            bins: bins.clone(),
            api: None,
            watch: None,
            dir,
        };
        node.pass()?;
        Ok(node)
    }

    fn runner_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["--data-dir".into(), self.layout.root().into()];
        args.extend(["--root".into(), self.sysroot.clone().into_os_string()]);
        for a in ["--node-id", self.node_id.as_str(), "--log", "warn"] {
            args.push(a.into());
        }
        args
    }

    /// The arguments of one `--once` pass with a long budget (a queue is applied whole).
    pub fn once_args(&self) -> Vec<OsString> {
        let mut args = self.runner_args();
        args.extend(["--once".into(), "--budget-ms".into(), "120000".into()]);
        args
    }

    pub fn runner(&self) -> &Path {
        &self.bins.runner
    }

    /// One runner pass that must succeed.
    pub fn pass(&self) -> anyhow::Result<()> {
        let args = self.once_args();
        let args: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
        child::run(&self.bins.runner, &args, &self.dir.join("runner-once.log"))
    }

    pub fn start_api(&mut self) -> anyhow::Result<()> {
        self.start_api_configured(None)
    }

    /// Starts the API with `config` as its configuration file's text (its `[api]` table),
    /// when given.
    pub fn start_api_configured(&mut self, config: Option<&str>) -> anyhow::Result<()> {
        let listen = format!("127.0.0.1:{}", self.port);
        let config_file = self.dir.join("config.toml");
        let mut args: Vec<&OsStr> = vec![
            "--data-dir".as_ref(),
            self.layout.root().as_os_str(),
            "--listen".as_ref(),
            listen.as_ref(),
            "--tls-cert".as_ref(),
            self.cert.as_os_str(),
            "--tls-key".as_ref(),
            self.tls_key.as_os_str(),
            "--api-key-sha256-file".as_ref(),
            self.key_file.as_os_str(),
            "--node-id".as_ref(),
            self.node_id.as_str().as_ref(),
            // The benchmark is one client address sending as fast as it can.
            "--rate-per-sec".as_ref(),
            "0".as_ref(),
        ];
        if let Some(text) = config {
            std::fs::write(&config_file, text)?;
            args.extend(["--config".as_ref(), config_file.as_os_str()]);
        }
        self.api = Some(child::start(
            &self.bins.api,
            &args,
            &self.dir.join("api.log"),
        )?);
        let client = self.client()?;
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok((200, _)) = client.health() {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!(
                    "the API did not answer /v1/health within 20 s; see {}",
                    self.dir.join("api.log").display()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn start_watch(&mut self) -> anyhow::Result<()> {
        let mut args = self.runner_args();
        args.push("--watch".into());
        let args: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
        self.watch = Some(child::start(
            &self.bins.runner,
            &args,
            &self.dir.join("runner-watch.log"),
        )?);
        // Its first pass runs at once; give it time to finish before anything is measured.
        std::thread::sleep(Duration::from_millis(500));
        Ok(())
    }

    pub fn stop_watch(&mut self) {
        if let Some(mut c) = self.watch.take() {
            child::stop(&mut c, Duration::from_secs(5));
        }
    }

    pub fn stop_api(&mut self) {
        if let Some(mut c) = self.api.take() {
            child::stop(&mut c, Duration::from_secs(10));
        }
    }

    /// A client with its own keep-alive connection(s), trusting only this node's certificate.
    pub fn client(&self) -> anyhow::Result<NodeClient> {
        Ok(
            NodeClient::new(&self.url, Some(self.key.clone()), &self.pin)?
                .with_timeout(Duration::from_secs(30)),
        )
    }

    /// Queues requests straight into inbox.db through the store's own group-commit writer,
    /// exactly as the API admits them (validated, then committed).
    pub fn queue(&self, bodies: impl Iterator<Item = Value>) -> anyhow::Result<usize> {
        let (inbox, writer) = Inbox::open(&self.layout.inbox_db())?;
        let (tx, rx) = mpsc::channel();
        let mut sent = 0;
        for body in bodies {
            let job = declarations::registry()
                .validate(body.to_string().as_bytes(), &self.node_id)
                .map_err(|e| anyhow::anyhow!("a benchmark request does not validate: {e}"))?;
            let tx = tx.clone();
            inbox.admit(job, registry::Origin::Api, move |r| {
                let _ = tx.send(r.is_ok());
            });
            sent += 1;
        }
        drop(tx);
        let ok = rx.iter().filter(|ok| *ok).count();
        drop(inbox);
        let _ = writer.join();
        if ok != sent {
            bail!("the inbox took {ok} of {sent} requests");
        }
        Ok(sent)
    }

    /// state.db's file change counter (bytes 24..28 of its header), which SQLite increments
    /// once per committed write transaction in rollback-journal mode: the number of durable
    /// commits, read from the file itself.
    pub fn state_commits(&self) -> anyhow::Result<u32> {
        commit_counter(&self.layout.state_db())
    }

    /// The pin of the API's certificate, as the client takes it.
    pub fn pin(&self) -> &str {
        &self.pin
    }

    /// The API key, in clear.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// A read-only connection to state.db, as the API opens it.
    pub fn state_ro(&self) -> anyhow::Result<rusqlite::Connection> {
        Ok(store::sqlite::open_state_ro(&self.layout.state_db())?)
    }

    pub fn api_pid(&self) -> Option<u32> {
        self.api.as_ref().map(Child::id)
    }

    pub fn watch_pid(&self) -> Option<u32> {
        self.watch.as_ref().map(Child::id)
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.stop_watch();
        self.stop_api();
    }
}

pub fn commit_counter(db: &Path) -> anyhow::Result<u32> {
    use std::io::Read;
    let mut header = [0u8; 28];
    std::fs::File::open(db)?.read_exact(&mut header)?;
    Ok(u32::from_be_bytes([
        header[24], header[25], header[26], header[27],
    ]))
}
