//! The DNS records a hosted mail domain needs, derived in one place: [`records`] is a pure
//! function of the domain, the node's name, the host name mail clients use and the domain's
//! DKIM public keys. `ensure_mail_domain` and the other `mail_domain` operations return its
//! list, `ensure_dkim_key` returns its SPF and DMARC text, and a zone for the domain is
//! derived from the same list.
//!
//! - **MX** `10 <mail host>.`, the host that receives for the domain.
//! - **SPF** `v=spf1 a mx ~all`: mail leaves through the domain's MX and A hosts (the node,
//!   which receives for it, and the web host whose scripts send through the local Postfix);
//!   others soft-fail, so DMARC decides. Two DNS lookups of the ten SPF allows.
//! - **DKIM** `<selector>._domainkey` TXT, each of the domain's keys' public record as
//!   `opendkim-genkey` wrote it.
//! - **DMARC** `_dmarc` TXT `v=DMARC1; p=quarantine; adkim=r; aspf=r`.
//! - **SRV for mail clients** (RFC 6186): `_submission._tcp` 587, `_imaps._tcp` 993,
//!   `_pop3s._tcp` 995 on the mail host; `_imap._tcp` and `_pop3._tcp` with target `.`
//!   (RFC 6186 section 4: not offered), because the node advertises implicit TLS only
//!   (RFC 8314 section 3), though Dovecot also listens with STARTTLS on 143 and 110.
//! - **autoconfig** and **autodiscover** `CNAME <node>.`: the node answers a mail client's
//!   settings request for those names (`crate::mail_clients`).
//!
//! The mail host is the node's name, or `mail.<domain>` when a certificate of the account
//! covers that name ([`mail_host`] over [`certified_names`]: a web domain named
//! `mail.<domain>`, or with it as an alias, with a certificate bound). That name already resolves to the node (its
//! certificate was issued or uploaded for a web domain served here), so the list does not
//! publish its address; it must be an address record, not a CNAME, since an MX or SRV
//! target may not be an alias (RFC 2181 section 10.3, RFC 2782). The node's addresses are
//! not in its configuration, so the list names hosts only.
//!
//! A record's value is zone-file presentation (RFC 1035 section 5.1): names absolute with
//! their trailing dot, TXT text as quoted strings of at most 255 bytes each.

pub use declarations::mail_domain::{DnsRecord, DnsRecordType};

use registry::types::mail::DkimSelector;
use registry::types::{DomainName, Hex32};
use registry::{OpError, Owner};
use state::View;

use crate::certificate::CertificateRow;
use crate::context::{Ctx, provider_error, store_error};
use crate::dkim_key::{DkimKeyRow, public_key_stub};
use crate::web_domain::WebDomainRow;

/// The time to live of every record, in seconds.
pub const TTL: u32 = 3600;

/// The MX preference of the mail host.
pub const MX_PREFERENCE: u16 = 10;

/// The label of a tenant's own mail host: `mail.<domain>`.
pub const MAIL_HOST_LABEL: &str = "mail";

/// The name Thunderbird asks for its settings: `autoconfig.<domain>`.
pub const AUTOCONFIG_LABEL: &str = "autoconfig";

/// The name Outlook asks for its settings: `autodiscover.<domain>`.
pub const AUTODISCOVER_LABEL: &str = "autodiscover";

/// Mail submission with STARTTLS (RFC 6409).
pub const SUBMISSION_PORT: u16 = 587;

/// IMAP over implicit TLS (RFC 8314).
pub const IMAPS_PORT: u16 = 993;

/// POP3 over implicit TLS (RFC 8314).
pub const POP3S_PORT: u16 = 995;

/// The SPF record's text.
pub const SPF: &str = "v=spf1 a mx ~all";

/// The DMARC record's text.
pub const DMARC: &str = "v=DMARC1; p=quarantine; adkim=r; aspf=r";

/// The longest character-string a TXT record holds (RFC 1035 section 3.3).
const TXT_STRING_MAX: usize = 255;

/// One DKIM key's public record: its selector and the text of its TXT record, unsplit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DkimPublicKey {
    pub selector: DkimSelector,
    pub text: String,
}

/// The SRV services of RFC 6186 the node offers, with their ports, and those it does not.
const OFFERED: [(&str, u16); 3] = [
    ("_submission._tcp", SUBMISSION_PORT),
    ("_imaps._tcp", IMAPS_PORT),
    ("_pop3s._tcp", POP3S_PORT),
];
const NOT_OFFERED: [&str; 2] = ["_imap._tcp", "_pop3._tcp"];

/// Every record `domain` needs, in a stable order: MX, SPF, DKIM (by selector), DMARC, SRV,
/// then the autoconfig and autodiscover names.
pub fn records(
    domain: &DomainName,
    node: &DomainName,
    mail_host: &DomainName,
    dkim: &[DkimPublicKey],
) -> Vec<DnsRecord> {
    let record = |name: String, record_type, value: String| DnsRecord {
        name,
        record_type,
        ttl: TTL,
        value,
    };
    let mut out = vec![
        record(
            domain.to_string(),
            DnsRecordType::Mx,
            format!("{MX_PREFERENCE} {mail_host}."),
        ),
        record(domain.to_string(), DnsRecordType::Txt, txt_value(SPF)),
    ];
    let mut keys: Vec<&DkimPublicKey> = dkim.iter().collect();
    keys.sort_by(|a, b| a.selector.as_str().cmp(b.selector.as_str()));
    for key in keys {
        out.push(record(
            format!("{}._domainkey.{domain}", key.selector),
            DnsRecordType::Txt,
            txt_value(&key.text),
        ));
    }
    out.push(record(
        format!("_dmarc.{domain}"),
        DnsRecordType::Txt,
        txt_value(DMARC),
    ));
    for (service, port) in OFFERED {
        out.push(record(
            format!("{service}.{domain}"),
            DnsRecordType::Srv,
            format!("0 1 {port} {mail_host}."),
        ));
    }
    for service in NOT_OFFERED {
        out.push(record(
            format!("{service}.{domain}"),
            DnsRecordType::Srv,
            "0 0 0 .".to_owned(),
        ));
    }
    for label in [AUTOCONFIG_LABEL, AUTODISCOVER_LABEL] {
        out.push(record(
            format!("{label}.{domain}"),
            DnsRecordType::Cname,
            format!("{node}."),
        ));
    }
    out
}

/// `text` as a TXT record's data: quoted character-strings of at most 255 bytes, with `"`
/// and `\` escaped (RFC 1035 section 5.1). The records' texts are ASCII, so a split never
/// falls inside a character.
pub fn txt_value(text: &str) -> String {
    let strings: Vec<String> = text
        .as_bytes()
        .chunks(TXT_STRING_MAX)
        .map(|chunk| {
            let mut quoted = String::from("\"");
            for &b in chunk {
                if b == b'"' || b == b'\\' {
                    quoted.push('\\');
                }
                quoted.push(char::from(b));
            }
            quoted.push('"');
            quoted
        })
        .collect();
    strings.join(" ")
}

/// The host mail clients and the MX use for `domain`: `mail.<domain>` when `certified`
/// lists it (the names the account's certificates cover), the node's name otherwise.
pub fn mail_host<'a>(
    node: &DomainName,
    domain: &DomainName,
    certified: impl IntoIterator<Item = &'a DomainName>,
) -> DomainName {
    let tenant = format!("{MAIL_HOST_LABEL}.{domain}");
    certified
        .into_iter()
        .find(|name| name.as_str() == tenant)
        .cloned()
        .unwrap_or_else(|| node.clone())
}

/// The names the certificates of `account` cover, as the view has them: the name and
/// aliases of each web domain a certificate is bound to.
pub fn certified_names(view: &View<'_>, account: &Hex32) -> Result<Vec<DomainName>, OpError> {
    Ok(certificates_with_names(view, account)?
        .into_iter()
        .flat_map(|(_, names)| names)
        .collect())
}

/// Each certificate of `account` bound to a web domain, with the names it covers (the web
/// domain's name and aliases).
pub fn certificates_with_names(
    view: &View<'_>,
    account: &Hex32,
) -> Result<Vec<(Hex32, Vec<DomainName>)>, OpError> {
    let mut certified = Vec::new();
    for cert in view
        .of_account::<CertificateRow>(account)
        .map_err(store_error)?
    {
        if let Some(web) = view
            .get_owned::<WebDomainRow>(account, &cert.row.web_domain)
            .map_err(store_error)?
        {
            let mut names = vec![web.domain.clone()];
            names.extend(web.aliases.iter().cloned());
            certified.push((cert.id, names));
        }
    }
    Ok(certified)
}

/// The `name` of the node's configuration (the installer's file, which always names the
/// node): `None` when there is no such file or name, on a node never installed (a simulated
/// one); a file that does not parse is `node_config_invalid`.
pub fn node_name(ctx: &Ctx) -> Result<Option<DomainName>, OpError> {
    crate::certificate::node_setting(ctx, "name")
}

/// The DKIM public keys of `account`'s keys for `domain`, read from the zone stubs
/// `opendkim-genkey` wrote. A key whose stub is missing or unreadable has no record to
/// publish (the drift check reports its key missing).
pub fn dkim_public_keys(
    ctx: &Ctx,
    account: &Hex32,
    domain: &DomainName,
) -> Result<Vec<DkimPublicKey>, OpError> {
    let mut keys = Vec::new();
    for stored in ctx
        .view()
        .of_account::<DkimKeyRow>(account)
        .map_err(store_error)?
    {
        if &stored.row.domain != domain {
            continue;
        }
        let stub = public_key_stub(&ctx.provider, &stored.id, &stored.row.selector);
        let Some(bytes) = ctx.provider.read_config(&stub).map_err(provider_error)? else {
            continue;
        };
        if let Some(text) = provider::parse_dkim_txt(&String::from_utf8_lossy(&bytes)) {
            keys.push(DkimPublicKey {
                selector: stored.row.selector.clone(),
                text,
            });
        }
    }
    Ok(keys)
}

/// What a mail domain's result says of its DNS, from the view: its mail host and records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DomainDns {
    pub mail_host: Option<DomainName>,
    pub records: Vec<DnsRecord>,
}

/// [`DomainDns`] of `owner`'s mail domain `domain`: empty when the node has no name yet.
pub fn domain_dns(ctx: &Ctx, owner: &Owner, domain: &DomainName) -> Result<DomainDns, OpError> {
    let (Some(node), Owner::Tenant(account)) = (node_name(ctx)?, owner) else {
        return Ok(DomainDns::default());
    };
    let certified = certified_names(&ctx.view(), account)?;
    let host = mail_host(&node, domain, &certified);
    let dkim = dkim_public_keys(ctx, account, domain)?;
    Ok(DomainDns {
        records: records(domain, &node, &host, &dkim),
        mail_host: Some(host),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> DomainName {
        s.parse().unwrap()
    }

    fn key(selector: &str, text: &str) -> DkimPublicKey {
        DkimPublicKey {
            selector: selector.parse().unwrap(),
            text: text.to_owned(),
        }
    }

    #[test]
    fn records_name_the_mail_host_for_mx_and_srv_and_the_node_for_client_names() {
        let domain = name("shop.example.com");
        let node = name("node1.provider.net");
        let host = name("mail.shop.example.com");
        let list = records(
            &domain,
            &node,
            &host,
            &[key("s1", "v=DKIM1; k=rsa; p=AAAA")],
        );
        let find = |n: &str, t: DnsRecordType| {
            list.iter()
                .filter(|r| r.name == n && r.record_type == t)
                .map(|r| r.value.as_str())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            find("shop.example.com", DnsRecordType::Mx),
            ["10 mail.shop.example.com."]
        );
        assert_eq!(
            find("shop.example.com", DnsRecordType::Txt),
            ["\"v=spf1 a mx ~all\""]
        );
        assert_eq!(
            find("s1._domainkey.shop.example.com", DnsRecordType::Txt),
            ["\"v=DKIM1; k=rsa; p=AAAA\""]
        );
        assert_eq!(
            find("_dmarc.shop.example.com", DnsRecordType::Txt),
            ["\"v=DMARC1; p=quarantine; adkim=r; aspf=r\""]
        );
        assert_eq!(
            find("_submission._tcp.shop.example.com", DnsRecordType::Srv),
            ["0 1 587 mail.shop.example.com."]
        );
        assert_eq!(
            find("_imaps._tcp.shop.example.com", DnsRecordType::Srv),
            ["0 1 993 mail.shop.example.com."]
        );
        assert_eq!(
            find("_pop3s._tcp.shop.example.com", DnsRecordType::Srv),
            ["0 1 995 mail.shop.example.com."]
        );
        for service in ["_imap._tcp", "_pop3._tcp"] {
            assert_eq!(
                find(&format!("{service}.shop.example.com"), DnsRecordType::Srv),
                ["0 0 0 ."]
            );
        }
        for label in ["autoconfig", "autodiscover"] {
            assert_eq!(
                find(&format!("{label}.shop.example.com"), DnsRecordType::Cname),
                ["node1.provider.net."]
            );
        }
        assert_eq!(list.len(), 11);
        assert!(list.iter().all(|r| r.ttl == TTL));
    }

    #[test]
    fn a_long_txt_text_is_split_into_strings_of_at_most_255_bytes() {
        let text = format!("v=DKIM1; k=rsa; p={}", "A".repeat(400));
        let value = txt_value(&text);
        let strings: Vec<&str> = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap()
            .split("\" \"")
            .collect();
        assert_eq!(
            strings.iter().map(|s| s.len()).collect::<Vec<_>>(),
            [255, 163]
        );
        assert_eq!(strings.concat(), text);
        assert_eq!(txt_value("a\"b\\c"), "\"a\\\"b\\\\c\"");
    }

    #[test]
    fn the_mail_host_is_the_tenants_only_when_a_certificate_covers_it() {
        let node = name("node1.provider.net");
        let domain = name("shop.example.com");
        assert_eq!(mail_host(&node, &domain, &[]), node);
        let other = [name("www.shop.example.com"), name("mail.other.example")];
        assert_eq!(mail_host(&node, &domain, &other), node);
        let covered = [name("www.shop.example.com"), name("mail.shop.example.com")];
        assert_eq!(
            mail_host(&node, &domain, &covered),
            name("mail.shop.example.com")
        );
    }

    #[test]
    fn dkim_records_come_in_selector_order() {
        let list = records(
            &name("a.example"),
            &name("n.example"),
            &name("n.example"),
            &[key("zz", "v=DKIM1; p=B"), key("aa", "v=DKIM1; p=A")],
        );
        let dkim: Vec<&str> = list
            .iter()
            .filter(|r| r.name.contains("._domainkey."))
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(dkim, ["aa._domainkey.a.example", "zz._domainkey.a.example"]);
    }
}
