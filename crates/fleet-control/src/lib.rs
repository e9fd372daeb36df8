//! The fleet's control plane (docs/design.md section 10, `docs/fleet.md`), as a library: what
//! `layerone fleet ...` and `layerone join` do, the command line (`crates/cli/src/fleet/`)
//! holding their flags and printing their results.
//!
//! - [`admin`]: the administrative directory (CA, the control plane's credential, the broker's
//!   derived configuration) that `fleet init` makes;
//! - [`service`]: `fleet serve`, the join service, liveness and dead letters;
//! - [`control`]: the control plane's commands (token, nodes, assign, submit, events, drain,
//!   remove);
//! - [`node`]: the joining node's side (join, rescue, status);
//! - [`rotation`]: rotating the fleet's CA (`fleet ca rotate|finish|status`);
//! - [`operator`]: operators' credentials (`fleet operator add|remove|list`).
//!
//! Here too: the part of `fleet init` that installs the units and the part that needs the
//! broker.

pub mod admin;
pub mod control;
pub mod node;
pub mod operator;
pub mod rotation;
pub mod service;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;

use admin::{AdminDir, ControlPlane};
use control::Fleet;
use node::NodePaths;

/// Writes the broker's and the fleet service's units whole, and starts them.
pub fn install_units(dir: &AdminDir) -> anyhow::Result<()> {
    let provider = real_provider();
    let units = std::path::Path::new(admin::UNIT_DIR);
    admin::write_file(
        &units.join(admin::BROKER_UNIT),
        admin::broker_unit(dir).as_bytes(),
        0o644,
    )?;
    admin::write_file(
        &units.join(admin::SERVICE_UNIT),
        admin::service_unit(dir).as_bytes(),
        0o644,
    )?;
    provider.systemd_daemon_reload()?;
    provider.systemd_enable(&[admin::BROKER_UNIT, admin::SERVICE_UNIT])?;
    Ok(())
}

/// The provider of the fleet's host, for `nats-server -t` and systemctl: programs whose paths
/// are the same on every platform the node supports.
pub fn real_provider() -> provider::Provider {
    provider::Provider::new(provider::ProviderConfig {
        platform: provider::Platform::Debian,
        root: "/".into(),
        executor: std::sync::Arc::new(provider::RealExecutor),
        machine: std::sync::Arc::new(provider::RealMachine),
        audit_dir: PathBuf::from(install::paths::AUDIT_DIR),
    })
}

/// The part of `fleet init` that needs the broker, first: connects as the control plane
/// (waiting up to `wait` for the broker to answer), makes the streams and buckets, publishes
/// the fleet's first trust bundle and this build's catalogue. Returns the connection and the
/// catalogue's digest.
pub async fn init_on_broker(dir: &AdminDir, wait: Duration) -> anyhow::Result<(Fleet, String)> {
    let settings = dir.load_settings()?;
    let control_plane = ControlPlane::load(&dir.control_plane())?;
    let deadline = tokio::time::Instant::now() + wait;
    let fleet = loop {
        match Fleet::connect(control_plane.clone()).await {
            Ok(fleet) => break fleet,
            Err(e) if tokio::time::Instant::now() >= deadline => {
                return Err(e.context("the broker did not answer (is it started?)"));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(250)).await,
        }
    };
    fleet::setup::ensure_streams_and_buckets(&fleet.js, settings.replicas).await?;
    if fleet.trust_bundle().await?.is_none() {
        fleet
            .publish_trust(vec![std::fs::read_to_string(dir.ca_pem())?])
            .await?;
    }
    let sha = fleet.publish_catalogue().await?;
    Ok((fleet, sha))
}

/// The part of `fleet init --node NAME` that registers this node: its key (made if it has
/// none) registered under `name`, and its identity written if it has none.
pub async fn register_this_node(
    dir: &AdminDir,
    fleet: &Fleet,
    name: &str,
    paths: &NodePaths,
) -> anyhow::Result<()> {
    let control_plane = &fleet.control_plane;
    let service = service::Service::connect(dir.clone(), None).await?;
    let credentials = paths.identity.load()?;
    let seed = node::ensure_seed(paths)?;
    let public_key = nkeys::KeyPair::from_seed(&seed)?.public_key();
    service
        .register(name, &paths.node_id, &public_key)
        .await
        .map_err(|(code, message)| anyhow::anyhow!("[{code}] {message}"))?;
    if credentials.is_none() {
        let identity = fleet::identity::Identity {
            node: name.to_owned(),
            node_id: paths.node_id.clone(),
            fleet_key: control_plane.fleet_key()?,
            brokers: control_plane.brokers.clone(),
            joined_at_ms: control::now_ms(),
        };
        node::write_identity(paths, &identity, &control_plane.ca_pem)?;
    }
    Ok(())
}

/// What `--broker` addresses must look like, checked before anything is written.
pub fn check_broker_url(url: &str) -> anyhow::Result<()> {
    url.parse::<async_nats::ServerAddr>()
        .map(|_| ())
        .with_context(|| format!("{url} is not a broker address"))
}
