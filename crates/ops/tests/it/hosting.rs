//! The hosting families' generated files: vhosts with PHP, redirects and suspension, FPM
//! pools and crontabs, checked as snapshots and by the real programs (`apache2ctl -t`,
//! `php-fpm8.2 -t -y`, `crontab -n`, `/bin/sh` parsing a crontab command back), and a broken
//! pool reverted to the previous one with FPM's check still passing.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ops::account::AccountInfo;
use ops::php::pool::{PoolLimits, render_pool};
use ops::scheduled_task::{quote_word, render_crontab, render_line};
use ops::vhost::{RedirectRule, VhostExtras, redirect_pattern, render_vhost};
use ops::web_isolation::WebTenant;
use ops::{Ctx, Service};
use provider::{Platform, Program, Provider};
use registry::Hex32;
use registry::types::{CronSchedule, PhpOptions, PhpVersion, RedirectStatus};
use testkit::{
    require_apachectl, require_php_fpm, seed_accounts, sim_provider, write_apache_test_config,
    write_php_fpm_test_config,
};

fn hex(c: char) -> Hex32 {
    c.to_string().repeat(32).parse().unwrap()
}

fn extras_full() -> VhostExtras {
    VhostExtras {
        php_socket: Some(PathBuf::from("/run/php/layerone-aaaa-php8.2.sock")),
        redirects: vec![
            RedirectRule {
                source: "/".parse().unwrap(),
                target: "https://new.example.com/".parse().unwrap(),
                status: RedirectStatus::Found,
            },
            RedirectRule {
                source: "/old.html".parse().unwrap(),
                target: "https://new.example.com/x?a=1&b=%20".parse().unwrap(),
                status: RedirectStatus::MovedPermanently,
            },
        ],
        suspended: false,
        tls: None,
        https: Default::default(),
        acme_challenges: Some(PathBuf::from(
            "/var/lib/layerone/acme-challenge/.well-known/acme-challenge",
        )),
        mail_clients: Some(PathBuf::from("/var/lib/layerone/mail-clients/aaaa")),
        protected: vec![],
        blocked: vec![],
        error_pages: vec![
            (404, "/errors/404.html".parse().unwrap()),
            (503, "/errors/maintenance.php".parse().unwrap()),
        ],
    }
}

fn vhost(extras: &VhostExtras, docroot: &Path) -> String {
    render_vhost(
        &hex('c'),
        &hex('a'),
        &"shop.example.com".parse().unwrap(),
        &serde_json::from_value(serde_json::json!(["www.shop.example.com"])).unwrap(),
        docroot,
        &WebTenant {
            uid: 1000,
            gid: 1000,
            home: PathBuf::from("/home/shop1"),
        },
        extras,
    )
}

#[test]
fn vhost_with_php_and_redirects_snapshot() {
    let got = vhost(
        &extras_full(),
        Path::new("/home/shop1/web/shop.example.com/public_html"),
    );
    let expect = r#"# Managed by layerone node for web domain cccccccccccccccccccccccccccccccc of account aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.
# Changes made here are replaced.
<VirtualHost *:80>
    ServerName shop.example.com
    ServerAlias www.shop.example.com
    # Requests run as the account (mpm-itk): they reach what its uid reaches.
    AssignUserID #1000 #1000
    <Directory "/home/shop1">
        Options -FollowSymLinks +SymLinksIfOwnerMatch
        AllowOverride None
    </Directory>
    ProxyFCGISetEnvIf "true" !PHP_VALUE
    ProxyFCGISetEnvIf "true" !PHP_ADMIN_VALUE
    # ACME HTTP-01 challenge responses of the node: never redirected nor denied.
    Alias "/.well-known/acme-challenge/" "/var/lib/layerone/acme-challenge/.well-known/acme-challenge/"
    <Directory "/var/lib/layerone/acme-challenge/.well-known/acme-challenge">
        Options None
        AllowOverride None
        Require all granted
    </Directory>
    # Mail clients' settings of the node, never the tenant's files.
    Alias "/.well-known/autoconfig/mail/config-v1.1.xml" "/var/lib/layerone/mail-clients/aaaa/config-v1.1.xml"
    Alias "/autodiscover/autodiscover.xml" "/var/lib/layerone/mail-clients/aaaa/autodiscover.xml"
    Alias "/Autodiscover/Autodiscover.xml" "/var/lib/layerone/mail-clients/aaaa/autodiscover.xml"
    <Directory "/var/lib/layerone/mail-clients/aaaa">
        Options None
        AllowOverride None
        Require all granted
    </Directory>
    DocumentRoot "/home/shop1/web/shop.example.com/public_html"
    <Directory "/home/shop1/web/shop.example.com/public_html">
        Options -Indexes -FollowSymLinks +SymLinksIfOwnerMatch
        # Options= names the options a .htaccess may change with Options; None then
        # opens no class of directives: a .htaccess may use only those listed below.
        AllowOverride Options=Indexes,MultiViews,SymLinksIfOwnerMatch None
        AllowOverrideList <IfModule <Files <FilesMatch <Limit <LimitExcept <If <ElseIf <Else <RequireAll <RequireAny <RequireNone RewriteEngine RewriteBase RewriteCond RewriteRule AuthType AuthName AuthUserFile AuthBasicProvider Require Satisfy Order Allow Deny Redirect RedirectMatch RedirectPermanent RedirectTemp DirectoryIndex DirectorySlash FallbackResource ErrorDocument ExpiresActive ExpiresByType ExpiresDefault Header FileETag AddType AddCharset AddDefaultCharset AddEncoding AddLanguage DefaultLanguage AddOutputFilterByType Options
        Require all granted
    </Directory>
    <FilesMatch "\.php$">
        SetHandler "proxy:unix:/run/php/layerone-aaaa-php8.2.sock|fcgi://localhost"
    </FilesMatch>
    RedirectMatch 301 "^(?!/\.well-known/acme-challenge/)/old\.html(/.*)?$" "https://new.example.com/x?a=1\&b=%20$1"
    RedirectMatch 302 "^(?!/\.well-known/acme-challenge/)/(.*)$" "https://new.example.com/$1"
    ErrorDocument 404 /errors/404.html
    ErrorDocument 503 /errors/maintenance.php
</VirtualHost>
"#;
    assert_eq!(got, expect);
}

#[test]
fn suspended_vhost_snapshot_denies_all_but_the_challenge() {
    let mut extras = extras_full();
    extras.suspended = true;
    let got = vhost(&extras, Path::new("/home/shop1/public_html"));
    let tail = r#"    # Suspended: everything answers 403 but the certificate challenge.
    <Location "/">
        Require all denied
    </Location>
    <Location "/.well-known/acme-challenge/">
        Require all granted
    </Location>
</VirtualHost>
"#;
    assert!(got.ends_with(tail), "{got}");
    assert!(
        !got.contains("    RedirectMatch "),
        "a suspended domain redirects nothing"
    );
    assert!(
        !got.contains("    ErrorDocument "),
        "a suspended domain answers with the node's 403 alone"
    );
    assert!(got.contains("DocumentRoot \"/home/shop1/public_html\""));
}

#[test]
fn redirects_never_catch_the_acme_challenge_path() {
    for source in ["/", "/.well-known/", "/.well-known", "/old"] {
        let pattern = redirect_pattern(&source.parse().unwrap());
        let re = fancy_regex::Regex::new(&pattern).unwrap();
        assert!(
            !re.is_match("/.well-known/acme-challenge/tok3n-_x").unwrap(),
            "{source}: {pattern} catches the challenge"
        );
    }
    let root = fancy_regex::Regex::new(&redirect_pattern(&"/".parse().unwrap())).unwrap();
    assert!(root.is_match("/index.html").unwrap());
    assert!(root.is_match("/.well-known/security.txt").unwrap());
    let old = fancy_regex::Regex::new(&redirect_pattern(&"/old".parse().unwrap())).unwrap();
    assert!(old.is_match("/old").unwrap() && old.is_match("/old/a").unwrap());
    assert!(
        !old.is_match("/older").unwrap(),
        "a prefix is a path segment"
    );
    let caps = old.captures("/old/a/b").unwrap().unwrap();
    assert_eq!(&caps[1], "/a/b");
}

#[test]
fn real_apache_accepts_vhosts_with_php_redirects_and_suspension() {
    require_apachectl(Platform::Debian);
    let dir = tempfile::tempdir().unwrap();
    let p = sim_provider(Platform::Debian, dir.path(), vec![Program::ApacheCtl]);
    let conf = write_apache_test_config(&p).unwrap();
    let mut extras = extras_full();
    std::fs::write(conf.vhosts_dir.join("a.conf"), vhost(&extras, dir.path())).unwrap();
    p.apache_configtest()
        .expect("apache2ctl -t accepts PHP, redirects and error pages");
    extras.suspended = true;
    std::fs::write(conf.vhosts_dir.join("a.conf"), vhost(&extras, dir.path())).unwrap();
    p.apache_configtest()
        .expect("apache2ctl -t accepts a suspended vhost");
}

fn extras_access() -> VhostExtras {
    VhostExtras {
        protected: vec![ops::vhost::ProtectedDir {
            path: "staff/reports".parse().unwrap(),
            realm: "Staff only".parse().unwrap(),
            user_file: PathBuf::from("/etc/apache2/layerone/auth/d.htpasswd"),
        }],
        blocked: vec![
            "192.0.2.0/24".parse().unwrap(),
            "2001:db8::1".parse().unwrap(),
        ],
        ..VhostExtras::default()
    }
}

#[test]
fn vhost_with_protected_directory_and_ip_block_snapshot() {
    let got = vhost(&extras_access(), Path::new("/home/shop1/public_html"));
    let expect = r#"# Managed by layerone node for web domain cccccccccccccccccccccccccccccccc of account aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.
# Changes made here are replaced.
<VirtualHost *:80>
    ServerName shop.example.com
    ServerAlias www.shop.example.com
    # Requests run as the account (mpm-itk): they reach what its uid reaches.
    AssignUserID #1000 #1000
    <Directory "/home/shop1">
        Options -FollowSymLinks +SymLinksIfOwnerMatch
        AllowOverride None
    </Directory>
    ProxyFCGISetEnvIf "true" !PHP_VALUE
    ProxyFCGISetEnvIf "true" !PHP_ADMIN_VALUE
    DocumentRoot "/home/shop1/public_html"
    <Directory "/home/shop1/public_html">
        Options -Indexes -FollowSymLinks +SymLinksIfOwnerMatch
        # Options= names the options a .htaccess may change with Options; None then
        # opens no class of directives: a .htaccess may use only those listed below.
        AllowOverride Options=Indexes,MultiViews,SymLinksIfOwnerMatch None
        AllowOverrideList <IfModule <Files <FilesMatch <Limit <LimitExcept <If <ElseIf <Else <RequireAll <RequireAny <RequireNone RewriteEngine RewriteBase RewriteCond RewriteRule AuthType AuthName AuthUserFile AuthBasicProvider Require Satisfy Order Allow Deny Redirect RedirectMatch RedirectPermanent RedirectTemp DirectoryIndex DirectorySlash FallbackResource ErrorDocument ExpiresActive ExpiresByType ExpiresDefault Header FileETag AddType AddCharset AddDefaultCharset AddEncoding AddLanguage DefaultLanguage AddOutputFilterByType Options
        Require all granted
    </Directory>
    <Directory "/home/shop1/public_html/staff/reports">
        AuthType Basic
        AuthName "Staff only"
        AuthBasicProvider file
        AuthUserFile "/etc/apache2/layerone/auth/d.htpasswd"
        Require valid-user
    </Directory>
    # Blocked addresses: 403 everywhere but the certificate challenge.
    <Location "/">
        AuthMerging And
        <RequireAll>
            Require all granted
            Require not ip 192.0.2.0/24 2001:db8::1
        </RequireAll>
    </Location>
    <Location "/.well-known/acme-challenge/">
        Require all granted
    </Location>
</VirtualHost>
"#;
    assert_eq!(got, expect);
    // Suspension replaces the block (everything is denied already); the protection stays.
    let mut suspended = extras_access();
    suspended.suspended = true;
    let got = vhost(&suspended, Path::new("/home/shop1/public_html"));
    assert!(!got.contains("Require not ip") && got.contains("AuthUserFile"));
}

#[test]
fn real_apache_accepts_vhosts_with_protection_and_blocks() {
    require_apachectl(Platform::Debian);
    let dir = tempfile::tempdir().unwrap();
    let p = sim_provider(Platform::Debian, dir.path(), vec![Program::ApacheCtl]);
    let conf = write_apache_test_config(&p).unwrap();
    let mut extras = extras_access();
    extras.php_socket = extras_full().php_socket;
    extras.redirects = extras_full().redirects;
    std::fs::write(conf.vhosts_dir.join("a.conf"), vhost(&extras, dir.path())).unwrap();
    p.apache_configtest()
        .expect("apache2ctl -t accepts protected directories and IP blocks");
    extras.suspended = true;
    std::fs::write(conf.vhosts_dir.join("a.conf"), vhost(&extras, dir.path())).unwrap();
    p.apache_configtest()
        .expect("apache2ctl -t accepts them on a suspended vhost");
}

fn info(user: &str, home: &str) -> AccountInfo {
    AccountInfo {
        username: user.into(),
        uid: 1000,
        gid: 1000,
        home: home.into(),
    }
}

fn options() -> PhpOptions {
    serde_json::from_value(serde_json::json!({
        "memory_limit_mib": 256, "upload_max_filesize_mib": 32, "post_max_size_mib": 64,
        "max_execution_time_s": 60, "max_input_time_s": 30, "max_input_vars": 3000,
        "display_errors": false
    }))
    .unwrap()
}

#[test]
fn pool_snapshot() {
    let got = render_pool(
        &hex('a'),
        &info("shop1", "/home/shop1"),
        Path::new("/home/shop1"),
        Path::new("/run/php/layerone-a-php8.2.sock"),
        PhpVersion::V8_2,
        &options(),
        PoolLimits::derive(None, &options()),
        false,
    );
    let expect = "; Managed by layerone node for account aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, PHP 8.2.
; Changes made here are replaced.
[layerone-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]
user = 1000
group = 1000
listen = /run/php/layerone-a-php8.2.sock
listen.owner = 1000
listen.group = 1000
listen.mode = 0600
pm = ondemand
pm.max_children = 5
pm.process_idle_timeout = 10s
pm.max_requests = 500
request_terminate_timeout = 90s
rlimit_core = 0
rlimit_files = 4096
chdir = /
clear_env = yes
security.limit_extensions = .php
env[TMPDIR] = /home/shop1/.php/8.2/tmp
env[TMP] = /home/shop1/.php/8.2/tmp
env[TEMP] = /home/shop1/.php/8.2/tmp
php_admin_value[open_basedir] = /home/shop1/
php_admin_value[sys_temp_dir] = /home/shop1/.php/8.2/tmp
php_admin_value[upload_tmp_dir] = /home/shop1/.php/8.2/uploads
php_admin_value[session.save_path] = /home/shop1/.php/8.2/sessions
php_admin_value[memory_limit] = 256M
php_admin_value[upload_max_filesize] = 32M
php_admin_value[post_max_size] = 64M
php_admin_value[max_execution_time] = 60
php_admin_value[max_input_time] = 30
php_admin_value[max_input_vars] = 3000
php_flag[display_errors] = off
";
    assert_eq!(got, expect);
}

fn fpm_ctx(dir: &Path) -> Ctx {
    let p = sim_provider(
        Platform::Debian,
        dir,
        vec![Program::PhpFpm(provider::PhpVersion::V8_2)],
    );
    seed_accounts(&p).unwrap();
    write_php_fpm_test_config(&p, provider::PhpVersion::V8_2).unwrap();
    let state = state::StateDb::open(&dir.join("state.db")).unwrap();
    Ctx::new(Arc::new(p), state)
}

#[test]
fn real_php_fpm_accepts_the_pool_and_a_broken_one_is_reverted() {
    require_php_fpm(provider::PhpVersion::V8_2);
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = fpm_ctx(dir.path());
    let layout = ctx.provider.php_fpm_layout(provider::PhpVersion::V8_2);
    let socket = ctx.provider.sysconf(&layout.socket_dir).join("t.sock");
    // The pool names its user and group by the ids the node recorded, which FPM takes as
    // they are.
    let render = |own_master| {
        render_pool(
            &hex('a'),
            &info("www-data", "/nonexistent"),
            Path::new("/nonexistent"),
            &socket,
            PhpVersion::V8_2,
            &options(),
            PoolLimits::derive(None, &options()),
            own_master,
        )
    };
    let good = render(false);
    let path = ctx
        .provider
        .sysconf(&layout.pool_dir)
        .join("layerone-a.conf");
    let service = Service::PhpFpm(provider::PhpVersion::V8_2);
    ctx.write_service_config(service, &path, good.as_bytes())
        .expect("the real php-fpm8.2 -t accepts the node's pool");
    let broken = good.replace("pm = ondemand", "pm = ondemand\nno_such_entry = 1");
    let err = ctx
        .write_service_config(service, &path, broken.as_bytes())
        .expect_err("a broken pool fails the test");
    assert_eq!(err.code, "config_test_failed");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        good,
        "the previous pool was not put back"
    );
    ctx.provider
        .php_fpm_configtest(provider::PhpVersion::V8_2)
        .expect("FPM's check passes again");
    // The same pool as the whole configuration of the tenant's own master (Debian): the real
    // FPM takes its `[global]` section, and refuses a broken one, which is put back.
    // The uid `info` gives the account.
    let uid = 1000;
    let own = render(true);
    assert!(own.contains("[global]\nerror_log = syslog\n"), "{own}");
    let path = ctx.provider.sysconf(layout.tenant_config(uid).unwrap());
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let service = Service::TenantFpm(provider::PhpVersion::V8_2, uid);
    ctx.write_service_config(service, &path, own.as_bytes())
        .expect("the real php-fpm8.2 -t accepts the tenant master's configuration");
    let broken = own.replace("daemonize = no", "daemonize = no\nno_such_global = 1");
    let err = ctx
        .write_service_config(service, &path, broken.as_bytes())
        .expect_err("a broken global section fails the test");
    assert_eq!(err.code, "config_test_failed");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), own);
    // Options cannot smuggle a directive: they are numbers and booleans by type.
    let hostile = serde_json::from_value::<PhpOptions>(
        serde_json::json!({"memory_limit_mib": "128M\nuser = root"}),
    );
    assert!(hostile.is_err());
}

fn schedule(s: &str) -> CronSchedule {
    s.parse().unwrap()
}

#[test]
fn crontab_snapshot() {
    let lines = vec![
        (
            hex('1'),
            render_line(
                &schedule("*/15 * * * *"),
                &[
                    "/usr/bin/php8.2".into(),
                    "-f".into(),
                    "/home/shop1/cron.php".into(),
                ],
            ),
        ),
        (
            hex('2'),
            render_line(
                &schedule("@daily"),
                &[
                    "/usr/bin/curl".into(),
                    "--max-time".into(),
                    "30".into(),
                    "https://x.example.com/?a=%20&b".into(),
                ],
            ),
        ),
    ];
    let got = render_crontab(&hex('a'), &lines);
    let expect = r#"# Managed by layerone node for account aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa. Changes made here are replaced.
MAILTO=""
SHELL=/bin/sh
PATH=/usr/bin:/bin
# task 11111111111111111111111111111111
*/15 * * * * '/usr/bin/php8.2' '-f' '/home/shop1/cron.php'
# task 22222222222222222222222222222222
@daily '/usr/bin/curl' '--max-time' '30' 'https://x.example.com/?a=\%20&b'
"#;
    assert_eq!(got, expect);
}

/// What cron does to the command field before `/bin/sh -c` sees it: `\%` becomes `%`, and an
/// unescaped `%` ends the command (the rest is stdin), which must never happen here.
fn cron_command(line: &str) -> String {
    let fields = if line.starts_with('@') { 1 } else { 5 };
    let command = line.splitn(fields + 1, ' ').nth(fields).unwrap();
    let mut out = String::new();
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some('%')) => {
                out.push('%');
                chars.next();
            }
            ('%', _) => panic!("an unescaped % in {line}"),
            _ => out.push(c),
        }
    }
    out
}

/// The words `/bin/sh` makes of a command, printed by the real shell.
fn sh_words(command: &str) -> Vec<String> {
    // set -- replaces the positional parameters with the command's words, unexpanded by
    // anything but the shell's own parsing; printf prints each NUL-terminated.
    #[allow(clippy::disallowed_methods)] // The test runs the real shell to parse a line back.
    let out = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("set -- {command}; printf '%s\\0' \"$@\""))
        .env_clear()
        .output()
        .unwrap();
    assert!(out.status.success());
    out.stdout
        .split(|&b| b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8(w.to_vec()).unwrap())
        .collect()
}

#[test]
fn crontab_lines_parse_back_to_the_same_words_through_a_real_shell() {
    let cases: Vec<Vec<String>> = vec![
        vec![
            "/usr/bin/php8.2".into(),
            "-f".into(),
            "/home/u/a b/x.php".into(),
        ],
        vec![
            "/usr/bin/curl".into(),
            "https://x.example.com/a?b=%20&c=$(id)`id`;rm -rf ~".into(),
        ],
        vec![
            "/bin/echo".into(),
            "it's".into(),
            "\"q\"".into(),
            "\\n".into(),
            "*".into(),
        ],
    ];
    for words in cases {
        let line = render_line(&schedule("0 * * * *"), &words);
        assert_eq!(line.lines().count(), 1);
        assert_eq!(sh_words(&cron_command(&line)), words, "{line}");
    }
    assert_eq!(quote_word("%"), "'\\%'");
}

#[test]
fn real_crontab_accepts_the_node_crontab() {
    assert!(
        Path::new("/usr/bin/crontab").exists(),
        "/usr/bin/crontab is missing: install cron (the test script does this)"
    );
    let dir = tempfile::tempdir().unwrap();
    let p: Provider = sim_provider(Platform::Debian, dir.path(), vec![Program::Crontab]);
    let lines: Vec<(Hex32, String)> = [
        "*/5 * * * *",
        "0 3 1-15/2 jan-mar mon,wed,fri",
        "59 23 31 12 7",
        "@weekly",
    ]
    .iter()
    .enumerate()
    .map(|(i, s)| {
        (
            format!("{i:032x}").parse().unwrap(),
            render_line(
                &schedule(s),
                &[
                    "/usr/bin/curl".into(),
                    "https://x.example.com/?a=%20&b=1".into(),
                ],
            ),
        )
    })
    .collect();
    let file = dir.path().join("crontab");
    std::fs::write(&file, render_crontab(&hex('a'), &lines)).unwrap();
    p.check_crontab_file(&file)
        .expect("crontab -n accepts the node's crontab");
}
