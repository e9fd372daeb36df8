//! The joining node's side: `layerone join TOKEN`, `layerone fleet rescue`, and what the
//! fleet lines of `layerone status` say ([`status`]).
//!
//! The node makes its own nkey (its seed never leaves it), checks the broker's certificate
//! against the CA the token pins before it sends anything, registers, and writes its
//! identity. The daemon in the API's process sees the identity appear and starts.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use fleet::identity::{Identity, IdentityDir};
use fleet::protocol::{JOIN_SUBJECT, JoinReply, JoinRequest};

use crate::admin::write_file;
use crate::control::now_ms;

/// Where a node keeps its fleet identity and its daemon's state: an installed node's, or a
/// dev node's sandbox.
#[derive(Clone, Debug)]
pub struct NodePaths {
    pub identity: IdentityDir,
    pub state_dir: PathBuf,
    /// The node's data directory (state.db beneath it).
    pub data_dir: PathBuf,
    pub node_id: String,
    /// The API's user, which must own the seed; `None` for a dev node (the caller's).
    pub api_user: Option<(u32, u32)>,
}

impl NodePaths {
    /// A dev node's (`layerone-dev --root ROOT`).
    pub fn dev(root: &Path) -> anyhow::Result<NodePaths> {
        let info = client::DevInfo::load(&root.join("dev.json")).with_context(|| {
            format!(
                "reading {}/dev.json (has the dev node run?)",
                root.display()
            )
        })?;
        Ok(NodePaths {
            identity: dev_identity_dir(root),
            state_dir: root.join("data").join("fleet"),
            data_dir: root.join("data"),
            node_id: info.node_id.to_string(),
            api_user: None,
        })
    }

    /// An installed node's.
    pub fn installed() -> anyhow::Result<NodePaths> {
        let text = std::fs::read_to_string(install::paths::CONFIG).with_context(|| {
            format!(
                "reading {} (is the node installed?)",
                install::paths::CONFIG
            )
        })?;
        let config = install::config::NodeConfig::parse(&text)
            .map_err(|e| anyhow::anyhow!("{}: {e:?}", install::paths::CONFIG))?;
        let user = crate::real_provider()
            .lookup_user(install::paths::API_USER)?
            .map(|entry| (entry.uid, entry.gid))
            .with_context(|| format!("no user {}", install::paths::API_USER))?;
        Ok(NodePaths {
            identity: IdentityDir(PathBuf::from(IDENTITY_DIR)),
            state_dir: Path::new(install::paths::DATA_DIR).join("fleet"),
            data_dir: PathBuf::from(install::paths::DATA_DIR),
            node_id: config.node_id.to_string(),
            api_user: Some(user),
        })
    }
}

/// An installed node's fleet identity.
pub const IDENTITY_DIR: &str = "/etc/layerone/fleet";

/// A dev node's identity: under its simulated system's `/etc/layerone/fleet`, where root's
/// `apply_assignment` reads the pinned fleet key.
pub fn dev_identity_dir(root: &Path) -> IdentityDir {
    IdentityDir(root.join("sysroot").join("etc/layerone/fleet"))
}

/// The node's nkey seed: the one it has, or a new one made here, 0600, the API user's.
pub fn ensure_seed(paths: &NodePaths) -> anyhow::Result<String> {
    if let Ok(seed) = std::fs::read_to_string(paths.identity.seed()) {
        return Ok(seed.trim().to_owned());
    }
    std::fs::create_dir_all(&paths.identity.0)?;
    let seed = nkeys::KeyPair::new_user().seed()?;
    write_file(&paths.identity.seed(), seed.as_bytes(), 0o600)?;
    if let Some((uid, gid)) = paths.api_user {
        std::os::unix::fs::chown(paths.identity.seed(), Some(uid), Some(gid))?;
    }
    Ok(seed)
}

/// Joins the fleet with a one-time token; the node's existing key is kept (a rescue with a
/// fresh token keeps the node's identity).
pub async fn join(token: &str, name: Option<&str>, paths: &NodePaths) -> anyhow::Result<Identity> {
    let token = fleet::token::JoinToken::parse(token)?;
    let seed = ensure_seed(paths)?;
    let public_key = nkeys::KeyPair::from_seed(&seed)?.public_key();
    let client = fleet::connect::joiner(&token.ca_sha256, &token.join_password, &token.brokers)
        .await
        .context("reaching the broker the token names")?;
    let request = JoinRequest {
        token_id: token.id.clone(),
        secret: token.secret.clone(),
        node: name.map(str::to_owned),
        node_id: paths.node_id.clone(),
        public_key,
    };
    let payload = serde_json::to_vec(&request)?;
    // A fleet service that is (re)starting has no subscription for a moment: the broker says
    // "no responders" at once, and the join asks again within its 30 s.
    let reply = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match client.request(JOIN_SUBJECT, payload.clone().into()).await {
                Err(e) if e.kind() == async_nats::RequestErrorKind::NoResponders => {
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                answered => break answered,
            }
        }
    })
    .await
    .context("the join service did not answer in 30 s")?
    .context("the join request")?;
    let reply: JoinReply =
        serde_json::from_slice(&reply.payload).context("the join service's answer")?;
    match reply {
        JoinReply::Refused { code, message } => anyhow::bail!("[{code}] {message}"),
        JoinReply::Joined {
            node,
            fleet_key,
            ca_pem,
            brokers,
        } => {
            let identity = Identity {
                node,
                node_id: paths.node_id.clone(),
                fleet_key,
                brokers,
                joined_at_ms: now_ms(),
            };
            // What the fleet trusts now replaces a trust bundle the daemon kept from before (a
            // node rescued with a fresh token after a rotation it missed).
            forget_kept_trust(paths)?;
            write_identity(paths, &identity, &ca_pem)?;
            Ok(identity)
        }
    }
}

pub fn write_identity(paths: &NodePaths, identity: &Identity, ca_pem: &str) -> anyhow::Result<()> {
    write_file(&paths.identity.ca_pem(), ca_pem.as_bytes(), 0o644)?;
    write_file(
        &paths.identity.identity_json(),
        serde_json::to_string_pretty(identity)?.as_bytes(),
        0o644,
    )
}

fn forget_kept_trust(paths: &NodePaths) -> anyhow::Result<()> {
    let kept = fleet_daemon::trust::file(&paths.state_dir);
    match std::fs::remove_file(&kept) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(anyhow::anyhow!("removing {}: {e}", kept.display())),
    }
}

/// Points a cut-off node at other brokers, keeping its identity, its queued work (on the
/// broker) and its unpublished events (in `fleet.db`).
pub fn rescue_brokers(paths: &NodePaths, brokers: Vec<String>) -> anyhow::Result<Identity> {
    let credentials = paths
        .identity
        .load()?
        .context("this node has not joined a fleet")?;
    let mut identity = credentials.identity;
    identity.brokers = brokers;
    write_identity(paths, &identity, &credentials.ca_pem)?;
    Ok(identity)
}

/// What `layerone status` and `layerone fleet status` say of the node's fleet link, for a
/// node that joined a fleet.
#[derive(Debug)]
pub struct LinkStatus {
    /// The node's name in the fleet.
    pub node: String,
    /// The brokers it reaches.
    pub brokers: Vec<String>,
    pub trust: TrustStatus,
    /// The node's assignment as state.db holds it.
    pub assignment: Result<Option<store::AssignmentRow>, store::ReadError>,
    /// The daemon's link to the broker and its outbox; `None` until the daemon first ran
    /// (no `fleet.db`).
    pub daemon: Option<DaemonStatus>,
}

/// What the node trusts the broker's certificate with.
#[derive(Debug)]
pub enum TrustStatus {
    /// The fleet's trust bundle the daemon kept: its generation and its CAs' SHA-256.
    Bundle {
        generation: u64,
        sha256s: Vec<String>,
    },
    /// No bundle kept: the CA the node joined with (its SHA-256s).
    Joined { sha256s: Vec<String> },
    /// The kept bundle cannot be read.
    Unreadable(anyhow::Error),
}

/// The fleet daemon's side of the node, from its `fleet.db`.
#[derive(Debug)]
pub struct DaemonStatus {
    pub link: BrokerLink,
    /// Events waiting to be published.
    pub events_waiting: i64,
    /// The position in root's feed published through.
    pub published_through: i64,
}

/// The daemon's connection to the broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrokerLink {
    NotReached,
    Connected {
        since_ms: i64,
    },
    CutOff {
        since_ms: i64,
    },
    /// The broker refuses the node's key: it was removed from the fleet, or another machine
    /// joined under its name. Only a new join brings it back.
    Refused {
        since_ms: i64,
    },
}

/// The node's fleet link: `None` for a node on its own (it joined no fleet).
pub fn status(paths: &NodePaths) -> anyhow::Result<Option<LinkStatus>> {
    let Some(credentials) = paths.identity.load()? else {
        return Ok(None);
    };
    let identity = credentials.identity;
    let trust = match fleet_daemon::trust::load(&paths.state_dir) {
        Ok(Some(bundle)) => TrustStatus::Bundle {
            generation: bundle.generation,
            sha256s: fleet::tls::bundle_sha256s(&bundle.pems())?,
        },
        Ok(None) => TrustStatus::Joined {
            sha256s: fleet::tls::bundle_sha256s(&[&credentials.ca_pem])?,
        },
        Err(e) => TrustStatus::Unreadable(e),
    };
    let state = store::StateReader::new(&store::Layout::new(&paths.data_dir).state_db());
    let assignment = state.assignment();
    let db = paths.state_dir.join("fleet.db");
    let daemon = if db.exists() {
        let outbox = fleet_daemon::outbox::Outbox::open(&db)?;
        let link = match outbox.link()? {
            _ if let Some(since_ms) = outbox.refused_since()? => BrokerLink::Refused { since_ms },
            Some(link) if link.connected => BrokerLink::Connected {
                since_ms: link.since_ms,
            },
            Some(link) => BrokerLink::CutOff {
                since_ms: link.since_ms,
            },
            None => BrokerLink::NotReached,
        };
        Some(DaemonStatus {
            link,
            events_waiting: outbox.count()?,
            published_through: outbox.cursor()?,
        })
    } else {
        None
    };
    Ok(Some(LinkStatus {
        node: identity.node,
        brokers: identity.brokers,
        trust,
        assignment,
        daemon,
    }))
}
