//! Certificate pinning (DESIGN.md section 9).
//!
//! A node's certificate is self-signed until ACME succeeds, and even then the control plane
//! knows the exact certificate it expects, so trust is not delegated to a CA: the verifier
//! accepts the end-entity certificate only if the SHA-256 of its DER equals the pin. It does
//! not skip the rest of TLS: the handshake signature is still verified against that
//! certificate's public key with ring's algorithms, so a peer that replays the certificate
//! without its private key fails. The comparison happens inside the handshake, before the
//! client writes any header or body.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, OtherError, SignatureScheme};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Parses a pin: 64 hex digits, any case, optionally with `:` separators (as `openssl x509
/// -fingerprint -sha256` prints them) and an optional `sha256:` prefix.
pub fn parse_pin(pin: &str) -> Result<[u8; 32], String> {
    let trimmed = pin.trim();
    let trimmed = trimmed
        .strip_prefix("sha256:")
        .or_else(|| trimmed.strip_prefix("SHA256:"))
        .unwrap_or(trimmed);
    let digits: String = trimmed.chars().filter(|c| *c != ':').collect();
    let mut out = [0u8; 32];
    hex::decode_to_slice(&digits, &mut out)
        .map_err(|_| "a pin is the SHA-256 of the certificate: 64 hexadecimal digits".to_owned())?;
    Ok(out)
}

/// The detail carried inside rustls' error so the client can tell a pin mismatch from any
/// other certificate problem.
#[derive(Debug, thiserror::Error)]
#[error("certificate SHA-256 {presented} is not the pinned one")]
pub(crate) struct PinMismatch {
    pub presented: String,
}

#[derive(Debug)]
pub(crate) struct PinVerifier {
    pin: [u8; 32],
    algorithms: WebPkiSupportedAlgorithms,
}

impl PinVerifier {
    pub fn new(pin: [u8; 32]) -> PinVerifier {
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
        // The pin names one exact certificate: its name, issuer and validity period are what
        // the operator pinned, so they are not checked again here.
        let presented: [u8; 32] = Sha256::digest(end_entity.as_ref()).into();
        if bool::from(presented.ct_eq(&self.pin)) {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::InvalidCertificate(CertificateError::Other(
                OtherError(Arc::new(PinMismatch {
                    presented: hex::encode(presented),
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
        let expected = [0xabu8; 32];
        assert_eq!(parse_pin(&hex).unwrap(), expected);
        assert_eq!(parse_pin(&hex.to_uppercase()).unwrap(), expected);
        let colons = vec!["AB"; 32].join(":");
        assert_eq!(parse_pin(&colons).unwrap(), expected);
        assert_eq!(parse_pin(&format!("sha256:{hex}")).unwrap(), expected);
        for bad in [
            "",
            "abc",
            &"ab".repeat(31),
            &"zz".repeat(32),
            &"ab".repeat(33),
        ] {
            assert!(parse_pin(bad).is_err(), "{bad} accepted");
        }
    }
}
