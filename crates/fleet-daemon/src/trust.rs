//! The fleet's trust bundle on the node ([`TrustBundle`], `fleet_trust`): read by direct get
//! over the node's own connection (verified by a CA it already trusts) when the daemon starts,
//! when the fleet says on the node's queue that it changed, and with the assignment's poll;
//! kept durably in the daemon's state directory (`trust.json`, the API user's: the identity's
//! `ca.pem` is root's), then put in force on the live connection. A CA the node no longer
//! trusts makes it connect again, so from then on the broker is verified against what the node
//! trusts now, and against nothing else.

use std::path::{Path, PathBuf};

use fleet::protocol::{TRUST_BUCKET, TRUST_KEY, TrustBundle};
use fleet::tls;

use super::Shared;

/// Where the daemon keeps the last bundle it read.
pub fn file(state_dir: &Path) -> PathBuf {
    state_dir.join("trust.json")
}

/// The bundle the daemon kept, if it kept one.
pub fn load(state_dir: &Path) -> anyhow::Result<Option<TrustBundle>> {
    let path = file(state_dir);
    match std::fs::read(&path) {
        Ok(bytes) => Ok(Some(
            serde_json::from_slice(&bytes)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow::anyhow!("reading {}: {e}", path.display())),
    }
}

/// Writes the bundle whole: a temporary file, synced, renamed over the old one, and the
/// directory synced, so a crash leaves the old bundle or the new one.
fn store(state_dir: &Path, bundle: &TrustBundle) -> anyhow::Result<()> {
    use std::io::Write as _;
    let path = file(state_dir);
    let tmp = state_dir.join(format!(".trust.json.{}.tmp", fleet::token::random_hex(8)));
    let write = || -> std::io::Result<()> {
        let mut out = std::fs::File::create_new(&tmp)?;
        out.write_all(&serde_json::to_vec_pretty(bundle)?)?;
        out.sync_all()?;
        std::fs::rename(&tmp, &path)?;
        std::fs::File::open(state_dir)?.sync_all()
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        anyhow::anyhow!("writing {}: {e}", path.display())
    })
}

/// Reads the fleet's bundle and, if it differs from what the node trusts, keeps it and puts it
/// in force. A fleet that never published one leaves the node on its identity's CA.
pub(super) async fn refresh(shared: &Shared) {
    let bytes = match super::read_key(&shared.js, TRUST_BUCKET, TRUST_KEY).await {
        Ok(Some((_, bytes))) => bytes,
        Ok(None) => return,
        Err(e) => {
            tracing::warn!(error = %format!("{e:#}"), "reading the fleet's trust bundle");
            return;
        }
    };
    let applied = serde_json::from_slice::<TrustBundle>(&bytes)
        .map_err(anyhow::Error::from)
        .and_then(|bundle| Ok((apply(shared, &bundle)?, bundle)));
    match applied {
        Ok((false, _)) => {}
        Ok((true, bundle)) => {
            tracing::info!(
                generation = bundle.generation,
                cas = ?shared.trust.sha256s(),
                "the node trusts the fleet's new trust bundle"
            );
            shared.trust_changed.notify_one();
        }
        Err(e) => {
            tracing::error!(error = %format!("{e:#}"), "the fleet's trust bundle is unusable; the node keeps what it trusts")
        }
    }
}

/// Returns whether the node's trust changed.
fn apply(shared: &Shared, bundle: &TrustBundle) -> anyhow::Result<bool> {
    let pems = bundle.pems();
    let mut wanted = tls::bundle_sha256s(&pems)?;
    anyhow::ensure!(!wanted.is_empty(), "it holds no CA");
    let mut now = shared.trust.sha256s();
    wanted.sort();
    now.sort();
    if wanted == now {
        return Ok(false);
    }
    // Durable before it is in force: a restart verifies the broker with what the node used.
    store(&shared.config.state_dir, bundle)?;
    if shared.trust.set(&pems)? {
        // A CA it trusted is gone: the live connection was verified by what it no longer
        // trusts. The client connects again (the queue, the publisher and the heartbeat carry
        // on over the new connection).
        let client = shared.client.clone();
        tokio::spawn(async move {
            if let Err(e) = client.force_reconnect().await {
                tracing::warn!(error = %e, "connecting again after the trust changed");
            }
        });
    }
    Ok(true)
}
