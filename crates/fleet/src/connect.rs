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

/// The first reconnection's ceiling, doubled at each failed attempt up to [`RECONNECT_CAP`].
pub const RECONNECT_BASE: Duration = Duration::from_millis(250);

/// The longest a node's connection waits before its next reconnection attempt: 1,000 nodes
/// cut off together come back at about 1,000 / 15 CONNECTs a second once their ceilings reach
/// it.
pub const RECONNECT_CAP: Duration = Duration::from_secs(15);

/// The same for the few other clients (the control plane, an operator's session, a joining
/// node): no herd to spread, and the fleet service should be back before its nodes.
pub const FEW_RECONNECT_CAP: Duration = Duration::from_secs(2);

/// A backoff with full jitter: a delay drawn uniformly between zero and
/// `min(cap, base × 2^attempt)`, so that clients that lost the broker together do not come
/// back together (the broker sees a spread of CONNECTs, not a wave at each step).
pub fn full_jitter(attempt: usize, base: Duration, cap: Duration) -> Duration {
    let doublings = attempt.min(30) as u32;
    let ceiling = base.saturating_mul(1u32 << doublings).min(cap);
    let ms = ceiling.as_millis() as u64;
    // Without the system's randomness (it does not fail on Linux) the middle of the range.
    let draw = getrandom::u64().unwrap_or(ms / 2);
    Duration::from_millis(draw % (ms + 1))
}

fn base(who: &str) -> ConnectOptions {
    ConnectOptions::new()
        .name(who)
        .require_tls(true)
        .connection_timeout(Duration::from_secs(5))
        .ping_interval(Duration::from_secs(2))
        .reconnect_delay_callback(|attempt| full_jitter(attempt, RECONNECT_BASE, FEW_RECONNECT_CAP))
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
        .max_reconnects(None)
        // A fleet's nodes lose the broker together: each waits its own drawn delay, with a
        // higher ceiling than the other clients', before each attempt. async-nats resolves the
        // broker's name again at each one, so a broker moved to another address under the
        // same name is found.
        .reconnect_delay_callback(|attempt| full_jitter(attempt, RECONNECT_BASE, RECONNECT_CAP));
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
                let brokers = brokers.join(",");
                return Err(anyhow::Error::new(e).context(format!("connecting to {brokers}")));
            }
        }
    }
}

/// Whether a connection failed because the broker refused the client's key, at every try (a
/// node removed from the fleet, or whose name another machine joined under): trying again
/// changes nothing until the node joins anew.
pub fn is_refused(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<async_nats::ConnectError>()
            .is_some_and(|c| c.kind() == async_nats::ConnectErrorKind::AuthorizationViolation)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_jitter_stays_below_its_doubling_ceiling_and_the_cap() {
        let base = Duration::from_millis(100);
        let cap = Duration::from_secs(2);
        for attempt in 0..40 {
            let ceiling = (base * 2u32.pow(attempt.min(5) as u32)).min(cap);
            for _ in 0..50 {
                assert!(
                    full_jitter(attempt, base, cap) <= ceiling,
                    "attempt {attempt}"
                );
            }
        }
        // Drawn, not fixed: 200 draws under a 2 s ceiling are not all one value.
        let draws: std::collections::BTreeSet<Duration> =
            (0..200).map(|_| full_jitter(10, base, cap)).collect();
        assert!(draws.len() > 100, "{} distinct delays", draws.len());
        assert_eq!(full_jitter(3, Duration::ZERO, cap), Duration::ZERO);
    }
}
