//! The node's identity text: who the node is and how it presents itself to an operator's
//! session, handed over as the server's `instructions` and as the resource
//! `layerone://node/identity`.
//!
//! Its first part is the node's own identity file, `/etc/layerone/identity.md`, which the
//! installer derives from the node's configuration (name, id, platform profile) like its other
//! derived files (an edited copy goes to the override area and is replaced), used only if it
//! names the node the API says it is. Where there is none (a dev node, a node not installed by
//! `layerone install`) the server writes that part itself from what the API says. The rest is
//! made at start-up from the API (its health: id and version; its catalogue: the modules and
//! operations it offers), the node's fleet identity when it joined a fleet (`identity.json`,
//! world-readable: its name in the fleet) and how the session was started.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

/// What the identity is made from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeFacts {
    pub node_id: String,
    pub version: String,
    /// The node's name in its fleet, when it joined one (and the identity is its own).
    pub fleet_name: Option<String>,
    /// Operations offered per module, in the catalogue's order of first appearance.
    pub modules: Vec<(String, usize)>,
    /// The tools this session lists.
    pub tools: usize,
    /// The modules this session was narrowed to, if it was.
    pub narrowed_to: Option<Vec<String>>,
    /// Whether destructive calls run without the operator's confirmation.
    pub unconfirmed_destructive: bool,
    /// The node's identity file, when it has one that names this node.
    pub derived: Option<String>,
    /// The operator credential the session reaches the fleet's peers with, by its name.
    pub fleet_operator: Option<String>,
}

impl NodeFacts {
    /// The facts of the node's health body and catalogue (`GET /v1/health`, `GET
    /// /v1/catalogue`).
    pub fn from_api(health: &Value, catalogue: &Value) -> NodeFacts {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        let mut order = Vec::new();
        let entries = catalogue
            .get("operations")
            .or(Some(catalogue))
            .and_then(Value::as_array);
        for entry in entries.into_iter().flatten() {
            let module = text(&entry["module"]);
            if !counts.contains_key(&module) {
                order.push(module.clone());
            }
            *counts.entry(module).or_default() += 1;
        }
        NodeFacts {
            node_id: text(&health["node_id"]),
            version: text(&health["version"]),
            modules: order
                .into_iter()
                .map(|m| {
                    let n = counts[&m];
                    (m, n)
                })
                .collect(),
            ..NodeFacts::default()
        }
    }

    /// Takes the node's identity file at `path` as the identity's first part, if it is
    /// there and names this node (its `- Node id:` line); anything else is left out.
    pub fn with_identity_file(mut self, path: &Path) -> NodeFacts {
        let line = format!("- Node id: {}\n", self.node_id);
        self.derived = std::fs::read_to_string(path)
            .ok()
            .filter(|text| !self.node_id.is_empty() && text.contains(&line));
        self
    }

    /// Adds the node's fleet name from a fleet identity file, if there is one and it is this
    /// node's (same id). A missing or unreadable file is a node outside any fleet.
    pub fn with_fleet_identity(mut self, path: &Path) -> NodeFacts {
        let identity = std::fs::read(path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok());
        if let Some(identity) = identity
            && identity["node_id"].as_str() == Some(self.node_id.as_str())
            && let Some(name) = identity["node"].as_str()
        {
            self.fleet_name = Some(name.to_owned());
        }
        self
    }
}

/// The identity text (Markdown).
pub fn render(facts: &NodeFacts) -> String {
    let who = facts.fleet_name.as_deref().unwrap_or(&facts.node_id);
    let mut out = match &facts.derived {
        Some(text) => format!("{}\n", text.trim_end()),
        None => format!(
            "# layerone node {who}\n\n- Node id: {}\n\nThis is the layerone node agent of \
             {who}, a Linux web-hosting node. It changes the server only through its declared \
             operations, each checked, run by root through the node's own audited programs, \
             and recorded.\n",
            facts.node_id
        ),
    };
    out.push_str("\n## This session\n\n");
    match &facts.fleet_name {
        Some(name) => out.push_str(&format!("- Fleet: joined, as the node named {name}\n")),
        None => out.push_str("- Fleet: not joined to a fleet\n"),
    }
    if let Some(operator) = &facts.fleet_operator {
        out.push_str(&format!(
            "- Peers: reached over the fleet's broker as the operator {operator}: every \
             operation's tool takes target_node, the name of the node to run it on (this node \
             when omitted); the resource layerone://fleet/operations lists which nodes offer \
             which operations, and the tool list follows the fleet\n"
        ));
    }
    out.push_str(&format!("- Software: layerone {}\n", facts.version));
    let modules: Vec<String> = facts
        .modules
        .iter()
        .map(|(m, n)| format!("{m} ({n} operations)"))
        .collect();
    out.push_str(&format!("- Modules offered: {}\n", modules.join(", ")));
    match &facts.narrowed_to {
        Some(list) => out.push_str(&format!(
            "- Tools: {}, the operations of {} and the read tools\n",
            facts.tools,
            list.join(", ")
        )),
        None => out.push_str(&format!(
            "- Tools: {}, every operation and the read tools\n",
            facts.tools
        )),
    }
    out.push_str(&format!(
        "\nEvery tool but the read tools (get_job, list_events, list_audit, list_drift, \
         node_status) is one operation: calling it admits a job on the node ({}), and the \
         call waits for the job and returns its typed result, or its stable error code. The \
         node's audit trail records every call with the uid of the operator who started this \
         session. There is no shell: no tool takes a path, an argv, a command, a package or \
         a unit. Node-scope operations need this node's exact id as node_id. ",
        facts.node_id
    ));
    if facts.unconfirmed_destructive {
        out.push_str(
            "This session was started to run destructive calls (remove, suspend, restore) \
             without asking for confirmation.\n",
        );
    } else {
        out.push_str(
            "Destructive calls (remove, suspend, restore and other one-off actions) ask the \
             operator to confirm first, and are refused where the client cannot ask.\n",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_identity_names_the_node_its_modules_and_that_there_is_no_shell() {
        let health = json!({"status": "ok", "node_id": "ab".repeat(16), "version": "0.1.0"});
        let catalogue = json!([
            {"operation": "ensure_account", "module": "core"},
            {"operation": "remove_account", "module": "core"},
            {"operation": "ensure_web_domain", "module": "web"},
        ]);
        let mut facts = NodeFacts::from_api(&health, &catalogue);
        facts.tools = 8;
        assert_eq!(
            facts.modules,
            vec![("core".to_owned(), 2), ("web".to_owned(), 1)]
        );
        let text = render(&facts);
        assert!(text.starts_with(&format!("# layerone node {}\n", "ab".repeat(16))));
        assert!(text.contains("core (2 operations), web (1 operations)"));
        assert!(text.contains("not joined to a fleet"));
        assert!(text.contains("There is no shell"));

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("identity.json");
        std::fs::write(
            &path,
            json!({"node": "web-1", "node_id": "ab".repeat(16)}).to_string(),
        )
        .unwrap();
        let joined = facts.clone().with_fleet_identity(&path);
        assert_eq!(joined.fleet_name.as_deref(), Some("web-1"));
        assert!(render(&joined).starts_with("# layerone node web-1\n"));
        // The node's own identity file is the first part; another node's is left out.
        let file = dir.path().join("identity.md");
        std::fs::write(
            &file,
            format!(
                "# layerone node web1.example.net\n\n- Node id: {}\n- Platform: debian\n",
                "ab".repeat(16)
            ),
        )
        .unwrap();
        let with_file = joined.clone().with_identity_file(&file);
        let text = render(&with_file);
        assert!(
            text.starts_with("# layerone node web1.example.net\n"),
            "{text}"
        );
        assert!(
            text.contains("- Platform: debian\n\n## This session\n"),
            "{text}"
        );
        assert!(text.contains("joined, as the node named web-1"), "{text}");
        std::fs::write(
            &file,
            format!("# layerone node x\n\n- Node id: {}\n", "cd".repeat(16)),
        )
        .unwrap();
        assert_eq!(joined.clone().with_identity_file(&file).derived, None);
        // Another node's fleet identity file names nothing.
        std::fs::write(
            &path,
            json!({"node": "web-2", "node_id": "cd".repeat(16)}).to_string(),
        )
        .unwrap();
        assert_eq!(facts.with_fleet_identity(&path).fleet_name, None);
    }
}
