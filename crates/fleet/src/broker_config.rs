//! The broker's configuration, a derived file: rendered whole from the fleet's settings and its
//! registered nodes, checked with `nats-server -t`, then reloaded. Never edited by hand: a
//! node's user block exists because the node is in `fleet_nodes`, and removing the node
//! removes it (the reload closes its connections).

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::protocol::{Permissions, join_permissions, node_permissions, operator_permissions};

/// One broker's settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrokerSpec {
    pub server_name: String,
    /// `host:port` of the client listener.
    pub listen: String,
    /// The HTTP monitoring port, on loopback (0: none).
    pub monitor_port: u16,
    pub store_dir: PathBuf,
    pub pid_file: PathBuf,
    /// The broker's chain (its certificate, then the fleet CA) and key.
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
    pub cluster: Option<ClusterSpec>,
}

/// A broker of a cluster: JetStream replicates the fleet's streams across its members.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterSpec {
    pub name: String,
    /// `host:port` of this server's route listener.
    pub listen: String,
    /// The other servers' route addresses, `nats-route://host:port`.
    pub routes: Vec<String>,
    /// The fleet CA the routes verify each other with.
    pub ca_file: PathBuf,
}

/// Who may connect, and to do what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Users {
    /// The control plane's nkey (`U...`): everything.
    pub control_plane: String,
    pub join_password: String,
    /// `(node name, its nkey)`, each confined to its own subjects.
    pub nodes: Vec<(String, String)>,
    /// `(operator name, its nkey)`: submit to any node, read events and the fleet's state.
    pub operators: Vec<(String, String)>,
}

fn quoted(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn path(value: &std::path::Path) -> String {
    quoted(&value.to_string_lossy())
}

fn list(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|s| quoted(s)).collect();
    format!("[{}]", items.join(", "))
}

fn permissions(p: &Permissions) -> String {
    format!(
        "{{ publish: {{ allow: {} }}, subscribe: {{ allow: {} }} }}",
        list(&p.publish),
        list(&p.subscribe)
    )
}

/// The configuration text. A cut-off client is noticed within seconds (`ping_interval` 2 s,
/// two missed pongs), not the default two minutes.
pub fn render(spec: &BrokerSpec, users: &Users) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Derived by layerone fleet; every change here is replaced on the next render."
    );
    let _ = writeln!(out, "server_name: {}", quoted(&spec.server_name));
    let _ = writeln!(out, "listen: {}", quoted(&spec.listen));
    if spec.monitor_port != 0 {
        let _ = writeln!(
            out,
            "http: {}",
            quoted(&format!("127.0.0.1:{}", spec.monitor_port))
        );
    }
    let _ = writeln!(out, "pid_file: {}", path(&spec.pid_file));
    let _ = writeln!(out, "ping_interval: \"2s\"\nping_max: 2\nmax_payload: 1MB");
    let _ = writeln!(
        out,
        "jetstream {{\n  store_dir: {}\n}}",
        path(&spec.store_dir)
    );
    let _ = writeln!(
        out,
        "tls {{\n  cert_file: {}\n  key_file: {}\n  timeout: 5\n}}",
        path(&spec.cert_file),
        path(&spec.key_file)
    );
    if let Some(cluster) = &spec.cluster {
        let _ = writeln!(
            out,
            "cluster {{\n  name: {}\n  listen: {}\n  routes: {}\n  tls {{\n    cert_file: {}\n    key_file: {}\n    ca_file: {}\n    timeout: 5\n  }}\n}}",
            quoted(&cluster.name),
            quoted(&cluster.listen),
            list(&cluster.routes),
            path(&spec.cert_file),
            path(&spec.key_file),
            path(&cluster.ca_file),
        );
    }
    let _ = writeln!(out, "authorization {{\n  users: [");
    let _ = writeln!(
        out,
        "    {{ nkey: {}, permissions: {{ publish: {{ allow: [\">\"] }}, subscribe: {{ allow: [\">\"] }} }} }}",
        quoted(&users.control_plane)
    );
    let _ = writeln!(
        out,
        "    {{ user: {}, password: {}, permissions: {} }}",
        quoted(crate::protocol::JOIN_USER),
        quoted(&users.join_password),
        permissions(&join_permissions())
    );
    for (name, key) in &users.nodes {
        let _ = writeln!(
            out,
            "    {{ nkey: {}, permissions: {} }}",
            quoted(key),
            permissions(&node_permissions(name))
        );
    }
    for (name, key) in &users.operators {
        let _ = writeln!(
            out,
            "    {{ nkey: {}, permissions: {} }}",
            quoted(key),
            permissions(&operator_permissions(name))
        );
    }
    let _ = writeln!(out, "  ]\n}}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_quoted_so_none_can_add_a_setting() {
        assert_eq!(quoted(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(quoted("a\nlisten: 0.0.0.0"), "\"a\\nlisten: 0.0.0.0\"");
    }
}
