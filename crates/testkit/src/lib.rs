//! `testkit`: what the tests (of every crate) and the dev node share: a simulated provider in
//! a temporary sysroot, a seeded account database, self-contained configurations that the
//! real `apache2ctl -t`, `php-fpm -t` and the mail tools accept, readers for what the
//! simulation records, a throw-away MariaDB server (`mariadb_server.rs`), the stopping of the
//! real daemons a test starts with their children (`daemons.rs`), the arming of
//! crash points from the environment (`crash_points.rs`) and a clock the test moves itself
//! (`manual_clock.rs`: [`ManualClock`]).
//!
//! Nothing here is production code: no packaged binary links this crate (a test reads
//! `cargo metadata` to hold that). It is a library rather than `cfg(test)` code because
//! other crates' tests and the dev node need the same setup, and one copy of it is easier to
//! keep true than one per crate.

pub mod crash_points;
pub mod daemons;
pub mod fleet;
mod manual_clock;
mod mariadb_server;

use std::fmt::Write as _;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};

use std::sync::Arc;

use provider::{
    AuditRecord, CONFIG_MODE, PhpVersion, Platform, PostfixTool, Program, Provider, ProviderConfig,
    ProviderError, read_audit_log,
};
use simulator::{
    SIM_DOVECOT_RELOADS_FILE, SIM_POSTFIX_RELOADS_FILE, SIM_RELOADS_FILE, SIM_SERVICE_RELOADS_FILE,
    SimExecutor,
};

pub use manual_clock::ManualClock;
pub use mariadb_server::MariadbServer;
/// The client library, for tests that check MariaDB themselves.
pub use mysql;
pub use simulator::{SimMariadbContents, sim_mariadb_contents, sim_set_mariadb_size};

/// A provider on the simulation (its executor and its machine) whose sysroot is
/// `<dir>/root` and audit directory `<dir>/audit`; the programs in `real` run for real.
pub fn sim_provider(platform: Platform, dir: &Path, real: Vec<Program>) -> Provider {
    let sim = SimExecutor::new(real);
    let machine = Arc::new(sim.machine());
    Provider::new(ProviderConfig {
        platform,
        root: dir.join("root"),
        executor: Arc::new(sim),
        machine,
        audit_dir: dir.join("audit"),
    })
}

/// Writes the account databases of a fresh system (root, nogroup and the web server's
/// group, as the web server's package leaves them) into the sysroot, so the Sim and the real
/// shadow-utils start from the same state.
pub fn seed_accounts(provider: &Provider) -> Result<(), ProviderError> {
    let etc = provider.sysconf("/etc");
    provider.ensure_dir(&etc, 0o755)?;
    let web = provider.apache_layout().group;
    let web_gid = if web == "www-data" { 33 } else { 48 };
    let group = format!("root:x:0:\nnogroup:x:65534:\n{web}:x:{web_gid}:\n");
    let gshadow = format!("root:*::\nnogroup:*::\n{web}:*::\n");
    let files: [(&str, &str, u32); 4] = [
        (
            "/etc/passwd",
            "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
            0o644,
        ),
        ("/etc/group", &group, 0o644),
        (
            "/etc/shadow",
            "root:*:19000:0:99999:7:::\nnobody:*:19000:0:99999:7:::\n",
            0o640,
        ),
        ("/etc/gshadow", &gshadow, 0o640),
    ];
    for (path, text, mode) in files {
        provider.write_config_atomic(&provider.sysconf(path), text.as_bytes(), mode)?;
    }
    Ok(())
}

/// Every audit record of `provider`, oldest first.
pub fn audit_records(provider: &Provider) -> Result<Vec<AuditRecord>, ProviderError> {
    read_audit_log(provider.audit_dir())
}

/// How many graceful reloads the Sim has recorded.
pub fn sim_apache_reloads(provider: &Provider) -> Result<usize, ProviderError> {
    let path = provider.sysconf(SIM_RELOADS_FILE);
    Ok(provider.read_config(&path)?.map_or(0, |bytes| {
        bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .count()
    }))
}

/// The real apachectl of this platform, or a panic telling what to install: tests that need
/// it must fail, not skip, on a machine without it (the CI script installs apache2).
pub fn require_apachectl(platform: Platform) -> &'static str {
    let path = Program::ApacheCtl
        .path(platform)
        .expect("every platform has apachectl");
    assert!(
        Path::new(path).exists(),
        "{path} is missing: install Apache (`apt-get install -y apache2` on Debian; the CI script does this) to run the real-Apache tests"
    );
    path
}

/// The real visudo, or a panic telling what to install: tests that need it must fail, not
/// skip, on a machine without it (the test script installs sudo).
pub fn require_visudo() -> &'static str {
    let path = Program::Visudo
        .path(Platform::Debian)
        .expect("every platform has visudo");
    assert!(
        Path::new(path).exists(),
        "{path} is missing: install sudo (`apt-get install -y sudo` on Debian; the test script does this) to run the real-visudo tests"
    );
    path
}

/// What [`write_apache_test_config`] wrote.
#[derive(Clone, Debug)]
pub struct ApacheTestConfig {
    /// The mapped path of the main configuration file.
    pub main_config: PathBuf,
    /// The mapped vhosts directory, created empty if missing.
    pub vhosts_dir: PathBuf,
    /// Where the configuration listens: loopback, on a port that was free when written.
    pub listen: SocketAddr,
    /// The mapped pid file of a server started on it (`ApacheLayout::pid_file`).
    pub pid_file: PathBuf,
}

/// Modules the node's vhosts need beyond Debian's default set, loaded when not already
/// enabled and when the module file exists.
const EXTRA_MODULES: &[(&str, &str)] = &[
    ("rewrite_module", "mod_rewrite.so"),
    ("headers_module", "mod_headers.so"),
    ("proxy_module", "mod_proxy.so"),
    ("proxy_http_module", "mod_proxy_http.so"),
    ("proxy_fcgi_module", "mod_proxy_fcgi.so"),
    ("ssl_module", "mod_ssl.so"),
    ("expires_module", "mod_expires.so"),
    ("reqtimeout_module", "mod_reqtimeout.so"),
];

/// Writes a self-contained main Apache configuration at `sysconf(main_config)` that uses the
/// machine's installed modules but keeps every writable path (pid file, runtime dir, logs)
/// inside the sysroot and includes the sysroot's vhosts directory, so the real
/// `apachectl -f <it> -t` checks the node's vhosts without touching `/etc/apache2`.
///
/// For tests and the dev node only. On CloudLinux the module directory is
/// `/etc/httpd/modules`; the file is written the same way but is only checked on such a host.
pub fn write_apache_test_config(provider: &Provider) -> Result<ApacheTestConfig, ProviderError> {
    let layout = provider.apache_layout();
    let main_config = provider.sysconf(layout.main_config);
    let vhosts_dir = provider.sysconf(layout.vhosts_dir);
    let run_dir = provider.sysconf("/run/apache2");
    let log_dir = provider.sysconf("/var/log/apache2");
    for dir in [&vhosts_dir, &run_dir, &log_dir] {
        provider.ensure_dir(dir, 0o755)?;
    }
    let pid_file = provider.sysconf(layout.pid_file);
    for file in [&main_config, &pid_file] {
        if let Some(parent) = file.parent() {
            provider.ensure_dir(parent, 0o755)?;
        }
    }
    let listen = free_loopback_port()
        .map_err(|e| ProviderError::io("find a free port", "127.0.0.1:0", e))?;

    let (server_root, module_dir, includes): (&str, &str, &[&str]) = match provider.platform() {
        Platform::Debian => (
            "/etc/apache2",
            "/usr/lib/apache2/modules",
            &[
                "/etc/apache2/mods-enabled/*.load",
                "/etc/apache2/mods-enabled/*.conf",
            ],
        ),
        Platform::CloudLinux => (
            "/etc/httpd",
            "/etc/httpd/modules",
            &["/etc/httpd/conf.modules.d/*.conf"],
        ),
    };
    let mut conf = String::new();
    // Writing to a String cannot fail; the results are ignored for that reason.
    let _ = writeln!(
        conf,
        "# layerone test configuration (testkit): not for production."
    );
    let _ = writeln!(conf, "ServerRoot \"{server_root}\"");
    let _ = writeln!(conf, "DefaultRuntimeDir \"{}\"", run_dir.display());
    // Where the provider looks for a running Apache before a reload (`apache_running`).
    let _ = writeln!(conf, "PidFile \"{}\"", pid_file.display());
    let _ = writeln!(conf, "Mutex file:{} default", run_dir.display());
    let _ = writeln!(conf, "ErrorLog \"{}\"", log_dir.join("error.log").display());
    let _ = writeln!(conf, "LogLevel warn");
    let _ = writeln!(conf, "ServerName localhost");
    let _ = writeln!(conf, "Listen {listen}");
    // As the distribution's own configuration says (Debian's `envvars`): the user Apache's
    // children run as until mpm-itk makes a request its tenant's.
    let _ = writeln!(conf, "User {}", layout.group);
    let _ = writeln!(conf, "Group {}", layout.group);
    for include in includes {
        let _ = writeln!(conf, "IncludeOptional {include}");
    }
    for (module, file) in EXTRA_MODULES {
        let so = Path::new(module_dir).join(file);
        if so.exists() {
            let _ = writeln!(
                conf,
                "<IfModule !{module}>\n    LoadModule {module} {}\n</IfModule>",
                so.display()
            );
        }
    }
    let _ = writeln!(conf, "IncludeOptional \"{}/*.conf\"", vhosts_dir.display());
    provider.write_config_atomic(&main_config, conf.as_bytes(), CONFIG_MODE)?;
    Ok(ApacheTestConfig {
        main_config,
        vhosts_dir,
        listen,
        pid_file,
    })
}

/// A loopback port that was free a moment ago. Nothing binds it during `-t`; a dev node that
/// starts Apache on it may race another process, which then fails loudly at start.
fn free_loopback_port() -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    listener.local_addr()
}

/// The reloads Sim's `systemctl` recorded, one unit name each, oldest first (the unit of
/// each of [`sim_service_actions`]).
pub fn sim_service_reloads(provider: &Provider) -> Result<Vec<String>, ProviderError> {
    Ok(sim_service_actions(provider)?
        .into_iter()
        .map(|(_, unit)| unit)
        .collect())
}

/// Each service action the Sim recorded (`reload UNIT`, `stop UNIT`), in order, as (verb,
/// unit).
pub fn sim_service_actions(provider: &Provider) -> Result<Vec<(String, String)>, ProviderError> {
    let path = provider.sysconf(SIM_SERVICE_RELOADS_FILE);
    Ok(provider.read_config(&path)?.map_or_else(Vec::new, |bytes| {
        String::from_utf8_lossy(&bytes)
            .lines()
            .filter_map(|l| {
                let mut words = l.split(' ');
                Some((words.next()?.to_owned(), words.next()?.to_owned()))
            })
            .collect()
    }))
}

/// Makes the sysroot look like a machine with PHP `version` installed, for the simulation:
/// the FPM and CLI binaries (empty files: Sim never executes them), one ini file per
/// extension in the version's ini directory (`20-intl.ini`, `10-opcache.ini`), the pool
/// directory, a main configuration written by [`write_php_fpm_test_config`], and where the
/// platform has tenant masters their template unit, as `layerone install` writes it.
pub fn seed_php(
    provider: &Provider,
    version: PhpVersion,
    extensions: &[&str],
) -> Result<(), ProviderError> {
    let layout = provider.php_fpm_layout(version);
    let fpm = Program::PhpFpm(version)
        .path(provider.platform())
        .expect("every platform has php-fpm paths");
    for binary in [fpm, layout.cli.as_str()] {
        let path = provider.sysconf(binary);
        if let Some(parent) = path.parent() {
            provider.ensure_dir(parent, 0o755)?;
        }
        provider.write_config_atomic(&path, b"", 0o755)?;
    }
    let ini_dir = provider.sysconf(&layout.ini_dir);
    provider.ensure_dir(&ini_dir, 0o755)?;
    for ext in extensions {
        let prefix = if *ext == "opcache" { "10" } else { "20" };
        provider.write_config_atomic(
            &ini_dir.join(format!("{prefix}-{ext}.ini")),
            format!("extension={ext}.so\n").as_bytes(),
            CONFIG_MODE,
        )?;
    }
    if provider.platform() == Platform::CloudLinux {
        seed_alt_php_available(provider, version, extensions)?;
    }
    if let (Some(template), Some(text)) =
        (layout.tenant_template(), layout.tenant_template_text(fpm))
    {
        let path = provider.sysconf(template);
        if let Some(parent) = path.parent() {
            provider.ensure_dir(parent, 0o755)?;
        }
        provider.write_config_atomic(&path, text.as_bytes(), CONFIG_MODE)?;
    }
    write_php_fpm_test_config(provider, version)?;
    Ok(())
}

/// CloudLinux only: marks `extensions` as installed for alt-php `version` (an ini each in
/// `/opt/alt/phpXY/etc/php.d.all`, where Sim's `selectorctl` looks), without enabling them.
pub fn seed_alt_php_available(
    provider: &Provider,
    version: PhpVersion,
    extensions: &[&str],
) -> Result<(), ProviderError> {
    let layout = provider.php_fpm_layout(version);
    let all = provider.sysconf(layout.ini_dir.replace("/php.d", "/php.d.all"));
    provider.ensure_dir(&all, 0o755)?;
    for ext in extensions {
        provider.write_config_atomic(
            &all.join(format!("{ext}.ini")),
            format!("extension={ext}.so\n").as_bytes(),
            CONFIG_MODE,
        )?;
    }
    Ok(())
}

/// The real php-fpm of `version` on this machine, or a panic telling what to install: tests
/// that need it must fail, not skip (the test script installs php8.2-fpm).
pub fn require_php_fpm(version: PhpVersion) -> &'static str {
    let path = Program::PhpFpm(version)
        .path(Platform::Debian)
        .expect("every version has a Debian path");
    assert!(
        Path::new(path).exists(),
        "{path} is missing: install it (`apt-get install -y php{v}-fpm` on Debian; the test script does this) to run the real PHP-FPM tests",
        v = version.as_str()
    );
    path
}

/// Writes a self-contained FPM main configuration at `sysconf(main_config)` for `version`:
/// pid file and error log inside the sysroot, the sysroot's pool directory included, and
/// one pool of the web server's user so FPM has a pool when the node has none. The real
/// `php-fpmX.Y -t -y <it>` then checks the node's pools without reading `/etc/php`'s.
pub fn write_php_fpm_test_config(
    provider: &Provider,
    version: PhpVersion,
) -> Result<PathBuf, ProviderError> {
    let layout = provider.php_fpm_layout(version);
    let main = provider.sysconf(&layout.main_config);
    let pool_dir = provider.sysconf(&layout.pool_dir);
    let run = provider.sysconf(&layout.socket_dir);
    let log = provider.sysconf("/var/log/php-fpm");
    for dir in [&pool_dir, &run, &log] {
        provider.ensure_dir(dir, 0o755)?;
    }
    if let Some(parent) = main.parent() {
        provider.ensure_dir(parent, 0o755)?;
    }
    let mut conf = String::new();
    let _ = writeln!(
        conf,
        "; layerone test configuration (testkit): not for production."
    );
    let _ = writeln!(conf, "[global]");
    let _ = writeln!(
        conf,
        "pid = {}",
        run.join(format!("php{}-fpm.pid", version.as_str()))
            .display()
    );
    let _ = writeln!(conf, "error_log = {}", log.join("error.log").display());
    let _ = writeln!(conf, "[base-test]");
    let _ = writeln!(conf, "user = {}", layout.web_user);
    let _ = writeln!(conf, "group = {}", layout.web_user);
    let _ = writeln!(conf, "listen = {}", run.join("base-test.sock").display());
    let _ = writeln!(conf, "pm = ondemand");
    let _ = writeln!(conf, "pm.max_children = 1");
    let _ = writeln!(conf, "include = {}/*.conf", pool_dir.display());
    provider.write_config_atomic(&main, conf.as_bytes(), CONFIG_MODE)?;
    Ok(main)
}

/// The mail programs the real-mail tests run, with what to install for each: tests that need
/// them must fail, not skip, on a machine without them (the test script installs them).
pub fn require_mail_tools() {
    for (program, package) in [
        (Program::Postfix(PostfixTool::Postfix), "postfix"),
        (Program::Postfix(PostfixTool::Postmap), "postfix"),
        (Program::Doveconf, "dovecot-core"),
        (Program::Doveadm, "dovecot-core"),
        (Program::Sievec, "dovecot-sieve"),
        (Program::OpendkimGenkey, "opendkim-tools"),
    ] {
        let path = program
            .path(Platform::Debian)
            .expect("every mail program has a Debian path");
        assert!(
            Path::new(path).exists(),
            "{path} is missing: install {package} (the test script does this) to run the real mail tests"
        );
    }
}

/// The mail programs started for real by [`write_mail_test_config`]'s users.
pub const REAL_MAIL_PROGRAMS: &[Program] = &[
    Program::Postfix(PostfixTool::Postfix),
    Program::Postfix(PostfixTool::Postmap),
    Program::Doveconf,
    Program::Sievec,
    Program::OpendkimGenkey,
];

/// What [`write_mail_test_config`] wrote (mapped paths).
#[derive(Clone, Debug)]
pub struct MailTestConfig {
    pub postfix_dir: PathBuf,
    pub dovecot_config: PathBuf,
    /// Dovecot's runtime directory (`base_dir`): its auth sockets when a test starts it.
    pub dovecot_run_dir: PathBuf,
}

/// Writes a self-contained Postfix configuration (`main.cf` with the node's settings and
/// every writable directory inside the sysroot, and the machine's `master.cf`) and a Dovecot
/// configuration (no protocols: nothing listens; runtime and state inside the sysroot), so the
/// real `postfix -c DIR check`, `doveconf -c FILE -n` and `sievec -c FILE` check the node's
/// files without touching `/etc`. Tests and the dev node only.
pub fn write_mail_test_config(provider: &Provider) -> Result<MailTestConfig, ProviderError> {
    let layout = provider.mail_layout();
    let postfix_dir = provider.sysconf(layout.postfix_dir);
    let queue = provider.sysconf("/var/spool/postfix");
    let data = provider.sysconf("/var/lib/postfix");
    let dovecot_dir = provider.sysconf("/etc/dovecot");
    let run = provider.sysconf("/run/dovecot");
    let state = provider.sysconf("/var/lib/dovecot");
    let log = provider.sysconf("/var/log/dovecot.log");
    for dir in [
        &postfix_dir,
        &provider.sysconf(layout.postfix_maps_dir),
        &queue,
        &data,
        &dovecot_dir,
        &provider.sysconf(layout.dovecot_dir),
        &provider.sieve_dir(),
        &run,
        &state,
        &provider.sysconf(layout.vmail_dir),
        &provider.sysconf(layout.dkim_dir),
        &provider.sysconf("/var/log"),
    ] {
        provider.ensure_dir(dir, 0o755)?;
    }
    let mut main_cf = String::new();
    let _ = writeln!(
        main_cf,
        "# layerone test configuration (testkit): not for production."
    );
    let _ = writeln!(main_cf, "compatibility_level = 3.6");
    let _ = writeln!(main_cf, "queue_directory = {}", queue.display());
    let _ = writeln!(main_cf, "data_directory = {}", data.display());
    let _ = writeln!(main_cf, "inet_interfaces = loopback-only");
    main_cf.push_str(&provider.postfix_main_settings());
    provider.write_config_atomic(
        &postfix_dir.join("main.cf"),
        main_cf.as_bytes(),
        CONFIG_MODE,
    )?;
    let master = std::fs::read("/etc/postfix/master.cf").unwrap_or_else(|_| {
        b"smtp      inet  n       -       y       -       -       smtpd\n".to_vec()
    });
    provider.write_config_atomic(&postfix_dir.join("master.cf"), &master, CONFIG_MODE)?;

    let mut conf = String::new();
    let _ = writeln!(
        conf,
        "# layerone test configuration (testkit): not for production."
    );
    let _ = writeln!(conf, "base_dir = {}", run.display());
    let _ = writeln!(conf, "state_dir = {}", state.display());
    let _ = writeln!(conf, "log_path = {}", log.display());
    let _ = writeln!(conf, "protocols =");
    let _ = writeln!(conf, "listen = 127.0.0.1");
    let _ = writeln!(conf, "ssl = no");
    let _ = writeln!(conf, "mail_uid = mail");
    let _ = writeln!(conf, "mail_gid = mail");
    let _ = writeln!(conf, "first_valid_uid = 8");
    conf.push_str(&provider.dovecot_settings());
    let dovecot_config = provider.sysconf(layout.dovecot_config);
    provider.write_config_atomic(&dovecot_config, conf.as_bytes(), CONFIG_MODE)?;
    Ok(MailTestConfig {
        postfix_dir,
        dovecot_config,
        dovecot_run_dir: run,
    })
}

/// How many reloads of Postfix and of Dovecot the Sim has recorded.
pub fn sim_mail_reloads(provider: &Provider) -> Result<(usize, usize), ProviderError> {
    let count = |file: &str| -> Result<usize, ProviderError> {
        Ok(provider
            .read_config(&provider.sysconf(file))?
            .map_or(0, |b| {
                b.split(|&c| c == b'\n').filter(|l| !l.is_empty()).count()
            }))
    };
    Ok((
        count(SIM_POSTFIX_RELOADS_FILE)?,
        count(SIM_DOVECOT_RELOADS_FILE)?,
    ))
}

/// Puts MySQL Governor's `dbctl` into a CloudLinux sysroot, so the node finds the governor
/// installed (under Sim, a program exists when its path exists in the sysroot).
pub fn seed_mysql_governor(provider: &Provider) -> Result<(), ProviderError> {
    let dbctl = Program::Dbctl
        .path(provider.platform())
        .expect("dbctl has a path on cloudlinux only: seed it there");
    let path = provider.sysconf(dbctl);
    if let Some(parent) = path.parent() {
        provider.ensure_dir(parent, 0o755)?;
    }
    provider.write_config_atomic(&path, b"", 0o755)
}

/// `text` with every whole decimal `number` in it (no digit just before or after) replaced by
/// `with`: how a comparison of two nodes' files renames the uids and gids each allocated.
pub fn replace_number(text: &str, number: u64, with: &str) -> String {
    let needle = number.to_string();
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (at, _) in text.match_indices(&needle) {
        let end = at + needle.len();
        let before = at > 0 && bytes[at - 1].is_ascii_digit();
        let after = end < bytes.len() && bytes[end].is_ascii_digit();
        if at >= last && !before && !after {
            out.push_str(&text[last..at]);
            out.push_str(with);
            last = end;
        }
    }
    out.push_str(&text[last..]);
    out
}
