//! The `autoresponder` family's declarations: a vacation reply for one mailbox, from typed
//! fields.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::autoresponder`.

use registry::types::mail::{IsoDate, SieveBody, SieveSubject, VacationDays};
use registry::types::{Hex32, Presence};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::declare::{family, impl_resource, operation};
use crate::example;
use crate::mail::AUTORESPONDER;
use crate::mailbox::EnsureMailbox;
use crate::resource::AccountResource;

family! {
    pub struct Autoresponder {
        name: AUTORESPONDER,
        module: Mail,
        drift: {
            /// An autoresponder's Sieve script is gone.
            SIEVE_SCRIPT_MISSING = "sieve_script_missing",
            /// An autoresponder's Sieve script is not what state.db derives.
            SIEVE_SCRIPT_DIFFERS = "sieve_script_differs",
        },
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureAutoresponderRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// The mailbox (its resource id) that answers.
    pub mailbox: Hex32,
    pub subject: SieveSubject,
    pub body: SieveBody,
    /// How many days before the same sender is answered again.
    #[serde(default)]
    pub days: VacationDays,
    /// Answer from this day on (inclusive); always when absent.
    #[serde(default)]
    pub from: Option<IsoDate>,
    /// Answer until this day (inclusive); always when absent.
    #[serde(default)]
    pub until: Option<IsoDate>,
}

impl_resource!(owner = account: EnsureAutoresponderRequest);

pub type RemoveAutoresponderRequest = AccountResource;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AutoresponderResult {
    pub state: Presence,
    /// The mailbox that answers.
    pub address: Option<String>,
}

/// The example autoresponder's id byte.
const AUTORESPONDER_ID: u8 = 0xc8;

operation! {
    pub struct EnsureAutoresponder {
        name: "ensure_autoresponder",
        kind: Declare,
        family: Autoresponder,
        summary: "Answer a mailbox's mail with a vacation message (Sieve), optionally between two dates",
        request: EnsureAutoresponderRequest,
        result: AutoresponderResult,
        needs: [EnsureMailbox],
        example: EnsureAutoresponderRequest {
            id: example::id(AUTORESPONDER_ID),
            account: example::account(),
            mailbox: example::id(0xe5),
            subject: example::parse("Out of office"),
            body: example::parse("I am away until Monday.\nUrgent matters: sales@shop.example.com"),
            days: VacationDays::default(),
            from: Some(example::parse("2026-12-20")),
            until: Some(example::parse("2027-01-04")),
        },
    }
}

operation! {
    pub struct RemoveAutoresponder {
        name: "remove_autoresponder",
        kind: Remove,
        family: Autoresponder,
        summary: "Stop a mailbox's autoresponder",
        request: RemoveAutoresponderRequest,
        result: AutoresponderResult,
        example: AccountResource::example(AUTORESPONDER_ID),
    }
}
