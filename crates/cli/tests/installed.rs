//! A node installed by the real `layerone install --root` into a sysroot: every unit it
//! writes passes `systemd-analyze verify` against that root, and the API started exactly as
//! its unit says (ExecStart, EnvironmentFile, User, LoadCredential) serves the certificate
//! whose pin the installer printed and accepts the key it printed.
//!
//! These tests need root (the installer creates a system user and sets owners), as CI has.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::os::unix::fs::{PermissionsExt, chown};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use provider::Platform;

const LAYERONE: &str = env!("CARGO_BIN_EXE_layerone");
const API: &str = env!("CARGO_BIN_EXE_layerone-api");
const RUNNER: &str = env!("CARGO_BIN_EXE_layerone-runner");

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
    let seeder = provider::testing::sim_provider(Platform::Debian, dir.path(), vec![]);
    provider::testing::seed_accounts(&seeder).unwrap();
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

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn every_unit_the_installer_writes_passes_systemd_analyze_verify() {
    let (_dir, root, _) = installed("127.0.0.1:8443");
    // What the package puts beside the units: the binaries the units start (the ones this
    // build made) and the man page their Documentation= names. verify checks both in the root.
    std::fs::create_dir_all(at(&root, "/usr/bin")).unwrap();
    for (name, built) in [
        ("layerone", LAYERONE),
        ("layerone-api", API),
        ("layerone-runner", RUNNER),
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
    let child = Command::new(API)
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
    let client = client::NodeClient::new(&url, Some(info["api key"].clone()), &info["pin"])
        .unwrap()
        .with_timeout(Duration::from_secs(5));
    let deadline = Instant::now() + Duration::from_secs(20);
    while !matches!(client.health(), Ok((200, _))) {
        assert!(
            Instant::now() < deadline,
            "the installed API did not answer /v1/health"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The printed key is the one whose hash the node holds.
    client.catalogue().expect("the printed key is accepted");
    let wrong = client::NodeClient::new(&url, Some(api::generate_api_key()), &info["pin"]).unwrap();
    assert_eq!(wrong.catalogue().unwrap_err().status(), Some(401));
    // A pin other than the printed one is refused before anything is sent.
    let other_pin = "00".repeat(32);
    let unpinned = client::NodeClient::new(&url, None, &other_pin).unwrap();
    assert!(unpinned.health().is_err());
}
