//! The `mail_domain` family's declarations: a domain the node receives mail for, its
//! sending gate and its catch-all.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::mail_domain`.

use registry::types::mail::MailLocalPart;
use registry::types::{DomainName, Hex32, Presence};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::account::EnsureAccount;
use crate::declare::{family, impl_resource, operation};
use crate::example;
use crate::mail::MAIL_DOMAIN;
use crate::mailbox::EnsureMailbox;
use crate::resource::AccountResource;

family! {
    pub struct MailDomain {
        name: MAIL_DOMAIN,
        module: Mail,
        drift: {
            /// A Postfix table lacks a line the resource derives.
            POSTFIX_ENTRY_MISSING = "postfix_entry_missing",
            /// A Postfix table holds a line state.db does not derive.
            POSTFIX_TABLE_DIFFERS = "postfix_table_differs",
            /// A mail domain's client settings (autoconfig, autodiscover) or their vhost are gone.
            MAIL_CLIENT_SETTINGS_MISSING = "mail_client_settings_missing",
            /// A mail domain's client settings or their vhost are not what state.db derives.
            MAIL_CLIENT_SETTINGS_DIFFERS = "mail_client_settings_differs",
        },
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureMailDomainRequest {
    pub id: Hex32,
    pub account: Hex32,
    pub domain: DomainName,
}

pub type RemoveMailDomainRequest = AccountResource;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetMailSendingGateRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// `true` once the domain's DNS is published: the domain may send.
    pub open: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetMailCatchAllRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// The mailbox (local part of this domain) that receives mail for unknown addresses;
    /// `null` turns the catch-all off.
    pub mailbox: Option<MailLocalPart>,
}

impl_resource!(
    owner = account: EnsureMailDomainRequest,
    SetMailSendingGateRequest,
    SetMailCatchAllRequest,
);

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailDomainResult {
    pub state: Presence,
    pub domain: Option<String>,
    /// Whether the domain may send (its gate is open).
    pub sending_open: bool,
    /// The catch-all address, if any.
    pub catch_all: Option<String>,
    /// The host name mail clients use for IMAP, POP3 and submission: `mail.<domain>` when a
    /// certificate of the account covers it, the node's name otherwise; `null` when the
    /// node's configuration names no host (a node never installed).
    #[serde(default)]
    pub mail_host: Option<String>,
    /// Every DNS record the domain needs for its mail (MX, SPF, DKIM, DMARC, the SRV records
    /// of RFC 6186, the autoconfig and autodiscover names), for the control plane to publish;
    /// empty when the domain is absent or `mail_host` is `null`.
    #[serde(default)]
    pub records: Vec<DnsRecord>,
}

/// The type of a [`DnsRecord`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum DnsRecordType {
    Mx,
    Txt,
    Srv,
    Cname,
}

impl DnsRecordType {
    /// The type's mnemonic (RFC 1035 section 3.2.2, RFC 2782).
    pub fn as_str(self) -> &'static str {
        match self {
            DnsRecordType::Mx => "MX",
            DnsRecordType::Txt => "TXT",
            DnsRecordType::Srv => "SRV",
            DnsRecordType::Cname => "CNAME",
        }
    }
}

/// One DNS record to publish.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DnsRecord {
    /// The owner name, fully qualified, without a trailing dot.
    pub name: String,
    #[serde(rename = "type")]
    pub record_type: DnsRecordType,
    /// Seconds.
    pub ttl: u32,
    /// The record's data as a zone file writes it (RFC 1035 section 5.1): names absolute,
    /// with their trailing dot; a TXT record's text as quoted strings of at most 255 bytes.
    pub value: String,
}

/// The example mail domain's id byte.
const DOMAIN: u8 = 0xd4;

operation! {
    pub struct EnsureMailDomain {
        name: "ensure_mail_domain",
        kind: Declare,
        family: MailDomain,
        summary: "Receive mail for a domain; it may not send until its sending gate is opened",
        request: EnsureMailDomainRequest,
        result: MailDomainResult,
        needs: [EnsureAccount],
        example: EnsureMailDomainRequest {
            id: example::id(DOMAIN),
            account: example::account(),
            domain: example::parse("shop.example.com"),
        },
    }
}

operation! {
    pub struct RemoveMailDomain {
        name: "remove_mail_domain",
        kind: Remove,
        family: MailDomain,
        summary: "Stop receiving mail for a domain (refused while it has mailboxes or forwarders)",
        request: RemoveMailDomainRequest,
        result: MailDomainResult,
        example: AccountResource::example(DOMAIN),
    }
}

operation! {
    pub struct SetMailSendingGate {
        name: "set_mail_sending_gate",
        kind: Set,
        family: MailDomain,
        summary: "Open a mail domain's sending once its DNS is published, or close it again",
        request: SetMailSendingGateRequest,
        result: MailDomainResult,
        example: SetMailSendingGateRequest {
            id: example::id(DOMAIN),
            account: example::account(),
            open: true,
        },
    }
}

operation! {
    pub struct SetMailCatchAll {
        name: "set_mail_catch_all",
        kind: Set,
        family: MailDomain,
        summary: "Deliver mail for unknown addresses of a domain to one of its mailboxes, or stop",
        request: SetMailCatchAllRequest,
        result: MailDomainResult,
        needs: [EnsureMailbox],
        example: SetMailCatchAllRequest {
            id: example::id(DOMAIN),
            account: example::account(),
            mailbox: Some(example::parse("info")),
        },
    }
}
