//! ACME HTTP-01 for a node's name (docs/design.md section 9), kept apart from the installer so the
//! catalogue's certificate operations can reuse it.
//!
//! The client is `instant-acme` (RFC 8555, async on tokio, hyper + rustls), built with
//! `default-features = false, features = ["hyper-rustls", "ring"]`: ring is the crypto the
//! rest of the workspace already uses, so neither aws-lc-rs (a C/cmake build) nor OpenSSL is
//! pulled in. It was preferred to `acme-lib`/`acme2` (OpenSSL) and to `rustls-acme` (TLS-ALPN
//! on its own listener, which would have to own port 443 instead of Apache).
//!
//! What this crate does: an account (reused from saved credentials when possible), an order
//! for one DNS name, the HTTP-01 key authorization handed to a [`Webroot`] (the caller puts
//! it where Apache serves `/.well-known/acme-challenge/`, and removes it afterwards), a CSR
//! for the caller's key (a key is reused across renewals), and the issued chain. Deciding
//! when to renew ([`needs_renewal`]) and writing the lineage are the caller's.
//!
//! [`probe`]: which certificate a listener presents, read by a handshake with it.

pub mod probe;

use std::path::Path;
use std::time::Duration;

use instant_acme::{
    Account, AccountCredentials, AuthorizationStatus, ChallengeType, Identifier, NewAccount,
    NewOrder, OrderStatus, RetryPolicy,
};

/// Where challenge responses go: `put` before the CA is told to validate, `remove` after.
pub trait Webroot {
    /// Makes `/.well-known/acme-challenge/{token}` answer `key_authorization`.
    fn put(&self, token: &str, key_authorization: &str) -> std::io::Result<()>;
    /// Removes it again (already absent is fine).
    fn remove(&self, token: &str) -> std::io::Result<()>;
}

/// One certificate request.
#[derive(Debug)]
pub struct Request<'a> {
    /// The ACME directory URL.
    pub directory: &'a str,
    /// A PEM file with the root that the ACME server's own HTTPS certificate chains to, for a
    /// private CA (and the tests' pebble); `None` uses the system's roots.
    pub server_root: Option<&'a Path>,
    /// `mailto:` contact, if any.
    pub contact: Option<&'a str>,
    /// The DNS name the certificate is for.
    pub name: &'a str,
    /// More DNS names the same certificate covers (a web domain's aliases); each is
    /// validated over HTTP-01 like `name`.
    pub aliases: &'a [String],
    /// Saved account credentials (JSON), if any: reused when the CA still knows them.
    pub account: Option<&'a str>,
    /// The certificate's private key (PKCS#8 PEM); its public key goes in the CSR.
    pub key_pem: &'a str,
    /// How long the whole exchange may take.
    pub timeout: Duration,
}

/// A certificate the CA issued.
#[derive(Clone, Debug)]
pub struct Issued {
    /// The chain, end-entity first (PEM).
    pub chain_pem: String,
    /// The account credentials to save for next time (JSON; holds the account key).
    pub account: String,
}

#[derive(Debug, thiserror::Error)]
pub enum AcmeError {
    #[error("the ACME exchange with {directory} failed: {message}")]
    Protocol { directory: String, message: String },
    #[error("the ACME exchange did not finish within {0:?}")]
    Timeout(Duration),
    #[error("the CA offered no http-01 challenge for {0}")]
    NoHttpChallenge(String),
    #[error("the order for {name} ended {status}")]
    Order { name: String, status: String },
    #[error("cannot place or remove the challenge response")]
    Webroot(#[source] std::io::Error),
    #[error("the certificate key or CSR is unusable")]
    Key(#[source] rcgen::Error),
    #[error("not a certificate: {0}")]
    Certificate(String),
    #[error("cannot start the async runtime")]
    Runtime(#[source] std::io::Error),
}

impl AcmeError {
    fn protocol(directory: &str) -> impl FnOnce(instant_acme::Error) -> AcmeError + '_ {
        move |e| AcmeError::Protocol {
            directory: directory.to_owned(),
            message: e.to_string(),
        }
    }
}

/// Generates a new certificate key (ECDSA P-256, PKCS#8 PEM).
pub fn generate_key() -> Result<String, AcmeError> {
    Ok(rcgen::KeyPair::generate()
        .map_err(AcmeError::Key)?
        .serialize_pem())
}

/// Runs the whole HTTP-01 exchange for `req.name` and returns the chain. Blocking: it runs
/// its own single-threaded runtime, bounded by `req.timeout`.
pub fn issue(req: &Request<'_>, webroot: &dyn Webroot) -> Result<Issued, AcmeError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(AcmeError::Runtime)?;
    let mut placed = Vec::new();
    let result = runtime.block_on(async {
        match tokio::time::timeout(req.timeout, exchange(req, webroot, &mut placed)).await {
            Ok(result) => result,
            Err(_) => Err(AcmeError::Timeout(req.timeout)),
        }
    });
    for token in &placed {
        if let Err(e) = webroot.remove(token) {
            tracing::warn!(token, error = %e, "could not remove a challenge response");
        }
    }
    result
}

async fn exchange(
    req: &Request<'_>,
    webroot: &dyn Webroot,
    placed: &mut Vec<String>,
) -> Result<Issued, AcmeError> {
    let proto = || AcmeError::protocol(req.directory);
    let builder = || match req.server_root {
        Some(root) => Account::builder_with_root(root),
        None => Account::builder(),
    };
    let saved: Option<AccountCredentials> = req.account.and_then(|a| serde_json::from_str(a).ok());
    let (account, credentials) = match saved {
        Some(credentials) => {
            let again: AccountCredentials = serde_json::from_str(req.account.unwrap_or_default())
                .map_err(|e| AcmeError::Protocol {
                directory: req.directory.to_owned(),
                message: e.to_string(),
            })?;
            match builder()
                .map_err(proto())?
                .from_credentials(credentials)
                .await
            {
                Ok(account) => (account, again),
                Err(e) => {
                    tracing::info!(error = %e, "saved ACME account not usable; creating one");
                    create_account(req, builder().map_err(proto())?).await?
                }
            }
        }
        None => create_account(req, builder().map_err(proto())?).await?,
    };

    let names: Vec<String> = std::iter::once(req.name.to_owned())
        .chain(req.aliases.iter().cloned())
        .collect();
    let identifiers: Vec<Identifier> = names.iter().cloned().map(Identifier::Dns).collect();
    let mut order = account
        .new_order(&NewOrder::new(&identifiers))
        .await
        .map_err(proto())?;
    let mut authorizations = order.authorizations();
    while let Some(result) = authorizations.next().await {
        let mut authz = result.map_err(proto())?;
        match authz.status {
            AuthorizationStatus::Pending => {}
            AuthorizationStatus::Valid => continue,
            other => {
                return Err(AcmeError::Order {
                    name: req.name.to_owned(),
                    status: format!("with an authorization {other:?}"),
                });
            }
        }
        let mut challenge = authz
            .challenge(ChallengeType::Http01)
            .ok_or_else(|| AcmeError::NoHttpChallenge(req.name.to_owned()))?;
        let token = challenge.token.clone();
        webroot
            .put(&token, challenge.key_authorization().as_str())
            .map_err(AcmeError::Webroot)?;
        placed.push(token);
        challenge.set_ready().await.map_err(proto())?;
    }
    let retries = RetryPolicy::new().timeout(req.timeout);
    let status = order.poll_ready(&retries).await.map_err(proto())?;
    if status != OrderStatus::Ready {
        return Err(AcmeError::Order {
            name: req.name.to_owned(),
            status: format!("{status:?}"),
        });
    }
    let key = rcgen::KeyPair::from_pem(req.key_pem).map_err(AcmeError::Key)?;
    let mut params = rcgen::CertificateParams::new(names).map_err(AcmeError::Key)?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    let csr = params.serialize_request(&key).map_err(AcmeError::Key)?;
    order.finalize_csr(csr.der()).await.map_err(proto())?;
    let chain_pem = order.poll_certificate(&retries).await.map_err(proto())?;
    Ok(Issued {
        chain_pem,
        account: serde_json::to_string(&credentials).expect("account credentials serialize"),
    })
}

async fn create_account(
    req: &Request<'_>,
    builder: instant_acme::AccountBuilder,
) -> Result<(Account, AccountCredentials), AcmeError> {
    let contact: Vec<&str> = req.contact.into_iter().collect();
    builder
        .create(
            &NewAccount {
                contact: &contact,
                terms_of_service_agreed: true,
                only_return_existing: false,
            },
            req.directory.to_owned(),
            None,
        )
        .await
        .map_err(AcmeError::protocol(req.directory))
}

/// The first certificate of a PEM chain, parsed.
fn with_leaf<T>(
    chain_pem: &str,
    f: impl FnOnce(&x509_parser::certificate::X509Certificate<'_>) -> T,
) -> Result<T, AcmeError> {
    let (_, pem) = x509_parser::pem::parse_x509_pem(chain_pem.as_bytes())
        .map_err(|e| AcmeError::Certificate(e.to_string()))?;
    let cert = pem
        .parse_x509()
        .map_err(|e| AcmeError::Certificate(e.to_string()))?;
    Ok(f(&cert))
}

/// What the catalogue's certificate operations check in a chain's end-entity certificate.
#[derive(Clone, Debug)]
pub struct Leaf {
    /// The certificate itself (DER), for its fingerprint.
    pub der: Vec<u8>,
    /// Its SubjectPublicKeyInfo (DER), compared with the private key's.
    pub public_key_der: Vec<u8>,
    /// Its DNS subject alternative names, as written (a wildcard keeps its `*.`).
    pub dns_names: Vec<String>,
    pub not_before: i64,
    pub not_after: i64,
}

/// Parses every PEM block of `chain_pem` as a certificate (end-entity first) and returns the
/// first one's details and how many certificates the chain holds.
pub fn parse_chain(chain_pem: &str) -> Result<(Leaf, usize), AcmeError> {
    let mut leaf = None;
    let mut count = 0usize;
    for pem in x509_parser::pem::Pem::iter_from_buffer(chain_pem.as_bytes()) {
        let pem = pem.map_err(|e| AcmeError::Certificate(e.to_string()))?;
        if pem.label != "CERTIFICATE" {
            return Err(AcmeError::Certificate(format!(
                "a {} block in a certificate chain",
                pem.label
            )));
        }
        let cert = pem
            .parse_x509()
            .map_err(|e| AcmeError::Certificate(e.to_string()))?;
        count += 1;
        if leaf.is_none() {
            let dns_names = cert
                .subject_alternative_name()
                .ok()
                .flatten()
                .map(|san| {
                    san.value
                        .general_names
                        .iter()
                        .filter_map(|g| match g {
                            x509_parser::extensions::GeneralName::DNSName(d) => {
                                Some(d.to_ascii_lowercase())
                            }
                            _ => None,
                        })
                        .collect()
                })
                .unwrap_or_default();
            leaf = Some(Leaf {
                der: pem.contents.clone(),
                public_key_der: cert.public_key().raw.to_vec(),
                dns_names,
                not_before: cert.validity().not_before.timestamp(),
                not_after: cert.validity().not_after.timestamp(),
            });
        }
    }
    leaf.map(|l| (l, count))
        .ok_or_else(|| AcmeError::Certificate("no certificate in the chain".into()))
}

/// The SubjectPublicKeyInfo (DER) of a PKCS#8 PEM private key.
pub fn key_public_der(key_pem: &str) -> Result<Vec<u8>, AcmeError> {
    let key = rcgen::KeyPair::from_pem(key_pem).map_err(AcmeError::Key)?;
    Ok(rcgen::PublicKeyData::subject_public_key_info(&key))
}

/// When the chain's end-entity certificate stops being valid (Unix seconds).
pub fn not_after(chain_pem: &str) -> Result<i64, AcmeError> {
    with_leaf(chain_pem, |c| c.validity().not_after.timestamp())
}

/// Whether the end-entity certificate is self-signed (the install-time placeholder).
pub fn is_self_signed(chain_pem: &str) -> Result<bool, AcmeError> {
    with_leaf(chain_pem, |c| c.subject() == c.issuer())
}

/// Whether the end-entity certificate names `name` among its DNS subject alternative names.
pub fn covers(chain_pem: &str, name: &str) -> Result<bool, AcmeError> {
    with_leaf(chain_pem, |c| {
        c.subject_alternative_name()
            .ok()
            .flatten()
            .is_some_and(|san| {
                san.value.general_names.iter().any(|g| {
                    matches!(g, x509_parser::extensions::GeneralName::DNSName(d) if d.eq_ignore_ascii_case(name))
                })
            })
    })
}

/// Whether the certificate should be replaced now: it is the self-signed placeholder, or it
/// expires within `before` of `now` (Unix seconds), or it does not cover `name`.
pub fn needs_renewal(
    chain_pem: &str,
    name: &str,
    now: i64,
    before: Duration,
) -> Result<bool, AcmeError> {
    with_leaf(chain_pem, |c| {
        let expires = c.validity().not_after.timestamp();
        let covers = c
            .subject_alternative_name()
            .ok()
            .flatten()
            .is_some_and(|san| {
                san.value.general_names.iter().any(|g| {
                    matches!(g, x509_parser::extensions::GeneralName::DNSName(d) if d.eq_ignore_ascii_case(name))
                })
            });
        c.subject() == c.issuer() || !covers || expires - now < before.as_secs() as i64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn self_signed(name: &str) -> String {
        rcgen::generate_simple_self_signed(vec![name.to_owned()])
            .unwrap()
            .cert
            .pem()
    }

    #[test]
    fn a_placeholder_needs_renewal_and_its_expiry_is_read() {
        let pem = self_signed("node1.example.test");
        assert!(is_self_signed(&pem).unwrap());
        let expires = not_after(&pem).unwrap();
        // rcgen's default validity ends in 4096.
        assert!(expires > 4_000_000_000);
        assert!(needs_renewal(&pem, "node1.example.test", 0, Duration::from_secs(1)).unwrap());
        assert!(not_after("garbage").is_err());
    }

    #[test]
    fn a_chain_is_parsed_and_its_key_compared() {
        let certified = rcgen::generate_simple_self_signed(vec!["a.example.test".into()]).unwrap();
        let chain = format!("{}{}", certified.cert.pem(), certified.cert.pem());
        let (leaf, count) = parse_chain(&chain).unwrap();
        assert_eq!(count, 2);
        assert_eq!(leaf.dns_names, ["a.example.test"]);
        let key = certified.signing_key.serialize_pem();
        assert_eq!(key_public_der(&key).unwrap(), leaf.public_key_der);
        let other = generate_key().unwrap();
        assert_ne!(key_public_der(&other).unwrap(), leaf.public_key_der);
        assert!(parse_chain(&key).is_err(), "a key is not a chain");
        assert!(parse_chain("").is_err());
    }

    #[test]
    fn a_generated_key_signs_a_csr_for_the_name() {
        let key = generate_key().unwrap();
        let pair = rcgen::KeyPair::from_pem(&key).unwrap();
        let params = rcgen::CertificateParams::new(vec!["node1.example.test".into()]).unwrap();
        assert!(!params.serialize_request(&pair).unwrap().der().is_empty());
    }
}
