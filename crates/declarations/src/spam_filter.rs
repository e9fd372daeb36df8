//! The `spam_filter` family's declarations: how hard one mail domain's incoming mail is
//! filtered.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::spam_filter`.

use registry::types::mail::SpamLevel;
use registry::types::{DomainName, Hex32};
use registry::{Family, Module, Operation, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ex;
use crate::mail::{SPAM_FILTER, tenant_resource};

pub struct SpamFilter;

impl Family for SpamFilter {
    const NAME: &'static str = SPAM_FILTER;
    const MODULE: Module = Module::Mail;
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetSpamFilterRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// One of the account's mail domains.
    pub domain: DomainName,
    pub level: SpamLevel,
}

tenant_resource!(SetSpamFilterRequest);

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpamFilterResult {
    pub domain: String,
    pub level: SpamLevel,
    /// The Postfix restriction class applied, if any.
    pub restriction_class: Option<String>,
}

pub struct SetSpamFilter;

impl Operation for SetSpamFilter {
    const NAME: &'static str = "set_spam_filter";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Set how hard a mail domain's incoming mail is filtered (off, standard, strict)";
    type Family = SpamFilter;
    type Request = SetSpamFilterRequest;
    type Result = SpamFilterResult;

    fn example() -> SetSpamFilterRequest {
        SetSpamFilterRequest {
            id: ex("b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7"),
            account: ex("a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"),
            domain: ex("shop.example.com"),
            level: SpamLevel::Standard,
        }
    }
}
