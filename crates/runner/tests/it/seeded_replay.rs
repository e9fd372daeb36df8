//! One process drives the runner, the store and the simulated system from a seed, on a clock
//! the test moves (`testkit::ManualClock`), and the same seed replays to the same bytes.
//!
//! This is the seam a deterministic simulation needs (docs/design.md section 7: time comes from the caller, so a simulation can move it): the
//! runner (`RunnerConfig::clock`), the store (`StateDb::open_with_clock` through the runner,
//! `Inbox::open_with_clock` for the admissions) and the simulated provider
//! (`Provider::with_clock`, whose models read it) take their clock from the caller, and their
//! files live under the directories the caller names (the data directory and the system
//! root). A history admits jobs, runs passes, edits the simulated system behind the node's
//! back, uploads blobs nobody uses, and moves the clock past the drift interval, the blob
//! retention and a certificate's validity. Run twice from the same seed under the same root,
//! it leaves state.db, the audit log, the blob directory and the simulated system byte for
//! byte the same, and every time state.db holds is the manual clock's (it starts in 2024, so
//! a time read from the system's clock would stand out).
//!
//! Left out, because they are not yet driven by the simulation: the long lane (a thread beside
//! the passes: backups, restores, usage walks), ACME certificates (the simulated CA and the
//! certificate keys draw on the system's randomness) and `observe_runtime` (the sysroot's
//! `statvfs` is the real disk's).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use clock::Clock;
use inbox::{Inbox, Receipt};
use provider::{Platform, Provider, ProviderConfig};
use registry::JobState;
use runner::RunnerConfig;
use serde_json::{Value, json};
use simulator::SimExecutor;
use store::Layout;
use testkit::ManualClock;

/// The seeds every run replays; a failing one is printed.
const SEEDS: [u64; 3] = [1, 7, 1_000_003];

/// How many seeded steps a history takes between its fixed start and end.
const STEPS: usize = 60;

fn id(n: u64) -> String {
    format!("{n:032x}")
}

/// xorshift64*: the simulation owns its randomness, so a seed replays exactly.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// A node in `root`: its data directory, its simulated system, its inbox, on `clock`.
struct Node {
    config: RunnerConfig,
    /// The API's side: its inbox and the inbox's writer thread, joined when the node goes, so
    /// the next history in the same root never meets it.
    inbox: Option<Inbox>,
    writer: Option<std::thread::JoinHandle<()>>,
    clock: Arc<ManualClock>,
    next_request: u64,
}

impl Drop for Node {
    fn drop(&mut self) {
        self.inbox.take();
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

impl Node {
    fn new(root: &Path, clock: Arc<ManualClock>) -> Node {
        let shared: Arc<dyn Clock> = clock.clone();
        let layout = Layout::new(root.join("data"));
        layout.prepare_api_side(None).unwrap();
        layout.prepare_root_side(None).unwrap();
        // Tenant work in this process whoever runs the test (the real worker is a process of
        // its own, started from beside a binary); acting unprivileged, the provider leaves
        // what it creates for a tenant this process's, as that work needs.
        let sim = SimExecutor::new(vec![]).acting_as_root(false);
        let machine = Arc::new(sim.machine());
        let provider = Provider::new(ProviderConfig {
            platform: Platform::Debian,
            root: root.join("sysroot"),
            executor: Arc::new(sim),
            machine,
            audit_dir: layout.root().join("log"),
        })
        .with_clock(shared.clone());
        testkit::seed_accounts(&provider).unwrap();
        testkit::seed_php(&provider, provider::PhpVersion::V8_2, &["opcache"]).unwrap();
        provider
            .ensure_dir(
                &provider.sysconf(provider.apache_layout().vhosts_dir),
                0o755,
            )
            .unwrap();
        let (inbox, writer) = Inbox::open_with_clock(&layout.inbox_db(), shared.clone()).unwrap();
        Node {
            config: RunnerConfig {
                layout,
                provider: Arc::new(provider),
                node_id: id(0xfeed).parse().unwrap(),
                budget: Duration::from_secs(10),
                api: None,
                clock: shared,
                events_kept: runner::steps::EVENTS_KEPT,
            },
            inbox: Some(inbox),
            writer: Some(writer),
            clock,
            next_request: 1000,
        }
    }

    /// Admits `resource` for `operation` as the API does, under the next request id; returns
    /// the id.
    fn submit(&mut self, operation: &str, resource: Value) -> String {
        self.next_request += 1;
        let request_id = id(self.next_request);
        let body = json!({"request_id": request_id, "operation": operation, "resource": resource});
        let job = declarations::registry()
            .validate(body.to_string().as_bytes(), &self.config.node_id)
            .unwrap_or_else(|e| panic!("{body}: {e}"));
        let inbox = self
            .inbox
            .as_ref()
            .expect("the inbox is open while the node is");
        let admitted = inbox.admit_blocking(job, registry::Origin::Api).unwrap();
        assert!(matches!(admitted, Receipt::Received { .. }), "{admitted:?}");
        request_id
    }

    /// One `--once` run of the runner code, which must finish every step.
    fn pass(&self) {
        let report = runner::run_once(&self.config).unwrap();
        assert!(report.ran, "another runner held the lock");
        assert!(
            report.failed_steps.is_empty(),
            "failed steps: {:?}",
            report.failed_steps
        );
    }

    fn job_state(&self, request_id: &str) -> (JobState, Option<String>) {
        let state = state::StateDb::open(&self.config.layout.state_db()).unwrap();
        let job = state.job(request_id).unwrap().expect("the job exists");
        (job.state, job.error.map(|e| e.code.to_string()))
    }

    /// Puts `bytes` into `blobs/in` as an upload does, stamped with the clock's time (the
    /// kernel would stamp the API's with the system's); returns the blob's name.
    fn upload(&self, bytes: &[u8]) -> String {
        let name = sha256_hex(bytes);
        let path = self.config.layout.blobs_in().join(&name);
        std::fs::write(&path, bytes).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(self.clock.system_time())
            .unwrap();
        name
    }

    /// Uploads `bundle` and binds it to web domain 40 as certificate 50, in a pass; returns
    /// how the job ended.
    fn bind_bundle(&mut self, bundle: &[u8]) -> (JobState, Option<String>) {
        let blob = self.upload(bundle);
        let bound = self.submit(
            "ensure_certificate",
            json!({"id": id(50), "account": id(10), "web_domain": id(40), "source": "bundle",
                   "blob": blob}),
        );
        self.pass();
        self.job_state(&bound)
    }

    /// Edits every vhost behind the node's back: drift the next check reports.
    fn edit_vhosts(&self) {
        let provider = &self.config.provider;
        let dir = provider.sysconf(provider.apache_layout().vhosts_dir);
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let mut text = std::fs::read_to_string(&path).unwrap();
            text.push_str("# edited by hand\n");
            std::fs::write(&path, text).unwrap();
        }
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex(&sha2::Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A certificate bundle (chain and key, one PEM blob) for `alpha.example.com`, valid for 90
/// days from `from_secs`: made once per seed, outside the runs, since a key is random.
fn bundle(from_secs: i64) -> Vec<u8> {
    let names = vec![
        "alpha.example.com".to_owned(),
        "www.alpha.example.com".to_owned(),
    ];
    let key = acme::generate_key().unwrap();
    let chain =
        simulator::issue_locally_at(&names, &key, from_secs, Duration::from_secs(90 * 86_400))
            .unwrap();
    format!("{chain}{key}").into_bytes()
}

const KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGn4w0x3qmW1b4PQ1b1pDpDkHc3uqm3n8dHTV1G4ZvDN ops@example";
const MAIL_HASH: &str = "$6$wMTlrcvoRImGHxRB$0JepXYZ.4AWYQ7z6J/S4l8GdlIJeCNkPn3Z88n2xpNcYO34jBJGDRq.PsbL150c84w6DUAwWjw6nr/kTmrLuo.";

/// One of the requests a history makes, for account 10 (`alpha`) or 11 (`beta`).
fn random_request(node: &mut Node, rng: &mut Rng) {
    let account = 10 + rng.below(2);
    let user = if account == 10 { "alpha" } else { "beta" };
    let domain = 40 + account - 10;
    let (a, d) = (id(account), id(domain));
    let mail = format!("{user}-mail.example.com");
    let (op, resource) = match rng.below(16) {
        0 => (
            "ensure_account",
            json!({"id": a, "username": user, "shell": "bash"}),
        ),
        1 => (
            "ensure_web_domain",
            json!({"id": d, "account": a, "domain": format!("{user}.example.com"),
                   "aliases": [format!("www.{user}.example.com")]}),
        ),
        2 => (
            "ensure_ssh_key",
            json!({"id": id(20 + account), "account": a, "key": KEY}),
        ),
        3 => (
            "remove_ssh_key",
            json!({"id": id(20 + account), "account": a}),
        ),
        4 => (
            if rng.below(2) == 0 {
                "suspend_web_domain"
            } else {
                "unsuspend_web_domain"
            },
            json!({"id": d, "account": a}),
        ),
        5 => (
            "set_php_version",
            json!({"id": d, "account": a, "version": "8.2"}),
        ),
        6 => (
            "ensure_redirect",
            json!({"id": id(70 + account), "account": a, "web_domain": d, "source": "/old",
                   "target": "https://new.example.com/", "status": 301}),
        ),
        7 => (
            "ensure_scheduled_task",
            json!({"id": id(90 + account), "account": a, "schedule": "*/10 * * * *",
                   "task": {"php_script": {"path": "cron/run.php", "php_version": "8.2"}}}),
        ),
        8 => (
            "ensure_mail_domain",
            json!({"id": id(150 + account), "account": a, "domain": mail}),
        ),
        9 => (
            "ensure_mailbox",
            json!({"id": id(160 + account), "account": a, "domain": mail, "local_part": "info",
                   "password": MAIL_HASH, "quota_mib": 100}),
        ),
        10 => (
            "ensure_dkim_key",
            json!({"id": id(195 + account), "account": a, "domain": mail,
                   "selector": "mail2024", "bits": "rsa1024"}),
        ),
        11 => ("observe_certificates", json!({"id": a})),
        12 => ("rebuild_account", json!({"id": a})),
        13 => ("remove_web_domain", json!({"id": d, "account": a})),
        14 => (
            "remove_scheduled_task",
            json!({"id": id(90 + account), "account": a}),
        ),
        _ => ("remove_account", json!({"id": a})),
    };
    node.submit(op, resource);
}

/// Everything the history left, as text: every row of every table of state.db, the audit
/// log, and every file of `blobs/in` and of the simulated system with its content.
fn dump(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let conn = rusqlite::Connection::open_with_flags(
        root.join("data/state/state.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let tables = texts(
        &conn,
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
    );
    for table in tables {
        let mut stmt = conn.prepare(&format!("SELECT * FROM \"{table}\"")).unwrap();
        let columns = stmt.column_count();
        let mut rows: Vec<String> = stmt
            .query_map([], |r| {
                let cells: Vec<String> =
                    (0..columns).map(|i| cell(r.get_ref(i).unwrap())).collect();
                Ok(format!("{table}: {}", cells.join(" | ")))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        rows.sort();
        out.extend(rows);
    }
    let audit = std::fs::read_to_string(root.join("data/log").join(provider::AUDIT_FILE))
        .expect("the history ran programs, so it has an audit log");
    out.extend(audit.lines().map(|l| format!("audit.log: {l}")));
    let mut files = Vec::new();
    walk(&root.join("data/blobs/in"), &mut files);
    walk(&root.join("sysroot"), &mut files);
    for path in files {
        let shown = path.strip_prefix(root).unwrap().display();
        match std::fs::read(&path) {
            Ok(bytes) => out.push(format!("{shown}: {}", String::from_utf8_lossy(&bytes))),
            Err(e) => out.push(format!("{shown}: {e}")),
        }
    }
    out
}

/// The one text column of every row `sql` selects.
fn texts(conn: &rusqlite::Connection, sql: &str) -> Vec<String> {
    conn.prepare(sql)
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// A column's value as text.
fn cell(value: rusqlite::types::ValueRef<'_>) -> String {
    use rusqlite::types::ValueRef;
    match value {
        ValueRef::Null => "NULL".to_owned(),
        ValueRef::Integer(n) => n.to_string(),
        ValueRef::Real(x) => x.to_string(),
        ValueRef::Text(text) => format!("{:?}", String::from_utf8_lossy(text)),
        ValueRef::Blob(bytes) => format!("x'{}'", hex(bytes)),
    }
}

/// Every file (not directory) beneath `dir`, in name order, not following symlinks.
fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
    paths.sort();
    for path in paths {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// The times state.db records, by table and column: each must be the manual clock's.
const TIMES: &[(&str, &str)] = &[
    ("jobs", "received_at"),
    ("jobs", "queued_at"),
    ("jobs", "started_at"),
    ("jobs", "finished_at"),
    ("jobs", "state_changed_at"),
    ("events", "at"),
    ("resources", "updated_at"),
    ("audit", "at"),
    ("drift", "first_seen"),
    ("drift", "resolved_at"),
    ("step_failures", "at"),
    ("identities", "recorded_at"),
    ("identities", "removed_at"),
];

/// One history from `seed` in `root`, which must not exist yet.
fn history(seed: u64, root: &Path, bundle: &[u8]) {
    let clock = ManualClock::from_seed(seed);
    let start = clock.now_ms();
    let mut node = Node::new(root, clock.clone());
    let mut rng = Rng::new(seed);

    // The fixed start: an account, its web domain and a certificate from a bundle valid from
    // the clock's start, which a handler reading the system's clock (years later) would
    // refuse as expired.
    node.submit(
        "ensure_account",
        json!({"id": id(10), "username": "alpha", "shell": "bash"}),
    );
    node.pass();
    let domain = node.submit(
        "ensure_web_domain",
        json!({"id": id(40), "account": id(10), "domain": "alpha.example.com",
               "aliases": ["www.alpha.example.com"]}),
    );
    node.pass();
    assert_eq!(node.job_state(&domain), (JobState::Succeeded, None));
    assert_eq!(node.bind_bundle(bundle), (JobState::Succeeded, None));

    // The seeded steps.
    for _ in 0..STEPS {
        match rng.below(10) {
            0..=3 => {
                for _ in 0..1 + rng.below(3) {
                    random_request(&mut node, &mut rng);
                }
            }
            4..=6 => node.pass(),
            7 => clock.advance(Duration::from_secs(1 + rng.below(2 * 86_400))),
            8 => node.edit_vhosts(),
            _ => {
                node.upload(format!("an upload nobody uses, {}", rng.below(1000)).as_bytes());
            }
        }
    }

    // The fixed end, from account 10 and its web domain again (the history may have removed
    // them). Past the drift interval: the check reports the vhost edited behind the node's
    // back, the rebuilds repair it, and the next check resolves it.
    node.submit(
        "ensure_account",
        json!({"id": id(10), "username": "alpha", "shell": "bash"}),
    );
    node.pass();
    node.submit(
        "ensure_web_domain",
        json!({"id": id(40), "account": id(10), "domain": "alpha.example.com",
               "aliases": ["www.alpha.example.com"]}),
    );
    node.pass();
    node.edit_vhosts();
    clock.advance(runner::steps::PERIODIC_EVERY);
    node.pass();
    for account in [10, 11] {
        node.submit("rebuild_account", json!({"id": id(account)}));
    }
    node.pass();
    clock.advance(runner::steps::PERIODIC_EVERY);
    node.pass();
    // Past the blob retention: every upload made before goes, the one made now stays.
    clock.advance(Duration::from_secs(8 * 86_400));
    let kept = node.upload(b"a fresh upload");
    node.pass();
    let uploads: Vec<_> = std::fs::read_dir(node.config.layout.blobs_in())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(uploads, [kept], "seed {seed}: blobs/in after the retention");
    // Past the certificate's validity (and many daily renewal checks): the same bundle is
    // refused now, on the manual clock.
    clock.advance(Duration::from_secs(90 * 86_400));
    assert_eq!(
        node.bind_bundle(bundle),
        (
            JobState::Failed,
            Some("certificate_not_valid_now".to_owned())
        ),
        "seed {seed}"
    );
    let end = clock.now_ms();

    // Every time state.db holds is the manual clock's.
    let conn = rusqlite::Connection::open(node.config.layout.state_db()).unwrap();
    for (table, column) in TIMES {
        let outside: i64 = conn
            .query_row(
                &format!(
                    "SELECT count(*) FROM {table}
                     WHERE {column} IS NOT NULL AND ({column} < ?1 OR {column} > ?2)"
                ),
                [start, end],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(
            outside, 0,
            "seed {seed}: {table}.{column} holds a time not the clock's"
        );
    }
    let kinds = texts(&conn, "SELECT DISTINCT kind FROM events ORDER BY kind");
    assert_eq!(kinds, ["drift", "drift_resolved", "job"], "seed {seed}");
}

#[test]
fn a_seed_replays_the_runner_store_and_simulated_system_to_the_same_bytes() {
    for seed in SEEDS {
        eprintln!("replaying seed {seed}");
        let bundle = bundle(ManualClock::from_seed(seed).now_secs());
        let dir = tempfile::tempdir().unwrap();
        // The same root both times: the node records paths beneath it.
        let root = dir.path().join("node");
        history(seed, &root, &bundle);
        let first = dump(&root);
        std::fs::remove_dir_all(&root).unwrap();
        history(seed, &root, &bundle);
        let second = dump(&root);
        assert!(
            first.iter().filter(|l| l.starts_with("jobs: ")).count() > 20,
            "seed {seed}: the history ran too few jobs to mean anything"
        );
        if let Some(at) =
            (0..first.len().max(second.len())).find(|&i| first.get(i) != second.get(i))
        {
            panic!(
                "seed {seed}: the replay differs at line {at}:\n  first:  {:?}\n  second: {:?}",
                first.get(at),
                second.get(at)
            );
        }
    }
}

/// The runner's clock for [`a_pass_stopped_at_its_budget_is_followed_at_once`]: each reading
/// of the monotonic clock moves it on by a millisecond, so a pass's budget runs out after a
/// number of steps, whatever this machine's speed.
#[derive(Debug)]
struct Ticking(Arc<ManualClock>);

impl Clock for Ticking {
    fn now_ms(&self) -> i64 {
        self.0.now_ms()
    }

    fn monotonic(&self) -> Duration {
        self.0.advance(Duration::from_millis(1));
        self.0.monotonic()
    }
}

/// A pass that runs out of its budget with jobs still claimable says so, and the next pass
/// follows at once (`--once` here, `--watch` the same way): once the inbox is quiet no wake
/// comes for the jobs already admitted, and they would otherwise wait for the timer, a
/// budget's worth of work every tick.
#[test]
fn a_pass_stopped_at_its_budget_is_followed_at_once() {
    const ACCOUNTS: u64 = 40;
    let root = tempfile::tempdir().unwrap();
    let mut node = Node::new(root.path(), ManualClock::from_seed(5));
    let requests: Vec<String> = (0..ACCOUNTS)
        .map(|n| {
            node.submit(
                "ensure_account",
                json!({"id": id(3000 + n), "username": format!("budget{n}"), "shell": "bash"}),
            )
        })
        .collect();
    node.config.clock = Arc::new(Ticking(node.clock.clone()));
    node.config.budget = Duration::from_millis(10);
    let first = runner::pass(&node.config, &mut runner::LongLane::new()).unwrap();
    assert!(
        first.stopped_at_budget && first.applied > 0 && first.applied <= ACCOUNTS as usize / 3,
        "the first pass stops at its budget with most jobs left: {first:?}"
    );
    let rest = runner::run_once(&node.config).unwrap();
    assert_eq!(first.applied + rest.applied, ACCOUNTS as usize, "{rest:?}");
    assert!(!rest.stopped_at_budget, "the last pass found nothing left");
    for request in &requests {
        assert_eq!(node.job_state(request), (JobState::Succeeded, None));
    }
}
