//! Where the mail stack keeps what the node derives, the settings the services need to read
//! it, and the mail store's usage.
//!
//! The stack (README, "Mail"): Postfix receives mail for virtual mailbox domains and hands
//! it to Dovecot over LMTP; Dovecot authenticates mailboxes and stores their mail as Maildir
//! under one `vmail` directory per domain, with a per-mailbox quota (quota plugin, Maildir++
//! backend) and an optional Sieve script (Pigeonhole, the vacation autoresponder); OpenDKIM
//! signs outgoing mail. Every file below is written whole from state.db by the mail families
//! (`crates/ops`), never edited line by line: a value cannot add a line, and a crash between
//! two writes is repaired by the next write of the same file.
//!
//! Postfix's tables are `texthash:` maps: read whole when a Postfix process starts, no
//! `postmap` build step between the atomic write and the reload, and nothing half-built
//! (`hash:` rebuilds its `.db` in place). The price is that a change needs `postfix reload`,
//! which the batch does once anyway.

use std::path::{Path, PathBuf};

use crate::error::ProviderError;
use crate::provider::Provider;

/// The mail stack's files. All are system paths: map them with [`Provider::sysconf`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MailLayout {
    /// Postfix's configuration directory (`main.cf`, `master.cf`).
    pub postfix_dir: &'static str,
    /// The node's Postfix tables (the node owns the directory).
    pub postfix_maps_dir: &'static str,
    /// Dovecot's main configuration file.
    pub dovecot_config: &'static str,
    /// The node's Dovecot files: the passwd-file, and `sieve/` with one script per mailbox.
    pub dovecot_dir: &'static str,
    /// Mail storage: `<vmail>/<domain>/<local part>/Maildir`.
    pub vmail_dir: &'static str,
    /// The node's OpenDKIM files: `KeyTable`, `SigningTable`, `keys/<resource id>/`.
    pub dkim_dir: &'static str,
}

/// One Postfix table of the node, inside [`MailLayout::postfix_maps_dir`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PostfixMap {
    /// `virtual_mailbox_domains`: `domain OK`.
    Domains,
    /// `virtual_mailbox_maps`: `address domain/local/Maildir/`.
    Mailboxes,
    /// `virtual_alias_maps`: forwarders, catch-alls, and each mailbox to itself (so a
    /// catch-all does not swallow it).
    Aliases,
    /// `check_sender_access`: domains whose sending gate is closed, `REJECT`ed as senders.
    SenderGate,
    /// `check_recipient_access`: the spam restriction class of each filtered domain.
    Spam,
}

impl PostfixMap {
    pub const ALL: &'static [PostfixMap] = &[
        PostfixMap::Domains,
        PostfixMap::Mailboxes,
        PostfixMap::Aliases,
        PostfixMap::SenderGate,
        PostfixMap::Spam,
    ];

    pub fn file_name(self) -> &'static str {
        match self {
            PostfixMap::Domains => "domains",
            PostfixMap::Mailboxes => "mailboxes",
            PostfixMap::Aliases => "aliases",
            PostfixMap::SenderGate => "sender_gate",
            PostfixMap::Spam => "spam",
        }
    }
}

/// The file name of the mail host names' SNI table in [`MailLayout::postfix_maps_dir`].
pub const POSTFIX_SNI_MAP: &str = "sni";

/// The spam levels' Postfix restriction classes (see [`Provider::postfix_main_settings`]).
pub const SPAM_CLASS_STANDARD: &str = "layerone_spam_standard";
pub const SPAM_CLASS_STRICT: &str = "layerone_spam_strict";

impl MailLayout {
    pub const DEFAULT: MailLayout = MailLayout {
        postfix_dir: "/etc/postfix",
        postfix_maps_dir: "/etc/postfix/layerone",
        dovecot_config: "/etc/dovecot/dovecot.conf",
        dovecot_dir: "/etc/dovecot/layerone",
        vmail_dir: "/var/vmail",
        dkim_dir: "/etc/opendkim/layerone",
    };
}

impl Provider {
    /// The same on both platforms: Debian and CloudLinux package Postfix, Dovecot and
    /// OpenDKIM with the same paths.
    pub fn mail_layout(&self) -> MailLayout {
        MailLayout::DEFAULT
    }

    /// The mapped path of one of the node's Postfix tables.
    pub fn postfix_map_path(&self, map: PostfixMap) -> PathBuf {
        self.sysconf(self.mail_layout().postfix_maps_dir)
            .join(map.file_name())
    }

    /// The mapped `texthash:` table of the tenants' mail host names Postfix serves by SNI
    /// (`tls_server_sni_maps`): `mail.<domain> <key file> <chain file>`, the files' contents
    /// loaded when Postfix opens the table (as root, before it drops privileges).
    pub fn postfix_sni_map_path(&self) -> PathBuf {
        self.sysconf(self.mail_layout().postfix_maps_dir)
            .join(POSTFIX_SNI_MAP)
    }

    /// The mapped Dovecot file of the tenants' mail host names served by SNI (`local_name`
    /// blocks), included by `dovecot.conf` with `!include_try`.
    pub fn dovecot_sni_path(&self) -> PathBuf {
        self.sysconf(self.mail_layout().dovecot_dir)
            .join("sni.conf")
    }

    /// The mapped passwd-file Dovecot's passdb and userdb read.
    pub fn dovecot_passwd_path(&self) -> PathBuf {
        self.sysconf(self.mail_layout().dovecot_dir).join("passwd")
    }

    /// The mapped directory of the per-mailbox Sieve scripts.
    pub fn sieve_dir(&self) -> PathBuf {
        self.sysconf(self.mail_layout().dovecot_dir).join("sieve")
    }

    /// The lines `main.cf` needs so Postfix reads the node's tables (an installation step,
    /// like Apache's include line; tests write them into their own `main.cf`). Paths are
    /// mapped under the provider's root.
    pub fn postfix_main_settings(&self) -> String {
        let map = |m: PostfixMap| format!("texthash:{}", self.postfix_map_path(m).display());
        format!(
            "virtual_mailbox_domains = {domains}\n\
             virtual_mailbox_maps = {mailboxes}\n\
             virtual_alias_maps = {aliases}\n\
             virtual_transport = lmtp:unix:private/dovecot-lmtp\n\
             smtpd_sender_restrictions = check_sender_access {gate}\n\
             smtpd_recipient_restrictions = permit_mynetworks, permit_sasl_authenticated, reject_unauth_destination, check_recipient_access {spam}\n\
             smtpd_restriction_classes = {SPAM_CLASS_STANDARD}, {SPAM_CLASS_STRICT}\n\
             {SPAM_CLASS_STANDARD} = reject_rbl_client zen.spamhaus.org, reject_unknown_sender_domain\n\
             {SPAM_CLASS_STRICT} = reject_rbl_client zen.spamhaus.org, reject_rhsbl_sender dbl.spamhaus.org, reject_unknown_sender_domain, reject_unknown_reverse_client_hostname\n\
             tls_server_sni_maps = texthash:{sni}\n",
            sni = self.postfix_sni_map_path().display(),
            domains = map(PostfixMap::Domains),
            mailboxes = map(PostfixMap::Mailboxes),
            aliases = map(PostfixMap::Aliases),
            gate = map(PostfixMap::SenderGate),
            spam = map(PostfixMap::Spam),
        )
    }

    /// The Dovecot settings that make it read the node's passwd-file, apply the quota the
    /// file gives each mailbox, and run the Sieve script the file names on delivery. The
    /// mail user (`mail_uid`, `mail_gid`: `vmail` in production) is set by the installation.
    pub fn dovecot_settings(&self) -> String {
        let passwd = self.dovecot_passwd_path();
        let passwd = passwd.display();
        format!(
            "mail_location = maildir:~/Maildir\n\
             mail_plugins = $mail_plugins quota\n\
             passdb {{\n  driver = passwd-file\n  args = scheme=SHA512-CRYPT username_format=%Lu {passwd}\n}}\n\
             userdb {{\n  driver = passwd-file\n  args = username_format=%Lu {passwd}\n}}\n\
             protocol lmtp {{\n  mail_plugins = $mail_plugins sieve\n}}\n\
             plugin {{\n  quota = maildir:User quota\n  sieve_vacation_min_period = 1d\n  sieve_vacation_max_period = 60d\n}}\n\
             !include_try {sni}\n",
            sni = self.dovecot_sni_path().display()
        )
    }

    /// Bytes and messages in the Maildir at `maildir` (mapped): the files in `cur/` and
    /// `new/` of the inbox and of each `.Folder`. Symlinks are not followed (counted as
    /// nothing), and at most `MAX_MAILDIR_ENTRIES` entries are looked at: the result says
    /// whether it stopped early. A missing Maildir is empty (no mail delivered yet).
    pub fn maildir_usage(&self, maildir: &Path) -> Result<MaildirUsage, ProviderError> {
        self.assert_mapped(maildir);
        let mut usage = MaildirUsage::default();
        let mut seen = 0usize;
        let mut folders = vec![maildir.to_path_buf()];
        match std::fs::symlink_metadata(maildir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(ProviderError::io(
                    "read maildir",
                    maildir,
                    std::io::Error::other("not a directory"),
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(usage),
            Err(e) => return Err(ProviderError::io("read maildir", maildir, e)),
        }
        for entry in read_dir(maildir)? {
            let name = entry.file_name();
            let is_folder = name
                .to_str()
                .is_some_and(|n| n.starts_with('.') && n != "..");
            if is_folder && entry.file_type().is_ok_and(|t| t.is_dir()) {
                folders.push(entry.path());
            }
        }
        for folder in folders {
            for sub in ["cur", "new"] {
                let dir = folder.join(sub);
                if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
                    continue;
                }
                for entry in read_dir(&dir)? {
                    seen += 1;
                    if seen > MAX_MAILDIR_ENTRIES {
                        usage.truncated = true;
                        return Ok(usage);
                    }
                    let Ok(meta) = entry.metadata() else { continue };
                    if meta.is_file() {
                        usage.bytes += meta.len();
                        usage.messages += 1;
                    }
                }
            }
        }
        Ok(usage)
    }

    /// Removes the directory tree at `path` (mapped), without following symlinks in it;
    /// already absent is success.
    pub fn remove_tree(&self, path: &Path) -> Result<(), ProviderError> {
        self.assert_mapped(path);
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(ProviderError::io("remove", path, e)),
            // A symlink in place of the directory: remove the link, not what it points at.
            Ok(meta) if !meta.is_dir() => {
                std::fs::remove_file(path).map_err(|e| ProviderError::io("remove", path, e))
            }
            Ok(_) => {
                std::fs::remove_dir_all(path).map_err(|e| ProviderError::io("remove", path, e))
            }
        }
    }
}

/// How many directory entries [`Provider::maildir_usage`] looks at before it stops.
pub const MAX_MAILDIR_ENTRIES: usize = 1_000_000;

/// What a Maildir holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaildirUsage {
    pub bytes: u64,
    pub messages: u64,
    /// The count stopped at [`MAX_MAILDIR_ENTRIES`].
    pub truncated: bool,
}

fn read_dir(dir: &Path) -> Result<impl Iterator<Item = std::fs::DirEntry>, ProviderError> {
    Ok(std::fs::read_dir(dir)
        .map_err(|e| ProviderError::io("read maildir", dir, e))?
        .filter_map(Result::ok))
}

impl Provider {
    /// Atomically replaces `path` (mapped) with `bytes`, mode 0640, group `group` when the
    /// provider is root and the group exists in the sysroot's `/etc/group`: for files only a
    /// service's own group may read (Dovecot's passwd-file holds password hashes). The group
    /// is set on the temporary file before the rename, so the file is never unreadable to
    /// the service nor readable by anyone else.
    pub fn write_group_secret(
        &self,
        path: &Path,
        bytes: &[u8],
        group: &str,
    ) -> Result<(), ProviderError> {
        self.assert_mapped(path);
        match self.lookup_group(group)? {
            Some(entry) => self.write_gid_secret(path, bytes, entry.gid),
            None => self.write_secret_with_gid(path, bytes, None),
        }
    }

    /// Like [`Provider::write_group_secret`], for a group known by its id (an account's own
    /// group, which the node recorded). The gid is applied when running as root.
    pub fn write_gid_secret(
        &self,
        path: &Path,
        bytes: &[u8],
        gid: u32,
    ) -> Result<(), ProviderError> {
        self.assert_mapped(path);
        self.write_secret_with_gid(path, bytes, self.is_root.then_some(gid))
    }

    fn write_secret_with_gid(
        &self,
        path: &Path,
        bytes: &[u8],
        gid: Option<u32>,
    ) -> Result<(), ProviderError> {
        let file_name = path.file_name().ok_or_else(|| {
            ProviderError::io("write", path, std::io::Error::other("no file name"))
        })?;
        let tmp = path.with_file_name(crate::files::temp_name(file_name));
        crate::files::write_exclusive(&tmp, bytes, SECRET_MODE, None)?;
        if let Some(gid) = gid
            && let Err(e) = std::os::unix::fs::chown(&tmp, None, Some(gid))
        {
            let _ = std::fs::remove_file(&tmp);
            return Err(ProviderError::io("chown", &tmp, e));
        }
        if let Err(e) = std::fs::rename(&tmp, path) {
            let _ = std::fs::remove_file(&tmp);
            return Err(ProviderError::io("rename", path, e));
        }
        crate::files::sync_parent(path)
    }
}

/// The mode of files only root and one service's group read.
pub const SECRET_MODE: u32 = 0o640;
