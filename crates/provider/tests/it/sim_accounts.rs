//! The Sim's shadow-utils models, checked through the real files they leave in the sysroot
//! and through the audit log.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use provider::{Expire, HOME_MODE, Platform, ProviderError, UserAdd, UserMod};
use testkit::audit_records;

use crate::common::{Env, is_root, mode_of};

const HASH: &str = "$6$saltsalt$0123456789abcdefghijABCDEFGHIJ";

fn acme<'a>(comment: &'a str) -> UserAdd<'a> {
    UserAdd {
        name: "acme",
        group: "acme",
        home: Path::new("/home/acme"),
        shell: "/bin/bash",
        comment,
        password_hash: Some(HASH),
    }
}

fn add_acme(env: &Env) {
    env.provider.groupadd("acme").unwrap();
    env.provider
        .useradd(&acme("layerone-0123456789abcdef0123456789abcdef"))
        .unwrap();
}

#[test]
fn sim_useradd_writes_passwd_shadow_and_a_0750_home() {
    let env = Env::sim(Platform::Debian);
    add_acme(&env);

    let passwd = env.provider.lookup_user("acme").unwrap().unwrap();
    assert_eq!((passwd.uid, passwd.gid), (1000, 1000));
    assert_eq!(passwd.gecos, "layerone-0123456789abcdef0123456789abcdef");
    assert_eq!(passwd.home, Path::new("/home/acme"));
    assert_eq!(passwd.shell, "/bin/bash");
    assert!(env.read("/etc/passwd").ends_with(
        "acme:x:1000:1000:layerone-0123456789abcdef0123456789abcdef:/home/acme:/bin/bash\n"
    ));
    let group = env.provider.lookup_group("acme").unwrap().unwrap();
    assert_eq!(group.gid, 1000);
    assert!(env.read("/etc/gshadow").contains("acme:!::\n"));

    let shadow = env.provider.shadow_entry("acme").unwrap().unwrap();
    assert_eq!(shadow.hash, HASH);
    assert!(!shadow.is_locked());
    assert_eq!(shadow.expire, None);

    let home = env.provider.sysconf("/home/acme");
    assert_eq!(mode_of(&home), HOME_MODE);
    if is_root() {
        let meta = std::fs::metadata(&home).unwrap();
        // In the web server's group (seeded as www-data, 33), so Apache reaches the document roots.
        assert_eq!((meta.uid(), meta.gid()), (1000, 33));
    }
}

#[test]
fn sim_uids_are_allocated_above_the_existing_ones() {
    let env = Env::sim(Platform::Debian);
    add_acme(&env);
    env.provider.groupadd("beta").unwrap();
    env.provider
        .useradd(&UserAdd {
            name: "beta",
            group: "beta",
            home: Path::new("/home/beta"),
            ..acme("layerone-b")
        })
        .unwrap();
    let beta = env.provider.lookup_user("beta").unwrap().unwrap();
    // nobody (65534) is outside UID_MIN..UID_MAX and does not count.
    assert_eq!((beta.uid, beta.gid), (1001, 1001));
}

#[test]
fn sim_duplicate_useradd_fails_with_status_9_and_changes_nothing() {
    let env = Env::sim(Platform::Debian);
    add_acme(&env);
    let before = (env.read("/etc/passwd"), env.read("/etc/shadow"));
    let err = env.provider.useradd(&acme("layerone-other")).unwrap_err();
    assert!(
        matches!(&err, ProviderError::Failed { status: 9, stderr, .. } if stderr.contains("already exists")),
        "{err:?}"
    );
    assert_eq!(err.code(), "program_failed");
    assert_eq!((env.read("/etc/passwd"), env.read("/etc/shadow")), before);
}

#[test]
fn sim_useradd_into_a_missing_group_fails_with_status_6() {
    let env = Env::sim(Platform::Debian);
    let err = env.provider.useradd(&acme("layerone-x")).unwrap_err();
    assert_eq!(err.exit_status(), Some(6), "{err:?}");
    assert!(env.provider.lookup_user("acme").unwrap().is_none());
}

#[test]
fn sim_rejects_a_comment_with_a_colon_like_useradd() {
    let env = Env::sim(Platform::Debian);
    env.provider.groupadd("acme").unwrap();
    let err = env
        .provider
        .useradd(&acme("layerone:0123456789abcdef0123456789abcdef"))
        .unwrap_err();
    assert_eq!(err.exit_status(), Some(3), "{err:?}");
}

#[test]
fn sim_usermod_suspends_and_unsuspends_through_shadow() {
    let env = Env::sim(Platform::Debian);
    add_acme(&env);
    env.provider
        .usermod(&UserMod {
            name: "acme",
            lock: Some(true),
            expire: Some(Expire::Expired),
            ..UserMod::default()
        })
        .unwrap();
    let shadow = env.provider.shadow_entry("acme").unwrap().unwrap();
    assert!(shadow.is_locked());
    assert_eq!(shadow.hash, format!("!{HASH}"));
    assert_eq!(shadow.expire, Some(1));
    // Locking twice keeps one `!`.
    env.provider
        .usermod(&UserMod {
            name: "acme",
            lock: Some(true),
            ..UserMod::default()
        })
        .unwrap();
    assert_eq!(
        env.provider.shadow_entry("acme").unwrap().unwrap().hash,
        format!("!{HASH}")
    );

    env.provider
        .usermod(&UserMod {
            name: "acme",
            lock: Some(false),
            expire: Some(Expire::Never),
            shell: Some("/usr/sbin/nologin"),
            ..UserMod::default()
        })
        .unwrap();
    let shadow = env.provider.shadow_entry("acme").unwrap().unwrap();
    assert!(!shadow.is_locked());
    assert_eq!(shadow.hash, HASH);
    assert_eq!(shadow.expire, None);
    assert_eq!(
        env.provider.lookup_user("acme").unwrap().unwrap().shell,
        "/usr/sbin/nologin"
    );

    env.provider
        .usermod(&UserMod {
            name: "acme",
            password_hash: Some("$6$new$hash"),
            lock: Some(true),
            ..UserMod::default()
        })
        .unwrap();
    let shadow = env.provider.shadow_entry("acme").unwrap().unwrap();
    assert_eq!(shadow.hash, "!$6$new$hash");
}

#[test]
fn sim_usermod_of_unknown_user_fails_with_status_6() {
    let env = Env::sim(Platform::Debian);
    let err = env
        .provider
        .usermod(&UserMod {
            name: "ghost",
            lock: Some(true),
            ..UserMod::default()
        })
        .unwrap_err();
    assert_eq!(err.exit_status(), Some(6), "{err:?}");
}

#[test]
fn usermod_with_nothing_to_change_starts_no_program() {
    let env = Env::sim(Platform::Debian);
    env.provider
        .usermod(&UserMod {
            name: "acme",
            ..UserMod::default()
        })
        .unwrap();
    assert!(audit_records(&env.provider).unwrap().is_empty());
}

#[test]
fn sim_userdel_removes_the_user_its_private_group_and_home_without_following_symlinks() {
    let env = Env::sim(Platform::Debian);
    add_acme(&env);
    let outside = env.outside();
    std::fs::write(outside.join("precious"), b"keep").unwrap();
    let home = env.provider.sysconf("/home/acme");
    std::fs::create_dir_all(home.join("public_html")).unwrap();
    std::fs::write(home.join("public_html/index.html"), b"hi").unwrap();
    std::os::unix::fs::symlink(&outside, home.join("public_html/escape")).unwrap();

    env.provider.userdel("acme", true).unwrap();

    assert!(env.provider.lookup_user("acme").unwrap().is_none());
    assert!(env.provider.shadow_entry("acme").unwrap().is_none());
    // USERGROUPS_ENAB: the same-named primary group goes too, as with the real userdel.
    assert!(env.provider.lookup_group("acme").unwrap().is_none());
    assert!(!env.read("/etc/gshadow").contains("acme:"));
    assert!(!home.exists());
    assert_eq!(std::fs::read(outside.join("precious")).unwrap(), b"keep");
    // The seeded accounts are untouched.
    assert!(env.provider.lookup_user("root").unwrap().is_some());
    assert!(env.provider.lookup_group("nogroup").unwrap().is_some());
}

#[test]
fn sim_userdel_without_remove_keeps_the_home() {
    let env = Env::sim(Platform::Debian);
    add_acme(&env);
    env.provider.userdel("acme", false).unwrap();
    assert!(env.provider.sysconf("/home/acme").is_dir());
    assert!(env.provider.lookup_user("acme").unwrap().is_none());
}

#[test]
fn sim_userdel_of_unknown_user_fails_with_status_6() {
    let env = Env::sim(Platform::Debian);
    let err = env.provider.userdel("ghost", true).unwrap_err();
    assert_eq!(err.exit_status(), Some(6), "{err:?}");
}

#[test]
fn sim_groupadd_twice_is_9_and_groupdel_of_unknown_is_6() {
    let env = Env::sim(Platform::Debian);
    env.provider.groupadd("acme").unwrap();
    assert_eq!(
        env.provider.groupadd("acme").unwrap_err().exit_status(),
        Some(9)
    );
    env.provider.groupdel("acme").unwrap();
    assert!(env.provider.lookup_group("acme").unwrap().is_none());
    assert_eq!(
        env.provider.groupdel("acme").unwrap_err().exit_status(),
        Some(6)
    );
}

#[test]
fn sim_groupdel_refuses_a_primary_group_with_status_8() {
    let env = Env::sim(Platform::Debian);
    add_acme(&env);
    let err = env.provider.groupdel("acme").unwrap_err();
    assert_eq!(err.exit_status(), Some(8), "{err:?}");
    assert!(env.provider.lookup_group("acme").unwrap().is_some());
}

#[test]
fn every_sim_invocation_is_audited_with_backend_sim_and_no_secret() {
    let env = Env::sim(Platform::Debian);
    add_acme(&env);
    let _ = env.provider.groupadd("acme"); // fails: audited too
    env.provider.userdel("acme", true).unwrap();

    let records = audit_records(&env.provider).unwrap();
    let summary: Vec<(&str, Option<i32>)> = records
        .iter()
        .map(|r| (r.program.as_str(), r.status))
        .collect();
    assert_eq!(
        summary,
        [
            ("groupadd", Some(0)),
            ("useradd", Some(0)),
            ("groupadd", Some(9)),
            ("userdel", Some(0)),
        ]
    );
    assert!(records.iter().all(|r| r.backend == "sim"));
    assert_eq!(records[1].path, "/usr/sbin/useradd");
    let root = env.provider.root().display().to_string();
    assert_eq!(
        records[1].args,
        [
            "--prefix",
            root.as_str(),
            "--gid",
            "acme",
            "--home-dir",
            "/home/acme",
            "--create-home",
            "--shell",
            "/bin/bash",
            "--comment",
            "layerone-0123456789abcdef0123456789abcdef",
            "--password",
            "<redacted>",
            "--",
            "acme",
        ]
    );
    let raw = std::fs::read_to_string(env.provider.audit_dir().join("audit.log")).unwrap();
    assert!(!raw.contains(HASH));
}

#[test]
fn cloudlinux_sim_locks_new_accounts_the_red_hat_way() {
    let env = Env::sim(Platform::CloudLinux);
    env.provider.groupadd("acme").unwrap();
    env.provider
        .useradd(&UserAdd {
            password_hash: None,
            ..acme("layerone-x")
        })
        .unwrap();
    let shadow = env.provider.shadow_entry("acme").unwrap().unwrap();
    assert_eq!(shadow.hash, "!!");
    assert!(shadow.is_locked());
}
