//! `layerone fleet operator add|remove|list`: operators' credentials, issued on the host of the
//! administrative directory. An operator is a broker user of its own (`fleet::operator`):
//! registered in `<dir>/operators.json`, rendered into the broker's configuration, revoked by
//! removal (the reload closes its connections).

use std::path::Path;

use anyhow::Context as _;
use fleet::operator::{OperatorCredential, valid_operator_name};

use super::admin::{AdminDir, ControlPlane, write_file};

/// Renders the broker's configuration again and, if it changed and the broker runs (its pid
/// file exists), reloads it.
fn apply(dir: &AdminDir) -> anyhow::Result<()> {
    let nodes = dir.load_nodes()?;
    if dir.render_broker_config(None, &nodes)? {
        let settings = dir.load_settings()?;
        if settings.broker.pid_file.exists() {
            dir.reload_broker()?;
            println!("the broker's configuration changed; reloaded");
        } else {
            println!("the broker's configuration changed; the broker is not running");
        }
    }
    Ok(())
}

/// Issues operator `name` a credential at `out` (0600): a new nkey, the brokers and the CA.
/// Refused if `name` is registered already (remove it first).
pub fn add(dir: &AdminDir, name: &str, out: &Path) -> anyhow::Result<()> {
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
    apply(dir)?;
    println!(
        "operator {name}: credential written to {} (0600)",
        out.display()
    );
    Ok(())
}

/// Revokes operator `name`: its user leaves the broker's configuration.
pub fn remove(dir: &AdminDir, name: &str) -> anyhow::Result<()> {
    let mut operators = dir.load_operators()?;
    let before = operators.len();
    operators.retain(|(n, _)| n != name);
    anyhow::ensure!(operators.len() < before, "no operator named {name}");
    dir.write_operators(&operators)?;
    apply(dir)?;
    println!("operator {name} removed: its credential is refused");
    Ok(())
}

pub fn list(dir: &AdminDir, json: bool) -> anyhow::Result<()> {
    let operators = dir.load_operators()?;
    if json {
        let rows: Vec<_> = operators
            .iter()
            .map(|(name, key)| serde_json::json!({"name": name, "public_key": key}))
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        for (name, key) in operators {
            println!("{name:20} {key}");
        }
    }
    Ok(())
}
