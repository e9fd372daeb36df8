//! OpenDKIM: `/etc/opendkim.conf` written whole. It signs (and verifies, `Mode sv`) with the
//! keys of the node's KeyTable, chosen by the SigningTable (`refile:`, patterns), both
//! derived by the mail families under the node's DKIM directory; it listens where
//! `main.cf`'s milters point (`inet:8891@127.0.0.1`); mail from loopback or from an
//! authenticated client is signed. The keys are readable by the `opendkim` group only
//! (the provider writes them so, `Provider::dkim_genkey`).

use store::LayoutOwner;

use super::{ServiceFile, Syntax, converge_file, present};
use crate::InstallError;
use crate::converge::{Change, Engine, WriteReason};

/// Debian's OpenDKIM configuration file.
pub const CONFIG: &str = "/etc/opendkim.conf";

/// `opendkim.conf`'s rows.
pub fn opendkim_conf(e: &Engine) -> ServiceFile {
    let dkim = e
        .map(e.provider.mail_layout().dkim_dir)
        .display()
        .to_string();
    let mut f = ServiceFile::new("opendkim", "opendkim.conf", CONFIG, Syntax::Opendkim);
    f.set("Syslog", "yes")
        .set("UMask", "007")
        .set("UserID", "opendkim")
        .set(
            "PidFile",
            e.map("/run/opendkim/opendkim.pid").display().to_string(),
        )
        .set("Mode", "sv")
        .set("Canonicalization", "relaxed/simple")
        .set("OversignHeaders", "From")
        .set("Socket", "inet:8891@127.0.0.1")
        .set("KeyTable", format!("{dkim}/KeyTable"))
        .set("SigningTable", format!("refile:{dkim}/SigningTable"))
        .set("InternalHosts", "csl:127.0.0.1,::1")
        .set("ExternalIgnoreList", "csl:127.0.0.1,::1");
    f
}

/// Writes the file when OpenDKIM is installed in the root (its configuration file, or its
/// binary, is there). Returns whether it changed.
pub fn converge(e: &mut Engine, notes: &mut Vec<String>) -> Result<bool, InstallError> {
    if !present(e, CONFIG) && !present(e, "/usr/sbin/opendkim") {
        notes.push(
            "OpenDKIM is not installed (Debian package opendkim): outgoing mail is not signed"
                .into(),
        );
        return Ok(false);
    }
    // OpenDKIM does not start without its tables: empty ones until the mail families write
    // them whole (they own them; an existing table is never touched here).
    let dkim = e.provider.mail_layout().dkim_dir;
    if !present(e, dkim) {
        e.dir(dkim, 0o755, LayoutOwner::Root)?;
    }
    for table in ["KeyTable", "SigningTable"] {
        let path = format!("{dkim}/{table}");
        if !present(e, &path) {
            e.write(&path, b"", 0o644, LayoutOwner::Root, WriteReason::Missing)?;
        }
    }
    keys_for_opendkim(e)?;
    converge_file(e, &opendkim_conf(e))
}

/// Keys made before OpenDKIM's group existed (or by an older node) are root's only: each
/// `keys/<id>/` directory and its `*.private` key are given to the `opendkim` group the
/// way the provider writes new ones (`Provider::dkim_key_for_opendkim`).
fn keys_for_opendkim(e: &mut Engine) -> Result<(), InstallError> {
    use std::os::unix::fs::MetadataExt;
    let Some(group) = e.provider.lookup_group(provider::OPENDKIM_GROUP)? else {
        return Ok(());
    };
    let keys = format!("{}/keys", e.provider.mail_layout().dkim_dir);
    let Ok(entries) = std::fs::read_dir(e.map(&keys)) else {
        return Ok(());
    };
    let mut dirs: Vec<_> = entries.filter_map(Result::ok).collect();
    dirs.sort_by_key(|d| d.file_name());
    for entry in dirs {
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let mut selectors = Vec::new();
        let mut right = meta.gid() == group.gid && meta.mode() & 0o7777 == 0o750;
        for file in std::fs::read_dir(entry.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let file_name = file.file_name().to_string_lossy().into_owned();
            let Some(selector) = file_name.strip_suffix(".private") else {
                continue;
            };
            if let Ok(m) = std::fs::symlink_metadata(file.path())
                && m.is_file()
            {
                right &= m.gid() == group.gid && m.mode() & 0o7777 == 0o640;
                selectors.push(selector.to_owned());
            }
        }
        // A directory without a key holds no secret.
        if right || selectors.is_empty() {
            continue;
        }
        e.record(Change::OwnerMode {
            path: format!("{keys}/{name}"),
            from: format!("{}:{} {:04o}", meta.uid(), meta.gid(), meta.mode() & 0o7777),
            to: "root:opendkim 0750, its keys 0640".into(),
        });
        if !e.check {
            for selector in &selectors {
                e.provider.dkim_key_for_opendkim(&entry.path(), selector)?;
            }
        }
    }
    Ok(())
}
