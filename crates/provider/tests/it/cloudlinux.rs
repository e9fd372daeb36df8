//! The Sim's `lvectl` and `cagefsctl` models, through the typed provider calls production
//! makes, and the argv each call leaves in the audit log (the documented real forms).

use std::path::Path;

use provider::{LveLimits, Platform, UserAdd};
use testkit::audit_records;

use crate::common::Env;

const LIMITS: LveLimits = LveLimits {
    speed_pct: 150,
    pmem_mib: 2048,
    io_kibs: 4096,
    nproc: 60,
    entry_procs: 15,
};

fn add_user(env: &Env, name: &str) {
    env.provider.groupadd(name).unwrap();
    env.provider
        .useradd(&UserAdd {
            name,
            group: name,
            home: &Path::new("/home").join(name),
            shell: "/bin/bash",
            comment: "layerone-0123456789abcdef0123456789abcdef",
            password_hash: None,
        })
        .unwrap();
}

#[test]
fn lvectl_set_user_is_read_back_by_list_user_and_reset_by_delete_user() {
    let env = Env::sim(Platform::CloudLinux);
    add_user(&env, "shop1");
    env.provider.lvectl_set_user("shop1", &LIMITS).unwrap();
    assert_eq!(
        env.provider.lvectl_list_user().unwrap(),
        vec![("shop1".to_owned(), LIMITS)]
    );
    let set = audit_records(&env.provider).unwrap().remove(2);
    assert_eq!(set.path, "/usr/sbin/lvectl");
    assert_eq!(
        set.args,
        [
            "set-user",
            "shop1",
            "--speed=150%",
            "--pmem=2048M",
            "--io=4096",
            "--nproc=60",
            "--maxEntryProcs=15",
            "--save-all-parameters"
        ]
    );
    env.provider.lvectl_delete_user("shop1").unwrap();
    assert!(env.provider.lvectl_list_user().unwrap().is_empty());
}

#[test]
fn lvectl_refuses_an_unknown_user_like_the_real_tool() {
    let env = Env::sim(Platform::CloudLinux);
    let err = env.provider.lvectl_set_user("ghost", &LIMITS).unwrap_err();
    assert_eq!(err.code(), "program_failed");
    assert!(err.to_string().contains("does not exist"), "{err}");
    assert!(env.provider.lvectl_list_user().unwrap().is_empty());
}

#[test]
fn cagefsctl_enable_and_disable_show_in_list_enabled() {
    let env = Env::sim(Platform::CloudLinux);
    add_user(&env, "shop1");
    add_user(&env, "shop2");
    env.provider.cagefs_set("shop2", true).unwrap();
    env.provider.cagefs_set("shop1", true).unwrap();
    assert_eq!(
        env.provider.cagefs_enabled_users().unwrap(),
        ["shop1", "shop2"]
    );
    env.provider.cagefs_set("shop1", false).unwrap();
    assert_eq!(env.provider.cagefs_enabled_users().unwrap(), ["shop2"]);
    let args: Vec<Vec<String>> = audit_records(&env.provider)
        .unwrap()
        .into_iter()
        .filter(|r| r.program == "cagefsctl")
        .map(|r| r.args)
        .collect();
    assert_eq!(args[0], ["--enable", "shop2"]);
    assert_eq!(args[3], ["--disable", "shop1"]);
    assert_eq!(args[4], ["--list-enabled"]);
    assert!(env.provider.cagefs_set("ghost", true).is_err());
}

#[test]
fn limits_and_isolation_are_unsupported_on_debian_and_start_nothing() {
    let env = Env::sim(Platform::Debian);
    add_user(&env, "shop1");
    let before = audit_records(&env.provider).unwrap().len();
    for err in [
        env.provider.lvectl_set_user("shop1", &LIMITS).unwrap_err(),
        env.provider.lvectl_list_user().unwrap_err(),
        env.provider.cagefs_set("shop1", true).unwrap_err(),
        env.provider.cagefs_enabled_users().unwrap_err(),
    ] {
        assert_eq!(err.code(), "unsupported_on_platform");
    }
    assert_eq!(audit_records(&env.provider).unwrap().len(), before);
}

#[test]
fn dbctl_set_is_read_back_by_list_and_reset_by_delete_in_the_documented_forms() {
    let env = Env::sim(Platform::CloudLinux);
    assert!(!env.provider.mysql_governor_present());
    testkit::seed_mysql_governor(&env.provider).unwrap();
    assert!(env.provider.mysql_governor_present());
    let limits = provider::GovernorLimits {
        cpu_pct: 150,
        read_kibs: 2048,
        write_kibs: 1024,
    };
    env.provider.dbctl_set("shop1", &limits).unwrap();
    let listed = env.provider.dbctl_list().unwrap();
    assert_eq!(listed[0].0, "default");
    let shop1 = listed.iter().find(|(n, _)| n == "shop1").unwrap().1;
    assert!(shop1.matches(&limits), "{shop1:?}");
    let records = audit_records(&env.provider).unwrap();
    assert_eq!(records[0].path, "/usr/sbin/dbctl");
    assert_eq!(
        records[0].args,
        [
            "set",
            "shop1",
            "--cpu=150,150,150,150",
            "--read=2048k,2048k,2048k,2048k",
            "--write=1024k,1024k,1024k,1024k"
        ]
    );
    assert_eq!(records[1].args, ["list", "--bb"]);
    env.provider.dbctl_delete("shop1").unwrap();
    assert!(
        !env.provider
            .dbctl_list()
            .unwrap()
            .iter()
            .any(|(n, _)| n == "shop1")
    );
}

#[test]
fn dbctl_is_unsupported_on_debian_before_anything_runs() {
    let env = Env::sim(Platform::Debian);
    assert!(!env.provider.mysql_governor_present());
    let err = env
        .provider
        .dbctl_set(
            "shop1",
            &provider::GovernorLimits {
                cpu_pct: 100,
                read_kibs: 1,
                write_kibs: 1,
            },
        )
        .unwrap_err();
    assert_eq!(err.code(), "unsupported_on_platform");
    assert!(audit_records(&env.provider).unwrap().is_empty());
}
