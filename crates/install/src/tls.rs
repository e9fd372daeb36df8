//! The node's certificate and its Apache side (docs/design.md section 9).
//!
//! First a self-signed placeholder for the node's name, so the API starts at once (kept while
//! a certificate and key that load are in place). Where Apache is installed: the include
//! that makes Apache read the node's vhosts directory, and the node's own vhost: port
//! `http_port` answers `/.well-known/acme-challenge/` from a webroot under the data
//! directory (and nothing else, so no HTTPS redirect can catch it), port 443 serves the
//! node's certificate and proxies `/v1/` to the local API. Then, with an `[acme]` table in
//! the configuration, a real certificate over HTTP-01 whenever the one in place is the
//! placeholder, expires within [`RENEW_BEFORE`], or does not cover the name. The chain is
//! written whole over `tls/cert.pem` (the key is kept, so the same key is reused). At the end
//! of the run ([`follow`]) every listener of the certificate is reloaded after an issue (the
//! API, Apache, and each service whose settings name the node's TLS files), and each one is
//! handshaken by the node itself: one that still presents another certificate is restarted
//! and named. A failure keeps what is in place and is retried by the next run (the daily
//! `layerone-renew.timer` runs one).

use std::time::Duration;

use store::LayoutOwner;

use crate::config::NodeConfig;
use crate::converge::{Change, Engine, WriteReason};
use crate::{InstallError, paths, units};

/// Renew this long before expiry.
pub const RENEW_BEFORE: Duration = Duration::from_secs(30 * 24 * 3600);
/// Where Apache serves challenge responses from (`<this>/.well-known/acme-challenge/`).
pub const WEBROOT: &str = "/var/lib/layerone/acme-challenge";
/// The ACME account's credentials (they hold the account key).
pub const ACME_ACCOUNT: &str = "/etc/layerone/acme-account.json";
/// The node's vhost, in the directory Apache's include reads.
pub const NODE_VHOST: &str = "000-layerone-node.conf";
/// How long one ACME exchange may take.
const ACME_TIMEOUT: Duration = Duration::from_secs(90);

/// Keeps a certificate and key that load; otherwise writes a self-signed pair for the node's
/// name. Returns the pins of the certificate in place.
pub fn placeholder(
    e: &mut Engine,
    config: &NodeConfig,
) -> Result<Option<api::tls::Pins>, InstallError> {
    let cert = e.read_regular(paths::TLS_CERT)?;
    let key = e.read_regular(paths::TLS_KEY)?;
    // A placeholder made for another name (the name was changed) is made again; a
    // CA-issued certificate is ACME's to replace.
    let current = cert
        .as_ref()
        .map(|c| String::from_utf8_lossy(c).into_owned());
    let stale_placeholder = current.as_deref().is_some_and(|pem| {
        acme::is_self_signed(pem).unwrap_or(false)
            && !acme::covers(pem, config.name.as_str()).unwrap_or(false)
    });
    if let (Some(cert), Some(_)) = (&current, &key)
        && !stale_placeholder
        && let Ok(pin) = api::tls::Pins::of(cert)
    {
        e.owner_mode(paths::TLS_CERT, 0o644, LayoutOwner::Root)?;
        e.owner_mode(paths::TLS_KEY, 0o600, LayoutOwner::Root)?;
        return Ok(Some(pin));
    }
    for path in [paths::TLS_CERT, paths::TLS_KEY] {
        if std::fs::symlink_metadata(e.map(path)).is_ok() {
            let what = if stale_placeholder {
                "a placeholder certificate (or its key) for another name"
            } else {
                "a certificate or key that does not load"
            };
            e.adopt(path, what)?;
        }
    }
    e.changes.push(Change::TlsPlaceholder {
        name: config.name.to_string(),
    });
    if e.check {
        return Ok(None);
    }
    let (cert, key) = api::tls::self_signed(config.name.as_str())?;
    // The key first: a certificate without its key is replaced by the next run anyway.
    write_pair(
        e,
        (paths::TLS_CERT, paths::TLS_KEY),
        &cert,
        &key,
        WriteReason::Missing,
    )?;
    Ok(Some(api::tls::Pins::of(&cert)?))
}

/// Writes a key (0600) and then its certificate (0644), both root's.
fn write_pair(
    e: &mut Engine,
    (cert_path, key_path): (&str, &str),
    cert: &str,
    key: &str,
    why: WriteReason,
) -> Result<(), InstallError> {
    e.write(key_path, key.as_bytes(), 0o600, LayoutOwner::Root, why)?;
    e.write(cert_path, cert.as_bytes(), 0o644, LayoutOwner::Root, why)
}

/// The include line's file: a real file where the platform's Apache reads extra
/// configuration (never a symlink into `*-available`).
fn include_file(e: &Engine) -> &'static str {
    match e.provider.platform() {
        provider::Platform::Debian => "/etc/apache2/conf-enabled/layerone.conf",
        provider::Platform::CloudLinux => "/etc/httpd/conf.d/layerone.conf",
    }
}

/// The node's vhost. Paths are mapped under the install root (the identity on a server), so
/// a sysroot's Apache serves the sysroot's files.
pub fn render_vhost(e: &Engine, config: &NodeConfig) -> String {
    let http_port = config.acme.as_ref().map_or(80, |a| a.http_port);
    let webroot = e.map(WEBROOT);
    let challenges = webroot.join(".well-known/acme-challenge");
    let cert = e.map(paths::TLS_CERT);
    let key = e.map(paths::TLS_KEY);
    let name = &config.name;
    let api_port = config.listen.port();
    format!(
        "# Derived by `layerone install` from /etc/layerone/config.toml; edits here are moved to\n\
         # /etc/layerone/override/ by the next install.\n\
         <VirtualHost *:{http_port}>\n    ServerName {name}\n\
         \x20   # ACME HTTP-01 only: answered before any redirect could apply.\n\
         \x20   Alias /.well-known/acme-challenge/ \"{}/\"\n\
         \x20   <Directory \"{}\">\n        Options None\n        AllowOverride None\n        Require all granted\n    </Directory>\n\
         </VirtualHost>\n\
         <IfModule ssl_module>\n<VirtualHost *:443>\n    ServerName {name}\n    SSLEngine on\n\
         \x20   SSLCertificateFile \"{}\"\n    SSLCertificateKeyFile \"{}\"\n\
         \x20   # The front's own limits: behind the proxy every request reaches the API from this one\n\
         \x20   # address, so the API cannot tell a slow client from the others; Apache cuts it off.\n\
         \x20   <IfModule reqtimeout_module>\n        RequestReadTimeout handshake=5 header=10-20,MinRate=500 body=30,MinRate=500\n    </IfModule>\n\
         \x20   LimitRequestLine 8190\n    LimitRequestFields 64\n    LimitRequestFieldSize 8190\n\
         \x20   <Location \"/v1/\">\n        LimitRequestBody {json_limit}\n    </Location>\n\
         \x20   # Blobs are capped by the API as they stream (up to 4 GiB, past Apache's own maximum).\n\
         \x20   <Location \"/v1/blobs/\">\n        LimitRequestBody 0\n    </Location>\n\
         \x20   <IfModule proxy_http_module>\n        SSLProxyEngine on\n        SSLProxyVerify none\n        SSLProxyCheckPeerName off\n\
         \x20       # A backend connection only for the time of its request (the API caps connections\n\
         \x20       # per source, and every one from here is Apache's), a short connect, and a wait\n\
         \x20       # longer than the events feed's longest long-poll.\n\
         \x20       ProxyPass /v1/ https://127.0.0.1:{api_port}/v1/ connectiontimeout=5 timeout={proxy_timeout} disablereuse=On\n        ProxyPassReverse /v1/ https://127.0.0.1:{api_port}/v1/\n    </IfModule>\n\
         </VirtualHost>\n</IfModule>\n",
        challenges.display(),
        challenges.display(),
        cert.display(),
        key.display(),
        json_limit = registry::envelope::MAX_BODY,
        proxy_timeout = api::MAX_EVENTS_WAIT_SECS + 15,
    )
}

/// The prepared pair of a key rotation: kept when both files are there and load together,
/// otherwise a new key and a self-signed certificate for the node's name. Returns its pins.
pub fn prepare_rotation(
    e: &mut Engine,
    config: &NodeConfig,
) -> Result<api::tls::Pins, InstallError> {
    if let (Some(cert), Some(_)) = (
        e.read_regular(paths::TLS_NEXT_CERT)?,
        e.read_regular(paths::TLS_NEXT_KEY)?,
    ) && api::tls::load_check(&e.map(paths::TLS_NEXT_CERT), &e.map(paths::TLS_NEXT_KEY)).is_ok()
        && let Ok(pins) = api::tls::Pins::of(&String::from_utf8_lossy(&cert))
    {
        return Ok(pins);
    }
    let (cert, key) = api::tls::self_signed(config.name.as_str())?;
    write_pair(
        e,
        (paths::TLS_NEXT_CERT, paths::TLS_NEXT_KEY),
        &cert,
        &key,
        WriteReason::Missing,
    )?;
    Ok(api::tls::Pins::of(&cert)?)
}

/// Puts the prepared pair in place of the served one and restarts the API; with an `[acme]`
/// table and Apache, requests a certificate for the new key. Returns the pins served now.
pub fn confirm_rotation(
    e: &mut Engine,
    config: &NodeConfig,
    notes: &mut Vec<String>,
) -> Result<api::tls::Pins, InstallError> {
    let (Some(cert), Some(key)) = (
        e.read_regular(paths::TLS_NEXT_CERT)?,
        e.read_regular(paths::TLS_NEXT_KEY)?,
    ) else {
        return Err(InstallError::NoRotation);
    };
    api::tls::load_check(&e.map(paths::TLS_NEXT_CERT), &e.map(paths::TLS_NEXT_KEY))?;
    let (cert, key) = (
        String::from_utf8_lossy(&cert).into_owned(),
        String::from_utf8_lossy(&key).into_owned(),
    );
    let mut pins = api::tls::Pins::of(&cert)?;
    // The key first, as everywhere: nothing reads the pair until the restart below.
    write_pair(
        e,
        (paths::TLS_CERT, paths::TLS_KEY),
        &cert,
        &key,
        WriteReason::Outdated,
    )?;
    for path in [paths::TLS_NEXT_CERT, paths::TLS_NEXT_KEY] {
        e.provider.remove_config(&e.map(path))?;
    }
    if apache_present(e)
        && let Some(issued) = acme(e, config, notes)?
    {
        pins = issued;
    }
    // The copies derived from the pair (pure-ftpd's), then every listener reloaded and checked.
    crate::services::converge(e, config, notes)?;
    follow(e, config, true, notes)?;
    Ok(pins)
}

/// Whether the platform's Apache is installed in the root.
fn apache_present(e: &Engine) -> bool {
    e.map(e.provider.apache_layout().main_config).is_file()
}

/// The include, the vhost and the webroot; the configuration is tested before it is kept
/// and reverted when the test fails. Returns whether Apache is set up to answer challenges.
pub fn apache(
    e: &mut Engine,
    config: &NodeConfig,
    notes: &mut Vec<String>,
) -> Result<bool, InstallError> {
    if !apache_present(e) {
        if config.acme.is_some() {
            notes.push(format!(
                "Apache is not installed ({} missing): no HTTPS vhost and no ACME; the API keeps its current certificate",
                e.provider.apache_layout().main_config
            ));
        }
        return Ok(false);
    }
    let layout = e.provider.apache_layout();
    for dir in [
        WEBROOT,
        &format!("{WEBROOT}/.well-known"),
        &format!("{WEBROOT}/.well-known/acme-challenge"),
    ] {
        e.dir(dir, 0o755, LayoutOwner::Root)?;
    }
    e.dir(layout.vhosts_dir, 0o755, LayoutOwner::Root)?;
    let include = include_file(e);
    let vhost = format!("{}/{NODE_VHOST}", layout.vhosts_dir);
    let before: Vec<(String, Option<Vec<u8>>)> = [include, vhost.as_str()]
        .iter()
        .map(|p| Ok(((*p).to_owned(), e.read_regular(p)?)))
        .collect::<Result<_, InstallError>>()?;
    let homes = crate::web::home_directory_rules(&e.map(crate::web::HOMES).display().to_string());
    let mut changed = e.derived(
        include,
        format!(
            "# Derived by `layerone install`: Apache reads the node's vhosts.\n{}{}\n",
            homes, layout.include_line
        )
        .as_bytes(),
        0o644,
        LayoutOwner::Root,
    )?;
    changed |= e.derived(
        &vhost,
        render_vhost(e, config).as_bytes(),
        0o644,
        LayoutOwner::Root,
    )?;
    if !changed || e.check {
        return Ok(true);
    }
    if let Err(err) = e.provider.apache_configtest() {
        // Put back what was there, so Apache keeps serving the other tenants.
        e.put_back(before)?;
        notes.push(format!(
            "Apache's configuration test failed with the node's vhost, which was reverted: {err}"
        ));
        return Ok(false);
    }
    reload_apache(e, notes);
    Ok(true)
}

fn reload_apache(e: &Engine, notes: &mut Vec<String>) {
    // A graceful reload (with `-f` on a sysroot, whose Apache the caller runs): running
    // requests finish on the old configuration; a failed reload leaves it serving, reported.
    match e.provider.apache_reload() {
        Ok(true) => {}
        Ok(false) => notes.push(crate::web::NOT_RUNNING.to_owned()),
        Err(err) => notes.push(format!("Apache reload failed: {err}")),
    }
}

/// Challenge responses as files in the webroot, written whole through the provider.
struct ProviderWebroot<'a> {
    e: &'a Engine,
}

impl acme::Webroot for ProviderWebroot<'_> {
    fn put(&self, token: &str, key_authorization: &str) -> std::io::Result<()> {
        let path = self.path(token)?;
        self.e
            .provider
            .write_config_atomic(&path, key_authorization.as_bytes(), 0o644)
            .map_err(std::io::Error::other)
    }

    fn remove(&self, token: &str) -> std::io::Result<()> {
        let path = self.path(token)?;
        self.e
            .provider
            .remove_config(&path)
            .map_err(std::io::Error::other)
    }
}

impl ProviderWebroot<'_> {
    /// A token is base64url (RFC 8555 section 8.3); anything else never becomes a path.
    fn path(&self, token: &str) -> std::io::Result<std::path::PathBuf> {
        if token.is_empty()
            || !token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(std::io::Error::other(format!(
                "unexpected ACME token {token:?}"
            )));
        }
        Ok(self
            .e
            .map(&format!("{WEBROOT}/.well-known/acme-challenge/{token}")))
    }
}

/// Requests a certificate when the one in place needs replacing, for the key in place (so the
/// key pin stays). Returns the new pins.
pub fn acme(
    e: &mut Engine,
    config: &NodeConfig,
    notes: &mut Vec<String>,
) -> Result<Option<api::tls::Pins>, InstallError> {
    let Some(acme_config) = &config.acme else {
        return Ok(None);
    };
    let Some(cert) = e.read_regular(paths::TLS_CERT)? else {
        return Ok(None);
    };
    let cert = String::from_utf8_lossy(&cert).into_owned();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    if !acme::needs_renewal(&cert, config.name.as_str(), now, RENEW_BEFORE).unwrap_or(true) {
        return Ok(None);
    }
    let change = Change::Other(format!(
        "request a certificate for {} from {} (ACME HTTP-01)",
        config.name, acme_config.directory
    ));
    if e.check {
        e.changes.push(change);
        return Ok(None);
    }
    let key = match e.read_regular(paths::TLS_KEY)? {
        Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        None => return Ok(None),
    };
    let account = e
        .read_regular(ACME_ACCOUNT)?
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    let contact = acme_config.email.as_ref().map(|m| format!("mailto:{m}"));
    let server_root = acme_config.server_root.clone();
    let request = acme::Request {
        directory: &acme_config.directory,
        server_root: server_root.as_deref(),
        contact: contact.as_deref(),
        name: config.name.as_str(),
        aliases: &[],
        account: account.as_deref(),
        key_pem: &key,
        timeout: ACME_TIMEOUT,
    };
    let issued = match acme::issue(&request, &ProviderWebroot { e }) {
        Ok(issued) => issued,
        Err(err) => {
            notes.push(format!(
                "ACME failed, keeping the current certificate (the next install or renewal retries): {err}"
            ));
            return Ok(None);
        }
    };
    let pin = api::tls::Pins::of(&issued.chain_pem)?;
    e.changes.push(change);
    if account.as_deref() != Some(issued.account.as_str()) {
        e.write(
            ACME_ACCOUNT,
            issued.account.as_bytes(),
            0o600,
            LayoutOwner::Root,
            WriteReason::Missing,
        )?;
    }
    e.write(
        paths::TLS_CERT,
        issued.chain_pem.as_bytes(),
        0o644,
        LayoutOwner::Root,
        WriteReason::Outdated,
    )?;
    if let Ok(expires) = acme::not_after(&issued.chain_pem) {
        notes.push(format!(
            "certificate for {} issued, valid until {}",
            config.name,
            crate::converge::rfc3339(expires.max(0) as u64)
        ));
    }
    // The API, Apache and every other listener of the certificate are reloaded and checked
    // by [`follow`] once the run has written the files derived from it.
    Ok(Some(pin))
}

/// One place the node's certificate is presented: a service's listener, the unit that
/// serves it, and how TLS starts there.
#[derive(Clone, Debug)]
pub struct Listener {
    pub service: String,
    pub unit: String,
    pub addr: std::net::SocketAddr,
    pub hello: acme::probe::Hello,
}

/// Every listener of the node's certificate: the API, Apache's node vhost on 443 (when
/// Apache is installed), and each service whose settings read the node's TLS files
/// ([`crate::services::tls_readers`]), on the ports its settings declare.
pub fn listeners(e: &Engine, config: &NodeConfig) -> Vec<Listener> {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
    let local = |port| SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port);
    let api = match config.listen.ip() {
        ip if ip.is_unspecified() && ip.is_ipv6() => {
            SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), config.listen.port())
        }
        ip if ip.is_unspecified() => local(config.listen.port()),
        _ => config.listen,
    };
    let mut out = vec![Listener {
        service: "layerone-api".into(),
        unit: units::API_UNIT.into(),
        addr: api,
        hello: acme::probe::Hello::Tls,
    }];
    if apache_present(e) {
        out.push(Listener {
            service: "apache".into(),
            unit: apache_unit(e).into(),
            addr: local(443),
            hello: acme::probe::Hello::Tls,
        });
    }
    for reader in crate::services::tls_readers(e, config) {
        for (port, hello) in &reader.endpoints {
            out.push(Listener {
                service: reader.service.into(),
                unit: reader.unit.clone(),
                addr: local(*port),
                hello: *hello,
            });
        }
    }
    out
}

fn apache_unit(e: &Engine) -> &'static str {
    match e.provider.platform() {
        provider::Platform::Debian => "apache2.service",
        provider::Platform::CloudLinux => "httpd.service",
    }
}

/// How long one handshake may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a reloaded listener has to present the new certificate.
const SETTLE: Duration = Duration::from_secs(8);

/// Makes every listener present the certificate in place (on a server; nothing runs on a
/// sysroot). With `issued` (a certificate was just issued, renewed or rotated) each unit
/// that reads it is reloaded first: the API restarted (it reads its key at start), Apache
/// gracefully reloaded, the others `try-reload-or-restart`ed. Then the node handshakes each
/// listener itself and compares the leaf's SHA-256 with the file's: one still on another
/// certificate is a [`Change::StaleListener`] (all `--check` does), and is restarted; one
/// still stale after that, or that does not answer, is a note.
pub fn follow(
    e: &mut Engine,
    config: &NodeConfig,
    issued: bool,
    notes: &mut Vec<String>,
) -> Result<(), InstallError> {
    if !e.provider.root_is_slash() {
        return Ok(());
    }
    let Some(cert) = e.read_regular(paths::TLS_CERT)? else {
        return Ok(());
    };
    let Ok(want) = api::tls::pin_sha256(&String::from_utf8_lossy(&cert)) else {
        return Ok(());
    };
    let listeners = listeners(e, config);
    if issued && !e.check {
        let mut units: Vec<&str> = listeners.iter().map(|l| l.unit.as_str()).collect();
        units.dedup();
        for unit in units {
            let reloaded = if unit == units::API_UNIT {
                e.provider.systemd_restart(unit, false).map(drop)
            } else if unit == apache_unit(e) {
                e.provider.apache_reload().map(|reloaded| {
                    if !reloaded {
                        notes.push(crate::web::NOT_RUNNING.to_owned());
                    }
                })
            } else {
                e.provider.systemd_reload(unit).map(drop)
            };
            if let Err(err) = reloaded {
                notes.push(format!(
                    "reloading {unit} for the new certificate failed: {err}"
                ));
            }
        }
    }
    // After a reload a listener is given time to take the new certificate; otherwise the
    // first answer counts (one that does not answer yet, just restarted, is waited for).
    let settle = if issued { SETTLE } else { Duration::ZERO };
    let mut restarted: Vec<String> = Vec::new();
    for l in &listeners {
        let found = match presented(l, config, &want, settle) {
            Ok(found) if found == want => continue,
            Ok(found) => found,
            Err(err) => {
                if !e.check {
                    notes.push(format!(
                        "{} on port {} was not checked: {err}",
                        l.service,
                        l.addr.port()
                    ));
                }
                continue;
            }
        };
        e.record(Change::StaleListener {
            service: l.service.clone(),
            port: l.addr.port(),
            found: found.clone(),
            want: want.clone(),
        });
        if e.check {
            continue;
        }
        if !restarted.contains(&l.unit) {
            if let Err(err) = e.provider.systemd_restart(&l.unit, false) {
                notes.push(format!("restarting {} failed: {err}", l.unit));
            }
            restarted.push(l.unit.clone());
        }
        match presented(l, config, &want, SETTLE) {
            Ok(now) if now == want => notes.push(format!(
                "{} on port {} still presented certificate sha256:{found} after its reload; {} was restarted and presents the node's",
                l.service,
                l.addr.port(),
                l.unit
            )),
            Ok(now) => notes.push(format!(
                "{} on port {} presents certificate sha256:{now}, not the node's sha256:{want}, even after restarting {}",
                l.service,
                l.addr.port(),
                l.unit
            )),
            Err(err) => notes.push(format!(
                "{} on port {} does not answer after restarting {}: {err}",
                l.service,
                l.addr.port(),
                l.unit
            )),
        }
    }
    Ok(())
}

/// The fingerprint `l` presents ([`acme::probe::settled_leaf_sha256`]).
fn presented(
    l: &Listener,
    config: &NodeConfig,
    want: &str,
    settle: Duration,
) -> Result<String, acme::probe::ProbeError> {
    acme::probe::settled_leaf_sha256(
        l.addr,
        l.hello,
        config.name.as_str(),
        want,
        settle,
        PROBE_TIMEOUT,
    )
}
