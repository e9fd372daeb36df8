//! The tenants' mail host names served by SNI: when a mail domain's host is `mail.<domain>`
//! (`crate::mail_records::mail_host`, the one rule: the account has a certificate bound to a
//! web domain named or aliased so), IMAPS/POP3S (Dovecot's `local_name`) and submission/SMTP
//! (Postfix's `tls_server_sni_maps`) present that certificate to a client asking for the
//! name; every other name gets the node's certificate.
//!
//! Two files, this module their one owner, derived whole from the view (mail domain rows,
//! certificate rows, web domain rows) and the node's name:
//!
//! - Postfix's `texthash:` table ([`provider::Provider::postfix_sni_map_path`]):
//!   `mail.<domain> <key file> <chain file>`, the key first as Postfix requires. A
//!   `texthash:` table's values are file lists whose contents Postfix loads when it opens the
//!   table (as root, before dropping privileges), so there is no `postmap -F` build step and
//!   no copy of the key.
//! - Dovecot's included file ([`provider::Provider::dovecot_sni_path`]): one
//!   `local_name mail.<domain> { ssl_cert = <chain  ssl_key = <key }` block per name.
//!
//! Both name the certificate family's own files (`/etc/layerone/certificates/<id>.crt`,
//! `.key`), never a tenant's. Every name is a validated domain name and every path is built
//! from a resource id, so nothing needs quoting. Written by the mail domain operations and
//! the certificate operations (issue, renewal, removal), each time with Postfix and Dovecot
//! reloaded by the batch when the file is written; an absent file and an empty one are the
//! same (the installer creates the empty Postfix table so `smtpd` can open it).

use std::path::PathBuf;

use registry::types::{DomainName, Hex32};
use registry::{Aspects, Derived, DerivedTable, Of, OpError, Owner};

use crate::certificate::certificate_files;
use crate::context::{ConfigFile, Ctx, Service, provider_error, store_error};
use crate::mail_domain::MailDomainRow;
use crate::mail_records::{certificates_with_names, mail_host, node_name};

/// One mail host name served by SNI: the mail domain it is the host of, and the files of the
/// certificate that covers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MailHost {
    pub of: Of,
    pub name: DomainName,
    pub chain: PathBuf,
    pub key: PathBuf,
}

/// What the Postfix table is, for the drift check.
const POSTFIX_TABLE: Aspects = Aspects::new(
    crate::mail_domain::POSTFIX_ENTRY_MISSING,
    crate::mail_domain::POSTFIX_TABLE_DIFFERS,
);

/// What the Dovecot file is, for the drift check.
const DOVECOT_FILE: Aspects = Aspects::new(
    crate::mailbox::DOVECOT_ENTRY_MISSING,
    crate::mailbox::DOVECOT_PASSWD_DIFFERS,
);

/// The mail host names the node serves by SNI, as the view has them, in mail domain order:
/// none when the node has no name yet (as `crate::mail_records::domain_dns`).
pub fn hosts(ctx: &Ctx) -> Result<Vec<MailHost>, OpError> {
    let Some(node) = node_name(ctx)? else {
        return Ok(Vec::new());
    };
    let mut hosts = Vec::new();
    for stored in ctx.view().all::<MailDomainRow>().map_err(store_error)? {
        let Owner::Tenant(account) = &stored.owner else {
            continue;
        };
        let certificates = certificates_with_names(&ctx.view(), account)?;
        let host = mail_host(
            &node,
            &stored.row.domain,
            certificates.iter().flat_map(|(_, names)| names),
        );
        if host == node {
            continue;
        }
        // The certificate bound to a web domain named or aliased the host.
        if let Some((cert, _)) = certificates.iter().find(|(_, names)| names.contains(&host)) {
            let (chain, key) = certificate_files(ctx, cert);
            hosts.push(MailHost {
                of: Of::new(&stored.id, &stored.owner),
                name: host,
                chain,
                key,
            });
        }
    }
    Ok(hosts)
}

/// Postfix's line for `host`: the key file, then the chain file.
pub fn postfix_line(host: &MailHost) -> String {
    format!(
        "{} {} {}",
        host.name,
        host.key.display(),
        host.chain.display()
    )
}

/// Dovecot's lines for `host`: its `local_name` block.
pub fn dovecot_lines(host: &MailHost) -> Vec<String> {
    vec![
        format!("local_name {} {{", host.name),
        format!("  ssl_cert = <{}", host.chain.display()),
        format!("  ssl_key = <{}", host.key.display()),
        "}".to_owned(),
    ]
}

fn text(lines: impl IntoIterator<Item = String>) -> String {
    lines.into_iter().map(|line| line + "\n").collect()
}

/// Postfix's table, whole (empty with no host).
pub fn render_postfix(hosts: &[MailHost]) -> String {
    text(hosts.iter().map(postfix_line))
}

/// Dovecot's file, whole (empty with no host).
pub fn render_dovecot(hosts: &[MailHost]) -> String {
    text(hosts.iter().flat_map(dovecot_lines))
}

/// The two files as they should be now, each with its service.
fn files(ctx: &Ctx) -> Result<[(Service, ConfigFile); 2], OpError> {
    let hosts = hosts(ctx)?;
    let file = |path: PathBuf, content: String| ConfigFile {
        path,
        content: content.into_bytes(),
        secret_group: None,
    };
    Ok([
        (
            Service::Postfix,
            file(ctx.provider.postfix_sni_map_path(), render_postfix(&hosts)),
        ),
        (
            Service::Dovecot,
            file(ctx.provider.dovecot_sni_path(), render_dovecot(&hosts)),
        ),
    ])
}

/// Writes each file (tested, and its service reloaded by the batch) when `force` or when it
/// is not as derived; an absent file is as good as an empty one. `force` is for a job that
/// replaced a certificate the files name: the text is the same, the service must reload.
pub fn sync(ctx: &mut Ctx, force: bool) -> Result<(), OpError> {
    for (service, file) in files(ctx)? {
        let there = ctx
            .provider
            .read_config(&file.path)
            .map_err(provider_error)?
            .unwrap_or_default();
        if !force && there == file.content {
            continue;
        }
        if let Some(dir) = file.path.parent() {
            ctx.provider
                .ensure_dir(dir, 0o755)
                .map_err(provider_error)?;
        }
        ctx.write_service_configs(service, std::slice::from_ref(&file))?;
    }
    Ok(())
}

/// The mail domains of `account` whose host name `mail.<domain>` is one of `names` (a web
/// domain's name and aliases): those a certificate bound to that web domain serves.
pub fn mail_domains_hosted_at(
    ctx: &Ctx,
    account: &Hex32,
    names: &[DomainName],
) -> Result<Vec<Hex32>, OpError> {
    let mut ids = Vec::new();
    for stored in ctx
        .view()
        .of_account::<MailDomainRow>(account)
        .map_err(store_error)?
    {
        let host = format!(
            "{}.{}",
            crate::mail_records::MAIL_HOST_LABEL,
            stored.row.domain
        );
        if names.iter().any(|name| name.as_str() == host) {
            ids.push(stored.id);
        }
    }
    Ok(ids)
}

/// The lines one host gives a file.
type HostLines = fn(&MailHost) -> Vec<String>;

/// Both files as [`sync`] would write them, with each mail domain's lines and what is there:
/// for the drift check (declared by `mail_domain`).
pub fn derived(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
    let hosts = hosts(ctx)?;
    let mut items = Vec::new();
    let tables: [(PathBuf, String, Aspects, HostLines); 2] = [
        (
            ctx.provider.postfix_sni_map_path(),
            render_postfix(&hosts),
            POSTFIX_TABLE,
            |host| vec![postfix_line(host)],
        ),
        (
            ctx.provider.dovecot_sni_path(),
            render_dovecot(&hosts),
            DOVECOT_FILE,
            dovecot_lines,
        ),
    ];
    for (path, expected, aspects, lines) in tables {
        let actual = ctx.provider.read_config(&path).map_err(provider_error)?;
        items.push(Derived::Table(DerivedTable {
            path,
            expected: expected.into_bytes(),
            actual,
            entries: hosts
                .iter()
                .map(|host| (host.of.clone(), lines(host)))
                .collect(),
            aspects,
        }));
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> MailHost {
        let id: Hex32 = "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3".parse().unwrap();
        MailHost {
            of: Of::new(&id, &Owner::Tenant(id.clone())),
            name: "mail.shop.example.com".parse().unwrap(),
            chain: "/etc/layerone/certificates/c3.crt".into(),
            key: "/etc/layerone/certificates/c3.key".into(),
        }
    }

    #[test]
    fn postfix_names_the_key_first_and_dovecot_a_local_name_block() {
        assert_eq!(
            render_postfix(&[host()]),
            "mail.shop.example.com /etc/layerone/certificates/c3.key /etc/layerone/certificates/c3.crt\n"
        );
        assert_eq!(
            render_dovecot(&[host()]),
            "local_name mail.shop.example.com {\n  ssl_cert = </etc/layerone/certificates/c3.crt\n  ssl_key = </etc/layerone/certificates/c3.key\n}\n"
        );
        assert_eq!(render_postfix(&[]), "");
        assert_eq!(render_dovecot(&[]), "");
    }
}
