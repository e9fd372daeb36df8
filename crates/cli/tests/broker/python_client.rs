//! The Python client (`clients/python`, the `layerone-client` package).
//!
//! openapi-python-client (from PyPI; `scripts/test` installs it from
//! `scripts/python-client.requirements` into `target/pyclientvenv`) on the OpenAPI document
//! `layerone catalogue --openapi` prints, which is the one the API serves: it generates a client
//! without a warning, and every operation's job has its own class whose `result` is that
//! operation's result class. The package's generated classes are what
//! `scripts/python-client generate` makes now, never stale.
//!
//! The package is built as a wheel (the pinned build frontend, backend and mypy of
//! `scripts/python-client-package.requirements`, which `scripts/test` installs into
//! `target/pyclientpkgvenv` with their wheels kept in `target/pyclientpkgvenv/wheels`), passes
//! `mypy --strict`, and, installed offline into a fresh virtualenv, runs the scenarios of
//! `clients/python/tests/against_node.py` against a real dev node (`layerone-dev`): every
//! operation's example submitted and its typed result parsed, the errors with their codes and
//! fields, node-scope calls with the node id, and a wrong pin that sends no byte.

use crate::fleet_support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use declarations::assignment::{EXAMPLE_FLEET_KEY, EXAMPLE_NODE, IDENTITY_PATH};
use fleet_support::{DevNode, command, run_bounded};
use registry::{OperationEntry, Scope};
use serde_json::{Value, json};

/// The longest one scenario may run before it is killed.
const HARD_BOUND: Duration = Duration::from_secs(240);

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The generator: `$LAYERONE_OPENAPI_PYTHON_CLIENT` or the one in `target/pyclientvenv`.
fn generator() -> PathBuf {
    if let Some(path) = std::env::var_os("LAYERONE_OPENAPI_PYTHON_CLIENT") {
        return PathBuf::from(path);
    }
    let venv = workspace().join("target/pyclientvenv/bin/openapi-python-client");
    assert!(
        venv.exists(),
        "openapi-python-client is missing: run ./scripts/test (it installs scripts/python-client.requirements into target/pyclientvenv)"
    );
    venv
}

#[allow(clippy::disallowed_methods)] // Tests run the real binary.
fn layerone(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_layerone"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("layerone runs");
    assert!(out.status.success(), "layerone {args:?}: {out:?}");
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn pascal(snake: &str) -> String {
    snake
        .split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

#[test]
#[allow(clippy::disallowed_methods)] // Tests run an external tool.
fn the_openapi_document_generates_a_python_client_typed_per_operation() {
    let tool = generator();
    let document = layerone(&["catalogue", "--openapi"]);
    let catalogue = layerone(&["catalogue", "--json"]);
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("openapi.json");
    std::fs::write(&spec, serde_json::to_vec(&document).unwrap()).unwrap();
    let output = dir.path().join("client");
    // The generator formats its output with ruff, which its virtualenv holds.
    let path = std::env::join_paths(tool.parent().into_iter().map(Path::to_path_buf).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let out = Command::new(&tool)
        .args(["generate", "--meta", "none", "--path"])
        .arg(&spec)
        .arg("--output-path")
        .arg(&output)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", tool.display()));
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the generator failed: {said}");
    assert!(
        !said.contains("Warning") && !said.contains("Unable") && !said.contains("WARNING"),
        "the generator dropped part of the document: {said}"
    );
    let operations = catalogue["operations"].as_array().expect("operations");
    assert!(!operations.is_empty());
    for op in operations {
        let name = op["operation"].as_str().expect("a name");
        let model = output.join(format!("models/{name}_job.py"));
        let source = std::fs::read_to_string(&model)
            .unwrap_or_else(|e| panic!("no job class for {name} ({}): {e}", model.display()));
        // The attribute's declaration: `result: A | B | C = UNSET`, in the generator's order.
        let class = format!("{}Result", pascal(name));
        let declared = source
            .lines()
            .find(|line| line.trim_start().starts_with("result: ") && line.ends_with("= UNSET"))
            .unwrap_or_else(|| panic!("{name}'s job declares no result: {source}"));
        let mut types: Vec<&str> = declared
            .trim()
            .trim_start_matches("result: ")
            .trim_end_matches("= UNSET")
            .split('|')
            .map(str::trim)
            .collect();
        types.sort_unstable();
        let mut expected = vec![class.as_str(), "None", "Unset"];
        expected.sort_unstable();
        assert_eq!(
            types, expected,
            "{name}'s job types its result otherwise: {declared}"
        );
        let request = output.join(format!("models/{name}_request.py"));
        assert!(request.exists(), "no request class for {name}");
    }
    let get_job = std::fs::read_to_string(output.join("api/default/get_job.py")).unwrap();
    assert!(
        get_job.contains(&format!(
            "{}Job",
            pascal(operations[0]["operation"].as_str().unwrap())
        )),
        "getJob does not answer the per-operation job classes: {get_job}"
    );
}

/// The package's virtualenv tool: its Python, with the pinned build frontend, backend, mypy
/// and attrs.
fn package_python() -> PathBuf {
    let python = workspace().join("target/pyclientpkgvenv/bin/python");
    assert!(
        python.exists() && workspace().join("target/pyclientpkgvenv/wheels").is_dir(),
        "the Python client's build tools are missing: run ./scripts/test (it installs scripts/python-client-package.requirements into target/pyclientpkgvenv)"
    );
    python
}

fn package() -> PathBuf {
    workspace().join("clients/python")
}

/// Every file under `dir`, by its path relative to `dir`, with its content.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(at) = todo.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n == "__pycache__") {
                    continue;
                }
                todo.push(path);
            } else {
                let content = std::fs::read(&path).unwrap();
                out.insert(path.strip_prefix(dir).unwrap().to_path_buf(), content);
            }
        }
    }
    out
}

#[test]
fn the_python_clients_generated_classes_are_what_the_generator_makes_now() {
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("generated");
    let tool = generator();
    let out = command(workspace().join("scripts/python-client"))
        .arg("generate")
        .arg(&fresh)
        .env("LAYERONE", env!("CARGO_BIN_EXE_layerone"))
        .env("OPENAPI_PYTHON_CLIENT", &tool)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "scripts/python-client generate failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let committed = tree(&package().join("src/layerone_client/generated"));
    let now = tree(&fresh);
    let stale: Vec<&PathBuf> = now
        .keys()
        .chain(committed.keys())
        .filter(|path| now.get(*path) != committed.get(*path))
        .collect();
    assert!(
        stale.is_empty(),
        "the Python client's generated classes are stale (run ./scripts/python-client generate and commit): {stale:?}"
    );
    assert!(
        now.keys()
            .any(|p| p.ends_with("models/ensure_account_result.py"))
    );
}

/// Builds the wheel into `dir` and returns its path.
fn wheel(dir: &Path) -> PathBuf {
    let out = command(package_python())
        .args(["-m", "build", "--wheel", "--no-isolation", "--outdir"])
        .arg(dir)
        .arg(package())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the wheel does not build: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let built: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    assert_eq!(built.len(), 1, "{built:?}");
    built[0].clone()
}

/// A fresh virtualenv in `dir` with the wheel installed, offline (its one dependency from the
/// kept wheels): its Python.
fn installed(dir: &Path) -> PathBuf {
    let venv = dir.join("venv");
    let made = command("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(made.success(), "python3 -m venv failed");
    let dist = dir.join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    wheel(&dist);
    let python = venv.join("bin/python");
    let out = command(package_python())
        .args(["-m", "pip", "--python"])
        .arg(&python)
        .args(["install", "-q", "--no-index", "--find-links"])
        .arg(workspace().join("target/pyclientpkgvenv/wheels"))
        .arg("--find-links")
        .arg(&dist)
        .arg("layerone-client")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the wheel does not install: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    python
}

#[test]
fn the_python_client_builds_as_a_wheel_and_passes_mypy_strict() {
    let dir = tempfile::tempdir().unwrap();
    let built = wheel(dir.path());
    let listed = command(package_python())
        .args(["-m", "zipfile", "-l"])
        .arg(&built)
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    for file in [
        "layerone_client/transport.py",
        "layerone_client/py.typed",
        "layerone_client/generated/models/ensure_account_result.py",
    ] {
        assert!(listed.contains(file), "the wheel lacks {file}: {listed}");
    }
    let out = command(package_python())
        .args(["-m", "mypy", "--strict", "--cache-dir"])
        .arg(workspace().join("target/pyclient-mypy-cache"))
        .arg("src")
        .arg("tests")
        .current_dir(package())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mypy --strict: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs one scenario of `against_node.py` with the installed wheel against a fresh dev node;
/// panics with its output unless it held. Returns what it printed last (a JSON summary).
fn scenario(name: &str, extra: &[&Path], seed: fn(&Path)) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let python = installed(dir.path());
    let node = DevNode::start(dir.path(), "node");
    seed(&node.root.join("sysroot"));
    scenario_on(&python, &node, name, extra)
}

/// Runs one scenario of `against_node.py` with `python` against `node`.
fn scenario_on(python: &Path, node: &DevNode, name: &str, extra: &[&Path]) -> Value {
    let mut cmd = command(python);
    cmd.arg(package().join("tests/against_node.py"))
        .arg(name)
        .arg(node.root.join("dev.json"))
        .args(extra)
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
    println!("{stdout}\n{stderr}");
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).expect("a JSON summary")
}

/// `wait` from a cursor the feed was trimmed past: on a dev node that keeps 5 events, two jobs
/// end and more push their events out of the feed; a client starting from cursor 0 gets
/// each one's outcome (the feed's 410 `events_lost`, then the job read directly) and follows
/// the feed on from the oldest event left.
#[test]
fn the_python_clients_wait_returns_jobs_whose_final_events_were_trimmed() {
    let dir = tempfile::tempdir().unwrap();
    let python = installed(dir.path());
    let node = DevNode::start_with(dir.path(), "node", &["--events-kept", "5"]);
    let summary = scenario_on(&python, &node, "trimmed", &[]);
    assert_eq!(summary["trimmed"], "ok", "{summary}");
    assert!(summary["first_cursor"].as_i64().unwrap() > 1, "{summary}");
}

fn step(op: &dyn OperationEntry, target: bool) -> Value {
    json!({
        "operation": op.name(),
        "scope": if op.scope() == Scope::Node { "node" } else { "tenant" },
        "resource": op.example(),
        "target": target,
    })
}

/// The examples of `operations`, each after the examples of its prerequisites (what it acts
/// on, what it needs), in declaration order.
fn examples_of(operations: &[&dyn OperationEntry]) -> Vec<Value> {
    let registry = declarations::registry();
    let mut plan = Vec::new();
    for op in operations {
        for before in registry.prerequisites(op.name()) {
            plan.push(step(before, false));
        }
        plan.push(step(*op, true));
    }
    plan
}

/// What the dev node's simulated system lacks for the examples of the node's own operations:
/// the kernel files `observe_runtime` reads, a local administrator in `sudo` (alice, whom
/// the sudo allowlist's example names), and the example fleet's identity (`apply_assignment`).
fn seed_node_examples(sysroot: &Path) {
    seed_local_administrator(sysroot);
    // Joined to the example fleet as its example node, as `layerone join` pins it: the
    // example assignment is signed by that fleet's key for that node.
    let identity = sysroot.join(IDENTITY_PATH.trim_start_matches('/'));
    std::fs::create_dir_all(identity.parent().unwrap()).unwrap();
    std::fs::write(
        &identity,
        serde_json::to_vec(&json!({
            "node": EXAMPLE_NODE,
            "fleet_key": EXAMPLE_FLEET_KEY,
            "brokers": ["tls://127.0.0.1:4222"],
            "joined_at": 1_760_000_000,
        }))
        .unwrap(),
    )
    .unwrap();
}

/// The kernel files `observe_runtime` reads, and alice in `sudo`.
fn seed_local_administrator(sysroot: &Path) {
    let proc_dir = sysroot.join("proc");
    std::fs::create_dir_all(&proc_dir).unwrap();
    std::fs::write(proc_dir.join("loadavg"), "0.10 0.20 0.30 1/100 4242\n").unwrap();
    std::fs::write(
        proc_dir.join("meminfo"),
        "MemTotal: 2048000 kB\nMemAvailable: 1024000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
    )
    .unwrap();
    for (file, line) in [
        ("etc/passwd", "alice:x:1900:1900::/home/alice:/bin/bash\n"),
        ("etc/group", "sudo:x:27:alice\nalice:x:1900:\n"),
    ] {
        let path = sysroot.join(file);
        let mut content = std::fs::read_to_string(&path).unwrap();
        content.push_str(line);
        std::fs::write(&path, content).unwrap();
    }
}

/// The operations whose examples need a CloudLinux node (CageFS): they run on a second dev
/// node, started with `--platform cloudlinux`.
const CLOUDLINUX_ONLY: [&str; 1] = ["set_account_isolation"];

#[test]
fn the_python_client_submits_every_operations_example_and_parses_its_typed_result() {
    let dir = tempfile::tempdir().unwrap();
    let python = installed(dir.path());
    let debian = DevNode::start(dir.path(), "debian");
    let cloudlinux = DevNode::start_with(dir.path(), "cloudlinux", &["--platform", "cloudlinux"]);
    seed_node_examples(&debian.root.join("sysroot"));
    let registry = declarations::registry();
    let (on_cloudlinux, mut on_debian): (Vec<&dyn OperationEntry>, Vec<&dyn OperationEntry>) =
        registry
            .operations()
            .partition(|op| CLOUDLINUX_ONLY.contains(&op.name()));
    // The example assignment (every module) first: every other example then runs on a node in
    // the fleet, whose runner admits a job only when the assignment holds the job's module.
    on_debian.sort_by_key(|op| op.name() != "apply_assignment");
    assert_eq!(on_debian[0].name(), "apply_assignment");
    assert_eq!(on_cloudlinux.len(), CLOUDLINUX_ONLY.len());
    let mut parsed = Vec::new();
    for (node, operations, name) in [
        (&debian, on_debian, "debian.json"),
        (&cloudlinux, on_cloudlinux, "cloudlinux.json"),
    ] {
        let plan = dir.path().join(name);
        std::fs::write(
            &plan,
            serde_json::to_vec(&examples_of(&operations)).unwrap(),
        )
        .unwrap();
        let summary = scenario_on(&python, node, "examples", &[&plan]);
        assert_eq!(summary["failed"], json!({}), "{name}: {summary}");
        parsed.extend(
            summary["parsed"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_owned()),
        );
    }
    for op in registry.operations() {
        assert!(
            parsed.iter().any(|p| p == op.name()),
            "{}'s example was not parsed into its result class: {parsed:?}",
            op.name()
        );
    }
}

#[test]
fn the_python_client_raises_the_nodes_errors_with_code_and_field_and_calls_node_scope_with_the_node_id()
 {
    scenario(
        "errors",
        &[&workspace().join("README.md")],
        seed_node_examples,
    );
}

#[test]
fn the_python_client_with_a_wrong_pin_sends_no_byte() {
    scenario("pin", &[], |_| {});
}
