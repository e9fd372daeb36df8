//! `layerone install` configuring the services of a sysroot: each service's files written
//! whole from the table of settings (`crates/install/src/services/`), checked by the real
//! programs (`postfix -c DIR check`, `doveconf -c FILE -n`, `opendkim -n -x FILE`,
//! `apache2ctl -f FILE -t`), a hand edit named setting by setting under `--check` and then
//! adopted into the override area, Apache's modules linked as `a2enmod` links them.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use install::{Change, InstallOptions};
use provider::Platform;

/// A sysroot with the account databases of a fresh system and the configuration
/// directories the distribution's packages create.
fn sysroot() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let seeder = testkit::sim_provider(Platform::Debian, dir.path(), vec![]);
    testkit::seed_accounts(&seeder).unwrap();
    let root = dir.path().join("root");
    for d in [
        "/etc/postfix",
        "/var/spool/postfix",
        "/var/lib/postfix",
        "/etc/dovecot",
        "/etc/pure-ftpd/conf",
        "/etc/pure-ftpd/auth",
    ] {
        std::fs::create_dir_all(at(&root, d)).unwrap();
    }
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

/// A provider for the sysroot that runs the real programs (the checks of the tests).
fn real(root: &Path, audit: &Path) -> provider::Provider {
    provider::Provider::new(provider::ProviderConfig {
        platform: Platform::Debian,
        root: root.to_owned(),
        executor: Arc::new(provider::RealExecutor),
        machine: Arc::new(provider::RealMachine),
        audit_dir: audit.to_owned(),
    })
}

/// `opendkim` has no entry in the provider's program table (the node never runs the
/// daemon itself): the test starts its configuration check directly.
fn run(cmd: &mut Command) -> (bool, String) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn writes(changes: &[Change]) -> Vec<String> {
    changes
        .iter()
        .filter(|c| {
            matches!(
                c,
                Change::WriteFile { .. } | Change::Adopt { .. } | Change::Link { .. }
            )
        })
        .map(ToString::to_string)
        .collect()
}

#[test]
fn postfix_files_pass_postfix_check_and_a_hand_edit_is_named_then_adopted_and_restored() {
    let (dir, root) = sysroot();
    let first = install::install(&opts(&root)).unwrap();
    assert!(
        !first.notes.iter().any(|n| n.contains("Postfix")),
        "{:?}",
        first.notes
    );
    let main_cf = at(&root, "/etc/postfix/main.cf");
    let derived = std::fs::read_to_string(&main_cf).unwrap();
    for line in [
        "myhostname = node1.example.com\n",
        "mydestination = localhost\n",
        "inet_interfaces = all\n",
        "relayhost = \n",
        "smtpd_sasl_type = dovecot\n",
        "smtpd_sasl_path = private/auth\n",
        "smtpd_milters = inet:127.0.0.1:8891\n",
        "non_smtpd_milters = inet:127.0.0.1:8891\n",
        "milter_default_action = accept\n",
        "virtual_transport = lmtp:unix:private/dovecot-lmtp\n",
    ] {
        assert!(derived.contains(line), "{line:?} missing from\n{derived}");
    }
    // The mail host names' SNI table main.cf names is there (empty) for smtpd to open.
    let sni = at(&root, "/etc/postfix/layerone/sni");
    assert!(
        derived.contains(&format!(
            "tls_server_sni_maps = texthash:{}\n",
            sni.display()
        )),
        "{derived}"
    );
    assert_eq!(std::fs::read(&sni).unwrap(), b"");
    let cert = at(&root, "/etc/layerone/tls/cert.pem");
    assert!(
        derived.contains(&format!("smtpd_tls_cert_file = {}\n", cert.display())),
        "{derived}"
    );
    let master = std::fs::read_to_string(at(&root, "/etc/postfix/master.cf")).unwrap();
    assert!(
        master.contains("submission inet  n - n - - smtpd\n"),
        "{master}"
    );
    for option in [
        "  -o smtpd_tls_security_level=encrypt\n",
        "  -o smtpd_sasl_auth_enable=yes\n",
        "  -o smtpd_recipient_restrictions=permit_sasl_authenticated,reject\n",
    ] {
        assert!(master.contains(option), "{option:?} missing from\n{master}");
    }
    // No service is chrooted: the fifth column is `n` on every service line.
    for line in master.lines().filter(|l| !l.starts_with([' ', '#'])) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields[4], "n", "chrooted: {line}");
    }
    // The real Postfix accepts both files.
    real(&root, &dir.path().join("audit"))
        .postfix_check()
        .unwrap_or_else(|e| panic!("postfix check: {e}"));

    // A hand edit of one node setting: --check names it and changes nothing.
    let edited = derived.replace(
        "\nsmtpd_milters = inet:127.0.0.1:8891\n",
        "\nsmtpd_milters = inet:127.0.0.1:9999\n",
    );
    std::fs::write(&main_cf, &edited).unwrap();
    let mut check = InstallOptions::new(&root);
    check.check = true;
    let report = install::install(&check).unwrap();
    let said: Vec<String> = report.changes.iter().map(ToString::to_string).collect();
    let settings: Vec<&String> = said.iter().filter(|s| s.starts_with("postfix ")).collect();
    assert_eq!(
        settings,
        vec![
            "postfix main.cf: smtpd_milters is \"inet:127.0.0.1:9999\", the node needs \"inet:127.0.0.1:8891\""
        ],
        "{said:?}"
    );
    assert_eq!(std::fs::read_to_string(&main_cf).unwrap(), edited);
    assert!(
        std::fs::read_dir(at(&root, "/etc/layerone/override"))
            .unwrap()
            .next()
            .is_none(),
        "--check moved something"
    );

    // install adopts the edited file and restores the setting; a second run changes nothing.
    let report = install::install(&InstallOptions::new(&root)).unwrap();
    let kept = report
        .changes
        .iter()
        .find_map(|c| match c {
            Change::Adopt { path, to, .. } if path == "/etc/postfix/main.cf" => Some(to.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("main.cf not adopted: {:?}", report.changes));
    assert_eq!(std::fs::read_to_string(at(&root, &kept)).unwrap(), edited);
    assert!(at(&root, &format!("{kept}.note")).is_file());
    assert_eq!(std::fs::read_to_string(&main_cf).unwrap(), derived);
    let again = install::install(&InstallOptions::new(&root)).unwrap();
    assert_eq!(writes(&again.changes), Vec::<String>::new());
}

#[test]
fn a_relay_host_from_the_configuration_reaches_main_cf() {
    let (dir, root) = sysroot();
    install::install(&opts(&root)).unwrap();
    let config_path = at(&root, "/etc/layerone/config.toml");
    let config = std::fs::read_to_string(&config_path).unwrap();
    std::fs::write(
        &config_path,
        format!("{config}[mail]\nrelayhost = \"[127.0.0.1]:2525\"\ninet_interfaces = \"loopback-only\"\n"),
    )
    .unwrap();
    install::install(&InstallOptions::new(&root)).unwrap();
    let main_cf = std::fs::read_to_string(at(&root, "/etc/postfix/main.cf")).unwrap();
    assert!(
        main_cf.contains("relayhost = [127.0.0.1]:2525\n"),
        "{main_cf}"
    );
    assert!(
        main_cf.contains("inet_interfaces = loopback-only\n"),
        "{main_cf}"
    );
    real(&root, &dir.path().join("audit"))
        .postfix_check()
        .unwrap_or_else(|e| panic!("postfix check: {e}"));
}

#[test]
fn apache_modules_are_linked_as_a2enmod_links_them_and_check_names_a_missing_one() {
    testkit::require_apachectl(Platform::Debian);
    let (dir, root) = sysroot();
    let seeder = testkit::sim_provider(Platform::Debian, dir.path(), vec![]);
    testkit::write_apache_test_config(&seeder).unwrap();
    // The distribution's module files, and Debian's default MPM enabled.
    let available = at(&root, "/etc/apache2/mods-available");
    let enabled = at(&root, "/etc/apache2/mods-enabled");
    std::fs::create_dir_all(&available).unwrap();
    std::fs::create_dir_all(&enabled).unwrap();
    for entry in std::fs::read_dir("/etc/apache2/mods-available").unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), available.join(entry.file_name())).unwrap();
    }
    for name in ["mpm_event.load", "mpm_event.conf"] {
        symlink(format!("../mods-available/{name}"), enabled.join(name)).unwrap();
    }

    let report = install::install(&opts(&root)).unwrap();
    assert!(
        !report
            .notes
            .iter()
            .any(|n| n.contains("not available") || n.contains("configuration test failed")),
        "{:?}",
        report.notes
    );
    for module in install::services::apache::MODULES {
        let link = enabled.join(format!("{module}.load"));
        assert_eq!(
            std::fs::read_link(&link).unwrap_or_else(|e| panic!("{module}: {e}")),
            Path::new(&format!("../mods-available/{module}.load")),
        );
    }
    // ssl's .conf comes with it (Debian's ports.conf listens on 443 with it loaded).
    assert!(std::fs::symlink_metadata(enabled.join("ssl.conf")).is_ok());
    for gone in ["mpm_event.load", "mpm_event.conf"] {
        assert!(
            std::fs::symlink_metadata(enabled.join(gone)).is_err(),
            "{gone} still enabled"
        );
    }

    // One link removed by hand: --check names it and makes nothing.
    std::fs::remove_file(enabled.join("proxy_http.load")).unwrap();
    let mut check = InstallOptions::new(&root);
    check.check = true;
    let report = install::install(&check).unwrap();
    assert!(
        report.changes.contains(&Change::Link {
            path: "/etc/apache2/mods-enabled/proxy_http.load".into(),
            target: "../mods-available/proxy_http.load".into(),
        }),
        "{:?}",
        report.changes
    );
    assert!(std::fs::symlink_metadata(enabled.join("proxy_http.load")).is_err());
    install::install(&InstallOptions::new(&root)).unwrap();
    assert!(std::fs::symlink_metadata(enabled.join("proxy_http.load")).is_ok());
    let again = install::install(&InstallOptions::new(&root)).unwrap();
    assert_eq!(writes(&again.changes), Vec::<String>::new());
}

#[test]
fn dovecot_opendkim_and_pure_ftpd_files_pass_their_checks_and_a_second_run_changes_nothing() {
    let (dir, root) = sysroot();
    std::fs::write(at(&root, "/etc/opendkim.conf"), "Syslog yes\n").unwrap();
    let report = install::install(&opts(&root)).unwrap();
    for service in ["Dovecot", "OpenDKIM", "pure-ftpd"] {
        assert!(
            !report.notes.iter().any(|n| n.contains(service)),
            "{:?}",
            report.notes
        );
    }
    // The mail store's user, without a login.
    let passwd = std::fs::read_to_string(at(&root, "/etc/passwd")).unwrap();
    let vmail = passwd
        .lines()
        .find(|l| l.starts_with("vmail:"))
        .expect("vmail user");
    assert!(vmail.ends_with(":/var/vmail:/usr/sbin/nologin"), "{vmail}");
    let uid = vmail.split(':').nth(2).unwrap();

    // Dovecot: no conf.d include (no PAM), TLS required, the real doveconf accepts it.
    let conf = std::fs::read_to_string(at(&root, "/etc/dovecot/dovecot.conf")).unwrap();
    assert!(!conf.contains("!include conf.d"), "{conf}");
    // The one include: the mail host names by SNI, which the mail families derive.
    let sni = format!(
        "!include_try {}\n",
        at(&root, "/etc/dovecot/layerone/sni.conf").display()
    );
    assert!(conf.contains(&sni), "{sni:?} missing from\n{conf}");
    for line in [
        "protocols = imap pop3 lmtp\n",
        "ssl = required\n",
        "mail_uid = vmail\n",
        &format!("first_valid_uid = {uid}\n"),
        "  driver = passwd-file\n",
        "  mail_plugins = $mail_plugins sieve\n",
    ] {
        assert!(conf.contains(line), "{line:?} missing from\n{conf}");
    }
    let lmtp = at(&root, "/var/spool/postfix/private/dovecot-lmtp");
    assert!(
        conf.contains(&format!("unix_listener {} {{\n", lmtp.display())),
        "{conf}"
    );
    real(&root, &dir.path().join("audit"))
        .doveconf_check()
        .unwrap_or_else(|e| panic!("doveconf -n: {e}"));

    // OpenDKIM: the real daemon's configuration check accepts the file.
    let dkim = std::fs::read_to_string(at(&root, "/etc/opendkim.conf")).unwrap();
    assert!(dkim.contains("Socket inet:8891@127.0.0.1\n"), "{dkim}");
    assert!(dkim.contains("Mode sv\n"), "{dkim}");
    #[allow(clippy::disallowed_methods)] // No provider program runs the daemon's check.
    let (ok, out) = run(Command::new("/usr/sbin/opendkim")
        .arg("-n")
        .arg("-x")
        .arg(at(&root, "/etc/opendkim.conf")));
    assert!(ok, "opendkim -n: {out}");

    // pure-ftpd: one file per setting, PureDB enabled by Debian's link, the pem 0600.
    for (setting, value) in [
        ("ChrootEveryone", "yes"),
        ("NoAnonymous", "yes"),
        ("PAMAuthentication", "no"),
        ("UnixAuthentication", "no"),
        ("TLS", "1"),
        ("MinUID", "1000"),
    ] {
        assert_eq!(
            std::fs::read_to_string(at(&root, &format!("/etc/pure-ftpd/conf/{setting}"))).unwrap(),
            format!("{value}\n"),
            "{setting}"
        );
    }
    assert_eq!(
        std::fs::read_link(at(&root, "/etc/pure-ftpd/auth/50pure")).unwrap(),
        Path::new("../conf/PureDB")
    );
    let pem = std::fs::metadata(at(&root, "/etc/ssl/private/pure-ftpd.pem")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(pem.permissions().mode() & 0o7777, 0o600);

    let again = install::install(&InstallOptions::new(&root)).unwrap();
    assert_eq!(writes(&again.changes), Vec::<String>::new());
}

#[test]
fn a_dkim_key_only_root_reads_is_given_to_the_opendkim_group() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let (_dir, root) = sysroot();
    std::fs::write(at(&root, "/etc/opendkim.conf"), "Syslog yes\n").unwrap();
    // OpenDKIM's package made its group; a key was made before that, root's only.
    let group_file = at(&root, "/etc/group");
    let mut groups = std::fs::read_to_string(&group_file).unwrap();
    groups.push_str("opendkim:x:4321:\n");
    std::fs::write(&group_file, groups).unwrap();
    let key_dir = at(
        &root,
        "/etc/opendkim/layerone/keys/0123456789abcdef0123456789abcdef",
    );
    std::fs::create_dir_all(&key_dir).unwrap();
    std::fs::set_permissions(&key_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let key = key_dir.join("mail.private");
    std::fs::write(&key, "not a real key\n").unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();

    let mut check = InstallOptions::new(&root);
    check.check = true;
    check.name = Some("node1.example.com".parse().unwrap());
    let report = install::install(&check).unwrap();
    assert!(
        report
            .changes
            .iter()
            .any(|c| matches!(c, Change::OwnerMode { path, .. }
            if path == "/etc/opendkim/layerone/keys/0123456789abcdef0123456789abcdef")),
        "{:?}",
        report.changes
    );
    assert_eq!(
        std::fs::metadata(&key).unwrap().gid(),
        0,
        "--check changed the key"
    );

    install::install(&opts(&root)).unwrap();
    let dir_meta = std::fs::metadata(&key_dir).unwrap();
    assert_eq!((dir_meta.uid(), dir_meta.gid()), (0, 4321));
    assert_eq!(dir_meta.permissions().mode() & 0o7777, 0o750);
    let key_meta = std::fs::metadata(&key).unwrap();
    assert_eq!((key_meta.uid(), key_meta.gid()), (0, 4321));
    assert_eq!(key_meta.permissions().mode() & 0o7777, 0o640);
    let again = install::install(&InstallOptions::new(&root)).unwrap();
    assert!(
        !again
            .changes
            .iter()
            .any(|c| matches!(c, Change::OwnerMode { .. })),
        "{:?}",
        again.changes
    );
}
