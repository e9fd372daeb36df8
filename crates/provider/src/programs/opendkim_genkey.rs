//! `opendkim-genkey`: a DKIM key pair for one domain and selector.
//!
//! It writes `SELECTOR.private` (the PEM private key, 0600) and `SELECTOR.txt` (the zone
//! file stub with the public key) into the directory given; [`parse_dkim_txt`] turns the
//! stub into the one TXT value the control plane publishes.

use std::path::Path;

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::program::Program;
use crate::provider::Provider;

/// The group OpenDKIM's daemon runs as (Debian's and EPEL's packages).
pub const OPENDKIM_GROUP: &str = "opendkim";

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
        self.dkim_key_for_opendkim(dir, selector)
    }

    /// The key readable by OpenDKIM and nobody else: the directory `root:opendkim` 0750,
    /// `SELECTOR.private` `root:opendkim` 0640 (`opendkim-genkey` leaves it root's, 0600, and
    /// the daemon runs as `opendkim`). The group's id is the root's `/etc/group` entry;
    /// without that group (OpenDKIM not installed) or when not root, the key stays root's.
    pub fn dkim_key_for_opendkim(&self, dir: &Path, selector: &str) -> Result<(), ProviderError> {
        self.assert_mapped(dir);
        if !self.is_root {
            return Ok(());
        }
        let Some(group) = self.lookup_group(OPENDKIM_GROUP)? else {
            return Ok(());
        };
        let key = dir.join(format!("{selector}.private"));
        if key.exists() {
            self.set_owner_mode(&key, 0o640, (0, group.gid))?;
        }
        self.set_owner_mode(dir, 0o750, (0, group.gid))
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

/// OpenDKIM's unit. It reads its KeyTable and SigningTable at start and on reload.
pub const OPENDKIM_UNIT: &str = "opendkim.service";

impl Provider {
    /// Makes a running OpenDKIM read its tables again: `systemctl show` of its unit, then
    /// `systemctl reload opendkim.service` when it is active. A node where OpenDKIM is not
    /// installed or not running has nothing to reload (it reads the tables when it starts):
    /// `Ok(false)`, and the mail families' changes do not fail for it.
    pub fn opendkim_reload(&self) -> Result<bool, ProviderError> {
        let shown = self.systemd_show("LoadState,ActiveState", OPENDKIM_UNIT)?;
        let state = crate::programs::service_state::parse_show(&shown);
        if state.active_state != "active" {
            return Ok(false);
        }
        self.systemctl(&["reload", OPENDKIM_UNIT])?;
        Ok(true)
    }
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
