//! The limits a client cannot talk its way past: a token bucket per client address, a request
//! body read from the stream with a hard cap and a deadline, and the front door's accept path
//! ([`Door`] around [`Admission`]): the allowlist of source networks and the cap per source,
//! both before a byte of TLS, the deadlines for the first byte and the handshake, and the
//! caps on connections in and through their handshake (header size, header count and header
//! read timeout are set on hyper's builder in [`crate::start`]).

use std::collections::HashMap;
use std::future::{Future, poll_fn};
use std::hash::Hash;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes, HttpBody};
use axum::http::{HeaderMap, header};
use axum_server::accept::Accept;
use axum_server::tls_rustls::RustlsAcceptor;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_rustls::server::TlsStream;

use crate::config::{Limits, Network};
use crate::error::ApiError;

/// After refusing an oversized body, read (and discard) up to this much more of it, briefly,
/// so the client gets to read the 413 instead of a connection reset.
const DRAIN_BYTES: usize = 1024 * 1024;
const DRAIN_TIME: Duration = Duration::from_secs(2);

#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

/// One token bucket per client address, in a bounded map.
pub(crate) struct RateLimiter {
    rate: f64,
    burst: f64,
    max_clients: usize,
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
    /// Shared by the addresses that arrive while the map is full of active clients.
    overflow: Mutex<Bucket>,
}

/// IPv6 clients usually own a whole /64: count them by it, or one host gets 2^64 buckets.
fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut seg = v6.segments();
                seg[4..].fill(0);
                IpAddr::V6(seg.into())
            }
        },
    }
}

impl RateLimiter {
    pub fn new(limits: &Limits) -> RateLimiter {
        let now = Instant::now();
        let burst = f64::from(limits.burst.max(1));
        RateLimiter {
            rate: f64::from(limits.rate_per_sec),
            burst,
            max_clients: limits.max_tracked_clients.max(1),
            buckets: Mutex::new(HashMap::new()),
            overflow: Mutex::new(Bucket {
                tokens: burst,
                last: now,
            }),
        }
    }

    /// Takes one token for `ip`; `Err` carries the seconds until one is available again.
    pub fn check(&self, ip: IpAddr, now: Instant) -> Result<(), u32> {
        if self.rate <= 0.0 {
            return Ok(());
        }
        let key = client_key(ip);
        let mut buckets = self
            .buckets
            .lock()
            .expect("the rate limiter lock is never poisoned: nothing panics while holding it");
        if !buckets.contains_key(&key) && buckets.len() >= self.max_clients {
            // A bucket that has refilled is the same as no bucket: forget those first.
            let (rate, burst) = (self.rate, self.burst);
            buckets.retain(|_, b| {
                b.tokens + now.saturating_duration_since(b.last).as_secs_f64() * rate < burst
            });
            if buckets.len() >= self.max_clients {
                drop(buckets);
                let mut overflow = self.overflow.lock().expect(
                    "the rate limiter lock is never poisoned: nothing panics while holding it",
                );
                return self.take(&mut overflow, now);
            }
        }
        let bucket = buckets.entry(key).or_insert(Bucket {
            tokens: self.burst,
            last: now,
        });
        self.take(bucket, now)
    }

    fn take(&self, bucket: &mut Bucket, now: Instant) -> Result<(), u32> {
        let elapsed = now.saturating_duration_since(bucket.last).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * self.rate).min(self.burst);
        bucket.last = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - bucket.tokens) / self.rate).ceil().max(1.0) as u32)
        }
    }
}

/// The front door's first step, on the bare TCP stream before a byte of TLS: the allowlist of
/// source networks, the cap per source address, the cap on connections not yet through their
/// handshake, and the deadline for the first byte. A connection refused by any of them is
/// closed at once and costs nothing more.
#[derive(Clone)]
pub(crate) struct Admission {
    state: Arc<Sources>,
}

struct Sources {
    allowed: Option<Vec<Network>>,
    /// Connections open per source, keyed like the rate limiter's buckets.
    open: OpenPerKey<IpAddr>,
    handshakes: Arc<Semaphore>,
    first_byte: Duration,
}

impl Admission {
    pub fn new(limits: &Limits) -> Admission {
        Admission {
            state: Arc::new(Sources {
                allowed: limits.allowed_sources.clone(),
                open: OpenPerKey::new(limits.max_connections_per_source),
                handshakes: Arc::new(Semaphore::new(limits.max_handshakes.max(1))),
                first_byte: limits.first_byte_timeout,
            }),
        }
    }

    /// The allowlist, the source's slot and a handshake slot, or why not.
    fn admit(&self, stream: TcpStream) -> std::io::Result<Sourced> {
        let ip = stream.peer_addr()?.ip().to_canonical();
        let state = &self.state;
        if let Some(allowed) = &state.allowed
            && !allowed.iter().any(|net| net.contains(ip))
        {
            tracing::debug!(%ip, "a source outside the allowlist; closing its connection");
            return Err(std::io::Error::other("the source is not allowed"));
        }
        let Some(slot) = state.open.take(client_key(ip)) else {
            tracing::debug!(%ip, "the source's connection cap is reached; closing a new connection");
            return Err(std::io::Error::other(
                "the source's connection cap is reached",
            ));
        };
        let Ok(handshake) = state.handshakes.clone().try_acquire_owned() else {
            tracing::debug!("the handshake cap is reached; closing a new connection");
            return Err(std::io::Error::other("the handshake cap is reached"));
        };
        // Answers are small and written whole: without this, Nagle's algorithm holds the
        // last segment of a handshake or an answer until the client's delayed ACK.
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(%ip, error = %e, "could not set TCP_NODELAY on a connection");
        }
        Ok(Sourced {
            stream,
            _slot: slot,
            handshake: Some(handshake),
        })
    }
}

/// Connections open per key (a source address, a uid), at most `per_key` each. An entry
/// lives only while its key has a connection, so the map is bounded by the open connections.
pub(crate) struct OpenPerKey<K> {
    per_key: usize,
    open: Arc<Mutex<HashMap<K, usize>>>,
}

const POISON: &str = "the open connections' map is never poisoned: nothing panics holding it";

impl<K: Hash + Eq + Copy> OpenPerKey<K> {
    pub fn new(per_key: usize) -> OpenPerKey<K> {
        OpenPerKey {
            per_key: per_key.max(1),
            open: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// The key's slot, unless it has all its connections open already.
    pub fn take(&self, key: K) -> Option<Slot<K>> {
        let mut open = self.open.lock().expect(POISON);
        let count = open.entry(key).or_insert(0);
        if *count >= self.per_key {
            return None;
        }
        *count += 1;
        Some(Slot {
            open: self.open.clone(),
            key,
        })
    }
}

/// A key's place in [`OpenPerKey`], given back when its connection is dropped.
pub(crate) struct Slot<K: Hash + Eq> {
    open: Arc<Mutex<HashMap<K, usize>>>,
    key: K,
}

impl<K: Hash + Eq> Drop for Slot<K> {
    fn drop(&mut self) {
        let mut open = self.open.lock().expect(POISON);
        if let Some(count) = open.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.key);
            }
        }
    }
}

impl<S: Send + 'static> Accept<TcpStream, S> for Admission {
    type Stream = Sourced;
    type Service = S;
    type Future = Pin<Box<dyn Future<Output = std::io::Result<(Sourced, S)>> + Send>>;

    fn accept(&self, stream: TcpStream, service: S) -> Self::Future {
        let admitted = self.admit(stream);
        let first_byte = self.state.first_byte;
        Box::pin(async move {
            let sourced = admitted?;
            let mut byte = [0u8; 1];
            match tokio::time::timeout(first_byte, sourced.stream.peek(&mut byte)).await {
                Ok(Ok(n)) if n > 0 => Ok((sourced, service)),
                Ok(Ok(_)) => Err(std::io::ErrorKind::UnexpectedEof.into()),
                Ok(Err(e)) => Err(e),
                Err(_) => Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "no first byte before the deadline",
                )),
            }
        })
    }
}

/// A TCP connection with its source's slot, and its handshake slot until the handshake is
/// done.
pub(crate) struct Sourced {
    stream: TcpStream,
    _slot: Slot<IpAddr>,
    handshake: Option<OwnedSemaphorePermit>,
}

/// The front door's last step, after the TLS handshake (bounded by its deadline): the
/// connection gives back its handshake slot and takes one of the connections through their
/// handshake, or is closed at once when they are all taken.
#[derive(Clone)]
pub(crate) struct Door {
    tls: RustlsAcceptor<Admission>,
    permits: Arc<Semaphore>,
}

impl Door {
    pub fn new(tls: RustlsAcceptor, limits: &Limits) -> Door {
        Door {
            tls: tls
                .handshake_timeout(limits.handshake_timeout)
                .acceptor(Admission::new(limits)),
            permits: Arc::new(Semaphore::new(limits.max_connections.max(1))),
        }
    }
}

impl<S: Send + 'static> Accept<TcpStream, S> for Door {
    type Stream = Counted<TlsStream<Sourced>>;
    type Service = <RustlsAcceptor<Admission> as Accept<TcpStream, S>>::Service;
    type Future =
        Pin<Box<dyn Future<Output = std::io::Result<(Self::Stream, Self::Service)>> + Send>>;

    fn accept(&self, stream: TcpStream, service: S) -> Self::Future {
        let handshake = self.tls.accept(stream, service);
        let permits = self.permits.clone();
        Box::pin(async move {
            let (mut stream, service) = handshake.await?;
            stream.get_mut().0.handshake = None;
            match permits.try_acquire_owned() {
                Ok(permit) => Ok((
                    Counted {
                        stream,
                        _permit: permit,
                    },
                    service,
                )),
                Err(_) => {
                    tracing::debug!("connection limit reached; closing a new connection");
                    Err(std::io::Error::other("the connection limit is reached"))
                }
            }
        })
    }
}

/// A connection that gives its permit back when it is dropped.
#[derive(Debug)]
pub(crate) struct Counted<T> {
    stream: T,
    _permit: OwnedSemaphorePermit,
}

/// Reads go straight to the inner `stream` field.
macro_rules! forward_read {
    ($outer:ty $(, $($generics:tt)*)?) => {
        impl$(<$($generics)*>)? tokio::io::AsyncRead for $outer {
            fn poll_read(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &mut tokio::io::ReadBuf<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::pin::Pin::new(&mut self.stream).poll_read(cx, buf)
            }
        }
    };
}

/// Writes go straight to the inner `stream` field.
macro_rules! forward_write {
    ($outer:ty $(, $($generics:tt)*)?) => {
        impl$(<$($generics)*>)? tokio::io::AsyncWrite for $outer {
            fn poll_write(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                std::pin::Pin::new(&mut self.stream).poll_write(cx, buf)
            }
            fn poll_flush(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::pin::Pin::new(&mut self.stream).poll_flush(cx)
            }
            fn poll_shutdown(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::pin::Pin::new(&mut self.stream).poll_shutdown(cx)
            }
            fn poll_write_vectored(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::task::Poll<std::io::Result<usize>> {
                std::pin::Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
            }
            fn is_write_vectored(&self) -> bool {
                self.stream.is_write_vectored()
            }
        }
    };
}

forward_read!(Counted<T>, T: AsyncRead + AsyncWrite + Unpin);
forward_write!(Counted<T>, T: AsyncRead + AsyncWrite + Unpin);
forward_read!(Sourced);
forward_write!(Sourced);
pub(crate) use forward_write;

enum Read {
    Done(Vec<u8>),
    TooLarge,
    Broken,
}

pub(crate) async fn next_chunk(body: &mut Body) -> Option<Result<Option<Bytes>, axum::Error>> {
    let frame = poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)).await?;
    Some(frame.map(|f| f.into_data().ok()))
}

/// The body's `Content-Length`, when the client declared a valid one.
pub(crate) fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
}

/// Reads at most `limit` bytes of body from the stream: an oversized body is refused as soon
/// as its `Content-Length` or its bytes so far say so, never buffered whole.
pub(crate) async fn read_body(
    headers: &HeaderMap,
    mut body: Body,
    limit: usize,
    timeout: Duration,
) -> Result<Bytes, ApiError> {
    let declared = declared_length(headers);
    if declared.is_some_and(|n| n > limit as u64) {
        // A client waiting for `100 Continue` has sent nothing yet: reading would invite the
        // body, so answer at once. Any other client is already sending it.
        let waiting = headers
            .get(header::EXPECT)
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
        if !waiting {
            drain(&mut body).await;
        }
        return Err(ApiError::BodyTooLarge { limit });
    }
    let read = async {
        let mut buf = Vec::with_capacity(declared.map_or(1024, |n| n as usize));
        while let Some(chunk) = next_chunk(&mut body).await {
            match chunk {
                Ok(Some(data)) => {
                    if buf.len() + data.len() > limit {
                        return Read::TooLarge;
                    }
                    buf.extend_from_slice(&data);
                }
                Ok(None) => {}
                Err(_) => return Read::Broken,
            }
        }
        Read::Done(buf)
    };
    match tokio::time::timeout(timeout, read).await {
        Ok(Read::Done(buf)) => Ok(Bytes::from(buf)),
        Ok(Read::TooLarge) => {
            drain(&mut body).await;
            Err(ApiError::BodyTooLarge { limit })
        }
        Ok(Read::Broken) => Err(ApiError::BodyUnreadable),
        Err(_) => Err(ApiError::BodyTimeout),
    }
}

pub(crate) async fn drain(body: &mut Body) {
    let drain = async {
        let mut seen = 0usize;
        while let Some(Ok(chunk)) = next_chunk(body).await {
            seen += chunk.map_or(0, |d| d.len());
            if seen > DRAIN_BYTES {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN_TIME, drain).await;
}

#[cfg(test)]
mod tests {
    use std::net::Ipv6Addr;

    use super::*;

    fn limiter(rate: u32, burst: u32, max: usize) -> RateLimiter {
        RateLimiter::new(&Limits {
            rate_per_sec: rate,
            burst,
            max_tracked_clients: max,
            ..Limits::default()
        })
    }

    #[test]
    fn a_bucket_allows_its_burst_then_its_rate() {
        let l = limiter(10, 3, 100);
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        let t = Instant::now();
        for _ in 0..3 {
            assert!(l.check(ip, t).is_ok());
        }
        assert_eq!(l.check(ip, t), Err(1));
        assert!(l.check(ip, t + Duration::from_millis(150)).is_ok());
        // Another client has its own bucket.
        assert!(l.check("192.0.2.2".parse().unwrap(), t).is_ok());
    }

    #[test]
    fn the_map_stays_bounded_and_ipv6_counts_by_slash_64() {
        let l = limiter(1, 1, 2);
        let t = Instant::now();
        let a: IpAddr = "2001:db8::1".parse().unwrap();
        let b: IpAddr = "2001:db8::2".parse().unwrap();
        assert!(l.check(a, t).is_ok());
        assert!(l.check(b, t).is_err(), "same /64, same bucket");
        for i in 0..100u16 {
            let ip = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, i + 1, 0, 0, 0, 0, 1));
            let _ = l.check(ip, t);
        }
        assert!(l.buckets.lock().unwrap().len() <= 2);
    }

    #[test]
    fn zero_rate_means_no_limit() {
        let l = limiter(0, 1, 1);
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        for _ in 0..100 {
            assert!(l.check(ip, Instant::now()).is_ok());
        }
    }
}
