//! Connections to the broker, one shape per kind of client: a node (its own nkey, its own inbox
//! prefix, the fleet CA), the control plane (its nkey, the fleet CA), an operator (its nkey, its
//! own inbox prefix, the fleet CA) and a joining node (the join user, the token's pinned CA).

use std::time::Duration;

use async_nats::{Client, ConnectOptions, Event};

use crate::protocol::{JOIN_INBOX_PREFIX, JOIN_USER, node_inbox_prefix, operator_inbox_prefix};
use crate::tls;

/// The name a permission violation is logged under: the server says so asynchronously, and the
/// refused request just times out, so it must be loud.
async fn on_event(who: String, event: Event) {
    match event {
        Event::ServerError(e) => tracing::error!(who, error = %e, "the broker refused something"),
        Event::Disconnected => tracing::warn!(who, "disconnected from the broker"),
        Event::Connected => tracing::info!(who, "connected to the broker"),
        other => tracing::debug!(who, event = %other, "broker connection event"),
    }
}

fn base(who: &str) -> ConnectOptions {
    ConnectOptions::new()
        .name(who)
        .require_tls(true)
        .connection_timeout(Duration::from_secs(5))
        .ping_interval(Duration::from_secs(2))
        .event_callback({
            let who = who.to_owned();
            move |event| on_event(who.clone(), event)
        })
}

/// A node's connection, trusting these CAs. With `retry`, it keeps trying in the background until the broker
/// answers (a node started while the broker is away). That background loop outlives the
/// client: dropped, it still tries for ever, and a key the broker refuses (a removed node's)
/// never stops it; whoever connects again after a failure passes `false`.
pub async fn node(
    name: &str,
    seed: &str,
    ca_pems: &[&str],
    brokers: &[String],
    retry: bool,
) -> anyhow::Result<Client> {
    node_trusting(name, seed, &tls::Trust::new(ca_pems)?, brokers, retry).await
}

/// A node's connection that verifies the broker against `trust` as it is at each handshake
/// (the daemon's: the fleet's CA can be rotated under it).
pub async fn node_trusting(
    name: &str,
    seed: &str,
    trust: &tls::Trust,
    brokers: &[String],
    retry: bool,
) -> anyhow::Result<Client> {
    let mut options = base(&format!("node {name}"))
        .nkey(seed.to_owned())
        .custom_inbox_prefix(node_inbox_prefix(name))
        .tls_client_config(trust.client_config()?)
        .max_reconnects(None);
    if retry {
        options = options.retry_on_initial_connect();
    }
    connect(options, brokers).await
}

/// The control plane's connection.
pub async fn control_plane(
    seed: &str,
    ca_pems: &[&str],
    brokers: &[String],
) -> anyhow::Result<Client> {
    let options = base("control plane")
        .nkey(seed.to_owned())
        .tls_client_config(tls::client_config(ca_pems)?);
    connect(options, brokers).await
}

/// The control plane's long-lived connection (the fleet service's), verifying the broker
/// against `trust` as it is at each handshake; it reconnects for ever.
pub async fn control_plane_trusting(
    seed: &str,
    trust: &tls::Trust,
    brokers: &[String],
) -> anyhow::Result<Client> {
    let options = base("control plane")
        .nkey(seed.to_owned())
        .tls_client_config(trust.client_config()?)
        .max_reconnects(None);
    connect(options, brokers).await
}

/// An operator's connection (an operator session's): its nkey, its own inbox prefix, the fleet
/// CA; it reconnects for ever.
pub async fn operator(
    name: &str,
    seed: &str,
    ca_pems: &[&str],
    brokers: &[String],
) -> anyhow::Result<Client> {
    let options = base(&format!("operator {name}"))
        .nkey(seed.to_owned())
        .custom_inbox_prefix(operator_inbox_prefix(name))
        .tls_client_config(tls::client_config(ca_pems)?)
        .max_reconnects(None);
    connect(options, brokers).await
}

/// A joining node's connection: the broker is trusted only if its chain holds the CA the token
/// pins, checked in the TLS handshake, before the join password is sent.
pub async fn joiner(ca_sha256: &str, password: &str, brokers: &[String]) -> anyhow::Result<Client> {
    let options = base("joining node")
        .user_and_password(JOIN_USER.to_owned(), password.to_owned())
        .custom_inbox_prefix(JOIN_INBOX_PREFIX)
        .tls_client_config(tls::pinned_client_config(ca_sha256)?)
        .max_reconnects(Some(1));
    connect(options, brokers).await
}

/// How many times a connection the broker refused as unauthorised is tried: nats-server
/// refuses a client that authenticates while it reloads its configuration (every join, every
/// removal and the CA's rotation reload it), so a refusal is believed at the third try.
const AUTHORIZATION_TRIES: usize = 3;

async fn connect(options: ConnectOptions, brokers: &[String]) -> anyhow::Result<Client> {
    let addrs: Vec<async_nats::ServerAddr> = brokers
        .iter()
        .map(|b| b.parse())
        .collect::<Result<_, _>>()
        .map_err(|e| anyhow::anyhow!("a broker address: {e}"))?;
    let mut tries = 1;
    loop {
        match options.clone().connect(addrs.clone()).await {
            Ok(client) => return Ok(client),
            Err(e)
                if e.kind() == async_nats::ConnectErrorKind::AuthorizationViolation
                    && tries < AUTHORIZATION_TRIES =>
            {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            Err(e) => {
                return Err(anyhow::anyhow!("connecting to {}: {e}", brokers.join(",")));
            }
        }
    }
}
