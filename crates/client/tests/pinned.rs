//! The pin is checked inside the TLS handshake, before the client writes a single byte of HTTP:
//! a raw rustls server on 127.0.0.1 records every byte it decrypts, and a client pinned to
//! another certificate gives it none, while a correctly pinned client's request arrives whole
//! (so the recorder does see application data when there is any).

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use client::{ClientError, NodeClient, TlsError};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ServerConfig, ServerConnection};
use serde_json::json;
use sha2::{Digest, Sha256};

/// What one connection delivered to the server.
#[derive(Debug, Default, Clone)]
struct Seen {
    handshake_completed: bool,
    plaintext: Vec<u8>,
}

/// A self-signed certificate for 127.0.0.1: (DER, key DER, pin).
fn certificate() -> (CertificateDer<'static>, PrivateKeyDer<'static>, String) {
    let certified =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".into(), "localhost".into()])
            .expect("a certificate");
    let der = certified.cert.der().clone();
    let key = PrivateKeyDer::from_pem_slice(certified.signing_key.serialize_pem().as_bytes())
        .expect("the key");
    let pin = hex::encode(Sha256::digest(der.as_ref()));
    (der, key, pin)
}

/// Serves one connection: completes the handshake if the client does, records every decrypted
/// byte, and answers a complete request head with a small JSON 200.
fn serve(config: Arc<ServerConfig>, mut sock: TcpStream) -> Seen {
    let mut seen = Seen::default();
    let Ok(mut conn) = ServerConnection::new(config) else {
        return seen;
    };
    sock.set_read_timeout(Some(Duration::from_secs(10))).ok();
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        while conn.wants_write() {
            if conn.write_tls(&mut sock).is_err() {
                return seen;
            }
        }
        match conn.read_tls(&mut sock) {
            Ok(0) => return seen,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return seen;
            }
            Err(_) => return seen,
        }
        match conn.process_new_packets() {
            Ok(state) => {
                let n = state.plaintext_bytes_to_read();
                if n > 0 {
                    let mut buf = vec![0u8; n];
                    conn.reader()
                        .read_exact(&mut buf)
                        .expect("buffered plaintext");
                    seen.plaintext.extend_from_slice(&buf);
                }
            }
            // The client's alert (a certificate it refused) ends the connection.
            Err(_) => {
                let _ = conn.write_tls(&mut sock);
                return seen;
            }
        }
        if !conn.is_handshaking() {
            seen.handshake_completed = true;
        }
        if seen.plaintext.windows(4).any(|w| w == b"\r\n\r\n") {
            let body = br#"{"status":"ok"}"#;
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = conn.writer().write_all(head.as_bytes());
            let _ = conn.writer().write_all(body);
            conn.send_close_notify();
            while conn.wants_write() {
                if conn.write_tls(&mut sock).is_err() {
                    break;
                }
            }
            return seen;
        }
    }
    seen
}

struct Recorder {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Recorder {
    fn start(cert: CertificateDer<'static>, key: PrivateKeyDer<'static>) -> Recorder {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_no_client_auth()
            .with_single_cert(vec![cert], key)
            .expect("a server configuration");
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let config = Arc::new(config);
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        listener.set_nonblocking(true).expect("non-blocking accept");
        let url = format!("https://{}", listener.local_addr().expect("an address"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (seen, stop) = (seen.clone(), stop.clone());
            std::thread::spawn(move || {
                let deadline = Instant::now() + Duration::from_secs(60);
                let mut workers = Vec::new();
                while !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
                    match listener.accept() {
                        Ok((sock, _)) => {
                            sock.set_nonblocking(false).expect("blocking socket");
                            let (config, seen) = (config.clone(), seen.clone());
                            workers.push(std::thread::spawn(move || {
                                let result = serve(config, sock);
                                seen.lock().expect("lock").push(result);
                            }));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(10)),
                    }
                }
                for w in workers {
                    let _ = w.join();
                }
            })
        };
        Recorder {
            url,
            seen,
            stop,
            thread: Some(thread),
        }
    }

    /// Stops accepting, waits for every connection to end, and returns what each delivered.
    fn finish(mut self) -> Vec<Seen> {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.join().expect("the recorder thread");
        }
        self.seen.lock().expect("lock").clone()
    }
}

#[test]
fn a_client_pinned_to_another_certificate_sends_the_node_no_byte_of_http() {
    let (cert, key, served_pin) = certificate();
    let (_, _, other_pin) = certificate();
    assert_ne!(served_pin, other_pin);
    let recorder = Recorder::start(cert.clone(), key.clone_key());
    let secret = "f".repeat(64);
    let wrong = NodeClient::new(&recorder.url, Some(secret.clone()), &other_pin)
        .expect("a client")
        .with_timeout(Duration::from_secs(10));
    let envelope = json!({"request_id": "0".repeat(32), "operation": "ensure_account",
        "resource": {"id": "1".repeat(32), "username": "shop1"}});
    for attempt in 0..3 {
        let outcome = match attempt {
            0 => wrong.submit(&envelope).map(|_| ()),
            1 => wrong.health().map(|_| ()),
            _ => wrong
                .request("GET", "/v1/catalogue", None, &[("X-Probe", "1")])
                .map(|_| ()),
        };
        match outcome {
            Err(ClientError::Tls(TlsError::PinMismatch {
                expected,
                presented,
            })) => {
                assert_eq!(expected, other_pin);
                assert_eq!(presented, served_pin);
            }
            other => panic!("attempt {attempt}: expected a pin mismatch, got {other:?}"),
        }
    }
    let seen = recorder.finish();
    assert!(!seen.is_empty(), "the client never connected");
    for (i, conn) in seen.iter().enumerate() {
        assert!(
            !conn.handshake_completed,
            "connection {i}: the handshake completed with a wrong pin"
        );
        assert!(
            conn.plaintext.is_empty(),
            "connection {i}: the server decrypted {} bytes: {:?}",
            conn.plaintext.len(),
            String::from_utf8_lossy(&conn.plaintext)
        );
    }

    // The same server and a client with the right pin: the request arrives, key and all, so
    // the recorder above would have seen one.
    let recorder = Recorder::start(cert, key);
    let right = NodeClient::new(&recorder.url, Some(secret.clone()), &served_pin)
        .expect("a client")
        .with_timeout(Duration::from_secs(10));
    let (status, body) = right.health().expect("health through the right pin");
    assert_eq!(status, 200);
    assert_eq!(body["status"], "ok");
    let seen = recorder.finish();
    let delivered: Vec<u8> = seen.iter().flat_map(|s| s.plaintext.clone()).collect();
    let text = String::from_utf8_lossy(&delivered);
    assert!(text.starts_with("GET /v1/health HTTP/1.1\r\n"), "{text}");
    assert!(text.contains(&format!("Bearer {secret}")), "{text}");
}
