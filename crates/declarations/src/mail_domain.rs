//! The `mail_domain` family's declarations: a domain the node receives mail for, its
//! sending gate and its catch-all.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::mail_domain`.

use registry::types::mail::MailLocalPart;
use registry::types::{DomainName, Hex32, Presence};
use registry::{Family, Module, Operation, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ex;
use crate::mail::{MAIL_DOMAIN, tenant_resource};

pub struct MailDomain;

impl Family for MailDomain {
    const NAME: &'static str = MAIL_DOMAIN;
    const MODULE: Module = Module::Mail;
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureMailDomainRequest {
    pub id: Hex32,
    pub account: Hex32,
    pub domain: DomainName,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveMailDomainRequest {
    pub id: Hex32,
    pub account: Hex32,
}

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

tenant_resource!(
    EnsureMailDomainRequest,
    RemoveMailDomainRequest,
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

fn example_ids() -> (Hex32, Hex32) {
    (
        ex("d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4"),
        ex("a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"),
    )
}

pub struct EnsureMailDomain;

impl Operation for EnsureMailDomain {
    const NAME: &'static str = "ensure_mail_domain";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Receive mail for a domain; it may not send until its sending gate is opened";
    type Family = MailDomain;
    type Request = EnsureMailDomainRequest;
    type Result = MailDomainResult;

    fn example() -> EnsureMailDomainRequest {
        let (id, account) = example_ids();
        EnsureMailDomainRequest {
            id,
            account,
            domain: ex("shop.example.com"),
        }
    }
}

pub struct RemoveMailDomain;

impl Operation for RemoveMailDomain {
    const NAME: &'static str = "remove_mail_domain";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Stop receiving mail for a domain (refused while it has mailboxes or forwarders)";
    type Family = MailDomain;
    type Request = RemoveMailDomainRequest;
    type Result = MailDomainResult;

    fn example() -> RemoveMailDomainRequest {
        let (id, account) = example_ids();
        RemoveMailDomainRequest { id, account }
    }
}

pub struct SetMailSendingGate;

impl Operation for SetMailSendingGate {
    const NAME: &'static str = "set_mail_sending_gate";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Open a mail domain's sending once its DNS is published, or close it again";
    type Family = MailDomain;
    type Request = SetMailSendingGateRequest;
    type Result = MailDomainResult;

    fn example() -> SetMailSendingGateRequest {
        let (id, account) = example_ids();
        SetMailSendingGateRequest {
            id,
            account,
            open: true,
        }
    }
}

pub struct SetMailCatchAll;

impl Operation for SetMailCatchAll {
    const NAME: &'static str = "set_mail_catch_all";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Deliver mail for unknown addresses of a domain to one of its mailboxes, or stop";
    type Family = MailDomain;
    type Request = SetMailCatchAllRequest;
    type Result = MailDomainResult;

    fn example() -> SetMailCatchAllRequest {
        let (id, account) = example_ids();
        SetMailCatchAllRequest {
            id,
            account,
            mailbox: Some(ex("info")),
        }
    }
}
