//! Drift detection end to end through the real runner binary: what state.db records and the
//! OS no longer shows becomes one `drift` event on the events feed, not a repair; a drift is
//! reported once however many checks see it, and once more when it is gone. What is checked
//! is what every family declares it derives: each kind of derived file and setting is
//! tampered with here, named by its family, resource and aspect, and repaired by
//! `rebuild_account` (or, for what a rebuild does not make, by the operation that does).

use crate::common;

use std::collections::BTreeSet;

use common::*;
use registry::{DriftAspect, EventKind, JobState, Owner, Scope};
use serde_json::json;

#[test]
fn drift_becomes_one_event_per_finding_and_is_resolved_by_rebuild() {
    let mut node = Node::new();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.submit(&ensure_account(2, 11, "shop2"));
    node.pass();
    node.submit(&ensure_key(3, 20, 10));
    node.submit(&ensure_domain(4, 30, 10, "shop.example.com"));
    node.submit(&ensure_domain(5, 31, 10, "blog.example.com"));
    node.submit(&ensure_ftp(11, 50, 10, "shop1.up", None));
    node.pass();
    node.drift_check_due();
    node.pass();
    assert!(node.drift_events(0).is_empty(), "a converged node drifted");

    let vhosts = node.path(node.provider.apache_layout().vhosts_dir);
    let vhost_30 = vhosts.join(format!("{}.conf", id(30)));
    let vhost_31 = vhosts.join(format!("{}.conf", id(31)));
    let keys = node.path("/home/shop1/.ssh/authorized_keys");
    let edited_vhost = std::fs::read_to_string(&vhost_31).unwrap() + "Redirect / http://evil/\n";
    std::fs::remove_file(&vhost_30).unwrap();
    std::fs::write(&vhost_31, &edited_vhost).unwrap();
    std::fs::write(&keys, "ssh-ed25519 AAAA intruder\n").unwrap();
    std::fs::write(node.path(provider::FTP_LAYOUT.passwd), "").unwrap();
    // shop2's user removed behind the node's back (its passwd and shadow lines; a passwd line
    // alone gone would leave useradd refusing the name, and the rebuild failing, as for real).
    for file in ["/etc/passwd", "/etc/shadow"] {
        let text = std::fs::read_to_string(node.path(file)).unwrap();
        let without: String = text
            .lines()
            .filter(|l| !l.starts_with("shop2:"))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(node.path(file), without).unwrap();
    }

    let before = node.last_cursor();
    node.drift_check_due();
    node.pass();
    let found = node.drift_events(before);
    let mut seen: Vec<(String, String, DriftAspect)> = found
        .iter()
        .map(|e| {
            assert_eq!(e.kind, EventKind::Drift);
            assert!(e.request_id.is_none() && e.state.is_none());
            let d = e.drift.as_ref().unwrap();
            (d.family.clone(), d.resource_id.clone(), d.aspect.clone())
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        vec![
            ("account".into(), id(11), ops::account::USER_MISSING),
            (
                "ftp_account".into(),
                id(50),
                ops::ftp_account::FTP_LOGIN_MISSING
            ),
            (
                "ssh_key".into(),
                id(10),
                ops::ssh_key::AUTHORIZED_KEYS_DIFFERS
            ),
            ("web_domain".into(), id(30), ops::web_domain::VHOST_MISSING),
            ("web_domain".into(), id(31), ops::web_domain::VHOST_DIFFERS),
        ]
    );
    // Reported, not repaired.
    assert!(!vhost_30.exists());
    assert_eq!(std::fs::read_to_string(&vhost_31).unwrap(), edited_vhost);

    // Seen again by the next checks: no new event, and nothing committed.
    let cursor = node.last_cursor();
    for _ in 0..2 {
        node.drift_check_due();
        node.pass();
    }
    assert_eq!(
        node.last_cursor(),
        cursor,
        "a known drift was reported again"
    );

    // authorized_keys deleted: the differing drift resolves, a missing one appears.
    std::fs::remove_file(&keys).unwrap();
    node.drift_check_due();
    node.pass();
    let changed = node.drift_events(cursor);
    let kinds: Vec<(EventKind, DriftAspect)> = changed
        .iter()
        .map(|e| (e.kind, e.drift.as_ref().unwrap().aspect.clone()))
        .collect();
    assert!(kinds.contains(&(EventKind::Drift, ops::ssh_key::AUTHORIZED_KEYS_MISSING)));
    assert!(kinds.contains(&(
        EventKind::DriftResolved,
        ops::ssh_key::AUTHORIZED_KEYS_DIFFERS
    )));
    assert_eq!(kinds.len(), 2, "{kinds:?}");

    // The repair: rebuild_account re-derives shop1's files; the next check resolves them.
    let cursor = node.last_cursor();
    node.submit(&account_op(6, "rebuild_account", 10));
    node.drift_check_due();
    node.pass();
    assert_eq!(node.job_state(&id(6)), Some(registry::JobState::Succeeded));
    let mut resolved: Vec<DriftAspect> = node
        .drift_events(cursor)
        .iter()
        .map(|e| {
            assert_eq!(e.kind, EventKind::DriftResolved);
            e.drift.as_ref().unwrap().aspect.clone()
        })
        .collect();
    resolved.sort();
    // By name: an aspect is its name.
    assert_eq!(
        resolved,
        [
            ops::ssh_key::AUTHORIZED_KEYS_MISSING,
            ops::ftp_account::FTP_LOGIN_MISSING,
            ops::web_domain::VHOST_DIFFERS,
            ops::web_domain::VHOST_MISSING,
        ]
    );
    // shop2's drift lasts until shop2 is rebuilt: its user comes back.
    let cursor = node.last_cursor();
    node.submit(&account_op(7, "rebuild_account", 11));
    node.drift_check_due();
    node.pass();
    let job = node.state().job(&id(7)).unwrap().unwrap();
    assert_eq!(job.state, registry::JobState::Succeeded, "{job:?}");
    let last = node.drift_events(cursor);
    assert_eq!(last.len(), 1, "{last:?}");
    assert_eq!(last[0].kind, EventKind::DriftResolved);
    assert_eq!(
        last[0].drift.as_ref().unwrap().aspect,
        ops::account::USER_MISSING
    );
    node.check_converged();
}

fn succeeded(node: &mut Node, body: &serde_json::Value) {
    node.submit(body);
    node.pass();
    let rid = body["request_id"].as_str().unwrap();
    let job = node.state().job(rid).unwrap().unwrap();
    assert_eq!(job.state, JobState::Succeeded, "{body}: {:?}", job.error);
}

/// A node with account 10 (`shop1`) and what `bodies` make for it (each succeeded), which
/// the drift check finds converged.
fn shop1_with(bodies: Vec<serde_json::Value>) -> Node {
    let mut node = Node::new();
    succeeded(&mut node, &ensure_account(1, 10, "shop1"));
    for body in bodies {
        succeeded(&mut node, &body);
    }
    assert_eq!(node.check_drift(), [], "a converged node drifted");
    node
}

/// Rebuilds account 10 (request `req`) and checks that the next drift check resolves
/// `found`, and nothing else.
fn rebuild_resolves(node: &mut Node, req: u64, found: &[(&str, String, DriftAspect)]) {
    succeeded(node, &account_op(req, "rebuild_account", 10));
    assert_eq!(
        node.check_drift(),
        drift_as(EventKind::DriftResolved, found)
    );
}

fn edit(path: &std::path::Path, f: impl FnOnce(String) -> String) {
    let text = std::fs::read_to_string(path).unwrap();
    std::fs::write(path, f(text)).unwrap();
}

/// `text` without its lines that start with `prefix`.
fn without(text: &str, prefix: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with(prefix))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// alice, a local administrator (in `sudo`, with a login uid) a sudo allowlist may list.
fn seed_alice(node: &Node) {
    edit(&node.path("/etc/passwd"), |t| {
        t + "alice:x:1001:1001::/home/alice:/bin/bash\n"
    });
    edit(&node.path("/etc/group"), |t| {
        t + "sudo:x:27:alice\nalice:x:1001:\n"
    });
    std::fs::write(
        node.path("/etc/login.defs"),
        "UID_MIN\t\t\t 1000\nUID_MAX\t\t\t60000\n",
    )
    .unwrap();
}

/// Families whose hook derives nothing, each with why. Every other family's hook must list
/// something once its example request is applied.
/// The families that declare a resource and still derive nothing, with the reason. A family
/// without a declaring operation (only observations, reads and one-off actions) records
/// nothing, so derives nothing, and needs no entry here.
const DECLARED_BUT_DERIVES_NOTHING: &[(&str, &str)] = &[
    (
        "php_extensions",
        "extensions are checked against what each version loads, not written (CloudLinux's selector choice only selectorctl shows)",
    ),
    (
        "assignment",
        "the fleet's assignment is recorded and held against every job; no file is derived from it",
    ),
];

/// Why `family` derives nothing, if it does not.
fn derives_nothing(family: &str) -> Option<&'static str> {
    if declarations::registry().declaring(family).is_none() {
        return Some(
            "it declares no resource: observations, reads and one-off actions change nothing the node derives",
        );
    }
    DECLARED_BUT_DERIVES_NOTHING
        .iter()
        .find(|(f, _)| *f == family)
        .map(|(_, why)| *why)
}

/// The drift check is built from the families' own declarations: every family of the
/// declarations has a derive hook in the handler table (the table does not compile without
/// one), and each reports what its example request made, unless it is listed as deriving
/// nothing with the reason; a node that applied every example has no drift.
#[test]
fn every_family_derives_what_its_example_made_or_is_listed_as_deriving_nothing() {
    let mut node = Node::new();
    // The sudo allowlist's example lists alice; the assignment's is signed by the example
    // fleet, which this node joined.
    seed_alice(&node);
    testkit::fleet::seed_example_fleet(&node.provider).unwrap();
    let registry = declarations::registry();
    let mut families = BTreeSet::new();
    for (n, op) in registry.operations().enumerate() {
        // Each family's first operation: the one that makes its resource.
        if !families.insert(op.family()) {
            continue;
        }
        let request_id = id(0xe000 + n as u64);
        let mut resource = op.example();
        // An example naming an upload names one this node never received: it gets the
        // bundle every test node may upload (a chain for `*.example.com`).
        if resource.get("blob").is_some() {
            resource["blob"] = json!(node.upload_blob(shared_bundle().0.as_bytes()));
        }
        let body = match op.scope() {
            Scope::Tenant => json!({"request_id": request_id, "operation": op.name(),
                                    "resource": resource}),
            Scope::Node => json!({"request_id": request_id, "action": op.name(),
                                  "node_id": node.node_id, "resource": resource}),
        };
        succeeded(&mut node, &body);
    }
    let ctx = node.ctx();
    let handlers = ops::handlers();
    for family in registry.families() {
        let hook = handlers
            .family(family.name)
            .unwrap_or_else(|| panic!("{} has no hooks in ops::handlers()", family.name));
        let items = (hook.derive)(&ctx)
            .unwrap_or_else(|e| panic!("{}'s derive hook failed: {e:?}", family.name));
        match derives_nothing(family.name) {
            Some(why) => assert!(
                items.is_empty(),
                "{} derives nothing ({why}) but derives {items:#?}",
                family.name
            ),
            None => assert!(
                !items.is_empty(),
                "{} derives nothing after its example request: derive what it makes, or list it in DECLARED_BUT_DERIVES_NOTHING with the reason",
                family.name
            ),
        }
    }
    for (family, _) in DECLARED_BUT_DERIVES_NOTHING {
        assert!(
            registry.families().iter().any(|f| f.name == *family),
            "{family} is listed as deriving nothing and is not a family"
        );
    }
    let found = ops::drift::detect(&ctx);
    assert!(found.unchecked.is_empty(), "{:?}", found.unchecked);
    assert!(
        found.found.is_empty(),
        "a node that applied every example drifted: {:#?}",
        found.found
    );
    node.drift_check_due();
    node.pass();
    assert!(node.drift_events(0).is_empty(), "the runner found drift");
}

#[test]
fn edited_pools_crontabs_user_files_and_certificates_are_drift_until_the_rebuild() {
    let mut node = shop1_with(vec![
        ensure_domain(2, 30, 10, "shop.example.com"),
        ensure_domain(3, 31, 10, "blog.example.com"),
        set_php_version(4, 30, 10, "8.2"),
        ensure_protected(5, 40, 10, 30, "staff"),
        ensure_task(6, 50, 10, "@daily"),
        ensure_cert(7, 60, 10, 30),
        ensure_cert(8, 61, 10, 31),
    ]);

    let pool = node.pool_file(&id(10));
    edit(&pool, |t| t + "php_admin_value[disable_functions] =\n");
    let user_file = node
        .path(node.provider.apache_layout().auth_dir)
        .join(format!("{}.htpasswd", id(40)));
    std::fs::remove_file(&user_file).unwrap();
    let spool = node
        .path(provider::crontab_spool(node.platform))
        .join("shop1");
    edit(&spool, |t| t + "* * * * * /tmp/miner\n");
    let certs = node.path(ops::certificate::CERTIFICATE_DIR);
    std::fs::remove_file(certs.join(format!("{}.crt", id(60)))).unwrap();
    // Another certificate's key: no longer a pair.
    std::fs::copy(
        certs.join(format!("{}.key", id(60))),
        certs.join(format!("{}.key", id(61))),
    )
    .unwrap();
    let found = [
        (
            "certificate",
            id(60),
            ops::certificate::CERTIFICATE_CHAIN_MISSING,
        ),
        ("certificate", id(61), ops::certificate::CERTIFICATE_DIFFERS),
        ("php_version", id(10), ops::php::PHP_POOL_DIFFERS),
        (
            "protected_directory",
            id(40),
            ops::web_access::AUTH_USER_FILE_MISSING,
        ),
        (
            "scheduled_task",
            id(10),
            ops::scheduled_task::CRONTAB_DIFFERS,
        ),
    ];
    assert_eq!(node.check_drift(), drift_as(EventKind::Drift, &found));
    // Reported, not repaired.
    assert!(!user_file.exists());
    assert!(
        std::fs::read_to_string(&spool)
            .unwrap()
            .contains("/tmp/miner")
    );

    rebuild_resolves(&mut node, 9, &found);
    assert!(user_file.exists());
    node.check_converged();
}

#[test]
fn edited_mail_tables_keys_and_scripts_are_drift_until_the_rebuild() {
    const DOMAIN: &str = "shop.example.com";
    let mut node = shop1_with(vec![
        ensure_mail_domain(2, 150, 10, DOMAIN),
        ensure_mailbox(3, 151, 10, DOMAIN, "info"),
        ensure_forwarder(4, 152, 10, &format!("sales@{DOMAIN}")),
        ensure_autoresponder(5, 153, 10, 151),
        ensure_dkim(6, 154, 10, DOMAIN),
        set_spam(7, 155, 10, DOMAIN, "strict"),
    ]);

    let map = |m| node.provider.postfix_map_path(m);
    edit(&map(provider::PostfixMap::Mailboxes), |t| {
        without(&t, &format!("info@{DOMAIN} "))
    });
    // A line no resource derives: mail for root taken elsewhere.
    edit(&map(provider::PostfixMap::Aliases), |t| {
        t + &format!("root@{DOMAIN} attacker@example.org\n")
    });
    edit(&map(provider::PostfixMap::Spam), |t| without(&t, DOMAIN));
    // The mailbox's hash replaced: its line is not the recorded one, and the new one is no
    // resource's.
    edit(&node.provider.dovecot_passwd_path(), |t| {
        t.replace(MAIL_HASH, "{PLAIN}letmein")
    });
    let dkim = node.path("/etc/opendkim/layerone");
    edit(&dkim.join("SigningTable"), |t| without(&t, "*@"));
    let private = dkim.join("keys").join(id(154)).join("mail2026.private");
    std::fs::remove_file(&private).unwrap();
    let script = node.provider.sieve_dir().join(format!("{}.sieve", id(151)));
    edit(&script, |t| t.replace(":days 3", ":days 1"));
    let node_wide = Owner::NODE.to_owned();
    let found = [
        (
            "autoresponder",
            id(153),
            ops::autoresponder::SIEVE_SCRIPT_DIFFERS,
        ),
        ("dkim_key", id(154), ops::dkim_key::OPEN_DKIM_ENTRY_MISSING),
        ("dkim_key", id(154), ops::dkim_key::DKIM_KEY_MISSING),
        (
            "mail_domain",
            node_wide.clone(),
            ops::mail_domain::POSTFIX_TABLE_DIFFERS,
        ),
        ("mailbox", id(151), ops::mail_domain::POSTFIX_ENTRY_MISSING),
        ("mailbox", id(151), ops::mailbox::DOVECOT_ENTRY_MISSING),
        ("mailbox", node_wide, ops::mailbox::DOVECOT_PASSWD_DIFFERS),
        (
            "spam_filter",
            id(155),
            ops::mail_domain::POSTFIX_ENTRY_MISSING,
        ),
    ];
    let reported = node.check_drift();
    assert_eq!(reported, drift_as(EventKind::Drift, &found));
    let events = node.drift_events(0);
    let node_finding = events
        .iter()
        .filter_map(|e| e.drift.as_ref())
        .find(|d| d.aspect == ops::mail_domain::POSTFIX_TABLE_DIFFERS)
        .unwrap();
    assert_eq!(node_finding.owner, Owner::NODE, "{node_finding:?}");
    assert!(
        node_finding.message.contains("aliases holds 1 line(s)"),
        "{node_finding:?}"
    );

    rebuild_resolves(&mut node, 8, &found);
    // The lost private key was made anew: OpenDKIM can sign again.
    assert!(private.exists());
    node.check_converged();
}

#[test]
fn changed_mariadb_databases_users_and_grants_are_drift_until_the_rebuild() {
    let mut node = shop1_with(vec![
        ensure_db(2, 50, 10, "main"),
        ensure_db(3, 51, 10, "logs"),
        ensure_db_user(4, 60, 10, "app", SECRET_HASH),
        ensure_grant(5, 70, 10, 50, 60, "all"),
    ]);
    tamper_mariadb(&node);
    let found = mariadb_drift();
    assert_eq!(node.check_drift(), drift_as(EventKind::Drift, &found));
    rebuild_resolves(&mut node, 6, &found);
    node.check_converged();
}

#[test]
fn an_unrecorded_ftp_login_a_changed_sudo_drop_in_and_a_lost_archive_are_drift_until_repaired() {
    let mut node = Node::new();
    seed_alice(&node);
    let node_id = node.node_id.clone();
    let allowlist = |req: u64, generation: u64| {
        json!({"request_id": id(req), "action": "set_sudo_allowlist", "node_id": node_id,
               "resource": {"id": id(0x5d), "generation": generation, "users": ["alice"]}})
    };
    succeeded(&mut node, &ensure_account(1, 10, "shop1"));
    for body in [
        ensure_ftp(2, 50, 10, "shop1.up", None),
        ensure_ftp(3, 51, 10, "shop1.dl", None),
        mail_op(4, "suspend_ftp_account", 51, 10, json!({})),
        allowlist(5, 1),
        create_backup(6, 60, 10),
    ] {
        succeeded(&mut node, &body);
    }
    // A suspended login is out of pure-ftpd's files, and that is as derived.
    assert_eq!(node.check_drift(), [], "a converged node drifted");

    let state = node.state();
    let row = |family: &str, n: u64| {
        state
            .resource(family, &id(n).parse().unwrap())
            .unwrap()
            .unwrap()
            .data
    };
    let suspended = row("ftp_account", 51)["line"].as_str().unwrap().to_owned();
    edit(&node.path(provider::FTP_LAYOUT.passwd), |t| t + &suspended);
    let dropin = node.path(node.provider.sudo_layout().dropin);
    edit(&dropin, |t| t + "eve ALL=(ALL:ALL) ALL\n");
    let archive = node
        .layout
        .blobs_out()
        .join(row("backup", 60)["blob"].as_str().unwrap());
    std::fs::remove_file(&archive).unwrap();
    let found = [
        ("backup", id(60), ops::backup::BACKUP_MISSING),
        (
            "ftp_account",
            Owner::NODE.to_owned(),
            ops::ftp_account::FTP_PASSWD_DIFFERS,
        ),
        ("sudo_allowlist", id(0x5d), ops::sudo::SUDO_DROPIN_DIFFERS),
    ];
    assert_eq!(node.check_drift(), drift_as(EventKind::Drift, &found));

    // pure-ftpd's passwd is put back by the account's rebuild, the drop-in by the next
    // allowlist, and a lost archive (made once, never re-derived) goes with its backup.
    succeeded(&mut node, &account_op(7, "rebuild_account", 10));
    assert_eq!(
        node.check_drift(),
        drift_as(EventKind::DriftResolved, &found[1..2])
    );
    succeeded(&mut node, &allowlist(8, 2));
    assert_eq!(
        node.check_drift(),
        drift_as(EventKind::DriftResolved, &found[2..])
    );
    succeeded(&mut node, &remove_backup(9, 60, 10));
    assert_eq!(
        node.check_drift(),
        drift_as(EventKind::DriftResolved, &found[..1])
    );
    node.check_converged();
}
