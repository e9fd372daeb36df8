//! Pebble (the ACME CA, Debian package `pebble`) and the helpers to run it: shared by the
//! installer's ACME test and the certificate family's.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A child process killed and reaped when dropped.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[allow(clippy::disallowed_methods)] // Tests start the real CA, DNS responder and Apache.
pub fn spawn(what: &'static str, program: &str, args: &[&str], env: &[(&str, &str)]) -> Running {
    let log = std::env::temp_dir().join(format!("layerone-test-{what}-{}.log", std::process::id()));
    let out = std::fs::File::create(&log).unwrap();
    let child = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .unwrap_or_else(|e| panic!("{program} ({what}): {e}; the test script installs it"));
    Running(child)
}

pub fn wait_for_port(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} did not listen on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Pebble (the ACME CA, Debian package `pebble`) with its own HTTPS certificate from a
/// throw-away CA, resolving every name to 127.0.0.1 through pebble-challtestsrv's DNS (so
/// this machine's /etc/hosts is never touched), and validating HTTP-01 on `http_port`.
pub struct Pebble {
    pub directory: String,
    pub server_root: PathBuf,
    _dns: Running,
    _ca: Running,
}

pub fn pebble(dir: &Path, http_port: u16) -> Pebble {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &issuer)
        .unwrap();
    let server_root = dir.join("pebble-root.pem");
    std::fs::write(&server_root, ca_cert.pem()).unwrap();
    std::fs::write(dir.join("pebble-cert.pem"), leaf.pem()).unwrap();
    std::fs::write(dir.join("pebble-key.pem"), leaf_key.serialize_pem()).unwrap();
    let (acme_port, mgmt_port, tls_port, dns_port, dns_mgmt) = (
        free_port(),
        free_port(),
        free_port(),
        free_port(),
        free_port(),
    );
    let config = serde_json::json!({"pebble": {
        "listenAddress": format!("127.0.0.1:{acme_port}"),
        "managementListenAddress": format!("127.0.0.1:{mgmt_port}"),
        "certificate": dir.join("pebble-cert.pem"),
        "privateKey": dir.join("pebble-key.pem"),
        "httpPort": http_port,
        "tlsPort": tls_port,
        "ocspResponderURL": "",
        "externalAccountBindingRequired": false
    }});
    let config_path = dir.join("pebble.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let dns = spawn(
        "challtestsrv",
        "pebble-challtestsrv",
        &[
            "-defaultIPv4",
            "127.0.0.1",
            "-defaultIPv6",
            "",
            "-dns01",
            &format!("127.0.0.1:{dns_port}"),
            "-http01",
            "",
            "-https01",
            "",
            "-tlsalpn01",
            "",
            "-management",
            &format!("127.0.0.1:{dns_mgmt}"),
        ],
        &[],
    );
    let ca = spawn(
        "pebble",
        "pebble",
        &[
            "-config",
            config_path.to_str().unwrap(),
            "-dnsserver",
            &format!("127.0.0.1:{dns_port}"),
        ],
        &[("PEBBLE_VA_NOSLEEP", "1"), ("PEBBLE_WFE_NONCEREJECT", "0")],
    );
    wait_for_port(dns_mgmt, "pebble-challtestsrv");
    wait_for_port(acme_port, "pebble");
    Pebble {
        directory: format!("https://127.0.0.1:{acme_port}/dir"),
        server_root,
        _dns: dns,
        _ca: ca,
    }
}
