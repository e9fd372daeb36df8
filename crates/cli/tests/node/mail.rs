//! The mail families end to end: the real runner writes the mail configuration into a test
//! config root (the Sim stands in for the running services' reloads; `doveconf`, `sievec`
//! and `opendkim-genkey` run for real), then the real Postfix and Dovecot check what it
//! wrote: `postfix -c DIR check`, `postmap -q` on the forwarders, `doveconf -n`, and
//! `doveadm auth test` against a Dovecot started on the generated passdb.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use provider::{Platform, PostfixMap, Program};
use registry::JobState;
use serde_json::{Value, json};
use testkit::{REAL_MAIL_PROGRAMS, require_mail_tools, write_mail_test_config};

const DOMAIN: &str = "shop.example.com";

fn run(node: &mut Node, body: &Value) -> Value {
    node.submit(body);
    node.pass();
    let rid = body["request_id"].as_str().unwrap();
    let job = node.state().job(rid).unwrap().unwrap();
    assert_eq!(job.state, JobState::Succeeded, "{body}: {:?}", job.error);
    job.result.unwrap_or_default()
}

/// A node whose runner uses the real doveconf, sievec and opendkim-genkey, with the mail
/// test configuration and the host's `dovecot` group in the sysroot (the passwd-file is
/// written 0640 to that group).
fn mail_node() -> Node {
    require_mail_tools();
    let mut node = Node::new();
    write_mail_test_config(&node.provider).unwrap();
    let host_group = std::fs::read_to_string("/etc/group").unwrap();
    let dovecot = host_group
        .lines()
        .find(|l| l.starts_with("dovecot:"))
        .expect("the dovecot group (dovecot-core creates it)");
    let group = node.path("/etc/group");
    let mut text = std::fs::read_to_string(&group).unwrap();
    text.push_str(dovecot);
    text.push('\n');
    std::fs::write(&group, text).unwrap();
    node.extra_real = vec!["doveconf", "sievec", "opendkim-genkey"];
    node
}

/// The same sysroot through a provider that runs every mail program for real.
fn real_provider(node: &Node) -> provider::Provider {
    let mut real = REAL_MAIL_PROGRAMS.to_vec();
    real.push(Program::Doveadm);
    testkit::sim_provider(Platform::Debian, node.dir.path(), real)
}

/// Dovecot and its children (auth, config, log), stopped with their process group when
/// dropped.
type Dovecot = testkit::daemons::GroupChild;

fn start_dovecot(node: &Node) -> Dovecot {
    assert!(
        rustix::process::geteuid().is_root(),
        "the Dovecot auth test needs root (Dovecot drops to its own users)"
    );
    use std::os::unix::process::CommandExt;
    #[allow(clippy::disallowed_methods)] // The test starts the real service it checks against.
    let child = std::process::Command::new("/usr/sbin/dovecot")
        .arg("-F")
        .arg("-c")
        .arg(node.path("/etc/dovecot/dovecot.conf"))
        .process_group(0)
        .spawn()
        .expect("dovecot starts");
    let guard = testkit::daemons::GroupChild::new(child);
    let socket = node.path("/run/dovecot/auth-client");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !socket.exists() {
        assert!(Instant::now() < deadline, "dovecot did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    guard
}

/// `doveadm user ADDRESS`: the userdb lookup LMTP delivery makes, against the running Dovecot.
fn doveadm_user(node: &Node, address: &str) -> String {
    #[allow(clippy::disallowed_methods)] // The test asks the real service it checks against.
    let out = std::process::Command::new("/usr/bin/doveadm")
        .arg("-c")
        .arg(node.path("/etc/dovecot/dovecot.conf"))
        .args(["user", address])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "doveadm user {address}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn generated_mail_configuration_passes_the_real_checks_and_authenticates() {
    let mut node = mail_node();
    run(&mut node, &ensure_account(1, 10, "shop1"));
    let domain = run(&mut node, &ensure_mail_domain(2, 50, 10, DOMAIN));
    assert_eq!(domain["sending_open"], false, "a new domain may not send");
    run(&mut node, &ensure_mailbox(3, 51, 10, DOMAIN, "info"));
    run(
        &mut node,
        &ensure_forwarder(4, 52, 10, &format!("sales@{DOMAIN}")),
    );
    run(&mut node, &set_spam(5, 55, 10, DOMAIN, "strict"));
    run(
        &mut node,
        &mail_op(6, "set_mail_catch_all", 50, 10, json!({"mailbox": "info"})),
    );
    node.check_converged();

    let real = real_provider(&node);
    real.postfix_check()
        .expect("the real postfix check accepts the generated configuration");
    real.doveconf_check()
        .expect("the real doveconf -n accepts the generated configuration");
    let q = |map, key: &str| {
        real.postmap_query(&real.postfix_map_path(map), key)
            .unwrap()
    };
    assert_eq!(
        q(PostfixMap::Aliases, &format!("sales@{DOMAIN}")).as_deref(),
        Some("owner@example.org,backup@example.net")
    );
    assert_eq!(
        q(PostfixMap::Aliases, &format!("@{DOMAIN}")).as_deref(),
        Some("info@shop.example.com")
    );
    assert_eq!(q(PostfixMap::Domains, DOMAIN).as_deref(), Some("OK"));
    assert_eq!(
        q(PostfixMap::Mailboxes, &format!("info@{DOMAIN}")).as_deref(),
        Some("shop.example.com/info/Maildir/")
    );
    assert_eq!(
        q(PostfixMap::Spam, DOMAIN).as_deref(),
        Some(provider::SPAM_CLASS_STRICT)
    );
    assert!(
        q(PostfixMap::SenderGate, DOMAIN)
            .unwrap()
            .starts_with("REJECT")
    );
    run(
        &mut node,
        &mail_op(7, "set_mail_sending_gate", 50, 10, json!({"open": true})),
    );
    assert_eq!(
        q(PostfixMap::SenderGate, DOMAIN),
        None,
        "the gate did not open"
    );

    // The mailbox authenticates against the generated passdb, with its hash and only it.
    let passwd = node.provider.dovecot_passwd_path();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&passwd).unwrap().permissions().mode() & 0o777,
        0o640
    );
    let dovecot = start_dovecot(&node);
    assert!(
        real.doveadm_auth_test(&format!("info@{DOMAIN}"), "s3cret")
            .unwrap()
    );
    assert!(
        !real
            .doveadm_auth_test(&format!("info@{DOMAIN}"), "wrong")
            .unwrap()
    );
    assert!(
        !real
            .doveadm_auth_test(&format!("sales@{DOMAIN}"), "s3cret")
            .unwrap()
    );

    // Suspended: the right password no longer logs in, but the userdb (what LMTP delivery
    // looks up) still has the mailbox. A rebuild of the account keeps it suspended; after
    // unsuspend_mailbox the same password works again.
    let address = format!("info@{DOMAIN}");
    let suspended = run(
        &mut node,
        &mail_op(20, "suspend_mailbox", 51, 10, json!({})),
    );
    assert_eq!(suspended["suspended"], true);
    assert_eq!(suspended["address"], address);
    assert!(
        !real.doveadm_auth_test(&address, "s3cret").unwrap(),
        "a suspended mailbox authenticated"
    );
    let userdb = doveadm_user(&node, &address);
    let home = node.path("/var/vmail/shop.example.com/info");
    assert!(
        userdb
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["home", home.to_str().unwrap()]),
        "delivery's userdb lookup lost the suspended mailbox: {userdb}"
    );
    // A changed password keeps the suspension.
    run(
        &mut node,
        &mail_op(
            21,
            "set_mailbox_password",
            51,
            10,
            json!({"password": MAIL_HASH}),
        ),
    );
    std::fs::remove_file(&passwd).unwrap();
    let rebuilt = run(&mut node, &account_op(22, "rebuild_account", 10));
    let replayed = rebuilt["replayed"].to_string();
    assert!(replayed.contains("suspend_mailbox"), "{replayed}");
    assert!(
        !real.doveadm_auth_test(&address, "s3cret").unwrap(),
        "the rebuild lifted the suspension"
    );
    node.check_converged();
    let back = run(
        &mut node,
        &mail_op(23, "unsuspend_mailbox", 51, 10, json!({})),
    );
    assert_eq!(back["suspended"], false);
    assert!(
        real.doveadm_auth_test(&address, "s3cret").unwrap(),
        "an unsuspended mailbox does not authenticate"
    );
    node.check_converged();
    drop(dovecot);

    // Usage: two messages delivered into the Maildir.
    let maildir = node.path("/var/vmail/shop.example.com/info/Maildir");
    std::fs::create_dir_all(maildir.join("new")).unwrap();
    std::fs::create_dir_all(maildir.join(".Sent/cur")).unwrap();
    std::fs::write(maildir.join("new/1.host"), vec![b'x'; 1000]).unwrap();
    std::fs::write(maildir.join(".Sent/cur/2.host:2,S"), vec![b'y'; 500]).unwrap();
    let usage = run(
        &mut node,
        &mail_op(8, "observe_mailbox_usage", 51, 10, json!({})),
    );
    assert_eq!(usage["bytes"], 1500);
    assert_eq!(usage["messages"], 2);
    assert_eq!(usage["quota_mib"], 100);
}

#[test]
fn dkim_record_in_the_result_is_the_key_on_disk() {
    let mut node = mail_node();
    run(&mut node, &ensure_account(1, 10, "shop1"));
    run(&mut node, &ensure_mail_domain(2, 50, 10, DOMAIN));
    let result = run(&mut node, &ensure_dkim(3, 54, 10, DOMAIN));
    assert_eq!(
        result["dkim"]["name"],
        "mail2026._domainkey.shop.example.com"
    );
    assert_eq!(result["spf"]["name"], DOMAIN);
    assert!(
        result["spf"]["value"]
            .as_str()
            .unwrap()
            .starts_with("v=spf1 ")
    );
    assert_eq!(result["dmarc"]["name"], "_dmarc.shop.example.com");
    let value = result["dkim"]["value"].as_str().unwrap();
    let p = value.split("p=").nth(1).expect("a p= tag");
    // The public half of the private key on disk, as openssl derives it.
    let key = node
        .path("/etc/opendkim/layerone/keys")
        .join(id(54))
        .join("mail2026.private");
    #[allow(clippy::disallowed_methods)] // The test checks the key with an independent tool.
    let out = std::process::Command::new("/usr/bin/openssl")
        .args(["pkey", "-pubout", "-in"])
        .arg(&key)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pem = String::from_utf8(out.stdout).unwrap();
    let der_b64: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    assert_eq!(p, der_b64, "the published record is not the key on disk");
    let keytable = std::fs::read_to_string(node.path("/etc/opendkim/layerone/KeyTable")).unwrap();
    assert!(keytable.contains(&format!(
        "mail2026._domainkey.{DOMAIN} {DOMAIN}:mail2026:{}",
        key.display()
    )));
    // OpenDKIM was not running: nothing to reload (it reads the tables when it starts).
    let opendkim_reloads = |node: &Node| {
        testkit::sim_service_reloads(&node.provider)
            .unwrap()
            .iter()
            .filter(|u| *u == "opendkim.service")
            .count()
    };
    assert_eq!(opendkim_reloads(&node), 0);
    // Sent again: the same key, so the published record stays valid.
    let again = run(&mut node, &ensure_dkim(4, 54, 10, DOMAIN));
    assert_eq!(again["dkim"], result["dkim"]);
    node.check_converged();

    // With OpenDKIM running, each batch that writes its tables reloads it once (here two
    // batches: the new domain's and its key's).
    let units = node.path(simulator::SIM_UNITS_DIR);
    std::fs::create_dir_all(&units).unwrap();
    std::fs::write(units.join("opendkim.service"), "active\n").unwrap();
    run(
        &mut node,
        &ensure_mail_domain(5, 51, 10, "other.example.com"),
    );
    run(&mut node, &ensure_dkim(6, 55, 10, "other.example.com"));
    assert_eq!(opendkim_reloads(&node), 2);
    let keytable = std::fs::read_to_string(node.path("/etc/opendkim/layerone/KeyTable")).unwrap();
    assert!(
        keytable.contains("mail2026._domainkey.other.example.com"),
        "{keytable}"
    );
}

#[test]
fn hostile_autoresponder_text_stays_inside_its_sieve_strings() {
    let mut node = mail_node();
    run(&mut node, &ensure_account(1, 10, "shop1"));
    run(&mut node, &ensure_mail_domain(2, 50, 10, DOMAIN));
    run(&mut node, &ensure_mailbox(3, 51, 10, DOMAIN, "info"));
    let subject = r#"Away" :days 1 "x"; redirect "evil@example.org"; discard; vacation "\"#;
    let body = r#"}" ; redirect "evil@example.org"; keep; /* \\" "#;
    let mut req = ensure_autoresponder(4, 53, 10, 51);
    req["resource"]["subject"] = json!(subject);
    req["resource"]["body"] = json!(body);
    run(&mut node, &req);
    let script = node.provider.sieve_dir().join(format!("{}.sieve", id(51)));
    let svbin = script.with_extension("svbin");
    assert!(svbin.exists(), "the real sievec compiled the script");
    #[allow(clippy::disallowed_methods)] // The test reads the compiled script back.
    let dump = std::process::Command::new("/usr/bin/sieve-dump")
        .arg(&svbin)
        .output()
        .unwrap();
    assert!(dump.status.success());
    let dump = String::from_utf8_lossy(&dump.stdout);
    assert_eq!(dump.matches("VACATION").count(), 1, "{dump}");
    for forbidden in ["REDIRECT", "DISCARD", "KEEP"] {
        assert!(
            !dump.contains(forbidden),
            "the text became a command: {dump}"
        );
    }
    assert!(
        dump.contains(&format!("subject: STR[{}] \"{subject}\"", subject.len())),
        "{dump}"
    );
    assert!(
        dump.contains(&format!("reason: STR[{}] \"{body}\"", body.len())),
        "{dump}"
    );
    node.check_converged();
}

/// Three accounts' changes in one batch: one reload of each service, and each job's files
/// include the earlier jobs' rows (not yet committed to state.db when the later job wrote).
#[test]
fn mail_reloads_are_coalesced_per_batch_and_no_job_loses_another_ones_rows() {
    let mut node = Node::new();
    for i in 0..3u64 {
        node.submit(&ensure_account(1 + i, 10 + i, &format!("shop{i}")));
    }
    node.pass();
    for i in 0..3u64 {
        node.submit(&ensure_mail_domain(
            5 + i,
            50 + i,
            10 + i,
            &format!("d{i}.example.com"),
        ));
    }
    node.pass();
    let (postfix_before, dovecot_before) = testkit::sim_mail_reloads(&node.provider).unwrap();
    for i in 0..3u64 {
        node.submit(&ensure_mailbox(
            10 + i,
            60 + i,
            10 + i,
            &format!("d{i}.example.com"),
            "info",
        ));
    }
    node.pass();
    for i in 0..3 {
        assert_eq!(node.job_state(&id(10 + i)), Some(JobState::Succeeded));
    }
    let (postfix, dovecot) = testkit::sim_mail_reloads(&node.provider).unwrap();
    assert_eq!(
        postfix - postfix_before,
        1,
        "three mailboxes, one Postfix reload"
    );
    assert_eq!(
        dovecot - dovecot_before,
        1,
        "three mailboxes, one Dovecot reload"
    );
    let passwd = std::fs::read_to_string(node.provider.dovecot_passwd_path()).unwrap();
    assert_eq!(passwd.lines().count(), 3, "{passwd}");
    let domains =
        std::fs::read_to_string(node.provider.postfix_map_path(PostfixMap::Domains)).unwrap();
    assert_eq!(
        domains.lines().filter(|l| l.ends_with(" OK")).count(),
        3,
        "{domains}"
    );
    node.check_converged();
}

#[test]
fn a_mail_change_failing_the_real_postfix_check_is_reverted() {
    let mut node = mail_node();
    run(&mut node, &ensure_account(1, 10, "shop1"));
    run(&mut node, &ensure_mail_domain(2, 50, 10, DOMAIN));
    // From here the runner's configuration test is the real `postfix check` (no reload is
    // reached: the check fails).
    node.extra_real.push("postfix");
    let tables: Vec<_> = PostfixMap::ALL
        .iter()
        .map(|m| std::fs::read(node.provider.postfix_map_path(*m)).unwrap())
        .collect();
    let passwd = std::fs::read(node.provider.dovecot_passwd_path()).ok();
    // Someone else breaks main.cf: every Postfix check fails from now on.
    let main_cf = node.path("/etc/postfix/main.cf");
    let mut text = std::fs::read_to_string(&main_cf).unwrap();
    text.push_str("this is not a setting\n");
    std::fs::write(&main_cf, text).unwrap();
    node.submit(&ensure_mailbox(3, 51, 10, DOMAIN, "info"));
    node.pass();
    let job = node.state().job(&id(3)).unwrap().unwrap();
    assert_eq!(job.state, JobState::Failed);
    assert_eq!(job.error.unwrap().code, "config_test_failed");
    for (map, before) in PostfixMap::ALL.iter().zip(&tables) {
        assert_eq!(
            &std::fs::read(node.provider.postfix_map_path(*map)).unwrap(),
            before,
            "{map:?} was not reverted"
        );
    }
    assert_eq!(
        std::fs::read(node.provider.dovecot_passwd_path()).ok(),
        passwd,
        "the passwd-file changed for a failed job"
    );
}

/// Drift on the real services: a mailbox's passwd-file line changed behind the node's back
/// lets another password into the real Dovecot and keeps the right one out; the drift check
/// names the mailbox and the line no resource derives, a DKIM key whose private half is gone
/// is named too, and the account's rebuild puts the recorded line back (the right password
/// logs in again) and makes the key anew with the real `opendkim-genkey`.
#[test]
fn a_changed_dovecot_login_and_a_lost_dkim_key_are_drift_until_the_rebuild() {
    let mut node = mail_node();
    for body in [
        ensure_account(1, 10, "shop1"),
        ensure_mail_domain(2, 50, 10, DOMAIN),
        ensure_mailbox(3, 51, 10, DOMAIN, "info"),
        ensure_dkim(4, 54, 10, DOMAIN),
    ] {
        run(&mut node, &body);
    }
    assert_eq!(node.check_drift(), [], "a converged node drifted");
    let real = real_provider(&node);
    let dovecot = start_dovecot(&node);
    let address = format!("info@{DOMAIN}");
    assert!(real.doveadm_auth_test(&address, "s3cret").unwrap());

    let passwd = node.provider.dovecot_passwd_path();
    let text = std::fs::read_to_string(&passwd).unwrap();
    let changed = text.replace(&format!("{{SHA512-CRYPT}}{MAIL_HASH}"), "{PLAIN}intruder");
    assert_ne!(changed, text);
    std::fs::write(&passwd, changed).unwrap();
    // Dovecot looks at its passwd-file again at most once a second.
    let reread = || std::thread::sleep(Duration::from_millis(1100));
    reread();
    assert!(real.doveadm_auth_test(&address, "intruder").unwrap());
    assert!(!real.doveadm_auth_test(&address, "s3cret").unwrap());
    let private = node
        .path("/etc/opendkim/layerone/keys")
        .join(id(54))
        .join("mail2026.private");
    std::fs::remove_file(&private).unwrap();
    use registry::{EventKind, Owner};
    let found = [
        ("dkim_key", id(54), ops::dkim_key::DKIM_KEY_MISSING),
        ("mailbox", id(51), ops::mailbox::DOVECOT_ENTRY_MISSING),
        (
            "mailbox",
            Owner::NODE.to_owned(),
            ops::mailbox::DOVECOT_PASSWD_DIFFERS,
        ),
    ];
    assert_eq!(node.check_drift(), drift_as(EventKind::Drift, &found));
    assert!(
        real.doveadm_auth_test(&address, "intruder").unwrap(),
        "reported, not repaired"
    );

    run(&mut node, &account_op(5, "rebuild_account", 10));
    assert_eq!(
        node.check_drift(),
        drift_as(EventKind::DriftResolved, &found)
    );
    reread();
    assert!(real.doveadm_auth_test(&address, "s3cret").unwrap());
    assert!(!real.doveadm_auth_test(&address, "intruder").unwrap());
    assert!(private.exists(), "the DKIM key was not made anew");
    drop(dovecot);
    node.check_converged();
}

/// A tenant's mail host name by SNI, checked with the real programs: once the account's
/// certificate covers `mail.<domain>` (an alias of its web domain), the real `doveconf -n`
/// reads a `local_name` block with that certificate's files, the real `postfix check` passes
/// and the real `postmap -Fq` loads the key then the chain from the `texthash:` table (what
/// smtpd does when it opens it); the mail domain's result and client settings name
/// `mail.<domain>`. Removing the certificate takes the name away again.
#[test]
#[allow(clippy::disallowed_methods)] // The real doveconf and postmap read what the node wrote.
fn a_certificate_covering_mail_dot_domain_serves_it_by_sni_on_the_real_configurations() {
    let mut node = mail_node();
    let config = node.path(ops::certificate::NODE_CONFIG);
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "name = \"node1.provider.test\"\n").unwrap();
    let host = format!("mail.{DOMAIN}");
    run(&mut node, &ensure_account(1, 10, "shop1"));
    run(
        &mut node,
        &json!({"request_id": id(2), "operation": "ensure_web_domain",
                "resource": {"id": id(30), "account": id(10), "domain": DOMAIN, "aliases": [&host]}}),
    );
    let created = run(&mut node, &ensure_mail_domain(3, 50, 10, DOMAIN));
    assert_eq!(created["mail_host"], "node1.provider.test", "{created}");
    let sni_map = node.provider.postfix_sni_map_path();
    let sni_conf = node.provider.dovecot_sni_path();
    assert!(!sni_map.exists() || std::fs::read(&sni_map).unwrap().is_empty());

    let cert = run(&mut node, &ensure_cert(4, 40, 10, 30));
    assert_eq!(cert["covered"], json!([DOMAIN, &host]), "{cert}");
    let (chain, key) = (
        node.path(&format!("/etc/layerone/certificates/{}.crt", id(40))),
        node.path(&format!("/etc/layerone/certificates/{}.key", id(40))),
    );
    assert_eq!(
        std::fs::read_to_string(&sni_map).unwrap(),
        format!("{host} {} {}\n", key.display(), chain.display())
    );
    let real = real_provider(&node);
    real.doveconf_check().unwrap();
    real.postfix_check().unwrap();
    let dovecot_conf = node.path("/etc/dovecot/dovecot.conf");
    let out = std::process::Command::new("/usr/bin/doveconf")
        .arg("-c")
        .arg(&dovecot_conf)
        .arg("-n")
        .output()
        .unwrap();
    let parsed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        parsed.contains(&format!("local_name {host} {{")),
        "{parsed}"
    );
    // Postfix loads the files' contents when it opens the table: key first, then the chain.
    let out = std::process::Command::new("/usr/sbin/postmap")
        .arg("-c")
        .arg(node.path("/etc/postfix"))
        .arg("-Fq")
        .arg(&host)
        .arg(format!("texthash:{}", sni_map.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let loaded = String::from_utf8_lossy(&out.stdout).into_owned();
    let expected =
        std::fs::read_to_string(&key).unwrap() + &std::fs::read_to_string(&chain).unwrap();
    // (Postfix puts a newline after each file's content.)
    let lines = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(lines(&loaded), lines(&expected));
    // The settings mail clients find name the tenant's host now.
    let again = run(
        &mut node,
        &mail_op(5, "set_mail_sending_gate", 50, 10, json!({"open": true})),
    );
    assert_eq!(again["mail_host"], host.as_str(), "{again}");
    let autoconfig = node
        .path(ops::mail_clients::MAIL_CLIENTS_DIR)
        .join(id(50))
        .join(ops::mail_clients::AUTOCONFIG_FILE);
    let text = std::fs::read_to_string(&autoconfig).unwrap();
    assert!(
        text.contains(&format!("<hostname>{host}</hostname>")),
        "{text}"
    );
    let drift = node.check_drift();
    assert!(
        drift.is_empty(),
        "{drift:?}\n{}",
        std::fs::read_to_string(&sni_conf).unwrap()
    );
    // The listeners the node handshakes after the certificate's batch (and the drift check
    // on a server): Apache on 443 for both names, the mail services for the mail host only.
    let ctx = node.ctx();
    let listeners: Vec<(String, u16, String)> = ops::certificate::listeners::listeners(
        &ctx,
        &id(10).parse().unwrap(),
        &id(40).parse().unwrap(),
    )
    .unwrap()
    .into_iter()
    .map(|l| (l.service.name().to_owned(), l.port, l.name.to_string()))
    .collect();
    let at = |service: &str, port: u16, name: &str| (service.to_owned(), port, name.to_owned());
    assert_eq!(
        listeners,
        vec![
            at("apache", 443, DOMAIN),
            at("apache", 443, &host),
            at("dovecot", 993, &host),
            at("dovecot", 995, &host),
            at("postfix", 587, &host),
        ]
    );

    run(
        &mut node,
        &mail_op(6, "remove_certificate", 40, 10, json!({})),
    );
    assert_eq!(std::fs::read(&sni_map).unwrap(), b"");
    assert_eq!(std::fs::read(&sni_conf).unwrap(), b"");
    real.doveconf_check().unwrap();
    let text = std::fs::read_to_string(&autoconfig).unwrap();
    assert!(
        text.contains("<hostname>node1.provider.test</hostname>"),
        "{text}"
    );
}
