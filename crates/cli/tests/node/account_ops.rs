//! The account's limits, isolation, usage and rebuild, end to end through the real runner
//! binary on both platform profiles.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use registry::JobState;
use serde_json::{Value, json};

fn result(node: &Node, req: u64) -> Value {
    let job = node.state().job(&id(req)).unwrap().unwrap();
    assert_eq!(job.state, JobState::Succeeded, "{job:?}");
    job.result.unwrap()
}

fn error_code(node: &Node, req: u64) -> String {
    let job = node.state().job(&id(req)).unwrap().unwrap();
    assert_eq!(job.state, JobState::Failed, "{job:?}");
    job.error.unwrap().code.to_string()
}

#[test]
fn limits_and_isolation_are_applied_read_back_and_purged_on_cloudlinux() {
    let mut node = Node::cloudlinux();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.pass();
    node.submit(&set_limits(2, 10, 150));
    node.submit(&set_isolation(3, 11, true)); // no such account
    node.pass();
    let limits = result(&node, 2);
    assert_eq!(limits["limits"]["cpu_percent"], 150);
    assert_eq!(limits["limits"]["memory_mib"], 1024);
    assert_eq!(limits["limits"]["io_kib_per_sec"], 2048);
    assert_eq!(limits["limits"]["processes"], 50);
    assert_eq!(limits["limits"]["entry_processes"], 10);
    assert_eq!(error_code(&node, 3), "account_missing");
    node.submit(&set_isolation(4, 10, true));
    node.pass();
    assert_eq!(result(&node, 4)["cagefs"], true);
    let lvectl: Vec<Vec<String>> = node
        .audit_records()
        .into_iter()
        .filter(|r| r.program == "lvectl" || r.program == "cagefsctl")
        .map(|r| r.args)
        .collect();
    assert_eq!(
        lvectl[0],
        [
            "set-user",
            "shop1",
            "--speed=150%",
            "--pmem=1024M",
            "--io=2048",
            "--nproc=50",
            "--maxEntryProcs=10",
            "--save-all-parameters"
        ]
    );
    assert_eq!(lvectl[1], ["list-user"]);
    assert_eq!(lvectl[2], ["--enable", "shop1"]);
    node.check_converged();

    node.submit(&account_op(5, "observe_account_usage", 10));
    node.pass();
    let usage = result(&node, 5);
    assert_eq!(usage["limits_in_effect"], usage["limits_recorded"]);
    assert_eq!(usage["limits_in_effect"]["cpu_percent"], 150);
    assert_eq!(usage["cagefs"], true);

    node.submit(&set_isolation(6, 10, false));
    node.pass();
    assert_eq!(result(&node, 6)["cagefs"], false);
    node.check_converged();

    node.submit(&set_isolation(8, 10, true));
    node.pass();
    node.submit(&account_op(9, "remove_account", 10));
    node.pass();
    assert_eq!(node.job_state(&id(9)), Some(JobState::Succeeded));
    for file in [simulator::SIM_LVE_FILE, simulator::SIM_CAGEFS_FILE] {
        let left = std::fs::read_to_string(node.path(file)).unwrap_or_default();
        assert!(left.is_empty(), "{file} still holds {left:?}");
    }
    node.check_converged();
}

#[test]
fn limits_out_of_bounds_are_refused_naming_the_field() {
    let node = Node::new();
    for (field, value) in [
        ("cpu_percent", serde_json::json!(0)),
        ("cpu_percent", serde_json::json!(6401)),
        ("memory_mib", serde_json::json!(1_048_577)),
        ("io_kib_per_sec", serde_json::json!(-1)),
        ("processes", serde_json::json!(65_536)),
        ("entry_processes", serde_json::json!("20")),
    ] {
        let mut body = set_limits(1, 10, 100);
        body["resource"][field] = value;
        let err = declarations::registry()
            .validate(body.to_string().as_bytes(), &node.node_id)
            .err()
            .unwrap_or_else(|| panic!("{field} accepted"));
        assert_eq!(err.field, format!("resource.{field}"), "{err:?}");
    }
    let mut body = set_isolation(1, 10, true);
    body["resource"]["cagefs"] = serde_json::json!("yes");
    assert!(
        declarations::registry()
            .validate(body.to_string().as_bytes(), &node.node_id)
            .is_err()
    );
    node.pass();
}

/// On `debian` the limits are the account's slice (`hosting.rs` checks them end to end);
/// CageFS and MySQL Governor's database limits do not exist there: refused, nothing recorded,
/// no LVE or CageFS program started.
#[test]
fn isolation_and_database_limits_are_unsupported_on_debian_and_change_nothing() {
    let mut node = Node::new();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.pass();
    let before = node
        .state()
        .resource("account", &id(10).parse().unwrap())
        .unwrap();
    let mut with_mysql = set_limits(2, 10, 100);
    with_mysql["resource"]["mysql"] = serde_json::json!(
        {"cpu_percent": 100, "read_kib_per_sec": 1024, "write_kib_per_sec": 1024});
    node.submit(&with_mysql);
    node.pass();
    node.submit(&set_isolation(3, 10, true));
    node.pass();
    assert_eq!(error_code(&node, 2), "unsupported_on_platform");
    assert_eq!(error_code(&node, 3), "unsupported_on_platform");
    let after = node
        .state()
        .resource("account", &id(10).parse().unwrap())
        .unwrap();
    assert_eq!(before, after, "a refused change was recorded");
    assert!(
        node.audit_records()
            .iter()
            .all(|r| r.program != "lvectl" && r.program != "cagefsctl"),
        "debian started an LVE or CageFS program"
    );
    node.submit(&account_op(4, "observe_account_usage", 10));
    node.pass();
    let usage = result(&node, 4);
    assert!(
        usage["limits_in_effect"].is_null(),
        "no limits set: {usage}"
    );
    assert!(usage["cagefs"].is_null());
    // Set without database limits, they are the slice's, and the usage reads them back.
    node.submit(&set_limits(5, 10, 100));
    node.pass();
    node.submit(&account_op(6, "observe_account_usage", 10));
    node.pass();
    let usage = result(&node, 6);
    assert_eq!(
        usage["limits_in_effect"], usage["limits_recorded"],
        "{usage}"
    );
    assert_eq!(usage["limits_in_effect"]["cpu_percent"], 100);
    node.check_converged();
}

#[test]
fn observe_account_usage_counts_the_homes_bytes_and_inodes() {
    let mut node = Node::new();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.submit(&ensure_domain(2, 30, 10, "shop.example.com"));
    node.pass();
    node.submit(&account_op(3, "observe_account_usage", 10));
    node.pass();
    let before = result(&node, 3);
    let docroot = node.path("/home/shop1/web/shop.example.com/public_html");
    std::fs::write(docroot.join("index.html"), vec![b'x'; 100_000]).unwrap();
    node.submit(&account_op(4, "observe_account_usage", 10));
    node.pass();
    let after = result(&node, 4);
    assert_eq!(after["username"], "shop1");
    assert_eq!(after["complete"], true);
    assert_eq!(
        after["inodes"].as_u64().unwrap(),
        before["inodes"].as_u64().unwrap() + 1
    );
    assert!(
        after["disk_bytes"].as_u64().unwrap() >= before["disk_bytes"].as_u64().unwrap() + 100_000,
        "{before} -> {after}"
    );
    assert!(after["limits_recorded"].is_null());
    // Debian: the slice's counters as systemd keeps them; a sandbox's systemd counts none.
    assert_eq!(
        after["slice"],
        json!({"cpu_usage_nsec": null, "memory_bytes": null, "tasks": null,
               "io_read_bytes": null, "io_write_bytes": null})
    );
    let uid = node.account_uid(&id(10)).unwrap();
    let shows: Vec<Vec<String>> = node
        .audit_records()
        .into_iter()
        .filter(|r| r.program == "systemctl")
        .map(|r| r.args)
        .collect();
    assert!(
        shows.contains(&vec![
            "show".to_owned(),
            format!("--property={}", provider::SLICE_USAGE_PROPERTIES),
            "--".to_owned(),
            format!("user-{uid}.slice"),
        ]),
        "{shows:?}"
    );
}

/// Every file beneath `dir`, with its bytes (directories as `None`).
fn snapshot(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(dir).unwrap().display().to_string();
            if entry.file_type().unwrap().is_dir() {
                out.insert(rel, None);
                stack.push(path);
            } else {
                out.insert(rel, Some(std::fs::read(&path).unwrap()));
            }
        }
    }
    out
}

#[test]
fn rebuild_account_puts_back_every_derived_file_byte_identical() {
    let mut node = Node::new();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.pass();
    node.submit(&ensure_key(2, 20, 10));
    node.submit(&ensure_domain(3, 30, 10, "shop.example.com"));
    node.submit(&ensure_domain(4, 31, 10, "blog.example.com"));
    node.pass();
    node.submit(&account_op(5, "suspend_account", 10));
    node.pass();
    node.check_converged();
    let vhosts = node.path(node.provider.apache_layout().vhosts_dir);
    let home = node.path("/home/shop1");
    let etc = |node: &Node, f: &str| std::fs::read(node.path(f)).unwrap();
    let before = (
        snapshot(&vhosts),
        snapshot(&home),
        etc(&node, "/etc/passwd"),
        etc(&node, "/etc/shadow"),
    );

    // Drift: a vhost deleted, another edited, authorized_keys edited, a docroot removed.
    std::fs::remove_file(vhosts.join(format!("{}.conf", id(30)))).unwrap();
    std::fs::write(vhosts.join(format!("{}.conf", id(31))), "# emptied\n").unwrap();
    std::fs::write(
        home.join(".ssh/authorized_keys"),
        "ssh-ed25519 AAAA intruder\n",
    )
    .unwrap();
    std::fs::remove_dir_all(home.join("web/shop.example.com")).unwrap();
    assert_ne!(snapshot(&vhosts), before.0);
    assert_ne!(snapshot(&home), before.1);

    node.submit(&account_op(6, "rebuild_account", 10));
    node.pass();
    let rebuilt = result(&node, 6);
    let replayed: Vec<&str> = rebuilt["replayed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        replayed,
        [
            format!("account/ensure_account/{}", id(10)),
            format!("account/suspend_account/{}", id(10)),
            format!("ssh_key/ensure_ssh_key/{}", id(20)),
            format!("web_domain/ensure_web_domain/{}", id(30)),
            format!("web_domain/ensure_web_domain/{}", id(31)),
        ]
    );
    let after = (
        snapshot(&vhosts),
        snapshot(&home),
        etc(&node, "/etc/passwd"),
        etc(&node, "/etc/shadow"),
    );
    assert!(before.0 == after.0, "vhosts differ after the rebuild");
    assert!(before.1 == after.1, "the home differs after the rebuild");
    assert!(before.2 == after.2, "passwd differs after the rebuild");
    assert!(before.3 == after.3, "shadow differs after the rebuild");
    node.check_converged();

    // The home itself gone: created again, owned by the tenant, and refilled.
    std::fs::remove_dir_all(&home).unwrap();
    node.submit(&account_op(7, "rebuild_account", 10));
    node.pass();
    assert_eq!(result(&node, 7)["home_recreated"], true);
    assert!(home.join(".ssh/authorized_keys").is_file());
    assert!(home.join("web/blog.example.com/public_html").is_dir());
    node.check_converged();

    // A removed resource is not brought back.
    node.submit(&remove_domain(8, 31, 10));
    node.pass();
    node.submit(&account_op(9, "rebuild_account", 10));
    node.pass();
    assert!(!vhosts.join(format!("{}.conf", id(31))).exists());
    node.check_converged();

    node.submit(&account_op(10, "rebuild_account", 11));
    node.pass();
    assert_eq!(error_code(&node, 10), "account_missing");
}

fn set_limits_with_mysql(req: u64, account: u64, cpu: u64, read: u64, write: u64) -> Value {
    let mut body = set_limits(req, account, 100);
    body["resource"]["mysql"] = serde_json::json!({"cpu_percent": cpu, "read_kib_per_sec": read, "write_kib_per_sec": write});
    body
}

fn dbctl_lines(node: &Node) -> Vec<String> {
    std::fs::read_to_string(node.path(simulator::SIM_DBCTL_FILE))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn database_limits_go_through_dbctl_where_the_governor_is_installed_and_the_purge_resets_them() {
    let mut node = Node::cloudlinux();
    testkit::seed_mysql_governor(&node.provider).unwrap();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.pass();
    node.submit(&set_limits_with_mysql(2, 10, 150, 2048, 1024));
    node.pass();
    let set = result(&node, 2);
    assert_eq!(
        set["mysql"],
        serde_json::json!({"cpu_percent": 150, "read_kib_per_sec": 2048, "write_kib_per_sec": 1024})
    );
    assert_eq!(set["limits"]["cpu_percent"], 100);
    let dbctl: Vec<Vec<String>> = node
        .audit_records()
        .into_iter()
        .filter(|r| r.program == "dbctl")
        .map(|r| r.args)
        .collect();
    assert_eq!(
        dbctl,
        [
            vec![
                "set",
                "shop1",
                "--cpu=150,150,150,150",
                "--read=2048k,2048k,2048k,2048k",
                "--write=1024k,1024k,1024k,1024k"
            ],
            vec!["list", "--bb"]
        ]
    );
    assert_eq!(
        dbctl_lines(&node),
        ["shop1 150,150,150,150 2097152,2097152,2097152,2097152 1048576,1048576,1048576,1048576"]
    );
    node.check_converged();
    node.submit(&account_op(21, "observe_account_usage", 10));
    node.pass();
    let usage = result(&node, 21);
    assert_eq!(usage["mysql_limits_in_effect"], set["mysql"]);
    assert_eq!(usage["mysql_limits_recorded"], set["mysql"]);

    // The same operation without database limits puts the governor's defaults back.
    node.submit(&set_limits(3, 10, 100));
    node.pass();
    assert!(result(&node, 3).get("mysql").is_none());
    assert!(dbctl_lines(&node).is_empty());
    let last = node.audit_records().pop().unwrap();
    assert_eq!(
        (last.program.as_str(), last.args),
        ("dbctl", vec!["delete".to_owned(), "shop1".to_owned()])
    );
    node.submit(&account_op(22, "observe_account_usage", 10));
    node.pass();
    let usage = result(&node, 22);
    assert!(usage.get("mysql_limits_recorded").is_none(), "{usage}");
    // The governor's defaults (the Sim's `default` line: 400 %, 1 GiB/s).
    assert_eq!(
        usage["mysql_limits_in_effect"],
        serde_json::json!({"cpu_percent": 400, "read_kib_per_sec": 1_048_576, "write_kib_per_sec": 1_048_576})
    );
    node.check_converged();

    node.submit(&set_limits_with_mysql(4, 10, 80, 512, 512));
    node.pass();
    assert_eq!(result(&node, 4)["mysql"]["cpu_percent"], 80);
    node.submit(&account_op(5, "remove_account", 10));
    node.pass();
    assert_eq!(node.job_state(&id(5)), Some(JobState::Succeeded));
    assert!(
        dbctl_lines(&node).is_empty(),
        "the purge left governor limits"
    );
    node.check_converged();
}

#[test]
fn database_limits_without_the_governor_are_unsupported_and_run_nothing() {
    // CloudLinux without governor-mysql, and Debian: refused before lvectl or dbctl runs.
    for mut node in [Node::cloudlinux(), Node::new()] {
        node.submit(&ensure_account(1, 10, "shop1"));
        node.pass();
        let before = node
            .state()
            .resource("account", &id(10).parse().unwrap())
            .unwrap();
        node.submit(&set_limits_with_mysql(2, 10, 150, 2048, 1024));
        node.pass();
        assert_eq!(error_code(&node, 2), "unsupported_on_platform");
        let after = node
            .state()
            .resource("account", &id(10).parse().unwrap())
            .unwrap();
        assert_eq!(before, after, "a refused change was recorded");
        assert!(
            node.audit_records()
                .iter()
                .all(|r| r.program != "lvectl" && r.program != "dbctl"),
            "a refused change started a program"
        );
        assert!(dbctl_lines(&node).is_empty());
        node.check_converged();
    }
}

#[test]
fn database_limits_out_of_bounds_are_refused_naming_the_field() {
    let node = Node::new();
    for (field, value) in [
        ("cpu_percent", serde_json::json!(0)),
        ("read_kib_per_sec", serde_json::json!(0)),
        ("write_kib_per_sec", serde_json::json!(10_485_761)),
        ("unexpected", serde_json::json!(1)),
    ] {
        let mut body = set_limits_with_mysql(1, 10, 100, 1024, 1024);
        body["resource"]["mysql"][field] = value;
        let err = declarations::registry()
            .validate(body.to_string().as_bytes(), &node.node_id)
            .err()
            .unwrap_or_else(|| panic!("{field} accepted"));
        assert_eq!(err.field, format!("resource.mysql.{field}"), "{err:?}");
    }
}

fn ensure_with_quota(req: u64, account: u64, username: &str, mib: u64, inodes: u64) -> Value {
    serde_json::json!({"request_id": id(req), "operation": "ensure_account",
        "resource": {"id": id(account), "username": username, "shell": "bash",
                     "disk_quota_mib": mib, "inode_quota": inodes}})
}

/// The Sim's record of the user quotas `setquota` set, one `UID BSOFT BHARD ISOFT IHARD` line
/// each.
fn sim_user_quotas(node: &Node) -> String {
    std::fs::read_to_string(node.path(simulator::SIM_USER_QUOTA_FILE)).unwrap_or_default()
}

#[test]
fn quotas_are_hard_user_quotas_read_back_into_the_results_and_cleared_on_removal() {
    const MIB: u64 = 1024 * 1024;
    let mut node = Node::new();
    node.submit(&ensure_with_quota(1, 10, "shop1", 20, 1000));
    node.pass();
    let created = result(&node, 1);
    let uid = created["uid"].as_u64().unwrap();
    assert_eq!(created["disk_quota_mib"], 20);
    let quota = &created["quota"];
    assert_eq!(quota["mechanism"], "user_quota");
    assert_eq!(quota["enforced"], true);
    assert_eq!(quota["limit_bytes"], 20 * MIB);
    assert_eq!(quota["limit_inodes"], 1000);
    assert!(quota["used_bytes"].as_u64().is_some(), "{quota}");
    assert!(quota["used_inodes"].as_u64().unwrap() >= 1, "{quota}");
    assert_eq!(
        sim_user_quotas(&node),
        format!("{uid} 20480 20480 1000 1000\n"),
        "setquota got KiB blocks and inodes, soft equal to hard"
    );
    let setquota: Vec<Vec<String>> = node
        .audit_records()
        .into_iter()
        .filter(|r| r.program == "setquota")
        .map(|r| r.args)
        .collect();
    let mount = node.root_path().display().to_string();
    assert_eq!(
        setquota,
        [vec![
            "-u".to_owned(),
            uid.to_string(),
            "20480".into(),
            "20480".into(),
            "1000".into(),
            "1000".into(),
            mount
        ]]
    );

    let home = node.path("/home/shop1");
    std::fs::write(home.join("data.bin"), vec![7u8; 300_000]).unwrap();
    node.submit(&account_op(2, "observe_account_usage", 10));
    node.pass();
    let usage = result(&node, 2);
    assert_eq!(usage["quota"]["mechanism"], "user_quota");
    assert_eq!(usage["quota"]["enforced"], true);
    assert_eq!(usage["quota"]["limit_bytes"], 20 * MIB);
    assert!(
        usage["quota"]["used_bytes"].as_u64().unwrap()
            >= quota["used_bytes"].as_u64().unwrap() + 290_000,
        "{usage}"
    );
    assert_eq!(
        usage["quota"]["used_inodes"].as_u64().unwrap(),
        quota["used_inodes"].as_u64().unwrap() + 1
    );

    // Unlimited: the user quota is cleared, and nothing says it is enforced.
    node.submit(&ensure_with_quota(3, 10, "shop1", 0, 0));
    node.pass();
    let unlimited = result(&node, 3);
    assert_eq!(unlimited["quota"]["enforced"], false);
    assert!(unlimited["quota"]["limit_bytes"].is_null());
    assert!(unlimited["quota"]["limit_inodes"].is_null());
    assert_eq!(sim_user_quotas(&node), "");
    node.check_converged();

    node.submit(&ensure_with_quota(4, 10, "shop1", 5, 0));
    node.pass();
    assert_eq!(sim_user_quotas(&node), format!("{uid} 5120 5120 0 0\n"));
    node.submit(&account_op(5, "remove_account", 10));
    node.pass();
    result(&node, 5);
    assert_eq!(
        sim_user_quotas(&node),
        "",
        "a uid handed out again starts unlimited"
    );
}

#[test]
fn a_quota_nothing_can_enforce_is_refused_naming_its_field_and_unlimited_still_works() {
    let mut node = Node::new();
    simulator::sim_set_homes_quota(&node.provider, simulator::SimHomesQuota::None).unwrap();
    node.submit(&ensure_with_quota(1, 10, "shop1", 20, 0));
    node.submit(&ensure_with_quota(2, 11, "shop2", 0, 1000));
    node.pass();
    for (req, field) in [(1, "resource.disk_quota_mib"), (2, "resource.inode_quota")] {
        let job = node.state().job(&id(req)).unwrap().unwrap();
        assert_eq!(job.state, JobState::Failed, "{job:?}");
        let error = job.error.unwrap();
        assert_eq!(error.code, "quota_unsupported");
        assert!(
            error.message.starts_with(&format!("{field}: ")),
            "{}",
            error.message
        );
        assert!(
            error
                .message
                .contains("the file system of /home is ext4 without user quotas"),
            "{}",
            error.message
        );
    }
    assert!(
        node.provider.lookup_user("shop1").unwrap().is_none(),
        "nothing was created for a refused quota"
    );
    assert!(node.provider.lookup_group("shop1").unwrap().is_none());

    node.submit(&ensure_with_quota(3, 10, "shop1", 0, 0));
    node.pass();
    let created = result(&node, 3);
    assert_eq!(
        created["quota"],
        serde_json::json!({"mechanism": "none", "enforced": false, "limit_bytes": null,
                           "limit_inodes": null, "used_bytes": null, "used_inodes": null})
    );
    node.submit(&account_op(4, "observe_account_usage", 10));
    node.pass();
    assert_eq!(result(&node, 4)["quota"], created["quota"]);
    assert!(
        node.audit_records()
            .iter()
            .all(|r| r.program != "setquota" && r.program != "repquota"),
        "no quota tool runs where the file system has no quotas"
    );
    node.check_converged();
}

/// Whether `node`'s vhost of web domain `domain_id` answers 403 (the suspended vhost's rule).
fn answers_403(node: &Node, domain_id: u64) -> bool {
    let vhosts = node.path(node.provider.apache_layout().vhosts_dir);
    std::fs::read_to_string(vhosts.join(format!("{}.conf", id(domain_id))))
        .unwrap()
        .contains("Require all denied")
}

/// The address of every mailbox whose line in Dovecot's passwd-file refuses logins.
fn refused_mailboxes(node: &Node) -> Vec<String> {
    let passwd = std::fs::read_to_string(node.provider.dovecot_passwd_path()).unwrap();
    passwd
        .lines()
        .filter(|line| line.ends_with(" allow_nets=0.0.0.0/32"))
        .map(|line| line.split(':').next().unwrap().to_owned())
        .collect()
}

/// The logins in pure-ftpd's passwd file.
fn ftp_logins(node: &Node) -> Vec<String> {
    std::fs::read_to_string(node.path(provider::FTP_LAYOUT.passwd))
        .unwrap()
        .lines()
        .map(|line| line.split(':').next().unwrap().to_owned())
        .collect()
}

#[test]
fn suspending_an_account_refuses_its_sites_mailboxes_and_ftp_logins_and_keeps_their_own_suspensions()
 {
    let mut node = Node::new();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.submit(&ensure_account(2, 11, "shop2"));
    node.pass();
    node.submit(&ensure_domain(3, 30, 10, "shop.example.com"));
    node.submit(&ensure_domain(4, 31, 10, "blog.example.com"));
    node.submit(&ensure_domain(5, 32, 11, "other.example.com"));
    node.submit(&ensure_mail_domain(6, 40, 10, "shop.example.com"));
    node.submit(&ensure_mail_domain(7, 41, 11, "other.example.com"));
    node.pass();
    node.submit(&ensure_mailbox(8, 50, 10, "shop.example.com", "info"));
    node.submit(&ensure_mailbox(9, 51, 10, "shop.example.com", "sales"));
    node.submit(&ensure_mailbox(10, 52, 11, "other.example.com", "info"));
    node.submit(&ensure_ftp(11, 60, 10, "shop1.up", None));
    node.submit(&ensure_ftp(12, 61, 10, "shop1.dev", None));
    node.submit(&ensure_ftp(13, 62, 11, "shop2.ftp", None));
    node.pass();
    // Each resource suspended on its own: one of each of the account's.
    node.submit(&domain_suspension(14, "suspend_web_domain", 31, 10));
    node.submit(&mail_op(
        15,
        "suspend_mailbox",
        51,
        10,
        serde_json::json!({}),
    ));
    node.submit(&mail_op(
        16,
        "suspend_ftp_account",
        61,
        10,
        serde_json::json!({}),
    ));
    node.pass();
    for req in 3..=16 {
        result(&node, req);
    }

    // One batch: a mailbox added before the suspension, a domain after it.
    node.submit(&ensure_mailbox(17, 53, 10, "shop.example.com", "new"));
    node.submit(&account_op(18, "suspend_account", 10));
    node.submit(&ensure_domain(19, 33, 10, "new.example.com"));
    node.pass();
    result(&node, 17);
    result(&node, 19);
    let suspended = result(&node, 18);
    assert_eq!(suspended["username"], "shop1");
    assert_eq!(suspended["suspended"], true);
    assert_eq!(
        suspended["web_domains"],
        serde_json::json!(["shop.example.com", "blog.example.com"])
    );
    assert_eq!(
        suspended["mailboxes"],
        serde_json::json!([
            "info@shop.example.com",
            "new@shop.example.com",
            "sales@shop.example.com"
        ])
    );
    assert_eq!(
        suspended["ftp_logins"],
        serde_json::json!(["shop1.up", "shop1.dev"])
    );
    for domain in [30, 31, 33] {
        assert!(answers_403(&node, domain), "web domain {domain} is served");
    }
    assert!(
        !answers_403(&node, 32),
        "another account's site answers 403"
    );
    assert_eq!(
        refused_mailboxes(&node),
        [
            "info@shop.example.com",
            "new@shop.example.com",
            "sales@shop.example.com"
        ]
    );
    // Mail to them is still accepted.
    let mailboxes = std::fs::read_to_string(
        node.provider
            .postfix_map_path(provider::PostfixMap::Mailboxes),
    )
    .unwrap();
    assert!(mailboxes.contains("info@shop.example.com "), "{mailboxes}");
    assert_eq!(ftp_logins(&node), ["shop2.ftp"]);
    let shadow = std::fs::read_to_string(node.path("/etc/shadow")).unwrap();
    let shop1 = shadow.lines().find(|l| l.starts_with("shop1:")).unwrap();
    assert!(shop1.split(':').nth(1).unwrap().starts_with('!'), "{shop1}");
    node.check_converged();
    assert_eq!(node.check_drift(), [], "a suspended account drifted");

    // A resource unsuspended on its own stays refused while its account is suspended.
    node.submit(&domain_suspension(20, "unsuspend_web_domain", 30, 10));
    node.submit(&mail_op(
        21,
        "unsuspend_mailbox",
        50,
        10,
        serde_json::json!({}),
    ));
    node.submit(&mail_op(
        22,
        "unsuspend_ftp_account",
        60,
        10,
        serde_json::json!({}),
    ));
    node.pass();
    for req in 20..=22 {
        result(&node, req);
    }
    assert!(answers_403(&node, 30));
    assert!(refused_mailboxes(&node).contains(&"info@shop.example.com".to_owned()));
    assert_eq!(ftp_logins(&node), ["shop2.ftp"]);
    node.check_converged();

    // Unsuspended, the account keeps what was suspended on its own.
    node.submit(&account_op(23, "unsuspend_account", 10));
    node.pass();
    let back = result(&node, 23);
    assert_eq!(back["suspended"], false);
    assert_eq!(back["web_domains"], serde_json::json!(["blog.example.com"]));
    assert_eq!(
        back["mailboxes"],
        serde_json::json!(["sales@shop.example.com"])
    );
    assert_eq!(back["ftp_logins"], serde_json::json!(["shop1.dev"]));
    assert!(!answers_403(&node, 30) && !answers_403(&node, 33));
    assert!(answers_403(&node, 31));
    assert_eq!(refused_mailboxes(&node), ["sales@shop.example.com"]);
    assert_eq!(ftp_logins(&node), ["shop1.up", "shop2.ftp"]);
    node.check_converged();
    assert_eq!(node.check_drift(), [], "an unsuspended account drifted");
}
