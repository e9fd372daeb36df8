//! The simulated certificate authority: what issues a tenant's certificate on a simulated
//! machine whose node configuration names no ACME CA (a dev node, the tests' histories), in
//! place of an ACME server that could not reach it.
//!
//! It asks for the same HTTP-01 challenge files a real CA would, each placed in the node's
//! challenge directory through the provider, read back and removed, so a vhost that stopped
//! serving them, or a webroot the provider cannot write, fails here too. It then signs the
//! chain with a CA made on the spot, valid from the handler's now for [`SIM_VALIDITY`]. A
//! server has no such authority (`provider::RealMachine`): the packaged binaries hold none of
//! this.

use std::time::Duration;

use provider::{CertificateRequest, IssueError, Provider};
use sha2::{Digest, Sha256};

/// How long a certificate of the simulated CA is valid (a public CA's 90 days).
pub const SIM_VALIDITY: Duration = Duration::from_secs(90 * 24 * 3600);

/// The common name of every simulated CA: what a chain it signed, or a binary holding it,
/// shows.
pub const SIM_CA_NAME: &str = "layerone simulated CA";

/// Why the simulated CA signed nothing.
#[derive(Debug, thiserror::Error)]
pub enum LocalCaError {
    #[error("the certificate key or CSR is unusable")]
    Key(#[source] rcgen::Error),
    #[error("no certificate can be valid from Unix time {0}")]
    Time(i64),
}

/// Issues `request`'s chain after its challenge files were served (see the module
/// documentation).
pub(crate) fn issue(
    provider: &Provider,
    request: &CertificateRequest<'_>,
) -> Result<String, IssueError> {
    let failed = |e: &dyn std::fmt::Display| IssueError::Failed(e.to_string());
    for name in request.names {
        let token = hex(&Sha256::digest(format!("{name}\0{}", request.key_pem)));
        let answer = format!("{token}.simulated");
        let path = request.challenge_dir.join(&token);
        provider
            .write_config_atomic(&path, answer.as_bytes(), 0o644)
            .map_err(|e| failed(&e))?;
        let served = provider.read_config(&path)?;
        provider.remove_config(&path).map_err(|e| failed(&e))?;
        if served.as_deref() != Some(answer.as_bytes()) {
            return Err(IssueError::Failed(format!(
                "the challenge for {name} is not served"
            )));
        }
    }
    let now = request.clock.now_secs();
    issue_locally_at(request.names, request.key_pem, now, SIM_VALIDITY).map_err(|e| failed(&e))
}

/// A chain for `names` and `key_pem` signed by a throw-away CA made on the spot, valid from
/// `now` (Unix seconds: the caller's clock) for `valid_for`: the certificate, then the CA's.
pub fn issue_locally_at(
    names: &[String],
    key_pem: &str,
    now: i64,
    valid_for: Duration,
) -> Result<String, LocalCaError> {
    let ca_key = rcgen::KeyPair::generate().map_err(LocalCaError::Key)?;
    let mut ca_params =
        rcgen::CertificateParams::new(Vec::<String>::new()).map_err(LocalCaError::Key)?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, SIM_CA_NAME);
    let ca_cert = ca_params.self_signed(&ca_key).map_err(LocalCaError::Key)?;
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = rcgen::KeyPair::from_pem(key_pem).map_err(LocalCaError::Key)?;
    let mut params = rcgen::CertificateParams::new(names.to_vec()).map_err(LocalCaError::Key)?;
    let now =
        time::OffsetDateTime::from_unix_timestamp(now).map_err(|_| LocalCaError::Time(now))?;
    params.not_before = now - time::Duration::minutes(1);
    params.not_after = now + valid_for;
    let leaf = params.signed_by(&key, &issuer).map_err(LocalCaError::Key)?;
    Ok(format!("{}{}", leaf.pem(), ca_cert.pem()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
