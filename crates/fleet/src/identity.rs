//! A node's fleet identity on disk, written by `layerone join` (root) and read by the daemon
//! (the API's user) and by root's `apply_assignment`:
//!
//! - `identity.json` (root's, 0644): the node's name and id, the fleet key it pinned, the
//!   brokers;
//! - `ca.pem` (root's, 0644): the fleet CA(s) it verifies every broker with;
//! - `node.nk` (the API user's, 0600): the node's nkey seed, made on the node; it never leaves.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    pub node: String,
    pub node_id: String,
    /// The fleet's assignment-signing key (`A...`), pinned at join.
    pub fleet_key: String,
    pub brokers: Vec<String>,
    pub joined_at_ms: i64,
}

/// Where a node's identity lives (`/etc/layerone/fleet` on an installed node).
#[derive(Clone, Debug)]
pub struct IdentityDir(pub PathBuf);

/// What the daemon connects with.
#[derive(Clone)]
pub struct Credentials {
    pub identity: Identity,
    pub seed: String,
    pub ca_pem: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl IdentityDir {
    pub fn identity_json(&self) -> PathBuf {
        self.0.join("identity.json")
    }
    pub fn ca_pem(&self) -> PathBuf {
        self.0.join("ca.pem")
    }
    pub fn seed(&self) -> PathBuf {
        self.0.join("node.nk")
    }

    /// The node's credentials, or `None` if it has not joined a fleet.
    pub fn load(&self) -> anyhow::Result<Option<Credentials>> {
        let text = match std::fs::read_to_string(self.identity_json()) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(anyhow::anyhow!(
                    "reading {}: {e}",
                    self.identity_json().display()
                ));
            }
        };
        let identity: Identity = serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{}: {e}", self.identity_json().display()))?;
        let read = |path: &Path| {
            std::fs::read_to_string(path)
                .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))
        };
        Ok(Some(Credentials {
            identity,
            seed: read(&self.seed())?.trim().to_owned(),
            ca_pem: read(&self.ca_pem())?,
        }))
    }
}
