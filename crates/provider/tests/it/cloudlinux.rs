//! The Sim's `lvectl` and `cagefsctl` models, through the typed provider calls production
//! makes, and the argv each call leaves in the audit log (the documented real forms).

use std::path::Path;

use provider::testing::audit_records;
use provider::{LveLimits, Platform, UserAdd};

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
