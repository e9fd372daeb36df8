//! A node installed by the real `layerone install --root` into a sysroot: every unit it
//! writes passes `systemd-analyze verify` against that root, and the API started exactly as
//! its unit says (ExecStart, EnvironmentFile, User, LoadCredential) serves the certificate
//! whose pin the installer printed and accepts the key it printed.
//!
//! These tests need root (the installer creates a system user and sets owners), as CI has.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt, chown};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use provider::Platform;

use crate::common;
use common::acme_ca::{free_port, pebble, wait_for_port};

const LAYERONE: &str = env!("CARGO_BIN_EXE_layerone");

fn at(root: &Path, system_path: &str) -> PathBuf {
    root.join(system_path.trim_start_matches('/'))
}

#[allow(clippy::disallowed_methods)] // Tests run the real binaries and systemd's own tools.
fn run(program: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"))
}

/// What `layerone install` printed: `key value` lines.
fn printed(out: &Output) -> BTreeMap<String, String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once("  ")?;
            Some((k.trim().to_owned(), v.trim().to_owned()))
        })
        .collect()
}

/// A fresh sysroot (account databases only), traversable by the API's user, installed by the
/// real CLI listening on `listen`.
fn installed(listen: &str) -> (tempfile::TempDir, PathBuf, BTreeMap<String, String>) {
    assert!(
        rustix::process::geteuid().is_root(),
        "these tests must run as root (CI does): the installer creates a system user"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let seeder = testkit::sim_provider(Platform::Debian, dir.path(), vec![]);
    testkit::seed_accounts(&seeder).unwrap();
    let root = dir.path().join("root");
    let out = run(
        LAYERONE,
        &[
            "install",
            "--root",
            root.to_str().unwrap(),
            "--name",
            "node1.example.test",
            "--listen",
            listen,
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "install failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info = printed(&out);
    assert!(
        info.contains_key("pin") && info.contains_key("api key"),
        "{info:?}"
    );
    (dir, root, info)
}

#[test]
fn every_unit_the_installer_writes_passes_systemd_analyze_verify() {
    let (_dir, root, _) = installed("127.0.0.1:8443");
    // What the package puts beside the units: the binaries the units start (the ones this
    // build made) and the man page their Documentation= names. verify checks both in the root.
    std::fs::create_dir_all(at(&root, "/usr/bin")).unwrap();
    for (name, built) in [
        ("layerone", Path::new(LAYERONE)),
        ("layerone-api", common::API.as_path()),
        ("layerone-runner", common::PACKAGED_RUNNER.as_path()),
        // What the API unit's ExecStartPre= runs, from this machine's coreutils.
        ("install", Path::new("/usr/bin/install")),
    ] {
        std::fs::copy(built, at(&root, &format!("/usr/bin/{name}"))).unwrap();
    }
    let man = at(&root, "/usr/share/man/man8");
    std::fs::create_dir_all(&man).unwrap();
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::copy(
        workspace.join("packaging/man/layerone.8"),
        man.join("layerone.8"),
    )
    .unwrap();
    // The targets the units' default dependencies name, from this machine's systemd.
    for entry in std::fs::read_dir("/usr/lib/systemd/system").unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "target") {
            let to = at(&root, "/usr/lib/systemd/system").join(path.file_name().unwrap());
            if !to.exists() {
                std::fs::copy(&path, to).unwrap();
            }
        }
    }
    let manpath = at(&root, "/usr/share/man");
    let verify = |unit: &str| {
        run(
            "systemd-analyze",
            &["verify", &format!("--root={}", root.display()), unit],
            &[("MANPATH", manpath.to_str().unwrap())],
        )
    };
    for (unit, _) in install::units::UNITS {
        let out = verify(unit);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stderr.trim().is_empty(),
            "{unit}: {stderr}"
        );
    }
    // The check is not a rubber stamp: a misspelt key, and a binary that is not there, fail it.
    let api_unit =
        std::fs::read_to_string(at(&root, "/usr/lib/systemd/system/layerone-api.service")).unwrap();
    std::fs::write(
        at(&root, "/usr/lib/systemd/system/typo.service"),
        api_unit.replace("ProtectSystem=", "ProtectSystm="),
    )
    .unwrap();
    let out = verify("typo.service");
    assert!(String::from_utf8_lossy(&out.stderr).contains("ProtectSystm"));
    std::fs::remove_file(at(&root, "/usr/bin/layerone-runner")).unwrap();
    let out = verify("layerone-runner.service");
    assert!(!out.status.success(), "verify passed without the binary");
}

/// The API started as its unit says, in the sysroot: ExecStart with the EnvironmentFile's
/// variables, User/Group from the unit, `%d` a credentials directory holding a copy of the
/// key as systemd's LoadCredential makes it, and every system path mapped under the root.
struct UnitApi {
    child: Child,
    _credentials: tempfile::TempDir,
}

impl Drop for UnitApi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_as_unit(root: &Path) -> UnitApi {
    let unit =
        std::fs::read_to_string(at(root, "/usr/lib/systemd/system/layerone-api.service")).unwrap();
    let value = |key: &str| {
        unit.lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("the unit has no {key}="))
            .to_owned()
    };
    let env_text = std::fs::read_to_string(at(root, &value("EnvironmentFile"))).unwrap();
    let env: BTreeMap<&str, &str> = env_text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.split_once('='))
        .collect();
    let user = value("User");
    let passwd = std::fs::read_to_string(at(root, "/etc/passwd")).unwrap();
    let fields: Vec<&str> = passwd
        .lines()
        .find(|l| l.starts_with(&format!("{user}:")))
        .unwrap()
        .split(':')
        .collect();
    let (uid, gid): (u32, u32) = (fields[2].parse().unwrap(), fields[3].parse().unwrap());

    let (cred_name, cred_source) = value("LoadCredential")
        .split_once(':')
        .map(|(n, s)| (n.to_owned(), s.to_owned()))
        .unwrap();
    let credentials = tempfile::tempdir().unwrap();
    let cred = credentials.path().join(&cred_name);
    std::fs::copy(at(root, &cred_source), &cred).unwrap();
    std::fs::set_permissions(&cred, std::fs::Permissions::from_mode(0o400)).unwrap();
    chown(&cred, Some(uid), Some(gid)).unwrap();
    chown(credentials.path(), Some(uid), Some(gid)).unwrap();

    // ExecStartPre=: root's `install -d` of the socket's directory, its user and group read
    // from the sysroot's databases.
    let pre = value("ExecStartPre");
    let pre: Vec<&str> = pre.split_whitespace().collect();
    assert_eq!(
        pre[..3],
        ["+/usr/bin/install", "-d", "-m"],
        "unexpected ExecStartPre"
    );
    let id_of = |file: &str, name: &str| -> u32 {
        std::fs::read_to_string(at(root, file))
            .unwrap()
            .lines()
            .find_map(|l| {
                let f: Vec<&str> = l.split(':').collect();
                (f[0] == name).then(|| f[2].parse().unwrap())
            })
            .unwrap_or_else(|| panic!("{name} is not in the sysroot's {file}"))
    };
    let dir = at(root, pre[8]);
    std::fs::create_dir_all(&dir).unwrap();
    chown(
        &dir,
        Some(id_of("/etc/passwd", pre[5])),
        Some(id_of("/etc/group", pre[7])),
    )
    .unwrap();
    let mode = u32::from_str_radix(pre[3], 8).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();

    let exec = value("ExecStart");
    let mut words = exec.split_whitespace().map(|w| {
        let mut w = w.to_owned();
        for (k, v) in &env {
            w = w.replace(&format!("${{{k}}}"), v);
        }
        w.replace("%d", credentials.path().to_str().unwrap())
    });
    let program = words.next().unwrap();
    assert_eq!(program, "/usr/bin/layerone-api");
    let args: Vec<String> = words
        .map(|w| {
            if w.starts_with('/') && !w.starts_with(credentials.path().to_str().unwrap()) {
                at(root, &w).to_string_lossy().into_owned()
            } else {
                w
            }
        })
        .collect();
    #[allow(clippy::disallowed_methods)] // Tests start the real API binary.
    let child = Command::new(&*common::API)
        .args(&args)
        .uid(uid)
        .gid(gid)
        .spawn()
        .expect("the API binary starts");
    UnitApi {
        child,
        _credentials: credentials,
    }
}

#[test]
fn an_installed_node_serves_the_printed_pin_and_accepts_the_printed_key() {
    let port = free_port();
    let (_dir, root, info) = installed(&format!("127.0.0.1:{port}"));
    let _api = start_as_unit(&root);
    let url = format!("https://127.0.0.1:{port}");
    wait_healthy(&url, &info["pin"]);
    let client = client::NodeClient::new(&url, Some(info["api key"].clone()), &info["pin"])
        .unwrap()
        .with_timeout(Duration::from_secs(5));
    // The printed key is the one whose hash the node holds.
    client.catalogue().expect("the printed key is accepted");
    let wrong = client::NodeClient::new(&url, Some(api::generate_api_key()), &info["pin"]).unwrap();
    assert_eq!(wrong.catalogue().unwrap_err().status(), Some(401));
    // A pin other than the printed one is refused before anything is sent.
    let other_pin = "00".repeat(32);
    let unpinned = client::NodeClient::new(&url, None, &other_pin).unwrap();
    assert!(unpinned.health().is_err());
}

/// `layerone tls rotate-key` in `root`, with its printed `key value` lines.
fn rotate_key(root: &Path, confirm: bool) -> (Output, BTreeMap<String, String>) {
    let mut args = vec!["tls", "rotate-key", "--root", root.to_str().unwrap()];
    if confirm {
        args.push("--confirm");
    }
    let out = run(LAYERONE, &args, &[]);
    let info = printed(&out);
    (out, info)
}

/// Waits (bounded) until a client pinned to `pin` gets a 200 from /v1/health.
fn wait_healthy(url: &str, pin: &str) {
    let client = client::NodeClient::new(url, None, pin)
        .unwrap()
        .with_timeout(Duration::from_secs(5));
    let deadline = Instant::now() + Duration::from_secs(20);
    while !matches!(client.health(), Ok((200, _))) {
        assert!(
            Instant::now() < deadline,
            "the API did not answer a client pinned to {pin}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn pin_refused(url: &str, pin: &str) -> bool {
    matches!(
        client::NodeClient::new(url, None, pin).unwrap().health(),
        Err(client::ClientError::Tls(
            client::TlsError::PinMismatch { .. }
        ))
    )
}

#[test]
fn a_key_rotation_serves_the_old_key_until_it_is_confirmed() {
    let port = free_port();
    let (_dir, root, info) = installed(&format!("127.0.0.1:{port}"));
    let url = format!("https://127.0.0.1:{port}");
    let old_pin = info["pin"].clone();
    assert!(old_pin.starts_with("spki-sha256:"), "{old_pin}");
    // Confirming before anything is prepared is a typed error that changes nothing.
    let (out, _) = rotate_key(&root, true);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("[no_rotation]"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let api = start_as_unit(&root);
    wait_healthy(&url, &old_pin);
    let (out, prepared) = rotate_key(&root, false);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let new_pin = prepared["next pin"].clone();
    assert!(
        new_pin.starts_with("spki-sha256:") && new_pin != old_pin,
        "{new_pin}"
    );
    assert_eq!(prepared["pin"], old_pin, "the served pin is printed beside");
    // Preparing again keeps the prepared key: the pin handed to the control plane holds.
    let (_, again) = rotate_key(&root, false);
    assert_eq!(again["next pin"], new_pin);
    let status = printed(&run(
        LAYERONE,
        &["status", "--root", root.to_str().unwrap()],
        &[],
    ));
    assert_eq!(status["pin"], old_pin);
    assert!(status["next pin"].starts_with(&new_pin), "{status:?}");
    assert_eq!(status["drift"], "none");
    // Until the confirmation the API serves the old key, even started again.
    drop(api);
    let api = start_as_unit(&root);
    wait_healthy(&url, &old_pin);
    assert!(
        pin_refused(&url, &new_pin),
        "the new key is served before the confirmation"
    );

    let (out, confirmed) = rotate_key(&root, true);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(confirmed["pin"], new_pin);
    // The confirmation restarts the unit; a sysroot has no systemd, so start it as the unit
    // would be.
    drop(api);
    let _api = start_as_unit(&root);
    wait_healthy(&url, &new_pin);
    assert!(pin_refused(&url, &old_pin), "the old key is still served");
    assert!(
        pin_refused(&url, &info["cert pin"]),
        "the old certificate is still served"
    );
    assert!(!at(&root, "/etc/layerone/tls/next-key.pem").exists());
    let key = std::fs::metadata(at(&root, "/etc/layerone/tls/key.pem")).unwrap();
    assert_eq!(key.permissions().mode() & 0o777, 0o600);
    assert_eq!((key.uid(), key.gid()), (0, 0));
    // The next install keeps the rotated pair.
    assert_eq!(install_cli(&root, &[])["pin"], new_pin);
}

/// The real Apache serving a sysroot's configuration as a daemon (so that the installer's
/// graceful reload reaches it), stopped with its children when dropped.
struct Apache {
    config: testkit::ApacheTestConfig,
}

impl Drop for Apache {
    fn drop(&mut self) {
        testkit::daemons::stop_apache(&self.config.pid_file, "/usr/sbin/apache2");
    }
}

/// A sysroot with Apache's test configuration, Apache running on it (on a free loopback
/// port), and the node installed into it.
fn installed_with_apache(
    api_port: u16,
) -> (tempfile::TempDir, PathBuf, BTreeMap<String, String>, Apache) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let seeder = testkit::sim_provider(Platform::Debian, dir.path(), vec![]);
    testkit::seed_accounts(&seeder).unwrap();
    testkit::require_apachectl(Platform::Debian);
    let config = testkit::write_apache_test_config(&seeder).unwrap();
    let out = run(
        "/usr/sbin/apache2",
        &["-f", config.main_config.to_str().unwrap(), "-k", "start"],
        &[],
    );
    assert!(
        out.status.success(),
        "apache: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let apache = Apache { config };
    wait_for_port(apache.config.listen.port(), "apache");
    let root = dir.path().join("root");
    let info = install_cli(
        &root,
        &[
            "--name",
            "node1.example.test",
            "--listen",
            &format!("127.0.0.1:{api_port}"),
        ],
    );
    (dir, root, info, apache)
}

fn install_cli(root: &Path, extra: &[&str]) -> BTreeMap<String, String> {
    let mut args = vec!["install", "--root", root.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = run(LAYERONE, &args, &[]);
    assert!(
        out.status.success(),
        "install failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut info = printed(&out);
    info.insert(
        "stdout".into(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    );
    info
}

fn add_acme(root: &Path, directory: &str, server_root: &Path, http_port: u16) {
    let path = at(root, "/etc/layerone/config.toml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&format!(
        "\n[acme]\ndirectory = \"{directory}\"\nserver_root = \"{}\"\nhttp_port = {http_port}\n",
        server_root.display()
    ));
    std::fs::write(&path, text).unwrap();
}

fn cert_pem(root: &Path) -> String {
    std::fs::read_to_string(at(root, "/etc/layerone/tls/cert.pem")).unwrap()
}

#[test]
fn acme_issues_through_apache_and_pebble_and_the_api_serves_the_printed_pin() {
    let api_port = free_port();
    let (dir, root, first, apache) = installed_with_apache(api_port);
    let vhost = at(&root, "/etc/apache2/layerone/vhosts/000-layerone-node.conf");
    assert!(vhost.is_file(), "{}", first["stdout"]);
    let placeholder_pin = first["pin"].clone();
    assert!(acme::is_self_signed(&cert_pem(&root)).unwrap());

    let ca = pebble(dir.path(), apache.config.listen.port());
    add_acme(
        &root,
        &ca.directory,
        &ca.server_root,
        apache.config.listen.port(),
    );
    // The vhost now answers challenges on Apache's port; the certificate is issued.
    let second = install_cli(&root, &[]);
    assert!(
        second["stdout"].contains("request a certificate for node1.example.test"),
        "{}",
        second["stdout"]
    );
    let cert = cert_pem(&root);
    assert!(
        !acme::is_self_signed(&cert).unwrap(),
        "still the placeholder"
    );
    assert!(cert.matches("BEGIN CERTIFICATE").count() >= 2, "a chain");
    // The certificate was issued for the key in place: the key pin printed first stays, the
    // certificate pin is the new certificate's.
    let pin = second["pin"].clone();
    assert_eq!(
        pin, placeholder_pin,
        "the key pin changed with the issuance"
    );
    assert_eq!(pin, api::tls::pin_spki_sha256(&cert).unwrap());
    assert_ne!(second["cert pin"], first["cert pin"]);
    assert_eq!(second["cert pin"], api::tls::pin_sha256(&cert).unwrap());
    // No challenge response is left behind.
    let challenges = at(
        &root,
        "/var/lib/layerone/acme-challenge/.well-known/acme-challenge",
    );
    assert_eq!(std::fs::read_dir(challenges).unwrap().count(), 0);
    for (secret, mode) in [
        ("/etc/layerone/tls/key.pem", 0o600),
        ("/etc/layerone/acme-account.json", 0o600),
    ] {
        let meta = std::fs::metadata(at(&root, secret)).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, mode, "{secret}");
        assert_eq!((meta.uid(), meta.gid()), (0, 0), "{secret}");
    }

    // The API started as its unit says serves it: a client pinning the printed pin connects.
    let _api = start_as_unit(&root);
    wait_healthy(&format!("https://127.0.0.1:{api_port}"), &pin);
    let old = client::NodeClient::new(
        &format!("https://127.0.0.1:{api_port}"),
        None,
        &first["cert pin"],
    )
    .unwrap();
    assert!(old.health().is_err(), "the placeholder is no longer served");
    // A control plane holding the new certificate's pin (the older form) still connects.
    let by_certificate = client::NodeClient::new(
        &format!("https://127.0.0.1:{api_port}"),
        None,
        &second["cert pin"],
    )
    .unwrap();
    assert!(matches!(by_certificate.health(), Ok((200, _))));

    // Valid for long enough: the next run changes nothing.
    let third = install_cli(&root, &[]);
    assert!(
        third["stdout"].starts_with("nothing changed"),
        "{}",
        third["stdout"]
    );
    assert_eq!(third["pin"], pin);
    assert_eq!(third["cert pin"], second["cert pin"]);
}

#[test]
fn an_unreachable_ca_keeps_the_placeholder() {
    let api_port = free_port();
    let (dir, root, first, apache) = installed_with_apache(api_port);
    let before = cert_pem(&root);
    let unused = dir.path().join("no-such-root.pem");
    std::fs::write(&unused, before.as_bytes()).unwrap();
    let closed = free_port();
    add_acme(
        &root,
        &format!("https://127.0.0.1:{closed}/dir"),
        &unused,
        apache.config.listen.port(),
    );
    let second = install_cli(&root, &[]);
    assert!(
        second["stdout"].contains("note: ACME failed, keeping the current certificate"),
        "{}",
        second["stdout"]
    );
    assert_eq!(cert_pem(&root), before);
    assert_eq!(second["pin"], first["pin"]);
    // The API still starts with the placeholder and serves the pin printed first.
    let _api = start_as_unit(&root);
    let client = client::NodeClient::new(
        &format!("https://127.0.0.1:{api_port}"),
        None,
        &first["pin"],
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !matches!(client.health(), Ok((200, _))) {
        assert!(
            Instant::now() < deadline,
            "the API did not start on the placeholder"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn status_reports_drift_units_the_certificate_and_the_last_pass_with_its_failed_steps() {
    let (_dir, root, info) = installed("127.0.0.1:8443");
    let status = |root: &Path| {
        let out = run(LAYERONE, &["status", "--root", root.to_str().unwrap()], &[]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let first = status(&root);
    assert!(first.contains("installed  yes\n"), "{first}");
    assert!(first.contains("drift      none\n"), "{first}");
    assert!(
        first.contains(&format!("pin        {}\n", info["pin"])),
        "{first}"
    );
    assert!(first.contains("(self-signed placeholder)"), "{first}");
    assert!(first.contains("last pass  none yet"), "{first}");
    let unit_state = |text: &str, unit: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(unit))
            .and_then(|l| l.split_whitespace().nth(1).map(str::to_owned))
            .unwrap_or_else(|| panic!("{unit} not listed: {text}"))
    };
    assert_eq!(unit_state(&first, "layerone-api.service"), "enabled");
    assert_eq!(unit_state(&first, "layerone-runner.timer"), "enabled");
    assert_eq!(
        unit_state(&first, "layerone-runner-watch.service"),
        "disabled"
    );

    // A pass of the real runner whose ingest step fails on a corrupt inbox.
    std::fs::write(
        at(&root, "/var/lib/layerone/inbox/inbox.db"),
        b"this is not a database, and not of the API's making",
    )
    .unwrap();
    let data = at(&root, "/var/lib/layerone");
    let out = run(
        common::RUNNER.to_str().unwrap(),
        &[
            "--once",
            "--data-dir",
            data.to_str().unwrap(),
            "--root",
            root.to_str().unwrap(),
            "--node-id",
            &info["node id"],
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::set_permissions(
        at(&root, "/var/lib/layerone/state"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let second = status(&root);
    assert!(second.contains("1 failed step(s)"), "{second}");
    assert!(second.contains("\n  ingest: "), "{second}");
    assert!(
        second.contains("drift      1 change(s)") && second.contains("set /var/lib/layerone/state"),
        "{second}"
    );

    let (_empty, fresh) = {
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("root");
        std::fs::create_dir(&fresh).unwrap();
        (dir, fresh)
    };
    let none = status(&fresh);
    assert!(none.starts_with("installed  no"), "{none}");
    assert_eq!(unit_state(&none, "layerone-api.service"), "not-found");
}

/// The abusive source of the front's attack: another loopback address.
const ABUSER: std::net::IpAddr = std::net::IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 2));

/// A TCP connection to `to` from `source`, bound before it connects.
fn connect_from(source: std::net::IpAddr, to: std::net::SocketAddr) -> std::net::TcpStream {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(std::net::SocketAddr::new(source, 0)).unwrap();
        let stream = tokio::time::timeout(Duration::from_secs(10), socket.connect(to))
            .await
            .expect("a connection before the bound")
            .expect("a connection");
        let stream = stream.into_std().unwrap();
        stream.set_nonblocking(false).unwrap();
        stream
    })
}

/// Reads whatever the server sent on a non-blocking stream (a 408, an alert): whether it has
/// closed the connection since.
fn server_closed(stream: &mut impl std::io::Read) -> bool {
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
}

/// The front the installer configures, attacked. Apache serves the installer's own vhost
/// (its `*:443` rebound to the test Apache's loopback port, the only change: the test Apache
/// cannot bind 443) in front of the API started as its unit says. From 127.0.0.2: 100 TLS
/// handshakes stopped after two bytes and 100 request heads trickled through TLS, a byte
/// every 500 ms. Meanwhile a well-behaved client on 127.0.0.1 asks for health and submits
/// jobs through the proxy and gets every answer, and Apache's `RequestReadTimeout` closes
/// every one of the abuser's connections (handshake 5 s, header 10 s at under 500 bytes/s),
/// none of which ever reaches the API. The client's slowest answer is printed, not asserted.
#[test]
fn the_apache_front_cuts_off_slow_handshakes_and_trickled_heads_and_serves_the_others() {
    use std::io::Write;
    const SLOW: usize = 100;
    const BOUND: Duration = Duration::from_secs(60);

    let api_port = free_port();
    let (_dir, root, info, apache) = installed_with_apache(api_port);
    let vhost_path = at(&root, "/etc/apache2/layerone/vhosts/000-layerone-node.conf");
    let vhost = std::fs::read_to_string(&vhost_path).expect("the installer wrote the vhost");
    assert!(vhost.contains("RequestReadTimeout"), "{vhost}");
    let front = apache.config.listen;
    std::fs::write(
        &vhost_path,
        vhost.replace(
            "<VirtualHost *:443>",
            &format!("<VirtualHost *:{}>", front.port()),
        ),
    )
    .unwrap();
    let main_config = apache.config.main_config.to_str().unwrap();
    let out = run(
        "/usr/sbin/apache2",
        &["-f", main_config, "-k", "graceful"],
        &[],
    );
    assert!(
        out.status.success(),
        "apache graceful: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _api = start_as_unit(&root);
    let pin = &info["pin"];
    wait_healthy(&format!("https://127.0.0.1:{api_port}"), pin);
    let front_url = format!("https://{front}");
    wait_healthy(&front_url, pin);
    let client = client::NodeClient::new(&front_url, Some(info["api key"].clone()), pin)
        .unwrap()
        .with_timeout(BOUND);

    let tls = client::pin::client_config(client::pin::parse_pin(pin).unwrap()).unwrap();
    let mut handshakes: Vec<(std::net::TcpStream, bool)> = (0..SLOW)
        .map(|_| {
            let mut tcp = connect_from(ABUSER, front);
            // Half a ClientHello record header, then silence.
            tcp.write_all(&[0x16, 0x03]).unwrap();
            tcp.set_nonblocking(true).unwrap();
            (tcp, false)
        })
        .collect();
    type Tls = rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream>;
    let mut heads: Vec<(Tls, bool)> = (0..SLOW)
        .map(|_| {
            let tcp = connect_from(ABUSER, front);
            let conn = rustls::ClientConnection::new(
                tls.clone(),
                rustls::pki_types::ServerName::try_from("node1.example.test").unwrap(),
            )
            .unwrap();
            let mut stream = rustls::StreamOwned::new(conn, tcp);
            stream
                .write_all(b"GET /v1/health HTTP/1.1\r\nHost: node1.example.test\r\nX-Slow: ")
                .and_then(|()| stream.flush())
                .expect("the handshake and the start of a head");
            stream.sock.set_nonblocking(true).unwrap();
            (stream, false)
        })
        .collect();

    let op = declarations::registry()
        .operations()
        .find(|op| op.scope() == registry::Scope::Tenant)
        .expect("the registry has a tenant operation");
    let started = Instant::now();
    let (mut answered, mut slowest, mut round) = (0, Duration::ZERO, 0u64);
    let mut held = 2 * SLOW;
    while held > 0 && started.elapsed() < BOUND {
        for (head, closed) in &mut heads {
            if !*closed {
                let _ = head.write_all(b"x").and_then(|()| head.flush());
            }
        }
        round += 1;
        let asked = Instant::now();
        let (status, _) = client
            .health()
            .unwrap_or_else(|e| panic!("round {round}: health through the front: {e}"));
        assert_eq!(status, 200, "round {round}");
        let envelope = serde_json::json!({
            "request_id": format!("{:032x}", (0xa11ace_u128 << 64) | u128::from(round)),
            "operation": op.name(),
            "resource": op.example(),
        });
        let resp = client
            .request(
                "POST",
                "/v1/jobs",
                Some(envelope.to_string().as_bytes()),
                &[],
            )
            .unwrap_or_else(|e| panic!("round {round}: a job through the front: {e}"));
        assert_eq!(
            resp.status,
            202,
            "round {round}: {}",
            String::from_utf8_lossy(&resp.body)
        );
        answered += 2;
        slowest = slowest.max(asked.elapsed());
        for (tcp, closed) in &mut handshakes {
            *closed = *closed || server_closed(tcp);
        }
        for (head, closed) in &mut heads {
            *closed = *closed || server_closed(head);
        }
        held = handshakes.iter().filter(|(_, closed)| !closed).count()
            + heads.iter().filter(|(_, closed)| !closed).count();
        std::thread::sleep(Duration::from_millis(500));
    }
    eprintln!(
        "the Apache front: {answered} answers to the well-behaved client, the slowest round {slowest:?}; \
         the abuser's {} connections all closed after {:?}",
        2 * SLOW,
        started.elapsed()
    );
    assert_eq!(
        held, 0,
        "Apache still held {held} of the abuser's connections after {BOUND:?}"
    );
    assert!(answered > 0);
}
