//! pure-ftpd, through Debian's wrapper, which reads one file per setting in
//! `/etc/pure-ftpd/conf/` and enables an authentication method by a link in
//! `/etc/pure-ftpd/auth/` to its setting's file: the node's virtual users only (PureDB, the
//! file the FTP family builds with `pure-pw mkdb`), every user jailed in its directory, no
//! anonymous, PAM or system-user login, TLS offered with the node's certificate (the key and
//! chain in the one file pure-ftpd reads, `/etc/ssl/private/pure-ftpd.pem`, 0600), a passive
//! port range, no login below uid 1000. Debian only: elsewhere a note says what to set.

use store::LayoutOwner;

use super::{ServiceFile, Syntax, converge_file, present};
use crate::converge::{Change, Engine, WriteReason};
use crate::{InstallError, paths};

pub const CONF_DIR: &str = "/etc/pure-ftpd/conf";
pub const AUTH_DIR: &str = "/etc/pure-ftpd/auth";
/// Where pure-ftpd reads its certificate and key.
pub const PEM: &str = "/etc/ssl/private/pure-ftpd.pem";
/// The passive ports (open them in the firewall).
pub const PASSIVE_PORTS: &str = "30000 30999";

/// One file per setting.
pub fn settings(e: &Engine) -> Vec<ServiceFile> {
    let pdb = e.map(e.provider.ftp_layout().pdb).display().to_string();
    [
        ("PureDB", pdb.as_str()),
        ("ChrootEveryone", "yes"),
        ("NoAnonymous", "yes"),
        ("PAMAuthentication", "no"),
        ("UnixAuthentication", "no"),
        ("TLS", "1"),
        ("PassivePortRange", PASSIVE_PORTS),
        ("MinUID", "1000"),
    ]
    .into_iter()
    .map(|(key, value)| {
        let mut f = ServiceFile::new(
            "pure-ftpd",
            "conf",
            format!("{CONF_DIR}/{key}"),
            Syntax::OneValue,
        );
        f.set(key, value);
        if key == "TLS" {
            f.reads.push(PEM.to_owned());
        }
        f
    })
    .collect()
}

/// Writes the settings, the PureDB enabling link and the certificate file when pure-ftpd's
/// wrapper is installed in the root. Returns whether something changed.
pub fn converge(e: &mut Engine, notes: &mut Vec<String>) -> Result<bool, InstallError> {
    if e.provider.platform() != provider::Platform::Debian {
        notes.push(
            "pure-ftpd: this platform's package reads one pure-ftpd.conf, which the installer does not write: \
             set PureDB, ChrootEveryone, NoAnonymous and TLS there"
                .into(),
        );
        return Ok(false);
    }
    if !present(e, CONF_DIR) {
        notes.push(format!(
            "pure-ftpd is not installed ({CONF_DIR} missing, Debian package pure-ftpd): FTP is not configured"
        ));
        return Ok(false);
    }
    let mut changed = false;
    for file in settings(e) {
        changed |= converge_file(e, &file)?;
    }
    changed |= e.link(&format!("{AUTH_DIR}/50pure"), "../conf/PureDB")?;
    for other in ["65unix", "70pam"] {
        changed |= e.absent(
            &format!("{AUTH_DIR}/{other}"),
            "only the node's virtual users log in to FTP; layerone install keeps this method disabled",
        )?;
    }
    changed |= empty_user_database(e)?;
    // The key and chain in one file, derived from the node's pair.
    if let (Some(key), Some(cert)) = (
        e.read_regular(paths::TLS_KEY)?,
        e.read_regular(paths::TLS_CERT)?,
    ) {
        let mut pem = key;
        pem.extend_from_slice(&cert);
        // Debian's ssl-cert owns the directory (root:ssl-cert 0710): made only when missing.
        if !present(e, "/etc/ssl/private") {
            e.dir("/etc/ssl/private", 0o710, LayoutOwner::Root)?;
        }
        changed |= e.derived(PEM, &pem, 0o600, LayoutOwner::Root)?;
    }
    Ok(changed)
}

/// pure-ftpd's wrapper refuses to start while the PureDB it is told to read does not exist,
/// and the `ftp_account` family writes it only with the first login: an empty one (from an
/// empty passwd file) until then. Both are the family's files afterwards: made only when
/// missing, never compared.
fn empty_user_database(e: &mut Engine) -> Result<bool, InstallError> {
    let layout = e.provider.ftp_layout();
    if present(e, layout.pdb) {
        return Ok(false);
    }
    if !present(e, layout.passwd) {
        e.write(
            layout.passwd,
            b"",
            0o600,
            LayoutOwner::Root,
            WriteReason::Missing,
        )?;
    }
    e.record(Change::WriteFile {
        path: layout.pdb.to_owned(),
        why: WriteReason::Missing,
    });
    if !e.check {
        let (passwd, pdb) = (e.map(layout.passwd), e.map(layout.pdb));
        e.provider.pure_pw_mkdb(&passwd, &pdb)?;
    }
    Ok(true)
}
