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
//!   ahead of the document root, redirects and suspension (`vhost::render_vhost`). Without
//!   an `[acme]` table the machine's own authority issues the chain
//!   (`provider::Machine::issue_certificate`, given the handler clock): a server has none
//!   (`acme_not_configured`); a simulated one (`crates/simulator`) a throw-away CA, after the
//!   same challenge files were placed and removed.
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
//! HTTPS virtual host using them (the vhost owner, `crate::vhost`, renders it from the
//! certificate's row), checked with Apache's
//! configuration test like every vhost. One certificate per web domain. When the web domain is
//! named or aliased `mail.<domain>` for one of the account's mail domains, the mail host's SNI
//! files (`crate::mail_hosts`) and that domain's clients' settings (`crate::mail_clients`)
//! follow too, Postfix and Dovecot reloaded.
//!
//! `ensure_certificate` converges: a certificate already in place for the same names and
//! not due for renewal is kept (so `rebuild_account` replaying it issues nothing);
//! `renew_certificate` forces a new chain. "Now" (valid now, due for renewal, the simulated
//! CA's validity) is the handler context's clock ([`Ctx::clock`]), the runner's. The runner's
//! `renew_certificates` step queues a `renew_certificate` job for each ACME certificate within
//! [`RENEW_BEFORE`] of expiry.
//!
//! One part per file: the chain and key checks (`chain`), issuance over ACME
//! (`issuance`), uploaded bundles (`bundle`), the files and their binding to the web
//! domain's vhost (`binding`: `ensure_certificate`, `renew_certificate`,
//! `remove_certificate`), what is in place (`observation`: `observe_certificates`, the
//! renewals the runner queues) and which certificate its listeners present (`listeners`:
//! checked after the batch that put a chain in place, a stale one restarted, and by the drift
//! check).

pub use declarations::certificate::*;

crash::points! {
    AFTER_UNBIND = "certificate.after_unbind",
    AFTER_KEY = "certificate.after_key",
    AFTER_CHAIN = "certificate.after_chain",
    AFTER_VHOST = "certificate.after_vhost",
}

mod binding;
mod bundle;
mod chain;
mod issuance;
pub mod listeners;
mod observation;

pub use chain::name_covers;
pub use issuance::{AcmeSettings, acme_settings, node_setting};
pub use observation::renewal_requests;

use std::path::PathBuf;
use std::time::Duration;

use registry::types::Hex32;
use registry::{Aspects, BlobId, Content, Derive, Derived, Family, Of, OpError, Operation, Owner, Purge, RowType};
use serde::{Deserialize, Serialize};
use store::StoredRow;

use binding::unbind_and_delete;

use crate::context::{Ctx, provider_error, store_error};
use crate::vhost;
use crate::web_domain::WebDomainRow;

/// A certificate as stored: the web domain (by resource id) it is bound to, where it came
/// from, when it expires and its SHA-256 fingerprint (rows of the first bundle
/// certificates have none), and for a bundle the name of its blob. Never a key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CertificateRow {
    pub web_domain: Hex32,
    pub source: CertificateSource,
    pub not_after: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint_sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<BlobId>,
}

impl StoredRow for CertificateRow {
    const FAMILY: &'static str = Certificate::NAME;
    /// A renewal replaces what an issuance recorded of the certificate it serves.
    const FIELD_OWNERS: registry::FieldOwners = &[
        ("not_after", &[EnsureCertificate::NAME, RenewCertificate::NAME]),
        ("fingerprint_sha256", &[EnsureCertificate::NAME, RenewCertificate::NAME]),
    ];
}

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

/// The most a chain may hold, in bytes and in certificates.
pub const MAX_CHAIN_BYTES: usize = 64 * 1024;

pub const MAX_CHAIN_CERTIFICATES: usize = 8;

/// The most a private key may hold, in bytes (a 8192-bit RSA key in PKCS#8 PEM is ~6.5 KiB).
pub const MAX_KEY_BYTES: usize = 16 * 1024;

/// The most a bundle blob may hold: a chain and a key at their largest.
pub const MAX_BUNDLE_BYTES: usize = MAX_CHAIN_BYTES + MAX_KEY_BYTES;

impl Purge<Ctx> for Certificate {
    const ROW: Option<RowType> = Some(store::row_type::<CertificateRow>());

    /// Unbinds the account's certificates from their vhosts, then removes their files and
    /// rows. Runs before `web_domain`'s purge (registered later), so every vhost still passes
    /// the configuration test while files go.
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let rows = ctx
            .view()
            .of_account::<CertificateRow>(account)
            .map_err(store_error)?;
        ctx.drop_rows_of::<CertificateRow>(account);
        for stored in &rows {
            unbind_and_delete(ctx, account, &stored.id, &stored.row)?;
        }
        if !rows.is_empty() {
            ctx.forget_rows_of::<CertificateRow>(account)?;
        }
        Ok(())
    }
}

const CHAIN_FILE: Aspects = Aspects::new(
    CERTIFICATE_CHAIN_MISSING,
    CERTIFICATE_CHAIN_MISSING,
);
const KEY_FILE: Aspects = Aspects::new(
    CERTIFICATE_KEY_MISSING,
    CERTIFICATE_KEY_MISSING,
);
const PAIR: Aspects = Aspects::new(
    CERTIFICATE_DIFFERS,
    CERTIFICATE_DIFFERS,
);

impl Derive<Ctx> for Certificate {
    /// Each certificate's chain and key files, and that they are still a pair for the web
    /// domain (`check_pair`: what `ensure_certificate` requires to keep them; their validity
    /// in time is the renewal's business), and the vhost of its domain (its HTTPS virtual
    /// host, reported under the web domain). The chain's bytes are not derived from
    /// state.db: a renewal or a rebuild's new chain is as good as the recorded one.
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        let mut items =
            vhost::derived_vhosts::<CertificateRow>(ctx, |stored| &stored.row.web_domain)?;
        for stored in ctx.view().all::<CertificateRow>().map_err(store_error)? {
            let of = Of::new(&stored.id, &stored.owner);
            let (chain_path, key_path) = certificate_files(ctx, &stored.id);
            let read = |path: &PathBuf| ctx.provider.read_config(path).map_err(provider_error);
            let (chain, key) = (read(&chain_path)?, read(&key_path)?);
            let present = |bytes: &Option<Vec<u8>>| match bytes {
                Some(_) => Content::Present,
                None => Content::Absent,
            };
            items.push(Derived::path(
                of.clone(),
                chain_path,
                Content::Present,
                present(&chain),
                CHAIN_FILE,
            ));
            items.push(Derived::path(
                of.clone(),
                key_path,
                Content::Present,
                present(&key),
                KEY_FILE,
            ));
            let domain = match &stored.owner {
                Owner::Tenant(account) => ctx
                    .view()
                    .get_owned::<WebDomainRow>(account, &stored.row.web_domain)
                    .map_err(store_error)?,
                Owner::Node => None,
            };
            if let (Some(chain), Some(key), Some(domain)) = (chain, key, domain) {
                let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
                let expected = format!("a key and a chain naming {}", domain.domain);
                let actual = match chain::check_pair(&text(chain), &text(key), &domain.domain, "") {
                    Ok(_) => expected.clone(),
                    Err(e) => e.message.trim_start_matches(": ").to_owned(),
                };
                items.push(Derived::setting(
                    of,
                    "the chain and key in place",
                    expected,
                    Some(actual),
                    PAIR,
                ));
            }
        }
        items.extend(listeners::derived(ctx)?);
        Ok(items)
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

pub(super) fn refused(code: &'static str, message: String) -> OpError {
    OpError::permanent(code, message)
}

pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
