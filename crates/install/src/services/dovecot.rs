//! Dovecot: `dovecot.conf` written whole, with no `!include conf.d/*.conf`, so the only
//! users who can log in are the node's mailboxes (the passwd-file the mail families derive),
//! never a system user through PAM.
//!
//! IMAP, POP3 and LMTP; TLS required, with the node's certificate; mail stored as the `vmail`
//! user (created here, home `/var/vmail`, no login); LMTP and auth listeners inside
//! Postfix's queue directory (`private/dovecot-lmtp`, `private/auth`, owned by `postfix`),
//! which `main.cf` names; the quota plugin (each mailbox's rule comes from the
//! passwd-file) and the Sieve plugin on delivery (each mailbox's script, the
//! autoresponder's, is named by the passwd-file too).

use provider::SystemUserAdd;

use super::postfix::{AUTH_SOCKET, LMTP_SOCKET, QUEUE_DIR};
use super::{SECTION, ServiceFile, Syntax, converge_file, present};
use crate::config::NodeConfig;
use crate::converge::{Change, Engine};
use crate::{InstallError, paths};

/// The Diffie-Hellman parameters the platform's Dovecot package ships.
pub fn dh_params(platform: provider::Platform) -> &'static str {
    match platform {
        provider::Platform::Debian => "/usr/share/dovecot/dh.pem",
        provider::Platform::CloudLinux => "/etc/dovecot/dh.pem",
    }
}

/// The mail store's user and group.
pub const VMAIL: &str = "vmail";

/// The `vmail` user and group, and its home, the mail store. Returns its ids (`None` only
/// under `--check` before it exists).
pub fn vmail(e: &mut Engine) -> Result<Option<(u32, u32)>, InstallError> {
    let home = e.provider.mail_layout().vmail_dir;
    if e.provider.lookup_group(VMAIL)?.is_none() {
        e.record(Change::CreateGroup(VMAIL.into()));
        if !e.check {
            e.provider.groupadd_system(VMAIL)?;
        }
    }
    if e.provider.lookup_user(VMAIL)?.is_none() {
        e.record(Change::CreateUser(VMAIL.into()));
        if !e.check {
            e.provider.useradd_system(&SystemUserAdd {
                name: VMAIL,
                group: VMAIL,
                home: std::path::Path::new(home),
                shell: "/usr/sbin/nologin",
                comment: "layerone mail store",
            })?;
        }
    }
    let ids = match (
        e.provider.lookup_user(VMAIL)?,
        e.provider.lookup_group(VMAIL)?,
    ) {
        (Some(u), Some(g)) => Some((u.uid, g.gid)),
        _ => None,
    };
    e.dir_ids(home, 0o755, ids, "vmail:vmail")?;
    Ok(ids)
}

/// `dovecot.conf`'s rows. `vmail` is the store's `(uid, gid)`.
pub fn dovecot_conf(e: &Engine, config: &NodeConfig, vmail: (u32, u32)) -> ServiceFile {
    let mut f = ServiceFile::new(
        "dovecot",
        "dovecot.conf",
        e.provider.mail_layout().dovecot_config,
        Syntax::Dovecot,
    );
    let path = |p: &str| e.map(p).display().to_string();
    let passwd = e.provider.dovecot_passwd_path().display().to_string();
    let section = |parts: &[&str]| parts.join(SECTION);
    let lmtp = format!(
        "unix_listener {}",
        path(&format!("{QUEUE_DIR}/{LMTP_SOCKET}"))
    );
    let auth = format!(
        "unix_listener {}",
        path(&format!("{QUEUE_DIR}/{AUTH_SOCKET}"))
    );
    f.set("protocols", "imap pop3 lmtp")
        .set("listen", "*, ::")
        .set("base_dir", format!("{}/", path("/run/dovecot")))
        .set("state_dir", path("/var/lib/dovecot"))
        .set("hostname", config.name.as_str())
        .set("ssl", "required")
        .set("ssl_cert", format!("<{}", path(paths::TLS_CERT)))
        .set("ssl_key", format!("<{}", path(paths::TLS_KEY)))
        // The DH parameters dovecot-core ships (a distribution file, read where it is).
        .set("ssl_dh", format!("<{}", dh_params(e.provider.platform())))
        .set("ssl_min_protocol", "TLSv1.2")
        .set("disable_plaintext_auth", "yes")
        .set("auth_mechanisms", "plain login")
        .set("mail_uid", VMAIL)
        .set("mail_gid", VMAIL)
        .set("first_valid_uid", vmail.0.to_string())
        .set("last_valid_uid", vmail.0.to_string())
        .set("first_valid_gid", vmail.1.to_string())
        .set("last_valid_gid", vmail.1.to_string())
        .set("mail_location", "maildir:~/Maildir")
        .set("mail_plugins", "$mail_plugins quota")
        .set(section(&["namespace inbox", "inbox"]), "yes")
        .set(section(&["namespace inbox", "separator"]), ".")
        .set(
            section(&["namespace inbox", "mailbox Drafts", "special_use"]),
            "\\Drafts",
        )
        .set(
            section(&["namespace inbox", "mailbox Drafts", "auto"]),
            "subscribe",
        )
        .set(
            section(&["namespace inbox", "mailbox Junk", "special_use"]),
            "\\Junk",
        )
        .set(
            section(&["namespace inbox", "mailbox Junk", "auto"]),
            "subscribe",
        )
        .set(
            section(&["namespace inbox", "mailbox Sent", "special_use"]),
            "\\Sent",
        )
        .set(
            section(&["namespace inbox", "mailbox Sent", "auto"]),
            "subscribe",
        )
        .set(
            section(&["namespace inbox", "mailbox Trash", "special_use"]),
            "\\Trash",
        )
        .set(
            section(&["namespace inbox", "mailbox Trash", "auto"]),
            "subscribe",
        )
        // The node's mailboxes only: the passwd-file the mail families derive.
        .set(section(&["passdb", "driver"]), "passwd-file")
        .set(
            section(&["passdb", "args"]),
            format!("scheme=SHA512-CRYPT username_format=%Lu {passwd}"),
        )
        .set(section(&["userdb", "driver"]), "passwd-file")
        .set(
            section(&["userdb", "args"]),
            format!("username_format=%Lu {passwd}"),
        )
        .set(
            section(&["protocol lmtp", "mail_plugins"]),
            "$mail_plugins sieve",
        )
        .set(
            section(&["protocol lmtp", "postmaster_address"]),
            format!("postmaster@{}", config.name),
        )
        .set(section(&["plugin", "quota"]), "maildir:User quota")
        .set(section(&["plugin", "sieve_vacation_min_period"]), "1d")
        .set(section(&["plugin", "sieve_vacation_max_period"]), "60d")
        .set(section(&["service lmtp", &lmtp, "mode"]), "0600")
        .set(section(&["service lmtp", &lmtp, "user"]), "postfix")
        .set(section(&["service lmtp", &lmtp, "group"]), "postfix")
        .set(section(&["service auth", &auth, "mode"]), "0660")
        .set(section(&["service auth", &auth, "user"]), "postfix")
        .set(section(&["service auth", &auth, "group"]), "postfix")
        .set(
            section(&["service imap-login", "inet_listener imap", "port"]),
            "143",
        )
        .set(
            section(&["service imap-login", "inet_listener imaps", "port"]),
            "993",
        )
        .set(
            section(&["service imap-login", "inet_listener imaps", "ssl"]),
            "yes",
        )
        .set(
            section(&["service pop3-login", "inet_listener pop3", "port"]),
            "110",
        )
        .set(
            section(&["service pop3-login", "inet_listener pop3s", "port"]),
            "995",
        )
        .set(
            section(&["service pop3-login", "inet_listener pop3s", "ssl"]),
            "yes",
        )
        // The tenants' mail host names by SNI (`local_name` blocks `ops::mail_hosts`
        // derives; absent until then).
        .set(
            format!("!include_try {}", e.provider.dovecot_sni_path().display()),
            "",
        );
    f
}

/// The `vmail` user, then `dovecot.conf` when Dovecot is installed in the root (checked
/// with `doveconf -n` after writing). Returns whether the file changed.
pub fn converge(
    e: &mut Engine,
    config: &NodeConfig,
    notes: &mut Vec<String>,
) -> Result<bool, InstallError> {
    let ids = vmail(e)?;
    let conf = e.provider.mail_layout().dovecot_config;
    let dir = conf.rsplit_once('/').map_or(conf, |(d, _)| d);
    if !present(e, dir) {
        notes.push(format!(
            "Dovecot is not installed ({dir} missing, Debian packages dovecot-core dovecot-imapd dovecot-pop3d dovecot-lmtpd dovecot-sieve): mailboxes are not served"
        ));
        return Ok(false);
    }
    // Under --check on a root without the user yet, the ids the user will get are unknown.
    let file = dovecot_conf(e, config, ids.unwrap_or((0, 0)));
    let changed = converge_file(e, &file)?;
    if changed
        && !e.check
        && let Err(err) = e.provider.doveconf_check()
    {
        notes.push(format!(
            "Dovecot's check failed on the derived dovecot.conf: {err}"
        ));
    }
    Ok(changed)
}
