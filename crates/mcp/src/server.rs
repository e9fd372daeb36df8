//! The MCP server of one session: lists the tool table and the two resources, and turns a
//! tool call into a job on the node (admitted, waited for, answered with the typed result or
//! the stable error), after the session's rate limit and, for a destructive operation, the
//! operator's confirmation.
//!
//! Confirmation is asked by elicitation, in the form the negotiated protocol allows: on
//! 2026-07-28 and later the call answers `input_required` with the elicitation and a handle
//! to this pending call (the client asks and calls again with the answer); on the handshake
//! protocols the server sends `elicitation/create` itself. A client that declared no
//! elicitation capability cannot confirm, and its destructive calls are refused unless the
//! server was started with `--allow-destructive-without-confirmation`.

use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use client::ClientError;
use registry::{CatalogueEntry, JobState, JobView, Scope};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, Implementation, InputRequest,
    InputRequests, InputRequiredResult, JsonObject, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ServerCapabilities, ServerConfig,
    SubscriptionFilter,
};
use rmcp::service::{
    NotificationContext, Peer, RequestContext, SubscriptionContext, SubscriptionSendError,
    SubscriptionSink,
};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::peers::{self, PeerAnswer, PeerOutcome, PeerRefusal, Peers};
use crate::target::NodeTarget;
use crate::tools::{self, Action, Read, TARGET_NODE, ToolEntry};

pub const IDENTITY_URI: &str = "layerone://node/identity";
pub const CATALOGUE_URI: &str = "layerone://node/catalogue";
/// Which nodes of the fleet offer which operations (a session with a fleet credential).
pub const FLEET_OPERATIONS_URI: &str = "layerone://fleet/operations";

/// The key of the confirmation among a call's input requests.
const CONFIRM_KEY: &str = "confirm";
/// Confirmations a session may leave unanswered at once; the oldest is forgotten first.
const MAX_PENDING: usize = 16;
/// How long the server waits for the operator to answer an `elicitation/create`.
const CONFIRM_TIMEOUT: Duration = Duration::from_secs(300);

/// What the session may do, as the server was started.
#[derive(Clone, Debug)]
pub struct Policy {
    pub allow_destructive_without_confirmation: bool,
    /// Tool calls per [`Policy::rate_window`]; past it a call is a tool error.
    pub rate_limit: u32,
    pub rate_window: Duration,
    /// How long a call waits for its job before answering `still_running`.
    pub wait: Duration,
}

/// A fixed-window count of the session's tool calls.
#[derive(Debug)]
struct RateLimiter {
    window_started: Instant,
    calls: u32,
}

/// A destructive call waiting for its confirmation (2026-07-28's round trip).
#[derive(Debug)]
struct Pending {
    handle: String,
    tool: String,
    arguments: JsonObject,
}

/// One session's server. Cheap to clone: everything is shared.
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

struct Inner {
    target: Arc<dyn NodeTarget>,
    tools: Vec<ToolEntry>,
    identity: String,
    catalogue: String,
    policy: Policy,
    limiter: Mutex<RateLimiter>,
    pending: Mutex<VecDeque<Pending>>,
    /// The fleet, when the session has an operator's credential.
    peers: Option<Arc<Peers>>,
    /// This node's catalogue entries (their modules and SHA-256s), for the peers' checks.
    entries: Vec<CatalogueEntry>,
    /// The operations the session reaches now: what it lists (with the fleet; otherwise
    /// every operation of the table).
    reachable: Mutex<BTreeSet<&'static str>>,
    /// The client, for `notifications/tools/list_changed` on the handshake protocols.
    client: OnceLock<Peer<RoleServer>>,
    /// The client's `subscriptions/listen` streams that asked for tool list changes
    /// (2026-07-28 and later).
    listeners: Mutex<Vec<SubscriptionSink>>,
}

impl Server {
    pub fn new(
        target: Arc<dyn NodeTarget>,
        tools: Vec<ToolEntry>,
        identity: String,
        catalogue: String,
        policy: Policy,
        peers: Option<Arc<Peers>>,
    ) -> Server {
        let entries = declarations::registry().catalogue();
        let reachable = match &peers {
            Some(peers) => peers.view().reachable(&entries, peers.this_node.as_deref()),
            None => entries.iter().map(|e| e.operation).collect(),
        };
        Server {
            inner: Arc::new(Inner {
                target,
                tools,
                identity,
                catalogue,
                policy,
                limiter: Mutex::new(RateLimiter {
                    window_started: Instant::now(),
                    calls: 0,
                }),
                pending: Mutex::new(VecDeque::new()),
                peers,
                entries,
                reachable: Mutex::new(reachable),
                client: OnceLock::new(),
                listeners: Mutex::new(Vec::new()),
            }),
        }
    }

    /// Reads the fleet every [`peers::REFRESH`] for as long as the session lasts, and tells
    /// the client when the operations it reaches change (a peer with a module no other node
    /// has joins the fleet, or leaves it).
    pub async fn follow_fleet(self) {
        let Some(peers) = self.inner.peers.clone() else {
            return;
        };
        loop {
            tokio::time::sleep(peers::REFRESH).await;
            let view = match peers.refresh().await {
                Ok(view) => view,
                Err(e) => {
                    tracing::warn!("reading the fleet: {e:#}");
                    continue;
                }
            };
            let now = view.reachable(&self.inner.entries, peers.this_node.as_deref());
            let changed = {
                let mut reachable = self.inner.reachable.lock().expect(
                    "the reachable operations' lock is never poisoned: nothing panics holding it",
                );
                let changed = *reachable != now;
                *reachable = now;
                changed
            };
            if changed {
                self.tools_changed().await;
            }
        }
    }

    /// Sends `notifications/tools/list_changed`: on every listen stream that asked for it,
    /// or, where there is none (the handshake protocols), to the client.
    async fn tools_changed(&self) {
        let listeners = self
            .inner
            .listeners
            .lock()
            .expect("the listeners' lock is never poisoned: nothing panics holding it")
            .clone();
        if listeners.is_empty() {
            if let Some(client) = self.inner.client.get()
                && let Err(e) = client.notify_tool_list_changed().await
            {
                tracing::warn!("notifying the client that the tools changed: {e}");
            }
            return;
        }
        let mut closed = Vec::new();
        for (i, listener) in listeners.iter().enumerate() {
            if let Err(SubscriptionSendError::SubscriptionClosed) =
                listener.notify_tool_list_changed().await
            {
                closed.push(i);
            }
        }
        if !closed.is_empty() {
            let mut kept = self
                .inner
                .listeners
                .lock()
                .expect("the listeners' lock is never poisoned: nothing panics holding it");
            let mut i = 0;
            kept.retain(|_| {
                let keep = !closed.contains(&i);
                i += 1;
                keep
            });
        }
    }

    fn listed(&self, entry: &ToolEntry) -> bool {
        match &entry.action {
            Action::Read(_) => true,
            Action::Operation { name, .. } => self
                .inner
                .reachable
                .lock()
                .expect(
                    "the reachable operations' lock is never poisoned: nothing panics holding it",
                )
                .contains(name),
        }
    }
}

/// A tool error: `isError` with `{code, field, message}` (and whatever else helps) as its
/// text, the same shape as the API's errors.
fn tool_error(code: &str, field: &str, message: impl Into<String>, extra: Value) -> CallToolResult {
    let mut body = json!({"code": code, "field": field, "message": message.into()});
    if let (Some(body), Value::Object(extra)) = (body.as_object_mut(), extra) {
        body.extend(extra);
    }
    CallToolResult::error(vec![ContentBlock::text(body.to_string())])
}

/// The API's field, as the caller named it: the tool's arguments are the request's own
/// fields, so `resource.username` is the argument `username`.
fn argument_field(api_field: &str) -> &str {
    match api_field {
        "resource" => "",
        f => f.strip_prefix("resource.").unwrap_or(f),
    }
}

fn client_error(e: &ClientError) -> CallToolResult {
    match e {
        ClientError::Api {
            code,
            field,
            message,
            status,
            retry_after_secs,
            first_cursor,
        } => {
            let mut details = json!({"status": status, "retry_after_secs": retry_after_secs});
            // `events_lost`: where the events feed can be read again from.
            if let Some(first_cursor) = first_cursor {
                details["first_cursor"] = json!(first_cursor);
            }
            tool_error(code, argument_field(field), message.clone(), details)
        }
        ClientError::Timeout(why) => tool_error("node_timeout", "", why.clone(), json!({})),
        other => tool_error(
            "node_unreachable",
            "",
            format!("{}", DisplayChain(other)),
            json!({}),
        ),
    }
}

/// An error with its sources, on one line.
struct DisplayChain<'a>(&'a dyn std::error::Error);

impl std::fmt::Display for DisplayChain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(s) = source {
            write!(f, ": {s}")?;
            source = s.source();
        }
        Ok(())
    }
}

fn random_request_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the kernel's random source is available");
    hex::encode(bytes)
}

/// Takes an envelope field (`request_id`, `node_id`) out of the arguments: a 32-hex string
/// when present.
fn take_hex32(args: &mut JsonObject, field: &str) -> Result<Option<String>, CallToolResult> {
    match args.remove(field) {
        None => Ok(None),
        Some(Value::String(s)) if s.parse::<registry::Hex32>().is_ok() => Ok(Some(s)),
        Some(_) => Err(tool_error(
            "invalid_field",
            field,
            format!("{field} must be 32 lowercase hex characters"),
            json!({}),
        )),
    }
}

/// Takes the `target_node` argument out of the arguments: the peer to run the call on, or
/// `None` for this node (absent, or this node's own name).
fn take_target(
    args: &mut JsonObject,
    peers: Option<&Peers>,
) -> Result<Option<String>, CallToolResult> {
    let bad = |message: &str| tool_error("invalid_field", TARGET_NODE, message, json!({}));
    match args.remove(TARGET_NODE) {
        None => Ok(None),
        Some(Value::String(node)) => {
            let Some(peers) = peers else {
                return Err(bad(
                    "this session reaches no fleet (start it with --fleet-credential)",
                ));
            };
            if !fleet::protocol::valid_node_name(&node) {
                return Err(bad(
                    "target_node must be a node's name: [a-z0-9][a-z0-9-]{0,62}",
                ));
            }
            Ok((peers.this_node.as_deref() != Some(node.as_str())).then_some(node))
        }
        Some(_) => Err(bad("target_node must be a node's name")),
    }
}

/// The job envelope of a call of operation `name`: the arguments are the resource, less the
/// envelope's own fields.
fn envelope(
    name: &str,
    scope: Scope,
    mut args: JsonObject,
) -> Result<(String, Value), CallToolResult> {
    let request_id = take_hex32(&mut args, "request_id")?.unwrap_or_else(random_request_id);
    let envelope = match scope {
        Scope::Tenant => json!({
            "request_id": request_id,
            "operation": name,
            "resource": Value::Object(args),
        }),
        Scope::Node => {
            let node_id = take_hex32(&mut args, "node_id")?.ok_or_else(|| {
                tool_error(
                    "missing_field",
                    "node_id",
                    "a node-scope operation needs the node's exact id (node_status shows it)",
                    json!({}),
                )
            })?;
            json!({
                "request_id": request_id,
                "action": name,
                "node_id": node_id,
                "resource": Value::Object(args),
            })
        }
    };
    Ok((request_id, envelope))
}

/// A terminal job as the call's answer.
fn job_answer(view: &JobView) -> CallToolResult {
    match view.state {
        JobState::Succeeded => {
            CallToolResult::structured(view.result.clone().unwrap_or(Value::Null))
        }
        JobState::Failed => match &view.error {
            Some(e) => tool_error(
                &e.code,
                "",
                e.message.clone(),
                json!({"retryable": e.retryable, "request_id": view.request_id}),
            ),
            None => tool_error(
                "failed",
                "",
                "the job failed",
                json!({"request_id": view.request_id}),
            ),
        },
        JobState::Superseded => tool_error(
            "superseded",
            "",
            "a newer request for the same resource replaced this one while it was queued",
            json!({"request_id": view.request_id, "superseded_by": view.superseded_by}),
        ),
        other => tool_error(
            "still_running",
            "",
            format!(
                "the job is still {}; get_job shows how it ends",
                other.as_str()
            ),
            json!({"request_id": view.request_id}),
        ),
    }
}

fn int_arg(
    args: &JsonObject,
    field: &str,
    default: i64,
    min: i64,
    max: i64,
) -> Result<i64, CallToolResult> {
    match args.get(field) {
        None => Ok(default),
        Some(v) => v
            .as_i64()
            .filter(|n| (min..=max).contains(n))
            .ok_or_else(|| {
                tool_error(
                    "invalid_field",
                    field,
                    format!("{field} must be an integer from {min} to {max}"),
                    json!({}),
                )
            }),
    }
}

fn only_fields(args: &JsonObject, allowed: &[&str]) -> Result<(), CallToolResult> {
    match args.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(tool_error(
            "unknown_field",
            k,
            format!("{k} is not an argument of this tool"),
            json!({}),
        )),
        None => Ok(()),
    }
}

/// Whether the session's client declared it can elicit.
fn can_elicit(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.client_capabilities()
        .is_some_and(|c| c.elicitation.is_some())
}

/// Whether the call came on 2026-07-28 or later, where the server may not send requests of its
/// own and asks through `input_required` instead.
fn round_trip_protocol(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

fn confirmation_request(
    tool: &str,
    summary: &str,
    args: &JsonObject,
) -> Result<ElicitRequestParams, McpError> {
    let schema = serde_json::from_value(json!({
        "type": "object",
        "properties": {"confirm": {"type": "boolean", "title": "Run it", "description": "Run this destructive operation on the node."}},
        "required": ["confirm"],
    }))
    .map_err(|e| McpError::internal_error(format!("the confirmation schema: {e}"), None))?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: format!(
            "Confirm {tool} ({summary}) with {}",
            Value::Object(args.clone())
        ),
        requested_schema: schema,
    })
}

/// Whether an elicitation's answer confirms: accepted, with `confirm: true`.
fn confirmed(result: &ElicitResult) -> bool {
    result.action == ElicitationAction::Accept
        && result
            .content
            .as_ref()
            .and_then(|c| c.get("confirm"))
            .and_then(Value::as_bool)
            == Some(true)
}

fn not_confirmed(tool: &str) -> CallToolResult {
    tool_error(
        "not_confirmed",
        "",
        format!("{tool} is destructive and the operator did not confirm it; nothing was submitted"),
        json!({}),
    )
}

/// What the confirmation step decided.
enum Confirmation {
    Proceed,
    Answer(CallToolResponse),
}

impl Server {
    fn tool(&self, name: &str) -> Option<&ToolEntry> {
        self.inner.tools.iter().find(|t| t.tool.name == name)
    }

    /// Whether `handle` is a confirmation this session asked for a call of `tool`.
    fn is_pending(&self, handle: &str, tool: &str) -> bool {
        self.inner
            .pending
            .lock()
            .expect("the pending confirmations' lock is never poisoned: nothing panics holding it")
            .iter()
            .any(|p| p.handle == handle && p.tool == tool)
    }

    /// Counts a call against the session's limit; `false` past it.
    fn admit_call(&self) -> bool {
        let mut limiter = self
            .inner
            .limiter
            .lock()
            .expect("the rate limiter's lock is never poisoned: nothing panics holding it");
        let now = Instant::now();
        if now.duration_since(limiter.window_started) >= self.inner.policy.rate_window {
            limiter.window_started = now;
            limiter.calls = 0;
        }
        if limiter.calls >= self.inner.policy.rate_limit {
            return false;
        }
        limiter.calls += 1;
        true
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn NodeTarget) -> T + Send + 'static,
    ) -> Result<T, McpError> {
        let target = self.inner.target.clone();
        tokio::task::spawn_blocking(move || f(target.as_ref()))
            .await
            .map_err(|e| McpError::internal_error(format!("a node call did not finish: {e}"), None))
    }

    async fn confirm(
        &self,
        request: &CallToolRequestParams,
        args: &JsonObject,
        summary: &str,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Confirmation, McpError> {
        let tool = request.name.as_ref();
        if self.inner.policy.allow_destructive_without_confirmation {
            return Ok(Confirmation::Proceed);
        }
        if let Some(handle) = &request.request_state {
            // The second leg of a round trip: the handle must be one this session gave out,
            // for this very call.
            let pending = {
                let mut queue = self.inner.pending.lock().expect(
                    "the pending confirmations' lock is never poisoned: nothing panics holding it",
                );
                let at = queue.iter().position(|p| &p.handle == handle);
                at.and_then(|i| queue.remove(i))
            };
            if !pending.is_some_and(|p| p.tool == tool && &p.arguments == args) {
                return Ok(Confirmation::Answer(
                    tool_error(
                        "confirmation_unknown",
                        "",
                        "this confirmation is not one this session asked for this call; call the tool again",
                        json!({}),
                    )
                    .into(),
                ));
            }
            let answer = request
                .input_responses
                .as_ref()
                .and_then(|r| r.get(CONFIRM_KEY))
                .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok());
            return Ok(match answer {
                Some(answer) if confirmed(&answer) => Confirmation::Proceed,
                _ => Confirmation::Answer(not_confirmed(tool).into()),
            });
        }
        if !can_elicit(ctx) {
            return Ok(Confirmation::Answer(
                tool_error(
                    "confirmation_unavailable",
                    "",
                    format!(
                        "{tool} is destructive and this client cannot ask the operator to confirm (no elicitation capability); nothing was submitted. Use a client that supports elicitation, or start the server with --allow-destructive-without-confirmation"
                    ),
                    json!({}),
                )
                .into(),
            ));
        }
        let params = confirmation_request(tool, summary, args)?;
        if round_trip_protocol(ctx) {
            let handle = random_request_id();
            {
                let mut queue = self.inner.pending.lock().expect(
                    "the pending confirmations' lock is never poisoned: nothing panics holding it",
                );
                if queue.len() >= MAX_PENDING {
                    queue.pop_front();
                }
                queue.push_back(Pending {
                    handle: handle.clone(),
                    tool: tool.to_owned(),
                    arguments: args.clone(),
                });
            }
            let mut requests = InputRequests::new();
            requests.insert(
                CONFIRM_KEY.to_owned(),
                InputRequest::Elicitation(ElicitRequest::new(params)),
            );
            return Ok(Confirmation::Answer(
                InputRequiredResult::new(Some(requests), Some(handle)).into(),
            ));
        }
        match ctx
            .peer
            .create_elicitation_with_timeout(params, Some(CONFIRM_TIMEOUT))
            .await
        {
            Ok(answer) if confirmed(&answer) => Ok(Confirmation::Proceed),
            Ok(_) => Ok(Confirmation::Answer(not_confirmed(tool).into())),
            Err(e) => Ok(Confirmation::Answer(
                tool_error(
                    "confirmation_failed",
                    "",
                    format!("asking the operator to confirm failed: {e}; nothing was submitted"),
                    json!({}),
                )
                .into(),
            )),
        }
    }

    async fn run_operation(
        &self,
        name: &'static str,
        scope: Scope,
        mut args: JsonObject,
    ) -> Result<CallToolResult, McpError> {
        let peers = self.inner.peers.as_deref();
        let target = match take_target(&mut args, peers) {
            Ok(target) => target,
            Err(answer) => return Ok(answer),
        };
        let (request_id, envelope) = match envelope(name, scope, args) {
            Ok(e) => e,
            Err(answer) => return Ok(answer),
        };
        if let (Some(node), Some(peers)) = (target, self.inner.peers.clone()) {
            return Ok(self
                .run_on_peer(&peers, &node, name, &request_id, &envelope)
                .await);
        }
        let wait = self.inner.policy.wait;
        self.blocking(move |node| {
            let admitted = match node.submit(&envelope) {
                Ok(view) => view,
                Err(e) => return client_error(&e),
            };
            if admitted.state.is_terminal() {
                return job_answer(&admitted);
            }
            match node.wait(&request_id, wait) {
                Ok(view) => job_answer(&view),
                Err(ClientError::Timeout(_)) => tool_error(
                    "still_running",
                    "",
                    format!("the job did not end within {wait:?}; get_job shows how it ends"),
                    json!({"request_id": request_id}),
                ),
                Err(e) => client_error(&e),
            }
        })
        .await
    }

    /// A call of `name` on the peer `node`: checked against what the fleet says of the peer,
    /// then put on its queue under the operator's credential, answered from its events.
    async fn run_on_peer(
        &self,
        peers: &Peers,
        node: &str,
        name: &'static str,
        request_id: &str,
        envelope: &Value,
    ) -> CallToolResult {
        let fleet_error = |e: anyhow::Error| {
            tool_error(
                "fleet_unreachable",
                "",
                format!("reading the fleet's broker: {e:#}"),
                json!({"node": node}),
            )
        };
        let peer = match peers.fresh(node).await {
            Ok(Some(peer)) => peer,
            Ok(None) => {
                return tool_error(
                    "unknown_node",
                    TARGET_NODE,
                    format!(
                        "the fleet has no node named {node:?}; {FLEET_OPERATIONS_URI} lists its nodes"
                    ),
                    json!({"node": node}),
                );
            }
            Err(e) => return fleet_error(e),
        };
        let Some(entry) = self.inner.entries.iter().find(|e| e.operation == name) else {
            return tool_error(
                "unknown_operation",
                "",
                format!("{name} is not in this node's catalogue"),
                json!({}),
            );
        };
        match peer.refuses(name, entry.module, &entry.sha256) {
            None => {}
            Some(PeerRefusal::ModuleNotAssigned) => {
                let modules: Vec<&str> =
                    peer.modules.iter().flatten().map(|m| m.as_str()).collect();
                return tool_error(
                    "module_not_assigned",
                    TARGET_NODE,
                    format!(
                        "node {node} is not assigned the {} module (its assignment: {})",
                        entry.module.as_str(),
                        modules.join(", ")
                    ),
                    json!({"node": node, "module": entry.module.as_str()}),
                );
            }
            Some(PeerRefusal::NotOffered) => {
                return tool_error(
                    "operation_not_offered",
                    TARGET_NODE,
                    format!(
                        "node {node} does not offer {name} (its catalogue has no such operation)"
                    ),
                    json!({"node": node, "catalogue_sha256": peer.catalogue_sha256}),
                );
            }
            Some(PeerRefusal::SchemaDiffers { theirs }) => {
                return tool_error(
                    "schema_differs",
                    TARGET_NODE,
                    format!(
                        "node {node} offers {name} in another shape than this node (another request or result schema, scope or module): this tool's schemas are not the peer's; nothing was sent"
                    ),
                    json!({"node": node, "sha256": entry.sha256, "peer_sha256": theirs}),
                );
            }
        }
        let seen = |last_seen_ms: Option<i64>| {
            json!({
                "node": node,
                "last_seen_ms": last_seen_ms,
                "seconds_since_last_heartbeat": last_seen_ms.map(|ms| (peers::now_ms() - ms) / 1000),
            })
        };
        match peer.state {
            "up" => {}
            "down" | "lost" => {
                let mut extra = seen(peer.last_seen_ms);
                extra["state"] = json!(peer.state);
                return tool_error(
                    "peer_down",
                    TARGET_NODE,
                    format!(
                        "node {node} is {}: its heartbeats stopped{}; nothing was sent",
                        peer.state,
                        peer.last_seen_ms
                            .map(|ms| format!(" {} s ago", (peers::now_ms() - ms) / 1000))
                            .unwrap_or_default()
                    ),
                    extra,
                );
            }
            state => {
                let mut extra = seen(peer.last_seen_ms);
                extra["state"] = json!(state);
                return tool_error(
                    "peer_unavailable",
                    TARGET_NODE,
                    format!(
                        "node {node} is {state}: the fleet sends it no new work; nothing was sent"
                    ),
                    extra,
                );
            }
        }
        let body = envelope.to_string();
        let wait = self.inner.policy.wait;
        match peers.call(node, request_id, body.as_bytes(), wait).await {
            Ok(PeerAnswer::Final(event)) => match peers::outcome(*event) {
                PeerOutcome::Job(view) => job_answer(&view),
                PeerOutcome::Bare(state) => tool_error(
                    "no_result",
                    "",
                    format!(
                        "node {node} ended the job {} without its view",
                        state.as_str()
                    ),
                    json!({"node": node, "request_id": request_id}),
                ),
                PeerOutcome::Refused {
                    code,
                    message,
                    field,
                } => tool_error(
                    &code,
                    argument_field(&field),
                    message,
                    json!({"node": node, "request_id": request_id}),
                ),
            },
            Ok(PeerAnswer::WentDown { last_seen_ms }) => {
                let mut extra = seen(last_seen_ms);
                extra["state"] = json!("down");
                extra["request_id"] = json!(request_id);
                tool_error(
                    "peer_down",
                    TARGET_NODE,
                    format!(
                        "node {node} stopped heartbeating while this call waited; the request stays on its queue and runs when it is back (get its result with the same request_id)"
                    ),
                    extra,
                )
            }
            Ok(PeerAnswer::TimedOut) => tool_error(
                "still_running",
                "",
                format!("node {node} gave no final word within {wait:?}"),
                json!({"node": node, "request_id": request_id}),
            ),
            Err(e) => fleet_error(e),
        }
    }

    async fn run_read(&self, read: Read, args: JsonObject) -> Result<CallToolResult, McpError> {
        let answer = match read {
            Read::Job => {
                only_fields(&args, &["request_id"]).and_then(|()| {
                    let mut args = args;
                    take_hex32(&mut args, "request_id")?.ok_or_else(|| {
                        tool_error(
                            "missing_field",
                            "request_id",
                            "request_id is required",
                            json!({}),
                        )
                    })
                })
            }
            .map(ReadCall::Job),
            Read::Events => only_fields(&args, &["after", "limit", "wait"]).and_then(|()| {
                Ok(ReadCall::Events {
                    after: int_arg(&args, "after", 0, 0, i64::MAX)?,
                    limit: int_arg(&args, "limit", 100, 1, 1000)? as u32,
                    wait: int_arg(&args, "wait", 0, 0, 60)? as u32,
                })
            }),
            Read::Audit => only_fields(&args, &["after", "limit"]).and_then(|()| {
                Ok(ReadCall::Audit {
                    after: int_arg(&args, "after", 0, 0, i64::MAX)?,
                    limit: int_arg(&args, "limit", 100, 1, 1000)? as u32,
                })
            }),
            Read::Drift => only_fields(&args, &["after", "limit"]).and_then(|()| {
                Ok(ReadCall::Drift {
                    after: int_arg(&args, "after", 0, 0, i64::MAX)?,
                    limit: int_arg(&args, "limit", 100, 1, 1000)? as usize,
                })
            }),
            Read::Status => only_fields(&args, &[]).map(|()| ReadCall::Status),
        };
        match answer {
            Err(answer) => Ok(answer),
            Ok(call) => self.blocking(move |node| call.run(node)).await,
        }
    }
}

/// A read tool's call, its arguments checked.
enum ReadCall {
    Job(String),
    Events { after: i64, limit: u32, wait: u32 },
    Audit { after: i64, limit: u32 },
    Drift { after: i64, limit: usize },
    Status,
}

/// How many pages of the events feed one `list_drift` call reads at most.
const DRIFT_PAGES: usize = 10;

impl ReadCall {
    fn run(self, node: &dyn NodeTarget) -> CallToolResult {
        let structured = |v: Result<Value, ClientError>| match v {
            Ok(v) => CallToolResult::structured(v),
            Err(e) => client_error(&e),
        };
        match self {
            ReadCall::Job(id) => structured(node.job(&id).and_then(to_value)),
            ReadCall::Events { after, limit, wait } => {
                structured(node.events(after, wait, limit).and_then(to_value))
            }
            ReadCall::Audit { after, limit } => structured(node.audit(after, limit)),
            ReadCall::Drift { after, limit } => {
                // The drift entries of the events feed, a bounded number of pages at a time;
                // `next` says where to go on.
                let mut cursor = after;
                let mut drift = Vec::new();
                for _ in 0..DRIFT_PAGES {
                    let page = match node.events(cursor, 0, 1000) {
                        Ok(page) => page,
                        Err(e) => return client_error(&e),
                    };
                    let full = page.events.len() == 1000 || page.truncated;
                    for event in page.events {
                        cursor = event.cursor;
                        if matches!(
                            event.kind,
                            registry::EventKind::Drift | registry::EventKind::DriftResolved
                        ) {
                            drift.push(event);
                            if drift.len() == limit {
                                break;
                            }
                        }
                    }
                    if drift.len() == limit || !full {
                        if !full && drift.len() < limit {
                            cursor = cursor.max(page.next);
                        }
                        break;
                    }
                }
                structured(to_value(registry::EventPage {
                    events: drift,
                    next: cursor,
                    truncated: false,
                }))
            }
            ReadCall::Status => match node.health() {
                Ok((_, body)) => CallToolResult::structured(body),
                Err(e) => client_error(&e),
            },
        }
    }
}

fn to_value<T: serde::Serialize>(v: T) -> Result<Value, ClientError> {
    serde_json::to_value(v).map_err(|e| ClientError::Unexpected(e.to_string()))
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(if self.inner.peers.is_some() {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .build()
        } else {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build()
        })
        .with_server_info(Implementation::new("layerone", env!("CARGO_PKG_VERSION")))
        .with_instructions(self.inner.identity.clone())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let _ = self.inner.client.set(ctx.peer.clone());
        Ok(ListToolsResult::with_all_items(
            self.inner
                .tools
                .iter()
                .filter(|t| self.listed(t))
                .map(|t| t.tool.clone())
                .collect(),
        ))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let _ = self.inner.client.set(context.peer);
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.inner
            .peers
            .is_some()
            .then(|| SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        self.inner
            .listeners
            .lock()
            .expect("the listeners' lock is never poisoned: nothing panics holding it")
            .push(context.sink().clone());
        context.cancelled().await;
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(entry) = self.tool(&request.name) else {
            return Err(McpError::invalid_params(
                format!("no tool is named {:?}", request.name),
                None,
            ));
        };
        let action = entry.action.clone();
        // The second leg of a confirmation this session asked for is the same call: it is
        // counted once. Any other state a client sends is no reason not to count.
        let second_leg = request
            .request_state
            .as_ref()
            .is_some_and(|handle| self.is_pending(handle, &request.name));
        if !second_leg && !self.admit_call() {
            let policy = &self.inner.policy;
            return Ok(tool_error(
                "rate_limited",
                "",
                format!(
                    "this session may make {} tool calls per {:?}; wait and call again",
                    policy.rate_limit, policy.rate_window
                ),
                json!({"retry_after_secs": policy.rate_window.as_secs()}),
            )
            .into());
        }
        let args = request.arguments.clone().unwrap_or_default();
        match action {
            Action::Read(read) => Ok(self.run_read(read, args).await?.into()),
            Action::Operation {
                name,
                scope,
                kind,
                summary,
            } => {
                if tools::needs_confirmation(kind)
                    && let Confirmation::Answer(answer) =
                        self.confirm(&request, &args, summary, &ctx).await?
                {
                    return Ok(answer);
                }
                Ok(self.run_operation(name, scope, args).await?.into())
            }
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let mut identity = Resource::new(IDENTITY_URI, "identity");
        identity.description = Some("Who this node is and how it presents itself".into());
        identity.mime_type = Some("text/markdown".into());
        let mut catalogue = Resource::new(CATALOGUE_URI, "catalogue");
        catalogue.description =
            Some("Every operation the node offers, with its schemas and example".into());
        catalogue.mime_type = Some("application/json".into());
        let mut resources = vec![identity, catalogue];
        if self.inner.peers.is_some() {
            let mut fleet = Resource::new(FLEET_OPERATIONS_URI, "fleet operations");
            fleet.description = Some(
                "Every node of the fleet (state, last heartbeat, modules) and, for every operation, the nodes that offer it and those that offer it in another shape".into(),
            );
            fleet.mime_type = Some("application/json".into());
            resources.push(fleet);
        }
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let (text, mime) = match request.uri.as_str() {
            IDENTITY_URI => (self.inner.identity.clone(), "text/markdown"),
            CATALOGUE_URI => (self.inner.catalogue.clone(), "application/json"),
            FLEET_OPERATIONS_URI if self.inner.peers.is_some() => {
                let peers = self.inner.peers.as_ref().expect("checked");
                let view = peers.refresh().await.map_err(|e| {
                    McpError::internal_error(format!("reading the fleet's broker: {e:#}"), None)
                })?;
                let document =
                    view.operations_document(&self.inner.entries, peers.this_node.as_deref());
                (document.to_string(), "application/json")
            }
            other => {
                return Err(McpError::resource_not_found(
                    format!("no resource {other:?}"),
                    None,
                ));
            }
        };
        Ok(
            ReadResourceResult::new(vec![ResourceContents::TextResourceContents {
                uri: request.uri.clone(),
                mime_type: Some(mime.into()),
                text,
                meta: None,
            }])
            .into(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_take_their_own_fields_out_of_the_arguments() {
        let args = |v: Value| v.as_object().unwrap().clone();
        let (id, env) = envelope(
            "ensure_account",
            Scope::Tenant,
            args(json!({"id": "1", "request_id": "ab".repeat(16)})),
        )
        .unwrap();
        assert_eq!(id, "ab".repeat(16));
        assert_eq!(
            env,
            json!({"request_id": id, "operation": "ensure_account", "resource": {"id": "1"}})
        );
        let (made, _) = envelope("ensure_account", Scope::Tenant, args(json!({}))).unwrap();
        assert!(made.parse::<registry::Hex32>().is_ok());
        let (_, env) = envelope(
            "set_sudo_allowlist",
            Scope::Node,
            args(json!({"node_id": "cd".repeat(16), "x": 1})),
        )
        .unwrap();
        assert_eq!(env["action"], "set_sudo_allowlist");
        assert_eq!(env["node_id"], "cd".repeat(16));
        assert_eq!(env["resource"], json!({"x": 1}));
        let field = |r: CallToolResult| {
            let text = r.content[0].as_text().unwrap().text.clone();
            serde_json::from_str::<Value>(&text).unwrap()["field"].clone()
        };
        assert_eq!(
            field(envelope("set_sudo_allowlist", Scope::Node, args(json!({}))).unwrap_err()),
            "node_id"
        );
        assert_eq!(
            field(
                envelope(
                    "ensure_account",
                    Scope::Tenant,
                    args(json!({"request_id": "x"}))
                )
                .unwrap_err()
            ),
            "request_id"
        );
        assert_eq!(argument_field("resource.username"), "username");
        assert_eq!(argument_field("resource"), "");
        assert_eq!(argument_field("request_id"), "request_id");
    }

    #[test]
    fn only_an_accepted_confirm_true_confirms() {
        let answer = |action, content: Option<Value>| {
            let mut r = ElicitResult::new(action);
            r.content = content;
            r
        };
        assert!(confirmed(&answer(
            ElicitationAction::Accept,
            Some(json!({"confirm": true}))
        )));
        assert!(!confirmed(&answer(
            ElicitationAction::Accept,
            Some(json!({"confirm": false}))
        )));
        assert!(!confirmed(&answer(ElicitationAction::Accept, None)));
        assert!(!confirmed(&answer(
            ElicitationAction::Decline,
            Some(json!({"confirm": true}))
        )));
        assert!(!confirmed(&answer(ElicitationAction::Cancel, None)));
    }
}
