//! The tool table, built from the declarations: one tool per operation of the node (its
//! request's schema as the input, its result's as the output, its summary as the description,
//! hints from its kind), and the read tools for jobs, events, the audit trail, drift and the
//! node's status. Nothing here is listed by hand but the read tools. The table is narrowed
//! to the modules `--modules` names and refused past `--max-tools`.

use std::collections::BTreeSet;
use std::sync::Arc;

use registry::{Kind, Module, OperationEntry, Registry, Scope};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

/// The argument of every operation's tool that names the peer to run the call on (a session
/// with a fleet credential): a name no request uses.
pub const TARGET_NODE: &str = "target_node";

/// What a tool does when called.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Admit the operation as a job, wait for it, return its result.
    Operation {
        name: &'static str,
        scope: Scope,
        kind: Kind,
        summary: &'static str,
    },
    /// One of the read tools.
    Read(Read),
}

/// The read tools: they admit nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    Job,
    Events,
    Audit,
    Drift,
    Status,
}

impl Read {
    pub const ALL: [Read; 5] = [
        Read::Job,
        Read::Events,
        Read::Audit,
        Read::Drift,
        Read::Status,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Read::Job => "get_job",
            Read::Events => "list_events",
            Read::Audit => "list_audit",
            Read::Drift => "list_drift",
            Read::Status => "node_status",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Read::Job => "One job of this node by its request_id: state, result or typed error.",
            Read::Events => {
                "The node's events feed after a cursor: job state changes, drift and drift resolved. \
                 The node keeps the newest events only: a cursor behind what it trimmed is refused \
                 events_lost with first_cursor, the oldest event left; read the jobs you follow with \
                 get_job, then go on from first_cursor - 1."
            }
            Read::Audit => {
                "The node's audit trail after a cursor: every program root ran (secrets redacted) and every node-scope request, with who asked."
            }
            Read::Drift => {
                "Drift the node's check found (the OS no longer shows what state.db records) and resolved, after a cursor."
            }
            Read::Status => "The node's health: whether its state is readable, its id and version.",
        }
    }

    fn input_schema(self) -> Value {
        let cursor = json!({"type": "integer", "minimum": 0, "description": "Read what follows this cursor (the `next` of the previous page); 0 from the start."});
        let limit = json!({"type": "integer", "minimum": 1, "maximum": 1000, "description": "At most this many entries (default 100)."});
        match self {
            Read::Job => json!({
                "type": "object",
                "properties": {"request_id": {"type": "string", "pattern": "^[0-9a-f]{32}$", "description": "The job's request id (32 lowercase hex)."}},
                "required": ["request_id"],
                "additionalProperties": false,
            }),
            Read::Events => json!({
                "type": "object",
                "properties": {
                    "after": cursor,
                    "limit": limit,
                    "wait": {"type": "integer", "minimum": 0, "maximum": 60, "description": "Seconds to wait for the first event when there is none yet (default 0)."},
                },
                "additionalProperties": false,
            }),
            Read::Audit | Read::Drift => json!({
                "type": "object",
                "properties": {"after": cursor, "limit": limit},
                "additionalProperties": false,
            }),
            Read::Status => {
                json!({"type": "object", "properties": {}, "additionalProperties": false})
            }
        }
    }

    fn output_schema(self) -> Option<Value> {
        match self {
            Read::Job => Some(registry::registry::schema_of::<registry::JobView>()),
            Read::Events | Read::Drift => {
                Some(registry::registry::schema_of::<registry::EventPage>())
            }
            Read::Audit => Some(registry::registry::schema_of::<registry::AuditPage>()),
            Read::Status => None,
        }
    }
}

/// One tool: what MCP lists and what the server does with a call of it.
#[derive(Clone, Debug)]
pub struct ToolEntry {
    pub tool: Tool,
    pub action: Action,
}

/// The hints MCP carries for an operation of `kind`. Every hint is set explicitly: MCP's
/// defaults (destructive, not idempotent) would say the wrong thing of most operations.
///
/// - `observe`: reads and reports: read-only.
/// - `declare`, `set`, `unsuspend`: converge to the request, so calling again changes nothing
///   more: idempotent, not destructive.
/// - `suspend`: turns a resource off (its site answers 403, its mail stops): destructive,
///   idempotent.
/// - `remove`: destructive, idempotent.
/// - `snapshot`: makes a new backup each time from what exists: neither destructive nor
///   idempotent.
/// - `action`: does something once to what exists (a restore replaces a home's content): treated
///   as destructive, and not idempotent.
pub fn annotations(kind: Kind) -> ToolAnnotations {
    let (read_only, destructive, idempotent) = match kind {
        Kind::Observe => (true, false, true),
        Kind::Declare | Kind::Set | Kind::Unsuspend => (false, false, true),
        Kind::Suspend | Kind::Remove => (false, true, true),
        Kind::Snapshot => (false, false, false),
        Kind::Action => (false, true, false),
    };
    ToolAnnotations::new()
        .read_only(read_only)
        .destructive(destructive)
        .idempotent(idempotent)
        .open_world(false)
}

/// Whether a call of a tool of `kind` must be confirmed by the operator first.
pub fn needs_confirmation(kind: Kind) -> bool {
    annotations(kind).destructive_hint == Some(true)
}

/// Whether `name` is a valid MCP tool name: 1 to 128 characters of `[A-Za-z0-9_.-]`.
pub fn valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Why the tool table could not be built.
#[derive(Debug, PartialEq, Eq)]
pub enum TableError {
    /// More tools than the limit the server was started with.
    TooManyTools { tools: usize, max: usize },
    /// A name MCP does not accept (a declaration's name outside `[A-Za-z0-9_.-]`).
    BadName(String),
    /// Two tools of one name.
    Duplicate(String),
    /// A schema that is not a JSON object.
    BadSchema(String),
    /// A request with a field of the name the envelope's own arguments use.
    ReservedField { operation: String, field: String },
}

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TableError::TooManyTools { tools, max } => write!(
                f,
                "{tools} tools is more than --max-tools {max}: name fewer modules with --modules, or raise --max-tools"
            ),
            TableError::BadName(name) => write!(f, "{name:?} is not a valid MCP tool name"),
            TableError::Duplicate(name) => write!(f, "two tools are named {name:?}"),
            TableError::BadSchema(name) => write!(f, "the schema of {name:?} is not an object"),
            TableError::ReservedField { operation, field } => write!(
                f,
                "{operation:?} has a request field {field:?}, the name of a tool argument of its own"
            ),
        }
    }
}

impl std::error::Error for TableError {}

fn object(name: &str, value: Value) -> Result<JsonObject, TableError> {
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(TableError::BadSchema(name.to_owned())),
    }
}

/// The input schema of an operation's tool: the request's own schema, plus the envelope's
/// fields the caller may or must give: `request_id` (optional: the server makes one; give the
/// same one again to retry without a second job) and, for a node-scope operation, `node_id`
/// (required: the exact id of the node, as in every node-scope request).
///
/// With a fleet, also `target_node` (optional: the peer to run the call on; this node when
/// absent).
fn operation_input_schema(
    op: &dyn OperationEntry,
    with_peers: bool,
) -> Result<JsonObject, TableError> {
    let mut schema = object(op.name(), op.request_schema())?;
    let properties = schema
        .entry("properties")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| TableError::BadSchema(op.name().to_owned()))?;
    for field in ["request_id", "node_id", TARGET_NODE] {
        if properties.contains_key(field) {
            return Err(TableError::ReservedField {
                operation: op.name().to_owned(),
                field: field.to_owned(),
            });
        }
    }
    if with_peers {
        properties.insert(
            TARGET_NODE.into(),
            json!({"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,62}$", "description": "Optional: the name of the fleet's node to run this on (this node when omitted). layerone://fleet/operations lists which nodes offer which operations; the call goes onto that node's queue over the fleet's broker and returns its result."}),
        );
    }
    properties.insert(
        "request_id".into(),
        json!({"type": "string", "pattern": "^[0-9a-f]{32}$", "description": "Optional: the job's request id (32 lowercase hex). Omit it and the server makes one; give the same one again to retry without making a second job."}),
    );
    if op.scope() == Scope::Node {
        properties.insert(
            "node_id".into(),
            json!({"type": "string", "pattern": "^[0-9a-f]{32}$", "description": "The exact id of the node this node-scope request is for (node_status shows it); a request for another node is refused."}),
        );
        let required = schema
            .entry("required")
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .ok_or_else(|| TableError::BadSchema(op.name().to_owned()))?;
        required.push(json!("node_id"));
    }
    Ok(schema)
}

/// The tool table of a node offering `registry`'s operations, restricted to `modules` (all of
/// them when `None`); the read tools are always there. Refused when it would hold more than
/// `max_tools` tools. `with_peers`: every operation's tool also takes `target_node`; the count
/// stays one tool per operation however large the fleet.
pub fn table(
    registry: &Registry,
    modules: Option<&[Module]>,
    max_tools: usize,
    with_peers: bool,
) -> Result<Vec<ToolEntry>, TableError> {
    let mut entries = Vec::new();
    for op in registry.operations() {
        if modules.is_some_and(|m| !m.contains(&op.module())) {
            continue;
        }
        let tool = Tool::new(
            op.name(),
            op.summary(),
            Arc::new(operation_input_schema(op, with_peers)?),
        )
        .with_raw_output_schema(Arc::new(object(op.name(), op.result_schema())?))
        .with_annotations(annotations(op.kind()));
        entries.push(ToolEntry {
            tool,
            action: Action::Operation {
                name: op.name(),
                scope: op.scope(),
                kind: op.kind(),
                summary: op.summary(),
            },
        });
    }
    for read in Read::ALL {
        let mut tool = Tool::new(
            read.name(),
            read.description(),
            Arc::new(object(read.name(), read.input_schema())?),
        )
        .with_annotations(annotations(Kind::Observe));
        if let Some(schema) = read.output_schema() {
            tool = tool.with_raw_output_schema(Arc::new(object(read.name(), schema)?));
        }
        entries.push(ToolEntry {
            tool,
            action: Action::Read(read),
        });
    }
    let mut names = BTreeSet::new();
    for entry in &entries {
        let name = entry.tool.name.as_ref();
        if !valid_tool_name(name) {
            return Err(TableError::BadName(name.to_owned()));
        }
        if !names.insert(name.to_owned()) {
            return Err(TableError::Duplicate(name.to_owned()));
        }
    }
    if entries.len() > max_tools {
        return Err(TableError::TooManyTools {
            tools: entries.len(),
            max: max_tools,
        });
    }
    Ok(entries)
}

/// Parses `--modules web,mail`: each name one of the declared modules.
pub fn parse_modules(list: &str) -> Result<Vec<Module>, String> {
    let mut modules = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let module = Module::ALL
            .into_iter()
            .find(|m| m.as_str() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = Module::ALL.iter().map(|m| m.as_str()).collect();
                format!("{name:?} is not a module (known: {})", known.join(", "))
            })?;
        if !modules.contains(&module) {
            modules.push(module);
        }
    }
    if modules.is_empty() {
        return Err("--modules names no module".into());
    }
    Ok(modules)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_is_a_tool_with_its_schemas_and_the_default_start_fits_the_limit() {
        let registry = declarations::registry();
        let table = table(registry, None, crate::DEFAULT_MAX_TOOLS, false).unwrap();
        let with_peers = super::table(registry, None, crate::DEFAULT_MAX_TOOLS, true).unwrap();
        assert_eq!(
            with_peers.len(),
            table.len(),
            "one tool per operation, fleet or not"
        );
        for entry in &with_peers {
            if let Action::Operation { .. } = entry.action {
                assert!(entry.tool.input_schema["properties"][TARGET_NODE].is_object());
                assert!(
                    !entry.tool.input_schema["required"]
                        .as_array()
                        .is_some_and(|r| r.contains(&json!(TARGET_NODE)))
                );
            }
        }
        let ops = registry.operations().count();
        assert_eq!(table.len(), ops + Read::ALL.len());
        for op in registry.operations() {
            let entry = table
                .iter()
                .find(|e| e.tool.name == op.name())
                .unwrap_or_else(|| panic!("no tool for {}", op.name()));
            assert_eq!(entry.tool.description.as_deref(), Some(op.summary()));
            let input = &entry.tool.input_schema;
            assert_eq!(input["type"], "object", "{}", op.name());
            assert!(input["properties"]["request_id"].is_object());
            for field in op.request_schema()["properties"]
                .as_object()
                .into_iter()
                .flat_map(|p| p.keys())
            {
                assert!(
                    input["properties"][field].is_object(),
                    "{} {field}",
                    op.name()
                );
            }
            let requires_node = input["required"]
                .as_array()
                .is_some_and(|r| r.contains(&json!("node_id")));
            assert_eq!(requires_node, op.scope() == Scope::Node, "{}", op.name());
            let output = entry.tool.output_schema.as_ref().unwrap();
            assert_eq!(Value::Object((**output).clone()), op.result_schema());
            assert_eq!(entry.tool.annotations, Some(annotations(op.kind())));
        }
    }

    #[test]
    fn every_kind_has_explicit_hints_and_only_the_destructive_ones_need_confirmation() {
        for kind in Kind::ALL {
            let a = annotations(kind);
            assert!(a.read_only_hint.is_some() && a.destructive_hint.is_some());
            assert!(a.idempotent_hint.is_some() && a.open_world_hint.is_some());
            assert!(!(a.read_only_hint == Some(true) && a.destructive_hint == Some(true)));
            assert_eq!(needs_confirmation(kind), a.destructive_hint == Some(true));
        }
        assert!(needs_confirmation(Kind::Remove) && needs_confirmation(Kind::Suspend));
        assert!(!needs_confirmation(Kind::Declare) && !needs_confirmation(Kind::Observe));
        assert_eq!(annotations(Kind::Observe).read_only_hint, Some(true));
    }

    #[test]
    fn modules_narrow_the_table_and_too_many_tools_are_refused_with_the_limit() {
        let registry = declarations::registry();
        let web_mail = parse_modules("web, mail").unwrap();
        let table = table(registry, Some(&web_mail[..]), 128, false).unwrap();
        for entry in &table {
            if let Action::Operation { name, .. } = entry.action {
                let module = registry.operation(name).unwrap().module();
                assert!(matches!(module, Module::Web | Module::Mail), "{name}");
            }
        }
        assert!(table.len() < registry.operations().count());
        let err = super::table(registry, None, 10, false).unwrap_err();
        assert!(matches!(err, TableError::TooManyTools { max: 10, .. }));
        assert!(err.to_string().contains("--max-tools 10"));
        assert!(
            parse_modules("web,shell")
                .unwrap_err()
                .contains("\"shell\"")
        );
        assert!(parse_modules(",").is_err());
    }

    #[test]
    fn tool_names_are_what_mcp_accepts() {
        assert!(valid_tool_name("ensure_account") && valid_tool_name("a.b-c_9"));
        assert!(!valid_tool_name("") && !valid_tool_name("a b") && !valid_tool_name("é"));
        assert!(!valid_tool_name(&"a".repeat(129)) && valid_tool_name(&"a".repeat(128)));
    }
}
