//! apachectl: the Sim's configuration test and reload, the real `apache2ctl -t` on a
//! sysroot configuration, the two agreeing on the shapes of vhost the node writes, and a
//! reload that leaves a stopped real Apache stopped.

use provider::{CONFIG_MODE, Platform, Program, ProviderError};
use testkit::{audit_records, require_apachectl, sim_apache_reloads, write_apache_test_config};

use crate::common::Env;

const VALID: &str = "\
<VirtualHost 127.0.0.1:80>
    ServerName example.com
    ServerAlias www.example.com
    DocumentRoot /home/acme/public_html
    <Directory /home/acme/public_html>
        Options -Indexes -FollowSymLinks +SymLinksIfOwnerMatch
        # What a .htaccess may say.
        AllowOverride Options=Indexes,MultiViews,SymLinksIfOwnerMatch None
        AllowOverrideList <IfModule RewriteEngine RewriteRule Options
        Require all granted
    </Directory>
    <FilesMatch \"\\.php$\">
        SetHandler \"proxy:unix:/run/php/acme.sock|fcgi://localhost\"
    </FilesMatch>
    RewriteEngine On
    Header always set X-Content-Type-Options nosniff
    Protocols http/1.1
    <Directory \"/home/acme/public_html/staff\">
        AuthType Basic
        AuthName \"Staff only\"
        AuthBasicProvider file
        AuthUserFile \"/etc/apache2/layerone/auth/x.htpasswd\"
        Require valid-user
    </Directory>
    <Location \"/\">
        AuthMerging And
        <RequireAll>
            Require all granted
            Require not ip 192.0.2.0/24 2001:db8::/32
        </RequireAll>
    </Location>
</VirtualHost>
";

/// Vhosts the real Apache rejects; the Sim must reject them too.
const BROKEN: &[(&str, &str)] = &[
    (
        "unclosed section",
        "<VirtualHost 127.0.0.1:80>\n    ServerName a.example\n",
    ),
    (
        "mismatched close",
        "<VirtualHost 127.0.0.1:80>\n<Directory /x>\n</VirtualHost>\n</Directory>\n",
    ),
    (
        "unknown directive",
        "<VirtualHost 127.0.0.1:80>\n    ServerNmae a.example\n</VirtualHost>\n",
    ),
    ("close without open", "</Directory>\n"),
    (
        "section without argument",
        "<VirtualHost>\n</VirtualHost>\n",
    ),
    (
        "directive without argument",
        "<VirtualHost 127.0.0.1:80>\n    ServerName\n</VirtualHost>\n",
    ),
];

fn write_vhost(env: &Env, name: &str, text: &str) {
    let dir = env
        .provider
        .sysconf(env.provider.apache_layout().vhosts_dir);
    env.provider.ensure_dir(&dir, 0o755).unwrap();
    env.provider
        .write_config_atomic(&dir.join(name), text.as_bytes(), CONFIG_MODE)
        .unwrap();
}

fn remove_vhost(env: &Env, name: &str) {
    let dir = env
        .provider
        .sysconf(env.provider.apache_layout().vhosts_dir);
    env.provider.remove_config(&dir.join(name)).unwrap();
}

#[test]
fn apache_layout_names_the_platform_paths() {
    let debian = Env::sim(Platform::Debian).provider.apache_layout();
    assert_eq!(debian.main_config, "/etc/apache2/apache2.conf");
    assert_eq!(debian.vhosts_dir, "/etc/apache2/layerone/vhosts");
    assert_eq!(
        debian.include_line,
        "IncludeOptional /etc/apache2/layerone/vhosts/*.conf"
    );
    let cl = Env::sim(Platform::CloudLinux).provider.apache_layout();
    assert_eq!(cl.main_config, "/etc/httpd/conf/httpd.conf");
    assert_eq!(cl.vhosts_dir, "/etc/httpd/layerone/vhosts");
    assert_eq!(
        cl.include_line,
        "IncludeOptional /etc/httpd/layerone/vhosts/*.conf"
    );
}

#[test]
fn sim_configtest_passes_a_valid_vhost_and_names_the_broken_file_and_line() {
    let env = Env::sim(Platform::Debian);
    env.provider.apache_configtest().unwrap();
    write_vhost(&env, "a.conf", VALID);
    env.provider.apache_configtest().unwrap();
    write_vhost(
        &env,
        "b.conf",
        "<VirtualHost *:80>\n    ServerName b\n    Bogus on\n</VirtualHost>\n",
    );
    let err = env.provider.apache_configtest().unwrap_err();
    let ProviderError::Failed {
        program,
        status,
        stderr,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!((*program, *status), (Program::ApacheCtl, 1));
    let file = env
        .provider
        .sysconf("/etc/apache2/layerone/vhosts/b.conf")
        .display()
        .to_string();
    assert!(
        stderr.starts_with(&format!("AH00526: Syntax error on line 3 of {file}:")),
        "{stderr}"
    );
    assert!(stderr.contains("Invalid command 'Bogus'"), "{stderr}");
}

#[test]
fn sim_configtest_rejects_control_characters() {
    let env = Env::sim(Platform::Debian);
    write_vhost(
        &env,
        "a.conf",
        "<VirtualHost *:80>\n    ServerName a\u{1}b\n</VirtualHost>\n",
    );
    let err = env.provider.apache_configtest().unwrap_err();
    assert!(err.to_string().contains("line 2"), "{err}");
}

#[test]
fn sim_graceful_reload_is_counted_and_refused_on_a_broken_config() {
    let env = Env::sim(Platform::Debian);
    write_vhost(&env, "a.conf", VALID);
    env.provider.apache_reload().unwrap();
    env.provider.apache_reload().unwrap();
    assert_eq!(sim_apache_reloads(&env.provider).unwrap(), 2);
    write_vhost(&env, "b.conf", BROKEN[0].1);
    assert!(env.provider.apache_reload().is_err());
    assert_eq!(sim_apache_reloads(&env.provider).unwrap(), 2);

    let records = audit_records(&env.provider).unwrap();
    let main = env
        .provider
        .sysconf("/etc/apache2/apache2.conf")
        .display()
        .to_string();
    assert_eq!(records[0].path, "/usr/sbin/apache2ctl");
    assert_eq!(records[0].args, ["-f", main.as_str(), "-k", "graceful"]);
    assert_eq!(records[0].backend, "sim");
}

#[test]
fn cloudlinux_runs_apachectl_not_apache2ctl() {
    let env = Env::sim(Platform::CloudLinux);
    env.provider.apache_configtest().unwrap();
    let records = audit_records(&env.provider).unwrap();
    assert_eq!(records[0].path, "/usr/sbin/apachectl");
    let main = env
        .provider
        .sysconf("/etc/httpd/conf/httpd.conf")
        .display()
        .to_string();
    assert_eq!(records[0].args, ["-f", main.as_str(), "-t"]);
}

#[test]
fn real_apache2ctl_configtest_passes_then_fails_on_a_broken_vhost() {
    require_apachectl(Platform::Debian);
    let env = Env::with_real(Platform::Debian, vec![Program::ApacheCtl]);
    let config = write_apache_test_config(&env.provider).unwrap();
    assert!(config.listen.ip().is_loopback());

    env.provider.apache_configtest().unwrap();
    write_vhost(&env, "a.conf", VALID);
    env.provider.apache_configtest().unwrap();

    write_vhost(&env, "b.conf", BROKEN[2].1);
    let err = env.provider.apache_configtest().unwrap_err();
    let ProviderError::Failed { stderr, .. } = &err else {
        panic!("{err:?}")
    };
    let file = config.vhosts_dir.join("b.conf").display().to_string();
    assert!(stderr.contains("Syntax error on line 2"), "{stderr}");
    assert!(stderr.contains(&file), "{stderr}");
    let records = audit_records(&env.provider).unwrap();
    assert!(records.iter().all(|r| r.backend == "real"), "{records:?}");
}

#[test]
fn sim_and_real_apache_agree_on_node_vhost_shapes() {
    require_apachectl(Platform::Debian);
    let real = Env::with_real(Platform::Debian, vec![Program::ApacheCtl]);
    write_apache_test_config(&real.provider).unwrap();
    let sim = Env::sim(Platform::Debian);

    let mut cases: Vec<(&str, &str)> = vec![("valid", VALID)];
    cases.extend_from_slice(BROKEN);
    for (name, text) in cases {
        let mut verdicts = Vec::new();
        for env in [&real, &sim] {
            write_vhost(env, "case.conf", text);
            verdicts.push(env.provider.apache_configtest().map_err(|e| e.to_string()));
            remove_vhost(env, "case.conf");
        }
        assert_eq!(
            verdicts[0].is_ok(),
            verdicts[1].is_ok(),
            "{name}: real {:?} vs sim {:?}",
            verdicts[0],
            verdicts[1]
        );
        assert_eq!(
            verdicts[0].is_ok(),
            name == "valid",
            "{name}: {:?}",
            verdicts[0]
        );
    }
}

/// The processes of this machine whose command line names `needle`.
fn processes_naming(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let line = String::from_utf8_lossy(&raw).replace('\0', " ");
        if line.contains(needle) {
            found.push(format!("{}: {line}", name.to_string_lossy()));
        }
    }
    found
}

#[test]
fn a_reload_leaves_a_stopped_real_apache_stopped_and_reaches_a_running_one() {
    require_apachectl(Platform::Debian);
    assert!(
        rustix::process::geteuid().is_root(),
        "the real Apache of this test starts as root (CI runs it so): its children become www-data"
    );
    let env = Env::with_real(Platform::Debian, vec![Program::ApacheCtl]);
    let config = write_apache_test_config(&env.provider).unwrap();
    let main = config.main_config.display().to_string();
    let server = env.provider.apache_layout().server;

    // Stopped: no pid file, then a stale one naming a process that is not Apache.
    assert!(!env.provider.apache_running().unwrap());
    assert!(
        !env.provider.apache_reload().unwrap(),
        "nothing was reloaded"
    );
    std::fs::write(&config.pid_file, format!("{}\n", std::process::id())).unwrap();
    assert!(!env.provider.apache_running().unwrap());
    assert!(!env.provider.apache_reload().unwrap());
    assert!(
        std::net::TcpStream::connect(config.listen).is_err(),
        "the reload started an Apache on {}",
        config.listen
    );
    assert_eq!(
        processes_naming(&main),
        Vec::<String>::new(),
        "an Apache was started"
    );
    assert!(
        audit_records(&env.provider)
            .unwrap_or_default()
            .iter()
            .all(|r| !r.args.iter().any(|a| a == "graceful")),
        "the reload ran apachectl"
    );

    // Started as an operator would: the reload reaches it, and it keeps its master.
    std::fs::remove_file(&config.pid_file).unwrap();
    #[allow(clippy::disallowed_methods)] // The test starts the real server it checks.
    let out = std::process::Command::new(server)
        .args(["-f", &main, "-k", "start"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "apache2 -k start: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    struct Stop<'a>(&'a std::path::Path, &'a str);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            testkit::daemons::stop_apache(self.0, self.1);
        }
    }
    let stop = Stop(&config.pid_file, server);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !env.provider.apache_running().unwrap() {
        assert!(std::time::Instant::now() < deadline, "Apache did not start");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let master = std::fs::read_to_string(&config.pid_file).unwrap();
    assert!(
        env.provider.apache_reload().unwrap(),
        "the running Apache is reloaded"
    );
    let records = audit_records(&env.provider).unwrap();
    assert_eq!(
        records.last().unwrap().args,
        ["-f", main.as_str(), "-k", "graceful"]
    );
    assert!(env.provider.apache_running().unwrap());
    assert_eq!(std::fs::read_to_string(&config.pid_file).unwrap(), master);

    // Stopped again (with its children): the next reload leaves it so.
    assert!(testkit::daemons::stop_apache(&config.pid_file, server));
    drop(stop);
    assert!(!env.provider.apache_reload().unwrap());
    assert_eq!(
        processes_naming(&main),
        Vec::<String>::new(),
        "an Apache was started"
    );
}
