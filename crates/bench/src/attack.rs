//! `layerone-bench attack [SECONDS]`: one abusive source against the front door of a node run
//! with its default limits, while a well-behaved client keeps using it.
//!
//! The attacker is 127.0.0.2 and the client 127.0.0.1. Each attack lasts SECONDS (20 unless
//! told) and is sustained: whatever the server closes, the attacker opens again once a
//! second, as a real one would. The attacks are those of `crates/api/tests/it/front_door.rs` at
//! the sizes: 2,000 idle TCP connections (no byte sent), 200 TLS handshakes stopped
//! after two bytes, 200 request heads trickled a byte a second, and 200 bodies trickled a byte
//! a second. The figures: how many connections the server held open for the attacker (sampled
//! from the attacker's side: a socket the server has not closed), and the client's latencies
//! for `GET /v1/health` and a `POST /v1/jobs` on its keep-alive connection and for a health
//! check on a new connection each time (TCP and TLS included). Printed, never asserted; the
//! run fails only if the client got an error or a status other than 200 and 202.

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};

use crate::node::{self, Bins, Node};
use crate::stats::{Summary, summarize};

const ABUSER: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
/// How often the client sends one round (a health check and a submission on its kept
/// connection, a health check on a new one).
const CLIENT_PACE: Duration = Duration::from_millis(50);
/// How often the attacker looks at its sockets, trickles a byte and opens what was closed.
const ATTACKER_TICK: Duration = Duration::from_secs(1);
/// How long a blocking read or write of the attacker may take (a handshake over the cap is
/// closed by the server at once; one within it is answered at once).
const SOCKET_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Clone, Copy)]
enum Attack {
    None,
    Idle,
    SlowHandshakes,
    SlowHeaders,
    SlowBodies,
}

impl Attack {
    const ALL: [Attack; 5] = [
        Attack::None,
        Attack::Idle,
        Attack::SlowHandshakes,
        Attack::SlowHeaders,
        Attack::SlowBodies,
    ];

    fn connections(self) -> usize {
        match self {
            Attack::None => 0,
            Attack::Idle => 2000,
            Attack::SlowHandshakes | Attack::SlowHeaders | Attack::SlowBodies => 200,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Attack::None => "none (baseline)",
            Attack::Idle => "2,000 idle connections",
            Attack::SlowHandshakes => "200 slow TLS handshakes",
            Attack::SlowHeaders => "200 trickled request heads",
            Attack::SlowBodies => "200 trickled request bodies",
        }
    }
}

/// What the attacker saw: the connections the server held open for it, sampled each tick.
#[derive(Default)]
struct Abuse {
    held_max: usize,
    held_sum: usize,
    samples: usize,
    opened: u64,
    refused: u64,
}

/// What the well-behaved client saw.
#[derive(Default)]
struct Served {
    health: Vec<Duration>,
    submit: Vec<Duration>,
    fresh: Vec<Duration>,
    errors: Vec<String>,
}

pub fn run(dir: &std::path::Path, seconds: u64) -> anyhow::Result<()> {
    raise_nofile()?;
    let bins = Bins::beside_me()?;
    let mut node = Node::new(&bins, dir, "attack")?;
    // The node's own limits, as an installed node has them: the benchmark's client is the
    // only other source, and the rate limit stays off as in the other figures.
    node.start_api()?;
    node.start_watch()?;
    let target: SocketAddr = node
        .url
        .trim_start_matches("https://")
        .parse()
        .context("the node's address")?;
    let tls = client::pin::client_config(
        client::pin::parse_pin(node.pin()).map_err(|e| anyhow::anyhow!(e))?,
    )?;
    let phase = Duration::from_secs(seconds);
    println!(
        "attack: one abusive source ({ABUSER}) against the API's default limits, {seconds} s \
         each, sustained (what the server closes is opened again each second); a client on \
         127.0.0.1 sends a round every {} ms",
        CLIENT_PACE.as_millis()
    );
    println!(
        "  {:<28} {:>15} {:>22} {:>22} {:>22} {:>7}",
        "attack",
        "held max/mean",
        "health p50/p99 ms",
        "submit p50/p99 ms",
        "new conn p50/p99 ms",
        "errors"
    );
    let mut failed = Vec::new();
    let mut round = 0u64;
    for attack in Attack::ALL {
        let stop = Arc::new(AtomicBool::new(false));
        let attacker = {
            let (stop, tls, key) = (stop.clone(), tls.clone(), node.key().to_owned());
            std::thread::spawn(move || abuse(attack, target, &tls, &key, &stop))
        };
        // Let the attack reach its size before the client measures.
        std::thread::sleep(Duration::from_secs(2).min(phase));
        let served = serve(&node, phase, &mut round)?;
        stop.store(true, Ordering::Relaxed);
        let abuse = attacker
            .join()
            .map_err(|_| anyhow::anyhow!("the attacker's thread panicked"))?;
        let (health, submit, fresh) = (
            summarize(served.health),
            summarize(served.submit),
            summarize(served.fresh),
        );
        println!(
            "  {:<28} {:>15} {:>22} {:>22} {:>22} {:>7}",
            attack.name(),
            format!(
                "{}/{:.0}",
                abuse.held_max,
                abuse.held_sum as f64 / abuse.samples.max(1) as f64
            ),
            p50_p99(&health),
            p50_p99(&submit),
            p50_p99(&fresh),
            served.errors.len()
        );
        if attack.connections() > 0 {
            println!(
                "  {:<28} the attacker opened {} connections ({} refused at connect); the client sent {} rounds",
                "", abuse.opened, abuse.refused, health.n
            );
        }
        failed.extend(
            served
                .errors
                .into_iter()
                .take(5)
                .map(|e| format!("{}: {e}", attack.name())),
        );
        // The server lets go of what the attacker dropped before the next attack.
        std::thread::sleep(Duration::from_secs(1));
    }
    node.stop_watch();
    node.stop_api();
    if !failed.is_empty() {
        bail!("the well-behaved client was not served: {failed:?}");
    }
    Ok(())
}

fn p50_p99(s: &Summary) -> String {
    format!(
        "{:.2}/{:.2}",
        crate::stats::ms(s.p50),
        crate::stats::ms(s.p99)
    )
}

/// The well-behaved client for `phase`: each round a health check and a submission on its
/// kept connection and a health check on a new connection, one round every [`CLIENT_PACE`].
fn serve(node: &Node, phase: Duration, round: &mut u64) -> anyhow::Result<Served> {
    let kept = node.client()?;
    kept.health().context("the client's first health check")?;
    let mut served = Served::default();
    let account = node::id(0x60, 1);
    let end = Instant::now() + phase;
    while Instant::now() < end {
        let started = Instant::now();
        *round += 1;
        let t0 = Instant::now();
        match kept.health() {
            Ok((200, _)) => served.health.push(t0.elapsed()),
            Ok((status, _)) => served.errors.push(format!("health answered {status}")),
            Err(e) => served.errors.push(format!("health: {e}")),
        }
        let body = node::remove_key(&node::id(0x61, *round), &node::id(0x62, *round), &account);
        let bytes = serde_json::to_vec(&body)?;
        let t0 = Instant::now();
        match kept.request("POST", "/v1/jobs", Some(&bytes), &[]) {
            Ok(resp) if resp.status == 202 => served.submit.push(t0.elapsed()),
            Ok(resp) => served
                .errors
                .push(format!("submit answered {}", resp.status)),
            Err(e) => served.errors.push(format!("submit: {e}")),
        }
        let t0 = Instant::now();
        match node.client()?.health() {
            Ok((200, _)) => served.fresh.push(t0.elapsed()),
            Ok((status, _)) => served
                .errors
                .push(format!("health on a new connection answered {status}")),
            Err(e) => served
                .errors
                .push(format!("health on a new connection: {e}")),
        }
        std::thread::sleep(CLIENT_PACE.saturating_sub(started.elapsed()));
    }
    Ok(served)
}

/// One of the attacker's sockets: raw TCP, or TLS with what it still trickles.
enum Conn {
    Tcp(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

/// Runs `attack` until `stop`, each tick looking at every socket (trickling a byte where the
/// attack trickles), counting those the server still holds, and opening the closed ones again.
fn abuse(
    attack: Attack,
    target: SocketAddr,
    tls: &Arc<ClientConfig>,
    key: &str,
    stop: &AtomicBool,
) -> Abuse {
    let mut seen = Abuse::default();
    let mut conns: Vec<Conn> = Vec::new();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(_) => return seen,
    };
    while !stop.load(Ordering::Relaxed) {
        let tick = Instant::now();
        conns.retain_mut(|c| still_held(attack, c));
        seen.held_max = seen.held_max.max(conns.len());
        seen.held_sum += conns.len();
        seen.samples += 1;
        while conns.len() < attack.connections() && !stop.load(Ordering::Relaxed) {
            seen.opened += 1;
            match open(attack, target, tls, key, &runtime) {
                Some(c) => conns.push(c),
                None => seen.refused += 1,
            }
            if tick.elapsed() > ATTACKER_TICK {
                break;
            }
        }
        std::thread::sleep(ATTACKER_TICK.saturating_sub(tick.elapsed()));
    }
    seen
}

/// A new connection from the abusive source, started as `attack` starts them; `None` when the
/// server refused or closed it before it was the attack's.
fn open(
    attack: Attack,
    target: SocketAddr,
    tls: &Arc<ClientConfig>,
    key: &str,
    runtime: &tokio::runtime::Runtime,
) -> Option<Conn> {
    let tcp = connect_from(ABUSER, target, runtime).ok()?;
    tcp.set_read_timeout(Some(SOCKET_TIMEOUT)).ok()?;
    tcp.set_write_timeout(Some(SOCKET_TIMEOUT)).ok()?;
    match attack {
        Attack::None => None,
        Attack::Idle => Some(Conn::Tcp(tcp)),
        Attack::SlowHandshakes => {
            // Half a ClientHello record header, then silence.
            let mut tcp = tcp;
            tcp.write_all(&[0x16, 0x03]).ok()?;
            Some(Conn::Tcp(tcp))
        }
        Attack::SlowHeaders | Attack::SlowBodies => {
            let conn =
                ClientConnection::new(tls.clone(), ServerName::try_from("localhost").ok()?).ok()?;
            let mut stream = StreamOwned::new(conn, tcp);
            while stream.conn.is_handshaking() {
                stream.conn.complete_io(&mut stream.sock).ok()?;
            }
            let first = match attack {
                Attack::SlowHeaders => {
                    "GET /v1/health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ".to_owned()
                }
                // With the key: without it the API answers 401 before it reads a body.
                _ => format!(
                    "POST /v1/jobs HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {key}\r\n\
                     Content-Type: application/json\r\nContent-Length: 60000\r\n\r\n{{"
                ),
            };
            stream.write_all(first.as_bytes()).ok()?;
            stream.flush().ok()?;
            Some(Conn::Tls(Box::new(stream)))
        }
    }
}

/// Whether the server still holds `c` open, after the byte the attack trickles each tick.
fn still_held(attack: Attack, c: &mut Conn) -> bool {
    match c {
        Conn::Tcp(tcp) => peer_open(tcp),
        Conn::Tls(stream) => {
            let byte = match attack {
                Attack::SlowHeaders => b'x',
                _ => b' ',
            };
            if stream
                .write_all(&[byte])
                .and_then(|()| stream.flush())
                .is_err()
            {
                return false;
            }
            // An answer (a 408) or the close both end it as the attack's connection.
            peer_open(&stream.sock) && !answered(stream)
        }
    }
}

/// Whether the server has sent anything on a trickled connection (its 408, or an alert).
fn answered(stream: &mut StreamOwned<ClientConnection, TcpStream>) -> bool {
    if stream.sock.set_nonblocking(true).is_err() {
        return true;
    }
    let mut buf = [0u8; 512];
    let read = stream.read(&mut buf);
    let _ = stream.sock.set_nonblocking(false);
    match read {
        Ok(_) => true,
        Err(e) => e.kind() != ErrorKind::WouldBlock,
    }
}

/// Whether the server still holds this connection open (a read would block, or has data).
fn peer_open(tcp: &TcpStream) -> bool {
    if tcp.set_nonblocking(true).is_err() {
        return false;
    }
    let mut byte = [0u8; 1];
    let open = match tcp.peek(&mut byte) {
        Ok(0) => false,
        Ok(_) => true,
        Err(e) => e.kind() == ErrorKind::WouldBlock,
    };
    open && tcp.set_nonblocking(false).is_ok()
}

/// A TCP connection to `to` from `source`, bound before it connects.
fn connect_from(
    source: IpAddr,
    to: SocketAddr,
    runtime: &tokio::runtime::Runtime,
) -> std::io::Result<TcpStream> {
    runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(SocketAddr::new(source, 0))?;
        let stream = tokio::time::timeout(SOCKET_TIMEOUT, socket.connect(to))
            .await
            .map_err(|_| std::io::Error::from(ErrorKind::TimedOut))??;
        let stream = stream.into_std()?;
        stream.set_nonblocking(false)?;
        Ok(stream)
    })
}

/// Lets the benchmark hold thousands of sockets: the soft limit up to the hard one.
fn raise_nofile() -> anyhow::Result<()> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid rlimit for the kernel to fill, then to read.
    let ok = unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0
        }
    };
    if !ok || limit.rlim_cur < 4096 {
        bail!(
            "the attack needs 4,096 open files; the limit is {}",
            limit.rlim_cur
        );
    }
    Ok(())
}
