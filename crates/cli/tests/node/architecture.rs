//! Repository rules checked as ordinary tests, in the manner of rust-analyzer's tidy tests:
//! ARCHITECTURE.md names only paths that exist, every test a document or a doc comment names
//! exists, the invariants are numbered once, every source file opens with a module doc, every
//! crash point has a call site, nothing a simulation drives reads the system's clock, only
//! the provider's real executor starts programs (ARCHITECTURE.md invariant 4), the unprivileged
//! side links the declarations only (docs/design.md section 10), and no test returns before
//! asserting anything under a condition CI decides (the uid, a variable, a program's presence).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Backticked tokens of a line that look like paths.
fn paths(line: &str) -> Vec<&str> {
    line.split('`')
        .skip(1)
        .step_by(2)
        .filter(|t| {
            !t.contains(' ')
                && (t.starts_with("crates/") || t.starts_with("src/") || t.starts_with("tests/"))
        })
        .collect()
}

#[test]
fn architecture_md_names_only_paths_that_exist() {
    let root = workspace();
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut checked = 0;
    for line in text.lines() {
        let tokens = paths(line);
        // In a table row, `src/...` is relative to the crate the row is about.
        let krate = tokens
            .iter()
            .find(|t| t.starts_with("crates/") && t.matches('/').count() == 1)
            .copied();
        for token in tokens {
            let path = match (
                token.starts_with("src/") || token.starts_with("tests/"),
                krate,
            ) {
                (true, Some(krate)) => root.join(krate).join(token),
                _ => root.join(token),
            };
            assert!(
                path.exists(),
                "ARCHITECTURE.md names {token}, which does not exist ({})",
                path.display()
            );
            checked += 1;
        }
    }
    assert!(
        checked > 20,
        "only {checked} paths found: the parser no longer reads ARCHITECTURE.md"
    );
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The one file allowed to build a `Command`: the provider's real executor.
const REAL_EXECUTOR: &str = "crates/provider/src/executor/real.rs";

/// No program is started outside the real executor: no whole-crate exemption, the provider's
/// other files, the simulator and the test support included (ARCHITECTURE.md invariant 4).
#[test]
fn only_the_real_executor_starts_programs() {
    let root = workspace();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    let mut offenders = Vec::new();
    for file in &files {
        let rel = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        // Tests may start the real binaries they test; the real executor is the one exception.
        if rel == REAL_EXECUTOR || rel.contains("/tests/") {
            continue;
        }
        // The benchmark, like a test, starts the real binaries it measures, from one module.
        if rel == "crates/bench/src/child.rs" {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for needle in [
            "process::Command",
            "Command::new",
            "\"sh\", \"-c\"",
            "\"bash\", \"-c\"",
            "libc::system",
            "libc::exec",
        ] {
            if text.contains(needle) {
                offenders.push(format!("{rel}: {needle}"));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "programs run outside {REAL_EXECUTOR}: {offenders:?}"
    );
    // The exception is one spawn, and neither it nor the audited `execute` uses a shell.
    let real = std::fs::read_to_string(root.join(REAL_EXECUTOR)).unwrap();
    assert_eq!(
        real.matches("Command::new(").count(),
        1,
        "{REAL_EXECUTOR} builds its commands in one place"
    );
    for file in [REAL_EXECUTOR, "crates/provider/src/exec.rs"] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        // Unit tests may start a shell as a child to test the timeout; the code may not.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        assert!(
            !code.contains("\"-c\"") && !code.contains("/bin/sh"),
            "{file}: the provider must not use a shell"
        );
    }
    let clippy = std::fs::read_to_string(root.join("clippy.toml")).unwrap();
    assert!(
        clippy.contains("std::process::Command::new"),
        "clippy.toml must disallow Command::new"
    );
}

/// The executor interface is about running a program and nothing else: what else differs
/// between a server and a simulation (the owners of tenant files, the MariaDB model, the uids a
/// kill may reach, the listeners, the certificate authority, whether changes need root) is
/// the machine's (`provider::Machine`), with a real and a simulated implementation, so no
/// production path branches on which executor it holds.
#[test]
fn executor_is_only_about_running_programs() {
    /// Each method's reason to be the executor's: `run` and `run_streaming` carry out one
    /// invocation; `runs_real` says which binary an invocation of a program starts (this
    /// machine's or the sysroot's model), so where the program is looked for.
    const ALLOWED: &[&str] = &["run", "run_streaming", "runs_real"];
    let file = "crates/provider/src/executor/mod.rs";
    let text = std::fs::read_to_string(workspace().join(file)).unwrap();
    let code: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .map(|line| format!("{line}\n"))
        .collect();
    let start = code
        .find("pub trait Executor")
        .unwrap_or_else(|| panic!("{file} no longer declares `pub trait Executor`"));
    let open = start + code[start..].find('{').expect("the trait has a body");
    let mut depth = 0usize;
    let mut close = None;
    for (i, c) in code[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            _ => {}
        }
    }
    let body = &code[open + 1..close.expect("the trait's body closes")];
    let methods: BTreeSet<&str> = body
        .split("fn ")
        .skip(1)
        .map(|rest| {
            rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .unwrap()
        })
        .collect();
    let allowed: BTreeSet<&str> = ALLOWED.iter().copied().collect();
    assert_eq!(
        methods, allowed,
        "`Executor` ({file}) must offer exactly the methods about running a program, \
         {ALLOWED:?}: a question about the system as a whole (is it a simulation, does the \
         provider act as root, which MariaDB, may a uid be signalled, can listeners be asked, \
         which certificate authority) belongs to `provider::Machine`, whose simulated \
         implementation stays out of the packaged binaries"
    );
}

/// The crates of the unprivileged side: what the API, a client and every binary that talks
/// about operations without performing them link.
const UNPRIVILEGED: &[&str] = &[
    "admission",
    "api",
    "client",
    "contract",
    "declarations",
    "fleet",
    "fleet-daemon",
    "inbox",
    "mcp",
    "store",
];

/// What the unprivileged side must never link: root's state.db writer, the handlers, the
/// provider, the simulator and the test support and the simulation, the runner, the tenant
/// worker and the crash points.
const PRIVILEGED: &[&str] = &[
    "state",
    "ops",
    "provider",
    "simulator",
    "testkit",
    "simulation",
    "runner",
    "tenant",
    "crash",
];

/// What `cargo metadata` says of the workspace.
struct Metadata {
    /// Package name to the names of its normal and build dependencies (dev-dependencies are
    /// left out: tests may link anything).
    graph: BTreeMap<String, BTreeSet<String>>,
    /// The workspace's own packages.
    members: BTreeSet<String>,
    /// Every workspace package's JSON, by name.
    packages: BTreeMap<String, Value>,
}

/// The workspace's resolved graph from `cargo metadata`.
fn metadata() -> Metadata {
    // The node runs on Linux: the graph for this machine's target, which also keeps cargo
    // from fetching crates only other platforms would link.
    let target = format!(
        "{}-unknown-linux-{}",
        std::env::consts::ARCH,
        if cfg!(target_env = "musl") {
            "musl"
        } else {
            "gnu"
        }
    );
    #[allow(clippy::disallowed_methods)] // The test reads the resolved graph from cargo itself.
    let output = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--offline"])
        .args(["--filter-platform", &target, "--manifest-path"])
        .arg(workspace().join("Cargo.toml"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).expect("cargo metadata is JSON");
    let name_of: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let members: BTreeSet<String> = metadata["workspace_members"]
        .as_array()
        .expect("workspace members")
        .iter()
        .map(|id| name_of[id.as_str().unwrap()].to_owned())
        .collect();
    let mut graph = BTreeMap::new();
    for node in metadata["resolve"]["nodes"]
        .as_array()
        .expect("a resolved graph")
    {
        let deps: BTreeSet<String> = node["deps"]
            .as_array()
            .expect("deps")
            .iter()
            .filter(|dep| {
                dep["dep_kinds"]
                    .as_array()
                    .expect("dep kinds")
                    .iter()
                    .any(|kind| kind["kind"].as_str() != Some("dev"))
            })
            .map(|dep| name_of[dep["pkg"].as_str().unwrap()].to_owned())
            .collect();
        graph.insert(name_of[node["id"].as_str().unwrap()].to_owned(), deps);
    }
    let packages = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter(|p| members.contains(p["name"].as_str().unwrap()))
        .map(|p| (p["name"].as_str().unwrap().to_owned(), p.clone()))
        .collect();
    Metadata {
        graph,
        members,
        packages,
    }
}

/// The one workspace package that builds the binary `binary`.
fn package_of_binary(packages: &BTreeMap<String, Value>, binary: &str) -> String {
    let owners: Vec<&String> = packages
        .iter()
        .filter(|(_, package)| {
            package["targets"].as_array().unwrap().iter().any(|target| {
                target["name"] == binary
                    && target["kind"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|k| k == "bin")
            })
        })
        .map(|(name, _)| name)
        .collect();
    let [owner] = owners[..] else {
        panic!("{binary} is a binary of {owners:?}, not of one package");
    };
    owner.clone()
}

/// Every package `root` links, directly or not.
fn closure(graph: &BTreeMap<String, BTreeSet<String>>, root: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![root.to_owned()];
    while let Some(name) = todo.pop() {
        for dep in &graph[&name] {
            if seen.insert(dep.clone()) {
                todo.push(dep.clone());
            }
        }
    }
    seen
}

#[test]
fn the_unprivileged_side_links_no_handler_provider_or_simulator() {
    let Metadata { graph, members, .. } = metadata();
    // The walk finds what it must: the handlers do link the provider.
    assert!(
        closure(&graph, "ops").contains("provider"),
        "the dependency walk no longer sees ops -> provider"
    );
    // Forbidden besides the named crates: every workspace crate that links the provider (a
    // future simulator or handler crate would), and any workspace crate named for a simulator.
    let forbidden: BTreeSet<&str> = members
        .iter()
        .filter(|m| {
            PRIVILEGED.contains(&m.as_str())
                || closure(&graph, m).contains("provider")
                || m.contains("sim")
        })
        .map(String::as_str)
        .collect();
    for name in PRIVILEGED {
        assert!(
            members.contains(*name),
            "{name} is not a workspace crate any more: update this test"
        );
    }
    for krate in UNPRIVILEGED {
        assert!(members.contains(*krate), "{krate} is not a workspace crate");
        let linked = closure(&graph, krate);
        let bad: Vec<&&str> = forbidden.iter().filter(|f| linked.contains(**f)).collect();
        assert!(
            bad.is_empty(),
            "{krate} links {bad:?}: the unprivileged side links the declarations, never the \
             handlers, the provider, the runner or a simulator"
        );
    }
    assert!(
        closure(&graph, "api").contains("declarations"),
        "the API validates requests with the declarations"
    );
    // The MCP server talks about operations, reaches this node through the client and its
    // peers through the fleet's protocol: of the workspace's crates it links the declarations,
    // the registry, the client and the protocol, which links no more than the declarations
    // (the daemon, with the API's admission and its store, is `fleet-daemon`).
    let links = |krate: &str| -> BTreeSet<String> {
        closure(&graph, krate)
            .into_iter()
            .filter(|d| members.contains(d.as_str()))
            .collect()
    };
    let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(
        links("mcp"),
        names(&["client", "declarations", "fleet", "registry"]),
        "the MCP server links workspace crates beyond the declarations, the registry, the client and the fleet's protocol"
    );
    assert_eq!(
        links("fleet"),
        names(&["declarations", "registry"]),
        "the fleet's protocol links workspace crates beyond the declarations and the registry"
    );
}

/// What no packaged binary may link: the simulator, the test support, the deterministic
/// simulation (whose VFS would become the process's default), and the package of the
/// binaries the packages do not ship.
const UNSHIPPED: &[&str] = &["simulator", "testkit", "simulation", "devnode"];

/// The binaries the packages ship are those of the `.deb` and `.rpm` assets (`crates/cli`'s
/// `[package.metadata.deb]` and `[package.metadata.generate-rpm]`); the packages that build
/// them link neither the simulator, nor the test support, nor any crate holding a simulated
/// implementation (normal dependencies: their tests may link anything), so the packaged
/// `layerone-runner` cannot select the simulator or arm a crash point. The bytes of the built runner are checked by
/// `the_packaged_runner_holds_no_simulator_and_no_crash_point_arming` (devnode).
#[test]
fn the_packaged_binaries_link_neither_the_simulator_nor_the_test_support() {
    let Metadata {
        graph,
        members,
        packages,
    } = metadata();
    for name in UNSHIPPED {
        assert!(members.contains(*name), "{name} is not a workspace crate");
    }
    // The walk sees what it must: the unshipped binaries do link both.
    let devnode = closure(&graph, "devnode");
    assert!(
        devnode.contains("simulator") && devnode.contains("testkit"),
        "the dependency walk no longer sees devnode -> simulator, testkit"
    );
    // Besides the named crates, every workspace crate holding a simulated implementation: one
    // that links the simulator, or is named for a simulation.
    let simulated: BTreeSet<String> = members
        .iter()
        .filter(|m| {
            UNSHIPPED.contains(&m.as_str())
                || closure(&graph, m).contains("simulator")
                || m.contains("sim")
        })
        .cloned()
        .collect();
    let cli = &packages["cli"]["metadata"];
    let mut shipped = BTreeSet::new();
    let deb = cli["deb"]["assets"].as_array().expect("deb assets");
    let rpm = cli["generate-rpm"]["assets"]
        .as_array()
        .expect("rpm assets");
    let sources = deb
        .iter()
        .map(|asset| asset[0].as_str().unwrap())
        .chain(rpm.iter().map(|asset| asset["source"].as_str().unwrap()));
    for source in sources {
        if let Some(binary) = source.strip_prefix("target/release/") {
            shipped.insert(binary.to_owned());
        }
    }
    assert!(
        shipped.contains("layerone-runner") && shipped.len() >= 4,
        "the packages' assets no longer list the binaries: {shipped:?}"
    );
    for binary in &shipped {
        let owner = &package_of_binary(&packages, binary);
        let linked = closure(&graph, owner);
        let bad: Vec<&String> = simulated.iter().filter(|u| linked.contains(*u)).collect();
        assert!(
            bad.is_empty(),
            "the packaged {binary} (package {owner}) links {bad:?}"
        );
        assert!(
            !UNSHIPPED.contains(&owner.as_str()),
            "the packages ship {binary} of {owner}"
        );
    }
}

/// The crates that serve HTTP: none of them may be linked by the runner's package.
const HTTP_SERVERS: &[&str] = &[
    "axum",
    "axum-core",
    "axum-server",
    "tower-http",
    "actix-web",
    "warp",
    "tiny_http",
    "rouille",
    "poem",
    "salvo",
];

/// The privilege boundary drawn as packages: the packages of the two unprivileged binaries
/// (`layerone-api` and the fleet daemon it runs) do not link root's state.db writer, the
/// fleet daemon does not link the HTTP API, admission links no HTTP crate, the runner's
/// package links no HTTP server (the hyper of its ACME client is built without its server
/// feature), and the API and the runner are built by different packages.
#[test]
fn the_unprivileged_binaries_link_neither_root_state_nor_each_other() {
    let Metadata {
        graph, packages, ..
    } = metadata();
    let api = package_of_binary(&packages, "layerone-api");
    let runner = package_of_binary(&packages, "layerone-runner");
    assert_ne!(
        api, runner,
        "layerone-api and layerone-runner are built by the same package"
    );
    // The walk sees what it must: root's side does link the state crate.
    assert!(
        closure(&graph, &runner).contains("state"),
        "the dependency walk no longer sees the runner -> state"
    );
    let linked = |krate: &str| {
        let mut all = closure(&graph, krate);
        all.insert(krate.to_owned());
        all
    };
    for krate in [api.as_str(), "fleet-daemon"] {
        assert!(
            !linked(krate).contains("state"),
            "{krate} links root's state.db writer (the state crate)"
        );
    }
    assert!(
        linked(&api).contains("fleet-daemon"),
        "the API's package no longer links the fleet daemon it runs: update this test"
    );
    for http in ["api", "axum", "axum-core", "axum-server", "hyper"] {
        assert!(
            !linked("admission").contains(http),
            "admission links {http}: it is the same for every door and speaks no HTTP"
        );
    }
    for http in ["api", "axum", "axum-core", "axum-server"] {
        assert!(
            !linked("fleet-daemon").contains(http),
            "the fleet daemon links {http}: it admits through the admission crate, not the API"
        );
    }
    let runner_links = linked(&runner);
    let servers: Vec<&&str> = HTTP_SERVERS
        .iter()
        .filter(|s| runner_links.contains(**s))
        .collect();
    assert!(
        servers.is_empty(),
        "the runner's package {runner} links the HTTP servers {servers:?}"
    );
    // hyper is both a client and a server: as the runner's package is built alone, the hyper
    // it links (the ACME client's) has no server feature.
    #[allow(clippy::disallowed_methods)] // The test reads the feature graph from cargo itself.
    let tree = std::process::Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "-e",
            "features",
            "-i",
            "hyper",
            "-p",
            &runner,
        ])
        .arg("--manifest-path")
        .arg(workspace().join("Cargo.toml"))
        .output()
        .expect("cargo tree runs");
    let text = String::from_utf8_lossy(&tree.stdout);
    assert!(
        tree.status.success() && text.contains("hyper feature \"client\""),
        "cargo tree did not show the runner's hyper: {}",
        String::from_utf8_lossy(&tree.stderr)
    );
    assert!(
        !text.contains("hyper feature \"server\""),
        "the runner's package builds hyper with its server feature:\n{text}"
    );
}

/// The workspace's Rust code without its comments: every name it defines or uses.
fn code_text(root: &Path) -> String {
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    let mut code = String::new();
    for file in files {
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            if !line.trim_start().starts_with("//") {
                code.push_str(line);
                code.push('\n');
            }
        }
    }
    code
}

/// Whether `name` stands in `code` as a whole word.
fn names(code: &str, name: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    code.match_indices(name)
        .any(|(at, _)| !code[..at].ends_with(word) && !code[at + name.len()..].starts_with(word))
}

/// Names the documents cite that belong to other programs (MariaDB's authentication plugin,
/// PHP's own function).
const NAMES_OUTSIDE_THE_CODE: &[&str] = &["mysql_native_password", "set_time_limit"];

/// `request_too_large` as serde derives it from the variant `RequestTooLarge`.
fn camel_case(snake: &str) -> String {
    snake
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// Backticked tokens that name something in the code: lowercase snake case of three words
/// or more (tests, functions, error codes, operations).
fn cited_names(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|t| {
            t.matches('_').count() >= 2
                && t.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                && t.starts_with(|c: char| c.is_ascii_lowercase())
        })
        .map(str::to_owned)
        .collect()
}

/// Every test (and every other name) a document or a doc comment cites exists in the code:
/// a renamed or removed test fails here, not in a reader's search.
#[test]
fn every_test_the_documents_and_doc_comments_name_exists() {
    let root = workspace();
    let code = code_text(&root);
    let mut sources: Vec<(String, String)> = Vec::new();
    for doc in ["ARCHITECTURE.md", "README.md"] {
        sources.push((
            doc.to_owned(),
            std::fs::read_to_string(root.join(doc)).unwrap(),
        ));
    }
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            let rel = path.strip_prefix(&root).unwrap().display().to_string();
            sources.push((rel, std::fs::read_to_string(&path).unwrap()));
        }
    }
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let docs: String = text
            .lines()
            .map(str::trim_start)
            .filter(|l| l.starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let rel = file.strip_prefix(&root).unwrap().display().to_string();
        sources.push((rel, docs));
    }
    let mut missing = Vec::new();
    let mut cited = 0;
    for (name, text) in &sources {
        for token in cited_names(text) {
            cited += 1;
            if !names(&code, &token)
                && !names(&code, &camel_case(&token))
                && !NAMES_OUTSIDE_THE_CODE.contains(&token.as_str())
            {
                missing.push(format!("{name}: {token}"));
            }
        }
    }
    assert!(
        cited > 100,
        "only {cited} names found: the scan no longer reads the documents"
    );
    assert!(
        missing.is_empty(),
        "named but not in the code: {missing:#?}"
    );
}

/// ARCHITECTURE.md numbers each invariant once.
#[test]
fn invariant_numbers_in_architecture_md_are_unique() {
    let text = std::fs::read_to_string(workspace().join("ARCHITECTURE.md")).unwrap();
    let mut seen = std::collections::BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let Some((number, rest)) = line.split_once(". **") else {
            continue;
        };
        let Ok(number) = number.trim().parse::<u32>() else {
            continue;
        };
        if let Some(first) = seen.insert(number, (n + 1, rest.to_owned())) {
            panic!(
                "invariant {number} is numbered twice: line {} and line {}",
                first.0,
                n + 1
            );
        }
    }
    assert!(seen.len() >= 10, "only {} invariants found", seen.len());
    let numbers: Vec<u32> = seen.keys().copied().collect();
    let expected: Vec<u32> = (1..=u32::try_from(numbers.len()).unwrap()).collect();
    assert_eq!(
        numbers, expected,
        "invariants are numbered 1 to n without gaps"
    );
}

/// Every Rust source file opens with a module doc saying what it owns.
#[test]
fn every_source_file_opens_with_a_module_doc() {
    let root = workspace();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    rust_files(&root.join("fuzz"), &mut files);
    let undocumented: Vec<String> = files
        .iter()
        .filter(|f| !f.components().any(|c| c.as_os_str() == "target"))
        .filter(|f| {
            !std::fs::read_to_string(f)
                .unwrap()
                .trim_start()
                .starts_with("//!")
        })
        .map(|f| f.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert!(
        undocumented.is_empty(),
        "files without a module doc: {undocumented:#?}"
    );
}

/// The crates a simulation drives, whose time must come from the clock their caller gives
/// them (`clock::Clock`), never from the system's.
const CLOCKED: &[&str] = &[
    "crates/store/src",
    "crates/inbox/src",
    "crates/state/src",
    "crates/runner/src",
    "crates/ops/src",
    "crates/provider/src",
    "crates/simulator/src",
];

/// The files of those crates that read the system's time on purpose, each for something
/// real that a simulation's clock must not stand in for.
const REAL_TIME: &[(&str, &str)] = &[
    (
        "crates/provider/src/executor/real.rs",
        "a real child's deadline: a clock that does not move would let a hung program hang",
    ),
    (
        "crates/runner/src/watch.rs",
        "`--watch` sleeps in poll(2) on the kernel between passes",
    ),
    (
        "crates/runner/src/long_lane.rs",
        "the patience while another connection holds state.db busy",
    ),
    (
        "crates/state/src/migrations.rs",
        "SQLite's time, only for a writer that records none (a hand edit)",
    ),
];

/// Nothing a simulation drives reads the system's clock: the store, the runner, the handlers,
/// the provider and the simulator take their time from the `Clock` they are given, so one
/// process can replay a history from a seed (`a_seed_replays_the_runner_store_and_simulated_system_to_the_same_bytes`,
/// runner). Tests (a file's `#[cfg(test)] mod`) may, and so may the files of [`REAL_TIME`].
#[test]
fn nothing_a_simulation_drives_reads_the_system_clock() {
    let root = workspace();
    let mut files = Vec::new();
    for dir in CLOCKED {
        rust_files(&root.join(dir), &mut files);
    }
    let mut reads = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&root).unwrap().display().to_string();
        if REAL_TIME.iter().any(|(allowed, _)| *allowed == rel) {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let code = line.trim_start();
            // The tests at the end of a file may read the time they measure.
            if code == "#[cfg(test)]"
                && lines
                    .get(i + 1)
                    .is_some_and(|next| next.trim_start().starts_with("mod "))
            {
                break;
            }
            if code.starts_with("//") {
                continue;
            }
            for needle in ["SystemTime::now", "Instant::now", "unixepoch(", "now_utc("] {
                if code.contains(needle) {
                    reads.push(format!("{rel}:{}: {needle}", i + 1));
                }
            }
        }
    }
    assert!(
        files.len() > 50,
        "only {} files scanned: the crates moved",
        files.len()
    );
    for (allowed, _) in REAL_TIME {
        assert!(
            root.join(allowed).is_file(),
            "{allowed} is gone: update REAL_TIME"
        );
    }
    assert!(
        reads.is_empty(),
        "the system's time read where the caller's clock must be: {reads:#?} (only these \
         files may, each for its reason: {REAL_TIME:#?})"
    );
}

/// Every crash point is placed in the code, and every call names a point of its own module:
/// each point a family module declares (`crash::points!`, listed by
/// `ops::CRASH_POINTS_BY_MODULE`) is named by its constant at a call `crash::point(...)` in
/// that module's own files (`NAME`, `super::NAME` or `crate::<module>::NAME`), each of the
/// runner's at a call `crash::point(crash::runner::NAME)` outside `crates/crash`; a call in a
/// module's files that names anything else fails. The crash matrix walks `ops::crash_points`
/// and proves each one is reached (`crash_matrix_converges_at_every_point`).
#[test]
fn every_crash_point_has_a_call_site_in_the_code() {
    let root = workspace();
    let ops_src = root.join("crates/ops/src");
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    let modules = ops::CRASH_POINTS_BY_MODULE;
    // The family module a file of `crates/ops/src` belongs to, if any.
    let module_of = |file: &Path| -> Option<&'static str> {
        let rel = file.strip_prefix(&ops_src).ok()?;
        let first = rel.components().next()?.as_os_str().to_str()?;
        let name = first.strip_suffix(".rs").unwrap_or(first);
        modules.iter().map(|(m, _)| *m).find(|m| *m == name)
    };
    let mut named: BTreeSet<(&str, String)> = BTreeSet::new();
    let mut strays = Vec::new();
    let mut calls = 0;
    for file in files
        .iter()
        .filter(|f| !f.starts_with(root.join("crates/crash")))
    {
        let text = std::fs::read_to_string(file).unwrap();
        for line in text
            .lines()
            .map(str::trim_start)
            .filter(|l| !l.starts_with("//"))
        {
            for call in line.split("crash::point(").skip(1) {
                let path: String = call
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                if path.is_empty() {
                    // Not a call: this test's own text.
                    continue;
                }
                calls += 1;
                let resolved = if let Some(name) = path.strip_prefix("crash::runner::") {
                    Some(("runner", name))
                } else {
                    module_of(file).and_then(|module| {
                        let own = format!("crate::{module}::");
                        let name = path
                            .strip_prefix(&own)
                            .or_else(|| path.strip_prefix("super::"))
                            .unwrap_or(&path);
                        (!name.contains("::")).then_some((module, name))
                    })
                };
                match resolved {
                    Some((module, name)) => {
                        named.insert((module, name.to_owned()));
                    }
                    None => strays.push(format!("{}: {path}", file.display())),
                }
            }
        }
    }
    assert!(
        calls > 10,
        "only {calls} crash point calls found: the scan no longer sees the call sites"
    );
    let declared: BTreeSet<(&str, String)> = modules
        .iter()
        .flat_map(|(module, points)| points.iter().map(|(c, _)| (*module, (*c).to_owned())))
        .collect();
    strays.extend(
        named
            .difference(&declared)
            .map(|(module, name)| format!("{module}: {name} is no point of the module")),
    );
    assert!(
        strays.is_empty(),
        "calls naming no point of their module: {strays:?}"
    );
    let unplaced: Vec<_> = declared.difference(&named).collect();
    assert!(
        unplaced.is_empty(),
        "crash points without a call site in their module: {unplaced:?}"
    );
}

/// `docs/fleet.md`'s reference is what the protocol's declarations generate
/// (`layerone fleet reference`): a subject, bucket or message changed in code and not in the
/// document fails here.
#[test]
fn the_fleet_document_holds_the_reference_the_protocol_generates() {
    let doc = std::fs::read_to_string(workspace().join("docs/fleet.md")).unwrap();
    let marker = "<!-- generated by `layerone fleet reference`: do not edit below -->\n";
    let (_, generated) = doc
        .split_once(marker)
        .expect("docs/fleet.md has the generated reference's marker");
    assert!(
        generated == fleet::protocol::reference(),
        "docs/fleet.md is out of date: run `layerone fleet reference` and paste it below the marker"
    );
}

/// Every document named in a comment (a Markdown file, by its name or its path) is one in the
/// repository: a comment citing a file that is not here sends its reader nowhere. Read: the comments of every
/// Rust file under `crates/`, and the Markdown of the root and `docs/`. A bare name is found
/// beside the citing file, at the root or in `docs/`; a path from the root or the citing file.
#[test]
fn every_document_a_comment_cites_is_in_the_repository() {
    let root = workspace();
    let mut sources = Vec::new();
    rust_files(&root.join("crates"), &mut sources);
    let mut cited = 0;
    let mut missing = Vec::new();
    let mut check = |file: &Path, line: usize, text: &str| {
        for (start, _) in text.match_indices(".md") {
            let end = start + 3;
            if text[end..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                continue;
            }
            let begin = text[..start]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || "_-./".contains(c)))
                .map_or(0, |i| i + 1);
            let name = &text[begin..end];
            let before = &text[..begin];
            // A web address names a page elsewhere, not a file of this repository.
            // An absolute path names a file on a node (`/etc/layerone/identity.md`).
            if name.len() <= 3 || name.starts_with('/') || before.ends_with("://") {
                continue;
            }
            if before.contains("http") && !before.contains(' ') {
                continue;
            }
            cited += 1;
            let name = name.trim_start_matches("./");
            let beside = file.parent().unwrap().join(name);
            let found = beside.is_file()
                || root.join(name).is_file()
                || root.join("docs").join(name).is_file();
            if !found {
                missing.push(format!(
                    "{}:{}: {name}",
                    file.strip_prefix(&root).unwrap().display(),
                    line + 1
                ));
            }
        }
    };
    for file in &sources {
        let text = std::fs::read_to_string(file).unwrap();
        for (i, line) in text.lines().enumerate() {
            if let Some(at) = line.find("//") {
                check(file, i, &line[at..]);
            }
        }
    }
    let mut documents: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .chain(std::fs::read_dir(root.join("docs")).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    documents.sort();
    for file in &documents {
        let text = std::fs::read_to_string(file).unwrap();
        for (i, line) in text.lines().enumerate() {
            check(file, i, line);
        }
    }
    assert!(cited > 50, "only {cited} citations found: the scan broke");
    assert!(
        missing.is_empty(),
        "comments cite documents that are not in the repository:\n{}",
        missing.join("\n")
    );
}

/// `text` with its comments and the insides of its string and character literals replaced by
/// spaces (line breaks kept, so offsets and line numbers stay those of the file): what is left
/// is code, whose braces match and whose words are names.
fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |ch: char| if ch == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < c.len() {
        let ident_before = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            loop {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(c[i]));
                    i += 1;
                }
            }
        } else if !ident_before && (c[i] == 'r' || (c[i] == 'b' && c.get(i + 1) == Some(&'r'))) && {
            let start = if c[i] == 'b' { i + 2 } else { i + 1 };
            let hashes = c[start..].iter().take_while(|&&h| h == '#').count();
            c.get(start + hashes) == Some(&'"')
        } {
            // A raw string: r"..." or r#"..."#, its end the quote and as many hashes.
            let start = if c[i] == 'b' { i + 2 } else { i + 1 };
            let hashes = c[start..].iter().take_while(|&&h| h == '#').count();
            out.extend(&c[i..start + hashes + 1]);
            i = start + hashes + 1;
            while !(c[i] == '"'
                && c[i + 1..]
                    .iter()
                    .take(hashes)
                    .filter(|&&h| h == '#')
                    .count()
                    == hashes)
            {
                out.push(blank(c[i]));
                i += 1;
            }
            out.extend(&c[i..i + hashes + 1]);
            i += hashes + 1;
        } else if c[i] == '"' {
            out.push('"');
            i += 1;
            while c[i] != '"' {
                let n = if c[i] == '\\' { 2 } else { 1 };
                for &ch in &c[i..i + n] {
                    out.push(blank(ch));
                }
                i += n;
            }
            out.push('"');
            i += 1;
        } else if c[i] == '\'' && (c.get(i + 1) == Some(&'\\') || c.get(i + 2) == Some(&'\'')) {
            // A character literal ('{', '\''), not a lifetime or a label.
            out.push('\'');
            i += 1;
            if c[i] == '\\' {
                out.push(' ');
                i += 1;
            }
            while c[i] != '\'' {
                out.push(' ');
                i += 1;
            }
            out.push('\'');
            i += 1;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// Whether `word` stands in `code` at `at` as a whole name (a token that begins or ends with
/// punctuation, such as `.exists()`, only needs its other end whole).
fn word_at(code: &str, at: usize, word: &str) -> bool {
    let name = |c: char| c.is_alphanumeric() || c == '_';
    code[at..].starts_with(word)
        && (!word.starts_with(name) || !code[..at].ends_with(name))
        && (!word.ends_with(name) || !code[at + word.len()..].starts_with(name))
}

/// Whether `code` holds any of `words` as a whole name.
fn reads_any(code: &str, words: &[String]) -> bool {
    words.iter().any(|w| {
        code.match_indices(w.as_str())
            .any(|(at, _)| word_at(code, at, w))
    })
}

/// The offset of the `}` that closes the `{` at `open`, or the end of `code`.
fn closing(code: &str, open: usize) -> usize {
    let mut depth = 0;
    for (i, c) in code[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return open + i;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// The offset of the first of `stops` from `from` outside any bracket opened after `from`, or
/// where a bracket opened before it closes.
fn at_depth_zero(code: &str, from: usize, stops: &[char]) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in code[from..].char_indices() {
        if depth == 0 && stops.contains(&c) {
            return Some(from + i);
        }
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => return None,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// The `#[test]` functions of a file's code: each one's name, line and body.
fn test_bodies(code: &str) -> Vec<(String, usize, &str)> {
    let mut tests = Vec::new();
    for (at, attribute) in code
        .match_indices("#[test]")
        .chain(code.match_indices("::test]"))
    {
        let Some(fn_at) = code[at..].find("fn ").map(|i| at + i) else {
            continue;
        };
        let name: String = code[fn_at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let open = fn_at + code[fn_at..].find('{').unwrap_or(0);
        let line = code[..fn_at].matches('\n').count() + 1;
        assert!(
            !name.is_empty(),
            "no function after {attribute} at line {line}"
        );
        tests.push((
            name,
            line,
            &code[open..=closing(code, open).min(code.len() - 1)],
        ));
    }
    tests
}

/// What a test may not branch on before it asserts anything, because CI decides it: the
/// effective uid (the owner of a file the test made is one), an environment variable, a
/// program's presence (a path that exists, a program that starts).
const CI_DECIDES: &[&str] = &[
    "geteuid",
    "getuid",
    "is_root",
    ".uid()",
    "env::var",
    "env::vars",
    "var_os",
    "option_env!",
    "which",
    "Command::new",
    ".exists()",
    ".try_exists(",
    ".is_file()",
];

/// What counts as a test's first assertion: a claim about what it tests.
const ASSERTIONS: &[&str] = &[
    "assert!",
    "assert_eq!",
    "assert_ne!",
    "assert_matches!",
    "debug_assert!",
    "debug_assert_eq!",
    "debug_assert_ne!",
    "panic!",
    "unreachable!",
    ".unwrap_err(",
    ".expect_err(",
];

/// The early returns of `body` under a condition in `reads` taken before the body's first
/// assertion: each as the text of its condition. Plain `let`s whose value reads one of `reads`
/// add their name to it, so `let me = geteuid(); if me == 0 { return; }` is found too.
fn early_returns(body: &str, reads: &[String]) -> Vec<String> {
    let first_assertion = ASSERTIONS
        .iter()
        .filter_map(|a| {
            body.match_indices(a)
                .map(|(at, _)| at)
                .find(|&at| word_at(body, at, a))
        })
        .min()
        .unwrap_or(body.len());
    let mut reads = reads.to_vec();
    let mut found = Vec::new();
    let mut keywords: Vec<(usize, &str)> = ["if", "match", "let"]
        .iter()
        .flat_map(|k| body.match_indices(k))
        .filter(|&(at, k)| at < first_assertion && word_at(body, at, k))
        .collect();
    keywords.sort();
    for (at, keyword) in keywords {
        let (condition, branches) = if keyword == "let" {
            let before = body[..at].trim_end();
            if before.ends_with("if") || before.ends_with("while") || before.ends_with("&&") {
                continue;
            }
            let Some(end) = at_depth_zero(body, at, &[';']) else {
                continue;
            };
            let statement = &body[at..end];
            let open = at_depth_zero(statement, 0, &['{']);
            match open.and_then(|open| statement[..open].trim_end().strip_suffix("else")) {
                // `let PATTERN = VALUE else { ... };`: its first block is its `else`.
                Some(condition) => (condition, &statement[condition.len()..]),
                None => {
                    // `let name = value;`: the name reads what the value reads.
                    let Some((pattern, value)) = statement[3..].split_once('=') else {
                        continue;
                    };
                    let pattern = pattern.trim().trim_start_matches("mut ");
                    let name = pattern.split(':').next().unwrap_or("").trim();
                    if !name.is_empty()
                        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
                        && reads_any(value, &reads)
                    {
                        reads.push(name.to_owned());
                    }
                    continue;
                }
            }
        } else {
            let Some(open) = at_depth_zero(body, at, &['{']) else {
                continue;
            };
            let mut end = closing(body, open);
            // An `if`'s `else if` and `else` branches are its branches too.
            while keyword == "if"
                && end < body.len()
                && body[end + 1..].trim_start().starts_with("else")
            {
                let Some(next) = body[end + 1..].find('{') else {
                    break;
                };
                end = closing(body, end + 1 + next);
            }
            (&body[at..open], &body[open..end.min(body.len())])
        };
        if reads_any(condition, &reads) && reads_any(branches, &["return".to_owned()]) {
            found.push(condition.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    found
}

/// No test returns before its first assertion under a condition CI meets: CI runs every test
/// as root with every package `scripts/test` installs, so a test that returns when it is root,
/// when it is not, when a variable is unset or when a program is missing passes there having
/// checked nothing. Such a test fails loudly instead (`require_root()`), does its unprivileged
/// part as another uid, or is not a test (a child process's entry point is an ignored test
/// that fails when run alone).
///
/// A textual scan of every `#[test]` function under `crates/` (`tests/` and `#[cfg(test)]`
/// modules), with comments and literals blanked:
/// - its first assertion is the first of [`ASSERTIONS`]: an `assert!`-family macro, `panic!`,
///   `unreachable!`, `.unwrap_err()` or `.expect_err()`. `.unwrap()` and `.expect()` are not:
///   they say a step ran, and a test that stops after them has checked only its setup;
/// - before it, no `if` (with its `else` branches), `let ... else` or `match` whose condition
///   reads one of [`CI_DECIDES`], a name a plain `let` bound to such a read earlier in the
///   body, or a function of the same crate whose body reads one, may hold a `return` (one in
///   a closure there counts too: the scan does not tell them apart).
#[test]
fn no_test_returns_before_asserting_under_a_condition_ci_decides() {
    let root = workspace();
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    let direct: Vec<String> = CI_DECIDES.iter().map(|s| s.to_string()).collect();
    let mut scanned = 0;
    let mut guarded = Vec::new();
    for krate in &crates {
        let mut files = Vec::new();
        for dir in ["src", "tests"] {
            if krate.join(dir).is_dir() {
                rust_files(&krate.join(dir), &mut files);
            }
        }
        files.sort();
        let code: Vec<(PathBuf, String)> = files
            .into_iter()
            .map(|f| {
                let text = std::fs::read_to_string(&f).unwrap();
                (f, code_only(&text))
            })
            .collect();
        // The crate's functions that read what CI decides: calling one reads it too.
        let mut reads = direct.clone();
        for (_, code) in &code {
            for (at, _) in code.match_indices("fn ") {
                if !word_at(code, at, "fn") {
                    continue;
                }
                let name: String = code[at + 3..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let Some(open) = at_depth_zero(code, at, &['{', ';']) else {
                    continue;
                };
                if !name.is_empty()
                    && code[open..].starts_with('{')
                    && reads_any(
                        &code[open..=closing(code, open).min(code.len() - 1)],
                        &direct,
                    )
                {
                    reads.push(format!("{name}("));
                }
            }
        }
        reads.sort();
        reads.dedup();
        for (file, code) in &code {
            for (name, line, body) in test_bodies(code) {
                scanned += 1;
                for condition in early_returns(body, &reads) {
                    guarded.push(format!(
                        "{}:{line}: {name} returns under `{condition}`",
                        file.strip_prefix(&root).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(
        scanned > 500,
        "only {scanned} tests found: the scan no longer reads the tests"
    );
    assert!(
        guarded.is_empty(),
        "tests that return before their first assertion under a condition CI decides (the \
         uid, a variable, a program's presence), so pass where CI runs having checked \
         nothing:\n{}",
        guarded.join("\n")
    );
}
