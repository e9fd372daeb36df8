//! `opendkim-genkey`: a DKIM key pair for one domain and selector.
//!
//! It writes `SELECTOR.private` (the PEM private key, 0600) and `SELECTOR.txt` (the zone
//! file stub with the public key) into the directory given; [`parse_dkim_txt`] turns the
//! stub into the one TXT value the control plane publishes.

use std::path::Path;

use crate::error::ProviderError;
use crate::exec::Argv;
use crate::program::Program;
use crate::provider::Provider;

impl Provider {
    /// `opendkim-genkey -b BITS -d DOMAIN -s SELECTOR -D DIR`. `domain` and `selector` must
    /// already be validated (a DNS name and a DNS label); `dir` is mapped and must exist.
    pub fn dkim_genkey(
        &self,
        dir: &Path,
        domain: &str,
        selector: &str,
        bits: u32,
    ) -> Result<(), ProviderError> {
        self.assert_mapped(dir);
        let mut argv = Argv::new();
        argv.arg("-b")
            .arg(bits.to_string())
            .arg("-h")
            .arg("sha256")
            .arg("-d")
            .arg(domain)
            .arg("-s")
            .arg(selector)
            .arg("-D")
            .arg(dir);
        self.execute(
            Program::OpendkimGenkey,
            &argv,
            None,
            Program::OpendkimGenkey.default_timeout(),
        )?;
        Ok(())
    }
}

/// The TXT value in an `opendkim-genkey` zone stub: the quoted strings between the
/// parentheses, concatenated (`v=DKIM1; h=sha256; k=rsa; p=...`). `None` if the stub does not
/// have that shape.
pub fn parse_dkim_txt(stub: &str) -> Option<String> {
    let open = stub.find('(')?;
    let close = open + stub[open..].find(')')?;
    let mut value = String::new();
    let mut rest = &stub[open + 1..close];
    while let Some(start) = rest.find('"') {
        let after = &rest[start + 1..];
        let end = after.find('"')?;
        value.push_str(&after[..end]);
        rest = &after[end + 1..];
    }
    (!value.is_empty() && value.contains("p=")).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_stub_opendkim_genkey_writes() {
        let stub = "mail._domainkey\tIN\tTXT\t( \"v=DKIM1; h=sha256; k=rsa; \"\n\t  \"p=MIIB\"\n\t  \"IjAN\" )  ; ----- DKIM key mail for example.com\n";
        assert_eq!(
            parse_dkim_txt(stub).as_deref(),
            Some("v=DKIM1; h=sha256; k=rsa; p=MIIBIjAN")
        );
        assert_eq!(parse_dkim_txt("garbage"), None);
    }
}
