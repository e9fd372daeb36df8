//! The front door: every method on every route (from the OpenAPI document) and on unknown
//! paths needs the key, except `GET /v1/health`; slow clients are cut off by the server's
//! timeouts; the number of open connections is capped; and no error body the API produces
//! names a filesystem path, SQL or a backtrace. Real HTTPS on 127.0.0.1, the real client, and
//! a raw rustls client for what the real client would never do (trickle bytes, hold sockets).

use crate::common;

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use client::{ClientError, Response};
use common::{Node, closed, hex32, read_response};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, SignatureScheme, StreamOwned};
use serde_json::{Value, json};

/// How long the tests wait for the server to act on a timeout before calling it a failure.
/// A bound on the wait, not a performance figure: the server's own timeouts are 1 s here.
const BOUND: Duration = Duration::from_secs(30);

const METHODS: &[&str] = &[
    "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "FOO",
];

/// Text that must never appear in an error body: the node's own paths, SQL, and the marks of
/// a Rust panic or backtrace. Text the client sent itself may be quoted back in a message
/// naming what was wrong with it: `sent` is skipped for that reason.
fn assert_clean(node: &Node, what: &str, resp: &Response) {
    assert_clean_sent(node, what, resp, "");
}

fn assert_clean_sent(node: &Node, what: &str, resp: &Response, sent: &str) {
    if resp.status < 400 {
        return;
    }
    let sent = sent.to_lowercase();
    let body = String::from_utf8_lossy(&resp.body);
    let dir = node.dir.path().display().to_string();
    let lower = body.to_lowercase();
    for needle in [
        dir.as_str(),
        "/tmp/",
        "/etc/",
        "/var/",
        "/home/",
        "/root/",
        env!("CARGO_MANIFEST_DIR"),
        ".db",
        "sqlite",
        "select ",
        "insert ",
        "update ",
        "delete from",
        "create table",
        "pragma",
        "panicked",
        "backtrace",
        ".rs:",
        "src/",
        "thread '",
        "no such table",
        "no such column",
        "errno",
        "os error",
    ] {
        let needle_lower = needle.to_lowercase();
        if sent.contains(&needle_lower) {
            continue;
        }
        assert!(
            !lower.contains(&needle_lower),
            "{what}: the {} body leaks {needle:?}: {body}",
            resp.status
        );
    }
    if !resp.body.is_empty() {
        let value: Value = serde_json::from_slice(&resp.body)
            .unwrap_or_else(|e| panic!("{what}: a {} body is not JSON ({e}): {body}", resp.status));
        let mut keys: Vec<&str> = value
            .as_object()
            .unwrap_or_else(|| panic!("{what}: not an object: {body}"))
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(keys, ["code", "field", "message"], "{what}: {body}");
    }
}

/// Every path of the OpenAPI document with its parameters filled in, and paths no route has.
fn all_paths(node: &Node) -> Vec<String> {
    let document = node.client().openapi().expect("the OpenAPI document");
    let mut paths: Vec<String> = document["paths"]
        .as_object()
        .expect("the document has paths")
        .keys()
        .map(|p| p.replace("{request_id}", hex32().as_str()))
        .collect();
    assert!(paths.len() >= 5, "the document lists only {paths:?}");
    paths.extend(
        [
            "/",
            "/v1",
            "/v1/",
            "/v1/nope",
            "/v1/health/",
            "/v1//health",
            "//v1/health",
            "/V1/HEALTH",
            "/v1/health%00",
            "/v1/health/../catalogue",
            "/v1/./health",
            "/v1/jobs/",
            "/v1/jobs/not-hex",
            "/v1/jobs/%2e%2e%2fhealth",
            "/v1/events?after=0",
            "/v1/catalogue?x=1",
            "/v1/blobs/abc",
            "/metrics",
            "/.env",
        ]
        .map(str::to_owned),
    );
    paths
}

#[test]
fn every_method_on_every_route_without_the_right_key_is_401_except_get_health() {
    // Over a thousand requests from one address: the rate limit (tested on its own) is off.
    let node = Node::start_with(api::Limits {
        rate_per_sec: 0,
        ..api::Limits::default()
    });
    let paths = all_paths(&node);
    let wrong = api::generate_api_key();
    let clients = [
        ("no key", node.client_with(None, &node.pin), vec![]),
        (
            "wrong key",
            node.client_with(Some(&wrong), &node.pin),
            vec![],
        ),
        (
            "empty bearer",
            node.client_with(None, &node.pin),
            vec![("Authorization", "Bearer ".to_owned())],
        ),
        (
            "basic with the right key",
            node.client_with(None, &node.pin),
            vec![("Authorization", format!("Basic {}", node.key))],
        ),
        (
            "right key with a suffix",
            node.client_with(None, &node.pin),
            vec![("Authorization", format!("Bearer {}x", node.key))],
        ),
    ];
    let mut checked = 0;
    for (who, client, headers) in &clients {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        for path in &paths {
            for method in METHODS {
                let body = matches!(*method, "POST" | "PUT" | "PATCH")
                    .then(|| node.example_envelope(&hex32()).to_string());
                let resp = client
                    .request(method, path, body.as_deref().map(str::as_bytes), &headers)
                    .unwrap_or_else(|e| panic!("{who} {method} {path}: {e}"));
                let what = format!("{who} {method} {path}");
                assert_clean(&node, &what, &resp);
                let public =
                    *method == "GET" && (path == "/v1/health" || path.starts_with("/v1/health?"));
                if public {
                    assert_eq!(resp.status, 200, "{what}");
                    continue;
                }
                assert_eq!(resp.status, 401, "{what}");
                assert_eq!(resp.header("www-authenticate"), Some("Bearer"), "{what}");
                if *method != "HEAD" {
                    let body = resp.json().expect("JSON");
                    assert_eq!(body["code"], "unauthorized", "{what}");
                }
                checked += 1;
            }
        }
    }
    assert_eq!(
        node.inbox_len(),
        0,
        "a request without the key was admitted"
    );
    assert!(checked >= clients.len() * 5 * METHODS.len(), "{checked}");
    // With the key, the same enumeration never answers 401 or a 5xx.
    let client = node.client();
    for path in &paths {
        for method in METHODS {
            let resp = client
                .request(method, path, None, &[])
                .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
            assert_clean(&node, &format!("keyed {method} {path}"), &resp);
            assert!(
                resp.status != 401 && resp.status < 500,
                "keyed {method} {path}: {}",
                resp.status
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// Raw connections.

/// Accepts any certificate: these raw connections test the server, not the pin.
#[derive(Debug)]
struct AnyCert(rustls::crypto::WebPkiSupportedAlgorithms);

impl ServerCertVerifier for AnyCert {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(m, c, d, &self.0)
    }
    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(m, c, d, &self.0)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

type Tls = StreamOwned<ClientConnection, TcpStream>;

fn addr(node: &Node) -> String {
    node.url.trim_start_matches("https://").to_owned()
}

/// A TLS connection whose handshake has completed.
fn raw_tls(node: &Node) -> std::io::Result<Tls> {
    raw_tls_from(node, None)
}

/// A TLS connection from `source` (a loopback address other than 127.0.0.1), handshake done.
fn raw_tls_from(node: &Node, source: Option<IpAddr>) -> std::io::Result<Tls> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let algorithms = provider.signature_verification_algorithms;
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCert(algorithms)))
        .with_no_client_auth();
    let tcp = match source {
        None => TcpStream::connect(addr(node))?,
        Some(source) => connect_from(source, &addr(node))?,
    };
    tcp.set_read_timeout(Some(BOUND))?;
    tcp.set_write_timeout(Some(BOUND))?;
    let conn = ClientConnection::new(
        Arc::new(config),
        ServerName::try_from("localhost").expect("a name"),
    )
    .map_err(std::io::Error::other)?;
    let mut tls = StreamOwned::new(conn, tcp);
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock)?;
    }
    Ok(tls)
}

/// A TCP connection to `to` from `source`, bound before it connects.
fn connect_from(source: IpAddr, to: &str) -> std::io::Result<TcpStream> {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    let runtime = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    });
    let to: SocketAddr = to.parse().map_err(std::io::Error::other)?;
    runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(SocketAddr::new(source, 0))?;
        let stream = tokio::time::timeout(Duration::from_secs(5), socket.connect(to))
            .await
            .map_err(|_| std::io::Error::from(ErrorKind::TimedOut))??;
        let stream = stream.into_std()?;
        stream.set_nonblocking(false)?;
        Ok(stream)
    })
}

fn slow_limits() -> api::Limits {
    api::Limits {
        header_read_timeout: Duration::from_secs(1),
        body_read_timeout: Duration::from_secs(1),
        handshake_timeout: Duration::from_secs(1),
        ..api::Limits::default()
    }
}

#[test]
fn a_client_trickling_its_header_is_disconnected() {
    let node = Node::start_with(slow_limits());
    let mut tls = raw_tls(&node).expect("a TLS connection");
    tls.sock
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    tls.write_all(b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\n")
        .unwrap();
    let started = Instant::now();
    let mut received = Vec::new();
    let mut disconnected = false;
    // One header byte every 200 ms, never finishing the head, until the server hangs up.
    while started.elapsed() < BOUND {
        if tls.write_all(b"X").and_then(|()| tls.flush()).is_err() {
            disconnected = true;
            break;
        }
        let mut buf = [0u8; 4096];
        let read = tls.read(&mut buf);
        if let Ok(n) = read {
            received.extend_from_slice(&buf[..n]);
        }
        if closed(read) {
            disconnected = true;
            break;
        }
    }
    assert!(
        disconnected,
        "a client trickling its header was still connected after {BOUND:?}"
    );
    let text = String::from_utf8_lossy(&received);
    assert!(
        !text.contains(" 200 "),
        "the server answered an unfinished head: {text}"
    );
    // Everyone else is served.
    assert_eq!(node.client().health().expect("health").0, 200);
}

#[test]
fn a_client_that_never_completes_the_tls_handshake_is_disconnected() {
    let node = Node::start_with(slow_limits());
    let mut tcp = TcpStream::connect(addr(&node)).unwrap();
    tcp.set_read_timeout(Some(BOUND)).unwrap();
    // Half a ClientHello record header, then silence.
    tcp.write_all(&[0x16, 0x03]).unwrap();
    let mut buf = [0u8; 64];
    assert!(
        closed(tcp.read(&mut buf)),
        "a silent handshake was still open after {BOUND:?}"
    );
    assert_eq!(node.client().health().expect("health").0, 200);
}

#[test]
fn a_client_trickling_its_body_gets_408() {
    let node = Node::start_with(slow_limits());
    let mut tls = raw_tls(&node).expect("a TLS connection");
    let head = format!(
        "POST /v1/jobs HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{",
        node.key
    );
    tls.write_all(head.as_bytes()).unwrap();
    tls.flush().unwrap();
    // Then nothing: the body deadline passes.
    let (status, body) = read_response(&mut tls).expect("an answer before the bound");
    assert_eq!(status, 408, "{}", String::from_utf8_lossy(&body));
    let value: Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(value["code"], "request_timeout");
    assert_eq!(node.inbox_len(), 0);
}

#[test]
fn connections_over_the_limit_are_closed_and_the_slot_comes_back() {
    let node = Node::start_with(api::Limits {
        max_connections: 3,
        ..api::Limits::default()
    });
    let request = b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n";
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut tls = raw_tls(&node).expect("a connection under the limit");
        tls.write_all(request).unwrap();
        assert_eq!(read_response(&mut tls).expect("an answer").0, 200);
        held.push(tls);
    }
    // The fourth is closed before or during its handshake, and never served.
    let over = raw_tls(&node).and_then(|mut tls| {
        tls.write_all(request)?;
        read_response(&mut tls)
    });
    assert!(over.is_err(), "a fourth connection was served: {over:?}");
    // The held ones still work.
    for tls in &mut held {
        tls.write_all(request).unwrap();
        assert_eq!(read_response(tls).expect("an answer").0, 200);
    }
    // Closing one gives its slot back (the server notices the close asynchronously).
    drop(held.pop());
    let deadline = Instant::now() + BOUND;
    loop {
        let served = raw_tls(&node).and_then(|mut tls| {
            tls.write_all(request)?;
            read_response(&mut tls)
        });
        if matches!(served, Ok((200, _))) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the freed slot did not come back: {served:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ---------------------------------------------------------------------------------------
// Error bodies.

#[test]
fn error_bodies_never_leak_paths_sql_or_backtraces() {
    let node = Node::start();
    let client = node.client();
    let mut seen = 0usize;
    let mut check = |what: &str, resp: Result<Response, ClientError>| {
        let resp = resp.unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            resp.status < 500 || resp.status == 503,
            "{what}: {}",
            resp.status
        );
        // Every request below is named by `what` or carries its hostile text in `what`.
        assert_clean_sent(&node, what, &resp, what);
        if resp.status >= 400 {
            seen += 1;
        }
    };
    let post = |body: &[u8], headers: &[(&str, &str)]| {
        client.request("POST", "/v1/jobs", Some(body), headers)
    };
    let envelope = node.example_envelope(&hex32());
    // Request bodies of every kind of wrong.
    let long = "x".repeat(70 * 1024);
    let bodies: Vec<(&str, Vec<u8>)> = vec![
        ("garbage", b"\x00\x01\x02".to_vec()),
        ("truncated", b"{\"request_id\": \"".to_vec()),
        ("array", b"[]".to_vec()),
        ("deep nesting", "[".repeat(10_000).into_bytes()),
        ("oversized", long.into_bytes()),
        ("path as operation", serde_json::to_vec(&json!({"request_id": hex32(), "operation": "/etc/passwd", "resource": {}})).unwrap()),
        ("SQL as operation", serde_json::to_vec(&json!({"request_id": hex32(), "operation": "x'; DROP TABLE jobs; --", "resource": {}})).unwrap()),
        ("wrong node", serde_json::to_vec(&json!({"request_id": hex32(), "action": "x", "node_id": hex32(), "resource": {}})).unwrap()),
        ("resource of wrong type", serde_json::to_vec(&json!({"request_id": hex32(), "operation": envelope["operation"], "resource": [1]})).unwrap()),
        ("duplicate keys", format!("{{\"request_id\":\"{0}\",\"request_id\":\"{0}\"}}", hex32()).into_bytes()),
        ("huge number", b"{\"request_id\": 1e999999}".to_vec()),
        ("lone surrogate", b"{\"request_id\": \"\\ud800\"}".to_vec()),
    ];
    for (what, body) in &bodies {
        let sent = format!("{what} {}", String::from_utf8_lossy(body));
        check(&sent, post(body, &[]));
    }
    check("text/plain", post(b"{}", &[("Content-Type", "text/plain")]));
    // A conflict.
    let rid = hex32();
    let first = node.example_envelope(&rid);
    check("first", post(first.to_string().as_bytes(), &[]));
    let mut other = first.clone();
    other["request_id"] = json!(rid);
    other["resource"]["id"] = json!(hex32());
    check("conflict", post(other.to_string().as_bytes(), &[]));
    // Queries and paths.
    for path in [
        "/v1/events?after=-1",
        "/v1/events?after=99999999999999999999999",
        "/v1/events?wait=%00",
        "/v1/events?limit=abc&limit=2",
        "/v1/events?%ff=1",
        "/v1/jobs/%2fetc%2fpasswd",
        "/v1/jobs/0000000000000000000000000000000g",
        "/v1/nope/../../etc/passwd",
    ] {
        check(path, client.request("GET", path, None, &[]));
    }
    // state.db in every broken shape root's crash or an attacker's file could leave.
    let db = node.layout.state_db();
    type Shape<'a> = (&'a str, Box<dyn Fn() + 'a>);
    let shapes: Vec<Shape> = vec![
        ("state.db missing", Box::new(|| {})),
        (
            "state.db not a database",
            Box::new(|| std::fs::write(node.layout.state_db(), b"not a database at all").unwrap()),
        ),
        (
            "state.db a directory",
            Box::new(|| std::fs::create_dir(node.layout.state_db()).unwrap()),
        ),
        (
            "state.db with a hostile schema",
            Box::new(|| hostile_schema(&node.layout.state_db())),
        ),
    ];
    for (what, make) in shapes {
        if db.is_dir() {
            std::fs::remove_dir(&db).unwrap();
        } else if db.exists() {
            std::fs::remove_file(&db).unwrap();
        }
        make();
        // A fresh client, so no pooled connection keeps an old file open.
        let fresh = node.client();
        check(
            what,
            fresh.request("GET", &format!("/v1/jobs/{}", hex32()), None, &[]),
        );
        check(what, fresh.request("GET", "/v1/events?after=0", None, &[]));
        check(
            what,
            fresh.request(
                "POST",
                "/v1/jobs",
                Some(node.example_envelope(&hex32()).to_string().as_bytes()),
                &[],
            ),
        );
        let (status, body) = fresh.health().expect("health");
        assert!(status == 200 || status == 503, "{what}: health {status}");
        let text = body.to_string();
        assert!(
            !text.contains(&node.dir.path().display().to_string()),
            "{what}: health leaks a path: {text}"
        );
    }
    assert!(seen >= 20, "only {seen} error responses scanned");
}

/// A real SQLite database at `path` with state.db's table names in another, hostile shape:
/// wrong columns, a view that fails when read, and a trigger that would write.
fn hostile_schema(path: &std::path::Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE jobs(request_id BLOB, state INTEGER, body TEXT);
         INSERT INTO jobs VALUES (x'00ff', 42, '/etc/shadow');
         CREATE TABLE meta(k, v);
         CREATE VIEW events AS SELECT abs(-9223372036854775807 - 1) AS cursor;
         CREATE TABLE resources(x);
         CREATE TRIGGER t AFTER INSERT ON resources BEGIN DELETE FROM jobs; END;",
    )
    .unwrap();
}

// ---------------------------------------------------------------------------------------
// One abusive source (127.0.0.2) against a well-behaved client (127.0.0.1).

const ABUSER: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 2));

/// The per-source cap of these tests: well below the global one.
const PER_SOURCE: usize = 16;

fn abuse_limits() -> api::Limits {
    api::Limits {
        max_connections_per_source: PER_SOURCE,
        first_byte_timeout: Duration::from_secs(2),
        handshake_timeout: Duration::from_secs(2),
        header_read_timeout: Duration::from_secs(2),
        body_read_timeout: Duration::from_secs(2),
        ..api::Limits::default()
    }
}

/// Lets the test process hold thousands of sockets: the soft limit up to the hard one.
fn raise_nofile() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid rlimit for the kernel to fill, then to read.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        limit.rlim_cur = limit.rlim_max;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
    }
}

/// Whether the server still holds this connection open (a read would block, or has data).
fn open(tcp: &TcpStream) -> bool {
    tcp.set_nonblocking(true).expect("non-blocking");
    let mut byte = [0u8; 1];
    let open = match tcp.peek(&mut byte) {
        Ok(0) => false,
        Ok(_) => true,
        Err(e) => e.kind() == ErrorKind::WouldBlock,
    };
    tcp.set_nonblocking(false).expect("blocking");
    open
}

/// Waits (bounded) until `held` of the abuser's sockets are at most `max` open, and returns
/// how many are.
fn settle_at_most(socks: &[&TcpStream], max: usize) -> usize {
    let deadline = Instant::now() + BOUND;
    loop {
        let held = socks.iter().filter(|s| open(s)).count();
        if held <= max || Instant::now() > deadline {
            return held;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The well-behaved client: every request answered, health 200 and each job 202.
fn well_behaved_client_is_served(node: &Node, rounds: usize) {
    let client = node.client();
    for round in 0..rounds {
        let (status, _) = client
            .health()
            .unwrap_or_else(|e| panic!("round {round}: health: {e}"));
        assert_eq!(status, 200, "round {round}");
        let body = node.example_envelope(&hex32()).to_string();
        let resp = client
            .request("POST", "/v1/jobs", Some(body.as_bytes()), &[])
            .unwrap_or_else(|e| panic!("round {round}: submit: {e}"));
        assert_eq!(
            resp.status,
            202,
            "round {round}: {}",
            String::from_utf8_lossy(&resp.body)
        );
    }
}

#[test]
fn an_abusive_source_with_2000_idle_connections_holds_only_its_share_and_the_others_are_served() {
    raise_nofile();
    let node = Node::start_with(abuse_limits());
    let target = addr(&node);
    let mut socks = Vec::new();
    let mut refused = 0usize;
    for _ in 0..2000 {
        match connect_from(ABUSER, &target) {
            Ok(s) => socks.push(s),
            Err(_) => refused += 1,
        }
    }
    let refs: Vec<&TcpStream> = socks.iter().collect();
    let held = settle_at_most(&refs, PER_SOURCE);
    assert!(
        held <= PER_SOURCE,
        "the abuser holds {held} connections (cap {PER_SOURCE}; {refused} refused at connect)"
    );
    // While it holds them, the client on 127.0.0.1 gets every answer.
    well_behaved_client_is_served(&node, 20);
    // Without a first byte, the held ones are closed at the deadline.
    assert_eq!(
        settle_at_most(&refs, 0),
        0,
        "idle connections outlived the first-byte deadline"
    );
    well_behaved_client_is_served(&node, 5);
    assert_eq!(node.inbox_len(), 25);
}

#[test]
fn an_abusive_source_with_200_slow_handshakes_holds_only_its_share_and_the_others_are_served() {
    raise_nofile();
    let node = Node::start_with(abuse_limits());
    let target = addr(&node);
    let mut socks = Vec::new();
    for _ in 0..200 {
        let Ok(mut s) = connect_from(ABUSER, &target) else {
            continue;
        };
        // Half a ClientHello record header, then silence.
        if s.write_all(&[0x16, 0x03]).is_ok() {
            socks.push(s);
        }
    }
    let refs: Vec<&TcpStream> = socks.iter().collect();
    let held = settle_at_most(&refs, PER_SOURCE);
    assert!(held <= PER_SOURCE, "the abuser holds {held} handshakes");
    well_behaved_client_is_served(&node, 20);
    assert_eq!(
        settle_at_most(&refs, 0),
        0,
        "slow handshakes outlived the deadline"
    );
}

/// Opens up to `n` TLS connections from the abuser, each sent `first`, and trickles one more
/// byte of `trickle` to each every 100 ms from a thread until the server has closed them all
/// (bounded). Returns the most connections held at once and the thread.
fn trickle_attack(
    node: &Node,
    n: usize,
    first: String,
    trickle: u8,
) -> (usize, std::thread::JoinHandle<(bool, Vec<u16>)>) {
    let mut conns = Vec::new();
    for _ in 0..n {
        // Those over the cap are closed before or in their handshake.
        if let Ok(mut tls) = raw_tls_from(node, Some(ABUSER))
            && tls
                .write_all(first.as_bytes())
                .and_then(|()| tls.flush())
                .is_ok()
        {
            conns.push(tls);
        }
    }
    let held = conns.len();
    let thread = std::thread::spawn(move || {
        let deadline = Instant::now() + BOUND;
        let mut statuses = Vec::new();
        while !conns.is_empty() && Instant::now() < deadline {
            conns.retain_mut(|tls| {
                if tls
                    .write_all(&[trickle])
                    .and_then(|()| tls.flush())
                    .is_err()
                {
                    return false;
                }
                tls.sock
                    .set_read_timeout(Some(Duration::from_millis(1)))
                    .expect("a timeout");
                let mut buf = [0u8; 4096];
                let read = tls.read(&mut buf);
                if let Ok(n) = read
                    && n > 0
                {
                    let text = String::from_utf8_lossy(&buf[..n]);
                    if let Some(status) = text.split(' ').nth(1).and_then(|s| s.parse().ok()) {
                        statuses.push(status);
                    }
                }
                !closed(read)
            });
            std::thread::sleep(Duration::from_millis(100));
        }
        (conns.is_empty(), statuses)
    });
    (held, thread)
}

#[test]
fn an_abusive_source_trickling_headers_holds_only_its_share_and_the_others_are_served() {
    raise_nofile();
    let node = Node::start_with(abuse_limits());
    let (held, attack) = trickle_attack(
        &node,
        40,
        "GET /v1/health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ".into(),
        b'x',
    );
    assert!(
        held <= PER_SOURCE,
        "the abuser got {held} connections through"
    );
    well_behaved_client_is_served(&node, 20);
    let (all_cut, statuses) = attack.join().expect("the attack thread");
    assert!(all_cut, "a trickled head outlived its deadline");
    assert!(
        !statuses.contains(&200),
        "an unfinished head was answered: {statuses:?}"
    );
}

#[test]
fn an_abusive_source_trickling_bodies_holds_only_its_share_and_the_others_are_served() {
    raise_nofile();
    let node = Node::start_with(abuse_limits());
    let head = format!(
        "POST /v1/jobs HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n{{",
        node.key
    );
    let (held, attack) = trickle_attack(&node, 40, head, b' ');
    assert!(
        held <= PER_SOURCE,
        "the abuser got {held} connections through"
    );
    well_behaved_client_is_served(&node, 20);
    let (all_cut, statuses) = attack.join().expect("the attack thread");
    assert!(all_cut, "a trickled body outlived its deadline");
    assert!(statuses.iter().all(|s| *s == 408), "{statuses:?}");
    assert_eq!(node.inbox_len(), 20, "a trickled body was admitted");
}

#[test]
fn a_source_outside_the_allowlist_is_closed_before_tls_and_an_allowed_one_is_served() {
    let node = Node::start_with(api::Limits {
        allowed_sources: Some(vec!["127.0.0.1/32".parse().expect("a network")]),
        ..api::Limits::default()
    });
    let mut tcp =
        connect_from(ABUSER, &addr(&node)).expect("the kernel accepts the TCP connection");
    tcp.set_read_timeout(Some(BOUND)).unwrap();
    // A whole ClientHello from the real client library would be answered by a ServerHello;
    // the start of one is enough to see that nothing at all comes back.
    let _ = tcp.write_all(&[0x16, 0x03, 0x01, 0x00, 0x05]);
    let mut buf = [0u8; 64];
    let read = tcp.read(&mut buf);
    assert!(
        matches!(read, Ok(0)) || read.is_err(),
        "the refused source was sent {read:?} bytes"
    );
    assert!(
        raw_tls_from(&node, Some(ABUSER)).is_err(),
        "a TLS handshake from outside the allowlist"
    );
    well_behaved_client_is_served(&node, 3);
}
