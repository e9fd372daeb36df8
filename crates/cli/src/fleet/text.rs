//! The lines the fleet's commands print from what `fleet_control` returns: an operator's
//! registration, the CA's rotation, and the fleet lines of `layerone status` and
//! `layerone fleet status`.

use fleet_control::node::{BrokerLink, LinkStatus, TrustStatus};
use fleet_control::operator::BrokerReload;
use fleet_control::rotation::{CaStatus, Finished, NodesTrust, Rotation};

/// What became of the broker after `fleet operator add|remove`, if anything.
pub fn reload_line(reload: BrokerReload) -> Option<&'static str> {
    match reload {
        BrokerReload::Unchanged => None,
        BrokerReload::Reloaded => Some("the broker's configuration changed; reloaded"),
        BrokerReload::NotRunning => {
            Some("the broker's configuration changed; the broker is not running")
        }
    }
}

fn nodes_trust_lines(nodes: &NodesTrust) -> Vec<String> {
    let list = |names: &[String]| {
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    };
    vec![
        format!("nodes trusting the new CA: {}", list(&nodes.trusting)),
        format!("nodes not trusting it yet: {}", list(&nodes.lagging)),
        format!("nodes down (no heartbeat): {}", list(&nodes.down)),
    ]
}

/// `fleet ca rotate`.
pub fn rotation_lines(rotation: &Rotation) -> Vec<String> {
    let mut lines = vec![
        format!(
            "rotating the fleet CA: old {}, new {}",
            rotation.old_sha256, rotation.new_sha256
        ),
        format!(
            "trust bundle generation {} (both CAs) published; every node was told",
            rotation.bundle_generation
        ),
    ];
    lines.extend(nodes_trust_lines(&rotation.nodes));
    lines.push("when every node trusts the new CA: layerone fleet ca finish".into());
    lines
}

/// `fleet ca status`.
pub fn ca_status_lines(status: &CaStatus) -> Vec<String> {
    let mut lines = vec![format!(
        "fleet CA {} ({})",
        status.ca_sha256, status.ca_common_name
    )];
    match &status.bundle {
        Some((generation, sha256s)) => lines.push(format!(
            "trust bundle generation {generation}: {}",
            sha256s.join(", ")
        )),
        None => {
            lines.push("trust bundle: none published (nodes trust the CA they joined with)".into())
        }
    }
    match &status.rotating {
        Some((new_sha256, nodes)) => {
            lines.push(format!("rotating to {new_sha256}"));
            lines.extend(nodes_trust_lines(nodes));
        }
        None => lines.push("no rotation running".into()),
    }
    lines
}

/// `fleet ca finish`.
pub fn finished_lines(finished: &Finished) -> Vec<String> {
    let mut lines = vec![
        format!(
            "the broker presents a certificate of the new CA {}",
            finished.new_sha256
        ),
        format!(
            "trust bundle generation {} (the new CA alone) published; new join tokens pin it",
            finished.bundle_generation
        ),
    ];
    if !finished.down.is_empty() {
        lines.push(format!(
            "nodes that were down trust only the old CA: {}; on each, `layerone fleet rescue --token $(layerone fleet token NAME)`",
            finished.down.join(", ")
        ));
    }
    lines
}

/// The fleet lines of `layerone status` and `layerone fleet status`: `None` is a node on its
/// own.
pub fn status_lines(status: Option<&LinkStatus>) -> Vec<String> {
    let Some(status) = status else {
        return vec!["fleet      none (a node on its own: every module runs)".into()];
    };
    let mut lines = vec![format!(
        "fleet      node {} via {}",
        status.node,
        status.brokers.join(",")
    )];
    lines.push(match &status.trust {
        TrustStatus::Bundle {
            generation,
            sha256s,
        } => format!(
            "trust      the fleet's bundle, generation {generation}: {}",
            sha256s.join(", ")
        ),
        TrustStatus::Joined { sha256s } => {
            format!("trust      the CA it joined with: {}", sha256s.join(", "))
        }
        TrustStatus::Unreadable(e) => format!("trust      unreadable: {e:#}"),
    });
    match &status.assignment {
        Ok(Some(row)) => {
            lines.push(format!("assignment generation {}", row.generation));
            for m in &row.modules {
                match (m.ready, &m.reason) {
                    (true, _) => lines.push(format!("  {:8} ready", m.module.as_str())),
                    (false, reason) => lines.push(format!(
                        "  {:8} UNAVAILABLE: {}",
                        m.module.as_str(),
                        reason.as_deref().unwrap_or_default()
                    )),
                }
            }
        }
        Ok(None) => lines.push("assignment none yet (every module runs)".into()),
        Err(e) => lines.push(format!("assignment unreadable: {e:?}")),
    }
    let Some(daemon) = &status.daemon else {
        lines.push("broker     not reached yet (is layerone-api running?)".into());
        return lines;
    };
    lines.push(match daemon.link {
        BrokerLink::Connected { since_ms } => format!(
            "broker     connected since {}",
            install::rfc3339((since_ms / 1000).max(0) as u64)
        ),
        BrokerLink::CutOff { since_ms } => format!(
            "broker     CUT OFF since {} ({} s)",
            install::rfc3339((since_ms / 1000).max(0) as u64),
            (fleet_control::control::now_ms() - since_ms) / 1000
        ),
        BrokerLink::Refused { since_ms } => format!(
            "broker     REFUSES this node's key since {} ({} s): the fleet has no node {} with it \
             (removed, or another machine joined under the name); join again with a new token: \
             `layerone join TOKEN`",
            install::rfc3339((since_ms / 1000).max(0) as u64),
            (fleet_control::control::now_ms() - since_ms) / 1000,
            status.node
        ),
        BrokerLink::NotReached => "broker     not reached yet".into(),
    });
    lines.push(format!(
        "events     {} waiting to be published; root's feed published through {}",
        daemon.events_waiting, daemon.published_through
    ));
    lines
}
