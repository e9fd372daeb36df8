//! Issuance over ACME HTTP-01: the CA named by the node configuration's `[acme]` table, the
//! challenge responses as files in the node's webroot; without that table, the certificate
//! authority the machine has of its own (`provider::Machine::issue_certificate`): none on a
//! server, a throw-away CA that asks for the same challenge files on a simulated one.

use std::path::PathBuf;
use std::time::Duration;

use provider::{CertificateRequest, IssueError};
use registry::OpError;
use serde::Deserialize;

use super::{ACME_ACCOUNT, ACME_WEBROOT, NODE_CONFIG, challenge_dir};
use crate::context::{Ctx, Service, provider_error};

/// How long one ACME exchange may take.
const ACME_TIMEOUT: Duration = Duration::from_secs(90);

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

/// The key `key` of the node's configuration (the installer's file; the other tables and keys
/// are the installer's to check): `None` when there is no such file, on a node never
/// installed (a simulated one), or no such key; a file or a value that does not parse is
/// `node_config_invalid`.
pub fn node_setting<T: serde::de::DeserializeOwned>(
    ctx: &Ctx,
    key: &str,
) -> Result<Option<T>, OpError> {
    let invalid = |message: String| {
        OpError::permanent(
            "node_config_invalid",
            format!("{NODE_CONFIG} does not parse: {message}"),
        )
    };
    let Some(bytes) = ctx
        .provider
        .read_config(&ctx.provider.sysconf(NODE_CONFIG))
        .map_err(provider_error)?
    else {
        return Ok(None);
    };
    let mut table: toml::Table =
        toml::from_str(&String::from_utf8_lossy(&bytes)).map_err(|e| invalid(e.message().to_owned()))?;
    table
        .remove(key)
        .map(|value| value.try_into().map_err(|e: toml::de::Error| invalid(e.message().to_owned())))
        .transpose()
}

/// The node configuration's `[acme]` table, if there is one.
pub fn acme_settings(ctx: &Ctx) -> Result<Option<AcmeSettings>, OpError> {
    node_setting(ctx, "acme")
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
/// CA, or without one, from the machine's own authority (a simulated machine's throw-away CA;
/// a server has none, and says `acme_not_configured`).
pub(super) fn issue_chain(
    ctx: &mut Ctx,
    names: &[String],
    key_pem: &str,
) -> Result<String, OpError> {
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
        None => {
            let challenges = challenge_dir(ctx);
            let request = CertificateRequest {
                names,
                key_pem,
                challenge_dir: &challenges,
                clock: ctx.clock(),
            };
            ctx.provider
                .machine()
                .issue_certificate(&ctx.provider, &request)
                .map_err(|e| match e {
                    IssueError::NoAuthority => OpError::permanent(
                        "acme_not_configured",
                        format!(
                            "resource.source: ACME needs an [acme] table (directory, email, server_root) in {NODE_CONFIG}"
                        ),
                    ),
                    IssueError::Provider(e) => provider_error(e),
                    IssueError::Failed(reason) => acme_failed(reason),
                })
        }
    }
}

/// A key in place that loads, or a new one.
pub(super) fn key_for(existing: Option<String>) -> Result<String, OpError> {
    match existing {
        Some(key) if acme::key_public_der(&key).is_ok() => Ok(key),
        _ => acme::generate_key().map_err(|e| {
            OpError::permanent("key_generation_failed", format!("resource.source: {e}"))
        }),
    }
}
