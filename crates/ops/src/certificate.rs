//! The `certificate` family: a TLS certificate bound to one of the account's web domains.
//!
//! The certificate comes as a PEM bundle in the request (certificate chain, end-entity first,
//! and its PKCS#8 private key): the API has no blob upload endpoint yet, so the bundle is a
//! bounded, validated field of the request instead of a blob in `blobs/in`. It is parsed, the
//! key checked to match the certificate, and the certificate checked to cover the domain and
//! to be valid now; each refusal has its own stable code.
//!
//! The chain is written to `/etc/layerone/certificates/<id>.crt` (0644) and the key to
//! `<id>.key` (0600) through the provider, then the web domain's vhost is rewritten with an
//! HTTPS virtual host using them (`web_domain::sync_vhost`), checked with Apache's
//! configuration test like every vhost. One certificate per web domain.

use std::borrow::Cow;
use std::fmt;
use std::path::PathBuf;

use registry::types::{DomainName, Hex32, Presence};
use registry::{Family, Module, OpError, Operation, Owner, Resource, Scope};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::account::store_error;
use crate::context::{Ctx, provider_error};
use crate::web_domain::{self, VhostChange};

/// Where certificate files live (a system path: mapped with `sysconf`).
pub const CERTIFICATE_DIR: &str = "/etc/layerone/certificates";

/// The most a chain may hold, in bytes and in certificates.
pub const MAX_CHAIN_BYTES: usize = 64 * 1024;
pub const MAX_CHAIN_CERTIFICATES: usize = 8;
/// The most a private key may hold, in bytes (a 8192-bit RSA key in PKCS#8 PEM is ~6.5 KiB).
pub const MAX_KEY_BYTES: usize = 16 * 1024;

pub struct Certificate;

impl Family for Certificate {
    const NAME: &'static str = "certificate";
    const MODULE: Module = Module::Web;
    type Context = Ctx;

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

fn text_schema(max: usize, begin: &str) -> Schema {
    json_schema!({
        "type": "string",
        "maxLength": max,
        "pattern": format!("-----BEGIN {begin}-----"),
    })
}

fn check_pem(s: &str, max: usize, begin: &str, what: &str) -> Result<(), String> {
    if s.len() > max {
        return Err(format!("{what} is longer than {max} bytes"));
    }
    if !s
        .bytes()
        .all(|b| b.is_ascii_graphic() || matches!(b, b' ' | b'\n' | b'\r' | b'\t'))
    {
        return Err(format!("{what} must be PEM text (printable ASCII)"));
    }
    if !s.contains(&format!("-----BEGIN {begin}-----")) {
        return Err(format!("{what} has no `-----BEGIN {begin}-----` block"));
    }
    Ok(())
}

/// A PEM certificate chain, end-entity first: at most 64 KiB of printable ASCII with at
/// least one `CERTIFICATE` block (each block is parsed when the job runs).
#[derive(Clone, PartialEq, Eq)]
pub struct PemChain(String);

impl PemChain {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for PemChain {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        check_pem(s, MAX_CHAIN_BYTES, "CERTIFICATE", "a certificate chain")?;
        Ok(PemChain(s.to_owned()))
    }
}

impl fmt::Debug for PemChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PemChain({} bytes)", self.0.len())
    }
}

impl Serialize for PemChain {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for PemChain {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for PemChain {
    fn schema_name() -> Cow<'static, str> {
        "PemChain".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        text_schema(MAX_CHAIN_BYTES, "CERTIFICATE")
    }
}

/// A PKCS#8 PEM private key (`-----BEGIN PRIVATE KEY-----`), at most 16 KiB. Never shown in
/// debug output.
#[derive(Clone, PartialEq, Eq)]
pub struct PemKey(String);

impl PemKey {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for PemKey {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        check_pem(s, MAX_KEY_BYTES, "PRIVATE KEY", "a private key")?;
        Ok(PemKey(s.to_owned()))
    }
}

impl fmt::Debug for PemKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PemKey(..)")
    }
}

impl Serialize for PemKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for PemKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for PemKey {
    fn schema_name() -> Cow<'static, str> {
        "PemKey".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        text_schema(MAX_KEY_BYTES, "PRIVATE KEY")
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureCertificateRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// The web domain whose vhost serves the certificate over HTTPS.
    pub web_domain: Hex32,
    /// The chain, end-entity first; it must cover the web domain's name.
    pub chain: PemChain,
    /// The end-entity certificate's private key.
    pub key: PemKey,
}

impl Resource for EnsureCertificateRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveCertificateRequest {
    pub id: Hex32,
    pub account: Hex32,
}

impl Resource for RemoveCertificateRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CertificateResult {
    pub state: Presence,
    /// The web domain's name the HTTPS vhost serves.
    pub domain: Option<String>,
    /// The web domain's names (name and aliases) the certificate covers.
    pub covered: Vec<String>,
    /// The web domain's aliases it does not cover (served, but browsers will warn).
    pub uncovered: Vec<String>,
    /// When the end-entity certificate stops being valid (Unix seconds).
    pub not_after: Option<i64>,
    /// SHA-256 of the end-entity certificate (DER), lowercase hex.
    pub fingerprint_sha256: Option<String>,
}

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

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// What a checked bundle gives.
struct Checked {
    covered: Vec<String>,
    uncovered: Vec<String>,
    not_after: i64,
    fingerprint: String,
}

fn check_bundle(
    chain: &str,
    key: &str,
    domain: &DomainName,
    aliases: &[String],
) -> Result<Checked, OpError> {
    let (leaf, count) = acme::parse_chain(chain).map_err(|e| {
        refused(
            "invalid_certificate",
            format!("the certificate chain does not parse: {e}"),
        )
    })?;
    if count > MAX_CHAIN_CERTIFICATES {
        return Err(refused(
            "invalid_certificate",
            format!("the chain holds {count} certificates; at most {MAX_CHAIN_CERTIFICATES}"),
        ));
    }
    let public = acme::key_public_der(key).map_err(|e| {
        refused(
            "invalid_private_key",
            format!("the private key is not a usable PKCS#8 key: {e}"),
        )
    })?;
    if public != leaf.public_key_der {
        return Err(refused(
            "certificate_key_mismatch",
            "the private key does not belong to the end-entity certificate".into(),
        ));
    }
    if !leaf
        .dns_names
        .iter()
        .any(|p| name_covers(p, domain.as_str()))
    {
        return Err(refused(
            "certificate_not_covering",
            format!("the certificate names {:?}, not {domain}", leaf.dns_names),
        ));
    }
    let now = unix_now();
    if leaf.not_after <= now || leaf.not_before > now {
        return Err(refused(
            "certificate_not_valid_now",
            format!(
                "the certificate is valid from {} to {} (Unix seconds), not now ({now})",
                leaf.not_before, leaf.not_after
            ),
        ));
    }
    let (covered, uncovered) = std::iter::once(domain.to_string())
        .chain(aliases.iter().cloned())
        .partition(|n| leaf.dns_names.iter().any(|p| name_covers(p, n)));
    let fingerprint = Sha256::digest(&leaf.der)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(Checked {
        covered,
        uncovered,
        not_after: leaf.not_after,
        fingerprint,
    })
}

pub struct EnsureCertificate;

impl Operation for EnsureCertificate {
    const NAME: &'static str = "ensure_certificate";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Serve a web domain over HTTPS with a certificate chain and key (checked to match and cover it)";
    type Family = Certificate;
    type Request = EnsureCertificateRequest;
    type Result = CertificateResult;

    fn example() -> EnsureCertificateRequest {
        EnsureCertificateRequest {
            id: "e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5"
                .parse()
                .expect("valid example"),
            account: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
                .parse()
                .expect("valid example"),
            web_domain: "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
                .parse()
                .expect("valid example"),
            chain: "-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----\n"
                .parse()
                .expect("valid example"),
            key: "-----BEGIN PRIVATE KEY-----\nMIGH...\n-----END PRIVATE KEY-----\n"
                .parse()
                .expect("valid example"),
        }
    }

    fn apply(ctx: &mut Ctx, req: &EnsureCertificateRequest) -> Result<CertificateResult, OpError> {
        let domain_row = web_domain::require_domain(ctx, &req.account, &req.web_domain)?;
        for row in ctx
            .state
            .resources_of_family(Certificate::NAME)
            .map_err(store_error)?
        {
            if row.resource_id != req.id && row.data["web_domain"] == req.web_domain.as_str() {
                return Err(refused(
                    "certificate_conflict",
                    format!(
                        "certificate {} is already bound to web domain {}",
                        row.resource_id, req.web_domain
                    ),
                ));
            }
        }
        let domain: DomainName = domain_row["domain"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| {
                OpError::permanent("state_corrupt", "a recorded domain does not parse")
            })?;
        let aliases: Vec<String> = domain_row["aliases"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(str::to_owned))
            .collect();
        let checked = check_bundle(req.chain.as_str(), req.key.as_str(), &domain, &aliases)?;

        // A certificate that moves to another domain leaves its old vhost first.
        let previous = ctx
            .state
            .resource(Certificate::NAME, &req.id)
            .map_err(store_error)?;
        if let Some(old) = previous
            && old.owner == Owner::Tenant(req.account.clone())
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

        let dir = ctx.provider.sysconf(CERTIFICATE_DIR);
        ctx.provider
            .ensure_dir(&dir, 0o755)
            .map_err(provider_error)?;
        let (chain_path, key_path) = certificate_files(ctx, &req.id);
        // The key first, so the chain on disk never names a key that is not there yet.
        ctx.provider
            .write_config_atomic(&key_path, req.key.as_str().as_bytes(), 0o600)
            .map_err(provider_error)?;
        crash::point("certificate.after_key");
        ctx.provider
            .write_config_atomic(&chain_path, req.chain.as_str().as_bytes(), 0o644)
            .map_err(provider_error)?;
        crash::point("certificate.after_chain");
        let data = json!({
            "web_domain": req.web_domain,
            "source": "bundle",
            "not_after": checked.not_after,
            "fingerprint_sha256": checked.fingerprint,
        });
        web_domain::sync_vhost(
            ctx,
            &req.account,
            &req.web_domain,
            VhostChange::Certificate(&req.id, Some(&data)),
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
        })
    }
}

pub struct RemoveCertificate;

impl Operation for RemoveCertificate {
    const NAME: &'static str = "remove_certificate";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Stop serving a web domain over HTTPS and delete its certificate and key";
    type Family = Certificate;
    type Request = RemoveCertificateRequest;
    type Result = CertificateResult;

    fn example() -> RemoveCertificateRequest {
        RemoveCertificateRequest {
            id: "e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5"
                .parse()
                .expect("valid example"),
            account: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
                .parse()
                .expect("valid example"),
        }
    }

    fn apply(ctx: &mut Ctx, req: &RemoveCertificateRequest) -> Result<CertificateResult, OpError> {
        match ctx
            .state
            .resource(Certificate::NAME, &req.id)
            .map_err(store_error)?
        {
            Some(row) if row.owner == Owner::Tenant(req.account.clone()) => {
                unbind_and_delete(ctx, &req.account, &req.id, &row.data)?;
            }
            Some(_) => {
                return Err(refused(
                    "certificate_missing",
                    format!(
                        "certificate {} does not belong to account {}",
                        req.id, req.account
                    ),
                ));
            }
            None => {
                // Nothing recorded: files a crash left behind still go.
                let (chain, key) = certificate_files(ctx, &req.id);
                for path in [chain, key] {
                    ctx.provider.remove_config(&path).map_err(provider_error)?;
                }
            }
        }
        ctx.forget_resource();
        Ok(CertificateResult {
            state: Presence::Absent,
            domain: None,
            covered: Vec::new(),
            uncovered: Vec::new(),
            not_after: None,
            fingerprint_sha256: None,
        })
    }
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
    fn pem_fields_are_bounded_and_shaped() {
        assert!("x".parse::<PemChain>().is_err());
        assert!("-----BEGIN PRIVATE KEY-----\n".parse::<PemChain>().is_err());
        let big = format!(
            "-----BEGIN CERTIFICATE-----\n{}",
            "A".repeat(MAX_CHAIN_BYTES)
        );
        assert!(big.parse::<PemChain>().is_err());
        assert!(
            "-----BEGIN RSA PRIVATE KEY-----\n"
                .parse::<PemKey>()
                .is_err(),
            "PKCS#1 is refused: PKCS#8 only"
        );
        assert!(
            "-----BEGIN PRIVATE KEY-----\n\u{1b}"
                .parse::<PemKey>()
                .is_err()
        );
        let key: PemKey = "-----BEGIN PRIVATE KEY-----\nAAAA\n".parse().unwrap();
        assert_eq!(format!("{key:?}"), "PemKey(..)");
    }
}
