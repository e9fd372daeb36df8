//! Postfix: `main.cf` and `master.cf`, written whole from the table.
//!
//! `main.cf`: the node's name (`myhostname`), local delivery for `localhost` only, every
//! hosted domain virtual (the node's `texthash:` tables, delivered over LMTP to Dovecot),
//! TLS with the node's certificate, SASL through Dovecot's auth socket, OpenDKIM as milter,
//! the sending gate and the spam classes, `inet_interfaces` and `relayhost` from the
//! configuration's `[mail]` table. `master.cf`: Debian's stock services with no chroot
//! (so the sockets' paths are the plain `private/...` ones), plus `submission` on 587 that
//! takes only authenticated clients over TLS.
//!
//! Paths are mapped under the install root (the identity on a server), so
//! `postfix -c <root>/etc/postfix check` checks a sysroot's files.

use provider::{PostfixMap, SPAM_CLASS_STANDARD, SPAM_CLASS_STRICT};

use super::{ServiceFile, Syntax, converge_file, present};
use crate::config::NodeConfig;
use crate::converge::Engine;
use crate::{InstallError, paths};

/// The OpenDKIM milter's address, as Postfix names it (`opendkim.rs` listens there).
pub const DKIM_MILTER: &str = "inet:127.0.0.1:8891";
/// Dovecot's LMTP and auth sockets, relative to Postfix's queue directory.
pub const LMTP_SOCKET: &str = "private/dovecot-lmtp";
pub const AUTH_SOCKET: &str = "private/auth";
/// Postfix's queue directory (the sockets above live under it).
pub const QUEUE_DIR: &str = "/var/spool/postfix";

/// `main.cf`'s rows.
pub fn main_cf(e: &Engine, config: &NodeConfig) -> ServiceFile {
    let dir = e.provider.mail_layout().postfix_dir;
    let mut f = ServiceFile::new(
        "postfix",
        "main.cf",
        format!("{dir}/main.cf"),
        Syntax::PostfixMain,
    );
    let path = |p: &str| e.map(p).display().to_string();
    let map = |m: PostfixMap| format!("texthash:{}", e.provider.postfix_map_path(m).display());
    f.set("compatibility_level", "3.6")
        .set("queue_directory", path(QUEUE_DIR))
        .set("data_directory", path("/var/lib/postfix"))
        .set("myhostname", config.name.as_str())
        .set("myorigin", "$myhostname")
        .set("mydestination", "localhost")
        .set("mynetworks", "127.0.0.0/8 [::1]/128")
        .set("inet_interfaces", config.mail.inet_interfaces.as_str())
        .set("inet_protocols", "all")
        .set("relayhost", config.mail.relayhost.as_str())
        // Read as text, like the node's maps: no aliases.db for newaliases to build first
        // (Debian's postfix package leaves /etc/aliases unbuilt when it is not configured).
        .set("alias_maps", format!("texthash:{}", path("/etc/aliases")))
        .set("alias_database", "")
        .set("smtpd_banner", "$myhostname ESMTP")
        .set("biff", "no")
        .set("append_dot_mydomain", "no")
        .set("readme_directory", "no")
        .set("recipient_delimiter", "+")
        .set("mailbox_size_limit", "0")
        // The hosted domains: virtual mailboxes, delivered to Dovecot over LMTP.
        .set("virtual_mailbox_domains", map(PostfixMap::Domains))
        .set("virtual_mailbox_maps", map(PostfixMap::Mailboxes))
        .set("virtual_alias_maps", map(PostfixMap::Aliases))
        .set("virtual_transport", format!("lmtp:unix:{LMTP_SOCKET}"))
        // The sending gate, and the spam classes of each filtered domain.
        .set(
            "smtpd_sender_restrictions",
            format!("check_sender_access {}", map(PostfixMap::SenderGate)),
        )
        .set(
            "smtpd_recipient_restrictions",
            format!(
                "permit_mynetworks, permit_sasl_authenticated, reject_unauth_destination, check_recipient_access {}",
                map(PostfixMap::Spam)
            ),
        )
        .set(
            "smtpd_restriction_classes",
            format!("{SPAM_CLASS_STANDARD}, {SPAM_CLASS_STRICT}"),
        )
        .set(
            SPAM_CLASS_STANDARD,
            "reject_rbl_client zen.spamhaus.org, reject_unknown_sender_domain",
        )
        .set(
            SPAM_CLASS_STRICT,
            "reject_rbl_client zen.spamhaus.org, reject_rhsbl_sender dbl.spamhaus.org, reject_unknown_sender_domain, reject_unknown_reverse_client_hostname",
        )
        .set(
            "smtpd_relay_restrictions",
            "permit_mynetworks, permit_sasl_authenticated, defer_unauth_destination",
        )
        // TLS with the node's certificate.
        .set("smtpd_tls_cert_file", path(paths::TLS_CERT))
        .set("smtpd_tls_key_file", path(paths::TLS_KEY))
        // The tenants' mail host names by SNI (`ops::mail_hosts` derives the table).
        .set(
            "tls_server_sni_maps",
            format!("texthash:{}", e.provider.postfix_sni_map_path().display()),
        )
        .set("smtpd_tls_security_level", "may")
        .set("smtpd_tls_auth_only", "yes")
        .set("smtpd_tls_session_cache_database", "btree:${data_directory}/smtpd_scache")
        .set("smtp_tls_security_level", "may")
        .set("smtp_tls_session_cache_database", "btree:${data_directory}/smtp_scache")
        // SASL: Dovecot's auth socket (offered on submission only, see master.cf).
        .set("smtpd_sasl_type", "dovecot")
        .set("smtpd_sasl_path", AUTH_SOCKET)
        .set("smtpd_sasl_security_options", "noanonymous")
        // OpenDKIM signs (and verifies); mail is accepted when it is down.
        .set("smtpd_milters", DKIM_MILTER)
        .set("non_smtpd_milters", DKIM_MILTER)
        .set("milter_default_action", "accept");
    f
}

/// Debian's stock `master.cf` services (the ones its package enables), chroot off.
const STOCK_SERVICES: &[(&str, &str)] = &[
    ("smtp/inet", "n - n - - smtpd"),
    ("pickup/unix", "n - n 60 1 pickup"),
    ("cleanup/unix", "n - n - 0 cleanup"),
    ("qmgr/unix", "n - n 300 1 qmgr"),
    ("tlsmgr/unix", "- - n 1000? 1 tlsmgr"),
    ("rewrite/unix", "- - n - - trivial-rewrite"),
    ("bounce/unix", "- - n - 0 bounce"),
    ("defer/unix", "- - n - 0 bounce"),
    ("trace/unix", "- - n - 0 bounce"),
    ("verify/unix", "- - n - 1 verify"),
    ("flush/unix", "n - n 1000? 0 flush"),
    ("proxymap/unix", "- - n - - proxymap"),
    ("proxywrite/unix", "- - n - 1 proxymap"),
    ("smtp/unix", "- - n - - smtp"),
    (
        "relay/unix",
        "- - n - - smtp -o syslog_name=postfix/$service_name",
    ),
    ("showq/unix", "n - n - - showq"),
    ("error/unix", "- - n - - error"),
    ("retry/unix", "- - n - - error"),
    ("discard/unix", "- - n - - discard"),
    ("local/unix", "- n n - - local"),
    ("virtual/unix", "- n n - - virtual"),
    ("lmtp/unix", "- - n - - lmtp"),
    ("anvil/unix", "- - n - 1 anvil"),
    ("scache/unix", "- - n - 1 scache"),
    ("postlog/unix-dgram", "n - n - 1 postlogd"),
];

/// `master.cf`'s rows: smtp on 25, submission on 587 (TLS required, authenticated clients
/// only), then the stock services.
pub fn master_cf(e: &Engine) -> ServiceFile {
    let dir = e.provider.mail_layout().postfix_dir;
    let mut f = ServiceFile::new(
        "postfix",
        "master.cf",
        format!("{dir}/master.cf"),
        Syntax::PostfixMaster,
    );
    f.fixed = "# service type  private unpriv  chroot  wakeup  maxproc command + args\n".into();
    for (i, (key, value)) in STOCK_SERVICES.iter().enumerate() {
        f.set(*key, *value);
        if i == 0 {
            f.set(
                "submission/inet",
                "n - n - - smtpd -o syslog_name=postfix/submission \
                 -o smtpd_tls_security_level=encrypt -o smtpd_sasl_auth_enable=yes \
                 -o smtpd_tls_auth_only=yes \
                 -o smtpd_recipient_restrictions=permit_sasl_authenticated,reject",
            );
        }
    }
    f
}

/// Writes both files when Postfix is installed in the root; returns whether one changed.
pub fn converge(
    e: &mut Engine,
    config: &NodeConfig,
    notes: &mut Vec<String>,
) -> Result<bool, InstallError> {
    let dir = e.provider.mail_layout().postfix_dir;
    if !present(e, dir) {
        notes.push(format!(
            "Postfix is not installed ({dir} missing, Debian package postfix): mail is not configured"
        ));
        return Ok(false);
    }
    let mut changed = converge_file(e, &main_cf(e, config))?;
    changed |= converge_file(e, &master_cf(e))?;
    // The SNI table `main.cf` names must exist for smtpd to open it: empty (no mail host
    // name) until the mail families derive it.
    let sni = format!(
        "{}/{}",
        e.provider.mail_layout().postfix_maps_dir,
        provider::POSTFIX_SNI_MAP
    );
    if !present(e, &sni) {
        e.write(
            &sni,
            b"",
            0o644,
            store::LayoutOwner::Root,
            crate::converge::WriteReason::Missing,
        )?;
        changed = true;
    }
    if changed
        && !e.check
        && let Err(err) = e.provider.postfix_check()
    {
        notes.push(format!(
            "Postfix's check failed on the derived files: {err}"
        ));
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::services::dovecot::dovecot_conf;

    fn engine(root: &std::path::Path) -> Engine {
        let provider = provider::Provider::new(provider::ProviderConfig {
            platform: provider::Platform::Debian,
            root: root.to_owned(),
            executor: Arc::new(provider::RealExecutor),
            machine: Arc::new(provider::RealMachine),
            audit_dir: root.join("audit"),
        });
        Engine::new(provider, true).unwrap()
    }

    fn config() -> NodeConfig {
        NodeConfig::parse(
            "node_id = \"0123456789abcdef0123456789abcdef\"\nname = \"node1.example.com\"\n\
             platform = \"debian\"\nlisten = \"127.0.0.1:8443\"\n",
        )
        .unwrap()
    }

    /// The tests' own configurations (testkit) carry the provider's map settings: every one
    /// of them is a row of the installer's table, with the same value, so what the tests
    /// check is what a node runs.
    #[test]
    fn the_map_settings_the_tests_use_are_rows_of_the_table() {
        let dir = tempfile::tempdir().unwrap();
        let e = engine(dir.path());
        let main = main_cf(&e, &config());
        let theirs = main.parse(&e.provider.postfix_main_settings());
        assert!(theirs.len() >= 9, "{theirs:?}");
        for (key, value) in &theirs {
            let row = main.rows.iter().find(|r| &r.key == key);
            assert_eq!(row.map(|r| &r.value), Some(value), "main.cf {key}");
        }
        let dovecot = dovecot_conf(&e, &config(), (5000, 5000));
        let theirs = dovecot.parse(&e.provider.dovecot_settings());
        assert!(theirs.len() >= 9, "{theirs:?}");
        for (key, value) in &theirs {
            let row = dovecot.rows.iter().find(|r| &r.key == key);
            assert_eq!(row.map(|r| &r.value), Some(value), "dovecot.conf {key}");
        }
    }
}
