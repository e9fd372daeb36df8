//! A node's web tier on the machine's real daemons: PHP-FPM 8.2 running each tenant's own
//! master from the sysroot, and Apache (mpm-itk) serving the node's vhosts and include on a free loopback
//! port (and their HTTPS virtual hosts on another), with the modules an installed node loads:
//! the distribution's enabled set with the installer's changes applied ([`node_modules`]).
//! Stopped when dropped, each with every process it started (`testkit::daemons`).
//!
//! Both start as root, as on a server: FPM's children become each pool's tenant, Apache's
//! request children become each vhost's tenant (`AssignUserID`).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use std::time::{Duration, Instant};

use super::Node;

const APACHE: &str = "/usr/sbin/apache2";
const PHP_FPM: &str = "/usr/sbin/php-fpm8.2";
const MODS_ENABLED: &str = "/etc/apache2/mods-enabled";
const MODS_AVAILABLE: &str = "/etc/apache2/mods-available";

pub struct RealWeb {
    pub dir: PathBuf,
    pub port: u16,
    /// Where the vhosts' `*:443` virtual hosts are served.
    pub tls_port: u16,
    conf: PathBuf,
    /// One FPM master per tenant configuration, as systemd runs them on a node
    /// (`php8.2-fpm@<uid>.service`), each in its own process group: its workers, running as
    /// the tenant, stop with it.
    fpm: Vec<testkit::daemons::GroupChild>,
}

/// An HTTP response: status, headers and body as text.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub head: String,
    pub body: String,
}

/// Panics with what to install when the machine lacks a daemon the tests need (the test
/// script installs them).
pub fn require_web_daemons() {
    assert!(
        rustix::process::geteuid().is_root(),
        "the real-web tests run as root (CI does): Apache and FPM become the tenants"
    );
    for (path, package) in [
        (APACHE, "apache2"),
        (PHP_FPM, "php8.2-fpm"),
        (
            "/etc/apache2/mods-enabled/mpm_itk.load",
            "libapache2-mpm-itk",
        ),
    ] {
        assert!(
            Path::new(path).exists(),
            "{path} is missing: install {package} (the test script does)"
        );
    }
}

impl RealWeb {
    /// Starts FPM on the sysroot's pools and Apache on the sysroot's vhosts. The node's
    /// include (the homes' symlink rule) is rendered for the sysroot's `/home`.
    pub fn start(node: &Node) -> RealWeb {
        require_web_daemons();
        let dir = node.dir.path().join("real-web");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("vhosts")).unwrap();
        let fpm = start_fpm(node, &dir);
        let port = free_port();
        let mut tls_port = free_port();
        while tls_port == port {
            tls_port = free_port();
        }
        let from = node.path(node.provider.apache_layout().vhosts_dir);
        let mut tls = false;
        for entry in std::fs::read_dir(&from).unwrap() {
            let entry = entry.unwrap();
            let text = std::fs::read_to_string(entry.path()).unwrap();
            let text = text
                .replace("<VirtualHost *:80>", &format!("<VirtualHost *:{port}>"))
                .replace(
                    "<VirtualHost *:443>",
                    &format!("<VirtualHost *:{tls_port}>"),
                );
            tls |= text.contains(&format!("<VirtualHost *:{tls_port}>"));
            std::fs::write(dir.join("vhosts").join(entry.file_name()), text).unwrap();
        }
        let d = dir.display();
        // `APACHE_RUN_DIR` is what Debian's `envvars` gives the modules' files (mod_ssl's
        // session cache).
        let mut conf = format!(
            "ServerRoot \"/etc/apache2\"\nDefine APACHE_RUN_DIR \"{d}\"\n\
             DefaultRuntimeDir \"{d}\"\nPidFile \"{d}/httpd.pid\"\n\
             Mutex file:{d} default\nErrorLog \"{d}/error.log\"\nLogLevel warn\n\
             ServerName localhost\nListen 127.0.0.1:{port}\nUser www-data\nGroup www-data\n"
        );
        for file in module_files(&node_modules()) {
            conf.push_str(&format!("Include {}\n", file.display()));
        }
        conf.push_str(&install::web::home_directory_rules(
            &node.path("/home").display().to_string(),
        ));
        if tls {
            conf.push_str(&format!("Listen 127.0.0.1:{tls_port}\n"));
        }
        conf.push_str(&format!("IncludeOptional \"{d}/vhosts/*.conf\"\n"));
        let conf_path = dir.join("serve.conf");
        std::fs::write(&conf_path, conf).unwrap();
        super::start_apache(APACHE, &conf_path);
        wait_listening(port);
        RealWeb {
            dir,
            port,
            tls_port,
            conf: conf_path,
            fpm,
        }
    }

    /// The configuration file Apache was started with.
    pub fn conf(&self) -> &Path {
        &self.conf
    }

    /// `GET path` on `host`, with extra header lines.
    pub fn get(&self, host: &str, path: &str, headers: &[&str]) -> Response {
        self.request("GET", host, path, headers, "")
    }

    /// `POST path` on `host` with `body`, with extra header lines.
    pub fn post(&self, host: &str, path: &str, headers: &[&str], body: &str) -> Response {
        self.request("POST", host, path, headers, body)
    }

    fn request(
        &self,
        method: &str,
        host: &str,
        path: &str,
        headers: &[&str],
        body: &str,
    ) -> Response {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut request = format!("{method} {path} HTTP/1.0\r\nHost: {host}\r\n");
        for h in headers {
            request.push_str(h);
            request.push_str("\r\n");
        }
        if method != "GET" {
            request.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        request.push_str("\r\n");
        request.push_str(body);
        stream.write_all(request.as_bytes()).unwrap();
        let mut raw = Vec::new();
        stream.take(1 << 20).read_to_end(&mut raw).unwrap();
        let text = String::from_utf8_lossy(&raw).into_owned();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP response: {text}"));
        Response {
            status,
            head: head.to_owned(),
            body: body.to_owned(),
        }
    }

    /// Apache's error log so far.
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default()
    }
}

impl Drop for RealWeb {
    fn drop(&mut self) {
        testkit::daemons::stop_apache(&self.dir.join("httpd.pid"), APACHE);
        // Each FPM master, then its workers, by dropping the guards.
        self.fpm.clear();
    }
}

/// The modules an installed node loads: those the distribution enables (this machine's
/// `mods-enabled`, as the package left it), without those the installer disables
/// (`provider::SHARED_STATE_MODULES`, the MPMs of `install::services::apache::EXCLUDED`),
/// with those it enables (`install::services::apache::MODULES`, `mod_ssl` among them).
/// Sorted by name, as `apache2.conf`'s `mods-enabled/*.load` reads them.
pub fn node_modules() -> Vec<String> {
    let disabled = |m: &str| {
        provider::SHARED_STATE_MODULES.contains(&m)
            || install::services::apache::EXCLUDED.contains(&m)
    };
    let mut names: Vec<String> = std::fs::read_dir(MODS_ENABLED)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".load").map(str::to_owned)
        })
        .chain(
            install::services::apache::MODULES
                .iter()
                .map(|m| (*m).to_owned()),
        )
        .filter(|m| !disabled(m))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Every module's `.load`, then every `.conf` the package ships, from `mods-available` as
/// `a2enmod` links them. A module the installer enables that the machine lacks fails the
/// test: it would leave its directives out of what the tests see.
fn module_files(modules: &[String]) -> Vec<PathBuf> {
    let available = Path::new(MODS_AVAILABLE);
    let load: Vec<PathBuf> = modules
        .iter()
        .map(|m| {
            let path = available.join(format!("{m}.load"));
            assert!(
                path.is_file(),
                "{} is missing: the node enables module {m} (packages apache2, libapache2-mpm-itk)",
                path.display()
            );
            path
        })
        .collect();
    let conf = modules
        .iter()
        .map(|m| available.join(format!("{m}.conf")))
        .filter(|p| p.is_file());
    load.into_iter().chain(conf).collect()
}

/// Starts one FPM master per tenant configuration the node wrote in the sysroot, as systemd
/// starts `php8.2-fpm@<uid>.service` on a node, and waits for every pool's socket.
fn start_fpm(node: &Node, dir: &Path) -> Vec<testkit::daemons::GroupChild> {
    let layout = node.provider.php_fpm_layout(provider::PhpVersion::V8_2);
    let configs_dir = node.path(
        layout
            .tenant_dir
            .as_deref()
            .expect("Debian has tenant masters"),
    );
    let mut configs: Vec<PathBuf> = std::fs::read_dir(&configs_dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "conf"))
                .collect()
        })
        .unwrap_or_default();
    configs.sort();
    std::fs::create_dir_all(node.path(&layout.socket_dir)).unwrap();
    let mut masters = Vec::new();
    let mut wanted = Vec::new();
    for conf in configs {
        let text = std::fs::read_to_string(&conf).unwrap();
        let log = dir.join(format!(
            "fpm-{}.log",
            conf.file_stem().unwrap().to_string_lossy()
        ));
        #[allow(clippy::disallowed_methods)] // The test starts the real FPM it checks.
        let child = Command::new(PHP_FPM)
            .arg("-F")
            .arg("-y")
            .arg(&conf)
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .process_group(0)
            .spawn()
            .unwrap();
        masters.push(testkit::daemons::GroupChild::new(child));
        if let Some(socket) = text.lines().find_map(|l| l.strip_prefix("listen = ")) {
            wanted.push((PathBuf::from(socket), log));
        }
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    for (socket, log) in wanted {
        while !socket.exists() {
            assert!(
                Instant::now() < deadline,
                "php-fpm did not open {}: {}",
                socket.display(),
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    masters
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_listening(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "apache did not start listening");
        std::thread::sleep(Duration::from_millis(50));
    }
}
