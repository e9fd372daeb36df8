//! A small synchronous client for the node's API, used by the `layerone` CLI, `layerone mcp`
//! and by every integration test.
//!
//! HTTP/1.1 over one of two transports, with no async runtime, so a CLI command or a test
//! thread can call it directly:
//!
//! - HTTPS: rustls (ring) on a plain `TcpStream`. Trust is a key or certificate pin, compared during
//!   the handshake before any header or body is sent ([`pin`]); [`NodeClient::new`] refuses an
//!   empty or malformed pin, so node administrator operations ([`NodeClient::submit_node_op`],
//!   which also requires the exact node id) cannot run over HTTPS without one.
//! - The API's local socket ([`NodeClient::local`]): plain HTTP on a unix stream socket, no
//!   TLS and no `Authorization` header. The API knows the caller by its peer credentials
//!   (the kernel's, not anything the client sends) and the socket's mode and group decide who
//!   may connect at all; its path is `/run/layerone/operators/api.sock` on an installed node
//!   ([`LOCAL_SOCKET`]) and `local_socket` in a dev node's `dev.json`.
//!
//! Typed requests and results
//! come from the registry's [`registry::Operation`] declarations ([`typed`]).
//! Connections are kept alive and reused (one per concurrent caller), and a reused connection
//! the server closed while idle is replaced transparently.

mod dev;
mod error;
mod http;
pub mod pin;
pub mod typed;

use std::io::{BufReader, ErrorKind, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use registry::{BlobId, Event, EventPage, JobView};
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use dev::DevInfo;
pub use error::{ClientError, TlsError};
pub use http::{MAX_RESPONSE_BODY, Response};
pub use typed::OpOutcome;

/// How long a request may wait for the server before [`ClientError::Timeout`], unless a call
/// says otherwise (a long-poll adds its own wait to it).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Idle connections kept for reuse; more concurrent callers simply open more.
const MAX_IDLE: usize = 16;
/// The largest page the events feed serves.
const EVENTS_PAGE: u32 = 1000;

/// How [`NodeClient::follow`] saw a job end.
pub(crate) enum Ended {
    /// A look at the job found it ended (superseded jobs always end here).
    View(JobView),
    /// Its `succeeded` or `failed` event, with the result or error.
    Event(Event),
}
/// The longest wait the events feed accepts.
const MAX_WAIT_SECS: u64 = 60;

/// The local socket of an installed node's API.
pub const LOCAL_SOCKET: &str = "/run/layerone/operators/api.sock";

/// One connection: TLS over TCP, or plain HTTP over the local socket.
enum Stream {
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
    Local(UnixStream),
}

impl Stream {
    fn set_timeouts(&self, timeout: Duration) -> std::io::Result<()> {
        match self {
            Stream::Tls(s) => {
                s.sock.set_read_timeout(Some(timeout))?;
                s.sock.set_write_timeout(Some(timeout))
            }
            Stream::Local(s) => {
                s.set_read_timeout(Some(timeout))?;
                s.set_write_timeout(Some(timeout))
            }
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tls(s) => s.read(buf),
            Stream::Local(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tls(s) => s.write(buf),
            Stream::Local(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Tls(s) => s.flush(),
            Stream::Local(s) => s.flush(),
        }
    }
}

/// How a client reaches the API.
enum Transport {
    Https {
        target: Target,
        server_name: ServerName<'static>,
        tls: Arc<ClientConfig>,
        /// The pin in its canonical text ([`pin::Pin`]'s `Display`), for error messages.
        pin_hex: String,
    },
    Local {
        path: PathBuf,
    },
}

/// Where the API is: parsed once from the URL.
#[derive(Clone, Debug)]
struct Target {
    host: String,
    port: u16,
    /// `host:port` as the `Host` header carries it (IPv6 in brackets).
    authority: String,
    /// A path prefix, for an API behind a proxy under a sub-path; empty or `/prefix`.
    base_path: String,
}

fn parse_url(url: &str) -> Result<Target, ClientError> {
    let bad = |why: &str| ClientError::Config(format!("{url:?}: {why}"));
    let rest = url
        .strip_prefix("https://")
        .ok_or_else(|| bad("the URL must start with https://"))?;
    let (authority, path) = match rest.find(['/', '?', '#']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    if authority.contains('@') {
        return Err(bad(
            "credentials in the URL are not supported; pass the API key",
        ));
    }
    if path.contains(['?', '#']) || !http::is_clean(path) || path.contains(' ') {
        return Err(bad(
            "the URL may carry a path prefix but no query or fragment",
        ));
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6
            .split_once(']')
            .ok_or_else(|| bad("unclosed [ in the host"))?;
        (host, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err(bad("no host"));
    }
    let port = match port {
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| bad("bad port"))?,
        None => 443,
    };
    let authority = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    Ok(Target {
        host: host.to_owned(),
        port,
        authority,
        base_path: path.trim_end_matches('/').to_owned(),
    })
}

/// Percent-encodes one path segment, so any id a caller passes reaches the server as one
/// segment (which then judges it).
fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A client for one node's API. Cheap to share between threads: each concurrent request uses
/// its own connection, and idle connections are reused.
pub struct NodeClient {
    transport: Transport,
    api_key: Option<String>,
    idle: Mutex<Vec<Stream>>,
    timeout: Duration,
    /// The furthest events cursor this client has read, so [`NodeClient::wait`] does not page
    /// through history it has already seen.
    cursor: AtomicI64,
    /// How many connections this client has opened (a reused one is not counted again).
    connects: AtomicU64,
}

impl std::fmt::Debug for NodeClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        let mut d = f.debug_struct("NodeClient");
        match &self.transport {
            Transport::Https { target, .. } => d
                .field("authority", &target.authority)
                .field("base_path", &target.base_path),
            Transport::Local { path } => d.field("local_socket", path),
        };
        d.field("has_key", &self.api_key.is_some())
            .finish_non_exhaustive()
    }
}

impl NodeClient {
    /// A client for `url` (`https://host[:port][/prefix]`) that trusts only the key or the
    /// certificate `pin_sha256` names (`spki-sha256:<hex>` or the certificate's `<hex>`, see
    /// [`pin`]). No connection is made yet.
    pub fn new(
        url: &str,
        api_key: Option<String>,
        pin_sha256: &str,
    ) -> Result<NodeClient, ClientError> {
        let target = parse_url(url)?;
        let pin = pin::parse_pin(pin_sha256).map_err(ClientError::Config)?;
        if let Some(key) = &api_key
            && (key.is_empty() || !http::is_clean(key) || key.contains(' '))
        {
            return Err(ClientError::Config(
                "the API key must be one non-empty token".into(),
            ));
        }
        let server_name = ServerName::try_from(target.host.clone()).map_err(|_| {
            ClientError::Config(format!(
                "{:?} is not a host name or an IP address",
                target.host
            ))
        })?;
        Ok(NodeClient::with_transport(
            Transport::Https {
                target,
                server_name,
                tls: pin::client_config(pin)?,
                pin_hex: pin.to_string(),
            },
            api_key,
        ))
    }

    /// A client for the API's local socket at `path` ([`LOCAL_SOCKET`] on an installed node):
    /// plain HTTP/1.1, no TLS, no key. The typed calls work over it as over HTTPS. No
    /// connection is made yet.
    pub fn local(path: impl Into<PathBuf>) -> NodeClient {
        NodeClient::with_transport(Transport::Local { path: path.into() }, None)
    }

    fn with_transport(transport: Transport, api_key: Option<String>) -> NodeClient {
        NodeClient {
            transport,
            api_key,
            idle: Mutex::new(Vec::new()),
            timeout: DEFAULT_TIMEOUT,
            cursor: AtomicI64::new(0),
            connects: AtomicU64::new(0),
        }
    }

    /// The local socket this client talks to, if it is a local client.
    pub fn local_socket(&self) -> Option<&Path> {
        match &self.transport {
            Transport::Local { path } => Some(path),
            Transport::Https { .. } => None,
        }
    }

    /// The same client with another per-request timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> NodeClient {
        self.timeout = timeout;
        self
    }

    /// How many connections (TCP+TLS, or to the local socket) this client has opened so far: with keep-alive, far
    /// fewer than the requests it sent.
    pub fn connections_opened(&self) -> u64 {
        self.connects.load(Ordering::Relaxed)
    }

    /// Sends one request and returns whatever the server answered, error statuses included.
    /// Adds `Authorization: Bearer` when the client has a key and `Content-Type:
    /// application/json` when there is a body (unless `extra_headers` sets one).
    pub fn request(
        &self,
        method: &str,
        path_and_query: &str,
        body: Option<&[u8]>,
        extra_headers: &[(&str, &str)],
    ) -> Result<Response, ClientError> {
        self.request_within(method, path_and_query, body, extra_headers, self.timeout)
    }

    fn request_within(
        &self,
        method: &str,
        path_and_query: &str,
        body: Option<&[u8]>,
        extra_headers: &[(&str, &str)],
        timeout: Duration,
    ) -> Result<Response, ClientError> {
        if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err(ClientError::Config(format!("bad method {method:?}")));
        }
        if !path_and_query.starts_with('/')
            || !http::is_clean(path_and_query)
            || path_and_query.contains(' ')
        {
            return Err(ClientError::Config(format!("bad path {path_and_query:?}")));
        }
        let mut headers: Vec<(&str, &str)> = Vec::with_capacity(extra_headers.len() + 2);
        let bearer = self.api_key.as_ref().map(|k| format!("Bearer {k}"));
        if let Some(bearer) = &bearer
            && !extra_headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
        {
            headers.push(("Authorization", bearer));
        }
        if body.is_some()
            && !extra_headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
        {
            headers.push(("Content-Type", "application/json"));
        }
        for (name, value) in extra_headers {
            let name_ok =
                !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
            if !name_ok || !http::is_clean(value) {
                return Err(ClientError::Config(format!("bad header {name:?}")));
            }
            headers.push((name, value));
        }
        let (base_path, authority) = match &self.transport {
            Transport::Https { target, .. } => {
                (target.base_path.as_str(), target.authority.as_str())
            }
            // HTTP/1.1 requires a Host header; a unix socket has no authority of its own.
            Transport::Local { .. } => ("", "localhost"),
        };
        let target = format!("{base_path}{path_and_query}");
        let head = http::request_head(method, &target, authority, &headers, body.map(<[u8]>::len));

        // One retry, only on a reused connection that ended before any byte of an answer: the
        // server closed it while it sat idle. Submitting is idempotent by request_id, so even
        // a POST is safe to send again.
        loop {
            let pooled = self
                .idle
                .lock()
                .expect("the idle pool lock is never poisoned: nothing panics while holding it")
                .pop();
            let reused = pooled.is_some();
            let mut stream = match pooled {
                Some(stream) => stream,
                None => self.connect()?,
            };
            stream.set_timeouts(timeout).map_err(ClientError::Io)?;
            let written = http::write_request(&mut stream, &head, body);
            let answer = match written {
                Ok(()) => {
                    let mut reader = BufReader::new(&mut stream);
                    let answer = http::read_response(&mut reader, method == "HEAD");
                    // Bytes beyond the answer mean the connection is out of step: drop it.
                    let clean = reader.buffer().is_empty();
                    answer.map(|(resp, reusable)| (resp, reusable && clean))
                }
                Err(e) if reused && is_closed(&e) => Err(http::ReadFailure::ClosedBeforeAnswer),
                Err(e) => Err(http::ReadFailure::Io(e)),
            };
            match answer {
                Ok((response, reusable)) => {
                    if reusable {
                        let mut idle = self.idle.lock().expect(
                            "the idle pool lock is never poisoned: nothing panics while holding it",
                        );
                        if idle.len() < MAX_IDLE {
                            idle.push(stream);
                        }
                    }
                    return Ok(response);
                }
                Err(http::ReadFailure::ClosedBeforeAnswer) if reused => continue,
                Err(http::ReadFailure::ClosedBeforeAnswer) => {
                    return Err(ClientError::Http(
                        "the server closed the connection without answering".into(),
                    ));
                }
                Err(http::ReadFailure::Malformed(why)) => return Err(ClientError::Http(why)),
                Err(http::ReadFailure::Io(e))
                    if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) =>
                {
                    return Err(ClientError::Timeout(format!(
                        "no answer to {method} {path_and_query} within {timeout:?}"
                    )));
                }
                Err(http::ReadFailure::Io(e)) => return Err(ClientError::Io(e)),
            }
        }
    }

    /// Opens a connection: to the local socket, or over TCP with the TLS handshake completed,
    /// which is where the pin is checked: nothing of a request is written before this returns.
    fn connect(&self) -> Result<Stream, ClientError> {
        let (target, server_name, tls, pin_hex) = match &self.transport {
            Transport::Https {
                target,
                server_name,
                tls,
                pin_hex,
            } => (target, server_name, tls, pin_hex),
            Transport::Local { path } => {
                let sock = UnixStream::connect(path).map_err(|source| ClientError::Connect {
                    addr: path.display().to_string(),
                    source,
                })?;
                self.connects.fetch_add(1, Ordering::Relaxed);
                return Ok(Stream::Local(sock));
            }
        };
        let addr_text = target.authority.clone();
        let addrs = (target.host.as_str(), target.port)
            .to_socket_addrs()
            .map_err(|source| ClientError::Connect {
                addr: addr_text.clone(),
                source,
            })?;
        let mut last = None;
        let mut sock = None;
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
                Ok(s) => {
                    sock = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let sock = sock.ok_or_else(|| ClientError::Connect {
            addr: addr_text.clone(),
            source: last.unwrap_or_else(|| {
                std::io::Error::new(ErrorKind::NotFound, "the host has no address")
            }),
        })?;
        let setup = |s: &TcpStream| {
            s.set_nodelay(true)?;
            s.set_read_timeout(Some(CONNECT_TIMEOUT))?;
            s.set_write_timeout(Some(CONNECT_TIMEOUT))
        };
        setup(&sock).map_err(|source| ClientError::Connect {
            addr: addr_text.clone(),
            source,
        })?;
        let conn = ClientConnection::new(tls.clone(), server_name.clone())
            .map_err(|e| ClientError::Tls(TlsError::Handshake(std::io::Error::other(e))))?;
        self.connects.fetch_add(1, Ordering::Relaxed);
        let mut stream = StreamOwned::new(conn, sock);
        while stream.conn.is_handshaking() {
            if let Err(e) = stream.conn.complete_io(&mut stream.sock) {
                if let Some(presented) = pin::pin_mismatch(&e) {
                    return Err(TlsError::PinMismatch {
                        expected: pin_hex.clone(),
                        presented,
                    }
                    .into());
                }
                if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) {
                    return Err(ClientError::Timeout(format!(
                        "TLS handshake with {addr_text}"
                    )));
                }
                return Err(TlsError::Handshake(e).into());
            }
        }
        Ok(Stream::Tls(Box::new(stream)))
    }

    /// Submits a job envelope. `Ok` is the 202's job view: received (or the same job again).
    pub fn submit(&self, envelope: &Value) -> Result<JobView, ClientError> {
        let body = serde_json::to_vec(envelope)
            .map_err(|e| ClientError::Config(format!("the envelope does not serialize: {e}")))?;
        let resp = self.request("POST", "/v1/jobs", Some(&body), &[])?;
        expect_json(&resp)
    }

    /// One job's current view.
    pub fn job(&self, request_id: &str) -> Result<JobView, ClientError> {
        let resp = self.request(
            "GET",
            &format!("/v1/jobs/{}", encode_segment(request_id)),
            None,
            &[],
        )?;
        expect_json(&resp)
    }

    /// Job changes after `after`, waiting up to `wait_secs` (0 to 60) for the first one.
    pub fn events(&self, after: i64, wait_secs: u32, limit: u32) -> Result<EventPage, ClientError> {
        let path = format!("/v1/events?after={after}&wait={wait_secs}&limit={limit}");
        let timeout = self.timeout + Duration::from_secs(u64::from(wait_secs));
        let resp = self.request_within("GET", &path, None, &[], timeout)?;
        let page: EventPage = expect_json(&resp)?;
        self.cursor.fetch_max(page.next, Ordering::Relaxed);
        Ok(page)
    }

    /// The audit trail after `after` (`GET /v1/audit`): `{entries, next}`, at most `limit`
    /// entries.
    pub fn audit(&self, after: i64, limit: u32) -> Result<Value, ClientError> {
        let path = format!("/v1/audit?after={after}&limit={limit}");
        expect_json(&self.request("GET", &path, None, &[])?)
    }

    /// Waits until the job reaches a terminal state (`succeeded`, `failed`, `superseded`) and
    /// returns it. Blocks in the events feed's long-poll between looks at the job, so it costs
    /// a request per change on the node, not a tight loop. Where the feed was trimmed past the
    /// client's cursor (410 `events_lost`), the job's end may be among the events lost: the
    /// job is read again directly, and the feed followed on from the oldest event it holds.
    pub fn wait(&self, request_id: &str, timeout: Duration) -> Result<JobView, ClientError> {
        match self.follow(request_id, timeout)? {
            Ended::View(view) => Ok(view),
            Ended::Event(_) => self.job(request_id),
        }
    }

    /// Follows a job until it ends: its view, if a look at the job finds it ended, or its
    /// final event, if the feed reports it ended with its result or error (no further GET).
    pub(crate) fn follow(&self, request_id: &str, timeout: Duration) -> Result<Ended, ClientError> {
        let deadline = Instant::now() + timeout;
        // Read the cursor before looking at the job: any change after the look has an event
        // after this cursor, so it cannot slip between the two.
        let mut cursor = self.cursor.load(Ordering::Relaxed);
        loop {
            let view = self.job(request_id)?;
            if view.state.is_terminal() {
                return Ok(Ended::View(view));
            }
            loop {
                let remaining = deadline.saturating_duration_since(Instant::now());
                if remaining.is_zero() {
                    return Err(ClientError::Timeout(format!(
                        "job {request_id} is still {} after {timeout:?}",
                        view.state.as_str()
                    )));
                }
                let wait = remaining
                    .as_secs_f64()
                    .ceil()
                    .clamp(1.0, MAX_WAIT_SECS as f64) as u32;
                let page = match self.events(cursor, wait, EVENTS_PAGE) {
                    Ok(page) => page,
                    Err(e) => match e.events_lost() {
                        // The events after the cursor were trimmed: resume before the oldest
                        // one left, then look at the job again (any change after that look has
                        // an event after the new cursor).
                        Some(first_cursor) => {
                            cursor = cursor.max(first_cursor - 1);
                            self.cursor.fetch_max(cursor, Ordering::Relaxed);
                            break;
                        }
                        None => return Err(e),
                    },
                };
                cursor = page.next.max(cursor);
                let mine: Vec<Event> = page
                    .events
                    .into_iter()
                    .filter(|e| e.request_id.as_deref() == Some(request_id))
                    .collect();
                if let Some(end) = mine
                    .iter()
                    .find(|e| e.result.is_some() || e.error.is_some())
                {
                    return Ok(Ended::Event(end.clone()));
                }
                if !mine.is_empty() {
                    break;
                }
                // A full page means the feed has more already: keep reading without waiting
                // for the job (the wait parameter only applies when nothing is there).
            }
        }
    }

    /// Uploads a blob under its SHA-256 (what a job then names, e.g. a certificate bundle or
    /// an archive to restore) and returns that name. Uploading the same content twice is fine.
    pub fn put_blob(&self, content: &[u8]) -> Result<BlobId, ClientError> {
        use sha2::Digest as _;
        let id = hex::encode(sha2::Sha256::digest(content));
        let resp = self.request(
            "PUT",
            &format!("/v1/blobs/{id}"),
            Some(content),
            &[("Content-Type", "application/octet-stream")],
        )?;
        let answer: Value = expect_json(&resp)?;
        answer["blob"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .filter(|blob: &BlobId| blob.as_str() == id)
            .ok_or_else(|| ClientError::Http("the node stored the blob under another name".into()))
    }

    /// Downloads a blob the node produced (an account's backup), checked against its name.
    /// Held in memory: at most the client's response limit.
    pub fn get_blob(&self, id: &BlobId) -> Result<Vec<u8>, ClientError> {
        use sha2::Digest as _;
        let resp = self.request("GET", &format!("/v1/blobs/{id}"), None, &[])?;
        if !(200..300).contains(&resp.status) {
            return Err(api_error(&resp));
        }
        if hex::encode(sha2::Sha256::digest(&resp.body)) != id.as_str() {
            return Err(ClientError::Http(format!(
                "the blob downloaded as {id} has another SHA-256"
            )));
        }
        Ok(resp.body)
    }

    /// Every operation this node offers, with schemas and examples.
    pub fn catalogue(&self) -> Result<Value, ClientError> {
        expect_json(&self.request("GET", "/v1/catalogue", None, &[])?)
    }

    /// The node's OpenAPI 3.1 document.
    pub fn openapi(&self) -> Result<Value, ClientError> {
        expect_json(&self.request("GET", "/v1/openapi.json", None, &[])?)
    }

    /// `GET /v1/health` (no key needed): its status and JSON body, whatever the status.
    pub fn health(&self) -> Result<(u16, Value), ClientError> {
        let resp = self.request("GET", "/v1/health", None, &[])?;
        Ok((resp.status, resp.json()?))
    }
}

fn is_closed(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::BrokenPipe
            | ErrorKind::ConnectionReset
            | ErrorKind::ConnectionAborted
            | ErrorKind::UnexpectedEof
    )
}

/// A 2xx body as `T`, or the API's error.
fn expect_json<T: DeserializeOwned>(resp: &Response) -> Result<T, ClientError> {
    if !(200..300).contains(&resp.status) {
        return Err(api_error(resp));
    }
    serde_json::from_slice(&resp.body).map_err(|e| {
        ClientError::Http(format!(
            "the body of a {} answer is not what the API documents: {e}",
            resp.status
        ))
    })
}

/// The API's error body (`{code, message, field}`), or a stand-in when the body is not one
/// (a proxy's page, hyper's empty 431).
fn api_error(resp: &Response) -> ClientError {
    #[derive(serde::Deserialize)]
    struct Body {
        code: String,
        message: String,
        #[serde(default)]
        field: Option<String>,
        #[serde(default)]
        first_cursor: Option<i64>,
    }
    let retry_after_secs = resp
        .header("retry-after")
        .and_then(|v| v.trim().parse().ok());
    match serde_json::from_slice::<Body>(&resp.body) {
        Ok(b) => ClientError::Api {
            status: resp.status,
            code: b.code,
            message: b.message,
            field: b.field.unwrap_or_default(),
            retry_after_secs,
            first_cursor: b.first_cursor,
        },
        Err(_) => ClientError::Api {
            status: resp.status,
            code: format!("http_{}", resp.status),
            message: String::from_utf8_lossy(&resp.body)
                .chars()
                .take(200)
                .collect(),
            field: String::new(),
            retry_after_secs,
            first_cursor: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_into_host_port_and_prefix() {
        let t = parse_url("https://127.0.0.1:8443").unwrap();
        assert_eq!(
            (
                t.host.as_str(),
                t.port,
                t.authority.as_str(),
                t.base_path.as_str()
            ),
            ("127.0.0.1", 8443, "127.0.0.1:8443", "")
        );
        let t = parse_url("https://node.example.com/api/").unwrap();
        assert_eq!((t.port, t.base_path.as_str()), (443, "/api"));
        let t = parse_url("https://[::1]:9000").unwrap();
        assert_eq!(
            (t.host.as_str(), t.authority.as_str()),
            ("::1", "[::1]:9000")
        );
        for bad in [
            "http://127.0.0.1",
            "https://",
            "https://u:p@h",
            "https://h:0",
            "https://h:x",
            "https://h/?q=1",
            "https://[::1",
        ] {
            assert!(parse_url(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn a_client_cannot_be_built_without_a_valid_pin() {
        assert!(matches!(
            NodeClient::new("https://127.0.0.1:1", None, ""),
            Err(ClientError::Config(_))
        ));
        assert!(NodeClient::new("https://127.0.0.1:1", Some("k".into()), &"00".repeat(32)).is_ok());
        assert!(
            NodeClient::new(
                "https://127.0.0.1:1",
                Some("a\r\nb".into()),
                &"00".repeat(32)
            )
            .is_err()
        );
    }

    /// A real unix socket served by a thread that answers two requests on one connection:
    /// the client speaks plain HTTP to it, sends no key, and reuses the connection.
    #[test]
    fn a_local_client_speaks_plain_http_over_the_socket_without_a_key() {
        use std::io::BufRead as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("api.sock");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let server = std::thread::spawn(move || {
            let (sock, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(sock.try_clone().unwrap());
            let mut heads = Vec::new();
            for _ in 0..2 {
                let mut head = String::new();
                loop {
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    if line == "\r\n" || line.is_empty() {
                        break;
                    }
                    head.push_str(&line);
                }
                heads.push(head);
                (&sock)
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 15\r\n\r\n{\"status\":\"ok\"}")
                    .unwrap();
            }
            heads
        });
        let client = NodeClient::local(&path);
        assert_eq!(client.local_socket(), Some(path.as_path()));
        for _ in 0..2 {
            let (status, body) = client.health().unwrap();
            assert_eq!((status, body["status"].as_str()), (200, Some("ok")));
        }
        assert_eq!(client.connections_opened(), 1);
        let heads = server.join().unwrap();
        for head in heads {
            assert!(
                head.starts_with("GET /v1/health HTTP/1.1\r\nHost: localhost\r\n"),
                "{head}"
            );
            assert!(
                !head.to_ascii_lowercase().contains("authorization"),
                "{head}"
            );
        }
        // Nothing listening: a connect error naming the socket, not a panic.
        drop(std::fs::remove_file(&path));
        let err = NodeClient::local(&path).health().unwrap_err();
        assert!(
            matches!(err, ClientError::Connect { ref addr, .. } if addr.ends_with("api.sock")),
            "{err:?}"
        );
    }

    #[test]
    fn path_segments_are_encoded() {
        assert_eq!(encode_segment("ab-_.~9"), "ab-_.~9");
        assert_eq!(encode_segment("../x y"), "..%2Fx%20y");
    }
}
