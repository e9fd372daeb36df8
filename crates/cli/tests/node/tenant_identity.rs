//! Who a tenant is, and that a removed one is gone (ARCHITECTURE.md invariant 15), end to end
//! through the real runner binary on a Sim sysroot.
//!
//! The attacks of issue 12 (points 2, 4 and 8), as written, and the variants a reviewer
//! would try next:
//! - a user name that takes over a system group (`shadow`, `disk`, `docker`...), a name the
//!   system's databases hold (a user, an empty group, a group with members, a member, a
//!   gshadow administrator, a stale shadow entry), a name or uid once a sudo administrator's;
//! - a GECOS field edited with `chfn`, which made the account impossible to suspend or remove;
//! - processes left running at removal (a fork loop, orphans, a process ignoring SIGTERM), one
//!   the tenant cannot signal, and files left in `/tmp`, `/var/tmp`, `/dev/shm` and the spools.
//!
//! The tests that start real processes as a tenant need root (CI runs the suite as root) and
//! the `layerone-tenant` worker beside the runner; their sysroot gets a block of uids this
//! machine does not use (`Node::use_real_process_ids`), so no kill can reach a real user.

use crate::common;

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Stdio};

use common::*;
use registry::{Hex32, JobState, JobView};
use serde_json::{Value, json};

fn job(node: &Node, req: u64) -> JobView {
    node.state().job(&id(req)).unwrap().expect("the job exists")
}

fn result(node: &Node, req: u64) -> Value {
    let job = job(node, req);
    assert_eq!(job.state, JobState::Succeeded, "{job:?}");
    job.result.unwrap()
}

fn error(node: &Node, req: u64) -> registry::OpError {
    let job = job(node, req);
    assert_eq!(job.state, JobState::Failed, "{job:?}");
    job.error.unwrap()
}

fn append(node: &Node, path: &str, text: &str) {
    let file = node.path(path);
    let mut content = std::fs::read_to_string(&file).unwrap_or_default();
    content.push_str(text);
    std::fs::write(&file, content).unwrap();
}

/// Rewrites every line of `path` through `edit` (`None` drops the line).
fn edit_lines(node: &Node, path: &str, edit: impl Fn(&str) -> Option<String>) {
    let file = node.path(path);
    let content = std::fs::read_to_string(&file).unwrap();
    let mut out: String = content
        .lines()
        .filter_map(edit)
        .collect::<Vec<_>>()
        .join("\n");
    out.push('\n');
    std::fs::write(&file, out).unwrap();
}

/// The four account databases of the sysroot.
fn databases(node: &Node) -> BTreeMap<&'static str, String> {
    ["/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow"]
        .into_iter()
        .map(|f| (f, std::fs::read_to_string(node.path(f)).unwrap_or_default()))
        .collect()
}

fn uid_of(node: &Node, name: &str) -> u32 {
    node.provider
        .lookup_user(name)
        .unwrap()
        .expect("the user exists")
        .uid
}

fn set_password(req: u64, account: u64) -> Value {
    json!({"request_id": id(req), "operation": "set_account_password",
           "resource": {"id": id(account), "password_hash": MAIL_HASH}})
}

fn set_list(node: &Node, req: u64, generation: u64, users: &[&str]) -> Value {
    json!({"request_id": id(req), "action": "set_sudo_allowlist", "node_id": node.node_id,
           "resource": {"id": id(0x5d), "generation": generation, "users": users}})
}

fn remove_list(node: &Node, req: u64, generation: u64) -> Value {
    json!({"request_id": id(req), "action": "remove_sudo_allowlist", "node_id": node.node_id,
           "resource": {"id": id(0x5d), "generation": generation}})
}

fn require_root_and_the_worker() {
    assert!(
        rustix::process::geteuid().is_root(),
        "this test starts processes as a tenant and needs root (CI runs the suite as root)"
    );
    let worker = RUNNER.with_file_name(provider::TENANT_WORKER_NAME);
    assert!(
        worker.exists(),
        "{} is missing: build it with `cargo build -p tenant` (the workspace test run does)",
        worker.display()
    );
}

/// A fork loop: it forks for as long as it runs, each child staying, and keeps trying once
/// [`TENANT_NPROC`] refuses it (perl, because a shell exits when a fork fails).
const FORK_LOOP: &str = "exec perl -e 'while (1) { my $p = fork(); if (defined $p && $p == 0) { sleep 1000; exit 0 } }'";

/// A loop of orphans: each child forks a grandchild and exits at once, so the grandchild is
/// re-parented away from the loop.
const ORPHAN_LOOP: &str = "exec perl -e '$SIG{CHLD} = q(IGNORE); while (1) { my $p = fork(); if (defined $p && $p == 0) { my $q = fork(); sleep 1000 if defined $q && $q == 0; exit 0 } }'";

/// The most processes a tenant of these tests may have: a fork loop that is not stopped
/// cannot exhaust this machine.
const TENANT_NPROC: u64 = 500;

/// Starts `script` with `/bin/sh` as the tenant `uid` (its own group, no other), with
/// `RLIMIT_NPROC` at [`TENANT_NPROC`] (the kernel counts every process of the uid against it).
#[allow(clippy::disallowed_methods)] // The test starts the tenant's own processes, as the tenant.
fn spawn_as(uid: u32, script: &str) -> Child {
    use std::os::unix::process::CommandExt;
    let mut command = std::process::Command::new("/bin/sh");
    // SAFETY: between fork and exec the closure makes one async-signal-safe system call.
    unsafe {
        command.pre_exec(|| {
            let limit = rustix::process::Rlimit {
                current: Some(TENANT_NPROC),
                maximum: Some(TENANT_NPROC),
            };
            rustix::process::setrlimit(rustix::process::Resource::Nproc, limit)
                .map_err(std::io::Error::from)
        });
    }
    command
        .arg("-c")
        .arg(script)
        .uid(uid)
        .gid(uid)
        .current_dir("/")
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("/bin/sh starts as the tenant")
}

/// The processes of this machine (zombies aside) whose real, effective or saved uid is `uid`.
fn running_processes_of(uid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        let zombie = status
            .lines()
            .any(|l| l.starts_with("State:") && (l.contains('Z') || l.contains('X')));
        let uids: Vec<u32> = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .map(|rest| {
                rest.split_whitespace()
                    .take(3)
                    .filter_map(|v| v.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        if !zombie && uids.contains(&uid) {
            found.push(pid);
        }
    }
    found
}

/// Waits (a bounded number of short sleeps) for the setup to have started `n` processes of
/// `uid`. Not a timing assertion: the setup is simply not ready before.
fn wait_for_processes(uid: u32, n: usize) {
    for _ in 0..2000 {
        if running_processes_of(uid).len() >= n {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    panic!(
        "the tenant's processes did not start: {:?}",
        running_processes_of(uid)
    );
}

/// Kills every process of its uids when dropped, as each uid (`kill -KILL -1`), so a test
/// that fails half-way leaves nothing running on this machine.
struct KillOnDrop(Vec<u32>);

impl Drop for KillOnDrop {
    #[allow(clippy::disallowed_methods)] // The test cleans up the processes it started.
    fn drop(&mut self) {
        use std::os::unix::process::CommandExt;
        for &uid in &self.0 {
            for _ in 0..5 {
                if running_processes_of(uid).is_empty() {
                    break;
                }
                let _ = std::process::Command::new("/bin/kill")
                    .args(["-KILL", "--", "-1"])
                    .uid(uid)
                    .gid(uid)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
        }
    }
}

/// A child of the test's, killed and reaped when dropped.
struct ChildGuard(Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Kills and reaps `children` (the test's own, should a test fail before the node did).
fn reap(children: &mut [Child]) -> Vec<Option<i32>> {
    children
        .iter_mut()
        .map(|c| {
            let _ = c.kill();
            c.wait().ok().and_then(|s| s.signal())
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Point 2: a user name that takes over a system group, or what an administrator had.

#[test]
fn system_group_and_service_names_are_refused_at_admission_naming_the_username() {
    let node_id: Hex32 = id(0xfeed).parse().unwrap();
    for name in [
        "shadow",
        "disk",
        "kmem",
        "docker",
        "ssl-cert",
        "crontab",
        "sudo",
        "adm",
        "staff",
        "lxd",
        "utmp",
        "www-data",
        "apache",
        "vmail",
        "layerone-api",
        "layerone-operators",
        "systemd-journal",
        "root",
    ] {
        let err = declarations::registry()
            .validate(ensure_account(1, 10, name).to_string().as_bytes(), &node_id)
            .expect_err(name);
        assert_eq!(err.code, "invalid_field", "{name}: {err:?}");
        assert_eq!(err.field, "resource.username", "{name}: {err:?}");
        assert!(err.message.contains("reserved"), "{name}: {err:?}");
    }
}

#[test]
fn a_name_the_system_databases_hold_is_refused_and_nothing_is_created() {
    let mut node = Node::new();
    // A service user, an empty group above GID_MIN (the old code adopted it), a group with a
    // member, that member, a gshadow administrator, a leftover member of sudo, a system
    // group below GID_MIN (what shadow and disk are), a stale shadow entry.
    append(
        &node,
        "/etc/passwd",
        "backupsvc:x:1500:1500::/var/lib/backupsvc:/usr/sbin/nologin\n",
    );
    append(
        &node,
        "/etc/shadow",
        "backupsvc:*:19000:0:99999:7:::\nfrank:!:19000:0:99999:7:::\n",
    );
    append(
        &node,
        "/etc/group",
        "backupsvc:x:1500:\ndevelopers:x:1600:\nprojects:x:1601:carol\nsgxhelper:x:120:\nsudo:x:27:erin\n",
    );
    append(
        &node,
        "/etc/gshadow",
        "backupsvc:!::\ndevelopers:!::\nprojects:!:dave:carol\nsgxhelper:!::\nsudo:*::erin\n",
    );
    let before = databases(&node);
    let names = [
        "backupsvc",
        "developers",
        "projects",
        "carol",
        "dave",
        "erin",
        "sgxhelper",
        "frank",
    ];
    for (i, name) in names.iter().enumerate() {
        node.submit(&ensure_account(1 + i as u64, 10 + i as u64, name));
    }
    node.pass();
    for (i, name) in names.iter().enumerate() {
        let err = error(&node, 1 + i as u64);
        assert_eq!(err.code, "username_reserved", "{name}: {err:?}");
        assert!(!err.retryable, "{name}");
        assert!(
            err.message.starts_with(&format!("username: {name} ")),
            "{name}: {err:?}"
        );
        assert!(!node.path(&format!("/home/{name}")).exists(), "{name}");
    }
    assert_eq!(
        databases(&node),
        before,
        "a refused name changed the databases"
    );
    assert!(node.state().identities().unwrap().is_empty());
}

#[test]
fn a_new_account_gets_its_own_group_with_a_fresh_id_and_ensuring_it_again_changes_nothing() {
    let mut node = Node::new();
    append(
        &node,
        "/etc/passwd",
        "olduser:x:1700:1700::/home/olduser:/bin/sh\n",
    );
    append(&node, "/etc/group", "olduser:x:1700:\nteam:x:1800:\n");
    node.submit(&ensure_account(1, 10, "shop1"));
    node.pass();
    let account = result(&node, 1);
    let uid = account["uid"].as_u64().unwrap() as u32;
    assert_eq!(account["gid"].as_u64(), Some(u64::from(uid)), "{account}");
    // Above every id in use; GID_MIN is 1000 (no login.defs: shadow-utils' default).
    assert_eq!(uid, 1801);
    let group = node.provider.lookup_group("shop1").unwrap().unwrap();
    assert_eq!(group.gid, uid);
    assert!(group.members.is_empty());
    let recorded = node
        .state()
        .account_identity(&id(10).parse().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(
        (recorded.name.as_str(), recorded.uid, recorded.gid),
        ("shop1", uid, Some(uid))
    );

    let after_first = databases(&node);
    node.submit(&ensure_account(2, 10, "shop1"));
    node.pass();
    assert_eq!(result(&node, 2)["uid"], account["uid"]);
    assert_eq!(
        databases(&node),
        after_first,
        "ensuring again changed the databases"
    );

    node.submit(&ensure_account(3, 11, "shop2"));
    node.pass();
    assert_eq!(result(&node, 3)["uid"].as_u64(), Some(u64::from(uid) + 1));
    // Another account's name is taken, not reserved.
    node.submit(&ensure_account(4, 12, "shop1"));
    node.pass();
    assert_eq!(error(&node, 4).code, "username_taken");
}

/// The line of `name` in the sysroot's `/etc/shadow`, its name left out.
fn shadow_line(node: &Node, name: &str) -> Option<String> {
    let prefix = format!("{name}:");
    std::fs::read_to_string(node.path("/etc/shadow"))
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix(&prefix).map(str::to_owned))
}

#[test]
fn a_creation_killed_inside_useradd_between_passwd_and_shadow_is_completed_by_its_retry() {
    let mut node = Node::new();
    node.submit(&ensure_account(1, 10, "shop1"));
    assert!(!node.run(Some(ops::account::AFTER_USERADD)).success());
    // What a kill between useradd's two renames leaves: the user in passwd, not in shadow.
    edit_lines(&node, "/etc/shadow", |line| {
        (!line.starts_with("shop1:")).then(|| line.to_owned())
    });
    assert!(node.provider.lookup_user("shop1").unwrap().is_some());
    node.pass();
    result(&node, 1);
    node.submit(&ensure_account(2, 11, "shop2"));
    node.pass();
    result(&node, 2);
    // The same entry a creation that was not cut short gets: no password yet (`!`).
    let entry = shadow_line(&node, "shop1").expect("shop1 has a shadow entry again");
    assert!(entry.starts_with("!:"), "{entry}");
    assert_eq!(Some(entry), shadow_line(&node, "shop2"));
    node.check_converged();
}

#[test]
fn a_name_or_uid_once_a_sudo_administrators_is_never_a_tenants() {
    let mut node = Node::new();
    // alice, an administrator, has the highest uid on the system.
    append(
        &node,
        "/etc/passwd",
        "alice:x:1005:1005::/home/alice:/bin/bash\n",
    );
    append(&node, "/etc/shadow", "alice:!:19000:0:99999:7:::\n");
    append(&node, "/etc/group", "sudo:x:27:alice\nalice:x:1005:\n");
    append(&node, "/etc/gshadow", "sudo:*::alice\nalice:!::\n");
    std::fs::write(
        node.path("/etc/login.defs"),
        "UID_MIN 1000\nUID_MAX 60000\nGID_MIN 1000\nGID_MAX 60000\n",
    )
    .unwrap();
    node.submit(&set_list(&node, 1, 1, &["alice"]));
    node.pass();
    result(&node, 1);
    let dropin = node.path(node.provider.sudo_layout().dropin);
    assert!(
        std::fs::read_to_string(&dropin)
            .unwrap()
            .contains("\nalice ALL=(ALL:ALL) ALL\n")
    );

    // alice's user is deleted behind the node (what `userdel alice` leaves): her name and
    // uid are free on the system, and the drop-in still grants "alice" everything.
    for file in ["/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow"] {
        edit_lines(&node, file, |l| {
            if l.starts_with("alice:") {
                None
            } else if l.starts_with("sudo:") {
                Some(l.trim_end_matches("alice").to_owned())
            } else {
                Some(l.to_owned())
            }
        });
    }
    node.submit(&ensure_account(2, 10, "alice"));
    node.submit(&ensure_account(3, 11, "shop1"));
    node.pass();
    let err = error(&node, 2);
    assert_eq!(err.code, "username_reserved", "{err:?}");
    assert!(err.message.contains("sudo administrator"), "{err:?}");
    // useradd would have given 1005 again (the highest uid left is below it).
    let uid = result(&node, 3)["uid"].as_u64().unwrap();
    assert!(uid > 1005, "a tenant got uid {uid}");

    // The allowlist removed (its row keeps no names): the name stays refused.
    node.submit(&remove_list(&node, 4, 2));
    node.pass();
    result(&node, 4);
    node.submit(&ensure_account(5, 12, "alice"));
    node.pass();
    assert_eq!(error(&node, 5).code, "username_reserved");

    // And a tenant is never made an administrator, even once in the admin group.
    edit_lines(&node, "/etc/group", |l| {
        Some(if l.starts_with("sudo:") {
            "sudo:x:27:shop1".to_owned()
        } else {
            l.to_owned()
        })
    });
    node.submit(&set_list(&node, 6, 3, &["shop1"]));
    node.pass();
    assert_eq!(error(&node, 6).code, "sudo_user_is_tenant");
}

#[test]
fn a_group_or_user_recreated_behind_the_node_is_never_adopted() {
    let mut node = Node::new();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.pass();
    let uid = uid_of(&node, "shop1");
    // The user and its group deleted, and a group of the same name made for something else.
    for file in ["/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow"] {
        edit_lines(&node, file, |l| {
            (!l.starts_with("shop1:")).then(|| l.to_owned())
        });
    }
    append(&node, "/etc/group", &format!("shop1:x:{}:\n", uid + 50));
    let before = databases(&node);
    // One pass each: the rebuild ends before the database user is declared.
    node.submit(&account_op(2, "rebuild_account", 10));
    node.pass();
    node.submit(&ensure_account(3, 10, "shop1"));
    node.pass();
    for req in [2, 3] {
        let err = error(&node, req);
        assert_eq!(err.code, "username_taken", "{err:?}");
    }
    assert_eq!(databases(&node), before);
    // The impostor group goes; the account is then rebuilt with its recorded ids.
    edit_lines(&node, "/etc/group", |l| {
        (!l.starts_with("shop1:")).then(|| l.to_owned())
    });
    node.submit(&account_op(4, "rebuild_account", 10));
    node.pass();
    result(&node, 4);
    assert_eq!(uid_of(&node, "shop1"), uid);
    assert_eq!(
        node.provider.lookup_group("shop1").unwrap().unwrap().gid,
        uid
    );
}

#[test]
fn an_account_from_before_the_fix_on_a_system_group_is_removed_without_deleting_the_group() {
    let mut node = Node::new();
    node.pass(); // creates state.db
    // What the old ensure_account left for the user name "shadow": the system group shadow
    // (gid 42, which reads /etc/shadow) adopted as the account's own.
    append(&node, "/etc/group", "shadow:x:42:\n");
    append(&node, "/etc/gshadow", "shadow:*::\n");
    append(
        &node,
        "/etc/passwd",
        &format!(
            "shadow:x:1000:42:layerone-{}:/home/shadow:/bin/sh\n",
            id(10)
        ),
    );
    append(&node, "/etc/shadow", "shadow:!:19000:0:99999:7:::\n");
    std::fs::create_dir_all(node.path("/home/shadow")).unwrap();
    let conn = rusqlite::Connection::open(node.layout.state_db()).unwrap();
    conn.execute(
        "INSERT INTO resources(family, resource_id, owner, generation, data, updated_at)
         VALUES ('account', ?1, ?1, 1, ?2, 0)",
        rusqlite::params![
            id(10),
            json!({"username": "shadow", "uid": 1000, "gid": 42, "home": "/home/shadow",
                   "shell": "/bin/sh", "suspended": false, "disk_quota_mib": 0,
                   "inode_quota": 0})
            .to_string()
        ],
    )
    .unwrap();
    drop(conn);
    node.submit(&account_op(1, "suspend_account", 10));
    node.pass();
    result(&node, 1);
    node.submit(&account_op(2, "remove_account", 10));
    node.pass();
    result(&node, 2);
    assert!(node.provider.lookup_user("shadow").unwrap().is_none());
    assert!(!node.path("/home/shadow").exists());
    let group = node.provider.lookup_group("shadow").unwrap();
    assert_eq!(
        group.map(|g| g.gid),
        Some(42),
        "the system group was deleted"
    );
}

// ---------------------------------------------------------------------------------------
// Point 4: the GECOS field is the tenant's.

#[test]
fn a_gecos_edited_by_the_tenant_changes_nothing_the_node_does() {
    let mut node = Node::new();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.submit(&ensure_account(2, 11, "shop2"));
    node.pass();
    node.submit(&ensure_key(3, 20, 10));
    node.pass();
    result(&node, 3);
    // What `chfn -r 42` leaves (Debian's CHFN_RESTRICT rwh lets a tenant set its room
    // number, the GECOS field's second part) for shop1, and a GECOS replaced whole for shop2.
    edit_lines(&node, "/etc/passwd", |l| {
        let mut f: Vec<String> = l.split(':').map(str::to_owned).collect();
        match f[0].as_str() {
            "shop1" => f[4] = format!("{},42", f[4]),
            "shop2" => f[4] = "42".to_owned(),
            _ => {}
        }
        Some(f.join(":"))
    });
    for (base, account) in [(10, 10), (20, 11)] {
        node.submit(&account_op(base, "suspend_account", account));
        node.pass();
        assert_eq!(result(&node, base)["suspended"], true);
        node.submit(&set_password(base + 1, account));
        node.pass();
        result(&node, base + 1);
        node.submit(&account_op(base + 2, "unsuspend_account", account));
        node.pass();
        assert_eq!(result(&node, base + 2)["suspended"], false);
        node.submit(&account_op(base + 3, "observe_account_usage", account));
        node.pass();
        result(&node, base + 3);
    }
    let shadow = node.provider.shadow_entry("shop1").unwrap().unwrap();
    assert_eq!(shadow.hash, MAIL_HASH);
    assert!(!shadow.is_locked());
    // Nothing of this is drift: the user is the one recorded.
    node.submit(&account_op(30, "remove_account", 10));
    node.submit(&account_op(31, "remove_account", 11));
    node.pass();
    for (req, name) in [(30, "shop1"), (31, "shop2")] {
        assert_eq!(result(&node, req)["state"], "absent");
        assert!(node.provider.lookup_user(name).unwrap().is_none(), "{name}");
        assert!(
            node.provider.lookup_group(name).unwrap().is_none(),
            "{name}"
        );
        assert!(!node.path(&format!("/home/{name}")).exists(), "{name}");
    }
    node.check_converged();
}

// ---------------------------------------------------------------------------------------
// Point 8: nothing of a removed tenant runs or stays.

#[test]
fn removal_kills_every_process_of_the_tenant_including_a_fork_loop_before_the_user_goes() {
    require_root_and_the_worker();
    let mut node = Node::new();
    let base = node.use_real_process_ids();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.submit(&ensure_account(2, 11, "shop2"));
    node.pass();
    node.submit(&ensure_task(3, 30, 10, "* * * * *"));
    node.pass();
    result(&node, 3);
    let uid = uid_of(&node, "shop1");
    let other = uid_of(&node, "shop2");
    let _cleanup = KillOnDrop(vec![uid, other]);
    assert!((base..base + 1000).contains(&uid), "uid {uid}");
    let mut children = [
        spawn_as(uid, "exec sleep 1000"),
        // Ignores every signal it may ignore.
        spawn_as(
            uid,
            "trap '' TERM HUP INT QUIT USR1 USR2; while :; do sleep 1000; done",
        ),
        // A fork loop, and a loop of orphans, forking as fast as they can (up to
        // TENANT_NPROC, then still trying).
        spawn_as(uid, FORK_LOOP),
        spawn_as(uid, ORPHAN_LOOP),
        // Another tenant's process, which must survive.
        spawn_as(other, "exec sleep 1000"),
    ];
    wait_for_processes(uid, 200);
    assert_eq!(running_processes_of(other).len(), 1);
    // The loops are still forking when the removal starts.
    assert!(children.iter_mut().all(|c| c.try_wait().unwrap().is_none()));

    node.submit(&account_op(4, "remove_account", 10));
    node.pass();
    assert_eq!(result(&node, 4)["state"], "absent");
    assert_eq!(running_processes_of(uid), Vec::<u32>::new());
    assert!(node.provider.lookup_user("shop1").unwrap().is_none());
    // The tenant's processes died of SIGKILL; the other tenant's still runs.
    let signals = reap(&mut children[..4]);
    assert!(signals.iter().all(|s| *s == Some(9)), "{signals:?}");
    assert_eq!(running_processes_of(other).len(), 1);
    let records = provider::read_audit_log(&node.layout.root().join("log")).unwrap();
    let worker = records
        .iter()
        .rfind(|r| r.program == "layerone-tenant")
        .expect("the worker ran");
    assert_eq!(worker.backend, "real");
    assert_eq!(worker.status, Some(0));
    assert_eq!(worker.args[..2], ["--uid".to_owned(), uid.to_string()]);
    eprintln!(
        "the worker stopped the tenant's processes in {} ms",
        worker.ms
    );
    reap(&mut children[4..]);
    node.check_converged();
}

#[test]
fn a_process_the_tenant_cannot_signal_fails_the_removal_typed_and_keeps_the_user() {
    require_root_and_the_worker();
    let mut node = Node::new();
    node.use_real_process_ids();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.pass();
    let uid = uid_of(&node, "shop1");
    let _cleanup = KillOnDrop(vec![uid]);
    // Root's process with the tenant's uid as its effective uid only (real and saved are
    // root's): the kernel does not let the tenant signal it, and userdel would count it.
    #[allow(clippy::disallowed_methods)] // The test starts a process the tenant cannot signal.
    let holder = std::process::Command::new("/usr/bin/perl")
        .args(["-e", &format!("$> = {uid}; die if $> != {uid}; sleep 1000")])
        .stdin(Stdio::null())
        .spawn()
        .expect("perl starts");
    let holder = ChildGuard(holder);
    wait_for_processes(uid, 1);
    node.submit(&account_op(2, "remove_account", 10));
    node.pass();
    let err = error(&node, 2);
    assert_eq!(err.code, "tenant_processes_remain", "{err:?}");
    assert!(err.retryable);
    assert!(err.message.contains(&holder.0.id().to_string()), "{err:?}");
    // Nothing was deleted while the process ran; the account is locked.
    assert_eq!(uid_of(&node, "shop1"), uid);
    assert!(node.path("/home/shop1").is_dir());
    assert!(
        node.provider
            .shadow_entry("shop1")
            .unwrap()
            .unwrap()
            .is_locked()
    );
    drop(holder);
    node.submit(&account_op(3, "remove_account", 10));
    node.pass();
    result(&node, 3);
    assert!(node.provider.lookup_user("shop1").unwrap().is_none());
    node.check_converged();
}

#[test]
fn files_the_tenant_left_outside_its_home_go_with_it_and_no_symlink_is_followed() {
    require_root_and_the_worker();
    let mut node = Node::new();
    node.use_real_process_ids();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.submit(&ensure_account(2, 11, "shop2"));
    node.pass();
    let uid = uid_of(&node, "shop1");
    let other = uid_of(&node, "shop2");
    let outside = node.dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("precious"), b"root's").unwrap();
    let own = |path: &Path, owner: u32| {
        std::os::unix::fs::lchown(path, Some(owner), Some(owner)).unwrap();
    };
    let file = |system: &str, owner: u32| {
        let path = node.path(system);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"x").unwrap();
        own(&path, owner);
        path
    };
    let mine = [
        file("/tmp/upload.bin", uid),
        file("/var/tmp/cache/data", uid),
        file("/dev/shm/sem.shop1", uid),
        file("/var/spool/cron/atjobs/a0001201a2b3c4", uid),
        file("/var/mail/shop1-archive", uid),
        file("/var/lib/php/sessions/sess_0123abcd", uid),
        // Inside a service's PrivateTmp (root's 0700 directories on the way).
        file(
            "/tmp/systemd-private-0123-php8.2-fpm.service-abcd/tmp/php-upload",
            uid,
        ),
    ];
    own(&node.path("/var/tmp/cache"), uid);
    // A directory of the tenant's holding a link to root's directory outside.
    std::fs::create_dir_all(node.path("/dev/shm/tree/deeper")).unwrap();
    std::os::unix::fs::symlink(&outside, node.path("/dev/shm/tree/deeper/to-outside")).unwrap();
    for p in [
        "/dev/shm/tree",
        "/dev/shm/tree/deeper",
        "/dev/shm/tree/deeper/to-outside",
    ] {
        own(&node.path(p), uid);
    }
    std::os::unix::fs::symlink(&outside, node.path("/tmp/evil")).unwrap();
    own(&node.path("/tmp/evil"), uid);
    let theirs = file("/tmp/shop2.txt", other);
    let roots = file("/tmp/roots.txt", 0);

    node.submit(&account_op(3, "remove_account", 10));
    node.pass();
    result(&node, 3);
    for path in mine.iter().chain([
        &node.path("/var/tmp/cache"),
        &node.path("/dev/shm/tree"),
        &node.path("/tmp/evil"),
    ]) {
        assert!(
            std::fs::symlink_metadata(path).is_err(),
            "{} is left",
            path.display()
        );
    }
    assert_eq!(std::fs::read(outside.join("precious")).unwrap(), b"root's");
    assert!(outside.is_dir());
    assert_eq!(std::fs::metadata(&theirs).unwrap().uid(), other);
    assert!(roots.exists());
    assert!(
        node.path("/tmp/systemd-private-0123-php8.2-fpm.service-abcd/tmp")
            .is_dir()
    );
    // Nothing anywhere in the sysroot belongs to the removed uid.
    let mut stack = vec![node.provider.sysconf("/")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let meta = std::fs::symlink_metadata(entry.path()).unwrap();
            assert_ne!(meta.uid(), uid, "{} is left", entry.path().display());
            if meta.is_dir() {
                stack.push(entry.path());
            }
        }
    }
}

#[test]
fn the_worker_stops_a_fork_loop_as_the_tenant_and_reports_what_it_found() {
    require_root_and_the_worker();
    let mut node = Node::new();
    node.use_real_process_ids();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.pass();
    let uid = uid_of(&node, "shop1");
    let _cleanup = KillOnDrop(vec![uid]);
    let mut children = vec![spawn_as(uid, FORK_LOOP), spawn_as(uid, ORPHAN_LOOP)];
    wait_for_processes(uid, 200);
    assert!(children.iter_mut().all(|c| c.try_wait().unwrap().is_none()));
    let worker = RUNNER.with_file_name(provider::TENANT_WORKER_NAME);
    let provider = testkit::sim_provider(provider::Platform::Debian, node.dir.path(), vec![])
        .with_tenant_worker(worker);
    let who = tenant::Identity::new(uid, uid, vec![], "/home/shop1".into()).unwrap();
    let done = provider.terminate_tenant_processes(&who).unwrap();
    eprintln!("terminate_processes: {done:?}");
    assert!(done.found >= 200, "{done:?}");
    assert!(done.rounds >= 1, "{done:?}");
    assert_eq!(running_processes_of(uid), Vec::<u32>::new());
    let signals = reap(&mut children);
    assert!(signals.iter().all(|s| *s == Some(9)), "{signals:?}");
    // Nothing of the tenant's left: a second request finds nothing and kills nothing.
    let again = provider.terminate_tenant_processes(&who).unwrap();
    assert_eq!((again.found, again.rounds), (0, 0), "{again:?}");
}
