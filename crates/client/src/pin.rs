//! Certificate pinning (docs/design.md section 9).
//!
//! A node's certificate is self-signed until ACME succeeds, and even then the control plane
//! knows the key it expects, so trust is not delegated to a CA. A pin takes one of two forms:
//!
//! - `spki-sha256:<hex>`: the SHA-256 of the end-entity certificate's SubjectPublicKeyInfo
//!   (its public key and algorithm, DER). A renewal that keeps the key (ACME renewals and
//!   `layerone install` do) leaves it unchanged; only a key rotation changes it.
//! - `<hex>` (or `sha256:<hex>`): the SHA-256 of the certificate's DER, the older form, still
//!   accepted; it changes with every renewal.
//!
//! The verifier accepts the end-entity certificate only if its hash in the pin's form equals
//! the pin. It does not skip the rest of TLS: the handshake signature is still verified
//! against that certificate's public key with ring's algorithms, so a peer that replays the
//! certificate without its private key fails. The comparison happens inside the handshake,
//! before the client writes any header or body.

use std::fmt;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, OtherError, SignatureScheme};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The prefix of a SubjectPublicKeyInfo pin.
pub const SPKI_PREFIX: &str = "spki-sha256:";

/// What a client trusts: one certificate, or one public key whatever certificate carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pin {
    /// SHA-256 of the end-entity certificate's DER.
    Certificate([u8; 32]),
    /// SHA-256 of the end-entity certificate's SubjectPublicKeyInfo (DER).
    Spki([u8; 32]),
}

impl Pin {
    /// The hash of `end_entity` in this pin's form; `None` when the certificate does not parse
    /// far enough to find its public key.
    fn of(&self, end_entity: &CertificateDer<'_>) -> Option<[u8; 32]> {
        match self {
            Pin::Certificate(_) => Some(Sha256::digest(end_entity.as_ref()).into()),
            Pin::Spki(_) => spki_sha256(end_entity),
        }
    }

    fn digest(&self) -> &[u8; 32] {
        match self {
            Pin::Certificate(d) | Pin::Spki(d) => d,
        }
    }

    /// The same form with another digest.
    fn with(&self, digest: [u8; 32]) -> Pin {
        match self {
            Pin::Certificate(_) => Pin::Certificate(digest),
            Pin::Spki(_) => Pin::Spki(digest),
        }
    }
}

/// Canonical text: lowercase hex, with [`SPKI_PREFIX`] for a key pin.
impl fmt::Display for Pin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pin::Certificate(d) => write!(f, "{}", hex::encode(d)),
            Pin::Spki(d) => write!(f, "{SPKI_PREFIX}{}", hex::encode(d)),
        }
    }
}

/// The TLS configuration of a client that trusts only what `pin` names and speaks HTTP/1.1:
/// the one [`crate::NodeClient`] uses, for a connection a caller drives byte by byte.
pub fn client_config(pin: Pin) -> Result<Arc<ClientConfig>, crate::ClientError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| crate::ClientError::Config(format!("TLS configuration: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(PinVerifier::new(pin)))
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(tls))
}

/// The SHA-256 of a certificate's SubjectPublicKeyInfo (the whole DER `SEQUENCE`).
pub fn spki_sha256(cert: &CertificateDer<'_>) -> Option<[u8; 32]> {
    let parsed = webpki::EndEntityCert::try_from(cert).ok()?;
    Some(Sha256::digest(parsed.subject_public_key_info().as_ref()).into())
}

/// Parses a pin: `spki-sha256:` and 64 hex digits (a key pin), or 64 hex digits alone or
/// after `sha256:` (a certificate pin); any case, optionally with `:` separators between the
/// digits (as `openssl x509 -fingerprint -sha256` prints them).
pub fn parse_pin(pin: &str) -> Result<Pin, String> {
    let trimmed = pin.trim();
    let (spki, digits) = match trimmed
        .strip_prefix(SPKI_PREFIX)
        .or_else(|| trimmed.strip_prefix("SPKI-SHA256:"))
    {
        Some(rest) => (true, rest),
        None => (
            false,
            trimmed
                .strip_prefix("sha256:")
                .or_else(|| trimmed.strip_prefix("SHA256:"))
                .unwrap_or(trimmed),
        ),
    };
    let digits: String = digits.chars().filter(|c| *c != ':').collect();
    let mut out = [0u8; 32];
    hex::decode_to_slice(&digits, &mut out).map_err(|_| {
        "a pin is `spki-sha256:` and the SHA-256 of the public key, or the SHA-256 of the certificate: 64 hexadecimal digits".to_owned()
    })?;
    Ok(if spki {
        Pin::Spki(out)
    } else {
        Pin::Certificate(out)
    })
}

/// The detail carried inside rustls' error so the client can tell a pin mismatch from any
/// other certificate problem.
#[derive(Debug, thiserror::Error)]
#[error("the certificate's pin {presented} is not the pinned one")]
pub(crate) struct PinMismatch {
    pub presented: String,
}

#[derive(Debug)]
pub(crate) struct PinVerifier {
    pin: Pin,
    algorithms: WebPkiSupportedAlgorithms,
}

impl PinVerifier {
    pub fn new(pin: Pin) -> PinVerifier {
        PinVerifier {
            pin,
            algorithms: rustls::crypto::ring::default_provider().signature_verification_algorithms,
        }
    }
}

impl ServerCertVerifier for PinVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        // The pin names one exact certificate or key: the name, issuer and validity period
        // are what the operator pinned (or renewals keep current), so they are not checked.
        let Some(presented) = self.pin.of(end_entity) else {
            return Err(rustls::Error::InvalidCertificate(
                CertificateError::BadEncoding,
            ));
        };
        if bool::from(presented.ct_eq(self.pin.digest())) {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::InvalidCertificate(CertificateError::Other(
                OtherError(Arc::new(PinMismatch {
                    presented: self.pin.with(presented).to_string(),
                })),
            )))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// Finds the pin mismatch inside an I/O error returned by a rustls stream, if that is what it is.
pub(crate) fn pin_mismatch(err: &std::io::Error) -> Option<String> {
    let tls = err.get_ref()?.downcast_ref::<rustls::Error>()?;
    match tls {
        rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(inner))) => inner
            .downcast_ref::<PinMismatch>()
            .map(|m| m.presented.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_parse_in_any_case_with_or_without_separators() {
        let hex = "ab".repeat(32);
        let expected = Pin::Certificate([0xabu8; 32]);
        assert_eq!(parse_pin(&hex).unwrap(), expected);
        assert_eq!(parse_pin(&hex.to_uppercase()).unwrap(), expected);
        let colons = vec!["AB"; 32].join(":");
        assert_eq!(parse_pin(&colons).unwrap(), expected);
        assert_eq!(parse_pin(&format!("sha256:{hex}")).unwrap(), expected);
        let key = parse_pin(&format!("spki-sha256:{hex}")).unwrap();
        assert_eq!(key, Pin::Spki([0xabu8; 32]));
        assert_eq!(key.to_string(), format!("spki-sha256:{hex}"));
        assert_eq!(expected.to_string(), hex);
        assert_eq!(parse_pin(&format!("SPKI-SHA256:{colons}")).unwrap(), key);
        for bad in [
            "",
            "abc",
            &"ab".repeat(31),
            &"zz".repeat(32),
            &"ab".repeat(33),
            "spki-sha256:",
            &format!("spki-sha256:sha256:{}", "ab".repeat(32)),
        ] {
            assert!(parse_pin(bad).is_err(), "{bad} accepted");
        }
    }
}
