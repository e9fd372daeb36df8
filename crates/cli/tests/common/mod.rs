//! The end-to-end harness: a node in a temporary directory (a Sim sysroot and a data
//! directory), requests admitted into the real inbox exactly as the API admits them, and the
//! real `layerone-runner` binary run as a child process, optionally told to abort at a crash
//! point. Nothing here mocks the store, the lock or the transaction.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use provider::{Platform, Program, Provider, testing};
use registry::{Hex32, JobState};
use serde_json::{Value, json};
use store::{Admission, Inbox, Layout, StateDb};

pub const RUNNER: &str = env!("CARGO_BIN_EXE_layerone-runner");

pub struct Node {
    pub dir: tempfile::TempDir,
    pub layout: Layout,
    pub provider: Provider,
    pub node_id: Hex32,
    pub inbox: Option<Inbox>,
    real_apache: bool,
    /// Programs besides apachectl the runner starts for real (`--sim-real`).
    pub extra_real: Vec<&'static str>,
    /// The platform profile the runner is told (`--platform`).
    pub platform: Platform,
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
        let provider = testing::sim_provider(platform, dir.path(), real);
        testing::seed_accounts(&provider).unwrap();
        if real_apache {
            testing::require_apachectl(platform);
            testing::write_apache_test_config(&provider).unwrap();
        } else {
            provider
                .ensure_dir(
                    &provider.sysconf(provider.apache_layout().vhosts_dir),
                    0o755,
                )
                .unwrap();
        }
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
            platform,
        }
    }

    pub fn inbox(&mut self) -> &Inbox {
        if self.inbox.is_none() {
            self.inbox = Some(Inbox::open(&self.layout.inbox_db()).unwrap().0);
        }
        self.inbox.as_ref().unwrap()
    }

    /// Admits a request exactly as the API does: validated, then group-committed.
    pub fn submit(&mut self, body: &Value) -> Admission {
        let job = ops::registry()
            .validate(body.to_string().as_bytes(), &self.node_id.clone())
            .expect("a valid request");
        self.inbox().admit_blocking(job).unwrap()
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

    /// Runs the real runner binary for one pass; `crash` arms a crash point.
    pub fn run(&self, crash: Option<&str>) -> ExitStatus {
        #[allow(clippy::disallowed_methods)] // Tests start the real runner binary.
        let mut cmd = std::process::Command::new(RUNNER);
        cmd.arg("--once")
            .arg("--data-dir")
            .arg(self.layout.root())
            .arg("--root")
            .arg(self.provider.root())
            .args(["--platform", self.platform.as_str()])
            .args([
                "--backend",
                "sim",
                "--node-id",
                self.node_id.as_str(),
                "--log",
                "warn",
            ]);
        let mut real = self.extra_real.clone();
        if self.real_apache {
            real.insert(0, "apachectl");
        }
        if !real.is_empty() {
            cmd.args(["--sim-real", &real.join(",")]);
        }
        if let Some(point) = crash {
            cmd.env(crash::ENV, point);
        }
        cmd.status().expect("the runner binary starts")
    }

    /// A normal pass that must succeed.
    pub fn pass(&self) {
        let status = self.run(None);
        assert!(status.success(), "a normal runner pass failed: {status}");
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

    /// The invariants every converged node satisfies: SQLite intact, no job left pending, and
    /// the sysroot exactly what state.db records — nothing missing, nothing extra.
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
        // pure-ftpd's passwd file holds exactly the recorded FTP accounts' lines.
        let ftp_lines: BTreeSet<String> =
            std::fs::read_to_string(self.path(provider::FTP_LAYOUT.passwd))
                .unwrap_or_default()
                .lines()
                .map(|l| format!("{l}\n"))
                .collect();
        let recorded: BTreeSet<String> = of("ftp_account")
            .map(|r| r.data["line"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            ftp_lines, recorded,
            "pure-ftpd's passwd and state.db disagree"
        );
        // CloudLinux: the LVE limits and the CageFS list the Sim keeps are exactly what the
        // account rows record (empty on Debian, where neither exists).
        let lve: BTreeSet<String> = std::fs::read_to_string(self.path(provider::SIM_LVE_FILE))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect();
        let recorded: BTreeSet<String> = of("account")
            .filter(|a| !a.data["limits"].is_null())
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
        let caged: BTreeSet<String> = std::fs::read_to_string(self.path(provider::SIM_CAGEFS_FILE))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect();
        let recorded: BTreeSet<String> = of("account")
            .filter(|a| a.data["cagefs"] == true)
            .map(|a| a.data["username"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(caged, recorded, "CageFS and state.db disagree");
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
    }

    /// The runner binary's audit log (`<data>/log/audit.log`, where `layerone-runner` keeps
    /// it), not the harness provider's own.
    pub fn audit_records(&self) -> Vec<provider::AuditRecord> {
        provider::read_audit_log(&self.layout.root().join("log")).unwrap()
    }

    pub fn audit_count(&self) -> usize {
        self.audit_records().len()
    }

    pub fn root_path(&self) -> &Path {
        self.provider.root()
    }
}

pub const KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGn4w0x3qmW1b4PQ1b1pDpDkHc3uqm3n8dHTV1G4ZvDN ops@example";

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

pub fn remove_domain(req: u64, domain_id: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "remove_web_domain", "resource": {"id": id(domain_id), "account": id(account)}})
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

pub fn remove_ftp(req: u64, ftp: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "remove_ftp_account", "resource": {"id": id(ftp), "account": id(account)}})
}

pub fn observe_runtime(req: u64, node_id: &Hex32) -> Value {
    json!({"request_id": id(req), "action": "observe_runtime", "node_id": node_id.as_str(),
           "resource": {"id": id(0xd4)}})
}
