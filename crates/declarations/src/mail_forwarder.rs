//! The `mail_forwarder` family's declarations: an address of one of the account's mail
//! domains forwarded to other addresses.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::mail_forwarder`.

use registry::types::mail::{MailAddress, MailDestinations};
use registry::types::{Hex32, Presence};
use registry::{Family, Module, Operation, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::ex;
use crate::mail::{MAIL_FORWARDER, tenant_resource};

pub struct MailForwarder;

impl Family for MailForwarder {
    const NAME: &'static str = MAIL_FORWARDER;
    const MODULE: Module = Module::Mail;
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureMailForwarderRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// An address of one of the account's mail domains, not a mailbox.
    pub address: MailAddress,
    pub destinations: MailDestinations,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveMailForwarderRequest {
    pub id: Hex32,
    pub account: Hex32,
}

tenant_resource!(EnsureMailForwarderRequest, RemoveMailForwarderRequest);

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailForwarderResult {
    pub state: Presence,
    pub address: Option<String>,
    pub destinations: Vec<String>,
}

fn example_ids() -> (Hex32, Hex32) {
    (
        ex("f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6"),
        ex("a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"),
    )
}

pub struct EnsureMailForwarder;

impl Operation for EnsureMailForwarder {
    const NAME: &'static str = "ensure_mail_forwarder";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Forward an address of a mail domain to one or more addresses";
    type Family = MailForwarder;
    type Request = EnsureMailForwarderRequest;
    type Result = MailForwarderResult;

    fn example() -> EnsureMailForwarderRequest {
        let (id, account) = example_ids();
        EnsureMailForwarderRequest {
            id,
            account,
            address: ex("sales@shop.example.com"),
            destinations: serde_json::from_value(json!(["owner@example.org"]))
                .expect("valid example"),
        }
    }
}

pub struct RemoveMailForwarder;

impl Operation for RemoveMailForwarder {
    const NAME: &'static str = "remove_mail_forwarder";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Stop forwarding an address";
    type Family = MailForwarder;
    type Request = RemoveMailForwarderRequest;
    type Result = MailForwarderResult;

    fn example() -> RemoveMailForwarderRequest {
        let (id, account) = example_ids();
        RemoveMailForwarderRequest { id, account }
    }
}
