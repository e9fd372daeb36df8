//! `layerone fleet operator add|remove|list`: operators' credentials, issued on the host of the
//! administrative directory. An operator is a broker user of its own (`fleet::operator`):
//! registered in `<dir>/operators.json`, rendered into the broker's configuration, revoked by
//! removal (the reload closes its connections).

use std::path::Path;

use anyhow::Context as _;
use fleet::operator::{OperatorCredential, valid_operator_name};

use crate::admin::{AdminDir, ControlPlane, write_file};

/// What became of the broker once the operators changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrokerReload {
    /// Its configuration is what it was.
    Unchanged,
    /// Its configuration changed and it was told to read it again.
    Reloaded,
    /// Its configuration changed; it is not running (no pid file).
    NotRunning,
}

/// Renders the broker's configuration again and, if it changed and the broker runs (its pid
/// file exists), reloads it.
fn apply(dir: &AdminDir) -> anyhow::Result<BrokerReload> {
    let nodes = dir.load_nodes()?;
    if !dir.render_broker_config(None, &nodes)? {
        return Ok(BrokerReload::Unchanged);
    }
    let settings = dir.load_settings()?;
    if settings.broker.pid_file.exists() {
        dir.reload_broker()?;
        Ok(BrokerReload::Reloaded)
    } else {
        Ok(BrokerReload::NotRunning)
    }
}

/// Issues operator `name` a credential at `out` (0600): a new nkey, the brokers and the CA.
/// Refused if `name` is registered already (remove it first).
pub fn add(dir: &AdminDir, name: &str, out: &Path) -> anyhow::Result<BrokerReload> {
    anyhow::ensure!(
        valid_operator_name(name),
        "invalid operator name {name:?}: a DNS label (lowercase letters, digits, '-')"
    );
    let mut operators = dir.load_operators()?;
    anyhow::ensure!(
        !operators.iter().any(|(n, _)| n == name),
        "an operator named {name} is registered; remove it first (`layerone fleet operator remove {name}`)"
    );
    let control_plane = ControlPlane::load(&dir.control_plane())?;
    let key = nkeys::KeyPair::new_user();
    let credential = OperatorCredential {
        name: name.to_owned(),
        brokers: control_plane.brokers.clone(),
        ca_pem: control_plane.ca_pem.clone(),
        seed: key.seed()?,
    };
    write_file(
        out,
        serde_json::to_string_pretty(&credential)?.as_bytes(),
        0o600,
    )
    .with_context(|| format!("writing the operator credential {}", out.display()))?;
    operators.push((name.to_owned(), key.public_key()));
    dir.write_operators(&operators)?;
    apply(dir)
}

/// Revokes operator `name`: its user leaves the broker's configuration.
pub fn remove(dir: &AdminDir, name: &str) -> anyhow::Result<BrokerReload> {
    let mut operators = dir.load_operators()?;
    let before = operators.len();
    operators.retain(|(n, _)| n != name);
    anyhow::ensure!(operators.len() < before, "no operator named {name}");
    dir.write_operators(&operators)?;
    apply(dir)
}

/// The registered operators: `(name, public key)`, sorted.
pub fn list(dir: &AdminDir) -> anyhow::Result<Vec<(String, String)>> {
    dir.load_operators()
}
