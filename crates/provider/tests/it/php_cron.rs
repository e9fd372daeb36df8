//! PHP-FPM and crontab: the Sim's checks and the real `php-fpm8.2 -t -y` and `crontab -n`
//! agree on the shapes the node writes and on broken ones, and the module list and the
//! installed versions are observed from the machine, never assumed.

use provider::{PhpVersion, Platform, Program, Provider};
use testkit::{
    require_php_fpm, seed_php, sim_service_actions, sim_service_reloads, write_php_fpm_test_config,
};

use crate::common::Env;

const V: PhpVersion = PhpVersion::V8_2;

fn pool(p: &Provider, user: &str, extra: &str) -> String {
    let run = p.sysconf(p.php_fpm_layout(V).socket_dir);
    format!(
        "[layerone-test]\nuser = {user}\ngroup = nogroup\nlisten = {}/t.sock\npm = ondemand\npm.max_children = 5\nphp_admin_value[memory_limit] = 128M\nphp_admin_flag[display_errors] = off\n{extra}",
        run.display()
    )
}

/// Pools FPM refuses; the Sim must refuse them too.
const BROKEN: &[(&str, &str)] = &[
    ("an unknown entry", "foo = bar\n"),
    ("an unknown process manager", "pm = weird\n"),
    ("a line without a value", "listen.mode\n"),
];

fn agree(env: &Env) {
    let p = &env.provider;
    let file = p
        .sysconf(p.php_fpm_layout(V).pool_dir)
        .join("layerone-test.conf");
    std::fs::write(&file, pool(p, "nobody", "")).unwrap();
    p.php_fpm_configtest(V)
        .expect("FPM accepts the node's pool shape");
    for (what, extra) in BROKEN {
        std::fs::write(&file, pool(p, "nobody", extra)).unwrap();
        let err = p.php_fpm_configtest(V).expect_err(what);
        assert_eq!(err.code(), "program_failed", "{what}");
        assert!(err.to_string().contains("ERROR"), "{what}: {err}");
    }
    std::fs::write(&file, pool(p, "no-such-user-x", "")).unwrap();
    let err = p.php_fpm_configtest(V).expect_err("unknown user");
    assert!(err.to_string().contains("cannot get uid"), "{err}");
    std::fs::remove_file(&file).unwrap();
    p.php_fpm_configtest(V)
        .expect("no node pool at all is fine");

    // A tenant's own master: its whole configuration, a `[global]` section and its pool.
    let uid = 4242;
    let own = p.sysconf(p.php_fpm_layout(V).tenant_config(uid).unwrap());
    std::fs::create_dir_all(own.parent().unwrap()).unwrap();
    let global = "[global]\nerror_log = syslog\nsyslog.ident = php8.2-fpm@4242\ndaemonize = no\n";
    std::fs::write(&own, format!("{global}{}", pool(p, "nobody", ""))).unwrap();
    p.tenant_fpm_configtest(V, uid)
        .expect("FPM accepts a tenant master's configuration");
    for (what, extra) in BROKEN {
        std::fs::write(&own, format!("{global}{}", pool(p, "nobody", extra))).unwrap();
        let err = p.tenant_fpm_configtest(V, uid).expect_err(what);
        assert!(err.to_string().contains("ERROR"), "{what}: {err}");
    }
    std::fs::write(
        &own,
        format!("{global}no_such_global = 1\n{}", pool(p, "nobody", "")),
    )
    .unwrap();
    let err = p
        .tenant_fpm_configtest(V, uid)
        .expect_err("an unknown global entry");
    assert!(err.to_string().contains("ERROR"), "{err}");
    std::fs::remove_file(&own).unwrap();
    p.tenant_fpm_configtest(V, uid)
        .expect("no configuration: nothing to test, the master is stopped");
}

#[test]
fn real_php_fpm_accepts_the_node_pool_and_refuses_broken_ones() {
    require_php_fpm(V);
    let env = Env::with_real(Platform::Debian, vec![Program::PhpFpm(V)]);
    write_php_fpm_test_config(&env.provider, V).unwrap();
    agree(&env);
    assert!(env.provider.php_installed_versions().contains(&V));
    let modules = env.provider.php_fpm_modules(V).unwrap();
    assert!(modules.contains(&"core".to_owned()), "{modules:?}");
    assert!(modules.contains(&"opcache".to_owned()), "{modules:?}");
}

#[test]
fn sim_php_fpm_refuses_what_real_php_fpm_refuses() {
    let env = Env::sim(Platform::Debian);
    seed_php(&env.provider, V, &["intl", "opcache"]).unwrap();
    agree(&env);
}

#[test]
fn sim_observes_versions_and_modules_from_the_sysroot() {
    for &platform in Platform::ALL {
        let env = Env::sim(platform);
        let p = &env.provider;
        assert!(p.php_installed_versions().is_empty());
        let err = p.php_fpm_configtest(V).expect_err("not installed");
        assert_eq!(err.code(), "program_failed");
        seed_php(p, V, &["intl", "opcache"]).unwrap();
        seed_php(p, PhpVersion::V8_3, &[]).unwrap();
        assert_eq!(p.php_installed_versions(), [V, PhpVersion::V8_3]);
        assert!(p.php_cli_installed(V));
        let modules = p.php_fpm_modules(V).unwrap();
        assert!(modules.contains(&"intl".to_owned()) && modules.contains(&"opcache".to_owned()));
        assert!(
            !p.php_fpm_modules(PhpVersion::V8_3)
                .unwrap()
                .contains(&"intl".to_owned())
        );
        p.php_fpm_reload(V).unwrap();
        let layout = p.php_fpm_layout(V);
        assert_eq!(sim_service_reloads(p).unwrap(), [layout.unit.as_str()]);
        // A tenant's own master (Debian, where seed_php wrote the template as the installer
        // does): nothing to stop while systemd shows none; started with its configuration,
        // stopped without it; without the template, nothing runs.
        p.tenant_fpm_reload(V, 4242).unwrap();
        let actions = |p: &Provider| sim_service_actions(p).unwrap()[1..].to_vec();
        assert_eq!(actions(p), []);
        if let Some(config) = layout.tenant_config(4242) {
            assert!(p.tenant_masters(V));
            let own = layout.tenant_unit(4242);
            std::fs::create_dir_all(p.sysconf(layout.tenant_dir.as_ref().unwrap())).unwrap();
            std::fs::write(p.sysconf(&config), "[global]\ndaemonize = no\n").unwrap();
            p.tenant_fpm_reload(V, 4242).unwrap();
            assert_eq!(actions(p), [("reload".to_owned(), own.clone())]);
            let state = |p: &Provider| p.tenant_fpm_state(V, 4242).unwrap().unwrap().active_state;
            assert_eq!(state(p), "active");
            std::fs::remove_file(p.sysconf(&config)).unwrap();
            p.tenant_fpm_reload(V, 4242).unwrap();
            assert_eq!(actions(p)[1..], [("stop".to_owned(), own.clone())]);
            assert_eq!(state(p), "inactive");
            p.tenant_fpm_reload(V, 4242).unwrap();
            assert_eq!(actions(p).len(), 2, "stopped once");
            std::fs::remove_file(p.sysconf(layout.tenant_template().unwrap())).unwrap();
            assert!(!p.tenant_masters(V));
        } else {
            assert_eq!(
                sim_service_reloads(p).unwrap().len(),
                1,
                "CloudLinux has none"
            );
        }
    }
}

const CRONTAB: &str = "# Managed by layerone node\nMAILTO=\"\"\n*/5 1-3 * jan-jun mon,fri /usr/bin/php8.2 -f '/home/a/x.php'\n@daily /usr/bin/true\n";

const BROKEN_CRON: &[(&str, &str)] = &[
    ("minute 60", "60 * * * * /usr/bin/true\n"),
    ("hour 24", "* 24 * * * /usr/bin/true\n"),
    ("month 13", "* * * 13 * /usr/bin/true\n"),
    ("a weekday 8", "* * * * 8 /usr/bin/true\n"),
    ("an unknown macro", "@sometimes /usr/bin/true\n"),
    ("no newline at the end", "* * * * * /usr/bin/true"),
    ("a zero step", "*/0 * * * * /usr/bin/true\n"),
];

fn cron_agree(env: &Env) {
    let p = &env.provider;
    let dir = p.sysconf("/var/lib/layerone-test");
    p.ensure_dir(&dir, 0o700).unwrap();
    let file = dir.join("crontab");
    std::fs::write(&file, CRONTAB).unwrap();
    p.check_crontab_file(&file)
        .expect("cron accepts the node's crontab shape");
    for (what, text) in BROKEN_CRON {
        std::fs::write(&file, text).unwrap();
        let err = p.check_crontab_file(&file).expect_err(what);
        assert_eq!(err.code(), "program_failed", "{what}");
    }
}

#[test]
fn real_crontab_dry_run_agrees_with_the_sim() {
    assert!(
        std::path::Path::new("/usr/bin/crontab").exists(),
        "/usr/bin/crontab is missing: install cron (the test script does this)"
    );
    cron_agree(&Env::with_real(Platform::Debian, vec![Program::Crontab]));
    cron_agree(&Env::sim(Platform::Debian));
    cron_agree(&Env::sim(Platform::CloudLinux));
}

#[test]
fn sim_crontab_installs_whole_and_keeps_the_old_one_on_a_bad_file() {
    let env = Env::sim(Platform::Debian);
    let p = &env.provider;
    let spool = p
        .sysconf(provider::crontab_spool(Platform::Debian))
        .join("nobody");
    p.install_crontab("nobody", CRONTAB.as_bytes()).unwrap();
    assert_eq!(std::fs::read_to_string(&spool).unwrap(), CRONTAB);
    let err = p.install_crontab("nobody", b"61 * * * * x\n").unwrap_err();
    assert_eq!(err.code(), "program_failed");
    assert_eq!(
        std::fs::read_to_string(&spool).unwrap(),
        CRONTAB,
        "the old crontab was not kept"
    );
    assert!(
        p.install_crontab("no-such-user", CRONTAB.as_bytes())
            .is_err()
    );
    p.remove_crontab("nobody").unwrap();
    assert!(!spool.exists());
    p.remove_crontab("nobody")
        .expect("already absent is success");
}

#[test]
fn sim_selectorctl_lists_and_replaces_user_extensions_with_the_real_command_forms() {
    let env = Env::sim(Platform::CloudLinux);
    let p = &env.provider;
    seed_php(p, V, &["opcache"]).unwrap();
    testkit::seed_alt_php_available(p, V, &["imap", "intl"]).unwrap();
    let list = p.selector_extensions(V).unwrap();
    assert!(
        list.contains(&("opcache".into(), provider::SelectorState::Enabled)),
        "{list:?}"
    );
    assert!(
        list.contains(&("intl".into(), provider::SelectorState::Disabled)),
        "{list:?}"
    );
    p.selector_replace_user_extensions("nobody", V, &["intl".into(), "imap".into()])
        .unwrap();
    let recorded = env.read(&format!("{}/nobody/8.2", simulator::SIM_SELECTOR_DIR));
    assert_eq!(recorded, "intl\nimap\n");
    let err = p
        .selector_replace_user_extensions("nobody", V, &["nosuch".into()])
        .unwrap_err();
    assert!(err.to_string().contains("No such extension"), "{err}");
    assert!(p.selector_replace_user_extensions("ghost", V, &[]).is_err());
    let last = testkit::audit_records(p).unwrap().pop().unwrap();
    assert_eq!(last.path, "/usr/bin/selectorctl");
    assert_eq!(
        last.args,
        [
            "--interpreter=php",
            "--version=8.2",
            "--user=ghost",
            "--replace-user-extensions="
        ]
    );
    assert_eq!(
        provider::parse_extension_list("+ intl\n- imap\n~ json\nnoise\n"),
        [
            ("intl".to_owned(), provider::SelectorState::Enabled),
            ("imap".to_owned(), provider::SelectorState::Disabled),
            ("json".to_owned(), provider::SelectorState::BuiltIn),
        ]
    );
    // Debian has no selector: a typed refusal before anything runs.
    let debian = Env::sim(Platform::Debian);
    let err = debian.provider.selector_extensions(V).unwrap_err();
    assert_eq!(err.code(), "unsupported_on_platform");
}
