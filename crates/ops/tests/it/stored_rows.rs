//! Every family's stored row reads the JSON its handlers have written, older shapes included,
//! writes back exactly that JSON, and refuses a field it does not know: existing state.db
//! rows keep working, and a row root did not write is an error, never a default.

use std::fmt::Debug;

use registry::Operation;
use serde_json::{Value, json};
use store::StoredRow;

use ops::account::AccountRow;
use ops::assignment::AssignmentRow;
use ops::autoresponder::{AutoresponderRow, EnsureAutoresponder};
use ops::backup::BackupRow;
use ops::certificate::CertificateRow;
use ops::dkim_key::{DkimKeyRow, EnsureDkimKey};
use ops::error_pages::{ErrorPagesRow, SetErrorPages};
use ops::ftp_account::FtpAccountRow;
use ops::mail_domain::MailDomainRow;
use ops::mail_forwarder::{EnsureMailForwarder, MailForwarderRow};
use ops::mailbox::{EnsureMailbox, MailboxRow};
use ops::mysql_database::MysqlDatabaseRow;
use ops::mysql_grant::{EnsureMysqlGrant, MysqlGrantRow};
use ops::mysql_user::{EnsureMysqlUser, MysqlUserRow};
use ops::php::{PhpExtensionsRow, PhpOptionsRow, PhpVersionRow, SetPhpOptions};
use ops::scheduled_task::{EnsureScheduledTask, ScheduledTaskRow};
use ops::spam_filter::SpamFilterRow;
use ops::ssh_key::{EnsureSshKey, SshKeyRow, fingerprint};
use ops::sudo::SudoAllowlistRow;
use ops::web_access::{EnsureIpBlock, EnsureProtectedDirectory, IpBlockRow, ProtectedDirectoryRow};
use ops::web_domain::{
    EnsureRedirect, EnsureWebDomain, HttpsPolicyRow, RedirectRow, SetHttpsPolicy, WebDomainRow,
};

/// `json` is what a handler writes today: it reads as `T` and writes back the same JSON.
fn round_trips<T: StoredRow + Debug>(json: Value) {
    let row: T = serde_json::from_value(json.clone())
        .unwrap_or_else(|e| panic!("{}: {json} does not read: {e}", T::FAMILY));
    assert_eq!(serde_json::to_value(&row).unwrap(), json, "{}", T::FAMILY);
    let mut extra = json.clone();
    extra
        .as_object_mut()
        .expect("a stored row is an object")
        .insert("unknown".into(), json!(1));
    assert!(
        serde_json::from_value::<T>(extra).is_err(),
        "{} reads a field it does not know",
        T::FAMILY
    );
}

/// `json` is what an older handler wrote: it still reads as `T`.
fn reads<T: StoredRow + Debug>(json: Value) -> T {
    serde_json::from_value(json.clone())
        .unwrap_or_else(|e| panic!("{}: {json} does not read: {e}", T::FAMILY))
}

fn value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap()
}

const HASH: &str = "$6$saltsalt$cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";

#[test]
fn every_familys_stored_row_reads_and_writes_the_json_its_handlers_store() {
    let account = json!({
        "username": "shop1", "uid": 1000, "gid": 1000, "home": "/home/shop1",
        "shell": "/bin/bash", "suspended": false, "disk_quota_mib": 1024, "inode_quota": 0,
    });
    round_trips::<AccountRow>(account.clone());
    // set_account_limits records both, `mysql_limits` null when it set none; then
    // set_account_isolation records `cagefs`.
    let limits = json!({"cpu_percent": 100, "memory_mib": 1024, "io_kib_per_sec": 1024,
                        "processes": 100, "entry_processes": 20});
    let mut limited = account.clone();
    limited["limits"] = limits.clone();
    limited["mysql_limits"] = Value::Null;
    let row = reads::<AccountRow>(limited.clone());
    assert_eq!(row.mysql_limits, Some(None));
    round_trips::<AccountRow>(limited.clone());
    limited["mysql_limits"] =
        json!({"cpu_percent": 50, "read_kib_per_sec": 1024, "write_kib_per_sec": 512});
    limited["cagefs"] = json!(true);
    round_trips::<AccountRow>(limited);

    let key = EnsureSshKey::example().key;
    round_trips::<SshKeyRow>(json!({"key": key, "fingerprint": fingerprint(&key)}));

    let domain = EnsureWebDomain::example();
    let docroot = format!("web/{}/public_html", domain.domain);
    round_trips::<WebDomainRow>(json!({
        "domain": domain.domain, "aliases": value(&domain.aliases), "docroot": docroot,
        "suspended": true,
    }));
    // Before suspension existed.
    let old = reads::<WebDomainRow>(json!({
        "domain": domain.domain, "aliases": value(&domain.aliases), "docroot": docroot,
    }));
    assert!(!old.suspended);

    let redirect = EnsureRedirect::example();
    round_trips::<RedirectRow>(json!({
        "web_domain": redirect.web_domain, "source": redirect.source,
        "target": redirect.target, "status": value(&redirect.status),
    }));

    round_trips::<PhpVersionRow>(json!({"version": "8.2"}));
    round_trips::<PhpOptionsRow>(json!({"options": value(&SetPhpOptions::example().options)}));
    round_trips::<PhpOptionsRow>(json!({"options": {}}));
    round_trips::<PhpExtensionsRow>(json!({"extensions": ["intl", "redis"]}));

    let task = EnsureScheduledTask::example();
    round_trips::<ScheduledTaskRow>(
        json!({"schedule": value(&task.schedule), "task": value(&task.task)}),
    );

    let protected = EnsureProtectedDirectory::example();
    round_trips::<ProtectedDirectoryRow>(json!({
        "web_domain": protected.web_domain, "path": protected.path,
        "realm": protected.realm, "users": value(&protected.users),
    }));
    round_trips::<IpBlockRow>(json!({"networks": value(&EnsureIpBlock::example().networks)}));
    round_trips::<HttpsPolicyRow>(json!({
        "force_https": true, "hsts": value(&SetHttpsPolicy::example().hsts),
    }));
    round_trips::<HttpsPolicyRow>(json!({"force_https": false, "hsts": null}));
    round_trips::<ErrorPagesRow>(json!({"pages": value(&SetErrorPages::example().pages)}));
    round_trips::<ErrorPagesRow>(json!({"pages": {}}));

    let web_domain = "c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1";
    let blob = "ab".repeat(32);
    round_trips::<CertificateRow>(json!({
        "web_domain": web_domain, "source": "acme", "not_after": 1_800_000_000,
        "fingerprint_sha256": "ef".repeat(32),
    }));
    round_trips::<CertificateRow>(json!({
        "web_domain": web_domain, "source": "bundle", "not_after": 1_800_000_000,
        "fingerprint_sha256": "ef".repeat(32), "blob": blob,
    }));
    // The first bundle certificates recorded no fingerprint.
    let first = reads::<CertificateRow>(
        json!({"web_domain": web_domain, "source": "bundle", "not_after": 1_800_000_000}),
    );
    assert_eq!((first.fingerprint_sha256, first.blob), (None, None));

    round_trips::<SudoAllowlistRow>(
        json!({"state": "present", "generation": 3, "users": ["alice", "bob"]}),
    );
    round_trips::<SudoAllowlistRow>(json!({"state": "absent", "generation": 4, "users": []}));

    round_trips::<BackupRow>(json!({
        "blob": blob, "size": 4096, "files": 12, "databases": ["shop1_wp"],
        "created_at_ms": 1_760_000_000_000_i64,
    }));

    let line = "upload:$6$x:1000:1000::/home/shop1/./::::::::::::\n";
    let ftp = json!({"login": "upload", "directory": "/home/shop1", "line": line});
    round_trips::<FtpAccountRow>(ftp.clone());
    let mut suspended = ftp;
    suspended["suspended"] = json!(true);
    round_trips::<FtpAccountRow>(suspended);

    round_trips::<MysqlDatabaseRow>(json!({
        "kind": "database", "name": "shop1_wp", "charset": "utf8mb4",
        "collation": "utf8mb4_unicode_ci",
    }));
    round_trips::<MysqlDatabaseRow>(json!({
        "kind": "quota", "quota_mib": 100, "writes_revoked": false, "total_bytes": 4096,
    }));
    assert!(serde_json::from_value::<MysqlDatabaseRow>(json!({"kind": "other"})).is_err());
    let user = EnsureMysqlUser::example();
    round_trips::<MysqlUserRow>(json!({"name": "shop1_app", "hosts": value(&user.hosts)}));
    let grant = EnsureMysqlGrant::example();
    round_trips::<MysqlGrantRow>(json!({
        "database": grant.database, "user": grant.user, "privileges": value(&grant.privileges),
    }));

    round_trips::<MailDomainRow>(
        json!({"domain": "a.example", "sending_open": false, "catch_all": null}),
    );
    round_trips::<MailDomainRow>(
        json!({"domain": "a.example", "sending_open": true, "catch_all": "info"}),
    );
    let bare = reads::<MailDomainRow>(json!({"domain": "a.example"}));
    assert_eq!((bare.sending_open, bare.catch_all), (false, None));
    let mailbox = EnsureMailbox::example();
    let stored = json!({
        "domain": mailbox.domain, "local_part": mailbox.local_part, "password": HASH,
        "quota_mib": mailbox.quota_mib.get(),
    });
    round_trips::<MailboxRow>(stored.clone());
    let mut suspended = stored;
    suspended["suspended"] = json!(true);
    round_trips::<MailboxRow>(suspended);
    let forwarder = EnsureMailForwarder::example();
    round_trips::<MailForwarderRow>(json!({
        "address": forwarder.address, "destinations": value(&forwarder.destinations),
    }));
    let vacation = EnsureAutoresponder::example();
    round_trips::<AutoresponderRow>(json!({
        "mailbox": vacation.mailbox, "subject": vacation.subject, "body": vacation.body,
        "days": vacation.days.get(), "from": vacation.from, "until": vacation.until,
    }));
    round_trips::<AutoresponderRow>(json!({
        "mailbox": vacation.mailbox, "subject": vacation.subject, "body": vacation.body,
        "days": vacation.days.get(), "from": null, "until": null,
    }));
    let dkim = EnsureDkimKey::example();
    round_trips::<DkimKeyRow>(
        json!({"domain": dkim.domain, "selector": dkim.selector, "bits": value(&dkim.bits)}),
    );
    round_trips::<SpamFilterRow>(json!({"domain": "a.example", "level": "strict"}));

    round_trips::<AssignmentRow>(json!({
        "node": "web-1", "generation": 3,
        "modules": [
            {"module": "core", "ready": true, "reason": null},
            {"module": "mail", "ready": false, "reason": "Postfix is not installed (no /usr/sbin/postfix)"},
        ],
    }));
    assert!(
        serde_json::from_value::<AssignmentRow>(json!({
            "node": "web-1", "generation": 3,
            "modules": [{"module": "core", "ready": true, "reason": null, "since": 1}],
        }))
        .is_err(),
        "an assigned module reads no field it does not know"
    );
}

/// Each family that keeps rows names its stored row type in its purge hook, and exactly the
/// families with a declaring operation do (what `Handlers::check` holds at every runner
/// start, seen here on the node's own table): the owners of their fields are read from there.
#[test]
fn every_family_that_keeps_rows_has_one_stored_row_type() {
    let handlers = ops::handlers();
    let registry = declarations::registry();
    handlers.check(registry).unwrap();
    let typed: std::collections::BTreeSet<&str> = ops::stored_families().collect();
    // A family without a declaring operation (only observations, reads and one-off actions:
    // `runtime`, `php_runtime`, `sudo_events`) records nothing.
    let declared: std::collections::BTreeSet<&str> = registry
        .families()
        .iter()
        .map(|f| f.name)
        .filter(|name| registry.declaring(name).is_some())
        .collect();
    assert_eq!(typed, declared);
    for (family, row) in handlers.stored_rows() {
        assert_eq!(row.family, family, "the row type of {family}");
    }
    assert_eq!(
        ops::field_owners(MailboxRow::FAMILY),
        MailboxRow::FIELD_OWNERS,
        "the owners of a row's fields are its row type's"
    );
}
