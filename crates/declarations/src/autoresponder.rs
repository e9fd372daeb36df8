//! The `autoresponder` family's declarations: a vacation reply for one mailbox, from typed
//! fields.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::autoresponder`.

use registry::types::mail::{IsoDate, SieveBody, SieveSubject, VacationDays};
use registry::types::{Hex32, Presence};
use registry::{Family, Module, Operation, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ex;
use crate::mail::{AUTORESPONDER, tenant_resource};

pub struct Autoresponder;

impl Family for Autoresponder {
    const NAME: &'static str = AUTORESPONDER;
    const MODULE: Module = Module::Mail;
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

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveAutoresponderRequest {
    pub id: Hex32,
    pub account: Hex32,
}

tenant_resource!(EnsureAutoresponderRequest, RemoveAutoresponderRequest);

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AutoresponderResult {
    pub state: Presence,
    /// The mailbox that answers.
    pub address: Option<String>,
}

pub struct EnsureAutoresponder;

impl Operation for EnsureAutoresponder {
    const NAME: &'static str = "ensure_autoresponder";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Answer a mailbox's mail with a vacation message (Sieve), optionally between two dates";
    type Family = Autoresponder;
    type Request = EnsureAutoresponderRequest;
    type Result = AutoresponderResult;

    fn example() -> EnsureAutoresponderRequest {
        EnsureAutoresponderRequest {
            id: ex("c8c8c8c8c8c8c8c8c8c8c8c8c8c8c8c8"),
            account: ex("a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"),
            mailbox: ex("e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5"),
            subject: ex("Out of office"),
            body: ex("I am away until Monday.\nUrgent matters: sales@shop.example.com"),
            days: VacationDays::default(),
            from: Some(ex("2026-12-20")),
            until: Some(ex("2027-01-04")),
        }
    }
}

pub struct RemoveAutoresponder;

impl Operation for RemoveAutoresponder {
    const NAME: &'static str = "remove_autoresponder";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Stop a mailbox's autoresponder";
    type Family = Autoresponder;
    type Request = RemoveAutoresponderRequest;
    type Result = AutoresponderResult;

    fn example() -> RemoveAutoresponderRequest {
        RemoveAutoresponderRequest {
            id: ex("c8c8c8c8c8c8c8c8c8c8c8c8c8c8c8c8"),
            account: ex("a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"),
        }
    }
}
