//! TLS for the API: loading the node's certificate and key into a rustls server (ring, TLS 1.2
//! and 1.3, HTTP/1.1 only), and the self-signed placeholder a node starts with until ACME
//! succeeds (docs/design.md section 9), which `layerone-dev` uses as its only certificate.
//!
//! Clients trust a node by pin: [`pin_spki_sha256`] (the key's, unchanged by a renewal that
//! keeps the key) or [`pin_sha256`] (the certificate's, the older form).

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use sha2::{Digest, Sha256};

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot generate a certificate for {name:?}")]
    Generate {
        name: String,
        #[source]
        source: rcgen::Error,
    },
    #[error("{what} is not valid PEM")]
    Pem {
        what: String,
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    #[error("the certificate does not parse as X.509")]
    Unparsable,
    #[error("{path} holds no certificate")]
    NoCertificate { path: PathBuf },
    #[error("cannot write {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the certificate and key do not make a TLS configuration")]
    Config(#[source] rustls::Error),
}

/// A self-signed certificate for `name`, also valid for `localhost` and `127.0.0.1`, as
/// `(certificate PEM, private key PEM)`.
pub fn self_signed(name: &str) -> Result<(String, String), TlsError> {
    let mut names = vec![name.to_owned()];
    for extra in ["localhost", "127.0.0.1"] {
        if !names.iter().any(|n| n == extra) {
            names.push(extra.to_owned());
        }
    }
    let certified =
        rcgen::generate_simple_self_signed(names).map_err(|source| TlsError::Generate {
            name: name.to_owned(),
            source,
        })?;
    Ok((certified.cert.pem(), certified.signing_key.serialize_pem()))
}

/// The pin of a certificate: hex SHA-256 of the DER of the first (end-entity) certificate in
/// the PEM.
pub fn pin_sha256(cert_pem: &str) -> Result<String, TlsError> {
    Ok(hex::encode(Sha256::digest(leaf_der(cert_pem)?.as_ref())))
}

/// The first certificate of a PEM, as DER.
fn leaf_der(cert_pem: &str) -> Result<CertificateDer<'static>, TlsError> {
    CertificateDer::from_pem_slice(cert_pem.as_bytes()).map_err(|source| TlsError::Pem {
        what: "the certificate".into(),
        source,
    })
}

/// The key pin of a certificate: `spki-sha256:` and the hex SHA-256 of the SubjectPublicKeyInfo
/// (DER) of the first (end-entity) certificate in the PEM. A certificate renewed with the same
/// key has the same key pin.
pub fn pin_spki_sha256(cert_pem: &str) -> Result<String, TlsError> {
    let der = leaf_der(cert_pem)?;
    let cert = webpki::EndEntityCert::try_from(&der).map_err(|_| TlsError::Unparsable)?;
    Ok(format!(
        "spki-sha256:{}",
        hex::encode(Sha256::digest(cert.subject_public_key_info().as_ref()))
    ))
}

/// When the first (end-entity) certificate of a PEM stops being valid (Unix seconds): what
/// the metrics report of the certificate the API serves.
pub fn not_after(cert_pem: &str) -> Result<i64, TlsError> {
    let der = leaf_der(cert_pem)?;
    let (_, cert) =
        x509_parser::parse_x509_certificate(der.as_ref()).map_err(|_| TlsError::Unparsable)?;
    Ok(cert.validity().not_after.timestamp())
}

/// Both pins of a certificate: what `layerone install` and `layerone status` print.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pins {
    /// [`pin_spki_sha256`]: what a control plane should pin.
    pub spki: String,
    /// [`pin_sha256`]: the older certificate pin, still accepted by clients.
    pub certificate: String,
}

impl Pins {
    pub fn of(cert_pem: &str) -> Result<Pins, TlsError> {
        Ok(Pins {
            spki: pin_spki_sha256(cert_pem)?,
            certificate: pin_sha256(cert_pem)?,
        })
    }
}

/// Writes a self-signed pair for `name` into `dir` as `cert.pem` (0644) and `key.pem` (0600),
/// unless both already exist, and returns their paths. Each file is created with its mode and
/// renamed into place, so the key is never readable by others, not even while being written.
pub fn write_key_pair(dir: &Path, name: &str) -> Result<(PathBuf, PathBuf), TlsError> {
    let cert_path = dir.join("cert.pem");
    let key_path = dir.join("key.pem");
    if cert_path.exists() && key_path.exists() {
        return Ok((cert_path, key_path));
    }
    let (cert, key) = self_signed(name)?;
    // The key first: a cert.pem without its key.pem is replaced on the next call anyway.
    write_new(&key_path, key.as_bytes(), 0o600)?;
    write_new(&cert_path, cert.as_bytes(), 0o644)?;
    Ok((cert_path, key_path))
}

fn write_new(path: &Path, content: &[u8], mode: u32) -> Result<(), TlsError> {
    let io = |source| TlsError::Io {
        path: path.to_owned(),
        source,
    };
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&tmp)
        .map_err(io)?;
    file.write_all(content).map_err(io)?;
    file.sync_all().map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

/// Whether `cert` and `key` load into the API's TLS configuration (the key matching the
/// certificate), as the API will load them at its next start.
pub fn load_check(cert: &Path, key: &Path) -> Result<(), TlsError> {
    server_config(cert, key).map(|_| ())
}

/// The API's rustls configuration: ring, TLS 1.2 and 1.3, and only HTTP/1.1 offered by ALPN
/// (the header and body limits are configured for HTTP/1).
pub(crate) fn server_config(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, TlsError> {
    let pem = |what: &Path| {
        let what = what.display().to_string();
        move |source| TlsError::Pem { what, source }
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(pem(cert))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(pem(cert))?;
    if chain.is_empty() {
        return Err(TlsError::NoCertificate {
            path: cert.to_owned(),
        });
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(pem(key))?;
    let mut config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(TlsError::Config)?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(TlsError::Config)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn a_written_pair_loads_and_its_key_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = write_key_pair(dir.path(), "node1.example.com").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&key), 0o600);
        assert_eq!(mode(&cert), 0o644);
        server_config(&cert, &key).unwrap();
        let pem = std::fs::read_to_string(&cert).unwrap();
        let pin = pin_sha256(&pem).unwrap();
        assert_eq!(pin.len(), 64);
        // A second call keeps the existing pair: the pin a client holds stays valid.
        write_key_pair(dir.path(), "node1.example.com").unwrap();
        assert_eq!(
            pin_sha256(&std::fs::read_to_string(&cert).unwrap()).unwrap(),
            pin
        );
    }

    #[test]
    fn the_served_certificates_expiry_is_read_from_its_leaf() {
        let key = rcgen::KeyPair::generate().unwrap();
        let pem = certificate(&key, &["node.example"], 30);
        // The helper's certificates start on 2026-01-01 (1767225600).
        assert_eq!(not_after(&pem).unwrap(), 1_767_225_600 + 30 * 86_400);
        assert!(not_after("garbage").is_err());
    }

    #[test]
    fn garbage_is_not_a_certificate() {
        assert!(pin_sha256("not pem").is_err());
        assert!(pin_spki_sha256("not pem").is_err());
    }

    /// A certificate for `names` signed by `key` itself, valid for `days` from a fixed start.
    fn certificate(key: &rcgen::KeyPair, names: &[&str], days: i64) -> String {
        let mut params = rcgen::CertificateParams::new(
            names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>(),
        )
        .unwrap();
        params.not_before = rcgen::date_time_ymd(2026, 1, 1);
        params.not_after = params.not_before + std::time::Duration::from_secs(days as u64 * 86400);
        params.self_signed(key).unwrap().pem()
    }

    #[test]
    fn a_renewal_with_the_kept_key_keeps_the_key_pin() {
        let key = rcgen::KeyPair::generate().unwrap();
        let first = certificate(&key, &["node1.example.com"], 90);
        let renewed = certificate(&key, &["node1.example.com", "localhost"], 180);
        // The certificate pin changes with every renewal; the key pin does not.
        assert_ne!(pin_sha256(&first).unwrap(), pin_sha256(&renewed).unwrap());
        let pin = pin_spki_sha256(&first).unwrap();
        assert_eq!(pin, pin_spki_sha256(&renewed).unwrap());
        assert!(
            pin.starts_with("spki-sha256:") && pin.len() == 12 + 64,
            "{pin}"
        );
        // It is the SHA-256 of the key's SubjectPublicKeyInfo, as `openssl pkey -pubout
        // -outform DER | sha256sum` prints it.
        let spki = rcgen::PublicKeyData::subject_public_key_info(&key);
        assert_eq!(
            pin,
            format!("spki-sha256:{}", hex::encode(Sha256::digest(&spki)))
        );
        // Another key is another pin.
        let other = rcgen::KeyPair::generate().unwrap();
        assert_ne!(
            pin_spki_sha256(&certificate(&other, &["node1.example.com"], 90)).unwrap(),
            pin
        );
    }
}
