//! `layerone mcp` with an operator's credential, driven by an rmcp client (the official Rust
//! SDK's, not our server's code) over the server's standard input and output, against dev nodes
//! joined to a fleet on a real nats-server (127.0.0.1): a call through one node with
//! `target_node` runs on the other; a peer that offers an operation in another shape, an
//! unknown node and a down peer each answer a tool error at once, naming the peer's state; and
//! `notifications/tools/list_changed` arrives, on a `subscriptions/listen` stream (2026-07-28)
//! and unscoped (2025-11-25), when a node with a module no other node has joins and when it
//! leaves.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use fleet::operator::OperatorCredential;
use fleet::protocol::{CATALOGUE_BUCKET, OfferedCatalogue};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, ProtocolVersion,
    ReadResourceRequestParams, ResourceContents, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt as _, RoleClient, ServiceExt as _,
};
use serde_json::{Value, json};

use crate::fleet_support;

use fleet_support::{DevNode, Fleet, LAYERONE, hex32, layerone, runtime, wait_until};

/// How long the test waits for what the fleet or the server does by itself.
const PATIENCE: Duration = Duration::from_secs(30);

/// A client that counts the unscoped `notifications/tools/list_changed` it receives.
#[derive(Clone)]
struct Client {
    protocol: ProtocolVersion,
    tool_changes: Arc<AtomicUsize>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.protocol_version = self.protocol.clone();
        info
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tool_changes.fetch_add(1, Ordering::SeqCst);
    }
}

type Session = RunningService<RoleClient, Client>;

/// `layerone mcp` on `node`'s local socket with the operator's credential, as a child.
async fn session(node: &DevNode, credential: &str, protocol: ProtocolVersion) -> (Session, Client) {
    let dev = node.dev_json();
    let credential = credential.to_owned();
    let transport =
        TokioChildProcess::new(tokio::process::Command::new(LAYERONE).configure(|cmd| {
            cmd.args(["mcp", "--dev", &dev, "--fleet-credential", &credential])
                .args([
                    "--allow-destructive-without-confirmation",
                    "--rate-limit",
                    "1000",
                ])
                .args(["--wait-secs", "60"])
                .env("RUST_LOG", "warn");
        }))
        .expect("layerone mcp starts");
    let client = Client {
        protocol: protocol.clone(),
        tool_changes: Arc::new(AtomicUsize::new(0)),
    };
    // 2026-07-28 has no handshake: the client discovers the server, then sends every
    // request's metadata with it; the earlier versions initialize.
    let running = if protocol.has_initialize() {
        client.clone().serve(transport).await
    } else {
        client
            .clone()
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![protocol.clone()],
                },
            )
            .await
    }
    .expect("the MCP session starts");
    (running, client)
}

async fn tool_names(session: &Session) -> Vec<String> {
    let mut names: Vec<String> = session
        .list_all_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    names
}

async fn call(session: &Session, tool: &str, arguments: Value) -> CallToolResult {
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(
        arguments
            .as_object()
            .expect("arguments are an object")
            .clone(),
    );
    session.call_tool(params).await.expect("tools/call")
}

/// A tool error's `{code, field, message, ...}`.
fn tool_error(result: &CallToolResult) -> Value {
    assert_eq!(result.is_error, Some(true), "not a tool error: {result:?}");
    let text = &result.content[0].as_text().expect("a text error").text;
    serde_json::from_str(text).expect("the error is JSON")
}

async fn fleet_operations(session: &Session) -> Value {
    let read = session
        .read_resource(ReadResourceRequestParams::new(
            "layerone://fleet/operations",
        ))
        .await
        .expect("resources/read");
    match &read.contents[0] {
        ResourceContents::TextResourceContents { text, .. } => serde_json::from_str(text).unwrap(),
        other => panic!("{other:?}"),
    }
}

/// Waits until the node's presence reports the assignment of `generation`.
fn wait_assigned(fleet: &Fleet, name: &str, generation: u64) {
    wait_until(
        &format!("{name} applied generation {generation}"),
        PATIENCE,
        || {
            fleet.nodes().iter().any(|n| {
                n["name"] == name && n["reported"]["assignment_generation"] == json!(generation)
            })
        },
    );
}

fn ensure_account(id: u64, username: &str, target: &str) -> Value {
    json!({"id": hex32(id), "username": username, "shell": "bash", "target_node": target, "request_id": hex32(1000 + id)})
}

#[test]
fn a_peers_stand_in_runs_on_the_peer_and_the_tool_list_follows_the_fleet() {
    let fleet = Fleet::init();
    let n1 = DevNode::start(fleet.dir.path(), "n1");
    let mut n2 = DevNode::start(fleet.dir.path(), "n2");
    fleet.join(&n1, "n1");
    fleet.join(&n2, "n2");
    fleet.wait_state("n1", "up", PATIENCE);
    fleet.wait_state("n2", "up", PATIENCE);
    // A fleet of web nodes: nobody runs mail.
    fleet.cli(&["assign", "n1", "web"]);
    fleet.cli(&["assign", "n2", "web"]);
    wait_assigned(&fleet, "n1", 1);
    wait_assigned(&fleet, "n2", 1);

    let admin = fleet.admin.to_str().unwrap().to_owned();
    let credential_path = fleet.dir.path().join("operator.json");
    let credential = credential_path.to_str().unwrap().to_owned();
    layerone(&[
        "fleet",
        "operator",
        "add",
        "ops",
        "--dir",
        &admin,
        "--out",
        &credential,
    ]);
    let rt = runtime();
    let operator = OperatorCredential::load(&credential_path).unwrap();
    wait_until("the broker takes the operator", PATIENCE, || {
        rt.block_on(operator.connect()).is_ok()
    });

    rt.block_on(async {
        let (modern, modern_client) =
            session(&n1, &credential, ProtocolVersion::V_2026_07_28).await;
        let (legacy, legacy_client) =
            session(&n1, &credential, ProtocolVersion::V_2025_11_25).await;
        let mut listen = modern
            .listen(SubscriptionFilter::builder().tools_list_changed().build())
            .await
            .expect("subscriptions/listen");

        // One tool per operation whatever the fleet; the mail module is nobody's.
        let tools = tool_names(&modern).await;
        assert!(tools.contains(&"ensure_account".to_owned()), "{tools:?}");
        assert!(!tools.contains(&"ensure_mailbox".to_owned()), "{tools:?}");
        assert_eq!(tool_names(&legacy).await, tools);
        let operations = fleet_operations(&modern).await;
        assert_eq!(operations["this_node"], "n1");
        assert_eq!(operations["nodes"]["n2"]["state"], "up");
        assert_eq!(
            operations["operations"]["ensure_account"]["nodes"],
            json!(["n1", "n2"])
        );

        // A call through n1 with target_node n2 runs on n2, never on n1.
        let done = call(&modern, "ensure_account", ensure_account(1, "onpeer", "n2")).await;
        assert_ne!(done.is_error, Some(true), "{done:?}");
        let result = done.structured_content.expect("a structured result");
        assert_eq!(result["username"], "onpeer", "{result}");
        let on_n2 = layerone(&["job", "show", "--dev", &n2.dev_json(), &hex32(1001)]);
        let on_n2: Value = serde_json::from_str(&on_n2).unwrap();
        assert_eq!(on_n2["state"], "succeeded", "{on_n2}");
        let on_n1 =
            fleet_support::layerone_output(&["job", "show", "--dev", &n1.dev_json(), &hex32(1001)]);
        assert!(!on_n1.status.success(), "the peer's job is not n1's");
        // A bad argument is the peer's own refusal, naming the field.
        let bad = call(
            &modern,
            "ensure_account",
            json!({"id": hex32(2), "username": "Bad Name", "target_node": "n2"}),
        )
        .await;
        assert_eq!(tool_error(&bad)["field"], "username", "{bad:?}");

        // A node the fleet does not have.
        let unknown = tool_error(
            &call(
                &modern,
                "ensure_account",
                ensure_account(3, "nowhere", "n9"),
            )
            .await,
        );
        assert_eq!(unknown["code"], "unknown_node", "{unknown}");
        assert_eq!(unknown["field"], "target_node");

        // A peer whose ensure_account has another shape is told apart by its hash, and nothing
        // is sent to it.
        let cp = async_nats::jetstream::new(fleet.control_plane().await);
        let catalogues = cp.get_key_value(CATALOGUE_BUCKET).await.unwrap();
        let sha = fleet::protocol::catalogue_sha256();
        let original = catalogues
            .get(&sha)
            .await
            .unwrap()
            .expect("the fleet's catalogue");
        let mut other: OfferedCatalogue = serde_json::from_slice(&original).unwrap();
        other
            .operations
            .insert("ensure_account".into(), "0".repeat(64));
        catalogues
            .put(&sha, serde_json::to_vec(&other).unwrap().into())
            .await
            .unwrap();
        let differs = tool_error(
            &call(
                &modern,
                "ensure_account",
                ensure_account(4, "othershape", "n2"),
            )
            .await,
        );
        assert_eq!(differs["code"], "schema_differs", "{differs}");
        assert_eq!(differs["peer_sha256"], "0".repeat(64));
        catalogues.put(&sha, original).await.unwrap();
        let never =
            fleet_support::layerone_output(&["job", "show", "--dev", &n2.dev_json(), &hex32(1004)]);
        assert!(
            !never.status.success(),
            "a call refused for its shape reached the peer"
        );

        // A node with the mail module joins a fleet of web nodes: both sessions hear that the
        // tools changed, and the mail tools are listed; when it leaves, they hear it again.
        let n3 = DevNode::start(fleet.dir.path(), "n3");
        fleet.join(&n3, "n3");
        let joined = tokio::time::timeout(PATIENCE, listen.next())
            .await
            .expect("tools/list_changed within 30 s of the mail node's join")
            .expect("the listen stream")
            .expect("a notification");
        assert!(
            matches!(
                joined,
                rmcp::model::ServerNotification::ToolListChangedNotification(_)
            ),
            "{joined:?}"
        );
        let tools = tool_names(&modern).await;
        assert!(tools.contains(&"ensure_mailbox".to_owned()), "{tools:?}");
        let legacy_heard = |n: usize| {
            let counter = legacy_client.tool_changes.clone();
            async move {
                let deadline = Instant::now() + PATIENCE;
                while counter.load(Ordering::SeqCst) < n {
                    assert!(
                        Instant::now() < deadline,
                        "the 2025-11-25 session heard no tools/list_changed"
                    );
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        };
        legacy_heard(1).await;
        assert!(
            tool_names(&legacy)
                .await
                .contains(&"ensure_mailbox".to_owned())
        );
        fleet.cli(&["assign", "n3", "mail"]);
        wait_assigned(&fleet, "n3", 1);
        fleet.cli(&["remove", "n3"]);
        tokio::time::timeout(PATIENCE, listen.next())
            .await
            .expect("tools/list_changed within 30 s of the mail node's removal")
            .expect("the listen stream")
            .expect("a notification");
        assert!(
            !tool_names(&modern)
                .await
                .contains(&"ensure_mailbox".to_owned())
        );
        legacy_heard(2).await;
        assert_eq!(
            modern_client.tool_changes.load(Ordering::SeqCst),
            0,
            "the 2026-07-28 session heard it on its listen stream, not unscoped"
        );

        // A peer that is down answers at once with its state and last heartbeat.
        n2.kill();
        let asked = Instant::now();
        let down = call(
            &modern,
            "ensure_account",
            ensure_account(5, "whiledown", "n2"),
        )
        .await;
        let waited = asked.elapsed();
        let down = tool_error(&down);
        assert_eq!(down["code"], "peer_down", "{down}");
        assert_eq!(down["field"], "target_node");
        assert_eq!(down["state"], "down", "{down}");
        assert!(down["last_seen_ms"].is_i64(), "{down}");
        assert!(waited < PATIENCE, "a down peer's call took {waited:?}");
        eprintln!("a call to a peer killed just before answered peer_down after {waited:?}");
        fleet.wait_state("n2", "down", PATIENCE);
        let asked = Instant::now();
        let down = tool_error(
            &call(
                &modern,
                "ensure_account",
                ensure_account(6, "stilldown", "n2"),
            )
            .await,
        );
        assert_eq!(down["code"], "peer_down", "{down}");
        eprintln!(
            "a call to a peer known down answered peer_down after {:?}",
            asked.elapsed()
        );

        modern.cancel().await.unwrap();
        legacy.cancel().await.unwrap();
    });
    drop(n1);
}
