//! A throw-away MariaDB server for tests: `mariadb-install-db` into a fresh data directory
//! under the temporary directory, then `mariadbd` with its own socket and pid file there,
//! `--skip-networking`, as a child of the test. Dropping the value stops the server and
//! removes the directory.
//!
//! Test support only: production never starts a database server. Both programs are started
//! through the real executor's one spawn of a long-running child
//! (`provider::RealExecutor::spawn_service`), since the provider's `execute()` runs a program
//! to completion and a server must keep running.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use provider::RealExecutor;

const INSTALL_DB: &str = "/usr/bin/mariadb-install-db";
const MARIADBD: &str = "/usr/sbin/mariadbd";
/// How long the server may take to open its socket.
const START_DEADLINE: Duration = Duration::from_secs(90);

/// A running throw-away server; stopped and deleted on drop.
#[derive(Debug)]
pub struct MariadbServer {
    dir: PathBuf,
    socket: PathBuf,
    child: Option<Child>,
}

/// Starts `program` with `args`, output to `log` (see the module doc).
fn spawn(program: &str, args: &[String], log: &Path) -> std::io::Result<Child> {
    let log = std::fs::File::create(log)?;
    let args: Vec<OsString> = args.iter().map(OsString::from).collect();
    RealExecutor.spawn_service(Path::new(program), &args, &log)
}

fn as_root() -> bool {
    rustix::process::geteuid().is_root()
}

impl MariadbServer {
    /// Installs a data directory and starts the server; panics with the server's log when it
    /// does not come up (a test that needs it must fail, not skip; the test script installs
    /// `mariadb-server`).
    pub fn start() -> MariadbServer {
        for program in [INSTALL_DB, MARIADBD] {
            assert!(
                Path::new(program).exists(),
                "{program} is missing: install MariaDB (`apt-get install -y mariadb-server`; the test script does this)"
            );
        }
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "layerone-mariadb-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("data")).expect("create the server directory");
        let datadir = dir.join("data");
        let socket = dir.join("mysqld.sock");
        let user: Vec<String> = if as_root() {
            vec!["--user=root".into()]
        } else {
            Vec::new()
        };

        let mut install = vec![
            "--no-defaults".to_string(),
            format!("--datadir={}", datadir.display()),
            "--auth-root-authentication-method=socket".into(),
            "--skip-test-db".into(),
        ];
        install.extend(user.iter().cloned());
        let install_log = dir.join("install.log");
        let status = spawn(INSTALL_DB, &install, &install_log)
            .and_then(|mut c| c.wait())
            .expect("run mariadb-install-db");
        assert!(
            status.success(),
            "mariadb-install-db failed ({status}): {}",
            std::fs::read_to_string(&install_log).unwrap_or_default()
        );

        let mut args = vec![
            "--no-defaults".to_string(),
            format!("--datadir={}", datadir.display()),
            format!("--socket={}", socket.display()),
            format!("--pid-file={}", dir.join("mysqld.pid").display()),
            format!("--tmpdir={}", dir.display()),
            "--skip-networking".into(),
            "--innodb-buffer-pool-size=32M".into(),
            "--innodb-log-file-size=16M".into(),
            "--skip-log-bin".into(),
        ];
        args.extend(user);
        let log = dir.join("server.log");
        let child = spawn(MARIADBD, &args, &log).expect("start mariadbd");
        let mut server = MariadbServer {
            dir,
            socket,
            child: Some(child),
        };
        server.wait_ready(&log);
        server
    }

    fn wait_ready(&mut self, log: &Path) {
        let started = Instant::now();
        for _ in 0..(START_DEADLINE.as_millis() / 100) {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                panic!(
                    "mariadbd exited ({status}) before it was ready: {}",
                    std::fs::read_to_string(log).unwrap_or_default()
                );
            }
            if self.socket.exists() && self.try_root_conn().is_ok() {
                return;
            }
            if started.elapsed() > START_DEADLINE {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "mariadbd did not open {} within {START_DEADLINE:?}: {}",
            self.socket.display(),
            std::fs::read_to_string(log).unwrap_or_default()
        );
    }

    /// The server's socket, for `Provider::with_mariadb_socket`.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// A client connection as `root` (unix-socket authentication), for a test's own checks.
    pub fn root_conn(&self) -> mysql::Conn {
        self.try_root_conn().expect("connect as root")
    }

    fn try_root_conn(&self) -> Result<mysql::Conn, mysql::Error> {
        let opts = mysql::OptsBuilder::new()
            .socket(Some(self.socket.to_string_lossy()))
            .prefer_socket(true)
            .user(Some("root"));
        mysql::Conn::new(opts)
    }

    /// A client connection as `user` with `password`, as a tenant's application would open
    /// it. `Err` is the server's refusal.
    pub fn user_conn(
        &self,
        user: &str,
        password: &str,
        db: Option<&str>,
    ) -> Result<mysql::Conn, mysql::Error> {
        let opts = mysql::OptsBuilder::new()
            .socket(Some(self.socket.to_string_lossy()))
            .prefer_socket(true)
            .user(Some(user))
            .pass(Some(password))
            .db_name(db);
        mysql::Conn::new(opts)
    }
}

impl Drop for MariadbServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SIGTERM is a clean shutdown; bounded, then SIGKILL.
            if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            }
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                match child.try_wait() {
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) if Instant::now() > deadline => {
                        let _ = child.kill();
                        let _ = child.wait();
                        break;
                    }
                    Ok(None) => std::thread::sleep(Duration::from_millis(50)),
                }
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
