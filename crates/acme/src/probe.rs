//! Which certificate a listener presents: a TLS handshake with it, spoken the way its
//! protocol starts TLS (at once, SMTP `STARTTLS`, FTP `AUTH TLS`), and the SHA-256 of the leaf
//! certificate it sent. Nothing is trusted or refused: the caller compares the fingerprint
//! with the certificate it installed, which is the only question asked here.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use sha2::{Digest, Sha256};

/// How a listener starts TLS.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Hello {
    /// TLS from the first byte (443, 993, 995).
    Tls,
    /// SMTP: greeting, `EHLO`, `STARTTLS` (25, 587).
    SmtpStartTls,
    /// FTP: greeting, `AUTH TLS` (21).
    FtpAuthTls,
}

impl std::fmt::Display for Hello {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Hello::Tls => "TLS",
            Hello::SmtpStartTls => "SMTP STARTTLS",
            Hello::FtpAuthTls => "FTP AUTH TLS",
        })
    }
}

/// Why no certificate was seen.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("cannot connect to {addr}")]
    Connect {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("{addr} ({hello}): connection failed before the handshake ended")]
    Io {
        addr: SocketAddr,
        hello: Hello,
        #[source]
        source: std::io::Error,
    },
    #[error("{addr} ({hello}): the server answered {line:?} where {expected} was expected")]
    Refused {
        addr: SocketAddr,
        hello: Hello,
        line: String,
        expected: &'static str,
    },
    #[error("{addr}: the server sent no certificate")]
    NoCertificate { addr: SocketAddr },
    #[error("{name:?} is not a server name")]
    Name { name: String },
}

/// The lowercase hex SHA-256 of the leaf certificate `addr` presents for `server_name` (sent
/// as SNI), after starting TLS the way `hello` says.
pub fn leaf_sha256(
    addr: SocketAddr,
    hello: Hello,
    server_name: &str,
    timeout: Duration,
) -> Result<String, ProbeError> {
    let name = ServerName::try_from(server_name.to_owned()).map_err(|_| ProbeError::Name {
        name: server_name.to_owned(),
    })?;
    let mut tcp = TcpStream::connect_timeout(&addr, timeout)
        .map_err(|source| ProbeError::Connect { addr, source })?;
    let io = |source| ProbeError::Io {
        addr,
        hello,
        source,
    };
    tcp.set_read_timeout(Some(timeout)).map_err(io)?;
    tcp.set_write_timeout(Some(timeout)).map_err(io)?;
    match hello {
        Hello::Tls => {}
        Hello::SmtpStartTls => {
            expect(&mut tcp, addr, hello, "220", "a 220 greeting")?;
            tcp.write_all(b"EHLO probe.invalid\r\n").map_err(io)?;
            expect(&mut tcp, addr, hello, "250", "250 to EHLO")?;
            tcp.write_all(b"STARTTLS\r\n").map_err(io)?;
            expect(&mut tcp, addr, hello, "220", "220 to STARTTLS")?;
        }
        Hello::FtpAuthTls => {
            expect(&mut tcp, addr, hello, "220", "a 220 greeting")?;
            tcp.write_all(b"AUTH TLS\r\n").map_err(io)?;
            expect(&mut tcp, addr, hello, "234", "234 to AUTH TLS")?;
        }
    }
    let config = ClientConfig::builder()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate::default()))
        .with_no_client_auth();
    let mut conn = rustls::ClientConnection::new(Arc::new(config), name)
        .map_err(|e| io(std::io::Error::other(e)))?;
    while conn.is_handshaking() {
        conn.complete_io(&mut tcp).map_err(io)?;
    }
    let leaf = conn
        .peer_certificates()
        .and_then(|chain| chain.first())
        .ok_or(ProbeError::NoCertificate { addr })?;
    Ok(hex::encode(Sha256::digest(leaf.as_ref())))
}

/// The fingerprint `addr` presents for `server_name`, asked again until it is `want` or
/// `settle` has passed (and, while it does not answer, until `timeout` has): a listener just
/// reloaded is given time to take a new certificate, one just restarted time to answer.
pub fn settled_leaf_sha256(
    addr: SocketAddr,
    hello: Hello,
    server_name: &str,
    want: &str,
    settle: Duration,
    timeout: Duration,
) -> Result<String, ProbeError> {
    let start = std::time::Instant::now();
    loop {
        let seen = leaf_sha256(addr, hello, server_name, timeout);
        let waited = start.elapsed();
        match seen {
            Ok(found) if found == want || waited >= settle => return Ok(found),
            Err(err) if waited >= settle.max(timeout) => return Err(err),
            _ => std::thread::sleep(Duration::from_millis(250)),
        }
    }
}

/// Reads one reply (its continuation lines `NNN-` included) and checks its code. Byte by
/// byte, so nothing of the TLS stream that follows is read here.
fn expect(
    tcp: &mut TcpStream,
    addr: SocketAddr,
    hello: Hello,
    code: &str,
    expected: &'static str,
) -> Result<(), ProbeError> {
    loop {
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        while line.last() != Some(&b'\n') && line.len() < 4096 {
            let n = tcp.read(&mut byte).map_err(|source| ProbeError::Io {
                addr,
                hello,
                source,
            })?;
            if n == 0 {
                break;
            }
            line.push(byte[0]);
        }
        let text = String::from_utf8_lossy(&line).trim_end().to_owned();
        if !text.starts_with(code) {
            return Err(ProbeError::Refused {
                addr,
                hello,
                line: text,
                expected,
            });
        }
        // `220-` continues the reply, `220 ` ends it.
        if text.as_bytes().get(3) != Some(&b'-') {
            return Ok(());
        }
    }
}

/// Accepts whatever certificate is presented: the fingerprint is compared afterwards. The
/// handshake signatures are still checked, so the server holds the key of what it sent.
#[derive(Debug)]
struct AnyCertificate {
    algorithms: rustls::crypto::WebPkiSupportedAlgorithms,
}

impl Default for AnyCertificate {
    fn default() -> AnyCertificate {
        AnyCertificate {
            algorithms: rustls::crypto::ring::default_provider().signature_verification_algorithms,
        }
    }
}

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
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

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader};
    use std::net::TcpListener;

    use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

    use super::*;

    /// A one-connection server: the plain-text lines of `hello`'s protocol (`refuse` answers
    /// its TLS command with an error instead), then a real rustls handshake with a fresh
    /// certificate. Returns the address and the certificate's SHA-256.
    fn server(hello: Hello, refuse: bool) -> (SocketAddr, String) {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["node.example.test".to_owned()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let fingerprint = hex::encode(Sha256::digest(cert.der().as_ref()));
        let config = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
            )
            .unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut tcp, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(tcp.try_clone().unwrap());
            let mut line = String::new();
            let mut ask = |tcp: &mut TcpStream, answer: &[u8]| {
                line.clear();
                reader.read_line(&mut line).unwrap();
                tcp.write_all(answer).unwrap();
            };
            match hello {
                Hello::Tls => {}
                Hello::SmtpStartTls => {
                    tcp.write_all(b"220-node.example.test ESMTP\r\n220 ready\r\n")
                        .unwrap();
                    ask(&mut tcp, b"250-node.example.test\r\n250 STARTTLS\r\n");
                    if refuse {
                        ask(&mut tcp, b"454 4.7.0 TLS not available\r\n");
                        return;
                    }
                    ask(&mut tcp, b"220 2.0.0 Ready to start TLS\r\n");
                }
                Hello::FtpAuthTls => {
                    tcp.write_all(b"220 FTP server ready\r\n").unwrap();
                    if refuse {
                        ask(&mut tcp, b"500 AUTH not understood\r\n");
                        return;
                    }
                    ask(&mut tcp, b"234 AUTH TLS OK.\r\n");
                }
            }
            let mut conn = rustls::ServerConnection::new(Arc::new(config)).unwrap();
            while conn.is_handshaking() {
                if conn.complete_io(&mut tcp).is_err() {
                    return;
                }
            }
        });
        (addr, fingerprint)
    }

    #[test]
    fn the_presented_leaf_fingerprint_is_read_after_each_protocols_tls_start() {
        for hello in [Hello::Tls, Hello::SmtpStartTls, Hello::FtpAuthTls] {
            let (addr, want) = server(hello, false);
            let seen =
                leaf_sha256(addr, hello, "node.example.test", Duration::from_secs(5)).unwrap();
            assert_eq!(seen, want, "{hello}");
        }
    }

    #[test]
    fn a_refused_tls_command_is_a_typed_error_naming_the_answer() {
        for (hello, answer) in [
            (Hello::SmtpStartTls, "454 4.7.0 TLS not available"),
            (Hello::FtpAuthTls, "500 AUTH not understood"),
        ] {
            let (addr, _) = server(hello, true);
            match leaf_sha256(addr, hello, "node.example.test", Duration::from_secs(5)) {
                Err(ProbeError::Refused { line, .. }) => assert_eq!(line, answer, "{hello}"),
                other => panic!("{hello}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_bad_server_name_is_refused_before_connecting() {
        let addr: SocketAddr = "127.0.0.1:9".parse().unwrap();
        assert!(matches!(
            leaf_sha256(addr, Hello::Tls, "not a name", Duration::from_secs(1)),
            Err(ProbeError::Name { .. })
        ));
    }
}
