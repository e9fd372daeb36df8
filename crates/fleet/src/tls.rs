//! The fleet's TLS: its CA and the broker's certificate (made by `layerone fleet init`), the
//! client configuration every node verifies the broker with, the trust a running daemon or
//! fleet service changes under its live connection while the CA is rotated ([`Trust`]), and the
//! pinned check a joining node runs before it sends a byte of its token's credential.

use std::sync::{Arc, RwLock};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    ClientConfig, DigitallySignedStruct, Error as TlsError, RootCertStore, SignatureScheme,
};

use crate::token::sha256_hex;

/// A CA certificate and its key, in PEM.
#[derive(Clone)]
pub struct CaPair {
    pub cert_pem: String,
    pub key_pem: String,
}

impl std::fmt::Debug for CaPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaPair").finish_non_exhaustive()
    }
}

fn ca_params(common_name: &str) -> CertificateParams {
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, common_name);
    params.distinguished_name = dn;
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    params
}

/// A new fleet CA named `common_name` (the fleet's name and its CA's generation).
pub fn create_ca(common_name: &str) -> anyhow::Result<CaPair> {
    let key = KeyPair::generate()?;
    let cert = ca_params(common_name).self_signed(&key)?;
    Ok(CaPair {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

/// A broker's certificate for `names` (DNS names or IP addresses), issued by the CA: the chain
/// (the broker's certificate, then the CA's, so a joining node finds the CA to check its pin
/// against) and the key, in PEM.
pub fn issue_broker_cert(
    ca: &CaPair,
    ca_common_name: &str,
    names: &[String],
) -> anyhow::Result<(String, String)> {
    let ca_key = KeyPair::from_pem(&ca.key_pem)?;
    let issuer = Issuer::new(ca_params(ca_common_name), ca_key);
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(
        DnType::CommonName,
        names.first().map_or("broker", String::as_str),
    );
    params.distinguished_name = dn;
    params.subject_alt_names = names
        .iter()
        .map(|name| match name.parse::<std::net::IpAddr>() {
            Ok(ip) => Ok(SanType::IpAddress(ip)),
            Err(_) => Ok(SanType::DnsName(name.clone().try_into()?)),
        })
        .collect::<Result<_, rcgen::Error>>()?;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![
        rcgen::ExtendedKeyUsagePurpose::ServerAuth,
        rcgen::ExtendedKeyUsagePurpose::ClientAuth,
    ];
    let key = KeyPair::generate()?;
    let cert = params.signed_by(&key, &issuer)?;
    Ok((
        format!("{}{}", cert.pem(), ca.cert_pem),
        key.serialize_pem(),
    ))
}

/// The names (DNS names and IP addresses) the first certificate of a PEM chain is for: what a
/// broker's certificate issued again by another CA must be for.
pub fn cert_names(chain_pem: &str) -> anyhow::Result<Vec<String>> {
    use x509_parser::extensions::GeneralName;
    let (_, pem) = x509_parser::pem::parse_x509_pem(chain_pem.as_bytes())
        .map_err(|e| anyhow::anyhow!("not a PEM certificate: {e}"))?;
    let cert = pem
        .parse_x509()
        .map_err(|e| anyhow::anyhow!("not a certificate: {e}"))?;
    let Some(san) = cert
        .subject_alternative_name()
        .map_err(|e| anyhow::anyhow!("the certificate's names: {e}"))?
    else {
        return Ok(Vec::new());
    };
    san.value
        .general_names
        .iter()
        .map(|name| match name {
            GeneralName::DNSName(dns) => Ok((*dns).to_owned()),
            GeneralName::IPAddress(bytes) => match bytes.len() {
                4 => Ok(std::net::IpAddr::from(<[u8; 4]>::try_from(*bytes)?).to_string()),
                16 => Ok(std::net::IpAddr::from(<[u8; 16]>::try_from(*bytes)?).to_string()),
                n => Err(anyhow::anyhow!("an IP address of {n} bytes")),
            },
            other => Err(anyhow::anyhow!("a name of another kind: {other}")),
        })
        .collect()
}

/// The SHA-256 (hex) of the first certificate of a PEM text: a CA's pin.
pub fn pem_sha256(pem: &str) -> anyhow::Result<String> {
    let der = CertificateDer::from_pem_slice(pem.as_bytes())
        .map_err(|e| anyhow::anyhow!("not a PEM certificate: {e}"))?;
    Ok(sha256_hex(&der))
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Every certificate of PEM texts (a bundle may hold several), in order.
pub fn pem_certs(ca_pems: &[&str]) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let mut out = Vec::new();
    for pem in ca_pems {
        for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
            out.push(cert.map_err(|e| anyhow::anyhow!("reading the fleet CA: {e}"))?);
        }
    }
    Ok(out)
}

/// The SHA-256 (hex) of every certificate of a bundle: the pins of the CAs it trusts.
pub fn bundle_sha256s(ca_pems: &[&str]) -> anyhow::Result<Vec<String>> {
    Ok(pem_certs(ca_pems)?
        .iter()
        .map(|cert| sha256_hex(cert))
        .collect())
}

fn roots(ca_pems: &[&str]) -> anyhow::Result<RootCertStore> {
    let certs = pem_certs(ca_pems)?;
    anyhow::ensure!(!certs.is_empty(), "the fleet's trust holds no CA");
    let mut roots = RootCertStore::empty();
    for cert in certs {
        roots.add(cert)?;
    }
    Ok(roots)
}

/// The configuration every fleet connection verifies the broker with: the fleet's CA(s) only
/// (more than one while the CA is rotated).
pub fn client_config(ca_pems: &[&str]) -> anyhow::Result<ClientConfig> {
    Ok(ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots(ca_pems)?)
        .with_no_client_auth())
}

/// The CAs a long-lived connection trusts, changeable while it runs: every handshake (a
/// reconnection after the broker's certificate changed) verifies against what it holds then.
/// Cloned, it is the same trust.
#[derive(Clone)]
pub struct Trust(Arc<RwLock<TrustState>>);

struct TrustState {
    sha256s: Vec<String>,
    verifier: Arc<WebPkiServerVerifier>,
}

impl std::fmt::Debug for Trust {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Trust").field(&self.sha256s()).finish()
    }
}

impl Trust {
    /// Trusting the CAs of these PEM texts (at least one).
    pub fn new(ca_pems: &[&str]) -> anyhow::Result<Trust> {
        Ok(Trust(Arc::new(RwLock::new(Trust::state(ca_pems)?))))
    }

    fn state(ca_pems: &[&str]) -> anyhow::Result<TrustState> {
        let verifier =
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots(ca_pems)?), provider())
                .build()?;
        Ok(TrustState {
            sha256s: bundle_sha256s(ca_pems)?,
            verifier,
        })
    }

    /// Trusts these CAs from now on, and only them. Returns whether a CA it trusted before is
    /// no longer trusted (a connection verified by it should be made again).
    pub fn set(&self, ca_pems: &[&str]) -> anyhow::Result<bool> {
        let state = Trust::state(ca_pems)?;
        let mut current = self.0.write().unwrap_or_else(|e| e.into_inner());
        let dropped = current
            .sha256s
            .iter()
            .any(|old| !state.sha256s.contains(old));
        *current = state;
        Ok(dropped)
    }

    /// The SHA-256 of every CA it trusts now.
    pub fn sha256s(&self) -> Vec<String> {
        self.0
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .sha256s
            .clone()
    }

    fn verifier(&self) -> Arc<WebPkiServerVerifier> {
        self.0
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .verifier
            .clone()
    }

    /// A client configuration that verifies the broker against this trust as it is at each
    /// handshake.
    pub fn client_config(&self) -> anyhow::Result<ClientConfig> {
        verified_by(Arc::new(CurrentTrust {
            trust: self.clone(),
        }))
    }
}

/// The verifier of [`Trust::client_config`]: webpki's, built from the trust's CAs, looked up
/// at every handshake.
#[derive(Debug)]
struct CurrentTrust {
    trust: Trust,
}

impl ServerCertVerifier for CurrentTrust {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        self.trust.verifier().verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        )
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        self.trust
            .verifier()
            .verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        self.trust
            .verifier()
            .verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.trust.verifier().supported_verify_schemes()
    }
}

/// The configuration a joining node connects with: the broker must present, in its chain, a CA
/// whose SHA-256 is `ca_sha256`, and its certificate must verify against that CA. Anything else
/// ends the handshake, before the client has sent a byte of its credential.
pub fn pinned_client_config(ca_sha256: &str) -> anyhow::Result<ClientConfig> {
    verified_by(Arc::new(PinnedCa {
        pin: ca_sha256.to_owned(),
        provider: provider(),
    }))
}

/// A client configuration whose server certificates `verifier` judges.
fn verified_by(verifier: Arc<dyn ServerCertVerifier>) -> anyhow::Result<ClientConfig> {
    Ok(ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

#[derive(Debug)]
struct PinnedCa {
    pin: String,
    provider: Arc<rustls::crypto::CryptoProvider>,
}

impl ServerCertVerifier for PinnedCa {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        let ca = intermediates
            .iter()
            .find(|cert| sha256_hex(cert) == self.pin)
            .ok_or_else(|| {
                TlsError::General(
                    "the broker's certificate chain holds no CA matching the join token's pin"
                        .into(),
                )
            })?;
        let mut roots = RootCertStore::empty();
        roots
            .add(ca.clone().into_owned())
            .map_err(|e| TlsError::General(format!("the pinned CA is unusable: {e}")))?;
        let inner =
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), self.provider.clone())
                .build()
                .map_err(|e| TlsError::General(format!("the pinned CA is unusable: {e}")))?;
        inner.verify_server_cert(end_entity, &[], server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broker_certificate_issued_again_is_for_the_same_names() {
        let ca = create_ca("t fleet CA 1").unwrap();
        let names = vec![
            "broker.example.net".to_owned(),
            "10.0.0.2".to_owned(),
            "::1".to_owned(),
        ];
        let (chain, _) = issue_broker_cert(&ca, "t fleet CA 1", &names).unwrap();
        assert_eq!(cert_names(&chain).unwrap(), names);
    }

    #[test]
    fn a_trust_says_when_it_stops_trusting_a_ca() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let old = create_ca("t fleet CA 1").unwrap().cert_pem;
        let new = create_ca("t fleet CA 2").unwrap().cert_pem;
        let trust = Trust::new(&[&old]).unwrap();
        assert!(!trust.set(&[&old, &new]).unwrap(), "adding a CA drops none");
        assert_eq!(
            trust.sha256s(),
            vec![pem_sha256(&old).unwrap(), pem_sha256(&new).unwrap()]
        );
        assert!(trust.set(&[&new]).unwrap(), "the old CA is dropped");
        assert_eq!(trust.sha256s(), vec![pem_sha256(&new).unwrap()]);
        assert!(trust.set(&[]).is_err(), "a trust of no CA is refused");
        assert_eq!(trust.sha256s(), vec![pem_sha256(&new).unwrap()]);
    }
}
