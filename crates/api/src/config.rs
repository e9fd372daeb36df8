//! What the API is started with. The binary fills it from flags; `layerone-dev` and the tests
//! fill it directly.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use registry::Hex32;

#[derive(Clone, Debug)]
pub struct ApiConfig {
    /// The node's data directory: `inbox/`, `state/` and `blobs/` beneath it (store::Layout).
    pub data_dir: PathBuf,
    /// Where to listen; port 0 picks a free port ([`crate::RunningApi::addr`] tells which).
    pub listen: SocketAddr,
    /// PEM certificate chain, end-entity first.
    pub tls_cert: PathBuf,
    /// PEM private key of the certificate.
    pub tls_key: PathBuf,
    /// SHA-256 of the API key: the key itself is never stored on the node.
    pub key_sha256: [u8; 32],
    /// The installed node's id; a node-scope request naming another is refused.
    pub node_id: Hex32,
    /// The local door for sessions on the machine ([`crate::LocalSocket`]), when it has one.
    pub local_socket: Option<crate::LocalSocket>,
    pub limits: Limits,
}

/// The limits that keep one client, or a slow one, from taking the API for itself.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// Sustained requests per second allowed from one client address (an IPv6 client is
    /// counted by its /64). 0 turns rate limiting off.
    pub rate_per_sec: u32,
    /// How many requests one client may send at once before the rate applies.
    pub burst: u32,
    /// How many client addresses the rate limiter tracks; beyond that, new addresses share
    /// one bucket, so memory stays bounded whatever the number of sources.
    pub max_tracked_clients: usize,
    /// The most bytes a request's head may take (hyper's read buffer; at least 8 KiB).
    pub max_header_bytes: usize,
    /// The most header lines in one request.
    pub max_headers: usize,
    /// How long a client may take to send a request head (slowloris).
    pub header_read_timeout: Duration,
    /// How long a client may take to send a request body.
    pub body_read_timeout: Duration,
    /// How long a TLS handshake may take.
    pub handshake_timeout: Duration,
    /// The most connections open at once (counted from accept, before the TLS handshake); a
    /// connection over the cap is closed at once.
    pub max_connections: usize,
    /// The largest blob an upload may carry (`PUT /v1/blobs/{sha256}`).
    pub max_blob_bytes: u64,
    /// How long a client may take to send a blob.
    pub blob_read_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            rate_per_sec: 500,
            burst: 1000,
            max_tracked_clients: 10_000,
            max_header_bytes: 16 * 1024,
            max_headers: 64,
            header_read_timeout: Duration::from_secs(20),
            body_read_timeout: Duration::from_secs(30),
            handshake_timeout: Duration::from_secs(10),
            max_connections: 1024,
            max_blob_bytes: 4 << 30,
            blob_read_timeout: Duration::from_secs(30 * 60),
        }
    }
}
