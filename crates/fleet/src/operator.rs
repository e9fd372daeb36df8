//! An operator's credential: what an operator session (`layerone mcp --fleet-credential`)
//! reaches the fleet with. Issued by the fleet's administrator (`layerone fleet operator
//! add`), it is its own broker user, neither a node's nor the control plane's: it submits to
//! any node's queue and reads the events and the fleet's state, nothing more
//! ([`crate::protocol::operator_permissions`]).

use std::path::Path;

use serde::{Deserialize, Serialize};

/// Where an installed host keeps an operator credential (0640 root:layerone-operators).
pub const DEFAULT_PATH: &str = "/etc/layerone/fleet/operator.json";

/// The credential file, written whole by `layerone fleet operator add`.
#[derive(Clone, Serialize, Deserialize)]
pub struct OperatorCredential {
    /// The operator's name: its inbox prefix on the broker.
    pub name: String,
    /// `tls://host:port` of every broker.
    pub brokers: Vec<String>,
    /// Every CA a broker's certificate may be issued by.
    pub ca_pem: String,
    /// The operator's nkey seed (`SU...`).
    pub seed: String,
}

impl std::fmt::Debug for OperatorCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OperatorCredential")
            .field("name", &self.name)
            .field("brokers", &self.brokers)
            .finish_non_exhaustive()
    }
}

impl OperatorCredential {
    pub fn load(path: &Path) -> anyhow::Result<OperatorCredential> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            anyhow::anyhow!(
                "reading the operator credential {} (made by `layerone fleet operator add`): {e}",
                path.display()
            )
        })?;
        serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }

    pub fn public_key(&self) -> anyhow::Result<String> {
        Ok(nkeys::KeyPair::from_seed(&self.seed)?.public_key())
    }

    /// The operator's connection: its nkey, its own inbox prefix, the fleet CA.
    pub async fn connect(&self) -> anyhow::Result<async_nats::Client> {
        crate::connect::operator(&self.name, &self.seed, &[&self.ca_pem], &self.brokers).await
    }
}

/// Whether `name` can name an operator: the same rule as a node's name (a subject token).
pub fn valid_operator_name(name: &str) -> bool {
    crate::protocol::valid_node_name(name)
}
