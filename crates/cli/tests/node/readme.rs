//! The README is executed: its walk-through, every command as written (with `cargo run -q
//! --bin layerone --` standing for the built `layerone`), runs against a dev node started
//! from a fresh directory the way a newcomer starts it, and every job it submits succeeds. A
//! README that drifts from the code fails here.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

const LAYERONE: &str = env!("CARGO_BIN_EXE_layerone");

/// The README's walk-through section: its command lines, continuation lines joined.
fn walk_through() -> Vec<String> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("A first walk-through"))
        .expect("the README has a walk-through");
    let mut commands = Vec::new();
    let mut current = String::new();
    for line in section.lines().filter(|l| l.starts_with("    ")) {
        let line = line.trim();
        match line.strip_suffix('\\') {
            Some(head) => {
                current.push_str(head);
                current.push(' ');
            }
            None => {
                current.push_str(line);
                commands.push(std::mem::take(&mut current));
            }
        }
    }
    commands
}

/// A dev node started with the README's command in `dir`, on a free port; killed when
/// dropped.
struct DevNode(Child);

impl Drop for DevNode {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_dev_node(dir: &Path) -> DevNode {
    #[allow(clippy::disallowed_methods)] // The test starts the real binary it documents.
    let child = Command::new(&*common::DEV_NODE)
        .args(["--listen", "127.0.0.1:0"])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut node = DevNode(child);
    let dev_json = dir.join(".layerone-dev/dev.json");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !dev_json.is_file() {
        if let Some(status) = node.0.try_wait().unwrap() {
            let mut err = String::new();
            node.0
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            panic!("layerone-dev exited {status}: {err}");
        }
        assert!(Instant::now() < deadline, "the dev node did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    node
}

/// Runs the README's walk-through, as written, in `dir` against a dev node started there.
fn run_walk_through(dir: &Path) {
    let commands = walk_through();
    assert!(
        commands.len() >= 10,
        "the walk-through has only {} commands",
        commands.len()
    );
    let _node = start_dev_node(dir);
    let script: String = commands
        .iter()
        .map(|c| c.replace("cargo run -q --bin layerone --", LAYERONE))
        .map(|c| format!("{c}\n"))
        .collect();
    #[allow(clippy::disallowed_methods)] // The README's commands are shell commands.
    let out = Command::new("/bin/bash")
        .args(["-euo", "pipefail", "-c", &script])
        .current_dir(dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the walk-through failed: {stderr}\n{stdout}"
    );
    for bad in ["\"state\": \"failed\"", "invalid_", "\"code\":"] {
        assert!(
            !stdout.contains(bad),
            "the walk-through printed {bad}: {stdout}"
        );
    }
    // Each `job submit --wait` printed a succeeded job, and curl's answers are the node's.
    let submitted = commands.iter().filter(|c| c.contains("job submit")).count();
    assert_eq!(
        stdout.matches("\"state\": \"succeeded\"").count(),
        submitted,
        "{stdout}"
    );
    assert!(
        stdout.contains("0123456789abcdef0123456789abcdef"),
        "{stdout}"
    );
    assert!(stdout.contains("shop1:x:"), "{stdout}");
    assert!(stdout.contains("AssignUserID #"), "{stdout}");
    assert!(
        stdout.contains("[layerone-a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1]"),
        "{stdout}"
    );
    // Results name paths as the system does, not the sandbox's.
    assert!(
        stdout.contains("\"document_root\": \"/home/shop1/web/shop.example.com/public_html\""),
        "{stdout}"
    );
}

#[test]
fn the_readme_walk_through_runs_as_written_against_a_dev_node() {
    let dir = tempfile::tempdir().unwrap();
    run_walk_through(dir.path());
}

/// A checkout under `/root` (mode 0700, where most root users clone): the dev node, run as
/// root, does each tenant's work as that tenant, who cannot pass through it, so it keeps the
/// simulated system where tenants reach (`/var/tmp/layerone-dev-*`), linked from
/// `.layerone-dev/sysroot`, and the whole walk-through works from there as written.
#[test]
fn the_readme_walk_through_runs_as_root_from_a_checkout_other_users_cannot_enter() {
    assert!(
        rustix::process::geteuid().is_root(),
        "this test runs as root (CI does): the private checkout concerns a root dev node"
    );
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    // Like a checkout under /root: 0700.
    let private = dir.path().join("root");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    run_walk_through(&private);
    let link = private.join(".layerone-dev/sysroot");
    let outside = std::fs::read_link(&link).expect("the sysroot is linked from the sandbox");
    assert!(outside.starts_with("/var/tmp"), "{}", outside.display());
    for parent in outside.ancestors().skip(1) {
        let mode = std::fs::metadata(parent).unwrap().permissions().mode();
        assert_ne!(mode & 0o001, 0, "{} is closed to tenants", parent.display());
    }
    std::fs::remove_dir_all(outside.parent().unwrap()).unwrap();
}
