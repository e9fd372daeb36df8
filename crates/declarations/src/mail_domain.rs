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

family! { pub struct MailDomain { name: MAIL_DOMAIN, module: Mail } }

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
