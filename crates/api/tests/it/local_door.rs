//! The local door keeps the TCP door's rules, by uid instead of by address: a connection that
//! sends nothing, one that trickles its head and one that trickles its body are cut off by
//! the same deadlines, one uid holds at most its share of connections, and everyone else is
//! served meanwhile. A real API on a real unix socket, reached with raw HTTP/1.1.

use crate::common;

use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use common::{Node, closed, read_response};
use serde_json::Value;

/// How long the tests wait for the server to act on a deadline before calling it a failure.
/// A bound on the wait, not a performance figure: the server's own deadlines are 1 s here.
const BOUND: Duration = Duration::from_secs(30);

/// The per-uid cap of these tests.
const PER_UID: usize = 4;

fn slow_limits() -> api::Limits {
    api::Limits {
        max_connections_per_source: PER_UID,
        first_byte_timeout: Duration::from_secs(1),
        header_read_timeout: Duration::from_secs(1),
        body_read_timeout: Duration::from_secs(1),
        ..api::Limits::default()
    }
}

fn connect(node: &Node) -> UnixStream {
    let path = node
        .socket
        .as_ref()
        .expect("the node opened its local door");
    let stream = UnixStream::connect(path).expect("a local connection");
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("a read timeout");
    stream
}

/// Reads one answer, waiting for it up to [`BOUND`].
fn answer(stream: &mut UnixStream) -> std::io::Result<(u16, Vec<u8>)> {
    stream.set_read_timeout(Some(BOUND))?;
    read_response(stream)
}

/// A well-behaved local client: one `GET /v1/health` on a new connection.
fn health(node: &Node) -> std::io::Result<u16> {
    let mut stream = connect(node);
    stream.write_all(b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")?;
    answer(&mut stream).map(|(status, _)| status)
}

#[test]
fn a_silent_local_connection_is_closed_at_the_first_byte_deadline() {
    let node = Node::start_local(slow_limits());
    let mut silent = connect(&node);
    let started = Instant::now();
    let mut buf = [0u8; 64];
    let mut disconnected = false;
    while started.elapsed() < BOUND {
        if closed(silent.read(&mut buf)) {
            disconnected = true;
            break;
        }
    }
    assert!(
        disconnected,
        "a silent local connection was still open after {BOUND:?}"
    );
    assert_eq!(health(&node).expect("health"), 200);
}

#[test]
fn a_local_peer_trickling_its_header_is_disconnected_while_others_are_served() {
    let node = Node::start_local(slow_limits());
    let mut trickle = connect(&node);
    trickle
        .write_all(b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\n")
        .unwrap();
    let started = Instant::now();
    let mut received = Vec::new();
    let mut disconnected = false;
    let mut served = 0;
    // One header byte every 200 ms, never finishing the head, until the server hangs up; a
    // well-behaved client asks for health in between.
    while started.elapsed() < BOUND {
        if trickle.write_all(b"X").is_err() {
            disconnected = true;
            break;
        }
        let mut buf = [0u8; 4096];
        let read = trickle.read(&mut buf);
        if let Ok(n) = read {
            received.extend_from_slice(&buf[..n]);
        }
        if closed(read) {
            disconnected = true;
            break;
        }
        assert_eq!(health(&node).expect("health during the trickle"), 200);
        served += 1;
    }
    assert!(
        disconnected,
        "a local peer trickling its header was still connected after {BOUND:?}"
    );
    assert!(served > 0, "the trickle was cut before any other request");
    let text = String::from_utf8_lossy(&received);
    assert!(
        !text.contains(" 200 "),
        "the server answered an unfinished head: {text}"
    );
}

#[test]
fn a_local_peer_trickling_its_body_gets_408_and_nothing_is_admitted() {
    let node = Node::start_local(slow_limits());
    let mut trickle = connect(&node);
    trickle
        .write_all(
            b"POST /v1/jobs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
        )
        .unwrap();
    // Then nothing: the body deadline passes.
    let (status, body) = answer(&mut trickle).expect("an answer before the bound");
    assert_eq!(status, 408, "{}", String::from_utf8_lossy(&body));
    let value: Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(value["code"], "request_timeout");
    assert_eq!(node.inbox_len(), 0);
    assert_eq!(health(&node).expect("health"), 200);
}

#[test]
fn one_uid_holds_at_most_its_share_of_local_connections_and_a_slot_comes_back() {
    // Deadlines far longer than the test, so only the cap closes anything.
    let node = Node::start_local(api::Limits {
        max_connections_per_source: PER_UID,
        first_byte_timeout: BOUND,
        header_read_timeout: BOUND,
        ..api::Limits::default()
    });
    // Each held connection was served once (so it is admitted), then begins its next head.
    let mut held: Vec<UnixStream> = (0..PER_UID)
        .map(|i| {
            let mut stream = connect(&node);
            stream
                .write_all(b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n")
                .unwrap();
            let (status, _) = answer(&mut stream).expect("an answer");
            assert_eq!(status, 200, "held connection {i}");
            stream.write_all(b"G").unwrap();
            stream
                .set_read_timeout(Some(Duration::from_millis(200)))
                .unwrap();
            stream
        })
        .collect();
    let mut over = connect(&node);
    // The door may close it before the request is even written.
    let _ =
        over.write_all(b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    match answer(&mut over) {
        Err(e) if !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
        other => panic!("a connection over the uid's cap of {PER_UID} got {other:?}"),
    }
    for stream in &mut held {
        let mut buf = [0u8; 16];
        assert!(
            !closed(stream.read(&mut buf)),
            "a connection within the cap was closed"
        );
    }
    // One held connection goes: its slot comes back.
    drop(held.pop());
    let started = Instant::now();
    let status = loop {
        match health(&node) {
            Ok(status) => break Some(status),
            Err(_) if started.elapsed() < BOUND => std::thread::sleep(Duration::from_millis(50)),
            Err(_) => break None,
        }
    };
    assert_eq!(status, Some(200), "the freed slot did not come back");
}
