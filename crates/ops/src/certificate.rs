//! The `certificate` family: a TLS certificate bound to one of the account's web domains.
//!
//! No secret ever travels in a request, an inbox or state row, a result or an audit line:
//! the request names where the certificate comes from (`source`), and root makes or reads
//! the private key itself.
//!
//! - `"source": "acme"`: issued over ACME HTTP-01 for the web domain's name and aliases. The
//!   CA's directory, its HTTPS root and the account's contact come from the `[acme]` table
//!   of the node's configuration (`/etc/layerone/config.toml`, the installer's table); the
//!   account's credentials are kept in `/etc/layerone/acme-account.json` (0600, shared with
//!   the installer's certificate for the node's name). Challenge responses are files in the
//!   node's webroot, which every tenant vhost serves at `/.well-known/acme-challenge/`
//!   ahead of the document root, redirects and suspension (`web_domain::render_vhost`). On
//!   the simulated backend without an `[acme]` table, a throw-away CA issues the chain
//!   (`acme::issue_locally`) after the same challenge files were placed and removed.
//! - `"source": "bundle", "blob": <sha256>`: the PEM chain and its PKCS#8 key, uploaded as
//!   one blob into `blobs/in`. Root reads it as hostile input (`store::blobs::open_incoming`,
//!   no symlink; `VerifyingReader`, at most [`MAX_BUNDLE_BYTES`] and its SHA-256 checked),
//!   then checks the key matches, the certificate covers the domain and is valid now. Each
//!   refusal has its own code and names `resource.blob`; nothing changes. The row records
//!   the blob's name, so a replayed request converges once the upload is collected.
//!
//! An ACME key (ECDSA P-256, made by root) is kept across renewals, so a renewal only
//! replaces the chain and a crash can never leave a vhost naming a chain and a key that do
//! not match (a bundle replacing another with a new key is the one case where the key is
//! written first and the chain a moment later, both before Apache is reloaded). The chain is written to `/etc/layerone/certificates/<id>.crt` (0644) and the key to
//! `<id>.key` (0600) through the provider, then the web domain's vhost is rewritten with an
//! HTTPS virtual host using them (`web_domain::sync_vhost`), checked with Apache's
//! configuration test like every vhost. One certificate per web domain.
//!
//! `ensure_certificate` converges: a certificate already in place for the same names and
//! not due for renewal is kept (so `rebuild_account` replaying it issues nothing);
//! `renew_certificate` forces a new chain. The runner's `renew_certificates` step queues a
//! `renew_certificate` job for each ACME certificate within [`RENEW_BEFORE`] of expiry.

pub use declarations::certificate::*;

use std::path::PathBuf;
use std::time::Duration;

use registry::types::{DomainName, Hex32, Presence};
use registry::{Apply, BlobId, Family, OpError, Operation, Owner, Purge};
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::account::{AccountRef, store_error};
use crate::context::{Ctx, Service, provider_error};
use crate::web_domain::{self, VhostChange};

/// Where certificate files live (a system path: mapped with `sysconf`).
pub const CERTIFICATE_DIR: &str = "/etc/layerone/certificates";
/// The node's configuration, whose `[acme]` table says which CA to ask.
pub const NODE_CONFIG: &str = "/etc/layerone/config.toml";
/// The ACME account's credentials (they hold the account key): the installer's file.
pub const ACME_ACCOUNT: &str = "/etc/layerone/acme-account.json";
/// The node's webroot for challenge responses (`<this>/.well-known/acme-challenge/<token>`),
/// the installer's too.
pub const ACME_WEBROOT: &str = "/var/lib/layerone/acme-challenge";
/// Renew an ACME certificate this long before it expires.
pub const RENEW_BEFORE: Duration = Duration::from_secs(30 * 24 * 3600);
/// How long a certificate of the simulated CA is valid (a public CA's 90 days).
pub const SIM_VALIDITY: Duration = Duration::from_secs(90 * 24 * 3600);
/// How long one ACME exchange may take.
const ACME_TIMEOUT: Duration = Duration::from_secs(90);

/// The most a chain may hold, in bytes and in certificates.
pub const MAX_CHAIN_BYTES: usize = 64 * 1024;
pub const MAX_CHAIN_CERTIFICATES: usize = 8;
/// The most a private key may hold, in bytes (a 8192-bit RSA key in PKCS#8 PEM is ~6.5 KiB).
pub const MAX_KEY_BYTES: usize = 16 * 1024;

impl Purge<Ctx> for Certificate {
    /// Unbinds the account's certificates from their vhosts, then removes their files and
    /// rows. Runs before `web_domain`'s purge (registered later), so every vhost still passes
    /// the configuration test while files go.
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let rows = ctx
            .state
            .resources_of(&Owner::Tenant(account.clone()), Certificate::NAME)
            .map_err(store_error)?;
        for row in &rows {
            unbind_and_delete(ctx, account, &row.resource_id, &row.data)?;
        }
        if !rows.is_empty() {
            ctx.state
                .forget_resources_of(account, Certificate::NAME)
                .map_err(store_error)?;
        }
        Ok(())
    }
}

/// The chain and key files of certificate `id` (mapped under the provider's root).
pub fn certificate_files(ctx: &Ctx, id: &Hex32) -> (PathBuf, PathBuf) {
    let dir = ctx.provider.sysconf(CERTIFICATE_DIR);
    (dir.join(format!("{id}.crt")), dir.join(format!("{id}.key")))
}

/// The directory every vhost serves `/.well-known/acme-challenge/` from (mapped).
pub fn challenge_dir(ctx: &Ctx) -> PathBuf {
    ctx.provider
        .sysconf(ACME_WEBROOT)
        .join(".well-known/acme-challenge")
}

fn unbind_and_delete(
    ctx: &mut Ctx,
    account: &Hex32,
    id: &Hex32,
    data: &Value,
) -> Result<(), OpError> {
    if let Some(domain) = data["web_domain"]
        .as_str()
        .and_then(|s| s.parse::<Hex32>().ok())
    {
        web_domain::sync_vhost(ctx, account, &domain, VhostChange::Certificate(id, None))?;
    }
    crash::point("certificate.after_unbind");
    let (chain, key) = certificate_files(ctx, id);
    for path in [chain, key] {
        ctx.provider.remove_config(&path).map_err(provider_error)?;
    }
    Ok(())
}

/// The most a bundle blob may hold: a chain and a key at their largest.
pub const MAX_BUNDLE_BYTES: usize = MAX_CHAIN_BYTES + MAX_KEY_BYTES;

/// Whether a certificate DNS name (possibly `*.` wildcard) covers `name`.
pub fn name_covers(pattern: &str, name: &str) -> bool {
    if pattern.eq_ignore_ascii_case(name) {
        return true;
    }
    match (pattern.strip_prefix("*."), name.split_once('.')) {
        (Some(base), Some((label, rest))) => !label.is_empty() && base.eq_ignore_ascii_case(rest),
        _ => false,
    }
}

fn refused(code: &'static str, message: String) -> OpError {
    OpError::permanent(code, message)
}

pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What a checked chain gives.
#[derive(Debug)]
struct Checked {
    covered: Vec<String>,
    uncovered: Vec<String>,
    not_after: i64,
    fingerprint: String,
}

/// Checks a chain and its key for a domain: the chain parses and is bounded, the key is the
/// end-entity certificate's, the certificate names the domain and is valid now. Each refusal
/// has its own code, and its message starts with the request field it concerns.
fn check_chain(
    chain: &str,
    key: &str,
    domain: &DomainName,
    aliases: &[String],
    field: &str,
) -> Result<Checked, OpError> {
    if chain.len() > MAX_CHAIN_BYTES {
        return Err(refused(
            "invalid_certificate",
            format!("{field}: the chain is longer than {MAX_CHAIN_BYTES} bytes"),
        ));
    }
    let (leaf, count) = acme::parse_chain(chain).map_err(|e| {
        refused(
            "invalid_certificate",
            format!("{field}: the certificate chain does not parse: {e}"),
        )
    })?;
    if count > MAX_CHAIN_CERTIFICATES {
        return Err(refused(
            "invalid_certificate",
            format!(
                "{field}: the chain holds {count} certificates; at most {MAX_CHAIN_CERTIFICATES}"
            ),
        ));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(refused(
            "invalid_private_key",
            format!("{field}: the private key is longer than {MAX_KEY_BYTES} bytes"),
        ));
    }
    let public = acme::key_public_der(key).map_err(|e| {
        refused(
            "invalid_private_key",
            format!("{field}: the private key is not a usable PKCS#8 key: {e}"),
        )
    })?;
    if public != leaf.public_key_der {
        return Err(refused(
            "certificate_key_mismatch",
            format!("{field}: the private key does not belong to the end-entity certificate"),
        ));
    }
    if !leaf
        .dns_names
        .iter()
        .any(|p| name_covers(p, domain.as_str()))
    {
        return Err(refused(
            "certificate_not_covering",
            format!(
                "{field}: the certificate names {:?}, not {domain}",
                leaf.dns_names
            ),
        ));
    }
    let now = unix_now();
    if leaf.not_after <= now || leaf.not_before > now {
        return Err(refused(
            "certificate_not_valid_now",
            format!(
                "{field}: the certificate is valid from {} to {} (Unix seconds), not now ({now})",
                leaf.not_before, leaf.not_after
            ),
        ));
    }
    let (covered, uncovered) = std::iter::once(domain.to_string())
        .chain(aliases.iter().cloned())
        .partition(|n| leaf.dns_names.iter().any(|p| name_covers(p, n)));
    Ok(Checked {
        covered,
        uncovered,
        not_after: leaf.not_after,
        fingerprint: hex(&Sha256::digest(&leaf.der)),
    })
}

/// The `[acme]` table of the node's configuration (the installer's `AcmeConfig`; other
/// tables and keys are the installer's to check).
#[derive(Clone, Debug, Deserialize)]
pub struct AcmeSettings {
    pub directory: String,
    #[serde(default)]
    pub email: Option<String>,
    #[serde(default)]
    pub server_root: Option<PathBuf>,
    #[serde(default)]
    pub http_port: Option<u16>,
}

#[derive(Deserialize)]
struct NodeFile {
    #[serde(default)]
    acme: Option<AcmeSettings>,
}

/// The node configuration's `[acme]` table, if there is one.
pub fn acme_settings(ctx: &Ctx) -> Result<Option<AcmeSettings>, OpError> {
    let Some(bytes) = ctx
        .provider
        .read_config(&ctx.provider.sysconf(NODE_CONFIG))
        .map_err(provider_error)?
    else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&bytes);
    let file: NodeFile = toml::from_str(&text).map_err(|e| {
        OpError::permanent(
            "node_config_invalid",
            format!("{NODE_CONFIG} does not parse: {}", e.message()),
        )
    })?;
    Ok(file.acme)
}

/// Challenge responses as files in the node's webroot, written whole through the provider.
struct ProviderWebroot<'a> {
    ctx: &'a Ctx,
}

impl ProviderWebroot<'_> {
    /// A token is base64url (RFC 8555 section 8.3); anything else never becomes a path.
    fn path(&self, token: &str) -> std::io::Result<PathBuf> {
        if token.is_empty()
            || token.len() > 128
            || !token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(std::io::Error::other(format!(
                "unexpected ACME token {token:?}"
            )));
        }
        Ok(challenge_dir(self.ctx).join(token))
    }
}

impl acme::Webroot for ProviderWebroot<'_> {
    fn put(&self, token: &str, key_authorization: &str) -> std::io::Result<()> {
        let path = self.path(token)?;
        self.ctx
            .provider
            .write_config_atomic(&path, key_authorization.as_bytes(), 0o644)
            .map_err(std::io::Error::other)
    }

    fn remove(&self, token: &str) -> std::io::Result<()> {
        let path = self.path(token)?;
        self.ctx
            .provider
            .remove_config(&path)
            .map_err(std::io::Error::other)
    }
}

fn acme_failed(e: impl std::fmt::Display) -> OpError {
    OpError::retryable(
        "acme_failed",
        format!(
            "resource.source: no certificate was issued (the one in place, if any, stays): {e}"
        ),
    )
}

/// A new chain for `names` (the first is the domain) and `key_pem`: from the configured ACME
/// CA, or on the simulated backend without one, from a throw-away CA.
fn issue_chain(ctx: &mut Ctx, names: &[String], key_pem: &str) -> Result<String, OpError> {
    let webroot = ctx.provider.sysconf(ACME_WEBROOT);
    for dir in [
        webroot.clone(),
        webroot.join(".well-known"),
        challenge_dir(ctx),
    ] {
        ctx.provider
            .ensure_dir(&dir, 0o755)
            .map_err(provider_error)?;
    }
    match acme_settings(ctx)? {
        Some(settings) => {
            // A vhost written earlier in this batch must answer the challenge now.
            ctx.reload_now(Service::Apache)?;
            let account_path = ctx.provider.sysconf(ACME_ACCOUNT);
            let account = ctx
                .provider
                .read_config(&account_path)
                .map_err(provider_error)?
                .map(|b| String::from_utf8_lossy(&b).into_owned());
            let contact = settings.email.as_ref().map(|m| format!("mailto:{m}"));
            let request = acme::Request {
                directory: &settings.directory,
                server_root: settings.server_root.as_deref(),
                contact: contact.as_deref(),
                name: &names[0],
                aliases: &names[1..],
                account: account.as_deref(),
                key_pem,
                timeout: ACME_TIMEOUT,
            };
            let issued = acme::issue(&request, &ProviderWebroot { ctx }).map_err(acme_failed)?;
            if account.as_deref() != Some(issued.account.as_str()) {
                ctx.provider
                    .write_config_atomic(&account_path, issued.account.as_bytes(), 0o600)
                    .map_err(provider_error)?;
            }
            Ok(issued.chain_pem)
        }
        None if matches!(ctx.provider.backend(), provider::Backend::Sim { .. }) => {
            // The simulated CA asks for the same challenge files a real one would, each
            // placed, read back and removed.
            let webroot = ProviderWebroot { ctx };
            for name in names {
                let token = hex(&Sha256::digest(format!("{name}\0{key_pem}")));
                let answer = format!("{token}.simulated");
                acme::Webroot::put(&webroot, &token, &answer).map_err(acme_failed)?;
                let served = ctx
                    .provider
                    .read_config(&challenge_dir(ctx).join(&token))
                    .map_err(provider_error)?;
                acme::Webroot::remove(&webroot, &token).map_err(acme_failed)?;
                if served.as_deref() != Some(answer.as_bytes()) {
                    return Err(acme_failed(format!(
                        "the challenge for {name} is not served"
                    )));
                }
            }
            acme::issue_locally(names, key_pem, SIM_VALIDITY).map_err(acme_failed)
        }
        None => Err(OpError::permanent(
            "acme_not_configured",
            format!(
                "resource.source: ACME needs an [acme] table (directory, email, server_root) in {NODE_CONFIG}"
            ),
        )),
    }
}

/// The web domain's name and aliases, from its row.
fn domain_names(
    ctx: &Ctx,
    account: &Hex32,
    web_domain: &Hex32,
) -> Result<(DomainName, Vec<String>), OpError> {
    let row = web_domain::require_domain(ctx, account, web_domain)?;
    let domain: DomainName = row["domain"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| OpError::permanent("state_corrupt", "a recorded domain does not parse"))?;
    let aliases = row["aliases"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a.as_str().map(str::to_owned))
        .collect();
    Ok((domain, aliases))
}

/// The chain and key in place for certificate `id`, each when present.
fn in_place(ctx: &Ctx, id: &Hex32) -> Result<(Option<String>, Option<String>), OpError> {
    let (chain_path, key_path) = certificate_files(ctx, id);
    let read = |path: &PathBuf| -> Result<Option<String>, OpError> {
        Ok(ctx
            .provider
            .read_config(path)
            .map_err(provider_error)?
            .map(|b| String::from_utf8_lossy(&b).into_owned()))
    };
    Ok((read(&chain_path)?, read(&key_path)?))
}

/// A key in place that loads, or a new one.
fn key_for(existing: Option<String>) -> Result<String, OpError> {
    match existing {
        Some(key) if acme::key_public_der(&key).is_ok() => Ok(key),
        _ => acme::generate_key().map_err(|e| {
            OpError::permanent("key_generation_failed", format!("resource.source: {e}"))
        }),
    }
}

/// Whether an ACME certificate must be renewed: its chain does not parse, does not cover
/// every name, or expires within [`RENEW_BEFORE`].
fn renewal_due(chain: Option<&str>, names: &[String], now: i64) -> bool {
    let Some(Ok((leaf, _))) = chain.map(acme::parse_chain) else {
        return true;
    };
    let covers_all = names
        .iter()
        .all(|n| leaf.dns_names.iter().any(|p| name_covers(p, n)));
    !covers_all || leaf.not_after - now < RENEW_BEFORE.as_secs() as i64
}

/// Writes the key (first, so a chain never names a key that is not there yet) and the chain,
/// each only when it changed.
fn install_files(ctx: &Ctx, id: &Hex32, key: &str, chain: &str) -> Result<(), OpError> {
    let dir = ctx.provider.sysconf(CERTIFICATE_DIR);
    ctx.provider
        .ensure_dir(&dir, 0o755)
        .map_err(provider_error)?;
    let (chain_path, key_path) = certificate_files(ctx, id);
    let (chain_now, key_now) = in_place(ctx, id)?;
    if key_now.as_deref() != Some(key) {
        ctx.provider
            .write_config_atomic(&key_path, key.as_bytes(), 0o600)
            .map_err(provider_error)?;
    }
    crash::point("certificate.after_key");
    if chain_now.as_deref() != Some(chain) {
        ctx.provider
            .write_config_atomic(&chain_path, chain.as_bytes(), 0o644)
            .map_err(provider_error)?;
    }
    crash::point("certificate.after_chain");
    Ok(())
}

/// The request field a certificate's problems are reported at.
fn source_field(source: CertificateSource) -> &'static str {
    match source {
        CertificateSource::Acme => "resource.source",
        CertificateSource::Bundle => "resource.blob",
    }
}

fn bundle_refused(code: &'static str, what: impl std::fmt::Display) -> OpError {
    refused(code, format!("resource.blob: {what}"))
}

/// Reads a bundle blob from `blobs/in` as hostile input: no symlink, at most
/// [`MAX_BUNDLE_BYTES`], its SHA-256 checked against its name, then split into the chain
/// (the `CERTIFICATE` blocks, in order) and the one `PRIVATE KEY` block.
fn read_bundle(ctx: &Ctx, blob: &BlobId) -> Result<(String, String), OpError> {
    use std::io::Read;
    let layout = ctx.layout()?;
    let file = store::blobs::open_incoming(layout, blob).map_err(|e| match e {
        store::blobs::BlobError::Missing(_) => bundle_refused("blob_missing", e),
        store::blobs::BlobError::NotRegular(_) => bundle_refused("blob_invalid", e),
        other => OpError::retryable("blob_unreadable", format!("resource.blob: {other}")),
    })?;
    let mut reader = store::blobs::VerifyingReader::new(file, blob, MAX_BUNDLE_BYTES as u64);
    let mut bytes = Vec::new();
    if let Err(e) = reader.read_to_end(&mut bytes) {
        let code = match e
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<store::blobs::BlobError>())
        {
            Some(store::blobs::BlobError::TooLarge { .. }) => "blob_too_large",
            Some(store::blobs::BlobError::Mismatch { .. }) => "blob_mismatch",
            _ => "blob_unreadable",
        };
        return Err(bundle_refused(code, e));
    }
    if !reader.verified() {
        return Err(bundle_refused(
            "blob_mismatch",
            "the blob was not read to its end",
        ));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| bundle_refused("invalid_certificate", "the bundle is not PEM text"))?;
    split_bundle(&text)
}

/// Splits PEM text into its `CERTIFICATE` blocks (in order) and its one `PRIVATE KEY` block.
/// Text between blocks is ignored, as PEM allows; any other block is refused.
fn split_bundle(text: &str) -> Result<(String, String), OpError> {
    let mut chain = String::new();
    let mut key: Option<String> = None;
    let mut open: Option<(String, String)> = None;
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if let Some(label) = line
            .strip_prefix("-----BEGIN ")
            .and_then(|l| l.strip_suffix("-----"))
        {
            if open.is_some() {
                return Err(bundle_refused(
                    "invalid_certificate",
                    "a PEM block begins inside another",
                ));
            }
            open = Some((label.to_owned(), format!("{line}\n")));
        } else if let Some(label) = line
            .strip_prefix("-----END ")
            .and_then(|l| l.strip_suffix("-----"))
        {
            let Some((begun, mut block)) = open.take() else {
                return Err(bundle_refused(
                    "invalid_certificate",
                    "a PEM block ends that did not begin",
                ));
            };
            if begun != label {
                return Err(bundle_refused(
                    "invalid_certificate",
                    format!("a {begun} block ends as {label}"),
                ));
            }
            block.push_str(line);
            block.push('\n');
            match label {
                "CERTIFICATE" => chain.push_str(&block),
                "PRIVATE KEY" => {
                    if key.replace(block).is_some() {
                        return Err(bundle_refused(
                            "invalid_private_key",
                            "the bundle holds two private keys",
                        ));
                    }
                }
                other => {
                    return Err(bundle_refused(
                        "invalid_certificate",
                        format!(
                            "a {other} block: a bundle holds CERTIFICATE blocks and one PKCS#8 PRIVATE KEY"
                        ),
                    ));
                }
            }
        } else if let Some((_, block)) = open.as_mut() {
            block.push_str(line);
            block.push('\n');
        }
    }
    if open.is_some() {
        return Err(bundle_refused(
            "invalid_certificate",
            "a PEM block does not end",
        ));
    }
    let key = key.ok_or_else(|| {
        bundle_refused(
            "invalid_private_key",
            "the bundle holds no PRIVATE KEY block (PKCS#8)",
        )
    })?;
    if chain.is_empty() {
        return Err(bundle_refused(
            "invalid_certificate",
            "the bundle holds no CERTIFICATE block",
        ));
    }
    Ok((chain, key))
}

/// Puts a checked chain and key in place for certificate `id`, binds it to the web domain's
/// vhost and records the row. Shared by ensure and renew.
#[allow(clippy::too_many_arguments)]
fn bind(
    ctx: &mut Ctx,
    account: &Hex32,
    id: &Hex32,
    web_domain: &Hex32,
    (source, blob): (CertificateSource, Option<&BlobId>),
    (domain, aliases): (&DomainName, &[String]),
    (chain, key): (&str, &str),
    issued: bool,
) -> Result<CertificateResult, OpError> {
    let checked = check_chain(chain, key, domain, aliases, source_field(source))?;
    install_files(ctx, id, key, chain)?;
    let mut data = json!({
        "web_domain": web_domain,
        "source": source.as_str(),
        "not_after": checked.not_after,
        "fingerprint_sha256": checked.fingerprint,
    });
    if let Some(blob) = blob {
        // The blob's name (a digest), so a replayed request converges without the blob.
        data["blob"] = json!(blob);
    }
    // Rewritten and tested even when the text is the same: Apache reloads the new chain.
    web_domain::sync_vhost(
        ctx,
        account,
        web_domain,
        VhostChange::Certificate(id, Some(&data)),
    )?;
    crash::point("certificate.after_vhost");
    ctx.set_resource(data);
    Ok(CertificateResult {
        state: Presence::Present,
        domain: Some(domain.to_string()),
        covered: checked.covered,
        uncovered: checked.uncovered,
        not_after: Some(checked.not_after),
        fingerprint_sha256: Some(checked.fingerprint),
        issued,
    })
}

/// The row of certificate `id` when `account` owns it.
fn owned_row(
    ctx: &Ctx,
    account: &Hex32,
    id: &Hex32,
) -> Result<Option<store::ResourceRow>, OpError> {
    match ctx
        .state
        .resource(Certificate::NAME, id)
        .map_err(store_error)?
    {
        Some(row) if row.owner == Owner::Tenant(account.clone()) => Ok(Some(row)),
        Some(_) => Err(refused(
            "certificate_conflict",
            format!("certificate {id} belongs to another account"),
        )),
        None => Ok(None),
    }
}

impl Apply<Ctx> for EnsureCertificate {
    fn apply(ctx: &mut Ctx, req: &EnsureCertificateRequest) -> Result<CertificateResult, OpError> {
        let (domain, aliases) = domain_names(ctx, &req.account, &req.web_domain)?;
        for row in ctx
            .state
            .resources_of_family(Certificate::NAME)
            .map_err(store_error)?
        {
            if row.resource_id != req.id && row.data["web_domain"] == req.web_domain.as_str() {
                return Err(refused(
                    "certificate_conflict",
                    format!(
                        "resource.web_domain: certificate {} is already bound to web domain {}",
                        row.resource_id, req.web_domain
                    ),
                ));
            }
        }
        match (req.source, &req.blob) {
            (CertificateSource::Bundle, None) => {
                return Err(bundle_refused(
                    "blob_required",
                    "a bundle certificate names its uploaded blob",
                ));
            }
            (CertificateSource::Acme, Some(_)) => {
                return Err(bundle_refused(
                    "blob_not_expected",
                    "an ACME certificate takes no blob",
                ));
            }
            _ => {}
        }
        let previous = owned_row(ctx, &req.account, &req.id)?;
        let names: Vec<String> = std::iter::once(domain.to_string())
            .chain(aliases.iter().cloned())
            .collect();
        let (chain_now, key_now) = in_place(ctx, &req.id)?;
        // Converged already: the same domain, source (and blob), and a chain in place that
        // matches its key; an ACME one also covers every name and is not due.
        let same = previous.as_ref().is_some_and(|row| {
            row.data["web_domain"] == req.web_domain.as_str()
                && row.data["source"] == req.source.as_str()
                && req
                    .blob
                    .as_ref()
                    .is_none_or(|blob| row.data["blob"] == blob.as_str())
        });
        let keep = match (&chain_now, &key_now) {
            (Some(chain), Some(key))
                if same
                    && (req.source == CertificateSource::Bundle
                        || !renewal_due(Some(chain), &names, unix_now()))
                    && check_chain(chain, key, &domain, &aliases, source_field(req.source))
                        .is_ok() =>
            {
                Some((chain.clone(), key.clone()))
            }
            _ => None,
        };
        let issued = keep.is_none();
        let (chain, key) = match (keep, req.source, &req.blob) {
            (Some(pair), _, _) => pair,
            (None, CertificateSource::Bundle, Some(blob)) => {
                let (chain, key) = read_bundle(ctx, blob)?;
                // Checked before anything changes: a refused bundle leaves everything as it was.
                check_chain(&chain, &key, &domain, &aliases, "resource.blob")?;
                (chain, key)
            }
            _ => {
                let key = key_for(key_now)?;
                (issue_chain(ctx, &names, &key)?, key)
            }
        };
        // A certificate that moves to another domain leaves its old vhost first.
        if let Some(old) = &previous
            && let Some(old_domain) = old.data["web_domain"]
                .as_str()
                .and_then(|s| s.parse::<Hex32>().ok())
            && old_domain != req.web_domain
        {
            web_domain::sync_vhost(
                ctx,
                &req.account,
                &old_domain,
                VhostChange::Certificate(&req.id, None),
            )?;
        }
        bind(
            ctx,
            &req.account,
            &req.id,
            &req.web_domain,
            (req.source, req.blob.as_ref()),
            (&domain, &aliases),
            (&chain, &key),
            issued,
        )
    }
}

impl Apply<Ctx> for RenewCertificate {
    fn apply(ctx: &mut Ctx, req: &CertificateRef) -> Result<CertificateResult, OpError> {
        let Some(row) = owned_row(ctx, &req.account, &req.id)? else {
            return Err(refused(
                "certificate_missing",
                format!(
                    "resource.id: certificate {} does not exist for account {}",
                    req.id, req.account
                ),
            ));
        };
        let source: CertificateSource = serde_json::from_value(row.data["source"].clone())
            .map_err(|_| OpError::permanent("state_corrupt", "a recorded source does not parse"))?;
        if source != CertificateSource::Acme {
            return Err(refused(
                "certificate_not_renewable",
                format!(
                    "resource.id: certificate {} came from a {} source; only ACME certificates are renewed by the node",
                    req.id,
                    source.as_str()
                ),
            ));
        }
        let web_domain: Hex32 = row.data["web_domain"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| {
                OpError::permanent("state_corrupt", "a recorded domain id does not parse")
            })?;
        let (domain, aliases) = domain_names(ctx, &req.account, &web_domain)?;
        let names: Vec<String> = std::iter::once(domain.to_string())
            .chain(aliases.iter().cloned())
            .collect();
        let (_, key_now) = in_place(ctx, &req.id)?;
        let key = key_for(key_now)?;
        let chain = issue_chain(ctx, &names, &key)?;
        bind(
            ctx,
            &req.account,
            &req.id,
            &web_domain,
            (source, None),
            (&domain, &aliases),
            (&chain, &key),
            true,
        )
    }
}

impl Apply<Ctx> for RemoveCertificate {
    fn apply(ctx: &mut Ctx, req: &CertificateRef) -> Result<CertificateResult, OpError> {
        match owned_row(ctx, &req.account, &req.id)? {
            Some(row) => unbind_and_delete(ctx, &req.account, &req.id, &row.data)?,
            None => {
                // Nothing recorded: files a crash left behind still go.
                let (chain, key) = certificate_files(ctx, &req.id);
                for path in [chain, key] {
                    ctx.provider.remove_config(&path).map_err(provider_error)?;
                }
            }
        }
        ctx.forget_row();
        Ok(CertificateResult {
            state: Presence::Absent,
            domain: None,
            covered: Vec::new(),
            uncovered: Vec::new(),
            not_after: None,
            fingerprint_sha256: None,
            issued: false,
        })
    }
}

/// One recorded certificate as observed: the row's source and domain, the chain in place.
fn observe_one(ctx: &Ctx, row: &store::ResourceRow, now: i64) -> ObservedCertificate {
    let web_domain: Option<Hex32> = row.data["web_domain"].as_str().and_then(|s| s.parse().ok());
    let domain_row = web_domain.as_ref().and_then(|d| {
        ctx.state
            .resource(web_domain::WebDomain::NAME, d)
            .ok()
            .flatten()
    });
    let names: Vec<String> = domain_row
        .iter()
        .flat_map(|r| {
            std::iter::once(r.data["domain"].clone())
                .chain(r.data["aliases"].as_array().cloned().unwrap_or_default())
        })
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    let source =
        serde_json::from_value(row.data["source"].clone()).unwrap_or(CertificateSource::Acme);
    let (chain_path, _) = certificate_files(ctx, &row.resource_id);
    let chain = ctx
        .provider
        .read_config(&chain_path)
        .ok()
        .flatten()
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    let leaf = chain.as_deref().and_then(|c| acme::parse_chain(c).ok());
    ObservedCertificate {
        id: row.resource_id.clone(),
        web_domain: web_domain.unwrap_or_else(|| row.resource_id.clone()),
        domain: names.first().cloned(),
        source,
        not_after: leaf.as_ref().map(|(l, _)| l.not_after),
        fingerprint_sha256: leaf.as_ref().map(|(l, _)| hex(&Sha256::digest(&l.der))),
        renewal_due: source == CertificateSource::Acme
            && renewal_due(chain.as_deref(), &names, now),
    }
}

impl Apply<Ctx> for ObserveCertificates {
    fn apply(ctx: &mut Ctx, req: &AccountRef) -> Result<ObservedCertificates, OpError> {
        crate::account::account_info(ctx, &req.id)?;
        let now = unix_now();
        let rows = ctx
            .state
            .resources_of(&Owner::Tenant(req.id.clone()), Certificate::NAME)
            .map_err(store_error)?;
        Ok(ObservedCertificates {
            certificates: rows.iter().map(|r| observe_one(ctx, r, now)).collect(),
        })
    }
}

/// The renewal requests the runner's `renew_certificates` step queues: one per ACME
/// certificate that is due and has no job queued or running, with a request id derived from
/// the certificate, the chain in place and `day`: the same request is admitted once, so a
/// renewal that failed (the chain in place stays) is made again the next day.
pub fn renewal_requests(ctx: &Ctx, day: i64) -> Result<Vec<Value>, OpError> {
    let now = unix_now();
    let mut out = Vec::new();
    for row in ctx
        .state
        .resources_of_family(Certificate::NAME)
        .map_err(store_error)?
    {
        let Owner::Tenant(account) = &row.owner else {
            continue;
        };
        let seen = observe_one(ctx, &row, now);
        if !seen.renewal_due
            || ctx
                .state
                .pending_job(Certificate::NAME, &row.resource_id)
                .map_err(store_error)?
        {
            continue;
        }
        let in_place = seen.fingerprint_sha256.as_deref().unwrap_or("none");
        let digest = Sha256::digest(format!(
            "renew_certificate\0{}\0{in_place}\0{day}",
            row.resource_id
        ));
        let request_id = hex(&digest[..16]);
        out.push(json!({
            "request_id": request_id,
            "operation": RenewCertificate::NAME,
            "resource": {"id": row.resource_id, "account": account},
        }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_cover_one_label() {
        assert!(name_covers("shop.example.com", "shop.example.com"));
        assert!(name_covers("*.example.com", "shop.example.com"));
        assert!(!name_covers("*.example.com", "example.com"));
        assert!(!name_covers("*.example.com", "a.shop.example.com"));
        assert!(!name_covers("other.example.com", "shop.example.com"));
    }

    #[test]
    fn renewal_is_due_near_expiry_for_missing_names_and_for_garbage() {
        let names = vec![
            "shop.example.com".to_owned(),
            "www.shop.example.com".to_owned(),
        ];
        let key = acme::generate_key().unwrap();
        let chain = acme::issue_locally(&names, &key, SIM_VALIDITY).unwrap();
        let now = unix_now();
        assert!(!renewal_due(Some(&chain), &names, now));
        assert!(renewal_due(Some(&chain), &names, now + 61 * 24 * 3600));
        let more = vec!["shop.example.com".to_owned(), "new.example.com".to_owned()];
        assert!(renewal_due(Some(&chain), &more, now));
        assert!(renewal_due(Some("garbage"), &names, now));
        assert!(renewal_due(None, &names, now));
        let domain: DomainName = "shop.example.com".parse().unwrap();
        let checked = check_chain(&chain, &key, &domain, &names[1..], "resource.source").unwrap();
        assert_eq!(checked.covered, names);
        let other = acme::generate_key().unwrap();
        let err = check_chain(&chain, &other, &domain, &[], "resource.source").unwrap_err();
        assert_eq!(err.code, "certificate_key_mismatch");
        assert!(
            err.message.starts_with("resource.source:"),
            "{}",
            err.message
        );
    }
}
