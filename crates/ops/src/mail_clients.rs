//! The settings mail clients find by themselves for a hosted mail domain: Thunderbird's
//! autoconfig (`config-v1.1.xml`) and Outlook's autodiscover (the POX response), derived
//! from the mail domain's row and its mail host (`crate::mail_records`): IMAPS 993 and POP3S
//! 995 over implicit TLS, submission 587 with STARTTLS, the full address as the user name.
//!
//! Each hosted mail domain has two static files in a node-owned directory
//! ([`MAIL_CLIENTS_DIR`]`/<mail domain id>/`, root's, 0644) and a node-owned vhost
//! (`mail-clients-<id>.conf` in the vhosts directory) for `autoconfig.<domain>` and
//! `autodiscover.<domain>` on port 80 that serves them and nothing else. A tenant web domain
//! named as the mail domain (or with it as an alias) serves the same files at
//! `/.well-known/autoconfig/mail/config-v1.1.xml` and `/autodiscover/autodiscover.xml`, over
//! HTTPS too when a certificate is bound (`crate::vhost`), which is where Outlook, which
//! asks over HTTPS only, finds a certificate for the domain.
//!
//! Nothing is executed and nothing comes from a tenant's home (`docs/security.md`): the
//! answers are files root wrote, aliased ahead of the document root, in a `<Directory>` no
//! `.htaccess` applies to. Outlook POSTs the address it configures; Apache's static handler
//! answers a POST with the file, so the response is the same for every address of the
//! domain and carries no `LoginName`: Outlook keeps the address the user typed as the user
//! name, which is the mailbox's login (the full address). Thunderbird's file says
//! `%EMAILADDRESS%`, which it fills in.
//!
//! Every value in the files is a validated domain name, a port or a constant, so nothing
//! needs escaping in XML or in Apache's configuration.

use std::path::PathBuf;

use registry::types::{DomainName, Hex32};
use registry::{Aspects, Content, Derived, Of, OpError};
use state::Stored;

use crate::context::{ConfigFile, Ctx, Service, provider_error, store_error};
use crate::mail_domain::MailDomainRow;
use crate::mail_records::{
    AUTOCONFIG_LABEL, AUTODISCOVER_LABEL, IMAPS_PORT, POP3S_PORT, SUBMISSION_PORT, domain_dns,
};

/// Where the settings files live (a system path: mapped with `sysconf`).
pub const MAIL_CLIENTS_DIR: &str = "/var/lib/layerone/mail-clients";

/// Thunderbird's file name.
pub const AUTOCONFIG_FILE: &str = "config-v1.1.xml";

/// Outlook's file name.
pub const AUTODISCOVER_FILE: &str = "autodiscover.xml";

/// Where Thunderbird asks on `autoconfig.<domain>`.
pub const AUTOCONFIG_PATH: &str = "/mail/config-v1.1.xml";

/// Where Thunderbird asks on the domain itself.
pub const WELL_KNOWN_AUTOCONFIG_PATH: &str = "/.well-known/autoconfig/mail/config-v1.1.xml";

/// Where Outlook POSTs, in both spellings it uses (Apache's paths are case-sensitive).
pub const AUTODISCOVER_PATHS: [&str; 2] = [
    "/autodiscover/autodiscover.xml",
    "/Autodiscover/Autodiscover.xml",
];

/// What the settings files and the vhost are, for the drift check.
pub const SETTINGS_FILE: Aspects = Aspects::new(
    crate::mail_domain::MAIL_CLIENT_SETTINGS_MISSING,
    crate::mail_domain::MAIL_CLIENT_SETTINGS_DIFFERS,
);

/// The directory of mail domain `id`'s settings files (mapped).
pub fn dir(ctx: &Ctx, id: &Hex32) -> PathBuf {
    ctx.provider.sysconf(MAIL_CLIENTS_DIR).join(id.to_string())
}

/// The vhost of mail domain `id`'s settings names (mapped).
pub fn vhost_path(ctx: &Ctx, id: &Hex32) -> PathBuf {
    ctx.provider
        .sysconf(ctx.provider.apache_layout().vhosts_dir)
        .join(format!("mail-clients-{id}.conf"))
}

/// Thunderbird's autoconfig file for `domain` served by `host`.
pub fn autoconfig_xml(domain: &DomainName, host: &DomainName) -> String {
    let incoming = |kind: &str, port: u16| {
        format!(
            "    <incomingServer type=\"{kind}\">\n\
             \x20     <hostname>{host}</hostname>\n\
             \x20     <port>{port}</port>\n\
             \x20     <socketType>SSL</socketType>\n\
             \x20     <authentication>password-cleartext</authentication>\n\
             \x20     <username>%EMAILADDRESS%</username>\n\
             \x20   </incomingServer>\n"
        )
    };
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <clientConfig version=\"1.1\">\n\
         \x20 <emailProvider id=\"{domain}\">\n\
         \x20   <domain>{domain}</domain>\n\
         \x20   <displayName>{domain}</displayName>\n\
         \x20   <displayShortName>{domain}</displayShortName>\n\
         {}{}\
         \x20   <outgoingServer type=\"smtp\">\n\
         \x20     <hostname>{host}</hostname>\n\
         \x20     <port>{SUBMISSION_PORT}</port>\n\
         \x20     <socketType>STARTTLS</socketType>\n\
         \x20     <authentication>password-cleartext</authentication>\n\
         \x20     <username>%EMAILADDRESS%</username>\n\
         \x20   </outgoingServer>\n\
         \x20 </emailProvider>\n\
         </clientConfig>\n",
        incoming("imap", IMAPS_PORT),
        incoming("pop3", POP3S_PORT),
    )
}

/// Outlook's POX autodiscover response for a domain served by `host` (the same for every
/// address: see the module's documentation).
pub fn autodiscover_xml(host: &DomainName) -> String {
    let incoming = |kind: &str, port: u16| {
        format!(
            "      <Protocol>\n\
             \x20       <Type>{kind}</Type>\n\
             \x20       <Server>{host}</Server>\n\
             \x20       <Port>{port}</Port>\n\
             \x20       <DomainRequired>off</DomainRequired>\n\
             \x20       <SPA>off</SPA>\n\
             \x20       <SSL>on</SSL>\n\
             \x20       <AuthRequired>on</AuthRequired>\n\
             \x20     </Protocol>\n"
        )
    };
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n\
         <Autodiscover xmlns=\"http://schemas.microsoft.com/exchange/autodiscover/responseschema/2006\">\n\
         \x20 <Response xmlns=\"http://schemas.microsoft.com/exchange/autodiscover/outlook/responseschema/2006a\">\n\
         \x20   <Account>\n\
         \x20     <AccountType>email</AccountType>\n\
         \x20     <Action>settings</Action>\n\
         {}{}\
         \x20     <Protocol>\n\
         \x20       <Type>SMTP</Type>\n\
         \x20       <Server>{host}</Server>\n\
         \x20       <Port>{SUBMISSION_PORT}</Port>\n\
         \x20       <DomainRequired>off</DomainRequired>\n\
         \x20       <SPA>off</SPA>\n\
         \x20       <Encryption>TLS</Encryption>\n\
         \x20       <AuthRequired>on</AuthRequired>\n\
         \x20       <UsePOPAuth>off</UsePOPAuth>\n\
         \x20       <SMTPLast>off</SMTPLast>\n\
         \x20     </Protocol>\n\
         \x20   </Account>\n\
         \x20 </Response>\n\
         </Autodiscover>\n",
        incoming("IMAP", IMAPS_PORT),
        incoming("POP3", POP3S_PORT),
    )
}

/// The `Alias` lines and `<Directory>` that answer the settings paths from `dir`: what the
/// settings vhost and a tenant vhost of the domain both carry.
pub fn render_aliases(dir: &std::path::Path, paths: &[&str]) -> String {
    let d = dir.display();
    let mut out = String::new();
    for path in paths {
        let file = if path.ends_with(AUTOCONFIG_FILE) {
            AUTOCONFIG_FILE
        } else {
            AUTODISCOVER_FILE
        };
        out.push_str(&format!("    Alias \"{path}\" \"{d}/{file}\"\n"));
    }
    out.push_str(&format!(
        "    <Directory \"{d}\">\n\
         \x20       Options None\n\
         \x20       AllowOverride None\n\
         \x20       Require all granted\n\
         \x20   </Directory>\n"
    ));
    out
}

/// The settings vhost of mail domain `id` for `domain`, its files in `dir`.
pub fn render_vhost(id: &Hex32, domain: &DomainName, dir: &std::path::Path) -> String {
    let mut paths = vec![AUTOCONFIG_PATH, WELL_KNOWN_AUTOCONFIG_PATH];
    paths.extend(AUTODISCOVER_PATHS);
    format!(
        "# Managed by layerone node for mail domain {id}: mail clients' settings.\n\
         # Changes made here are replaced.\n\
         <VirtualHost *:80>\n\
         \x20   ServerName {AUTOCONFIG_LABEL}.{domain}\n\
         \x20   ServerAlias {AUTODISCOVER_LABEL}.{domain}\n\
         \x20   DocumentRoot \"{}\"\n\
         {}</VirtualHost>\n",
        dir.display(),
        render_aliases(dir, &paths)
    )
}

/// The files of one mail domain as they should be now: its vhost and its two settings
/// files; none when the node has no name yet (nothing to name as the mail host).
fn files(ctx: &Ctx, stored: &Stored<MailDomainRow>) -> Result<Vec<ConfigFile>, OpError> {
    let dns = domain_dns(ctx, &stored.owner, &stored.row.domain)?;
    let Some(host) = dns.mail_host else {
        return Ok(Vec::new());
    };
    let dir = dir(ctx, &stored.id);
    let file = |path: PathBuf, content: String| ConfigFile {
        path,
        content: content.into_bytes(),
        secret_group: None,
    };
    Ok(vec![
        file(
            dir.join(AUTOCONFIG_FILE),
            autoconfig_xml(&stored.row.domain, &host),
        ),
        file(dir.join(AUTODISCOVER_FILE), autodiscover_xml(&host)),
        file(
            vhost_path(ctx, &stored.id),
            render_vhost(&stored.id, &stored.row.domain, &dir),
        ),
    ])
}

/// Writes mail domain `id`'s settings files and vhost as the view has the domain, or
/// removes them when the view has no such domain (or the node no name).
pub fn sync(ctx: &mut Ctx, id: &Hex32) -> Result<(), OpError> {
    let stored = ctx.view().get::<MailDomainRow>(id).map_err(store_error)?;
    let files = match &stored {
        Some(stored) => files(ctx, stored)?,
        None => Vec::new(),
    };
    if files.is_empty() {
        return remove(ctx, id);
    }
    ctx.provider
        .ensure_dir(&dir(ctx, id), 0o755)
        .map_err(provider_error)?;
    ctx.write_service_configs(Service::Apache, &files)
}

/// Removes mail domain `id`'s vhost and settings files (already absent is success).
pub fn remove(ctx: &mut Ctx, id: &Hex32) -> Result<(), OpError> {
    let vhost = vhost_path(ctx, id);
    ctx.remove_service_config(Service::Apache, &vhost)?;
    let dir = dir(ctx, id);
    ctx.provider.remove_tree(&dir).map_err(provider_error)
}

/// Every mail domain's settings files and vhost as [`sync`] would write them, with what is
/// there: for the drift check.
pub fn derived(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
    let mut items = Vec::new();
    for stored in ctx.view().all::<MailDomainRow>().map_err(store_error)? {
        for file in files(ctx, &stored)? {
            let actual = ctx
                .provider
                .read_config(&file.path)
                .map_err(provider_error)?;
            items.push(Derived::path(
                Of::new(&stored.id, &stored.owner),
                file.path,
                Content::Bytes(file.content),
                Content::file(actual),
                SETTINGS_FILE,
            ));
        }
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_name_the_mail_host_with_tls_on_every_port() {
        let domain: DomainName = "shop.example.com".parse().unwrap();
        let host: DomainName = "node1.provider.net".parse().unwrap();
        let thunderbird = autoconfig_xml(&domain, &host);
        assert!(thunderbird.contains("<emailProvider id=\"shop.example.com\">"));
        assert_eq!(
            thunderbird
                .matches("<hostname>node1.provider.net</hostname>")
                .count(),
            3
        );
        assert!(thunderbird.contains("<port>993</port>\n      <socketType>SSL</socketType>"));
        assert!(thunderbird.contains("<port>995</port>\n      <socketType>SSL</socketType>"));
        assert!(thunderbird.contains("<port>587</port>\n      <socketType>STARTTLS</socketType>"));
        let outlook = autodiscover_xml(&host);
        assert_eq!(
            outlook
                .matches("<Server>node1.provider.net</Server>")
                .count(),
            3
        );
        assert!(outlook.contains("<Encryption>TLS</Encryption>"));
        assert!(!outlook.contains("LoginName"));
    }

    #[test]
    fn the_settings_vhost_answers_only_the_settings_names_from_the_node_directory() {
        let id: Hex32 = "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4".parse().unwrap();
        let domain: DomainName = "shop.example.com".parse().unwrap();
        let text = render_vhost(&id, &domain, std::path::Path::new("/srv/m/d4"));
        assert!(text.contains("    ServerName autoconfig.shop.example.com\n"));
        assert!(text.contains("    ServerAlias autodiscover.shop.example.com\n"));
        assert!(text.contains(
            "    Alias \"/autodiscover/autodiscover.xml\" \"/srv/m/d4/autodiscover.xml\"\n"
        ));
        assert!(
            text.contains("    Alias \"/mail/config-v1.1.xml\" \"/srv/m/d4/config-v1.1.xml\"\n")
        );
        assert!(!text.contains("AssignUserID"), "no tenant runs it");
    }
}
