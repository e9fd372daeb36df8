//! The kernel keeps the API from writing root's state (docs/design.md sections 2, 6 and 11): the
//! real `layerone-api` binary runs as uid 65534 against root-owned state.db, and a process with
//! its uid can neither write state.db, nor create a file beside it, nor make a job appear
//! succeeded. And a runner killed mid-commit leaves a hot journal that the API answers with a
//! clean 503 until root's next pass rolls it back.
//!
//! These tests need root (to own state.db and to drop to 65534), as CI has. What runs as
//! 65534 is a probe: an ignored test of this binary (`*_probe_child`) that only its parent
//! test runs, and that fails when run alone.

use crate::common;

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
    let child = Command::new(&*API)
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
#[ignore = "a probe, not a test: api_cannot_write_state_db runs it as uid 65534"]
fn privilege_probe_child() {
    let state_dir = std::env::var(PROBE_ENV).expect(
        "the probe runs as a child of api_cannot_write_state_db, which names the state directory",
    );
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
    let probe = probe_as_api(
        "privilege_probe_child",
        PROBE_ENV,
        &node.layout.state_dir().display().to_string(),
    );
    assert!(
        probe.status.success(),
        "a process with the API's uid changed root's state: {}",
        String::from_utf8_lossy(&probe.stderr)
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
    let crashed = node.run(Some(crash::runner::INGEST_BEFORE_COMMIT));
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

// ---------------------------------------------------------------------------------------
// Everything else the API's uid can reach, and the hostile files it can leave for root.

const KEYS_PROBE_ENV: &str = "LAYERONE_KEYS_PROBE";
const FORGE_PROBE_ENV: &str = "LAYERONE_FORGE_PROBE";

/// Runs this test binary's `name` probe as uid 65534 with `env` set to `value`, and checks
/// that it ran: a probe is an ignored test (run alone, it has nothing to probe), so this runs
/// the binary's ignored tests with exactly that name (its path in the binary: this module's).
fn probe_as_api(name: &str, env: &str, value: &str) -> std::process::Output {
    let module = module_path!()
        .split_once("::")
        .map_or("", |(_, module)| module);
    let test = format!("{module}::{name}");
    #[allow(clippy::disallowed_methods)] // The probe is this test binary, as the API's uid.
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &test, "--ignored", "--nocapture"])
        .env(env, value)
        .uid(NOBODY)
        .gid(NOBODY)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("running 1 test"),
        "the probe {name} did not run: {stdout}"
    );
    output
}

/// Runs inside a child process as uid 65534 (see
/// `api_cannot_write_blobs_out_or_read_root_only_keys`): tries to read, write or create each
/// listed path and exits non-zero if any worked.
#[test]
#[ignore = "a probe, not a test: api_cannot_write_blobs_out_or_read_root_only_keys runs it as uid 65534"]
fn keys_probe_child() {
    let spec = std::env::var(KEYS_PROBE_ENV).expect(
        "the probe runs as a child of api_cannot_write_blobs_out_or_read_root_only_keys, which lists the paths",
    );
    let spec: serde_json::Value = serde_json::from_str(&spec).unwrap();
    let list = |k: &str| -> Vec<std::path::PathBuf> {
        spec[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().into())
            .collect()
    };
    let mut wins = Vec::new();
    for path in list("unreadable") {
        if std::fs::read(&path).is_ok() {
            wins.push(format!("read {}", path.display()));
        }
    }
    for path in list("unwritable") {
        if std::fs::OpenOptions::new().write(true).open(&path).is_ok() {
            wins.push(format!("opened {} for writing", path.display()));
        }
        let moved = path.with_extension("moved");
        if std::fs::rename(&path, &moved).is_ok() {
            wins.push(format!("renamed {}", path.display()));
        }
        if std::fs::remove_file(&path).is_ok() {
            wins.push(format!("removed {}", path.display()));
        }
    }
    for dir in list("no_create_in") {
        for name in ["forged", "state.db-journal", "state.db-wal", "blob"] {
            if std::fs::File::create(dir.join(name)).is_ok() {
                wins.push(format!("created {name} in {}", dir.display()));
            }
            if std::os::unix::fs::symlink("/etc/shadow", dir.join(format!("{name}-link"))).is_ok() {
                wins.push(format!("made a symlink in {}", dir.display()));
            }
        }
    }
    assert!(wins.is_empty(), "uid 65534 could: {wins:#?}");
}

#[test]
fn api_cannot_write_blobs_out_or_read_root_only_keys() {
    require_root();
    let node = Node::new();
    let api = start_api(&node);
    // A job, so root's audit log exists.
    api.client.submit(&ensure_account(1, 10, "shop1")).unwrap();
    node.pass();
    let audit = node.layout.root().join("log");
    let audit_files: Vec<String> = std::fs::read_dir(&audit)
        .map(|d| {
            d.flatten()
                .map(|e| e.path().display().to_string())
                .collect()
        })
        .unwrap_or_default();
    assert!(!audit_files.is_empty(), "root's pass wrote no audit log");
    // Root's own key material, as root writes it: a 0600 private key.
    let root_tls = node.dir.path().join("root-tls");
    std::fs::create_dir(&root_tls).unwrap();
    let (root_cert, root_key) = api::tls::write_key_pair(&root_tls, "node.example").unwrap();
    // Something root published for the API to read in blobs/out.
    let blob = node.layout.blobs_out().join("published");
    std::fs::write(&blob, b"root's output").unwrap();
    std::fs::set_permissions(&blob, std::fs::Permissions::from_mode(0o640)).unwrap();
    chown(&blob, Some(0), Some(NOBODY)).unwrap();
    let key_hash = node.dir.path().join("api-key.sha256");
    let unreadable: Vec<String> = [
        root_key,
        node.path("/etc/shadow"),
        node.path("/etc/gshadow"),
    ]
    .iter()
    .map(|p| p.display().to_string())
    .chain(audit_files.iter().cloned())
    .collect();
    let spec = serde_json::json!({
        "unreadable": unreadable,
        "unwritable": [
            blob.display().to_string(),
            key_hash.display().to_string(),
            root_cert.display().to_string(),
            node.layout.state_db().display().to_string(),
            node.path("/etc/passwd").display().to_string(),
        ],
        "no_create_in": [
            node.layout.blobs_out().display().to_string(),
            node.layout.state_dir().display().to_string(),
            root_tls.display().to_string(),
            audit.display().to_string(),
            node.layout.root().display().to_string(),
        ],
    });
    let probe = probe_as_api("keys_probe_child", KEYS_PROBE_ENV, &spec.to_string());
    assert!(
        probe.status.success(),
        "the API's uid reached root-only files: {}",
        String::from_utf8_lossy(&probe.stderr)
    );
    assert_eq!(std::fs::read(&blob).unwrap(), b"root's output");
    // The same probe can read what it is meant to: the probe is not failing for another reason.
    let allowed = serde_json::json!({
        "unreadable": [], "unwritable": [], "no_create_in": [],
    });
    assert!(
        probe_as_api("keys_probe_child", KEYS_PROBE_ENV, &allowed.to_string())
            .status
            .success()
    );
    let readable = probe_as_api(
        "keys_probe_child",
        KEYS_PROBE_ENV,
        &serde_json::json!({"unreadable": [blob, node.layout.state_db()], "unwritable": [], "no_create_in": []}).to_string(),
    );
    assert!(
        !readable.status.success(),
        "the probe could not read what the API's group may read: it proves nothing"
    );
    drop(api);
}

/// Runs inside a child process as uid 65534 (see
/// `api_cannot_make_a_failed_job_appear_succeeded_by_any_means`): every way the API's uid has
/// to make a job look succeeded. Attempts that must fail (anything in the state directory) are
/// reported; the crafted files it can place (its inbox, blobs/in) are left for root to meet.
#[test]
#[ignore = "a probe, not a test: api_cannot_make_a_failed_job_appear_succeeded_by_any_means runs it as uid 65534"]
fn forge_probe_child() {
    let data = std::env::var(FORGE_PROBE_ENV).expect(
        "the probe runs as a child of api_cannot_make_a_failed_job_appear_succeeded_by_any_means, which names the data directory",
    );
    let data = Path::new(&data);
    let state = data.join("state");
    let inbox = data.join("inbox");
    let mut wins = Vec::new();
    // A copy of state.db with every job marked succeeded, in WAL mode (leaving a -wal file)
    // and as a rollback journal, where the API can write.
    let copy = inbox.join("state.db");
    std::fs::copy(state.join("state.db"), &copy).unwrap();
    {
        let conn = rusqlite::Connection::open(&copy).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;
             UPDATE jobs SET state = 'succeeded', error = NULL, result = '{\"state\":\"present\"}';",
        )
        .unwrap();
        std::mem::forget(conn); // leave the -wal behind, as a crash would
    }
    let wal = inbox.join("state.db-wal");
    assert!(wal.exists(), "the forged WAL was not written");
    std::fs::copy(&wal, inbox.join("state.db-journal")).unwrap();
    std::fs::copy(&wal, data.join("blobs/in/state.db-wal")).unwrap();
    // Into the state directory: each must fail.
    for name in ["state.db-wal", "state.db-journal", "state.db-shm"] {
        if std::fs::copy(&wal, state.join(name)).is_ok() {
            wins.push(format!("placed {name} beside state.db"));
        }
        if std::os::unix::fs::symlink(&wal, state.join(name)).is_ok() {
            wins.push(format!("linked {name} beside state.db"));
        }
    }
    if std::fs::rename(&copy, state.join("state.db")).is_ok() {
        wins.push("replaced state.db with the forged copy".into());
    }
    if std::fs::hard_link(state.join("state.db"), inbox.join("hard")).is_ok() {
        wins.push("hard-linked state.db into its inbox".into());
    }
    if let Ok(conn) = rusqlite::Connection::open(state.join("state.db"))
        && conn
            .execute("UPDATE jobs SET state = 'succeeded'", [])
            .is_ok()
    {
        wins.push("updated state.db".into());
    }
    // Crafted inbox rows claiming a state and a result (an inbox with extra columns for them
    // is refused whole: see `a_hostile_inbox_schema_or_link_never_hangs_root_nor_changes_anything`).
    let conn = rusqlite::Connection::open(inbox.join("inbox.db")).unwrap();
    let claims = [
        (
            "00000000000000000000000000000101",
            r#"{"request_id":"00000000000000000000000000000101","operation":"ensure_ssh_key","state":"succeeded","result":{"state":"present"},"resource":{"id":"00000000000000000000000000000201","account":"00000000000000000000000000000011","key":"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGn4w0x3qmW1b4PQ1b1pDpDkHc3uqm3n8dHTV1G4ZvDN x"}}"#,
        ),
        (
            "00000000000000000000000000000102",
            r#"{"request_id":"00000000000000000000000000000102","operation":"ensure_ssh_key","resource":{"id":"00000000000000000000000000000202","account":"00000000000000000000000000000011","key":"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGn4w0x3qmW1b4PQ1b1pDpDkHc3uqm3n8dHTV1G4ZvDN x","state":"succeeded"}}"#,
        ),
    ];
    for (rid, body) in claims {
        conn.execute(
            "INSERT INTO requests(request_id, operation, body, body_sha256, received_at)
             VALUES (?1, 'ensure_ssh_key', ?2, 'x', 0)",
            rusqlite::params![rid, body],
        )
        .unwrap();
    }
    assert!(wins.is_empty(), "uid 65534 could: {wins:#?}");
}

#[test]
fn api_cannot_make_a_failed_job_appear_succeeded_by_any_means() {
    require_root();
    let mut node = Node::new();
    let api = start_api(&node);
    // A job that fails for a real reason: its account does not exist.
    let failing = api.client.submit(&ensure_key(1, 20, 10)).unwrap();
    assert_eq!(failing.state, JobState::Received);
    node.pass();
    assert_eq!(api.client.job(&id(1)).unwrap().state, JobState::Failed);
    let probe = probe_as_api(
        "forge_probe_child",
        FORGE_PROBE_ENV,
        &node.layout.root().display().to_string(),
    );
    assert!(
        probe.status.success(),
        "a forgery attempt reached state.db: {}",
        String::from_utf8_lossy(&probe.stderr)
    );
    // Neither the API nor root is moved by the forged files.
    assert_eq!(
        api.client.job(&id(1)).unwrap().state,
        JobState::Failed,
        "the API reads a forged state"
    );
    node.pass();
    let state = node.state();
    assert_eq!(state.integrity_check().unwrap(), "ok");
    assert_eq!(node.job_state(&id(1)), Some(JobState::Failed));
    for rid in [id(0x101), id(0x102)] {
        let job = state
            .job(&rid)
            .unwrap()
            .expect("the crafted row became a job");
        assert_eq!(job.state, JobState::Failed, "{rid}: {job:?}");
        assert_eq!(job.error.unwrap().code, "unknown_field", "{rid}");
        assert_eq!(api.client.job(&rid).unwrap().state, JobState::Failed);
    }
    assert!(state.all_resources().unwrap().is_empty());
    assert!(
        !node.layout.state_dir().join("state.db-wal").exists(),
        "a WAL beside state.db"
    );
    node.inbox = None;
}

/// The inbox as a hostile API can leave it: whatever is at `inbox/inbox.db`.
fn hostile_inboxes() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "requests is an endless recursive view",
            "CREATE VIEW requests AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n)
             SELECT x AS seq, printf('%032x', x) AS request_id, 'ensure_account' AS operation,
                    '{}' AS body, 'x' AS body_sha256, 0 AS received_at FROM n;",
        ),
        (
            "requests is a view claiming succeeded jobs",
            "CREATE TABLE t(a); CREATE VIEW requests AS SELECT 1 AS seq,
             '00000000000000000000000000000301' AS request_id, 'ensure_account' AS operation,
             '{\"request_id\":\"00000000000000000000000000000301\",\"operation\":\"ensure_account\",\"state\":\"succeeded\",\"resource\":{\"id\":\"00000000000000000000000000000401\",\"username\":\"evil\"}}' AS body,
             'x' AS body_sha256, 0 AS received_at, 'succeeded' AS state;",
        ),
        (
            "requests with a trigger and a sort over a huge unindexed column",
            "CREATE TABLE requests(seq TEXT, request_id BLOB, operation INTEGER, body INTEGER, body_sha256, received_at TEXT);
             WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5000)
             INSERT INTO requests SELECT printf('%d', x), randomblob(40), x, x, NULL, 'never' FROM n;
             CREATE TRIGGER t AFTER INSERT ON requests BEGIN DELETE FROM requests; END;",
        ),
        (
            "requests with extra columns claiming a state and a result",
            "CREATE TABLE requests(seq INTEGER PRIMARY KEY, request_id TEXT NOT NULL UNIQUE,
             operation TEXT NOT NULL, body BLOB NOT NULL, body_sha256 TEXT NOT NULL,
             received_at INTEGER NOT NULL, state TEXT, result TEXT);
             INSERT INTO requests VALUES (1, '00000000000000000000000000000303', 'ensure_account',
             '{\"request_id\":\"00000000000000000000000000000303\",\"operation\":\"ensure_account\",\"resource\":{\"id\":\"00000000000000000000000000000403\",\"username\":\"evil\"}}',
             'x', 0, 'succeeded', '{\"state\":\"present\"}');",
        ),
    ]
}

/// Runs one runner pass with a bound: a pass that does not end is killed and reported.
fn bounded_pass(node: &Node) -> Option<std::process::ExitStatus> {
    #[allow(clippy::disallowed_methods)] // Tests start the real runner binary.
    let mut child = Command::new(&*RUNNER)
        .arg("--once")
        .arg("--data-dir")
        .arg(node.layout.root())
        .arg("--root")
        .arg(node.provider.root())
        .args(["--node-id", node.node_id.as_str(), "--log", "error"])
        .spawn()
        .expect("the runner starts");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_hostile_inbox_schema_or_link_never_hangs_root_nor_changes_anything() {
    require_root();
    let node = Node::new();
    let api = ApiIdentity {
        uid: NOBODY,
        gid: NOBODY,
    };
    node.layout.prepare_api_side(Some(api)).unwrap();
    node.layout.prepare_root_side(Some(api)).unwrap();
    node.pass();
    let passwd = std::fs::read(node.path("/etc/passwd")).unwrap();
    let inbox = node.layout.inbox_db();
    let replace = |make: &dyn Fn(&Path)| {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let p = inbox.with_file_name(format!("inbox.db{suffix}"));
            let _ = std::fs::remove_file(&p);
        }
        make(&inbox);
        let _ = std::os::unix::fs::lchown(&inbox, Some(NOBODY), Some(NOBODY));
    };
    type Make = Box<dyn Fn(&Path)>;
    let mut shapes: Vec<(String, Make)> = hostile_inboxes()
        .into_iter()
        .map(|(name, sql)| {
            let make: Make = Box::new(move |p: &Path| {
                let conn = rusqlite::Connection::open(p).unwrap();
                conn.execute_batch(sql).unwrap();
            });
            (name.to_owned(), make)
        })
        .collect();
    let state_db = node.layout.state_db();
    let shadow = node.path("/etc/shadow");
    shapes.push((
        "a symlink to state.db".into(),
        Box::new(move |p: &Path| std::os::unix::fs::symlink(&state_db, p).unwrap()),
    ));
    shapes.push((
        "a symlink to /etc/shadow".into(),
        Box::new(move |p: &Path| std::os::unix::fs::symlink(&shadow, p).unwrap()),
    ));
    shapes.push((
        "a FIFO".into(),
        Box::new(|p: &Path| {
            rustix::fs::mknodat(
                rustix::fs::CWD,
                p,
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o600),
                0,
            )
            .unwrap()
        }),
    ));
    shapes.push((
        "garbage".into(),
        Box::new(|p: &Path| std::fs::write(p, b"SQLite format 3\0garbage").unwrap()),
    ));
    for (name, make) in &shapes {
        replace(make.as_ref());
        let status = bounded_pass(&node);
        assert!(
            status.is_some(),
            "{name}: root's pass did not end within 60 s"
        );
        let state = node.state();
        assert_eq!(state.integrity_check().unwrap(), "ok", "{name}");
        assert!(state.all_resources().unwrap().is_empty(), "{name}");
        for (st, n) in state.job_counts().unwrap() {
            assert_ne!(st, "succeeded", "{name}: {n} jobs succeeded");
        }
        assert_eq!(
            std::fs::read(node.path("/etc/passwd")).unwrap(),
            passwd,
            "{name}"
        );
        assert_eq!(node.audit_count(), 0, "{name}: a program ran");
    }
    // A good inbox again, and root serves it.
    replace(&|_: &Path| {});
    let mut node = node;
    node.inbox = None;
    node.submit(&ensure_account(1, 10, "shop1"));
    let _ = std::os::unix::fs::lchown(&inbox, Some(NOBODY), Some(NOBODY));
    assert!(bounded_pass(&node).is_some_and(|s| s.success()));
    assert_eq!(node.job_state(&id(1)), Some(JobState::Succeeded));
    node.inbox = None;
}

#[test]
/// The packaged API refuses root and has no flag that would let it run as root; the dev
/// node's `layerone-dev-api`, the same command line allowed to run as root, starts and serves.
fn layerone_api_refuses_to_run_as_root() {
    require_root();
    let node = Node::new();
    let tls = node.dir.path().join("tls");
    std::fs::create_dir_all(&tls).unwrap();
    let (cert, key) = api::tls::write_key_pair(&tls, "localhost").unwrap();
    let key_hash = node.dir.path().join("api-key.sha256");
    let api_key = api::generate_api_key();
    std::fs::write(&key_hash, hex::encode(api::key_sha256(&api_key))).unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let command = |binary: &Path| {
        #[allow(clippy::disallowed_methods)] // Tests start the real API binary.
        let mut cmd = Command::new(binary);
        cmd.args(["--data-dir".as_ref(), node.layout.root().as_os_str()])
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .args(["--tls-cert".as_ref(), cert.as_os_str()])
            .args(["--tls-key".as_ref(), key.as_os_str()])
            .args(["--api-key-sha256-file".as_ref(), key_hash.as_os_str()])
            .args(["--node-id", node.node_id.as_str()]);
        cmd
    };
    let refused = command(&API).output().expect("the API binary runs");
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("refusing to run as root"), "{stderr}");
    assert!(
        !node.layout.inbox_db().exists(),
        "the refused API created its inbox"
    );
    // The flag that once let it is gone from the packaged binary.
    let flagged = command(&API)
        .arg("--allow-root")
        .output()
        .expect("the API binary runs");
    assert_eq!(flagged.status.code(), Some(2), "{flagged:?}");
    let stderr = String::from_utf8_lossy(&flagged.stderr);
    assert!(
        stderr.contains("unexpected argument '--allow-root'"),
        "{stderr}"
    );
    assert!(!node.layout.inbox_db().exists());
    // The dev node's API starts and serves as root.
    let child = command(&workspace_binary("layerone-dev-api"))
        .spawn()
        .expect("the dev API binary starts");
    let guard = Api {
        child,
        client: client::NodeClient::new(
            &format!("https://127.0.0.1:{port}"),
            Some(api_key),
            &api::tls::pin_sha256(&std::fs::read_to_string(&cert).unwrap()).unwrap(),
        )
        .unwrap(),
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !matches!(guard.client.health(), Ok((200 | 503, _))) {
        assert!(
            Instant::now() < deadline,
            "the dev API as root did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
