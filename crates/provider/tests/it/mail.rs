//! The mail programs for real (`postfix check`, `postmap -q`, `doveconf -n`, `doveadm auth
//! test` against a Dovecot started on the test configuration, `sievec`, `opendkim-genkey`)
//! and the Sim's models of them, on the files the node writes.

use std::time::{Duration, Instant};

use provider::{Platform, PostfixMap, Program, ProviderError, parse_dkim_txt};
use testkit::{REAL_MAIL_PROGRAMS, require_mail_tools, write_mail_test_config};

use crate::common::Env;

/// `s3cret`, hashed with `openssl passwd -6`: a fixed test vector.
const HASH: &str = "$6$wMTlrcvoRImGHxRB$0JepXYZ.4AWYQ7z6J/S4l8GdlIJeCNkPn3Z88n2xpNcYO34jBJGDRq.PsbL150c84w6DUAwWjw6nr/kTmrLuo.";

fn real_env() -> Env {
    require_mail_tools();
    let mut real = REAL_MAIL_PROGRAMS.to_vec();
    real.push(Program::Doveadm);
    Env::with_real(Platform::Debian, real)
}

fn write(env: &Env, path: &std::path::Path, text: &str) {
    env.provider
        .write_config_atomic(path, text.as_bytes(), 0o644)
        .unwrap();
}

#[test]
fn real_postfix_checks_the_test_root_and_postmap_resolves_a_forwarder() {
    let env = real_env();
    let config = write_mail_test_config(&env.provider).unwrap();
    let p = &env.provider;
    write(
        &env,
        &p.postfix_map_path(PostfixMap::Domains),
        "example.com OK\n",
    );
    write(
        &env,
        &p.postfix_map_path(PostfixMap::Aliases),
        "info@example.com a@example.org,b@example.net\n",
    );
    p.postfix_check()
        .expect("the real postfix check accepts the node's settings");
    let aliases = p.postfix_map_path(PostfixMap::Aliases);
    assert_eq!(
        p.postmap_query(&aliases, "info@example.com")
            .unwrap()
            .as_deref(),
        Some("a@example.org,b@example.net")
    );
    assert_eq!(
        p.postmap_query(&aliases, "nobody@example.com").unwrap(),
        None
    );
    // A broken main.cf is refused.
    let main_cf = config.postfix_dir.join("main.cf");
    let good = std::fs::read_to_string(&main_cf).unwrap();
    write(&env, &main_cf, &format!("{good}this is not a setting\n"));
    let err = p.postfix_check().unwrap_err();
    assert!(
        matches!(
            err,
            ProviderError::Failed {
                program: Program::Postfix(provider::PostfixTool::Postfix),
                ..
            }
        ),
        "{err}"
    );
}

/// Dovecot on the test configuration, as a child of the test (no protocols: it listens on
/// nothing but its sockets in the sysroot), stopped with its children (auth, config, log)
/// when dropped.
pub fn start_dovecot(
    config: &std::path::Path,
    run_dir: &std::path::Path,
) -> testkit::daemons::GroupChild {
    assert!(
        rustix::process::geteuid().is_root(),
        "the Dovecot auth test needs root (Dovecot drops to its own users)"
    );
    use std::os::unix::process::CommandExt;
    #[allow(clippy::disallowed_methods)] // The test starts the real service it checks against.
    let child = std::process::Command::new("/usr/sbin/dovecot")
        .arg("-F")
        .arg("-c")
        .arg(config)
        .process_group(0)
        .spawn()
        .expect("dovecot starts");
    let guard = testkit::daemons::GroupChild::new(child);
    let socket = run_dir.join("auth-client");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !socket.exists() {
        assert!(
            Instant::now() < deadline,
            "dovecot did not create {}",
            socket.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    guard
}

#[test]
fn real_dovecot_reads_the_passwd_file_and_authenticates_a_mailbox() {
    let env = real_env();
    let config = write_mail_test_config(&env.provider).unwrap();
    let p = &env.provider;
    let home = p.sysconf("/var/vmail/example.com/info");
    write(
        &env,
        &p.dovecot_passwd_path(),
        &format!(
            "info@example.com:{{SHA512-CRYPT}}{HASH}::::{}::userdb_quota_rule=*:storage=100M\n",
            home.display()
        ),
    );
    p.doveconf_check()
        .expect("doveconf -n accepts the node's settings");
    let _dovecot = start_dovecot(&config.dovecot_config, &config.dovecot_run_dir);
    assert!(p.doveadm_auth_test("info@example.com", "s3cret").unwrap());
    assert!(!p.doveadm_auth_test("info@example.com", "wrong").unwrap());
    assert!(!p.doveadm_auth_test("other@example.com", "s3cret").unwrap());
    // The password is not in the audit log.
    let audit = testkit::audit_records(p).unwrap();
    let text = serde_json::to_string(&audit).unwrap();
    assert!(!text.contains("s3cret"), "a password reached the audit log");
}

#[test]
fn real_sievec_compiles_good_scripts_and_refuses_broken_ones() {
    let env = real_env();
    write_mail_test_config(&env.provider).unwrap();
    let p = &env.provider;
    let script = p.sieve_dir().join("good.sieve");
    write(
        &env,
        &script,
        "require [\"vacation\"];\nvacation :days 7 :subject \"a \\\" b\" \"away\";\n",
    );
    p.sieve_compile(&script).unwrap();
    assert!(p.sieve_dir().join("good.svbin").exists());
    let bad = p.sieve_dir().join("bad.sieve");
    write(&env, &bad, "vacation \"unterminated;\n");
    let err = p.sieve_compile(&bad).unwrap_err();
    let ProviderError::Failed { stderr, .. } = err else {
        panic!("{err}")
    };
    assert!(
        stderr.contains("end of file before end of quoted string"),
        "{stderr}"
    );
}

#[test]
fn sim_sievec_agrees_with_the_real_one_on_the_same_scripts() {
    let env = Env::sim(Platform::Debian);
    let p = &env.provider;
    p.ensure_dir(&p.sieve_dir(), 0o755).unwrap();
    let script = p.sieve_dir().join("good.sieve");
    write(
        &env,
        &script,
        "require [\"vacation\"];\nvacation :days 7 :subject \"a \\\" b\" \"away\";\n",
    );
    p.sieve_compile(&script).unwrap();
    let bad = p.sieve_dir().join("bad.sieve");
    write(&env, &bad, "vacation \"unterminated;\n");
    let err = p.sieve_compile(&bad).unwrap_err();
    let ProviderError::Failed { stderr, .. } = err else {
        panic!("{err}")
    };
    assert!(
        stderr.contains("end of file before end of quoted string"),
        "{stderr}"
    );
}

#[test]
fn real_opendkim_genkey_writes_a_key_whose_stub_parses() {
    let env = real_env();
    let p = &env.provider;
    let dir = p.sysconf("/etc/opendkim/layerone/keys/k1");
    p.ensure_dir(&dir, 0o700).unwrap();
    p.dkim_genkey(&dir, "example.com", "mail2026", 1024)
        .unwrap();
    let stub = std::fs::read_to_string(dir.join("mail2026.txt")).unwrap();
    let value = parse_dkim_txt(&stub).expect("the stub parses");
    assert!(
        value.starts_with("v=DKIM1; h=sha256; k=rsa; p=MI"),
        "{value}"
    );
    let private = std::fs::read_to_string(dir.join("mail2026.private")).unwrap();
    assert!(private.contains("PRIVATE KEY"));
}

#[test]
fn sim_models_check_the_node_tables_and_record_reloads() {
    let env = Env::sim(Platform::Debian);
    let p = &env.provider;
    write_mail_test_config(p).unwrap();
    write(
        &env,
        &p.postfix_map_path(PostfixMap::Aliases),
        "a@example.com b@example.org\n",
    );
    p.postfix_check().unwrap();
    assert_eq!(
        p.postmap_query(&p.postfix_map_path(PostfixMap::Aliases), "a@example.com")
            .unwrap()
            .as_deref(),
        Some("b@example.org")
    );
    p.postfix_reload().unwrap();
    p.dovecot_reload().unwrap();
    assert_eq!(testkit::sim_mail_reloads(p).unwrap(), (1, 1));
    write(
        &env,
        &p.postfix_map_path(PostfixMap::Aliases),
        "lonely-key\n",
    );
    assert!(p.postfix_check().is_err());
    write(
        &env,
        &p.dovecot_passwd_path(),
        "a@example.com:{SHA512-CRYPT}x\n",
    );
    assert!(p.doveconf_check().is_err());
    let dir = p.sysconf("/etc/opendkim/layerone/keys/k1");
    p.ensure_dir(&dir, 0o700).unwrap();
    p.dkim_genkey(&dir, "example.com", "s1", 2048).unwrap();
    let stub = std::fs::read_to_string(dir.join("s1.txt")).unwrap();
    assert!(
        parse_dkim_txt(&stub)
            .unwrap()
            .starts_with("v=DKIM1; h=sha256; k=rsa; p=")
    );
}
