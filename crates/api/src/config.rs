//! What the API is started with. The binary fills it from flags and from the `[api]` table of
//! the node's configuration file ([`FrontDoor`]); `layerone-dev` from the same table of its
//! sysroot's file; the tests fill it directly.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use registry::Hex32;
use serde::{Deserialize, Serialize};

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
    /// How long a new connection may stay silent before its first byte (the start of its TLS
    /// handshake); then it is closed.
    pub first_byte_timeout: Duration,
    /// How long a TLS handshake may take, from its first byte.
    pub handshake_timeout: Duration,
    /// The most connections open at once whose TLS handshake has completed; one over the cap
    /// is closed at once. A connection counts here only once its handshake is done.
    pub max_connections: usize,
    /// The most connections not yet through their TLS handshake, from every source together;
    /// one over the cap is closed at once.
    pub max_handshakes: usize,
    /// The most connections open at once from one source address (an IPv6 source by its /64),
    /// counted from accept, whatever their stage; one over the cap is closed at once.
    pub max_connections_per_source: usize,
    /// When set, only these source networks may connect: any other address has its TCP
    /// connection closed at accept, before a byte of TLS.
    pub allowed_sources: Option<Vec<Network>>,
    /// The largest blob an upload may carry (`PUT /v1/blobs/{sha256}`).
    pub max_blob_bytes: u64,
    /// How long a client may take to send a blob.
    pub blob_read_timeout: Duration,
    /// How many requests may be queued, in total and per account, before a new one is
    /// answered 429 `queue_full` (the node-scope lane has the per-account cap).
    pub queue: inbox::QueueCaps,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            rate_per_sec: 500,
            burst: 1000,
            max_tracked_clients: 10_000,
            max_header_bytes: 16 * 1024,
            max_headers: 64,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            first_byte_timeout: Duration::from_secs(3),
            handshake_timeout: Duration::from_secs(5),
            max_connections: 1024,
            max_handshakes: 256,
            max_connections_per_source: 64,
            allowed_sources: None,
            max_blob_bytes: 4 << 30,
            blob_read_timeout: Duration::from_secs(30 * 60),
            queue: inbox::QueueCaps::default(),
        }
    }
}

/// A source network of the allowlist: an address and a prefix length (`192.0.2.0/24`,
/// `2001:db8::/32`; a bare address is the one host).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Network {
    addr: IpAddr,
    prefix: u8,
}

impl Network {
    /// Whether `ip` is in this network. An IPv4-mapped IPv6 address is its IPv4 address.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip.to_canonical()) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

impl FromStr for Network {
    type Err = String;
    fn from_str(s: &str) -> Result<Network, String> {
        let (addr, prefix) = match s.split_once('/') {
            Some((addr, prefix)) => (addr, Some(prefix)),
            None => (s, None),
        };
        let addr: IpAddr = addr
            .parse()
            .map_err(|_| format!("{s:?} is not an address or an address/prefix"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) => p
                .parse::<u8>()
                .ok()
                // A prefix of 0 would allow a whole address family: an allowlist that allows
                // everyone is no allowlist, so it is refused rather than silently meaning "off".
                .filter(|p| (1..=max).contains(p))
                .ok_or_else(|| format!("{s:?}: the prefix must be 1 to {max}"))?,
        };
        let network = Network { addr, prefix };
        // Host bits set (`192.0.2.1/24`) usually mean a typo in the prefix: refuse them.
        if !network.contains(addr) || network.base() != addr {
            return Err(format!("{s:?} has host bits set beyond /{prefix}"));
        }
        Ok(network)
    }
}

impl Network {
    fn base(&self) -> IpAddr {
        match self.addr {
            IpAddr::V4(a) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                IpAddr::V4((u32::from(a) & mask).into())
            }
            IpAddr::V6(a) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                IpAddr::V6((u128::from(a) & mask).into())
            }
        }
    }
}

impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// The `[api]` table of `/etc/layerone/config.toml`: the front door's limits an operator may
/// change. Every key is optional; an absent key keeps [`Limits::default`]'s value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrontDoor {
    /// Connections through their TLS handshake open at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_connections: Option<usize>,
    /// Connections still before or in their TLS handshake, from all sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_handshakes: Option<usize>,
    /// Connections open at once from one source address (an IPv6 source by its /64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_connections_per_source: Option<usize>,
    /// Seconds a new connection may stay silent before its first byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_byte_timeout_secs: Option<u64>,
    /// Seconds a TLS handshake may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handshake_timeout_secs: Option<u64>,
    /// Seconds a client may take to send a request head.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_read_timeout_secs: Option<u64>,
    /// Seconds a client may take to send a request body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_read_timeout_secs: Option<u64>,
    /// The source networks allowed to connect (CIDRs); absent, every source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<String>>,
    /// Requests queued from every account together before a new one is answered 429.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_total: Option<usize>,
    /// Requests queued from one account (and node-scope requests) before a new one is
    /// answered 429.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_per_account: Option<usize>,
}

/// Why a front door setting was refused: a stable code and the key, as `api.KEY`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message} ({code})")]
pub struct FrontDoorError {
    /// `invalid_network`, `empty_allowlist`, `out_of_range` or `invalid_config`.
    pub code: &'static str,
    pub field: String,
    pub message: String,
}

/// The bounds of each count and deadline: below them the door would refuse everyone, above
/// them it would protect nothing.
const COUNT_RANGE: (usize, usize) = (1, 1_000_000);
const SECS_RANGE: (u64, u64) = (1, 3600);

impl FrontDoor {
    /// Whether no key is set (the table is left out of a rendered file).
    pub fn is_default(&self) -> bool {
        *self == FrontDoor::default()
    }

    /// Parses the `[api]` table of a whole configuration file, ignoring every other table
    /// (the installer checks those).
    pub fn from_config_file(text: &str) -> Result<FrontDoor, FrontDoorError> {
        #[derive(Deserialize)]
        struct File {
            #[serde(default)]
            api: FrontDoor,
        }
        let file: File = toml::from_str(text).map_err(|e: toml::de::Error| FrontDoorError {
            code: "invalid_config",
            field: toml_field_of(text, &e).map_or_else(|| "api".to_owned(), |k| format!("api.{k}")),
            message: e.message().to_owned(),
        })?;
        file.api.limits(Limits::default())?;
        Ok(file.api)
    }

    /// `base` with this table's values in force, each checked.
    pub fn limits(&self, base: Limits) -> Result<Limits, FrontDoorError> {
        let count = |key: &str, v: Option<usize>, default: usize| match v {
            None => Ok(default),
            Some(n) if (COUNT_RANGE.0..=COUNT_RANGE.1).contains(&n) => Ok(n),
            Some(n) => Err(out_of_range(
                key,
                n as u64,
                COUNT_RANGE.0 as u64,
                COUNT_RANGE.1 as u64,
            )),
        };
        let secs = |key: &str, v: Option<u64>, default: Duration| match v {
            None => Ok(default),
            Some(n) if (SECS_RANGE.0..=SECS_RANGE.1).contains(&n) => Ok(Duration::from_secs(n)),
            Some(n) => Err(out_of_range(key, n, SECS_RANGE.0, SECS_RANGE.1)),
        };
        let allowed_sources = match &self.allow {
            None => base.allowed_sources.clone(),
            Some(list) if list.is_empty() => {
                return Err(FrontDoorError {
                    code: "empty_allowlist",
                    field: "api.allow".into(),
                    message: "an empty allowlist would refuse every source; leave the key out to allow all".into(),
                });
            }
            Some(list) => Some(
                list.iter()
                    .map(|n| {
                        n.parse::<Network>().map_err(|message| FrontDoorError {
                            code: "invalid_network",
                            field: "api.allow".into(),
                            message,
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        Ok(Limits {
            max_connections: count(
                "max_connections",
                self.max_connections,
                base.max_connections,
            )?,
            max_handshakes: count("max_handshakes", self.max_handshakes, base.max_handshakes)?,
            max_connections_per_source: count(
                "max_connections_per_source",
                self.max_connections_per_source,
                base.max_connections_per_source,
            )?,
            first_byte_timeout: secs(
                "first_byte_timeout_secs",
                self.first_byte_timeout_secs,
                base.first_byte_timeout,
            )?,
            handshake_timeout: secs(
                "handshake_timeout_secs",
                self.handshake_timeout_secs,
                base.handshake_timeout,
            )?,
            header_read_timeout: secs(
                "header_read_timeout_secs",
                self.header_read_timeout_secs,
                base.header_read_timeout,
            )?,
            body_read_timeout: secs(
                "body_read_timeout_secs",
                self.body_read_timeout_secs,
                base.body_read_timeout,
            )?,
            allowed_sources,
            queue: inbox::QueueCaps {
                total: count("queue_total", self.queue_total, base.queue.total as usize)? as u64,
                per_account: count(
                    "queue_per_account",
                    self.queue_per_account,
                    base.queue.per_account as usize,
                )? as u64,
            },
            ..base
        })
    }
}

fn out_of_range(key: &str, value: u64, min: u64, max: u64) -> FrontDoorError {
    FrontDoorError {
        code: "out_of_range",
        field: format!("api.{key}"),
        message: format!("{value} is outside {min} to {max}"),
    }
}

/// The key on the line a TOML parser's error points at: good enough to name the field.
pub fn toml_field_of(text: &str, e: &toml::de::Error) -> Option<String> {
    let span = e.span()?;
    let line_start = text[..span.start.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next()?;
    let key = line.split('=').next()?.trim();
    (!key.is_empty() && !key.starts_with('[') && !key.starts_with('#')).then(|| key.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn networks_parse_and_contain() {
        let net: Network = "192.0.2.0/24".parse().unwrap();
        assert!(net.contains("192.0.2.77".parse().unwrap()));
        assert!(net.contains("::ffff:192.0.2.77".parse().unwrap()));
        assert!(!net.contains("192.0.3.1".parse().unwrap()));
        assert!(!net.contains("2001:db8::1".parse().unwrap()));
        let host: Network = "127.0.0.1".parse().unwrap();
        assert!(host.contains("127.0.0.1".parse().unwrap()));
        assert!(!host.contains("127.0.0.2".parse().unwrap()));
        let v6: Network = "2001:db8::/32".parse().unwrap();
        assert!(v6.contains("2001:db8:1::5".parse().unwrap()));
        assert!(!v6.contains("2001:db9::5".parse().unwrap()));
        for bad in [
            "",
            "10.0.0.0/33",
            "10.0.0.0/0",
            "10.0.0.1/8",
            "nope/8",
            "::/129",
            "10.0.0.0/x",
        ] {
            assert!(bad.parse::<Network>().is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn the_api_table_is_checked_naming_the_key_and_a_code() {
        let err = |text: &str| FrontDoor::from_config_file(text).unwrap_err();
        let e = err("[api]\nallow = [\"10.0.0.1/8\"]\n");
        assert_eq!((e.code, e.field.as_str()), ("invalid_network", "api.allow"));
        let e = err("[api]\nallow = []\n");
        assert_eq!((e.code, e.field.as_str()), ("empty_allowlist", "api.allow"));
        let e = err("[api]\nmax_connections_per_source = 0\n");
        assert_eq!(
            (e.code, e.field.as_str()),
            ("out_of_range", "api.max_connections_per_source")
        );
        let e = err("[api]\nfirst_byte_timeout_secs = 99999\n");
        assert_eq!(
            (e.code, e.field.as_str()),
            ("out_of_range", "api.first_byte_timeout_secs")
        );
        let e = err("[api]\ncolour = 1\n");
        assert_eq!((e.code, e.field.as_str()), ("invalid_config", "api.colour"));
        let e = err("[api]\nhandshake_timeout_secs = \"soon\"\n");
        assert_eq!(
            (e.code, e.field.as_str()),
            ("invalid_config", "api.handshake_timeout_secs")
        );
        // Other tables are the installer's to check; a file without `[api]` keeps the defaults.
        let none =
            FrontDoor::from_config_file("node_id = \"x\"\n[mail]\nrelayhost = \"\"\n").unwrap();
        assert_eq!(none.limits(Limits::default()).unwrap(), Limits::default());
        let set = FrontDoor::from_config_file(
            "[api]\nmax_connections_per_source = 8\nallow = [\"192.0.2.0/24\", \"2001:db8::/32\"]\nheader_read_timeout_secs = 4\n",
        )
        .unwrap()
        .limits(Limits::default())
        .unwrap();
        assert_eq!(set.max_connections_per_source, 8);
        assert_eq!(set.header_read_timeout, Duration::from_secs(4));
        assert_eq!(set.allowed_sources.as_ref().map(Vec::len), Some(2));
        assert_eq!(set.queue, inbox::QueueCaps::default());
        let queue =
            FrontDoor::from_config_file("[api]\nqueue_total = 900\nqueue_per_account = 30\n")
                .unwrap()
                .limits(Limits::default())
                .unwrap();
        assert_eq!(
            queue.queue,
            inbox::QueueCaps {
                total: 900,
                per_account: 30
            }
        );
        let e = err("[api]\nqueue_per_account = 0\n");
        assert_eq!(
            (e.code, e.field.as_str()),
            ("out_of_range", "api.queue_per_account")
        );
    }
}
