//! The harness: a real API on 127.0.0.1:0 over real HTTPS, with real SQLite databases in a
//! temporary data directory, reached through the real client. Root's side is simulated with
//! the store's own root handles: [`Node::ingest`] reads the inbox as the runner does and admits
//! it into state.db, [`Node::finish_next`] and [`Node::end_next`] claim and complete a job.

#![allow(dead_code)] // Each test uses a part of the harness.

use std::io::{ErrorKind, Read};
use std::sync::Mutex;

use api::{ApiConfig, Limits, RunningApi};
use client::NodeClient;
use registry::{Hex32, OpError};
use serde_json::{Value, json};
use state::{IngestReport, Outcome, ResourceChange, StateDb};
use store::Layout;

pub struct Node {
    pub dir: tempfile::TempDir,
    pub layout: Layout,
    pub node_id: Hex32,
    pub key: String,
    pub pin: String,
    /// The key pin (`spki-sha256:<hex>`) of the same certificate.
    pub spki_pin: String,
    pub url: String,
    /// The local door's socket, when the node opened one ([`Node::start_local`]).
    pub socket: Option<std::path::PathBuf>,
    state: Mutex<StateDb>,
    api: Option<RunningApi>,
    runtime: tokio::runtime::Runtime,
}

/// A fresh 32-hex id.
pub fn hex32() -> Hex32 {
    api::generate_api_key()[..32]
        .parse()
        .expect("32 hex digits of a fresh key are a Hex32")
}

impl Node {
    pub fn start() -> Node {
        Node::start_with(Limits::default())
    }

    pub fn start_with(limits: Limits) -> Node {
        Node::start_doors(limits, false)
    }

    /// A node that also opens the local door, admitting the user running the test.
    pub fn start_local(limits: Limits) -> Node {
        Node::start_doors(limits, true)
    }

    fn start_doors(limits: Limits, local: bool) -> Node {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let layout = Layout::new(dir.path().join("data"));
        layout.prepare_root_side(None).expect("prepare root's side");
        layout
            .prepare_api_side(None)
            .expect("prepare the API's side");
        // Root creates state.db before the API ever reads it.
        let state = StateDb::open(&layout.state_db()).expect("create state.db");
        let tls_dir = dir.path().join("tls");
        std::fs::create_dir(&tls_dir).expect("a TLS directory");
        let (cert, key_pem) =
            api::tls::write_key_pair(&tls_dir, "node.test").expect("a self-signed pair");
        let pins = api::tls::Pins::of(&std::fs::read_to_string(&cert).expect("cert.pem"))
            .expect("the pins");
        let key = api::generate_api_key();
        let node_id = hex32();
        let socket = local.then(|| dir.path().join("api.sock"));
        let config = ApiConfig {
            data_dir: layout.root().to_owned(),
            listen: "127.0.0.1:0".parse().expect("an address"),
            tls_cert: cert,
            tls_key: key_pem,
            key_sha256: api::key_sha256(&key),
            node_id: node_id.clone(),
            local_socket: socket.clone().map(|path| api::LocalSocket {
                path,
                operators: api::Operators {
                    // SAFETY: getuid has no preconditions and cannot fail.
                    uids: vec![unsafe { libc::getuid() }],
                    gid: None,
                },
            }),
            limits,
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let api = runtime
            .block_on(api::start(config))
            .expect("the API starts");
        let url = format!("https://{}", api.addr);
        Node {
            dir,
            layout,
            node_id,
            key,
            pin: pins.certificate,
            spki_pin: pins.spki,
            url,
            socket,
            state: Mutex::new(state),
            api: Some(api),
            runtime,
        }
    }

    /// A client with the right key and pin.
    pub fn client(&self) -> NodeClient {
        NodeClient::new(&self.url, Some(self.key.clone()), &self.pin).expect("a client")
    }

    pub fn client_with(&self, key: Option<&str>, pin: &str) -> NodeClient {
        NodeClient::new(&self.url, key.map(str::to_owned), pin).expect("a client")
    }

    /// What root's runner does first in a pass: admit the inbox rows above its watermark.
    pub fn ingest(&self) -> IngestReport {
        let mut state = self.state.lock().expect("state lock");
        let watermark = state.watermark().expect("the watermark");
        let rows = inbox::read_rows(&self.layout.inbox_db(), watermark, 1000)
            .expect("read the inbox as root");
        state
            .ingest(declarations::registry(), &self.node_id, &rows)
            .expect("ingest")
    }

    /// Claims the next queued job and completes it with `result`, as the runner would after
    /// applying it.
    pub fn finish_next(&self, result: Value) -> Option<String> {
        self.end_next(Ok(result))
    }

    /// Claims the next queued job and ends it with `result` (a result or an error).
    pub fn end_next(&self, result: Result<Value, OpError>) -> Option<String> {
        let mut state = self.state.lock().expect("state lock");
        let job = state.claim_next().expect("claim")?;
        state
            .complete(
                &job,
                &Outcome {
                    result,
                    resource: ResourceChange::Keep,
                },
            )
            .expect("complete");
        Some(job.request_id)
    }

    /// Root's trim of the events feed down to its newest `keep` events, as a pass ends with
    /// it (a node keeps 100,000). Returns how many went.
    pub fn trim_events(&self, keep: i64) -> usize {
        let state = self.state.lock().expect("state lock");
        state.trim_events(keep).expect("trim the events")
    }

    /// How many rows the inbox holds, read the way root reads it.
    pub fn inbox_len(&self) -> usize {
        inbox::read_rows(&self.layout.inbox_db(), 0, 100_000)
            .expect("read the inbox")
            .len()
    }

    /// A valid envelope for the first tenant-scope operation's example, under `request_id`.
    pub fn example_envelope(&self, request_id: &Hex32) -> Value {
        let op = declarations::registry()
            .operations()
            .find(|op| op.scope() == registry::Scope::Tenant)
            .expect("the registry has a tenant operation");
        json!({"request_id": request_id, "operation": op.name(), "resource": op.example()})
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Some(api) = self.api.take() {
            let stopped = self.runtime.block_on(api.stop());
            if let Err(e) = stopped
                && !std::thread::panicking()
            {
                panic!("the API did not stop cleanly: {e:#}");
            }
        }
    }
}

/// Reads one response head and `Content-Length` body off a raw connection.
pub fn read_response(stream: &mut impl Read) -> std::io::Result<(u16, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte)? == 0 {
            return Err(ErrorKind::UnexpectedEof.into());
        }
        buf.push(byte[0]);
        assert!(buf.len() < 64 * 1024, "an endless head");
    }
    let head = String::from_utf8_lossy(&buf).to_string();
    let status: u16 = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status in {head:?}")))?;
    let len: usize = head
        .lines()
        .find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    stream.read_exact(&mut body)?;
    Ok((status, body))
}

/// Whether the peer has closed the connection: a read returns end of file or an error
/// other than a timeout.
pub fn closed(read: std::io::Result<usize>) -> bool {
    match read {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
    }
}
