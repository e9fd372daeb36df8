//! The `mail_forwarder` family's declarations: an address of one of the account's mail
//! domains forwarded to other addresses.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::mail_forwarder`.

use registry::types::mail::{MailAddress, MailDestinations};
use registry::types::{Hex32, Presence};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::declare::{family, impl_resource, operation};
use crate::example;
use crate::mail::MAIL_FORWARDER;
use crate::mail_domain::EnsureMailDomain;
use crate::resource::AccountResource;

family! { pub struct MailForwarder { name: MAIL_FORWARDER, module: Mail } }

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureMailForwarderRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// An address of one of the account's mail domains, not a mailbox.
    pub address: MailAddress,
    pub destinations: MailDestinations,
}

impl_resource!(owner = account: EnsureMailForwarderRequest);

pub type RemoveMailForwarderRequest = AccountResource;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailForwarderResult {
    pub state: Presence,
    pub address: Option<String>,
    pub destinations: Vec<String>,
}

/// The example forwarder's id byte.
const FORWARDER: u8 = 0xf6;

operation! {
    pub struct EnsureMailForwarder {
        name: "ensure_mail_forwarder",
        kind: Declare,
        family: MailForwarder,
        summary: "Forward an address of a mail domain to one or more addresses",
        request: EnsureMailForwarderRequest,
        result: MailForwarderResult,
        needs: [EnsureMailDomain],
        example: EnsureMailForwarderRequest {
            id: example::id(FORWARDER),
            account: example::account(),
            address: example::parse("sales@shop.example.com"),
            destinations: example::json(json!(["owner@example.org"])),
        },
    }
}

operation! {
    pub struct RemoveMailForwarder {
        name: "remove_mail_forwarder",
        kind: Remove,
        family: MailForwarder,
        summary: "Stop forwarding an address",
        request: RemoveMailForwarderRequest,
        result: MailForwarderResult,
        example: AccountResource::example(FORWARDER),
    }
}
