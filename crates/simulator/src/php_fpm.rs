//! Model of `php-fpmX.Y -t -y CONF`, `php-fpmX.Y -m`, `systemctl reload <php-fpm unit>` and
//! the `systemctl` verbs of a tenant's own master (`php8.2-fpm@<uid>.service`).
//!
//! The binary must exist in the sysroot (a version the machine does not have cannot run:
//! exit 127, as a failed exec). `-t` of the main configuration checks every `*.conf` of the
//! version's pool directory, `-t` of a tenant's own configuration that file, the way FPM's
//! ini reader does for what the node writes: a `[global]` section with a known key, `[pool]`
//! sections, `key = value` lines with a known key, `php_*value[name]` entries, a `user` that
//! exists in the sysroot's passwd, a known `pm`; errors read like FPM's (`ERROR: [FILE:LINE]
//! unknown entry 'x'`, then `ERROR: FPM initialization failed`, exit 78). `-m` lists the core
//! modules and one per `*.ini` of the version's ini directory (`20-intl.ini` loads `intl`). A
//! reload, or a tenant master's (re)start, runs the same check and records `reload UNIT` in
//! [`SIM_SERVICE_RELOADS_FILE`]; a tenant master's stop records `stop UNIT`.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use provider::{PhpFpmLayout, PhpVersion, Provider};

use super::{Outcome, unix_ms};

/// Where simulated service reloads are recorded, one line each (a system path).
pub const SIM_SERVICE_RELOADS_FILE: &str = "/var/lib/layerone-sim/service-reloads";

/// Modules every PHP build has, whatever the ini directory holds.
const CORE_MODULES: &[&str] = &[
    "Core",
    "date",
    "filter",
    "hash",
    "json",
    "libxml",
    "openssl",
    "pcre",
    "random",
    "Reflection",
    "session",
    "SPL",
    "standard",
    "zlib",
];

/// The pool keys the model accepts (a subset of FPM's, covering what the node writes).
const POOL_KEYS: &[&str] = &[
    "user",
    "group",
    "listen",
    "listen.owner",
    "listen.group",
    "listen.mode",
    "listen.backlog",
    "pm",
    "pm.max_children",
    "pm.start_servers",
    "pm.min_spare_servers",
    "pm.max_spare_servers",
    "pm.process_idle_timeout",
    "pm.max_requests",
    "chdir",
    "catch_workers_output",
    "clear_env",
    "security.limit_extensions",
    "request_terminate_timeout",
    "rlimit_core",
    "rlimit_files",
];

/// The `[global]` keys the model accepts (a subset of FPM's, covering what the node and the
/// installer write).
const GLOBAL_KEYS: &[&str] = &[
    "pid",
    "error_log",
    "syslog.ident",
    "syslog.facility",
    "log_level",
    "daemonize",
    "include",
];

/// FPM takes an all-digit `user`, `group`, `listen.owner` or `listen.group` as an id as it
/// is, without looking it up (the node names its tenants by the ids it recorded).
fn is_numeric_id(value: &str) -> bool {
    !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())
}

pub(super) fn php_fpm(provider: &Provider, version: PhpVersion, args: &[String]) -> Outcome {
    let program = provider::Program::PhpFpm(version);
    let binary = program.path(provider.platform()).unwrap_or_default();
    if !provider.sysconf(binary).exists() {
        return Outcome::fail(127, format!("{binary}: No such file or directory\n"));
    }
    let layout = provider.php_fpm_layout(version);
    match args {
        [t, y, conf] if t == "-t" && y == "-y" => {
            let checked = if Path::new(conf) == provider.sysconf(&layout.main_config) {
                check_pools(provider, &layout)
            } else if is_tenant_config(provider, &layout, Path::new(conf)) {
                check_tenant_config(provider, Path::new(conf))
            } else {
                return Outcome::fail(
                    78,
                    format!(
                        "ERROR: failed to open configuration file '{conf}': No such file or directory (2)\nERROR: failed to load configuration file '{conf}'\nERROR: FPM initialization failed\n"
                    ),
                );
            };
            match checked {
                Ok(()) => Outcome::ok().warn(format!(
                    "NOTICE: configuration file {conf} test is successful\n"
                )),
                Err(e) => Outcome::fail(78, format!("{e}ERROR: FPM initialization failed\n")),
            }
        }
        [m] if m == "-m" => {
            let mut out = String::from("[PHP Modules]\n");
            let mut names: Vec<String> = CORE_MODULES.iter().map(|s| (*s).to_owned()).collect();
            if let Ok(entries) = std::fs::read_dir(provider.sysconf(&layout.ini_dir)) {
                for entry in entries.flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if let Some(stem) = name.strip_suffix(".ini") {
                        let module = stem.split_once('-').map_or(stem, |(_, m)| m);
                        if module != "opcache" {
                            names.push(module.to_owned());
                        }
                    }
                }
            }
            names.sort_by_key(|n| n.to_ascii_lowercase());
            names.dedup();
            for name in names {
                out.push_str(&name);
                out.push('\n');
            }
            out.push_str("\n[Zend Modules]\n");
            if provider
                .sysconf(&layout.ini_dir)
                .join("10-opcache.ini")
                .exists()
            {
                out.push_str("Zend OPcache\n");
            }
            out.push('\n');
            Outcome {
                status: 0,
                stdout: out,
                stderr: String::new(),
            }
        }
        _ => Outcome::fail(
            64,
            format!(
                "Usage: {} [-n] [-e] [-h] [-i] [-m] [-v] [-t] [-p <prefix>] [-g <pid>] [-c <file>] [-d foo[=bar]] [-y <file>] [-D] [-F [-O]]\n",
                provider::FpmName::fpm_name(version)
            ),
        ),
    }
}

/// Whether `conf` is a tenant's own configuration of this version (`<uid>.conf` in its
/// directory).
fn is_tenant_config(provider: &Provider, layout: &PhpFpmLayout, conf: &Path) -> bool {
    let Some(dir) = &layout.tenant_dir else {
        return false;
    };
    conf.parent() == Some(provider.sysconf(dir).as_path())
        && conf
            .file_stem()
            .and_then(|s| s.to_str())
            .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        && conf.extension().is_some_and(|x| x == "conf")
}

/// A tenant's own configuration: it must exist, and read as FPM reads it.
fn check_tenant_config(provider: &Provider, conf: &Path) -> Result<(), String> {
    let text = std::fs::read(conf).map_err(|e| {
        format!(
            "ERROR: failed to open configuration file '{}': {e}\nERROR: failed to load configuration file '{}'\n",
            conf.display(),
            conf.display()
        )
    })?;
    check_pool_file(provider, conf, &text)
}

/// `systemctl enable|reload-or-restart|disable --now` of a tenant's own master: the start
/// checks its configuration as FPM would (a master whose configuration FPM refuses fails to
/// start: `failed`); each is recorded (`reload UNIT` for a (re)start, `stop UNIT` for a
/// stop), and its state kept for `systemctl show`.
fn tenant_unit(provider: &Provider, args: &[String], version: PhpVersion, uid: u32) -> Outcome {
    let layout = provider.php_fpm_layout(version);
    let unit = args.last().map(String::as_str).unwrap_or_default();
    let binary = provider::Program::PhpFpm(version)
        .path(provider.platform())
        .unwrap_or_default();
    if !provider.sysconf(binary).exists() {
        return Outcome::fail(
            5,
            format!("Failed to start {unit}: Unit {unit} not found.\n"),
        );
    }
    let verbs: Vec<&str> = args[..args.len() - 1].iter().map(String::as_str).collect();
    match verbs.as_slice() {
        ["enable"] => Outcome::ok(),
        ["reload-or-restart"] => {
            let config = layout
                .tenant_config(uid)
                .map(|c| provider.sysconf(c))
                .unwrap_or_default();
            if let Err(e) = check_tenant_config(provider, &config) {
                if let Err(io) = set_unit_state(provider, unit, "failed") {
                    return Outcome::fail(1, format!("layerone sim: {io}\n"));
                }
                return Outcome::fail(
                    1,
                    format!(
                        "{e}Job for {unit} failed because the control process exited with error code.\n"
                    ),
                );
            }
            if let Err(io) = set_unit_state(provider, unit, "active") {
                return Outcome::fail(1, format!("layerone sim: {io}\n"));
            }
            record(provider, "reload", unit)
        }
        ["disable", "--now"] => {
            if let Err(io) = set_unit_state(provider, unit, "inactive") {
                return Outcome::fail(1, format!("layerone sim: {io}\n"));
            }
            record(provider, "stop", unit)
        }
        _ => Outcome::fail(1, format!("Unknown command verb {}.\n", verbs.join(" "))),
    }
}

/// Keeps a tenant master's ActiveState where the Sim's `systemctl show` reads it
/// ([`super::systemctl::SIM_UNITS_DIR`]): an instance of an installed template is a loaded
/// unit, `inactive` once stopped.
fn set_unit_state(provider: &Provider, unit: &str, state: &str) -> std::io::Result<()> {
    let dir = provider.sysconf(super::systemctl::SIM_UNITS_DIR);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join(unit), format!("{state}\n"))
}

pub(super) fn systemctl(provider: &Provider, args: &[String]) -> Outcome {
    if let Some((version, uid)) = args
        .last()
        .and_then(|unit| PhpFpmLayout::tenant_of_unit(provider.platform(), unit))
    {
        return tenant_unit(provider, args, version, uid);
    }
    let [verb, unit] = args else {
        return Outcome::fail(1, "systemctl: the node only runs `systemctl reload UNIT`\n");
    };
    if verb != "reload" {
        return Outcome::fail(1, format!("Unknown command verb {verb}.\n"));
    }
    let Some(version) = PhpFpmLayout::version_of_unit(provider.platform(), unit) else {
        return Outcome::fail(
            5,
            format!("Failed to reload {unit}: Unit {unit} not found.\n"),
        );
    };
    let layout = provider.php_fpm_layout(version);
    let binary = provider::Program::PhpFpm(version)
        .path(provider.platform())
        .unwrap_or_default();
    if !provider.sysconf(binary).exists() {
        return Outcome::fail(
            5,
            format!("Failed to reload {unit}: Unit {unit} not found.\n"),
        );
    }
    if let Err(e) = check_pools(provider, &layout) {
        return Outcome::fail(
            1,
            format!(
                "{e}Job for {unit} failed because the control process exited with error code.\n"
            ),
        );
    }
    record_reload(provider, unit)
}

/// Records a unit's reload in [`SIM_SERVICE_RELOADS_FILE`] (read by
/// `testkit::sim_service_reloads`).
pub(super) fn record_reload(provider: &Provider, unit: &str) -> Outcome {
    record(provider, "reload", unit)
}

fn record(provider: &Provider, verb: &str, unit: &str) -> Outcome {
    let file = provider.sysconf(SIM_SERVICE_RELOADS_FILE);
    let recorded = (|| -> std::io::Result<()> {
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut f = OpenOptions::new().create(true).append(true).open(&file)?;
        f.write_all(format!("{verb} {unit} {}\n", unix_ms(provider)).as_bytes())
    })();
    match recorded {
        Ok(()) => Outcome::ok(),
        Err(e) => Outcome::fail(1, format!("layerone sim: record reload: {e}\n")),
    }
}

fn check_pools(provider: &Provider, layout: &PhpFpmLayout) -> Result<(), String> {
    let dir = provider.sysconf(&layout.pool_dir);
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "conf"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(format!("ERROR: unable to open {}: {e}\n", dir.display())),
    };
    files.sort();
    for file in files {
        let text = std::fs::read(&file)
            .map_err(|e| format!("ERROR: failed to open {}: {e}\n", file.display()))?;
        check_pool_file(provider, &file, &text)?;
    }
    Ok(())
}

pub(super) fn check_pool_file(
    provider: &Provider,
    file: &Path,
    bytes: &[u8],
) -> Result<(), String> {
    let at = |n: usize, msg: String| format!("ERROR: [{}:{n}] {msg}\n", file.display());
    let mut in_pool = false;
    let mut in_global = false;
    let mut user_seen = false;
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let n = i + 1;
        let line = std::str::from_utf8(raw).map_err(|_| at(n, "invalid UTF-8".into()))?;
        if line.bytes().any(|b| b < 0x20 && b != b'\t') {
            return Err(at(n, "syntax error, unexpected control character".into()));
        }
        let line = line.trim();
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if name.is_empty()
                || !name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            {
                return Err(at(n, format!("invalid pool name '{name}'")));
            }
            in_global = name == "global";
            in_pool = !in_global;
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(at(n, format!("syntax error, unexpected '{line}'")));
        };
        let (key, value) = (key.trim(), value.trim());
        if in_global {
            if !GLOBAL_KEYS.contains(&key) {
                return Err(at(n, format!("unknown entry '{key}'")));
            }
            if value.is_empty() {
                return Err(at(n, format!("empty value for '{key}'")));
            }
            continue;
        }
        if !in_pool {
            return Err(at(n, format!("unknown entry '{key}' outside of a pool")));
        }
        let php_entry = [
            "php_value[",
            "php_admin_value[",
            "php_flag[",
            "php_admin_flag[",
            "env[",
        ]
        .iter()
        .any(|p| key.starts_with(p) && key.ends_with(']') && key.len() > p.len() + 1);
        if !php_entry && !POOL_KEYS.contains(&key) {
            return Err(at(n, format!("unknown entry '{key}'")));
        }
        if value.is_empty() && key != "chdir" {
            return Err(at(n, format!("empty value for '{key}'")));
        }
        match key {
            "user" => {
                user_seen = true;
                if !is_numeric_id(value) && !matches!(provider.lookup_user(value), Ok(Some(_))) {
                    return Err(format!("ERROR: [pool] cannot get uid for user '{value}'\n"));
                }
            }
            "group" if is_numeric_id(value) => {}
            "group" => match provider.lookup_group(value) {
                Ok(Some(_)) => {}
                _ => {
                    return Err(format!(
                        "ERROR: [pool] cannot get gid for group '{value}'\n"
                    ));
                }
            },
            "pm" if !["static", "dynamic", "ondemand"].contains(&value) => {
                return Err(at(n, format!("invalid value for 'pm': '{value}'")));
            }
            "pm.max_children" | "pm.max_requests" if value.parse::<u32>().is_err() => {
                return Err(at(n, format!("invalid value for '{key}': '{value}'")));
            }
            _ => {}
        }
    }
    if in_pool && !user_seen {
        return Err(format!(
            "ERROR: [{}] 'user' directive is required\n",
            file.display()
        ));
    }
    Ok(())
}
