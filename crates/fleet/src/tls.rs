//! The fleet's TLS: its CA and the broker's certificate (made by `layerone fleet init`), the
//! client configuration every node verifies the broker with, and the pinned check a joining
//! node runs before it sends a byte of its token's credential.

use std::sync::Arc;

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

/// The SHA-256 (hex) of the first certificate of a PEM text: a CA's pin.
pub fn pem_sha256(pem: &str) -> anyhow::Result<String> {
    let der = CertificateDer::from_pem_slice(pem.as_bytes())
        .map_err(|e| anyhow::anyhow!("not a PEM certificate: {e}"))?;
    Ok(sha256_hex(&der))
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The configuration every fleet connection verifies the broker with: the fleet's CA(s) only
/// (more than one while the CA is rotated).
pub fn client_config(ca_pems: &[&str]) -> anyhow::Result<ClientConfig> {
    let mut roots = RootCertStore::empty();
    for pem in ca_pems {
        for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
            roots.add(cert.map_err(|e| anyhow::anyhow!("reading the fleet CA: {e}"))?)?;
        }
    }
    Ok(ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// The configuration a joining node connects with: the broker must present, in its chain, a CA
/// whose SHA-256 is `ca_sha256`, and its certificate must verify against that CA. Anything else
/// ends the handshake, before the client has sent a byte of its credential.
pub fn pinned_client_config(ca_sha256: &str) -> anyhow::Result<ClientConfig> {
    let verifier = PinnedCa {
        pin: ca_sha256.to_owned(),
        provider: provider(),
    };
    Ok(ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
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
