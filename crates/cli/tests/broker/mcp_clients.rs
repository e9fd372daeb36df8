//! `layerone mcp` driven by independent MCP clients against a real dev node (`layerone-dev`:
//! the API with its local socket and a watching runner on a Sim sysroot): the official Python
//! SDK (PyPI `mcp`, `scripts/mcp-client.requirements`, installed by `./scripts/test` into
//! `target/mcpvenv`) runs one scenario of `mcp_session.py` per test, and the MCP Inspector's
//! CLI (npm, `scripts/mcp-inspector/`, installed into `target/mcp-inspector`) lists the tools.
//! Each test has its own dev node; every external client runs under a hard bound.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::fleet_support;

use fleet_support::{DevNode, LAYERONE, command, run_bounded};

/// The longest one client may run before it is killed (its scenarios bound themselves lower).
const HARD_BOUND: Duration = Duration::from_secs(300);

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The virtualenv's Python with the MCP SDK: `$LAYERONE_MCP_PYTHON` or `target/mcpvenv`.
fn python() -> PathBuf {
    if let Some(path) = std::env::var_os("LAYERONE_MCP_PYTHON") {
        return PathBuf::from(path);
    }
    let venv = workspace().join("target/mcpvenv/bin/python");
    assert!(
        venv.exists(),
        "the Python MCP SDK is missing: run ./scripts/test (it installs scripts/mcp-client.requirements into target/mcpvenv)"
    );
    venv
}

/// A dev node and the path of its API's local socket.
fn dev_node(dir: &Path) -> (DevNode, String) {
    let node = DevNode::start(dir, "node");
    let socket = node.info["local_socket"]
        .as_str()
        .unwrap_or_else(|| {
            panic!(
                "the dev node's dev.json names no local_socket: {}",
                node.info
            )
        })
        .to_owned();
    (node, socket)
}

/// Runs one scenario of `mcp_session.py` against a fresh dev node; panics with its output
/// unless every assertion of it held. The node's identity file is the one `layerone install`
/// derives, for a configuration of the dev node's id.
fn scenario(name: &str) {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let (node, socket) = dev_node(dir.path());
    let config = install::config::NodeConfig::parse(&format!(
        "node_id = \"{}\"\nname = \"node1.example.com\"\nplatform = \"debian\"\nlisten = \"127.0.0.1:8443\"\n",
        node.node_id()
    ))
    .unwrap();
    let identity_file = dir.path().join("identity.md");
    std::fs::write(&identity_file, install::identity::render(&config)).unwrap();
    let mut cmd = command(&python);
    cmd.arg(workspace().join("crates/cli/tests/mcp_session.py"))
        .arg(name)
        .args(["--layerone", LAYERONE, "--socket", &socket])
        .args(["--node-id", &node.node_id()])
        .arg("--identity-file")
        .arg(&identity_file)
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let out = run_bounded(cmd, &format!("the {name} scenario"), HARD_BOUND);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the {name} scenario failed ({}):\n{stdout}\n{stderr}\n-- dev node --\n{}",
        out.status,
        node.log()
    );
    println!("{stdout}");
}

#[test]
fn an_operators_session_lists_every_operation_and_each_call_is_a_job_with_its_typed_result() {
    scenario("tools_and_jobs");
}

#[test]
fn a_destructive_call_runs_when_the_operator_confirms_it_over_the_round_trip_and_not_when_declined()
{
    scenario("confirm_round_trip");
}

#[test]
fn a_destructive_call_runs_when_the_operator_confirms_it_over_the_handshake_protocol_and_not_when_declined()
 {
    scenario("confirm_handshake");
}

#[test]
fn a_client_without_elicitation_cannot_run_a_destructive_call_unless_the_server_allows_it() {
    scenario("no_elicitation");
}

#[test]
fn calls_past_the_sessions_rate_limit_are_tool_errors() {
    scenario("rate_limit");
}

#[test]
fn modules_narrow_the_tools_and_more_tools_than_the_limit_refuse_to_start() {
    scenario("modules");
}

/// The MCP Inspector's CLI, another independent client: `tools/list` through it shows the
/// node's operations.
#[test]
fn the_mcp_inspector_cli_lists_the_tools() {
    let inspector = workspace().join("target/mcp-inspector/node_modules/.bin/mcp-inspector");
    assert!(
        inspector.exists(),
        "the MCP Inspector is missing: run ./scripts/test (it installs scripts/mcp-inspector into target/mcp-inspector)"
    );
    let dir = tempfile::tempdir().unwrap();
    let (node, socket) = dev_node(dir.path());
    let mut cmd = command(&inspector);
    cmd.args(["--cli", LAYERONE, "mcp", "--socket", &socket])
        .args(["--method", "tools/list"])
        .env("RUST_LOG", "warn");
    let out = run_bounded(cmd, "the MCP Inspector", HARD_BOUND);
    assert!(
        out.status.success(),
        "the MCP Inspector failed ({}): {}\n{}\n-- dev node --\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        node.log()
    );
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let operations = declarations::registry().operations().count();
    assert_eq!(
        names.len(),
        operations + mcp::tools::Read::ALL.len(),
        "{names:?}"
    );
    for op in declarations::registry().operations() {
        assert!(names.contains(&op.name()), "{} is not listed", op.name());
    }
}
