//! The hosting families end to end through the real runner: PHP versions the node lacks are
//! refused and visible in the observation, pools and vhost handlers follow state.db,
//! redirects spare the ACME challenge path, suspension leaves the document root alone, and
//! the installed crontab passes the real cron parser.

use crate::common;

use common::*;
use provider::{PhpVersion, Platform, Program};
use registry::JobState;
use serde_json::{Value, json};

fn run(node: &mut Node, body: &Value) -> registry::JobView {
    node.submit(body);
    node.pass();
    let rid = body["request_id"].as_str().unwrap();
    node.state().job(rid).unwrap().unwrap()
}

fn code(job: &registry::JobView) -> String {
    job.error
        .as_ref()
        .map(|e| e.code.to_string())
        .unwrap_or_default()
}

fn vhost(node: &Node, domain_id: u64) -> String {
    let dir = node.path(node.provider.apache_layout().vhosts_dir);
    std::fs::read_to_string(dir.join(format!("{}.conf", id(domain_id)))).unwrap()
}

#[test]
fn php_versions_the_node_lacks_are_refused_and_the_observation_says_so() {
    let mut node = Node::new();
    let node_id = node.node_id.clone();
    let observed = run(&mut node, &observe_php(&node_id, 1));
    assert_eq!(observed.state, JobState::Succeeded, "{observed:?}");
    let result = observed.result.unwrap();
    let versions: Vec<&str> = result["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap())
        .collect();
    assert_eq!(
        versions,
        ["8.2"],
        "the node offers exactly what is installed"
    );
    let extensions = result["versions"][0]["extensions"].as_array().unwrap();
    assert!(extensions.contains(&json!("intl")) && extensions.contains(&json!("opcache")));
    assert!(!extensions.contains(&json!("imagick")));

    run(&mut node, &ensure_account(2, 10, "shop1"));
    run(&mut node, &ensure_domain(3, 30, 10, "shop.example.com"));
    let before = vhost(&node, 30);
    let refused = run(&mut node, &set_php_version(4, 30, 10, "7.4"));
    assert_eq!(refused.state, JobState::Failed);
    assert_eq!(code(&refused), "php_version_unavailable");
    assert!(refused.error.unwrap().message.contains("offers: 8.2"));
    assert_eq!(
        vhost(&node, 30),
        before,
        "a refused version changed the vhost"
    );

    let set = run(&mut node, &set_php_version(5, 30, 10, "8.2"));
    assert_eq!(set.state, JobState::Succeeded, "{set:?}");
    let result = set.result.unwrap();
    assert_eq!(result["version"], "8.2");
    // The result names the socket as the system does; the vhost names it in the sysroot.
    let socket = node
        .path(result["pools"][0]["socket"].as_str().unwrap())
        .display()
        .to_string();
    assert!(vhost(&node, 30).contains(&format!(
        "SetHandler \"proxy:unix:{socket}|fcgi://localhost\""
    )));
    let pool_file = node.pool_file(&id(10));
    let pool = std::fs::read_to_string(&pool_file).unwrap();
    // The pool runs as the uid the node recorded for the account, on a socket only it opens.
    let uid = node.account_uid(&id(10)).unwrap();
    assert!(pool.contains(&format!("user = {uid}\n")), "{pool}");
    assert!(pool.contains(&format!("listen.owner = {uid}\n")), "{pool}");
    assert!(pool.contains(&format!("listen = {socket}\n")), "{pool}");
    // On Debian the file is the whole configuration of the tenant's own master, named by
    // that uid, and nothing of the account is in the shared master's pool directory.
    assert_eq!(
        pool_file.file_name().unwrap().to_string_lossy(),
        format!("{uid}.conf")
    );
    assert!(
        pool.contains("[global]\n") && pool.contains("daemonize = no\n"),
        "{pool}"
    );
    let shared = node.path(&node.provider.php_fpm_layout(PhpVersion::V8_2).pool_dir);
    assert!(!shared.join(format!("layerone-{}.conf", id(10))).exists());

    let missing = run(&mut node, &set_php_extensions(6, 10, &["imagick"]));
    assert_eq!(code(&missing), "php_extension_unavailable");
    let ok = run(&mut node, &set_php_extensions(7, 10, &["intl", "opcache"]));
    assert_eq!(ok.state, JobState::Succeeded, "{ok:?}");

    let mut bad = set_php_options(8, 10, 128);
    bad["resource"]["options"]["upload_max_filesize_mib"] = json!(64);
    bad["resource"]["options"]["post_max_size_mib"] = json!(8);
    let inconsistent = run(&mut node, &bad);
    assert_eq!(code(&inconsistent), "invalid_php_options");
    let options = run(&mut node, &set_php_options(9, 10, 384));
    assert_eq!(options.state, JobState::Succeeded, "{options:?}");
    let pool = std::fs::read_to_string(&pool_file).unwrap();
    assert!(
        pool.contains("php_admin_value[memory_limit] = 384M\n"),
        "{pool}"
    );
    // Only the tenant's own master was (re)started; the shared one was left alone.
    let own = format!("php8.2-fpm@{uid}.service");
    let reloads = testkit::sim_service_reloads(&node.provider).unwrap();
    assert!(
        reloads.iter().all(|u| *u == own) && !reloads.is_empty(),
        "{reloads:?}"
    );

    // observe_runtime lists the tenant's own master and its unit's state.
    let tenant_php = |node: &mut Node, req: u64| -> Value {
        let node_id = node.node_id.to_string();
        let observed = run(
            node,
            &json!({"request_id": id(req), "action": "observe_runtime", "node_id": node_id,
                    "resource": {"id": id(0xd4)}}),
        );
        assert_eq!(observed.state, JobState::Succeeded, "{observed:?}");
        observed.result.unwrap()["tenant_php"].clone()
    };
    assert_eq!(
        tenant_php(&mut node, 20),
        json!([{"account": id(10), "php_version": "8.2", "unit": own, "state": "active"}])
    );

    let removed = run(&mut node, &remove_php_version(10, 30, 10));
    assert_eq!(removed.state, JobState::Succeeded, "{removed:?}");
    assert!(!vhost(&node, 30).contains("SetHandler"));
    assert!(!pool_file.exists(), "an unused pool stayed");
    let reloads = testkit::sim_service_reloads(&node.provider).unwrap();
    assert_eq!(reloads.last(), Some(&own), "its master was not stopped");
    assert_eq!(tenant_php(&mut node, 21), json!([]));
    node.check_converged();
}

#[test]
fn redirects_spare_the_challenge_and_suspension_leaves_the_docroot_alone() {
    // The real apache2ctl -t checks every vhost the node writes here.
    let mut node = Node::with_real_apache();
    run(&mut node, &ensure_account(1, 10, "shop1"));
    run(&mut node, &ensure_domain(2, 30, 10, "shop.example.com"));
    run(&mut node, &set_php_version(3, 30, 10, "8.2"));
    let docroot = node.path("/home/shop1/web/shop.example.com/public_html");
    std::fs::write(docroot.join("index.php"), "<?php echo 1;").unwrap();
    let redirect = run(&mut node, &ensure_redirect(4, 50, 10, 30, "/"));
    assert_eq!(redirect.state, JobState::Succeeded, "{redirect:?}");
    let text = vhost(&node, 30);
    assert!(
        text.contains("RedirectMatch 301 \"^(?!/\\.well-known/acme-challenge/)/(.*)$\" \"https://new.example.com/$1\""),
        "{text}"
    );
    let conflict = run(&mut node, &ensure_redirect(5, 51, 10, 30, "/"));
    assert_eq!(code(&conflict), "redirect_conflict");
    let missing = run(&mut node, &ensure_redirect(6, 52, 10, 99, "/x"));
    assert_eq!(code(&missing), "web_domain_missing");

    let suspended = run(
        &mut node,
        &domain_suspension(7, "suspend_web_domain", 30, 10),
    );
    assert_eq!(suspended.state, JobState::Succeeded, "{suspended:?}");
    let text = vhost(&node, 30);
    assert!(text.contains("Require all denied") && !text.contains("    RedirectMatch "));
    assert!(text.contains("<Location \"/.well-known/acme-challenge/\">"));
    // A changed domain stays suspended.
    run(&mut node, &ensure_domain(8, 30, 10, "shop.example.com"));
    assert!(vhost(&node, 30).contains("Require all denied"));
    let back = run(
        &mut node,
        &domain_suspension(9, "unsuspend_web_domain", 30, 10),
    );
    assert_eq!(back.state, JobState::Succeeded, "{back:?}");
    assert!(!vhost(&node, 30).contains("Require all denied"));
    assert!(vhost(&node, 30).contains("RedirectMatch"));
    assert_eq!(
        std::fs::read_to_string(docroot.join("index.php")).unwrap(),
        "<?php echo 1;",
        "suspension touched the document root"
    );
    run(&mut node, &remove_redirect(10, 50, 10));
    assert!(!vhost(&node, 30).contains("    RedirectMatch "));
    node.check_converged();
}

#[test]
fn scheduled_tasks_become_the_tenants_crontab_and_pass_the_real_cron_parser() {
    let mut node = Node::new();
    run(&mut node, &ensure_account(1, 10, "shop1"));
    let php = run(&mut node, &ensure_task(2, 60, 10, "*/5 * * * *"));
    assert_eq!(php.state, JobState::Succeeded, "{php:?}");
    let fetch = run(&mut node, &ensure_fetch_task(3, 61, 10));
    assert_eq!(fetch.state, JobState::Succeeded, "{fetch:?}");
    let home = node.path("/home/shop1");
    let spool = node
        .path(provider::crontab_spool(Platform::Debian))
        .join("shop1");
    let crontab = std::fs::read_to_string(&spool).unwrap();
    assert!(
        crontab.contains(&format!(
            "*/5 * * * * '/usr/bin/php8.2' '-f' '{}/cron/run.php'\n",
            home.display()
        )),
        "{crontab}"
    );
    assert!(
        crontab.contains("'https://shop.example.com/cron?k=1&x=\\%20'\n"),
        "{crontab}"
    );
    assert_eq!(php.result.unwrap()["tasks_in_crontab"], 1);
    // The real crontab's dry run accepts what the node installed.
    let dir = tempfile::tempdir().unwrap();
    let real = testkit::sim_provider(Platform::Debian, dir.path(), vec![Program::Crontab]);
    real.check_crontab_file(&spool)
        .expect("crontab -n accepts the installed crontab");

    let mut unavailable = ensure_task(4, 62, 10, "@daily");
    unavailable["resource"]["task"]["php_script"]["php_version"] = json!("8.3");
    assert_eq!(
        code(&run(&mut node, &unavailable)),
        "php_version_unavailable"
    );
    run(&mut node, &remove_task(5, 60, 10));
    run(&mut node, &remove_task(6, 61, 10));
    assert!(!spool.exists(), "an empty task list leaves no crontab");
    node.check_converged();
}

/// `set_account_limits` on a Debian node: the account's slice gets the node's drop-in, the
/// limits are read back from `systemctl show` (the simulated systemd reads the drop-in), the
/// pools take their children from them, the result says which limits this host enforces (a
/// dev node's sandbox has no cgroup controller, PHP-FPM's children always), its FTP login
/// gets pure-ftpd's per-user bandwidth and sessions (outside the slice), an edited drop-in
/// is drift until the rebuild, and the purge takes the drop-in away.
#[test]
fn limits_on_debian_are_the_accounts_slice_read_back_from_systemd() {
    let mut node = Node::new();
    run(&mut node, &ensure_account(1, 10, "shop1"));
    run(&mut node, &ensure_domain(2, 30, 10, "shop.example.com"));
    assert_eq!(
        run(&mut node, &set_php_version(3, 30, 10, "8.2")).state,
        JobState::Succeeded
    );
    let ftp = run(&mut node, &ensure_ftp(40, 70, 10, "shop1.up", None));
    assert_eq!(ftp.state, JobState::Succeeded, "{ftp:?}");
    let limited = run(&mut node, &set_limits(4, 10, 150));
    assert_eq!(limited.state, JobState::Succeeded, "{limited:?}");
    let result = limited.result.unwrap();
    assert_eq!(
        result["limits"],
        json!({"cpu_percent": 150, "memory_mib": 1024, "io_kib_per_sec": 2048,
               "processes": 50, "entry_processes": 10})
    );
    assert_eq!(
        result["enforced"],
        json!({"cpu_percent": false, "memory_mib": false, "io_kib_per_sec": false,
               "processes": false, "entry_processes": true})
    );
    let uid = node.account_uid(&id(10)).unwrap();
    let drop_in = node.path(&format!(
        "/etc/systemd/system/user-{uid}.slice.d/50-layerone-limits.conf"
    ));
    let text = std::fs::read_to_string(&drop_in).unwrap();
    for line in [
        "[Slice]\n",
        "CPUQuota=150%\n",
        "MemoryHigh=921M\n",
        "MemoryMax=1024M\n",
        "TasksMax=50\n",
        "IOReadBandwidthMax=/home/shop1 2097152\n",
        "IOWriteBandwidthMax=/home/shop1 2097152\n",
    ] {
        assert!(text.contains(line), "{line} missing from {text}");
    }
    let pool = std::fs::read_to_string(node.pool_file(&id(10))).unwrap();
    assert!(pool.contains("pm.max_children = 10\n"), "{pool}");
    // pure-ftpd's fields: 2,048 KiB/s up and down (bytes per second), 10 sessions.
    let passwd = node.path(node.provider.ftp_layout().passwd);
    let ftp_line = std::fs::read_to_string(&passwd).unwrap();
    assert!(
        ftp_line.ends_with("/./:2097152:2097152:::10:::::::\n"),
        "{ftp_line}"
    );
    let shown = node
        .provider
        .pure_pw_show("shop1.up", &passwd)
        .unwrap()
        .unwrap();
    assert_eq!(
        (shown.download_kib_per_sec, shown.max_sessions),
        (Some(2048), Some(10))
    );
    node.check_converged();

    // Someone lifts the memory limit by hand: drift, until the rebuild writes it back.
    std::fs::write(
        &drop_in,
        text.replace("MemoryMax=1024M", "MemoryMax=infinity"),
    )
    .unwrap();
    let drift = ops::drift::detect(&node.ctx()).found;
    assert!(
        drift
            .iter()
            .any(|f| f.aspect.as_str() == "slice_limits_differs"),
        "{drift:?}"
    );
    run(&mut node, &account_op(5, "rebuild_account", 10));
    assert_eq!(std::fs::read_to_string(&drop_in).unwrap(), text);
    node.check_converged();

    // Unlimited (0; CPU has no such value) is written as systemd's own "no limit", not left
    // to user-.slice's defaults.
    let unlimited = run(
        &mut node,
        &json!({"request_id": id(6), "operation": "set_account_limits",
                "resource": {"id": id(10), "cpu_percent": 200, "memory_mib": 0,
                             "io_kib_per_sec": 0, "processes": 0, "entry_processes": 0}}),
    );
    assert_eq!(unlimited.state, JobState::Succeeded, "{unlimited:?}");
    let text = std::fs::read_to_string(&drop_in).unwrap();
    assert!(
        text.contains(
            "CPUQuota=200%\nMemoryHigh=infinity\nMemoryMax=infinity\nTasksMax=infinity\n"
        ),
        "{text}"
    );
    assert!(!text.contains("/home/shop1"), "{text}");
    node.check_converged();

    run(&mut node, &account_op(7, "remove_account", 10));
    assert!(!drop_in.exists(), "the purge leaves the slice's drop-in");
    node.check_converged();
}

/// An administrator's own drop-in of the slice that overrides the node's: systemd shows
/// other limits than the node wrote, so the job fails `limits_not_in_effect` (retryable),
/// records nothing, and leaves no drop-in of the node's in force behind it.
#[test]
fn limits_systemd_does_not_show_as_written_are_not_left_in_force() {
    let mut node = Node::new();
    run(&mut node, &ensure_account(1, 10, "shop1"));
    let uid = node.account_uid(&id(10)).unwrap();
    let dir = node.path(&format!("/etc/systemd/system/user-{uid}.slice.d"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("60-admin.conf"), "[Slice]\nTasksMax=7\n").unwrap();
    let job = run(&mut node, &set_limits(2, 10, 150));
    assert_eq!(job.state, JobState::Failed, "{job:?}");
    let error = job.error.unwrap();
    assert_eq!(error.code, "limits_not_in_effect", "{error:?}");
    assert!(error.retryable);
    assert!(
        !dir.join("50-layerone-limits.conf").exists(),
        "the node's drop-in stayed in force without a row"
    );
    let after = node
        .state()
        .resource("account", &id(10).parse().unwrap())
        .unwrap()
        .unwrap();
    assert!(after.data["limits"].is_null(), "{:?}", after.data);
    std::fs::remove_file(dir.join("60-admin.conf")).unwrap();
    node.check_converged();
}

#[test]
fn a_pools_children_follow_the_accounts_recorded_limits() {
    // CloudLinux's LVE (Debian's slice limits: above).
    let mut node = Node::cloudlinux();
    run(&mut node, &ensure_account(1, 10, "shop1"));
    run(&mut node, &ensure_domain(2, 30, 10, "shop.example.com"));
    let set = run(&mut node, &set_php_version(3, 30, 10, "8.2"));
    assert_eq!(set.state, JobState::Succeeded, "{set:?}");
    let pool_file = node.pool_file(&id(10));
    let pool = std::fs::read_to_string(&pool_file).unwrap();
    assert!(pool.contains("pm.max_children = 5\n"), "{pool}");
    assert!(
        pool.contains("request_terminate_timeout = 300s\n"),
        "{pool}"
    );
    // 10 entry processes, 50 processes: the pool gets the smaller.
    let limited = run(&mut node, &set_limits(4, 10, 100));
    assert_eq!(limited.state, JobState::Succeeded, "{limited:?}");
    let pool = std::fs::read_to_string(&pool_file).unwrap();
    assert!(pool.contains("pm.max_children = 10\n"), "{pool}");
    node.check_converged();
}
