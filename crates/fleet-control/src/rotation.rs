//! `layerone fleet ca rotate|finish|status`: rotating the fleet's CA without stopping the
//! fleet (`docs/fleet.md`, "Rotating the fleet CA"). Run on the host of the administrative
//! directory, beside the broker: it holds the CA keys and signals the broker.
//!
//! 1. `rotate` makes the new CA beside the old one (`ca-next.pem`, `ca-next.key`), puts both in
//!    the control plane's credential and publishes both as the fleet's trust bundle
//!    (`fleet_trust`), telling every node on its queue. Each node keeps the bundle and trusts
//!    both; its heartbeat says which CAs it trusts. The broker still presents the old CA's
//!    certificate, and join tokens still pin the old CA.
//! 2. `finish`, once every node that heartbeats trusts the new CA (it names those that do not,
//!    and refuses), issues the broker's certificate again from the new CA for the same names,
//!    reloads the broker (SIGHUP: nats-server reads its certificate files again) and checks
//!    that it presents the new CA's certificate; then the bundle holds the new CA alone, the
//!    credential too, new join tokens pin it, and the new CA becomes `ca.pem`, `ca.key`.
//!
//! Each step can be run again after a failure or a crash and completes what is left.

use std::time::Duration;

use anyhow::Context as _;
use fleet::tls::CaPair;

use crate::admin::{AdminDir, ControlPlane, FleetSettings, write_file};
use crate::control::Fleet;

/// The next CA's common name: the fleet's, with the generation after the current one.
fn next_common_name(settings: &FleetSettings) -> String {
    let current = settings
        .ca_common_name
        .rsplit_once(' ')
        .and_then(|(_, n)| n.parse::<u64>().ok())
        .unwrap_or(1);
    format!("{} fleet CA {}", settings.name, current + 1)
}

fn read(path: &std::path::Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

/// The two CAs while a rotation runs: `(old, new)`, or `None` outside one.
fn rotating(dir: &AdminDir) -> anyhow::Result<Option<(String, CaPair)>> {
    if !dir.ca_next_pem().exists() {
        return Ok(None);
    }
    Ok(Some((
        read(&dir.ca_pem())?,
        CaPair {
            cert_pem: read(&dir.ca_next_pem())?,
            key_pem: read(&dir.ca_next_key())?,
        },
    )))
}

fn refuse_a_cluster(settings: &FleetSettings) -> anyhow::Result<()> {
    anyhow::ensure!(
        settings.broker.cluster.is_none(),
        "this broker is one of a cluster: rotating the CA of a broker cluster is not built \
         (each server's certificate and its routes' CA would have to change together)"
    );
    Ok(())
}

async fn connect(dir: &AdminDir) -> anyhow::Result<Fleet> {
    Fleet::connect(ControlPlane::load(&dir.control_plane())?).await
}

/// What `rotate` did.
#[derive(Debug, Clone)]
pub struct Rotation {
    /// The SHA-256 of the CA being replaced.
    pub old_sha256: String,
    /// The SHA-256 of the new CA.
    pub new_sha256: String,
    /// The generation of the trust bundle published with both CAs.
    pub bundle_generation: u64,
    /// What each node trusts now.
    pub nodes: NodesTrust,
}

/// Begins a rotation (or, run again while it runs, publishes its bundle again).
pub async fn rotate(dir: &AdminDir) -> anyhow::Result<Rotation> {
    let mut settings = dir.load_settings()?;
    refuse_a_cluster(&settings)?;
    let (old, new) = match rotating(dir)? {
        Some(pair) => pair,
        None => {
            let name = next_common_name(&settings);
            let ca = fleet::tls::create_ca(&name)?;
            settings.next_ca_common_name = Some(name);
            dir.write_settings(&settings)?;
            write_file(&dir.ca_next_key(), ca.key_pem.as_bytes(), 0o600)?;
            write_file(&dir.ca_next_pem(), ca.cert_pem.as_bytes(), 0o644)?;
            (read(&dir.ca_pem())?, ca)
        }
    };
    let fleet = connect(dir).await?;
    // The credential first: the control plane must still reach the broker whichever
    // certificate it presents.
    let mut control_plane = fleet.control_plane.clone();
    control_plane.ca_pem = format!("{old}{}", new.cert_pem);
    control_plane.write(&dir.control_plane())?;
    let bundle = fleet
        .publish_trust(vec![old.clone(), new.cert_pem.clone()])
        .await?;
    Ok(Rotation {
        old_sha256: fleet::tls::pem_sha256(&old)?,
        new_sha256: fleet::tls::pem_sha256(&new.cert_pem)?,
        bundle_generation: bundle.generation,
        nodes: status_of(&fleet, &new.cert_pem).await?,
    })
}

/// What each node trusts, judged against the new CA.
#[derive(Debug, Clone, Default)]
pub struct NodesTrust {
    /// The nodes whose heartbeat says they trust the new CA.
    pub trusting: Vec<String>,
    /// The nodes whose heartbeat says they do not yet.
    pub lagging: Vec<String>,
    /// The nodes without a heartbeat.
    pub down: Vec<String>,
}

async fn status_of(fleet: &Fleet, new_pem: &str) -> anyhow::Result<NodesTrust> {
    let new = fleet::tls::pem_sha256(new_pem)?;
    let mut out = NodesTrust {
        trusting: vec![],
        lagging: vec![],
        down: vec![],
    };
    for node in fleet.nodes().await? {
        match node.reported {
            Some(p) if p.trusted_ca_sha256.contains(&new) => out.trusting.push(node.name),
            Some(_) => out.lagging.push(node.name),
            None => out.down.push(node.name),
        }
    }
    Ok(out)
}

/// Where a rotation stands (`status`).
#[derive(Debug, Clone)]
pub struct CaStatus {
    /// The SHA-256 of the fleet's CA (`ca.pem`).
    pub ca_sha256: String,
    pub ca_common_name: String,
    /// The published trust bundle: its generation and its CAs' SHA-256s.
    pub bundle: Option<(u64, Vec<String>)>,
    /// While a rotation runs: the new CA's SHA-256, and what each node trusts.
    pub rotating: Option<(String, NodesTrust)>,
}

/// Where a rotation stands.
pub async fn status(dir: &AdminDir) -> anyhow::Result<CaStatus> {
    let fleet = connect(dir).await?;
    let bundle = fleet.trust_bundle().await?;
    let ca_sha256 = fleet::tls::pem_sha256(&read(&dir.ca_pem())?)?;
    let ca_common_name = dir.load_settings()?.ca_common_name;
    let bundle = match &bundle {
        Some(b) => Some((b.generation, fleet::tls::bundle_sha256s(&b.pems())?)),
        None => None,
    };
    let rotating = match rotating(dir)? {
        Some((_, new)) => Some((
            fleet::tls::pem_sha256(&new.cert_pem)?,
            status_of(&fleet, &new.cert_pem).await?,
        )),
        None => None,
    };
    Ok(CaStatus {
        ca_sha256,
        ca_common_name,
        bundle,
        rotating,
    })
}

/// What `finish` did.
#[derive(Debug, Clone)]
pub struct Finished {
    /// The SHA-256 of the new CA, whose certificate the broker presents.
    pub new_sha256: String,
    /// The generation of the trust bundle published with the new CA alone.
    pub bundle_generation: u64,
    /// The nodes that were down (`allow_down`): they trust only the old CA.
    pub down: Vec<String>,
}

/// Ends a rotation: see the module's documentation.
pub async fn finish(dir: &AdminDir, wait: Duration, allow_down: bool) -> anyhow::Result<Finished> {
    let mut settings = dir.load_settings()?;
    refuse_a_cluster(&settings)?;
    let (_, new) = rotating(dir)?
        .context("no rotation of the fleet CA is running: `layerone fleet ca rotate` begins one")?;
    let new_name = settings
        .next_ca_common_name
        .clone()
        .context("fleet.json does not name the new CA (was it made by `fleet ca rotate`?)")?;
    let fleet = connect(dir).await?;
    let deadline = tokio::time::Instant::now() + wait;
    let nodes = loop {
        let nodes = status_of(&fleet, &new.cert_pem).await?;
        let waiting = !nodes.lagging.is_empty() || (!allow_down && !nodes.down.is_empty());
        if !waiting {
            break nodes;
        }
        if tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        }
        if !nodes.lagging.is_empty() {
            anyhow::bail!(
                "not finishing: these nodes do not trust the new CA yet: {} (they read the \
                 trust bundle when told on their queue and every 30 s; `layerone fleet ca \
                 status` shows it, `--wait SECONDS` waits for it)",
                nodes.lagging.join(", ")
            );
        }
        anyhow::bail!(
            "not finishing: these nodes are down and would not trust the broker when they come \
             back: {} (bring them up first, or give --allow-down and run `layerone fleet \
             rescue --token TOKEN` on each afterwards)",
            nodes.down.join(", ")
        );
    };

    // The broker's certificate, from the new CA, for the names the old one is for.
    let old_chain = read(&settings.broker.cert_file)?;
    let names = fleet::tls::cert_names(&old_chain)?;
    anyhow::ensure!(
        !names.is_empty(),
        "{} names nothing",
        settings.broker.cert_file.display()
    );
    let (chain, key) = fleet::tls::issue_broker_cert(&new, &new_name, &names)?;
    write_file(&settings.broker.key_file, key.as_bytes(), 0o600)?;
    write_file(&settings.broker.cert_file, chain.as_bytes(), 0o644)?;
    dir.reload_broker()?;
    let control_plane = fleet.control_plane.clone();
    presents_the_new_ca(&control_plane, &new.cert_pem).await?;

    // The old CA is dropped everywhere: the nodes' trust, the credential, the tokens' pin.
    let bundle = fleet.publish_trust(vec![new.cert_pem.clone()]).await?;
    let new_sha = fleet::tls::pem_sha256(&new.cert_pem)?;
    let mut control_plane = control_plane;
    control_plane.ca_pem = new.cert_pem.clone();
    control_plane.ca_sha256 = new_sha.clone();
    control_plane.write(&dir.control_plane())?;
    write_file(&dir.ca_key(), new.key_pem.as_bytes(), 0o600)?;
    write_file(&dir.ca_pem(), new.cert_pem.as_bytes(), 0o644)?;
    settings.ca_common_name = new_name;
    dir.write_settings(&settings)?;
    std::fs::remove_file(dir.ca_next_pem())?;
    std::fs::remove_file(dir.ca_next_key())?;
    Ok(Finished {
        new_sha256: new_sha,
        bundle_generation: bundle.generation,
        down: nodes.down,
    })
}

/// Waits (20 s at most) until the broker's handshake verifies against the new CA alone: it has
/// read its new certificate.
async fn presents_the_new_ca(control_plane: &ControlPlane, new_pem: &str) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        match fleet::connect::control_plane(&control_plane.seed, &[new_pem], &control_plane.brokers)
            .await
        {
            Ok(client) => {
                drop(client);
                return Ok(());
            }
            Err(e) if tokio::time::Instant::now() >= deadline => {
                return Err(e.context(
                    "the broker does not present the new CA's certificate after its reload \
                     (its log says why); run `layerone fleet ca finish` again",
                ));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(250)).await,
        }
    }
}
