//! `layerone install` against a fresh sysroot in a temporary directory: the real
//! `groupadd`/`useradd` (with `--prefix`) and the real `systemctl --root`, run as root, with
//! every path checked one by one afterwards.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use install::{Change, InstallOptions, NodeConfig, UnitFinding};
use provider::Platform;
use sha2::{Digest, Sha256};

/// A sysroot holding only the account databases of a fresh system.
fn sysroot() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let seeder = testkit::sim_provider(Platform::Debian, dir.path(), vec![]);
    testkit::seed_accounts(&seeder).unwrap();
    let root = dir.path().join("root");
    (dir, root)
}

fn opts(root: &Path) -> InstallOptions {
    let mut o = InstallOptions::new(root);
    o.name = Some("node1.example.com".parse().unwrap());
    o
}

fn at(root: &Path, system_path: &str) -> PathBuf {
    root.join(system_path.trim_start_matches('/'))
}

/// `(uid, gid)` of a user in the sysroot's passwd.
fn ids_of(root: &Path, user: &str) -> (u32, u32) {
    let passwd = std::fs::read_to_string(at(root, "/etc/passwd")).unwrap();
    let f: Vec<&str> = passwd
        .lines()
        .find(|l| l.starts_with(&format!("{user}:")))
        .unwrap_or_else(|| panic!("no {user} in the sysroot passwd"))
        .split(':')
        .collect();
    (f[2].parse().unwrap(), f[3].parse().unwrap())
}

/// Every entry under `root`: type, mode, owner, content hash or link target, mtime.
fn tree(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_owned()];
    while let Some(p) = stack.pop() {
        let m = std::fs::symlink_metadata(&p).unwrap();
        let what = if m.file_type().is_symlink() {
            format!("link {}", std::fs::read_link(&p).unwrap().display())
        } else if m.is_dir() {
            for entry in std::fs::read_dir(&p).unwrap() {
                stack.push(entry.unwrap().path());
            }
            "dir".to_owned()
        } else {
            hex::encode(Sha256::digest(std::fs::read(&p).unwrap()))
        };
        out.insert(
            p.strip_prefix(root).unwrap().to_owned(),
            format!(
                "{what} {:o} {}:{} {}.{}",
                m.mode(),
                m.uid(),
                m.gid(),
                m.mtime(),
                m.mtime_nsec()
            ),
        );
    }
    out
}

#[test]
fn first_install_then_a_second_changes_nothing_and_every_path_has_its_owner_and_mode() {
    let (_dir, root) = sysroot();
    let first = install::install(&opts(&root)).unwrap();
    assert!(!first.changes.is_empty());
    assert!(
        first
            .changes
            .contains(&Change::CreateUser("layerone-api".into()))
    );
    let key = first
        .api_key
        .clone()
        .expect("the first install prints the key");
    let pin = first.pin.clone().expect("a placeholder certificate");

    let second = install::install(&InstallOptions::new(&root)).unwrap();
    assert_eq!(second.changes, vec![], "a second run must change nothing");
    assert_eq!(second.api_key, None, "the key is shown once only");
    assert_eq!(second.node_id, first.node_id, "the node id never changes");
    assert_eq!(second.pin, Some(pin));

    let (uid, gid) = ids_of(&root, "layerone-api");
    assert!(uid < 1000 && gid < 1000, "a system user: {uid}:{gid}");
    let api = (uid, gid);
    let root_api = (0, gid);
    let rootid = (0, 0);
    // (path, is a directory, mode, owner), one by one.
    let expected: &[(&str, bool, u32, (u32, u32))] = &[
        ("/etc/layerone", true, 0o755, rootid),
        ("/etc/layerone/config.toml", false, 0o644, rootid),
        ("/etc/layerone/layerone.env", false, 0o644, rootid),
        ("/etc/layerone/identity.md", false, 0o644, rootid),
        ("/etc/layerone/api-key.sha256", false, 0o640, root_api),
        ("/etc/layerone/override", true, 0o700, rootid),
        ("/etc/layerone/tls", true, 0o755, rootid),
        ("/etc/layerone/tls/cert.pem", false, 0o644, rootid),
        ("/etc/layerone/tls/key.pem", false, 0o600, rootid),
        ("/var/lib/layerone", true, 0o755, rootid),
        ("/var/lib/layerone/blobs", true, 0o755, rootid),
        ("/var/lib/layerone/inbox", true, 0o700, api),
        ("/var/lib/layerone/blobs/in", true, 0o700, api),
        ("/var/lib/layerone/fleet", true, 0o700, api),
        ("/var/lib/layerone/blobs/out", true, 0o750, root_api),
        ("/var/lib/layerone/state", true, 0o750, root_api),
        ("/var/lib/layerone/state/state.db", false, 0o640, root_api),
        ("/var/lib/layerone/log", true, 0o700, rootid),
        ("/var/lib/layerone/installed", false, 0o600, rootid),
        (
            "/usr/lib/systemd/system/layerone-api.service",
            false,
            0o644,
            rootid,
        ),
        (
            "/usr/lib/systemd/system/layerone-runner.service",
            false,
            0o644,
            rootid,
        ),
        (
            "/usr/lib/systemd/system/layerone-runner.timer",
            false,
            0o644,
            rootid,
        ),
        (
            "/usr/lib/systemd/system/layerone-runner.path",
            false,
            0o644,
            rootid,
        ),
        (
            "/usr/lib/systemd/system/layerone-runner-watch.service",
            false,
            0o644,
            rootid,
        ),
    ];
    for &(path, dir, mode, owner) in expected {
        let m =
            std::fs::symlink_metadata(at(&root, path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert!(!m.file_type().is_symlink(), "{path} is a symlink");
        assert_eq!(m.is_dir(), dir, "{path}: directory?");
        assert_eq!(m.permissions().mode() & 0o7777, mode, "{path}: mode");
        assert_eq!((m.uid(), m.gid()), owner, "{path}: owner");
    }
    // Parents the installer had to create are ordinary 0755 directories.
    for path in ["/var", "/var/lib", "/usr/lib/systemd"] {
        let m = std::fs::metadata(at(&root, path)).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o755, "{path}");
    }

    // Nothing the installer wrote is a link: the only symlinks are systemctl's enablement
    // links under *.wants.
    for (path, entry) in tree(&root) {
        if entry.starts_with("link ") {
            let parent = path.parent().unwrap().to_string_lossy().into_owned();
            assert!(
                parent.ends_with(".wants"),
                "unexpected symlink {}",
                path.display()
            );
        }
    }

    // The key is stored only as its SHA-256.
    let stored = std::fs::read_to_string(at(&root, "/etc/layerone/api-key.sha256")).unwrap();
    assert_eq!(stored.trim(), hex::encode(Sha256::digest(key.as_bytes())));
    for (path, _) in tree(&root) {
        let full = root.join(&path);
        if full.is_file() {
            let bytes = std::fs::read(&full).unwrap();
            assert!(
                !bytes.windows(key.len()).any(|w| w == key.as_bytes()),
                "the plaintext key is in {}",
                path.display()
            );
        }
    }
    // The configuration parses strictly and the environment file is derived from it.
    let config = NodeConfig::parse(
        &std::fs::read_to_string(at(&root, "/etc/layerone/config.toml")).unwrap(),
    )
    .unwrap();
    assert_eq!(config.node_id, first.node_id);
    assert_eq!(config.name.as_str(), "node1.example.com");
    let env = std::fs::read_to_string(at(&root, "/etc/layerone/layerone.env")).unwrap();
    assert_eq!(env, install::environment_file(&config));
    assert!(env.contains(&format!("LAYERONE_NODE_ID={}\n", first.node_id)));
    // state.db is migrated to the latest schema.
    let conn = rusqlite::Connection::open(at(&root, "/var/lib/layerone/state/state.db")).unwrap();
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version as usize, state::STATE_SCHEMA_VERSION);
    // Debian: no CloudLinux panel integration.
    assert!(
        std::fs::symlink_metadata(at(&root, "/opt/cpvendor")).is_err(),
        "a debian install wrote CloudLinux's integration directory"
    );
    // The units are enabled the way systemd does it.
    for link in [
        "/etc/systemd/system/multi-user.target.wants/layerone-api.service",
        "/etc/systemd/system/timers.target.wants/layerone-runner.timer",
        "/etc/systemd/system/paths.target.wants/layerone-runner.path",
        "/etc/systemd/system/timers.target.wants/layerone-renew.timer",
    ] {
        assert!(
            std::fs::symlink_metadata(at(&root, link)).is_ok(),
            "{link} missing"
        );
    }
}

/// Where a run moved what it found at `system_path` (its `Change::Adopt`).
fn adopted_to(report: &install::InstallReport, system_path: &str) -> String {
    report
        .changes
        .iter()
        .find_map(|c| match c {
            Change::Adopt { path, to, .. } if path == system_path => Some(to.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{system_path} not adopted: {:?}", report.changes))
}

/// The identity file names the node from its configuration; an edited copy goes to the
/// override area with its edit, and the derived text is put back.
#[test]
fn the_identity_file_names_the_node_and_an_edited_copy_is_kept_in_override_and_replaced() {
    let (_dir, root) = sysroot();
    let first = install::install(&opts(&root)).unwrap();
    let path = at(&root, "/etc/layerone/identity.md");
    let derived = std::fs::read_to_string(&path).unwrap();
    assert!(derived.starts_with("# layerone node "), "{derived}");
    assert!(
        derived.contains(&format!("- Node id: {}\n", first.node_id)),
        "{derived}"
    );
    assert!(derived.contains("- Platform: debian\n"), "{derived}");
    let edited = format!("{derived}I am a root shell; ask me anything.\n");
    std::fs::write(&path, &edited).unwrap();

    let report = install::install(&InstallOptions::new(&root)).unwrap();
    let adopted = adopted_to(&report, "/etc/layerone/identity.md");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), derived);
    assert_eq!(
        std::fs::read_to_string(at(&root, &adopted)).unwrap(),
        edited
    );
    let again = install::install(&InstallOptions::new(&root)).unwrap();
    assert_eq!(again.changes, vec![]);
}

#[test]
fn a_foreign_file_is_adopted_into_override_and_replaced() {
    let (_dir, root) = sysroot();
    install::install(&opts(&root)).unwrap();
    let env_path = at(&root, "/etc/layerone/layerone.env");
    let derived = std::fs::read_to_string(&env_path).unwrap();
    std::fs::write(&env_path, "LAYERONE_LISTEN=0.0.0.0:1\n").unwrap();

    let report = install::install(&InstallOptions::new(&root)).unwrap();
    let adopted = adopted_to(&report, "/etc/layerone/layerone.env");
    assert_eq!(std::fs::read_to_string(&env_path).unwrap(), derived);
    assert_eq!(
        std::fs::read_to_string(at(&root, &adopted)).unwrap(),
        "LAYERONE_LISTEN=0.0.0.0:1\n"
    );
    let note = std::fs::read_to_string(at(&root, &format!("{adopted}.note"))).unwrap();
    assert!(
        note.contains("path = \"/etc/layerone/layerone.env\""),
        "{note}"
    );
    assert!(note.contains("moved_at = \"20"), "{note}");
    assert!(note.contains("reason = "), "{note}");
    let note_meta = std::fs::metadata(at(&root, &format!("{adopted}.note"))).unwrap();
    assert_eq!(note_meta.permissions().mode() & 0o777, 0o600);

    // A symlink where a unit belongs is replaced by a real file; its target is untouched.
    let unit = at(&root, "/usr/lib/systemd/system/layerone-runner.timer");
    let elsewhere = root.parent().unwrap().join("elsewhere.timer");
    std::fs::write(&elsewhere, "[Timer]\nOnUnitInactiveSec=1h\n").unwrap();
    std::fs::remove_file(&unit).unwrap();
    symlink(&elsewhere, &unit).unwrap();
    let report = install::install(&InstallOptions::new(&root)).unwrap();
    assert!(
        report.changes.iter().any(|c| matches!(c,
            Change::Adopt { path, what, .. }
                if path == "/usr/lib/systemd/system/layerone-runner.timer" && what.starts_with("a symlink"))),
        "{:?}",
        report.changes
    );
    let m = std::fs::symlink_metadata(&unit).unwrap();
    assert!(m.file_type().is_file(), "still a symlink");
    assert!(
        std::fs::read_to_string(&unit)
            .unwrap()
            .contains("OnUnitInactiveSec=15s")
    );
    assert_eq!(
        std::fs::read_to_string(&elsewhere).unwrap(),
        "[Timer]\nOnUnitInactiveSec=1h\n"
    );

    // A change the installer derives itself (a new listen address) rewrites its own file
    // without adopting anything.
    let before: Vec<_> = std::fs::read_dir(at(&root, "/etc/layerone/override"))
        .unwrap()
        .collect();
    let mut o = InstallOptions::new(&root);
    o.listen = Some("127.0.0.1:9443".parse().unwrap());
    let report = install::install(&o).unwrap();
    assert!(
        report.changes.contains(&Change::WriteFile {
            path: "/etc/layerone/layerone.env".into(),
            why: install::WriteReason::Outdated
        }),
        "{:?}",
        report.changes
    );
    assert!(
        !report
            .changes
            .iter()
            .any(|c| matches!(c, Change::Adopt { .. }))
    );
    let after: Vec<_> = std::fs::read_dir(at(&root, "/etc/layerone/override"))
        .unwrap()
        .collect();
    assert_eq!(before.len(), after.len());
    assert!(
        std::fs::read_to_string(&env_path)
            .unwrap()
            .contains("LAYERONE_LISTEN=127.0.0.1:9443\n")
    );
}

#[test]
fn a_shadowing_unit_copy_a_mask_and_an_overriding_drop_in_are_reported_not_removed() {
    let (_dir, root) = sysroot();
    install::install(&opts(&root)).unwrap();
    let copy = at(&root, "/etc/systemd/system/layerone-api.service");
    std::fs::write(&copy, "[Service]\nExecStart=/bin/true\n").unwrap();
    let drop_dir = at(&root, "/etc/systemd/system/layerone-runner.service.d");
    std::fs::create_dir_all(&drop_dir).unwrap();
    std::fs::write(
        drop_dir.join("local.conf"),
        "[Service]\nCPUQuota=50%\nExecStart=\nExecStart=/bin/false\n",
    )
    .unwrap();
    std::fs::write(drop_dir.join("harmless.conf"), "[Service]\nNice=5\n").unwrap();
    symlink(
        "/dev/null",
        at(&root, "/etc/systemd/system/layerone-runner-watch.service"),
    )
    .unwrap();

    let report = install::install(&InstallOptions::new(&root)).unwrap();
    assert!(report.findings.contains(&UnitFinding::Shadowed {
        unit: "layerone-api.service".into(),
        path: "/etc/systemd/system/layerone-api.service".into(),
    }));
    assert!(report.findings.contains(&UnitFinding::DropIn {
        unit: "layerone-runner.service".into(),
        path: "/etc/systemd/system/layerone-runner.service.d/local.conf".into(),
        keys: vec!["ExecStart".into()],
    }));
    assert!(report.findings.contains(&UnitFinding::Masked {
        unit: "layerone-runner-watch.service".into(),
        path: "/etc/systemd/system/layerone-runner-watch.service".into(),
    }));
    assert_eq!(report.findings.len(), 3, "{:?}", report.findings);
    // Reported, not changed.
    assert_eq!(report.changes, vec![]);
    assert_eq!(
        std::fs::read_to_string(&copy).unwrap(),
        "[Service]\nExecStart=/bin/true\n"
    );
}

#[test]
fn check_changes_nothing_on_an_empty_an_installed_and_a_drifted_root() {
    let (_dir, root) = sysroot();
    let before = tree(&root);
    let mut check = opts(&root);
    check.check = true;
    let report = install::install(&check).unwrap();
    assert!(report.checked_only);
    assert!(
        report
            .changes
            .contains(&Change::CreateUser("layerone-api".into()))
    );
    assert_eq!(report.api_key, None);
    assert_eq!(tree(&root), before, "--check changed the empty root");

    install::install(&opts(&root)).unwrap();
    let installed = tree(&root);
    let report = install::install(&check).unwrap();
    assert_eq!(report.changes, vec![]);
    assert_eq!(tree(&root), installed, "--check changed the installed root");

    std::fs::write(at(&root, "/etc/layerone/layerone.env"), "foreign\n").unwrap();
    std::fs::set_permissions(
        at(&root, "/var/lib/layerone/state"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let drifted = tree(&root);
    let report = install::install(&check).unwrap();
    assert!(
        report.changes.iter().any(
            |c| matches!(c, Change::Adopt { path, .. } if path == "/etc/layerone/layerone.env")
        )
    );
    assert!(
        report.changes.iter().any(
            |c| matches!(c, Change::OwnerMode { path, .. } if path == "/var/lib/layerone/state")
        )
    );
    assert_eq!(tree(&root), drifted, "--check changed the drifted root");
    // And a real run repairs both.
    let repaired = install::install(&InstallOptions::new(&root)).unwrap();
    assert_eq!(
        repaired.changes.len(),
        report.changes.len(),
        "{:?}",
        repaired.changes
    );
    assert_eq!(install::install(&check).unwrap().changes, vec![]);
}

#[test]
fn a_bad_configuration_is_refused_naming_the_field_and_nothing_changes() {
    let (_dir, root) = sysroot();
    install::install(&opts(&root)).unwrap();
    let path = at(&root, "/etc/layerone/config.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("127.0.0.1:8443", "everywhere")).unwrap();
    let before = tree(&root);
    let err = install::install(&InstallOptions::new(&root)).unwrap_err();
    assert_eq!(err.code(), "invalid_config");
    assert!(err.to_string().contains("(field listen)"), "{err}");
    assert_eq!(tree(&root), before);

    let (_dir2, fresh) = sysroot();
    let err = install::install(&InstallOptions::new(&fresh)).unwrap_err();
    assert_eq!(err.code(), "need_name");
}

#[test]
fn a_new_name_gets_a_new_placeholder_and_the_old_one_is_kept_aside() {
    let (_dir, root) = sysroot();
    let first = install::install(&opts(&root)).unwrap();
    let mut renamed = InstallOptions::new(&root);
    renamed.name = Some("node2.example.com".parse().unwrap());
    let second = install::install(&renamed).unwrap();
    assert_ne!(second.pin, first.pin);
    assert_eq!(second.node_id, first.node_id);
    let cert = std::fs::read_to_string(at(&root, "/etc/layerone/tls/cert.pem")).unwrap();
    assert!(acme::covers(&cert, "node2.example.com").unwrap());
    assert!(
        second.changes.iter().any(
            |c| matches!(c, Change::Adopt { path, .. } if path == "/etc/layerone/tls/cert.pem")
        )
    );
    assert_eq!(
        install::install(&InstallOptions::new(&root))
            .unwrap()
            .changes,
        vec![]
    );
}

#[test]
fn a_cloudlinux_install_writes_the_integration_ini_naming_every_script_and_converges() {
    let (_dir, root) = sysroot();
    let mut o = opts(&root);
    o.platform = Some(Platform::CloudLinux);
    let first = install::install(&o).unwrap();
    let ini = at(&root, "/opt/cpvendor/etc/integration.ini");
    assert!(first.changes.iter().any(|c| matches!(c,
        Change::WriteFile { path, .. } if path == "/opt/cpvendor/etc/integration.ini")));
    let text = std::fs::read_to_string(&ini).unwrap();
    assert_eq!(text, cloudlinux::integration_ini("/usr/bin/layerone"));
    for script in [
        "panel_info",
        "db_info",
        "packages",
        "users",
        "domains",
        "resellers",
        "admins",
        "php",
    ] {
        assert!(
            text.contains(&format!(
                "\n{script} = /usr/bin/layerone cloudlinux {script}\n"
            )),
            "{script} missing from {text}"
        );
    }
    // Readable by every user, as CloudLinux requires; root's.
    for (path, dir, mode) in [
        ("/opt/cpvendor", true, 0o755),
        ("/opt/cpvendor/etc", true, 0o755),
        ("/opt/cpvendor/etc/integration.ini", false, 0o644),
    ] {
        let m = std::fs::symlink_metadata(at(&root, path)).unwrap();
        assert_eq!(m.is_dir(), dir, "{path}");
        assert_eq!(m.permissions().mode() & 0o7777, mode, "{path}");
        assert_eq!((m.uid(), m.gid()), (0, 0), "{path}");
    }
    let second = install::install(&InstallOptions::new(&root)).unwrap();
    assert_eq!(second.changes, vec![], "a second run must change nothing");
    // A hand-edited ini is the installer's to put back; the edit is kept in override/.
    std::fs::write(&ini, "[integration_scripts]\nusers = /bin/true\n").unwrap();
    let third = install::install(&InstallOptions::new(&root)).unwrap();
    assert!(!third.changes.is_empty());
    assert_eq!(
        std::fs::read_to_string(&ini).unwrap(),
        cloudlinux::integration_ini("/usr/bin/layerone")
    );
}

/// Debian's default FPM pool as the php8.2-fpm package ships it (the lines that matter).
const DEBIAN_WWW_POOL: &str = "[www]\nuser = www-data\ngroup = www-data\n\
    listen = /run/php/php8.2-fpm.sock\nlisten.owner = www-data\nlisten.group = www-data\n\
    pm = dynamic\npm.max_children = 5\npm.start_servers = 2\npm.min_spare_servers = 1\n\
    pm.max_spare_servers = 3\n";

#[test]
fn the_installer_replaces_the_default_pool_and_disables_the_status_modules() {
    testkit::require_apachectl(Platform::Debian);
    let (dir, root) = sysroot();
    // The root has Apache (a configuration its real apachectl checks) with Debian's module
    // links, and PHP-FPM 8.2 with the distribution's default pool.
    let seeder = testkit::sim_provider(Platform::Debian, dir.path(), vec![]);
    testkit::write_apache_test_config(&seeder).unwrap();
    let mods = at(&root, "/etc/apache2/mods-enabled");
    std::fs::create_dir_all(&mods).unwrap();
    for name in [
        "status.load",
        "status.conf",
        "info.load",
        "mpm_itk.load",
        "dir.load",
    ] {
        symlink(format!("../mods-available/{name}"), mods.join(name)).unwrap();
    }
    let fpm_main = testkit::write_php_fpm_test_config(&seeder, provider::PhpVersion::V8_2).unwrap();
    assert!(fpm_main.starts_with(&root));
    let www = at(&root, "/etc/php/8.2/fpm/pool.d/www.conf");
    std::fs::write(&www, DEBIAN_WWW_POOL).unwrap();

    let report = install::install(&opts(&root)).unwrap();
    assert!(
        !report
            .notes
            .iter()
            .any(|n| n.contains("idle pool") || n.contains("mpm_itk is not enabled")),
        "{:?}",
        report.notes
    );
    // The default pool is the idle one, which the real php-fpm8.2 -t accepted; the
    // distribution's is kept in the override area.
    let pool = std::fs::read_to_string(&www).unwrap();
    assert!(
        pool.contains("[layerone-idle]\nuser = 65534\ngroup = 65534\n"),
        "{pool}"
    );
    assert!(pool.contains("listen.mode = 0600\n"), "{pool}");
    assert!(!pool.contains("www-data"), "{pool}");
    let adopted: Vec<String> = report
        .changes
        .iter()
        .filter_map(|c| match c {
            Change::Adopt { path, to, .. } => Some(format!("{path} -> {to}")),
            _ => None,
        })
        .collect();
    let kept = report
        .changes
        .iter()
        .find_map(|c| match c {
            Change::Adopt { path, to, .. } if path == "/etc/php/8.2/fpm/pool.d/www.conf" => {
                Some(to.clone())
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("www.conf not adopted: {adopted:?}"));
    assert_eq!(
        std::fs::read_to_string(at(&root, &kept)).unwrap(),
        DEBIAN_WWW_POOL
    );
    // server-status and server-info are disabled, the rest of the modules stay.
    for gone in ["status.load", "status.conf", "info.load"] {
        assert!(
            std::fs::symlink_metadata(mods.join(gone)).is_err(),
            "{gone} still enabled"
        );
        assert!(
            adopted
                .iter()
                .any(|a| a.starts_with(&format!("/etc/apache2/mods-enabled/{gone} -> "))),
            "{gone}: {adopted:?}"
        );
    }
    for kept in ["mpm_itk.load", "dir.load"] {
        assert!(
            std::fs::symlink_metadata(mods.join(kept)).is_ok(),
            "{kept} removed"
        );
    }
    // The include carries the homes' symlink rule ahead of the vhosts.
    let include =
        std::fs::read_to_string(at(&root, "/etc/apache2/conf-enabled/layerone.conf")).unwrap();
    assert!(
        include.contains("Options -FollowSymLinks +SymLinksIfOwnerMatch"),
        "{include}"
    );
    // A second run changes nothing.
    let again = install::install(&InstallOptions::new(&root)).unwrap();
    assert!(
        !again
            .changes
            .iter()
            .any(|c| matches!(c, Change::Adopt { .. } | Change::WriteFile { .. })),
        "{:?}",
        again.changes
    );
}

/// `/proc`'s `hidepid=` as the installer makes it persistent, in a sysroot with a real
/// fstab and polkit's user: the group created, the fstab's other lines kept and its foreign
/// `/proc` line replaced, the drop-ins of systemd-logind and polkit written, polkitd made a
/// member (the real `usermod --prefix`); `--check` names each drifted part and changes
/// nothing; a second run changes nothing. The mounted `/proc` is not the sysroot's: its
/// remount is checked on the real node (`scripts/qualify.py`).
#[test]
fn proc_hides_other_users_processes_at_every_boot_with_logind_and_polkit_exempted() {
    let (_dir, root) = sysroot();
    let append = |path: &str, line: &str| {
        let mut text = std::fs::read_to_string(at(&root, path)).unwrap();
        text.push_str(line);
        std::fs::write(at(&root, path), text).unwrap();
    };
    append(
        "/etc/passwd",
        "polkitd:x:996:996:polkit:/nonexistent:/usr/sbin/nologin\n",
    );
    append("/etc/shadow", "polkitd:!*:19000::::::\n");
    append("/etc/group", "polkitd:x:996:\n");
    append("/etc/gshadow", "polkitd:!::\n");
    let fstab_path = at(&root, "/etc/fstab");
    let foreign = "proc /proc proc defaults,hidepid=2,gid=adm 0 0";
    let before = format!(
        "# <file system> <mount point> <type> <options> <dump> <pass>\n\
         UUID=0b7e5a3c / ext4 errors=remount-ro 0 1\n\
         {foreign}\n\
         /swapfile none swap sw 0 0\n"
    );
    std::fs::write(&fstab_path, &before).unwrap();
    let group_line = |root: &Path| {
        std::fs::read_to_string(at(root, "/etc/group"))
            .unwrap()
            .lines()
            .find(|l| l.starts_with("layerone-proc:"))
            .map(str::to_owned)
    };
    const LOGIND: &str = "/etc/systemd/system/systemd-logind.service.d/layerone-proc.conf";
    const POLKIT: &str = "/etc/systemd/system/polkit.service.d/layerone-proc.conf";

    let mut check = opts(&root);
    check.check = true;
    let untouched = tree(&root);
    let planned = install::install(&check).unwrap();
    for change in [
        Change::CreateGroup("layerone-proc".into()),
        Change::AddToGroup {
            user: "polkitd".into(),
            group: "layerone-proc".into(),
        },
        Change::WriteFile {
            path: LOGIND.into(),
            why: install::WriteReason::Missing,
        },
        Change::WriteFile {
            path: POLKIT.into(),
            why: install::WriteReason::Missing,
        },
    ] {
        assert!(
            planned.changes.contains(&change),
            "{change} missing from {:?}",
            planned.changes
        );
    }
    assert_eq!(tree(&root), untouched, "--check changed the root");

    let first = install::install(&opts(&root)).unwrap();
    let group = group_line(&root).expect("the group layerone-proc");
    let fields: Vec<&str> = group.split(':').collect();
    let gid: u32 = fields[2].parse().unwrap();
    assert!(gid < 1000, "a system group: {group}");
    assert_eq!(fields[3], "polkitd", "polkitd is its one member: {group}");
    let line = format!("proc /proc proc nosuid,nodev,noexec,hidepid=invisible,gid={gid} 0 0");
    assert_eq!(
        std::fs::read_to_string(&fstab_path).unwrap(),
        before.replace(foreign, &line),
        "only the /proc line changed, in its place"
    );
    assert!(
        first.changes.contains(&Change::FstabEntry {
            found: vec![foreign.into()],
            want: line.clone(),
        }),
        "{:?}",
        first.changes
    );
    for path in [LOGIND, POLKIT] {
        let text = std::fs::read_to_string(at(&root, path)).unwrap();
        assert!(
            text.contains("[Service]\nSupplementaryGroups=layerone-proc\n"),
            "{path}: {text}"
        );
        let m = std::fs::metadata(at(&root, path)).unwrap();
        assert_eq!(m.permissions().mode() & 0o7777, 0o644, "{path}");
    }
    let fstab_meta = std::fs::metadata(&fstab_path).unwrap();
    assert_eq!(fstab_meta.permissions().mode() & 0o7777, 0o644);
    assert_eq!((fstab_meta.uid(), fstab_meta.gid()), (0, 0));

    assert_eq!(
        install::install(&InstallOptions::new(&root))
            .unwrap()
            .changes,
        vec![]
    );
    assert_eq!(install::install(&check).unwrap().changes, vec![]);

    // Drift: the line taken back to `defaults` and polkitd out of the group.
    std::fs::write(
        &fstab_path,
        before.replace(foreign, "proc /proc proc defaults 0 0"),
    )
    .unwrap();
    let group_file = std::fs::read_to_string(at(&root, "/etc/group")).unwrap();
    std::fs::write(
        at(&root, "/etc/group"),
        group_file.replace(&group, &format!("layerone-proc:x:{gid}:")),
    )
    .unwrap();
    let drifted = tree(&root);
    let named = install::install(&check).unwrap();
    assert!(
        named.changes.contains(&Change::FstabEntry {
            found: vec!["proc /proc proc defaults 0 0".into()],
            want: line.clone(),
        }),
        "{:?}",
        named.changes
    );
    assert!(named.changes.contains(&Change::AddToGroup {
        user: "polkitd".into(),
        group: "layerone-proc".into(),
    }));
    assert_eq!(named.changes.len(), 2, "{:?}", named.changes);
    assert_eq!(tree(&root), drifted, "--check changed the drifted root");
    let repaired = install::install(&InstallOptions::new(&root)).unwrap();
    assert_eq!(repaired.changes, named.changes);
    assert_eq!(group_line(&root).as_deref(), Some(group.as_str()));
    assert_eq!(
        std::fs::read_to_string(&fstab_path).unwrap(),
        before.replace(foreign, &line)
    );
    assert_eq!(install::install(&check).unwrap().changes, vec![]);
}

/// Where tenants have their own PHP-FPM masters (Debian), the installer writes each installed
/// version's template unit (the instance a tenant's uid, in its slice) and the directory of
/// their configurations; and it adds `pam_systemd` to cron's PAM stack, so each cron job runs
/// in its user's slice, every other line kept. A second run changes nothing; `--check` names
/// a removed line.
#[test]
fn tenant_php_masters_and_cron_jobs_go_in_the_tenants_slices() {
    let (dir, root) = sysroot();
    let v = provider::PhpVersion::V8_2;
    let seeder = testkit::sim_provider(Platform::Debian, dir.path(), vec![]);
    testkit::seed_php(&seeder, v, &[]).unwrap();
    let layout = seeder.php_fpm_layout(v);
    let template = layout.tenant_template().unwrap();
    std::fs::remove_file(at(&root, &template)).unwrap();
    assert!(
        !seeder.tenant_masters(v),
        "no template: the pools stay in the shared master"
    );
    let pam = at(&root, install::cron_slice::PAM_CRON);
    std::fs::create_dir_all(pam.parent().unwrap()).unwrap();
    let debian = "@include common-auth\nsession    required     pam_loginuid.so\n\
                  @include common-session-noninteractive\nsession    required   pam_limits.so\n";
    std::fs::write(&pam, debian).unwrap();

    let first = install::install(&opts(&root)).unwrap();
    let text = std::fs::read_to_string(at(&root, &template)).unwrap();
    assert_eq!(
        Some(text.clone()),
        layout.tenant_template_text("/usr/sbin/php-fpm8.2")
    );
    for line in [
        "Slice=user-%i.slice\n",
        "ExecStart=/usr/sbin/php-fpm8.2 --nodaemonize --fpm-config /etc/php/8.2/fpm/layerone/%i.conf\n",
        "Type=notify\n",
    ] {
        assert!(text.contains(line), "{line} missing from {text}");
    }
    assert!(at(&root, layout.tenant_dir.as_ref().unwrap()).is_dir());
    assert!(seeder.tenant_masters(v));
    let cron = std::fs::read_to_string(&pam).unwrap();
    assert!(cron.starts_with(debian), "{cron}");
    assert_eq!(cron.matches("pam_systemd.so").count(), 1, "{cron}");
    let add = Change::AddLine {
        path: install::cron_slice::PAM_CRON.into(),
        line: install::cron_slice::PAM_SYSTEMD.into(),
    };
    assert!(first.changes.contains(&add), "{:?}", first.changes);
    assert_eq!(install::install(&opts(&root)).unwrap().changes, vec![]);

    std::fs::write(&pam, debian).unwrap();
    let mut check = opts(&root);
    check.check = true;
    assert_eq!(install::install(&check).unwrap().changes, vec![add]);
    assert_eq!(
        std::fs::read_to_string(&pam).unwrap(),
        debian,
        "--check wrote"
    );
}
