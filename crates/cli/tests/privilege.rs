//! The kernel keeps the API from writing root's state (DESIGN.md sections 2, 6 and 11): the
//! real `layerone-api` binary runs as uid 65534 against root-owned state.db, and a process with
//! its uid can neither write state.db, nor create a file beside it, nor make a job appear
//! succeeded. And a runner killed mid-commit leaves a hot journal that the API answers with a
//! clean 503 until root's next pass rolls it back.
//!
//! These tests need root (to own state.db and to drop to 65534), as CI has.

mod common;

use std::net::TcpListener;
use std::os::unix::fs::{PermissionsExt, chown};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::*;
use registry::JobState;
use store::ApiIdentity;

const NOBODY: u32 = 65534;
const API: &str = env!("CARGO_BIN_EXE_layerone-api");
const PROBE_ENV: &str = "LAYERONE_PRIVILEGE_PROBE";

fn require_root() {
    assert!(
        rustix::process::geteuid().is_root(),
        "the privilege tests must run as root (CI does): they own state.db as root and drop to uid 65534"
    );
}

struct Api {
    child: Child,
    client: client::NodeClient,
}

impl Drop for Api {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Lays the node out with the API user's owners, runs a first pass as root, and starts the
/// real API binary as uid 65534.
fn start_api(node: &Node) -> Api {
    let api = ApiIdentity {
        uid: NOBODY,
        gid: NOBODY,
    };
    node.layout.prepare_api_side(Some(api)).unwrap();
    node.layout.prepare_root_side(Some(api)).unwrap();
    node.pass();
    node.layout.prepare_root_side(Some(api)).unwrap();
    let tls = node.dir.path().join("tls");
    std::fs::create_dir_all(&tls).unwrap();
    let (cert, key) = api::tls::write_key_pair(&tls, "localhost").unwrap();
    for path in [&tls, &cert, &key] {
        chown(path, Some(NOBODY), Some(NOBODY)).unwrap();
    }
    let key_hash = node.dir.path().join("api-key.sha256");
    let api_key = api::generate_api_key();
    std::fs::write(&key_hash, hex::encode(api::key_sha256(&api_key))).unwrap();
    std::fs::set_permissions(&key_hash, std::fs::Permissions::from_mode(0o644)).unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    #[allow(clippy::disallowed_methods)] // Tests start the real API binary.
    let child = Command::new(API)
        .args(["--data-dir".as_ref(), node.layout.root().as_os_str()])
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args([
            "--tls-cert".as_ref(),
            cert.as_os_str(),
            "--tls-key".as_ref(),
            key.as_os_str(),
        ])
        .args(["--api-key-sha256-file".as_ref(), key_hash.as_os_str()])
        .args(["--node-id", node.node_id.as_str()])
        .uid(NOBODY)
        .gid(NOBODY)
        .spawn()
        .expect("the API binary starts");
    let pin = api::tls::pin_sha256(&std::fs::read_to_string(&cert).unwrap()).unwrap();
    let client =
        client::NodeClient::new(&format!("https://127.0.0.1:{port}"), Some(api_key), &pin).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    // std drops root's supplementary groups when it sets the uid.
    while !matches!(client.health(), Ok((200, _))) {
        assert!(Instant::now() < deadline, "the API did not become healthy");
        std::thread::sleep(Duration::from_millis(50));
    }
    Api { child, client }
}

/// Runs inside a child process as uid 65534 (see `api_cannot_write_state_db`): tries every
/// way to change root's state and exits non-zero if any worked.
#[test]
fn privilege_probe_child() {
    let Ok(state_dir) = std::env::var(PROBE_ENV) else {
        return;
    };
    let dir = Path::new(&state_dir);
    let db = dir.join("state.db");
    let mut wins = Vec::new();
    if std::fs::OpenOptions::new().write(true).open(&db).is_ok() {
        wins.push("opened state.db for writing");
    }
    if std::fs::File::create(dir.join("forged")).is_ok() {
        wins.push("created a file in the state directory");
    }
    if std::fs::File::create(dir.join("state.db-journal")).is_ok() {
        wins.push("created a journal beside state.db");
    }
    if let Ok(conn) = rusqlite::Connection::open(&db)
        && conn
            .execute("UPDATE jobs SET state = 'succeeded'", [])
            .is_ok()
    {
        wins.push("updated jobs through SQLite");
    }
    assert!(
        wins.is_empty(),
        "uid {} could: {wins:?}",
        rustix::process::getuid().as_raw()
    );
}

#[test]
fn api_cannot_write_state_db() {
    require_root();
    let mut node = Node::new();
    let api = start_api(&node);
    // A job the API received but root has not applied.
    let job = api.client.submit(&ensure_account(1, 10, "shop1")).unwrap();
    assert_eq!(job.state, JobState::Received);
    #[allow(clippy::disallowed_methods)] // The probe is this test binary, as the API's uid.
    let probe = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "privilege_probe_child", "--nocapture"])
        .env(PROBE_ENV, node.layout.state_dir())
        .uid(NOBODY)
        .gid(NOBODY)
        .status()
        .unwrap();
    assert!(
        probe.success(),
        "a process with the API's uid changed root's state"
    );
    assert!(!node.layout.state_dir().join("forged").exists());
    let seen = api.client.job(&id(1)).unwrap();
    assert_ne!(
        seen.state,
        JobState::Succeeded,
        "a job appears succeeded without root"
    );
    assert_eq!(
        node.state().job_counts().unwrap(),
        vec![],
        "state.db changed without root"
    );
    // Root does apply it, and the API reports root's result.
    node.pass();
    assert_eq!(api.client.job(&id(1)).unwrap().state, JobState::Succeeded);
    node.inbox = None;
}

#[test]
fn hot_journal_gives_503_then_recovers() {
    require_root();
    let mut node = Node::new();
    let api = start_api(&node);
    // One ingest transaction larger than SQLite's page cache: the cache spills, so the journal
    // is synced (made hot) and state.db itself is written before COMMIT. Killing the runner
    // there leaves exactly the state a crash in the middle of a commit leaves.
    let aliases: Vec<String> = (0..32)
        .map(|j| format!("alias{j}-{}.example.com", "x".repeat(40)))
        .collect();
    for i in 0..1000u64 {
        let body = serde_json::json!({"request_id": id(1000 + i), "operation": "ensure_web_domain",
            "resource": {"id": id(5000 + i), "account": id(10), "domain": format!("d{i}.example.com"), "aliases": aliases}});
        node.submit(&body);
    }
    let crashed = node.run(Some("ingest.before_commit"));
    assert!(!crashed.success(), "the runner did not crash mid-commit");
    let journal = node.layout.state_dir().join("state.db-journal");
    assert!(journal.exists(), "the crash left no journal");
    let response = api
        .client
        .request("GET", &format!("/v1/jobs/{}", id(1000)), None, &[])
        .unwrap();
    assert_eq!(
        response.status, 503,
        "a hot journal must be a 503, not torn data or a 500"
    );
    assert!(
        response.header("retry-after").is_some(),
        "503 without Retry-After"
    );
    node.pass();
    assert!(
        !journal.exists(),
        "root's next pass did not roll the journal back"
    );
    let job = api.client.job(&id(1000)).unwrap();
    assert!(job.state.is_terminal(), "{job:?}");
    assert_eq!(node.state().integrity_check().unwrap(), "ok");
    node.inbox = None;
}
