//! The services the node drives, configured from one table of settings.
//!
//! Each setting the node needs is one row ([`Setting`]: service, file, key, value; a value
//! may depend on the configuration: the node's name, the TLS paths, the maps' paths), and
//! each service's file is rendered whole from its rows plus the fixed lines the distribution
//! requires ([`ServiceFile`]). `layerone install --check` parses the file on disk in the
//! service's own syntax and names each setting that differs from its row
//! ([`Change::Setting`]); `layerone install` then adopts the edited file into the override
//! area and writes the derived one (the engine's rule for every derived file).
//!
//! One module per service: `apache.rs` (the modules, as `a2enmod` links them), `php_fpm.rs`
//! (each version's main configuration), `postfix.rs` (`main.cf`, `master.cf`), `dovecot.rs`,
//! `opendkim.rs`, `pure_ftpd.rs` (Debian's one-file-per-setting directory) and `mariadb.rs`
//! (root over the unix socket, checked). After the files, the services whose files changed
//! are restarted if they run, and their units enabled ([`converge`]).

pub mod apache;
pub mod dovecot;
pub mod mariadb;
pub mod opendkim;
pub mod php_fpm;
pub mod postfix;
pub mod pure_ftpd;

use std::collections::BTreeMap;

use store::LayoutOwner;

use crate::config::NodeConfig;
use crate::converge::{Change, Engine};
use crate::{InstallError, paths};

/// One setting the node needs: `key` set to `value` in `file` of `service`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    pub service: &'static str,
    /// The file's short name in messages (`main.cf`).
    pub file: &'static str,
    /// The key in the file's own syntax; for Dovecot's nested sections, the section
    /// headers and the key joined by ` / ` (`service auth / unix_listener ... / mode`).
    pub key: String,
    pub value: String,
}

/// How a service's file spells its settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// `key = value`, continued on lines that start with white space (Postfix `main.cf`).
    PostfixMain,
    /// One service a line (`name type private unpriv chroot wakeup maxproc command`), its
    /// `-o` options on the lines below (Postfix `master.cf`); the key is `name/type`.
    PostfixMaster,
    /// `key = value` in nested `section {` ... `}` blocks (Dovecot).
    Dovecot,
    /// `Key value` (OpenDKIM).
    Opendkim,
    /// `key = value` under `[global]` (PHP-FPM's main configuration).
    Ini,
    /// The whole file is the value of its one setting (pure-ftpd's `conf/<Setting>`).
    OneValue,
}

/// One file of a service, rendered whole from its rows.
#[derive(Clone, Debug)]
pub struct ServiceFile {
    pub service: &'static str,
    /// The file's short name in messages.
    pub label: &'static str,
    /// The system path (mapped by the engine).
    pub path: String,
    pub syntax: Syntax,
    pub mode: u32,
    /// Fixed lines the distribution requires, written first, not settings of the table.
    pub fixed: String,
    pub rows: Vec<Setting>,
    /// Files the service reads at a path fixed when it was built, which no setting names
    /// (pure-ftpd's certificate file).
    pub reads: Vec<String>,
}

/// The first line of every rendered file, in the file's comment syntax.
fn header(syntax: Syntax) -> &'static str {
    match syntax {
        Syntax::Ini => {
            "; Derived by `layerone install`; edits here are moved to /etc/layerone/override/ by\n; the next install.\n"
        }
        Syntax::OneValue => "",
        _ => {
            "# Derived by `layerone install`; edits here are moved to /etc/layerone/override/ by\n# the next install.\n"
        }
    }
}

impl ServiceFile {
    pub fn new(
        service: &'static str,
        label: &'static str,
        path: impl Into<String>,
        syntax: Syntax,
    ) -> ServiceFile {
        ServiceFile {
            service,
            label,
            path: path.into(),
            syntax,
            mode: 0o644,
            fixed: String::new(),
            rows: Vec::new(),
            reads: Vec::new(),
        }
    }

    /// Adds the row `key = value`.
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut ServiceFile {
        self.rows.push(Setting {
            service: self.service,
            file: self.label,
            key: key.into(),
            value: value.into(),
        });
        self
    }

    /// The file's text.
    pub fn render(&self) -> String {
        let mut out = String::from(header(self.syntax));
        out.push_str(&self.fixed);
        match self.syntax {
            Syntax::PostfixMain => {
                for r in &self.rows {
                    out.push_str(&format!("{} = {}\n", r.key, r.value));
                }
            }
            Syntax::PostfixMaster => {
                for r in &self.rows {
                    let (name, kind) = r.key.split_once('/').unwrap_or((&r.key, "unix"));
                    let mut parts = r.value.split(" -o ");
                    let fields = parts.next().unwrap_or_default();
                    out.push_str(&format!("{name:<10} {kind:<5} {fields}\n"));
                    for option in parts {
                        out.push_str(&format!("  -o {option}\n"));
                    }
                }
            }
            Syntax::Opendkim => {
                for r in &self.rows {
                    out.push_str(&format!("{} {}\n", r.key, r.value));
                }
            }
            Syntax::Ini => {
                out.push_str("[global]\n");
                for r in &self.rows {
                    out.push_str(&format!("{} = {}\n", r.key, r.value));
                }
            }
            Syntax::OneValue => {
                for r in &self.rows {
                    out.push_str(&format!("{}\n", r.value));
                }
            }
            Syntax::Dovecot => render_dovecot(&self.rows, &mut out),
        }
        out
    }

    /// The settings of `text` in this file's syntax, key to value (the last one wins).
    pub fn parse(&self, text: &str) -> BTreeMap<String, String> {
        match self.syntax {
            Syntax::PostfixMain => parse_postfix_main(text),
            Syntax::PostfixMaster => parse_postfix_master(text),
            Syntax::Dovecot => parse_dovecot(text),
            Syntax::Opendkim => text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .filter_map(|l| {
                    let (k, v) = l.split_once(char::is_whitespace)?;
                    Some((k.to_owned(), v.trim().to_owned()))
                })
                .collect(),
            Syntax::Ini => parse_ini_global(text),
            Syntax::OneValue => self
                .rows
                .first()
                .map(|r| {
                    let value = text
                        .lines()
                        .map(str::trim)
                        .find(|l| !l.is_empty() && !l.starts_with('#'))
                        .unwrap_or_default();
                    (r.key.clone(), value.to_owned())
                })
                .into_iter()
                .collect(),
        }
    }

    /// Each setting of `text` that differs from the table: a row with another value or
    /// missing, and a key the table does not set.
    pub fn drift(&self, text: &str) -> Vec<Change> {
        let found = self.parse(text);
        let mut out = Vec::new();
        for r in &self.rows {
            let have = found.get(&r.key);
            if have.map(|v| normalize(v)) != Some(normalize(&r.value)) {
                out.push(self.change(&r.key, have.cloned(), Some(r.value.clone())));
            }
        }
        for (key, value) in &found {
            if !self.rows.iter().any(|r| &r.key == key) && !self.fixed_sets(key) {
                out.push(self.change(key, Some(value.clone()), None));
            }
        }
        out
    }

    fn fixed_sets(&self, key: &str) -> bool {
        !self.fixed.is_empty() && self.parse_fixed().contains_key(key)
    }

    fn parse_fixed(&self) -> BTreeMap<String, String> {
        let only_fixed = ServiceFile {
            rows: Vec::new(),
            ..self.clone()
        };
        match self.syntax {
            Syntax::OneValue => BTreeMap::new(),
            _ => only_fixed.parse(&self.fixed),
        }
    }

    fn change(&self, key: &str, found: Option<String>, want: Option<String>) -> Change {
        Change::Setting {
            service: self.service.to_owned(),
            file: self.label.to_owned(),
            key: key.to_owned(),
            found,
            want,
        }
    }
}

/// White space runs count as one space when comparing values.
fn normalize(v: &str) -> String {
    v.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn parse_postfix_main(text: &str) -> BTreeMap<String, String> {
    parse_postfix(text, |line| {
        let (k, v) = line.split_once('=')?;
        Some((k.trim().to_owned(), v.trim().to_owned()))
    })
}

/// `master.cf`: a service's key is `name/type`, its value the other fields.
fn parse_postfix_master(text: &str) -> BTreeMap<String, String> {
    parse_postfix(text, |line| {
        let mut fields = line.split_whitespace();
        let (name, kind) = (fields.next()?, fields.next()?);
        Some((
            format!("{name}/{kind}"),
            fields.collect::<Vec<_>>().join(" "),
        ))
    })
}

/// Postfix's files: comments and blank lines skipped, a line starting with white space
/// continues the one before, every other line is an entry that `entry` splits.
fn parse_postfix(
    text: &str,
    entry: impl Fn(&str) -> Option<(String, String)>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if line.starts_with(char::is_whitespace) {
            if let Some((_, v)) = current.as_mut() {
                v.push(' ');
                v.push_str(line.trim());
            }
            continue;
        }
        if let Some((k, v)) = current.take() {
            out.insert(k, v);
        }
        current = entry(line);
    }
    if let Some((k, v)) = current {
        out.insert(k, v);
    }
    out
}

fn parse_ini_global(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut global = true;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            global = line == "[global]";
            continue;
        }
        if global && let Some((k, v)) = line.split_once('=') {
            out.insert(k.trim().to_owned(), v.trim().to_owned());
        }
    }
    out
}

/// The separator of a Dovecot key's section path.
pub const SECTION: &str = " / ";

fn parse_dovecot(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack: Vec<String> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line == "}" {
            stack.pop();
        } else if let Some(head) = line.strip_suffix('{') {
            stack.push(head.trim().to_owned());
        } else if let Some((k, v)) = line.split_once('=') {
            let mut path = stack.clone();
            path.push(k.trim().to_owned());
            out.insert(path.join(SECTION), v.trim().to_owned());
        } else {
            // `!include` and other directives: kept as a key of their own, so that one the
            // node does not write is named.
            let mut path = stack.clone();
            path.push(line.to_owned());
            out.insert(path.join(SECTION), String::new());
        }
    }
    out
}

/// Renders Dovecot rows as nested sections, in the order their keys first appear.
fn render_dovecot(rows: &[Setting], out: &mut String) {
    let mut open: Vec<&str> = Vec::new();
    for r in rows {
        let parts: Vec<&str> = r.key.split(SECTION).collect();
        let (key, sections) = parts.split_last().expect("split yields one part at least");
        let common = open
            .iter()
            .zip(sections.iter())
            .take_while(|(a, b)| a == b)
            .count();
        while open.len() > common {
            open.pop();
            out.push_str(&format!("{}}}\n", "  ".repeat(open.len())));
        }
        for s in &sections[common..] {
            out.push_str(&format!("{}{s} {{\n", "  ".repeat(open.len())));
            open.push(s);
        }
        if key.starts_with('!') {
            // A directive (`!include_try`), kept as a key of its own with no value.
            out.push_str(&format!("{}{key}\n", "  ".repeat(open.len())));
        } else {
            out.push_str(&format!("{}{key} = {}\n", "  ".repeat(open.len()), r.value));
        }
    }
    while !open.is_empty() {
        open.pop();
        out.push_str(&format!("{}}}\n", "  ".repeat(open.len())));
    }
}

/// Writes one service file whole: when the file on disk differs, each drifted setting is
/// recorded first, then the engine adopts the file and writes the derived one. Returns
/// whether the file was (or would be) written.
pub fn converge_file(e: &mut Engine, file: &ServiceFile) -> Result<bool, InstallError> {
    let text = file.render();
    if let Some(current) = e.read_regular(&file.path)?
        && current != text.as_bytes()
    {
        for change in file.drift(&String::from_utf8_lossy(&current)) {
            e.record(change);
        }
    }
    e.derived(&file.path, text.as_bytes(), file.mode, LayoutOwner::Root)
}

/// Every file of every service the node configures (the ones installed in the root), with
/// its rows: what [`tls_readers`] looks through.
pub fn files(e: &Engine, config: &NodeConfig) -> Vec<ServiceFile> {
    let mut out = Vec::new();
    if present(e, e.provider.mail_layout().postfix_dir) {
        out.push(postfix::main_cf(e, config));
        out.push(postfix::master_cf(e));
    }
    let dovecot = e.provider.mail_layout().dovecot_config;
    if present(e, dovecot.rsplit_once('/').map_or(dovecot, |(d, _)| d)) {
        // The uids do not matter here: only the TLS and listener rows are read.
        out.push(dovecot::dovecot_conf(e, config, (0, 0)));
    }
    if e.provider.platform() == provider::Platform::Debian && present(e, pure_ftpd::CONF_DIR) {
        out.extend(pure_ftpd::settings(e));
    }
    out
}

/// A service that reads the node's certificate, and the ports where it presents it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsReader {
    pub service: &'static str,
    /// The unit reloaded when the certificate changes (the service's name).
    pub unit: String,
    pub endpoints: Vec<(u16, acme::probe::Hello)>,
}

/// The services whose settings name one of the node's TLS files (the pair, or a copy
/// derived from it), each with the TLS listeners its rows declare. Derived from the table,
/// so a service or listener added to it is reloaded and checked without being listed here.
pub fn tls_readers(e: &Engine, config: &NodeConfig) -> Vec<TlsReader> {
    let tls_files: Vec<String> = [paths::TLS_CERT, paths::TLS_KEY, pure_ftpd::PEM]
        .iter()
        .map(|p| e.map(p).display().to_string())
        .chain([pure_ftpd::PEM.to_owned()])
        .collect();
    let names_tls = |value: &str| tls_files.iter().any(|f| value.contains(f.as_str()));
    let files = files(e, config);
    let mut out: Vec<TlsReader> = Vec::new();
    for f in &files {
        let reads =
            f.rows.iter().any(|r| names_tls(&r.value)) || f.reads.iter().any(|p| names_tls(p));
        if reads && !out.iter().any(|r| r.service == f.service) {
            out.push(TlsReader {
                service: f.service,
                unit: format!("{}.service", f.service),
                endpoints: Vec::new(),
            });
        }
    }
    for reader in &mut out {
        for f in files.iter().filter(|f| f.service == reader.service) {
            for endpoint in tls_endpoints(f) {
                if !reader.endpoints.contains(&endpoint) {
                    reader.endpoints.push(endpoint);
                }
            }
        }
        reader.endpoints.sort();
    }
    out
}

/// The TLS listeners a file's rows declare, in its own syntax: a Dovecot `inet_listener`
/// with `ssl = yes` (TLS at once), a Postfix `master.cf` `smtpd` on `inet` (STARTTLS, or TLS
/// at once in wrapper mode), pure-ftpd's `TLS` turned on (`AUTH TLS` on the FTP port).
fn tls_endpoints(f: &ServiceFile) -> Vec<(u16, acme::probe::Hello)> {
    use acme::probe::Hello;
    let mut out = Vec::new();
    match f.syntax {
        Syntax::Dovecot => {
            for r in &f.rows {
                let Some(listener) = r.key.strip_suffix(&format!("{SECTION}ssl")) else {
                    continue;
                };
                if !listener.contains("inet_listener") || r.value != "yes" {
                    continue;
                }
                let port_key = format!("{listener}{SECTION}port");
                if let Some(port) = f
                    .rows
                    .iter()
                    .find(|p| p.key == port_key)
                    .and_then(|p| p.value.parse().ok())
                {
                    out.push((port, Hello::Tls));
                }
            }
        }
        Syntax::PostfixMaster => {
            for r in &f.rows {
                let Some(name) = r.key.strip_suffix("/inet") else {
                    continue;
                };
                if !r.value.split_whitespace().any(|w| w == "smtpd") {
                    continue;
                }
                // The service column is a port or a name of /etc/services.
                let Some(port) = name.parse().ok().or(match name {
                    "smtp" => Some(25),
                    "submission" => Some(587),
                    "submissions" | "smtps" => Some(465),
                    _ => None,
                }) else {
                    continue;
                };
                let wrapper = r.value.contains("smtpd_tls_wrappermode=yes");
                out.push((
                    port,
                    if wrapper {
                        Hello::Tls
                    } else {
                        Hello::SmtpStartTls
                    },
                ));
            }
        }
        Syntax::OneValue => {
            if f.rows.iter().any(|r| r.key == "TLS" && r.value != "0") {
                out.push((21, Hello::FtpAuthTls));
            }
        }
        Syntax::PostfixMain | Syntax::Opendkim | Syntax::Ini => {}
    }
    out
}

/// Whether a path exists in the install root (without following a symlink).
pub(crate) fn present(e: &Engine, system_path: &str) -> bool {
    std::fs::symlink_metadata(e.map(system_path)).is_ok()
}

/// The units the node's services run as, enabled by the installer.
pub const SERVICE_UNITS: &[&str] = &[
    "apache2.service",
    "postfix.service",
    "dovecot.service",
    "opendkim.service",
    "pure-ftpd.service",
    "mariadb.service",
    "cron.service",
];

/// Every service: the mail and FTP files, then the units. The units whose files changed are
/// restarted, or started if they were not running (nothing runs on a sysroot).
pub fn converge(
    e: &mut Engine,
    config: &NodeConfig,
    notes: &mut Vec<String>,
) -> Result<(), InstallError> {
    let mut restart: Vec<&'static str> = Vec::new();
    if postfix::converge(e, config, notes)? {
        restart.push("postfix.service");
    }
    if dovecot::converge(e, config, notes)? {
        restart.push("dovecot.service");
    }
    if opendkim::converge(e, notes)? {
        restart.push("opendkim.service");
    }
    if pure_ftpd::converge(e, notes)? {
        restart.push("pure-ftpd.service");
    }
    mariadb::check(e, notes);
    enable_and_restart(e, &restart, notes)
}

fn enable_and_restart(
    e: &mut Engine,
    restart: &[&str],
    notes: &mut Vec<String>,
) -> Result<(), InstallError> {
    let mut units: Vec<String> = SERVICE_UNITS.iter().map(|u| (*u).to_owned()).collect();
    for version in e.provider.php_installed_versions() {
        units.push(e.provider.php_fpm_layout(version).unit);
    }
    let all: Vec<&str> = units.iter().map(String::as_str).collect();
    // A unit systemd has no file for (its package is not installed) is left alone; a masked
    // one stays masked.
    let states = e.provider.systemd_unit_states(&all)?;
    let to_enable: Vec<&str> = all
        .iter()
        .copied()
        .filter(|u| states.get(*u).is_some_and(|s| s == "disabled"))
        .collect();
    if !to_enable.is_empty() {
        e.record(Change::Enable(
            to_enable.iter().map(|u| (*u).to_owned()).collect(),
        ));
        if !e.check {
            e.provider.systemd_enable(&to_enable)?;
        }
    }
    if e.check {
        return Ok(());
    }
    // A service whose file changed is restarted, and started when it was not running: a
    // stock Postfix with no main.cf never started, and a node must serve once installed. A
    // unit just enabled is started too.
    let mut start: Vec<&str> = restart.to_vec();
    start.extend(to_enable.iter().copied().filter(|u| !restart.contains(u)));
    for unit in start {
        if let Err(err) = e.provider.systemd_restart(unit, true) {
            notes.push(format!("starting {unit} failed: {err}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(syntax: Syntax) -> ServiceFile {
        let mut f = ServiceFile::new("svc", "file", "/etc/svc.conf", syntax);
        f.set("a", "1").set("b", "two words");
        f
    }

    #[test]
    fn a_rendered_file_parses_back_to_its_rows_in_every_syntax() {
        for syntax in [Syntax::PostfixMain, Syntax::Opendkim, Syntax::Ini] {
            let f = sample(syntax);
            assert_eq!(f.drift(&f.render()), vec![], "{syntax:?}");
        }
        let mut master = ServiceFile::new("postfix", "master.cf", "/x", Syntax::PostfixMaster);
        master.set(
            "submission/inet",
            "n - n - - smtpd -o smtpd_tls_security_level=encrypt -o smtpd_sasl_auth_enable=yes",
        );
        assert_eq!(master.drift(&master.render()), vec![]);
        let mut dovecot = ServiceFile::new("dovecot", "dovecot.conf", "/x", Syntax::Dovecot);
        dovecot
            .set("protocols", "imap")
            .set("service auth / unix_listener /x/auth / mode", "0660")
            .set("service auth / unix_listener /x/auth / user", "postfix")
            .set("service lmtp / unix_listener /x/lmtp / mode", "0600")
            .set("ssl", "required");
        let text = dovecot.render();
        assert_eq!(dovecot.drift(&text), vec![], "{text}");
        assert_eq!(text.matches("service auth {").count(), 1, "{text}");
        let mut one = ServiceFile::new("pure-ftpd", "conf/TLS", "/x", Syntax::OneValue);
        one.set("TLS", "1");
        assert_eq!(one.render(), "1\n");
        assert_eq!(one.drift("1\n"), vec![]);
    }

    fn sysroot_engine(root: &std::path::Path) -> Engine {
        let provider = provider::Provider::new(provider::ProviderConfig {
            platform: provider::Platform::Debian,
            root: root.to_owned(),
            executor: std::sync::Arc::new(provider::RealExecutor),
            machine: std::sync::Arc::new(provider::RealMachine),
            audit_dir: root.join("audit"),
        });
        Engine::new(provider, true).unwrap()
    }

    fn node_config() -> NodeConfig {
        NodeConfig::parse(
            "node_id = \"0123456789abcdef0123456789abcdef\"\nname = \"node1.example.com\"\n\
             platform = \"debian\"\nlisten = \"0.0.0.0:8443\"\n",
        )
        .unwrap()
    }

    #[test]
    fn the_services_reading_the_node_certificate_and_their_tls_ports_come_from_the_table() {
        use acme::probe::Hello;
        let dir = tempfile::tempdir().unwrap();
        for d in ["etc/postfix", "etc/dovecot", "etc/pure-ftpd/conf"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        let e = sysroot_engine(dir.path());
        let reader = |service, endpoints| TlsReader {
            service,
            unit: format!("{service}.service"),
            endpoints,
        };
        assert_eq!(
            tls_readers(&e, &node_config()),
            vec![
                reader(
                    "postfix",
                    vec![(25, Hello::SmtpStartTls), (587, Hello::SmtpStartTls)]
                ),
                reader("dovecot", vec![(993, Hello::Tls), (995, Hello::Tls)]),
                reader("pure-ftpd", vec![(21, Hello::FtpAuthTls)]),
            ]
        );
        // A service that is not installed reads nothing.
        std::fs::remove_dir_all(dir.path().join("etc/pure-ftpd")).unwrap();
        let services: Vec<&str> = tls_readers(&e, &node_config())
            .iter()
            .map(|r| r.service)
            .collect();
        assert_eq!(services, vec!["postfix", "dovecot"]);
    }

    #[test]
    fn a_tls_listener_added_to_a_file_is_found_without_naming_it_elsewhere() {
        use acme::probe::Hello;
        let mut dovecot = ServiceFile::new("dovecot", "dovecot.conf", "/x", Syntax::Dovecot);
        dovecot
            .set("service imap-login / inet_listener imap / port", "143")
            .set(
                "service managesieve-login / inet_listener sieve / port",
                "4190",
            )
            .set(
                "service managesieve-login / inet_listener sieve / ssl",
                "yes",
            );
        assert_eq!(tls_endpoints(&dovecot), vec![(4190, Hello::Tls)]);
        let mut master = ServiceFile::new("postfix", "master.cf", "/x", Syntax::PostfixMaster);
        master
            .set(
                "submissions/inet",
                "n - n - - smtpd -o smtpd_tls_wrappermode=yes",
            )
            .set("2525/inet", "n - n - - smtpd")
            .set("pickup/unix", "n - n 60 1 pickup");
        assert_eq!(
            tls_endpoints(&master),
            vec![(465, Hello::Tls), (2525, Hello::SmtpStartTls)]
        );
    }

    #[test]
    fn drift_names_a_changed_a_missing_and_an_extra_setting() {
        let f = sample(Syntax::PostfixMain);
        let edited = "a = 9\nc = extra\n";
        let drift: Vec<String> = f.drift(edited).iter().map(ToString::to_string).collect();
        assert_eq!(
            drift,
            vec![
                "svc file: a is \"9\", the node needs \"1\"".to_owned(),
                "svc file: b is not set, the node needs \"two words\"".to_owned(),
                "svc file: c is \"extra\", which the node does not set".to_owned(),
            ]
        );
        // A value continued on the next line is the same value.
        assert_eq!(f.drift("a = 1\nb = two\n    words\n"), vec![]);
        let dovecot = {
            let mut d = ServiceFile::new("dovecot", "dovecot.conf", "/x", Syntax::Dovecot);
            d.set("protocols", "imap");
            d
        };
        let drift: Vec<String> = dovecot
            .drift("protocols = imap\n!include conf.d/*.conf\n")
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            drift,
            vec![
                "dovecot dovecot.conf: !include conf.d/*.conf is \"\", which the node does not set"
                    .to_owned()
            ]
        );
    }
}
