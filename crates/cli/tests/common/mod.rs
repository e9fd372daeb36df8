//! The end-to-end harness: a node in a temporary directory (a Sim sysroot and a data
//! directory), requests admitted into the real inbox exactly as the API admits them, and the
//! real runner code run as a child process: the simulated runner (`layerone-sim-runner`), or
//! the crash-point runner (`layerone-crash-runner`) told to abort at a crash point. Nothing
//! here mocks the store, the lock or the transaction.
#![allow(dead_code)]

pub mod acme_ca;
pub mod node_admin;
pub mod real_web;

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::LazyLock;

use inbox::{Inbox, Receipt};
use provider::{Platform, Program, Provider};
use registry::{Hex32, JobState};
use serde_json::{Value, json};
use state::StateDb;
use store::Layout;

/// A binary of another package of the workspace (the packaged `layerone-api` and
/// `layerone-runner` of `crates/api` and `crates/runner`, the unshipped ones of
/// `crates/devnode`), which `CARGO_BIN_EXE_*` cannot name from this package: built beside the
/// test binaries' directory (`target/debug`) by the same `cargo build` / `cargo nextest run
/// --workspace`.
pub fn workspace_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("test binaries run from target/<profile>/deps");
    let path = dir.join(name);
    assert!(
        path.is_file(),
        "{} is missing: it is built by `cargo build --workspace`; \
         `cargo nextest run --workspace` and ./scripts/test build it",
        path.display()
    );
    path
}

/// Starts the real Apache `server` on the configuration `config` (`apache2 -f CONF -k start`),
/// as an operator would; it daemonizes, and `testkit::daemons::stop_apache` stops it.
pub fn start_apache(server: &str, config: &Path) {
    #[allow(clippy::disallowed_methods)] // The test starts the real server it checks.
    let out = std::process::Command::new(server)
        .arg("-f")
        .arg(config)
        .args(["-k", "start"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "apache2 -k start: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The simulated runner: the runner code on the simulator (`layerone-sim-runner`).
pub static RUNNER: LazyLock<PathBuf> = LazyLock::new(|| workspace_binary("layerone-sim-runner"));

/// The simulated runner with crash points armable from the environment.
pub static CRASH_RUNNER: LazyLock<PathBuf> =
    LazyLock::new(|| workspace_binary("layerone-crash-runner"));

/// The packaged API (`layerone-api`, package `api`).
pub static API: LazyLock<PathBuf> = LazyLock::new(|| workspace_binary("layerone-api"));

/// The packaged runner (`layerone-runner`, package `runner`).
pub static PACKAGED_RUNNER: LazyLock<PathBuf> =
    LazyLock::new(|| workspace_binary("layerone-runner"));

/// The dev node (`layerone-dev`).
pub static DEV_NODE: LazyLock<PathBuf> = LazyLock::new(|| workspace_binary("layerone-dev"));

pub struct Node {
    pub dir: tempfile::TempDir,
    pub layout: Layout,
    pub provider: Provider,
    pub node_id: Hex32,
    pub inbox: Option<Inbox>,
    real_apache: bool,
    /// Programs besides apachectl the runner starts for real (`--sim-real`).
    pub extra_real: Vec<&'static str>,
    /// A real MariaDB server's socket; `None`: the Sim model.
    mariadb_socket: Option<PathBuf>,
    /// The platform profile the runner is told (`--platform`).
    pub platform: Platform,
}

/// A drift event as (kind, family, resource, aspect).
pub type DriftEvent = (registry::EventKind, String, String, registry::DriftAspect);

/// `found`, as (family, resource, aspect), as the drift events of one `kind` that
/// [`Node::check_drift`] returns.
pub fn drift_as(
    kind: registry::EventKind,
    found: &[(&str, String, registry::DriftAspect)],
) -> Vec<DriftEvent> {
    let mut events: Vec<DriftEvent> = found
        .iter()
        .map(|(family, id, aspect)| (kind, family.to_string(), id.clone(), aspect.clone()))
        .collect();
    events.sort_by(|a, b| (&a.1, &a.2, &a.3).cmp(&(&b.1, &b.2, &b.3)));
    events
}

pub fn id(n: u64) -> String {
    format!("{n:032x}")
}

impl Node {
    pub fn new() -> Node {
        Node::with(false)
    }

    /// A Sim node on the `cloudlinux` profile (lvectl, cagefsctl, httpd paths).
    pub fn cloudlinux() -> Node {
        Node::on(Platform::CloudLinux, false)
    }

    /// A node whose Apache configuration test is the real `apache2ctl -t`.
    pub fn with_real_apache() -> Node {
        Node::with(true)
    }

    fn with(real_apache: bool) -> Node {
        Node::on(Platform::Debian, real_apache)
    }

    fn on(platform: Platform, real_apache: bool) -> Node {
        let dir = tempfile::tempdir().expect("a temporary directory");
        // Traversable by the unprivileged API user of the privilege tests.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let real = if real_apache {
            vec![Program::ApacheCtl]
        } else {
            vec![]
        };
        let provider = testkit::sim_provider(platform, dir.path(), real);
        testkit::seed_accounts(&provider).unwrap();
        if real_apache {
            testkit::require_apachectl(platform);
            testkit::write_apache_test_config(&provider).unwrap();
        } else {
            provider
                .ensure_dir(
                    &provider.sysconf(provider.apache_layout().vhosts_dir),
                    0o755,
                )
                .unwrap();
        }
        // The machine has PHP 8.2 (with opcache and intl) and nothing else: every other version
        // is one the node must refuse.
        testkit::seed_php(&provider, provider::PhpVersion::V8_2, &["opcache", "intl"]).unwrap();
        // The sandbox's kernel files, which observe_runtime reads through sysconf.
        let proc_dir = provider.sysconf("/proc");
        std::fs::create_dir_all(&proc_dir).unwrap();
        std::fs::write(proc_dir.join("loadavg"), "0.10 0.20 0.30 1/100 4242\n").unwrap();
        std::fs::write(
            proc_dir.join("meminfo"),
            "MemTotal: 2048000 kB\nMemAvailable: 1024000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
        )
        .unwrap();
        let layout = Layout::new(dir.path().join("data"));
        layout.prepare_api_side(None).unwrap();
        layout.prepare_root_side(None).unwrap();
        Node {
            dir,
            layout,
            provider,
            node_id: id(0xfeed).parse().unwrap(),
            inbox: None,
            real_apache,
            extra_real: Vec::new(),
            mariadb_socket: None,
            platform,
        }
    }

    /// A node whose MariaDB operations go to the real server at `socket`.
    pub fn with_mariadb(socket: &Path) -> Node {
        let mut node = Node::with(false);
        node.provider = testkit::sim_provider(Platform::Debian, node.dir.path(), vec![])
            .with_mariadb_socket(socket);
        node.mariadb_socket = Some(socket.to_owned());
        node
    }

    pub fn inbox(&mut self) -> &Inbox {
        if self.inbox.is_none() {
            self.inbox = Some(Inbox::open(&self.layout.inbox_db()).unwrap().0);
        }
        self.inbox.as_ref().unwrap()
    }

    /// Admits a request exactly as the API does: validated, then group-committed.
    pub fn submit(&mut self, body: &Value) -> Receipt {
        let job = declarations::registry()
            .validate(body.to_string().as_bytes(), &self.node_id.clone())
            .expect("a valid request");
        self.inbox()
            .admit_blocking(job, registry::Origin::Api)
            .unwrap()
    }

    /// Writes a row straight into inbox.db, bypassing the API: hostile input for root.
    pub fn submit_raw(&mut self, request_id: &str, operation: &str, body: &[u8]) {
        self.inbox();
        let conn = rusqlite::Connection::open(self.layout.inbox_db()).unwrap();
        conn.execute(
            "INSERT INTO requests(request_id, operation, body, body_sha256, received_at) VALUES (?1, ?2, ?3, 'x', 0)",
            rusqlite::params![request_id, operation, body],
        )
        .unwrap();
    }

    /// Runs the real runner code for one pass; `crash` arms a crash point (in the
    /// crash-point runner).
    pub fn run(&self, crash: Option<crash::Point>) -> ExitStatus {
        let runner = if crash.is_some() {
            &*CRASH_RUNNER
        } else {
            &*RUNNER
        };
        #[allow(clippy::disallowed_methods)] // Tests start the real runner binary.
        let mut cmd = std::process::Command::new(runner);
        cmd.arg("--once")
            .arg("--data-dir")
            .arg(self.layout.root())
            .arg("--root")
            .arg(self.provider.root())
            .args(["--platform", self.platform.as_str()])
            .args(["--node-id", self.node_id.as_str(), "--log", "warn"]);
        let mut real = self.extra_real.clone();
        if self.real_apache {
            real.insert(0, "apachectl");
        }
        if !real.is_empty() {
            cmd.args(["--sim-real", &real.join(",")]);
        }
        if let Some(socket) = &self.mariadb_socket {
            cmd.arg("--mariadb-socket").arg(socket);
        }
        if let Some(point) = crash {
            cmd.env(testkit::crash_points::ENV, point.name());
        }
        cmd.status().expect("the runner binary starts")
    }

    /// Starts the real Apache on the sysroot's configuration (`apache2 -f CONF -k start`), as
    /// an operator would: the runner's reloads reach it. Stopped when the node is dropped.
    pub fn start_apache(&self) {
        assert!(
            self.real_apache,
            "Node::with_real_apache has the sysroot's configuration"
        );
        let main = self.path(self.provider.apache_layout().main_config);
        start_apache(self.provider.apache_layout().server, &main);
    }

    /// A normal pass that must succeed.
    pub fn pass(&self) {
        let status = self.run(None);
        assert!(status.success(), "a normal runner pass failed: {status}");
    }

    /// Uploads `bytes` into `blobs/in` exactly as the API's `PUT /v1/blobs/{sha256}` does,
    /// and returns the blob's name.
    pub fn upload_blob(&self, bytes: &[u8]) -> String {
        use sha2::Digest;
        let name: String = sha2::Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let mut upload = store::blobs::Upload::begin(&self.layout, 1 << 20).unwrap();
        upload.write(bytes).unwrap();
        upload.finish(&self.layout, &name.parse().unwrap()).unwrap();
        name
    }

    pub fn state(&self) -> StateDb {
        StateDb::open(&self.layout.state_db()).unwrap()
    }

    pub fn job_state(&self, request_id: &str) -> Option<JobState> {
        self.state().job(request_id).unwrap().map(|j| j.state)
    }

    pub fn path(&self, system_path: &str) -> PathBuf {
        self.provider.sysconf(system_path)
    }

    /// The file of `account`'s PHP 8.2 pool (mapped): its own master's configuration, named
    /// by the uid state.db recorded, where the platform has tenant masters (Debian), else its
    /// section of the shared master (CloudLinux).
    pub fn pool_file(&self, account: &str) -> PathBuf {
        let v82 = provider::PhpVersion::V8_2;
        let layout = self.provider.php_fpm_layout(v82);
        match self.account_uid(account) {
            Some(uid) if self.provider.tenant_masters(v82) => {
                self.path(&layout.tenant_config(uid).unwrap())
            }
            _ => self
                .path(&layout.pool_dir)
                .join(format!("layerone-{account}.conf")),
        }
    }

    /// The uid state.db recorded for `account`, while it has a row.
    pub fn account_uid(&self, account: &str) -> Option<u32> {
        self.state()
            .resource("account", &account.parse().unwrap())
            .unwrap()
            .map(|row| row.data["uid"].as_u64().unwrap() as u32)
    }

    pub fn vhosts(&self) -> BTreeSet<String> {
        let dir = self.path(self.provider.apache_layout().vhosts_dir);
        std::fs::read_dir(dir)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(".conf"))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Users the node created (their GECOS marker says so).
    pub fn node_users(&self) -> BTreeSet<String> {
        let passwd = std::fs::read_to_string(self.path("/etc/passwd")).unwrap_or_default();
        passwd
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split(':').collect();
                (f.len() > 4 && f[4].starts_with("layerone-")).then(|| f[0].to_owned())
            })
            .collect()
    }

    /// The invariants every converged node satisfies: SQLite intact, no job left pending, the
    /// sysroot exactly what state.db records — nothing missing, nothing extra — and no drift.
    pub fn check_converged(&self) {
        let state = self.state();
        assert_eq!(state.integrity_check().unwrap(), "ok");
        for (st, n) in state.job_counts().unwrap() {
            assert!(
                st != "queued" && st != "running",
                "{n} jobs still {st} after a normal pass"
            );
        }
        let rows = state.all_resources().unwrap();
        let of = |family: &'static str| rows.iter().filter(move |r| r.family == family);
        let users: BTreeSet<String> = of("account")
            .map(|r| r.data["username"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            self.node_users(),
            users,
            "passwd and state.db disagree on accounts"
        );
        for account in of("account") {
            let home = self.path(account.data["home"].as_str().unwrap());
            assert!(home.is_dir(), "the home {} is missing", home.display());
        }
        let vhosts: BTreeSet<String> = of("web_domain")
            .map(|r| format!("{}.conf", r.resource_id))
            .collect();
        assert_eq!(self.vhosts(), vhosts, "vhosts and state.db disagree");
        for domain in of("web_domain") {
            let file = self
                .path(self.provider.apache_layout().vhosts_dir)
                .join(format!("{}.conf", domain.resource_id));
            let text = std::fs::read_to_string(file).unwrap();
            assert!(text.contains(&format!(
                "ServerName {}",
                domain.data["domain"].as_str().unwrap()
            )));
        }
        for account in of("account") {
            let keys: BTreeSet<String> = of("ssh_key")
                .filter(|k| k.owner.as_str() == account.resource_id.as_str())
                .map(|k| k.data["key"].as_str().unwrap().to_owned())
                .collect();
            let file = self
                .path(account.data["home"].as_str().unwrap())
                .join(".ssh/authorized_keys");
            let in_file: BTreeSet<String> = std::fs::read_to_string(&file)
                .unwrap_or_default()
                .lines()
                .filter(|l| !l.starts_with('#') && !l.is_empty())
                .map(str::to_owned)
                .collect();
            assert_eq!(
                in_file, keys,
                "authorized_keys of {} and state.db disagree",
                account.resource_id
            );
        }
        // Every backup's archive is in blobs/out, and none that a killed create wrote is
        // left there unrecorded (its note in state/backup-pending names it).
        let archives: BTreeSet<String> = of("backup")
            .map(|r| r.data["blob"].as_str().unwrap().to_owned())
            .collect();
        for blob in &archives {
            assert!(
                self.layout.blobs_out().join(blob).is_file(),
                "the archive {blob} of a backup is missing"
            );
        }
        if let Ok(notes) = std::fs::read_dir(self.layout.state_dir().join("backup-pending")) {
            for note in notes {
                let noted = std::fs::read_to_string(note.unwrap().path()).unwrap();
                assert!(
                    archives.contains(&noted) || !self.layout.blobs_out().join(&noted).exists(),
                    "the archive {noted} of a killed create is left in blobs/out"
                );
            }
        }
        if self.mariadb_socket.is_none() {
            self.check_mariadb_sim(&rows);
        }
        self.check_php_and_cron_converged(&rows);
        self.check_web_access_converged(&rows);
        // pure-ftpd's passwd file holds exactly the recorded FTP accounts' lines, each with its
        // account's recorded limits in pure-ftpd's fields, but those suspended on their own or
        // with their account.
        let suspended_accounts: BTreeSet<&str> = of("account")
            .filter(|a| a.data["suspended"] == true)
            .map(|a| a.resource_id.as_str())
            .collect();
        let ftp_lines: BTreeSet<String> =
            std::fs::read_to_string(self.path(provider::FTP_LAYOUT.passwd))
                .unwrap_or_default()
                .lines()
                .map(|l| format!("{l}\n"))
                .collect();
        let recorded: BTreeSet<String> = of("ftp_account")
            .filter(|r| {
                r.data["suspended"] != true && !suspended_accounts.contains(r.owner.as_str())
            })
            .map(|r| {
                let limits = of("account")
                    .find(|a| a.resource_id.as_str() == r.owner.as_str())
                    .and_then(|a| serde_json::from_value(a.data["limits"].clone()).ok());
                ops::ftp_account::line_with_limits(
                    r.data["line"].as_str().unwrap(),
                    limits.as_ref(),
                )
            })
            .collect();
        assert_eq!(
            ftp_lines, recorded,
            "pure-ftpd's passwd and state.db disagree"
        );
        self.check_certificates_converged(&rows);
        // CloudLinux: the LVE limits and the CageFS list the Sim keeps are exactly what the
        // account rows record (empty on Debian, where neither exists: its limits are the
        // slices' drop-ins, which the drift check below holds to the rows).
        let lve: BTreeSet<String> = std::fs::read_to_string(self.path(simulator::SIM_LVE_FILE))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect();
        let recorded: BTreeSet<String> = of("account")
            .filter(|a| {
                !a.data["limits"].is_null() && self.platform == provider::Platform::CloudLinux
            })
            .map(|a| {
                let l = &a.data["limits"];
                format!(
                    "{} {} {} {} {} {}",
                    a.data["username"].as_str().unwrap(),
                    l["cpu_percent"],
                    l["memory_mib"],
                    l["io_kib_per_sec"],
                    l["processes"],
                    l["entry_processes"]
                )
            })
            .collect();
        assert_eq!(lve, recorded, "lvectl's limits and state.db disagree");
        let caged: BTreeSet<String> =
            std::fs::read_to_string(self.path(simulator::SIM_CAGEFS_FILE))
                .unwrap_or_default()
                .lines()
                .map(str::to_owned)
                .collect();
        let recorded: BTreeSet<String> = of("account")
            .filter(|a| a.data["cagefs"] == true)
            .map(|a| a.data["username"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(caged, recorded, "CageFS and state.db disagree");
        // MySQL Governor: dbctl's per-user limits are exactly what the account rows record.
        let governed: BTreeSet<String> =
            std::fs::read_to_string(self.path(simulator::SIM_DBCTL_FILE))
                .unwrap_or_default()
                .lines()
                .map(|l| l.split(' ').next().unwrap_or_default().to_owned())
                .collect();
        let recorded: BTreeSet<String> = of("account")
            .filter(|a| a.data.get("mysql_limits").is_some_and(|l| !l.is_null()))
            .map(|a| a.data["username"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(governed, recorded, "dbctl's limits and state.db disagree");
        // The mail stack's derived files are exactly what state.db implies.
        let mail = ops::mail::MailState::load(&state).unwrap();
        for (path, expected) in mail.expected_files(&self.provider) {
            let actual = std::fs::read(&path).ok();
            let has_entries = |bytes: &[u8]| {
                String::from_utf8_lossy(bytes)
                    .lines()
                    .any(|l| !l.is_empty() && !l.starts_with('#'))
            };
            match actual {
                Some(actual) => assert_eq!(
                    String::from_utf8_lossy(&actual),
                    String::from_utf8_lossy(&expected),
                    "{} and state.db disagree",
                    path.display()
                ),
                None => assert!(!has_entries(&expected), "{} is missing", path.display()),
            }
        }
        let scripts: BTreeSet<String> = of("autoresponder")
            .map(|r| format!("{}.sieve", r.data["mailbox"].as_str().unwrap()))
            .collect();
        let on_disk: BTreeSet<String> = std::fs::read_dir(self.provider.sieve_dir())
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(".sieve"))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(on_disk, scripts, "Sieve scripts and state.db disagree");
        let keys: BTreeSet<String> = of("dkim_key").map(|r| r.resource_id.to_string()).collect();
        let key_dirs: BTreeSet<String> =
            std::fs::read_dir(self.path(self.provider.mail_layout().dkim_dir).join("keys"))
                .map(|d| {
                    d.filter_map(|e| e.ok())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
        assert_eq!(key_dirs, keys, "DKIM keys and state.db disagree");
        for row in &rows {
            // The node's own resources (owner `node:`) belong to no account.
            if row.family != "account" && row.owner != registry::Owner::Node {
                assert!(
                    of("account").any(|a| a.resource_id.as_str() == row.owner.as_str()),
                    "an orphan {} row",
                    row.family
                );
            }
        }
        // And the drift check, built from every family's derivations, finds nothing.
        let drift = ops::drift::detect(&self.ctx());
        assert!(
            drift.unchecked.is_empty(),
            "the drift check could not look at {:?}",
            drift.unchecked
        );
        assert!(
            drift.found.is_empty(),
            "a converged node drifted: {:#?}",
            drift.found
        );
    }

    /// Protected directories and IP blocks: one `AuthUserFile` per recorded protected
    /// directory with its users, and each vhost protecting and blocking what state.db says.
    fn check_web_access_converged(&self, rows: &[store::ResourceRow]) {
        let of = |family: &'static str| rows.iter().filter(move |r| r.family == family);
        let auth_dir = self.path(self.provider.apache_layout().auth_dir);
        let files: BTreeSet<String> = std::fs::read_dir(&auth_dir)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let expected: BTreeSet<String> = of("protected_directory")
            .map(|r| format!("{}.htpasswd", r.resource_id))
            .collect();
        assert_eq!(files, expected, "AuthUserFiles and state.db disagree");
        for dir in of("protected_directory") {
            let text =
                std::fs::read_to_string(auth_dir.join(format!("{}.htpasswd", dir.resource_id)))
                    .unwrap();
            let users: Vec<String> = dir.data["users"]
                .as_array()
                .unwrap()
                .iter()
                .map(|u| {
                    format!(
                        "{}:{}\n",
                        u["name"].as_str().unwrap(),
                        u["password_hash"].as_str().unwrap()
                    )
                })
                .collect();
            assert_eq!(text, users.concat(), "the users of {}", dir.resource_id);
        }
        for domain in of("web_domain") {
            let file = self
                .path(self.provider.apache_layout().vhosts_dir)
                .join(format!("{}.conf", domain.resource_id));
            let text = std::fs::read_to_string(file).unwrap();
            // Each directory in every virtual host of the domain that serves the site: `*:80`
            // unless HTTPS is forced, and `*:443` when a certificate is bound.
            let tls = of("certificate")
                .filter(|r| r.data["web_domain"] == domain.resource_id.as_str())
                .count();
            let hosts = usize::from(!forced_https(rows, domain)) + tls;
            let protected = hosts
                * of("protected_directory")
                    .filter(|r| r.data["web_domain"] == domain.resource_id.as_str())
                    .count();
            assert_eq!(
                text.matches("        AuthUserFile \"").count(),
                protected,
                "protected directories of {}",
                domain.resource_id
            );
            let blocked = of("ip_block").any(|r| r.resource_id == domain.resource_id)
                && !domain.data["suspended"].as_bool().unwrap_or(false);
            assert_eq!(
                text.contains("Require not ip"),
                blocked,
                "IP block of {}",
                domain.resource_id
            );
        }
    }

    /// Pools, redirects and crontabs are exactly what state.db derives.
    fn check_php_and_cron_converged(&self, rows: &[store::ResourceRow]) {
        let of = |family: &'static str| rows.iter().filter(move |r| r.family == family);
        let layout = self.provider.php_fpm_layout(provider::PhpVersion::V8_2);
        let files_in = |dir: &str, prefix: &str| -> BTreeSet<PathBuf> {
            std::fs::read_dir(self.path(dir))
                .map(|d| {
                    d.filter_map(|e| e.ok())
                        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
                        .map(|e| e.path())
                        .collect()
                })
                .unwrap_or_default()
        };
        // The node's pools, in either place: the shared master's (its `layerone-*` files)
        // and the tenants' own masters'.
        let mut pools = files_in(&layout.pool_dir, "layerone-");
        if let Some(dir) = &layout.tenant_dir {
            pools.extend(files_in(dir, ""));
        }
        let domains: BTreeSet<String> = of("web_domain")
            .map(|r| r.resource_id.to_string())
            .collect();
        let expected: BTreeSet<PathBuf> = of("php_version")
            .filter(|r| domains.contains(r.resource_id.as_str()))
            .map(|r| self.pool_file(r.owner.as_str()))
            .collect();
        assert_eq!(pools, expected, "FPM pools and state.db disagree");
        for domain in of("web_domain") {
            let file = self
                .path(self.provider.apache_layout().vhosts_dir)
                .join(format!("{}.conf", domain.resource_id));
            let text = std::fs::read_to_string(file).unwrap();
            let php = rows
                .iter()
                .any(|r| r.family == "php_version" && r.resource_id == domain.resource_id);
            assert_eq!(
                text.contains("SetHandler \"proxy:unix:"),
                php,
                "PHP handler of {}",
                domain.resource_id
            );
            // Suspended on its own or with its account.
            let suspended = domain.data["suspended"].as_bool().unwrap_or(false)
                || of("account").any(|a| {
                    a.resource_id.as_str() == domain.owner.as_str()
                        && a.data["suspended"].as_bool().unwrap_or(false)
                });
            assert_eq!(
                text.contains("Require all denied"),
                suspended,
                "suspension of {}",
                domain.resource_id
            );
            // Once per virtual host that serves the site (`*:80` unless HTTPS is forced, and
            // `*:443` with a certificate), but where it would send a request back to itself.
            let names: Vec<registry::types::DomainName> = std::iter::once(&domain.data["domain"])
                .chain(domain.data["aliases"].as_array().into_iter().flatten())
                .map(|n| n.as_str().unwrap().parse().unwrap())
                .collect();
            let names: Vec<&registry::types::DomainName> = names.iter().collect();
            let forced = forced_https(rows, domain);
            let tls = text.contains("<VirtualHost *:443>");
            let hosts: Vec<bool> = [(!forced).then_some(false), tls.then_some(true)]
                .into_iter()
                .flatten()
                .collect();
            let expect = if suspended {
                0
            } else {
                of("redirect")
                    .filter(|r| r.data["web_domain"] == domain.resource_id.as_str())
                    .map(|r| {
                        let rule = ops::vhost::RedirectRule {
                            source: r.data["source"].as_str().unwrap().parse().unwrap(),
                            target: r.data["target"].as_str().unwrap().parse().unwrap(),
                            status: serde_json::from_value(r.data["status"].clone()).unwrap(),
                        };
                        hosts
                            .iter()
                            .filter(|https| {
                                !ops::vhost::sends_back_to_itself(&rule, &names, **https, forced)
                            })
                            .count()
                    })
                    .sum()
            };
            assert_eq!(
                text.matches("    RedirectMatch ").count(),
                expect,
                "redirects of {}",
                domain.resource_id
            );
        }
        let spool = self.path(provider::crontab_spool(self.provider.platform()));
        for account in of("account") {
            let user = account.data["username"].as_str().unwrap();
            let tasks: BTreeSet<String> = of("scheduled_task")
                .filter(|t| t.owner.as_str() == account.resource_id.as_str())
                .map(|t| format!("# task {}", t.resource_id))
                .collect();
            let in_file: BTreeSet<String> = std::fs::read_to_string(spool.join(user))
                .unwrap_or_default()
                .lines()
                .filter(|l| l.starts_with("# task "))
                .map(str::to_owned)
                .collect();
            assert_eq!(
                in_file, tasks,
                "the crontab of {user} and state.db disagree"
            );
        }
    }

    /// The runner binary's audit log (`<data>/log/audit.log`, where `layerone-runner` keeps
    /// it), not the harness provider's own.
    pub fn audit_records(&self) -> Vec<provider::AuditRecord> {
        provider::read_audit_log(&self.layout.root().join("log")).unwrap()
    }

    /// The Sim's MariaDB holds exactly what state.db records: the databases, every user at
    /// every host, and the grants whose database and user both exist.
    fn check_mariadb_sim(&self, rows: &[store::ResourceRow]) {
        let sim = testkit::sim_mariadb_contents(&self.provider).unwrap();
        let of = |family: &'static str| rows.iter().filter(move |r| r.family == family);
        let databases: BTreeSet<String> = of("mysql_database")
            .filter(|r| r.data["kind"] == "database")
            .map(|r| r.data["name"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            sim.databases.iter().cloned().collect::<BTreeSet<_>>(),
            databases,
            "MariaDB databases and state.db disagree"
        );
        let mut accounts = BTreeSet::new();
        for user in of("mysql_user") {
            for host in user.data["hosts"].as_array().unwrap() {
                accounts.insert(format!(
                    "{}@{}",
                    user.data["name"].as_str().unwrap(),
                    host.as_str().unwrap()
                ));
            }
        }
        assert_eq!(
            sim.accounts.iter().cloned().collect::<BTreeSet<_>>(),
            accounts,
            "MariaDB users and state.db disagree"
        );
        let mut grants = BTreeSet::new();
        let mut privileges = BTreeSet::new();
        for grant in of("mysql_grant") {
            let db =
                of("mysql_database").find(|r| r.resource_id.as_str() == grant.data["database"]);
            let user = of("mysql_user").find(|r| r.resource_id.as_str() == grant.data["user"]);
            if let (Some(db), Some(user)) = (db, user) {
                // What the grant's set leaves while the account's quota state is recorded.
                let revoked = rows.iter().any(|r| {
                    r.family == "mysql_database"
                        && r.data["kind"] == "quota"
                        && r.resource_id.as_str() == grant.owner.as_str()
                        && r.data["writes_revoked"] == true
                });
                let set = serde_json::from_value(grant.data["privileges"].clone()).unwrap();
                let expected: Vec<String> = ops::mysql_database::effective(set, revoked)
                    .iter()
                    .map(|p| p.as_sql().to_owned())
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                for host in user.data["hosts"].as_array().unwrap() {
                    let acct = format!(
                        "{}@{}",
                        user.data["name"].as_str().unwrap(),
                        host.as_str().unwrap()
                    );
                    let db_name = db.data["name"].as_str().unwrap().to_owned();
                    grants.insert((acct.clone(), db_name.clone()));
                    privileges.insert((acct, db_name, expected.clone()));
                }
            }
        }
        assert_eq!(
            sim.grants.iter().cloned().collect::<BTreeSet<_>>(),
            grants,
            "MariaDB grants and state.db disagree"
        );
        assert_eq!(
            sim.privileges.iter().cloned().collect::<BTreeSet<_>>(),
            privileges,
            "MariaDB privileges and state.db (grant sets, quota state) disagree"
        );
    }

    /// Certificate files are exactly the recorded certificates' (chain 0644, key 0600), and
    /// the vhost of each recorded domain serves HTTPS with its certificate, or not at all.
    fn check_certificates_converged(&self, rows: &[store::ResourceRow]) {
        let dir = self.path(ops::certificate::CERTIFICATE_DIR);
        let on_disk: BTreeSet<String> = std::fs::read_dir(&dir)
            .map(|d| {
                d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let certs: Vec<&store::ResourceRow> =
            rows.iter().filter(|r| r.family == "certificate").collect();
        let recorded: BTreeSet<String> = certs
            .iter()
            .flat_map(|r| {
                [
                    format!("{}.crt", r.resource_id),
                    format!("{}.key", r.resource_id),
                ]
            })
            .collect();
        assert_eq!(on_disk, recorded, "certificate files and state.db disagree");
        for cert in &certs {
            let mode = |ext: &str| {
                std::fs::metadata(dir.join(format!("{}.{ext}", cert.resource_id)))
                    .unwrap()
                    .permissions()
                    .mode()
                    & 0o777
            };
            assert_eq!((mode("crt"), mode("key")), (0o644, 0o600));
        }
        for domain in rows.iter().filter(|r| r.family == "web_domain") {
            let file = self
                .path(self.provider.apache_layout().vhosts_dir)
                .join(format!("{}.conf", domain.resource_id));
            let text = std::fs::read_to_string(file).unwrap();
            let bound = certs
                .iter()
                .find(|c| c.data["web_domain"] == domain.resource_id.as_str());
            match bound {
                Some(c) => assert!(
                    text.contains("<VirtualHost *:443>")
                        && text.contains(&format!("{}.crt\"", c.resource_id)),
                    "the vhost of {} does not serve its certificate",
                    domain.resource_id
                ),
                None => assert!(
                    !text.contains("<VirtualHost *:443>"),
                    "the vhost of {} serves HTTPS without a certificate",
                    domain.resource_id
                ),
            }
            // The HTTPS policy, in force only with a certificate.
            let policy = rows
                .iter()
                .find(|r| r.family == "https_policy" && r.resource_id == domain.resource_id);
            assert_eq!(
                text.contains("    RewriteEngine On\n"),
                forced_https(rows, domain),
                "forced HTTPS of {}",
                domain.resource_id
            );
            let hsts = bound.is_some() && policy.is_some_and(|p| !p.data["hsts"].is_null());
            assert_eq!(
                text.contains("Strict-Transport-Security"),
                hsts,
                "HSTS of {}",
                domain.resource_id
            );
        }
    }

    /// Lines of the runner's audit log (`<data dir>/log`, where the runner binary writes it).
    pub fn audit_count(&self) -> usize {
        self.audit_records().len()
    }

    /// Puts `bytes` into `blobs/in` under their SHA-256, as the API's blob upload does;
    /// returns the id.
    pub fn put_blob(&self, bytes: &[u8]) -> String {
        use sha2::Digest as _;
        let id = hex::encode(sha2::Sha256::digest(bytes));
        std::fs::write(self.layout.blobs_in().join(&id), bytes).unwrap();
        id
    }

    pub fn root_path(&self) -> &Path {
        self.provider.root()
    }

    /// Makes the next pass run the drift check (it runs at most every 10 minutes, tracked by
    /// the mtime of this marker).
    pub fn drift_check_due(&self) {
        let _ = std::fs::remove_file(self.layout.state_dir().join("observed"));
    }

    /// The drift events (`drift`, `drift_resolved`) after the cursor `after`.
    pub fn drift_events(&self, after: i64) -> Vec<registry::Event> {
        self.feed(after)
            .into_iter()
            .filter(|e| {
                matches!(
                    e.kind,
                    registry::EventKind::Drift | registry::EventKind::DriftResolved
                )
            })
            .collect()
    }

    /// Every event of the feed after `after`, read page by page (a page stops at its
    /// budget of result bytes).
    pub fn feed(&self, mut after: i64) -> Vec<registry::Event> {
        let state = self.state();
        let mut events = Vec::new();
        loop {
            let page = state.events(after, 1000).unwrap();
            after = page.next;
            let done = page.events.is_empty();
            events.extend(page.events);
            if done {
                return events;
            }
        }
    }

    /// The cursor of the last event of the feed.
    pub fn last_cursor(&self) -> i64 {
        self.feed(0).last().map_or(0, |e| e.cursor)
    }

    /// Runs a pass with the drift check due and returns the drift events it added, as
    /// (kind, family, resource, aspect), sorted by finding.
    pub fn check_drift(&self) -> Vec<DriftEvent> {
        let before = self.last_cursor();
        self.drift_check_due();
        self.pass();
        let mut seen: Vec<DriftEvent> = self
            .drift_events(before)
            .into_iter()
            .map(|e| {
                let d = e.drift.expect("a drift event carries its finding");
                (e.kind, d.family, d.resource_id, d.aspect)
            })
            .collect();
        seen.sort_by(|a, b| (&a.1, &a.2, &a.3).cmp(&(&b.1, &b.2, &b.3)));
        seen
    }

    /// A handler context on this node's state.db and sysroot, with the provider the runner
    /// is given (its MariaDB included): what a test runs the drift check's hooks with, or
    /// tampers with MariaDB through.
    pub fn ctx(&self) -> ops::Ctx {
        let mut provider = testkit::sim_provider(self.platform, self.dir.path(), vec![]);
        if let Some(socket) = &self.mariadb_socket {
            provider = provider.with_mariadb_socket(socket);
        }
        ops::Ctx::new(std::sync::Arc::new(provider), self.state()).with_layout(self.layout.clone())
    }
}

pub const KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGn4w0x3qmW1b4PQ1b1pDpDkHc3uqm3n8dHTV1G4ZvDN ops@example";

/// Whether `domain`'s vhost sends HTTP to HTTPS: its HTTPS policy forces it and a
/// certificate is bound.
fn forced_https(rows: &[store::ResourceRow], domain: &store::ResourceRow) -> bool {
    let policy = rows.iter().any(|r| {
        r.family == "https_policy"
            && r.resource_id == domain.resource_id
            && r.data["force_https"] == true
    });
    let bound = rows
        .iter()
        .any(|r| r.family == "certificate" && r.data["web_domain"] == domain.resource_id.as_str());
    policy && bound
}

pub fn ensure_account(req: u64, account: u64, username: &str) -> Value {
    json!({"request_id": id(req), "operation": "ensure_account",
           "resource": {"id": id(account), "username": username, "shell": "bash"}})
}

pub fn account_op(req: u64, op: &str, account: u64) -> Value {
    json!({"request_id": id(req), "operation": op, "resource": {"id": id(account)}})
}

pub fn ensure_key(req: u64, key: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "ensure_ssh_key",
           "resource": {"id": id(key), "account": id(account), "key": KEY}})
}

pub fn remove_key(req: u64, key: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "remove_ssh_key", "resource": {"id": id(key), "account": id(account)}})
}

pub fn ensure_domain(req: u64, domain_id: u64, account: u64, domain: &str) -> Value {
    json!({"request_id": id(req), "operation": "ensure_web_domain",
           "resource": {"id": id(domain_id), "account": id(account), "domain": domain, "aliases": [format!("www.{domain}")]}})
}

/// A self-signed chain and its key for `domain` and `www.{domain}` (valid now).
pub fn cert_bundle(domain: &str) -> (String, String) {
    let made = rcgen::generate_simple_self_signed(vec![domain.to_owned(), format!("www.{domain}")])
        .unwrap();
    (made.cert.pem(), made.signing_key.serialize_pem())
}

/// An ACME certificate for a web domain (the Sim's CA issues it when no `[acme]` table is
/// configured).
pub fn ensure_cert(req: u64, cert: u64, account: u64, domain_id: u64) -> Value {
    json!({"request_id": id(req), "operation": "ensure_certificate",
           "resource": {"id": id(cert), "account": id(account), "web_domain": id(domain_id), "source": "acme"}})
}

/// One bundle blob for the crash matrix and the random histories: a self-signed chain for
/// `*.example.com` and its key, the same for every node of this test process. Returns the
/// bundle's text and its blob name.
pub fn shared_bundle() -> &'static (String, String) {
    static BUNDLE: std::sync::OnceLock<(String, String)> = std::sync::OnceLock::new();
    BUNDLE.get_or_init(|| {
        use sha2::Digest;
        let made = rcgen::generate_simple_self_signed(vec![
            "*.example.com".to_owned(),
            "example.com".to_owned(),
        ])
        .unwrap();
        let text = format!("{}{}", made.cert.pem(), made.signing_key.serialize_pem());
        let name = sha2::Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        (text, name)
    })
}

/// A certificate from an uploaded bundle blob (chain and key).
pub fn ensure_bundle_cert(req: u64, cert: u64, account: u64, domain_id: u64, blob: &str) -> Value {
    json!({"request_id": id(req), "operation": "ensure_certificate",
           "resource": {"id": id(cert), "account": id(account), "web_domain": id(domain_id), "source": "bundle", "blob": blob}})
}

pub fn renew_cert(req: u64, cert: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "renew_certificate", "resource": {"id": id(cert), "account": id(account)}})
}

pub fn observe_certs(req: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "observe_certificates", "resource": {"id": id(account)}})
}

pub fn remove_cert(req: u64, cert: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "remove_certificate", "resource": {"id": id(cert), "account": id(account)}})
}

pub fn remove_domain(req: u64, domain_id: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "remove_web_domain", "resource": {"id": id(domain_id), "account": id(account)}})
}

pub fn ensure_db(req: u64, db: u64, account: u64, name: &str) -> Value {
    json!({"request_id": id(req), "operation": "ensure_mysql_database",
           "resource": {"id": id(db), "account": id(account), "name": name, "charset": "utf8mb4", "collation": "utf8mb4_unicode_ci"}})
}

pub fn remove_db(req: u64, db: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "remove_mysql_database", "resource": {"id": id(db), "account": id(account)}})
}

/// `PASSWORD('secret')`.
pub const SECRET_HASH: &str = "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7";

/// Changes MariaDB behind the node's back, through the session the runner opens (the Sim
/// model, or the real server): for account 10 (`shop1`) with databases 50 (`main`) and 51
/// (`logs`), user 60 (`app`) and its grant 70 on `main`, the grant is cut to SELECT at
/// `localhost`, `logs` is dropped and the user gets a host it was never given.
pub fn tamper_mariadb(node: &Node) {
    use provider::{DbAccount, DbHost, DbName, DbUser, NativeHash, Privilege};
    let ctx = node.ctx();
    let mut db = ctx.provider.mariadb().unwrap();
    let at = |host: &str| DbAccount {
        user: DbUser::new("shop1_app").unwrap(),
        host: DbHost::new(host).unwrap(),
    };
    let main = DbName::new("shop1_main").unwrap();
    db.set_grants(&at("localhost"), &main, &[Privilege::Select].into())
        .unwrap();
    db.drop_database(&DbName::new("shop1_logs").unwrap())
        .unwrap();
    db.ensure_account(&at("%"), &NativeHash::new(SECRET_HASH).unwrap())
        .unwrap();
}

/// What [`tamper_mariadb`] is found as: (family, resource, aspect).
pub fn mariadb_drift() -> [(&'static str, String, registry::DriftAspect); 3] {
    [
        (
            "mysql_database",
            id(51),
            ops::mysql_database::MYSQL_DATABASE_MISSING,
        ),
        ("mysql_grant", id(70), ops::mysql_grant::MYSQL_GRANT_DIFFERS),
        ("mysql_user", id(60), ops::mysql_user::MYSQL_USER_DIFFERS),
    ]
}

pub fn ensure_db_user(req: u64, user: u64, account: u64, name: &str, hash: &str) -> Value {
    json!({"request_id": id(req), "operation": "ensure_mysql_user",
           "resource": {"id": id(user), "account": id(account), "name": name, "password_hash": hash, "hosts": ["localhost", "127.0.0.1"]}})
}

pub fn set_db_password(req: u64, user: u64, account: u64, hash: &str) -> Value {
    json!({"request_id": id(req), "operation": "set_mysql_user_password",
           "resource": {"id": id(user), "account": id(account), "password_hash": hash}})
}

pub fn remove_db_user(req: u64, user: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "remove_mysql_user", "resource": {"id": id(user), "account": id(account)}})
}

pub fn ensure_grant(
    req: u64,
    grant: u64,
    account: u64,
    db: u64,
    user: u64,
    privileges: &str,
) -> Value {
    json!({"request_id": id(req), "operation": "ensure_mysql_grant",
           "resource": {"id": id(grant), "account": id(account), "database": id(db), "user": id(user), "privileges": privileges}})
}

pub fn remove_grant(req: u64, grant: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "remove_mysql_grant", "resource": {"id": id(grant), "account": id(account)}})
}

pub fn set_quota(req: u64, account: u64, mib: u64) -> Value {
    json!({"request_id": id(req), "operation": "set_mysql_quota", "resource": {"id": id(account), "quota_mib": mib}})
}

pub fn set_php_version(req: u64, domain_id: u64, account: u64, version: &str) -> Value {
    json!({"request_id": id(req), "operation": "set_php_version",
           "resource": {"id": id(domain_id), "account": id(account), "version": version}})
}

pub fn remove_php_version(req: u64, domain_id: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "remove_php_version",
           "resource": {"id": id(domain_id), "account": id(account)}})
}

pub fn set_php_options(req: u64, account: u64, memory_mib: u64) -> Value {
    json!({"request_id": id(req), "operation": "set_php_options",
           "resource": {"id": id(account), "options": {"memory_limit_mib": memory_mib, "display_errors": false}}})
}

pub fn set_php_extensions(req: u64, account: u64, extensions: &[&str]) -> Value {
    json!({"request_id": id(req), "operation": "set_php_extensions",
           "resource": {"id": id(account), "extensions": extensions}})
}

pub fn ensure_redirect(
    req: u64,
    redirect: u64,
    account: u64,
    domain_id: u64,
    source: &str,
) -> Value {
    json!({"request_id": id(req), "operation": "ensure_redirect",
           "resource": {"id": id(redirect), "account": id(account), "web_domain": id(domain_id),
                        "source": source, "target": "https://new.example.com/", "status": 301}})
}

pub fn remove_redirect(req: u64, redirect: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "remove_redirect",
           "resource": {"id": id(redirect), "account": id(account)}})
}

pub fn domain_suspension(req: u64, op: &str, domain_id: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": op,
           "resource": {"id": id(domain_id), "account": id(account)}})
}

pub fn ensure_task(req: u64, task: u64, account: u64, schedule: &str) -> Value {
    json!({"request_id": id(req), "operation": "ensure_scheduled_task",
           "resource": {"id": id(task), "account": id(account), "schedule": schedule,
                        "task": {"php_script": {"path": "cron/run.php", "php_version": "8.2"}}}})
}

pub fn ensure_fetch_task(req: u64, task: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "ensure_scheduled_task",
           "resource": {"id": id(task), "account": id(account), "schedule": "@hourly",
                        "task": {"fetch_url": {"url": "https://shop.example.com/cron?k=1&x=%20", "timeout_s": 30}}}})
}

pub fn remove_task(req: u64, task: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "remove_scheduled_task",
           "resource": {"id": id(task), "account": id(account)}})
}

pub fn observe_php(node_id: &Hex32, req: u64) -> Value {
    json!({"request_id": id(req), "action": "observe_php_versions", "node_id": node_id,
           "resource": {"id": id(0xe5)}})
}

pub fn set_limits(req: u64, account: u64, cpu: u64) -> Value {
    json!({"request_id": id(req), "operation": "set_account_limits",
           "resource": {"id": id(account), "cpu_percent": cpu, "memory_mib": 1024,
                        "io_kib_per_sec": 2048, "processes": 50, "entry_processes": 10}})
}

pub fn set_isolation(req: u64, account: u64, cagefs: bool) -> Value {
    json!({"request_id": id(req), "operation": "set_account_isolation",
           "resource": {"id": id(account), "cagefs": cagefs}})
}

pub const MAIL_HASH: &str = "$6$wMTlrcvoRImGHxRB$0JepXYZ.4AWYQ7z6J/S4l8GdlIJeCNkPn3Z88n2xpNcYO34jBJGDRq.PsbL150c84w6DUAwWjw6nr/kTmrLuo.";

pub fn ensure_mail_domain(req: u64, id_: u64, account: u64, domain: &str) -> Value {
    json!({"request_id": id(req), "operation": "ensure_mail_domain",
           "resource": {"id": id(id_), "account": id(account), "domain": domain}})
}

/// An operation on a resource that takes only `{id, account}` plus `extra` fields.
pub fn mail_op(req: u64, op: &str, id_: u64, account: u64, extra: Value) -> Value {
    let mut resource = json!({"id": id(id_), "account": id(account)});
    if let (Some(r), Some(e)) = (resource.as_object_mut(), extra.as_object()) {
        r.extend(e.clone());
    }
    json!({"request_id": id(req), "operation": op, "resource": resource})
}

pub fn ensure_mailbox(req: u64, id_: u64, account: u64, domain: &str, local: &str) -> Value {
    mail_op(
        req,
        "ensure_mailbox",
        id_,
        account,
        json!({"domain": domain, "local_part": local, "password": MAIL_HASH, "quota_mib": 100}),
    )
}

pub fn ensure_forwarder(req: u64, id_: u64, account: u64, address: &str) -> Value {
    mail_op(
        req,
        "ensure_mail_forwarder",
        id_,
        account,
        json!({"address": address, "destinations": ["owner@example.org", "backup@example.net"]}),
    )
}

pub fn ensure_autoresponder(req: u64, id_: u64, account: u64, mailbox: u64) -> Value {
    mail_op(
        req,
        "ensure_autoresponder",
        id_,
        account,
        json!({"mailbox": id(mailbox), "subject": "Away", "body": "Back on Monday.", "days": 3,
               "from": "2026-01-01", "until": "2026-12-31"}),
    )
}

pub fn ensure_dkim(req: u64, id_: u64, account: u64, domain: &str) -> Value {
    mail_op(
        req,
        "ensure_dkim_key",
        id_,
        account,
        json!({"domain": domain, "selector": "mail2026", "bits": "rsa1024"}),
    )
}

pub fn set_spam(req: u64, id_: u64, account: u64, domain: &str, level: &str) -> Value {
    mail_op(
        req,
        "set_spam_filter",
        id_,
        account,
        json!({"domain": domain, "level": level}),
    )
}

pub const FTP_HASH: &str = "$6$saltsalt$aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

pub fn ensure_ftp(req: u64, ftp: u64, account: u64, login: &str, dir: Option<&str>) -> Value {
    let mut body = json!({"request_id": id(req), "operation": "ensure_ftp_account",
           "resource": {"id": id(ftp), "account": id(account), "login": login,
                        "password_hash": FTP_HASH}});
    if let Some(dir) = dir {
        body["resource"]["directory"] = json!(dir);
    }
    body
}

pub fn set_ftp_password(req: u64, ftp: u64, account: u64, hash: &str) -> Value {
    json!({"request_id": id(req), "operation": "set_ftp_account_password",
           "resource": {"id": id(ftp), "account": id(account), "password_hash": hash}})
}

pub fn remove_ftp(req: u64, ftp: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "remove_ftp_account", "resource": {"id": id(ftp), "account": id(account)}})
}

pub fn create_backup(req: u64, backup: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "create_account_backup",
           "resource": {"id": id(backup), "account": id(account)}})
}

pub fn remove_backup(req: u64, backup: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "remove_account_backup",
           "resource": {"id": id(backup), "account": id(account)}})
}

pub fn restore_backup(req: u64, restore: u64, account: u64, blob: &str) -> Value {
    json!({"request_id": id(req), "operation": "restore_account_backup",
           "resource": {"id": id(restore), "account": id(account), "blob": blob}})
}

pub fn ensure_protected(req: u64, dir: u64, account: u64, domain_id: u64, path: &str) -> Value {
    json!({"request_id": id(req), "operation": "ensure_protected_directory",
           "resource": {"id": id(dir), "account": id(account), "web_domain": id(domain_id),
                        "path": path, "realm": "Staff only",
                        "users": [{"name": "alice", "password_hash": MAIL_HASH}]}})
}

pub fn remove_protected(req: u64, dir: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "remove_protected_directory",
           "resource": {"id": id(dir), "account": id(account)}})
}

pub fn ensure_ip_block(req: u64, domain_id: u64, account: u64, networks: &[&str]) -> Value {
    json!({"request_id": id(req), "operation": "ensure_ip_block",
           "resource": {"id": id(domain_id), "account": id(account), "networks": networks}})
}

pub fn remove_ip_block(req: u64, domain_id: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "remove_ip_block",
           "resource": {"id": id(domain_id), "account": id(account)}})
}

pub fn observe_runtime(req: u64, node_id: &Hex32) -> Value {
    json!({"request_id": id(req), "action": "observe_runtime", "node_id": node_id.as_str(),
           "resource": {"id": id(0xd4)}})
}

/// A node whose runner reloads the real Apache never starts one (a reload leaves a stopped
/// Apache stopped, `Provider::apache_reload`); a test that starts Apache on the sysroot's
/// configuration ([`Node::start_apache`]) has it stopped here, with its children, when the
/// node goes, on a panic too.
impl Drop for Node {
    fn drop(&mut self) {
        let layout = self.provider.apache_layout();
        testkit::daemons::stop_apache(&self.provider.sysconf(layout.pid_file), layout.server);
    }
}

/// The real API, in this process, on the node's data directory, with its local socket (for
/// root only) in a directory of its own that anyone may enter.
pub struct Api {
    pub runtime: tokio::runtime::Runtime,
    pub api: Option<api::RunningApi>,
    pub client: client::NodeClient,
    /// What a command of the real binary needs to reach it: `--url`, `--key`, `--pin`.
    pub url: String,
    pub key: String,
    pub pin: String,
    pub local_socket: PathBuf,
    _local_dir: tempfile::TempDir,
}

impl Drop for Api {
    fn drop(&mut self) {
        if let Some(api) = self.api.take() {
            let _ = self.runtime.block_on(api.stop());
        }
    }
}

pub fn start_api(node: &Node) -> Api {
    node.pass(); // root creates state.db before the API reads it
    let tls = node.dir.path().join("tls");
    std::fs::create_dir_all(&tls).unwrap();
    let (cert, key) = api::tls::write_key_pair(&tls, "node.test").unwrap();
    let api_key = api::generate_api_key();
    let local_dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(local_dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let local_socket = local_dir.path().join("api.sock");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let api = runtime
        .block_on(api::start(api::ApiConfig {
            data_dir: node.layout.root().to_owned(),
            listen: "127.0.0.1:0".parse().unwrap(),
            tls_cert: cert.clone(),
            tls_key: key,
            key_sha256: api::key_sha256(&api_key),
            node_id: node.node_id.clone(),
            local_socket: Some(api::LocalSocket {
                path: local_socket.clone(),
                operators: api::Operators::default(),
            }),
            limits: api::Limits::default(),
        }))
        .expect("the API starts");
    let pin = api::tls::pin_sha256(&std::fs::read_to_string(&cert).unwrap()).unwrap();
    let url = format!("https://{}", api.addr);
    let client = client::NodeClient::new(&url, Some(api_key.clone()), &pin).unwrap();
    Api {
        runtime,
        api: Some(api),
        client,
        url,
        key: api_key,
        pin,
        local_socket,
        _local_dir: local_dir,
    }
}

/// The first ids of 1000-id blocks tried by [`Node::use_real_process_ids`], so tests running
/// at once pick different blocks.
fn id_block_start(seed: u64, attempt: u64) -> u32 {
    let (lo, hi) = (
        *simulator::SIM_REAL_PROCESS_UIDS.start(),
        *simulator::SIM_REAL_PROCESS_UIDS.end(),
    );
    let blocks = u64::from(hi - lo + 1) / 1000;
    let mixed = seed
        .wrapping_add(attempt)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .rotate_left(17);
    lo + ((mixed % blocks) * 1000) as u32
}

/// Whether this machine (not a sysroot) uses any id in `ids`: a user, a group, a process.
fn machine_uses_ids(ids: &std::ops::Range<u32>) -> bool {
    for file in ["/etc/passwd", "/etc/group"] {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        if text.lines().any(|l| {
            l.split(':')
                .nth(2)
                .and_then(|v| v.parse::<u32>().ok())
                .is_some_and(|id| ids.contains(&id))
        }) {
            return true;
        }
    }
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("status")).ok())
        .any(|status| {
            status
                .lines()
                .filter(|l| l.starts_with("Uid:") || l.starts_with("Gid:"))
                .flat_map(|l| l.split_whitespace().skip(1))
                .filter_map(|v| v.parse::<u32>().ok())
                .any(|id| ids.contains(&id))
        })
}

impl Node {
    /// Gives the sysroot a `login.defs` whose UID and GID ranges are one block of 1000 ids
    /// in `simulator::SIM_REAL_PROCESS_UIDS` that this machine uses for nothing (no user, no
    /// group, no process), so the node's tenants get uids whose processes may be real: a
    /// test can start processes as a tenant and a removal really kills them, without any
    /// chance of touching this machine's own users. Returns the block's first id.
    pub fn use_real_process_ids(&self) -> u32 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.dir.path().hash(&mut hasher);
        std::process::id().hash(&mut hasher);
        let seed = hasher.finish();
        let start = (0..100)
            .map(|attempt| id_block_start(seed, attempt))
            .find(|&start| !machine_uses_ids(&(start..start + 1000)))
            .expect("a block of 1000 ids this machine does not use");
        let end = start + 999;
        std::fs::write(
            self.path("/etc/login.defs"),
            format!(
                "# a block of ids unused on this machine\nUID_MIN {start}\nUID_MAX {end}\nGID_MIN {start}\nGID_MAX {end}\n"
            ),
        )
        .unwrap();
        start
    }
}

/// A tmpfs mounted over a directory for the length of a test; unmounted when dropped. Only
/// root can mount one: the full-disk tests assert they run as root (CI does) rather than skip.
pub struct Tmpfs(PathBuf);

impl Tmpfs {
    #[allow(clippy::disallowed_methods)] // The test mounts a small file system to fill.
    pub fn mount(dir: &Path, size: &str) -> Tmpfs {
        assert!(
            rustix::process::geteuid().is_root(),
            "the full-disk test mounts a tmpfs and must run as root (CI does)"
        );
        let status = std::process::Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0755"),
                "tmpfs",
            ])
            .arg(dir)
            .status()
            .unwrap();
        assert!(status.success(), "mount -t tmpfs failed: {status}");
        Tmpfs(dir.to_owned())
    }
}

impl Drop for Tmpfs {
    #[allow(clippy::disallowed_methods)] // The test's own mount, taken away again.
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// Fills the file system holding `dir` until `leave` bytes are left (the file `filler` there).
pub fn fill(dir: &Path, leave: u64) -> PathBuf {
    use std::io::Write as _;
    let filler = dir.join("filler");
    let mut file = std::fs::File::create(&filler).unwrap();
    let chunk = vec![0xa5u8; 64 * 1024];
    // Bounded: a 32 MiB file system takes at most 512 chunks.
    for _ in 0..4096 {
        let available = store::disk::available(dir).unwrap();
        if available <= leave {
            break;
        }
        let n = ((available - leave) as usize).min(chunk.len());
        if file.write_all(&chunk[..n]).is_err() {
            break;
        }
    }
    file.sync_all().unwrap();
    filler
}
