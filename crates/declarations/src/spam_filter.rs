//! The `spam_filter` family's declarations: how hard one mail domain's incoming mail is
//! filtered.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::spam_filter`.

use registry::types::mail::SpamLevel;
use registry::types::{DomainName, Hex32};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::declare::{family, impl_resource, operation};
use crate::example;
use crate::mail::SPAM_FILTER;
use crate::mail_domain::EnsureMailDomain;

family! { pub struct SpamFilter { name: SPAM_FILTER, module: Mail } }

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetSpamFilterRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// One of the account's mail domains.
    pub domain: DomainName,
    pub level: SpamLevel,
}

impl_resource!(owner = account: SetSpamFilterRequest);

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpamFilterResult {
    pub domain: String,
    pub level: SpamLevel,
    /// The Postfix restriction class applied, if any.
    pub restriction_class: Option<String>,
}

operation! {
    pub struct SetSpamFilter {
        name: "set_spam_filter",
        kind: Declare,
        family: SpamFilter,
        summary: "Set how hard a mail domain's incoming mail is filtered (off, standard, strict)",
        request: SetSpamFilterRequest,
        result: SpamFilterResult,
        needs: [EnsureMailDomain],
        example: SetSpamFilterRequest {
            id: example::id(0xb7),
            account: example::account(),
            domain: example::parse("shop.example.com"),
            level: SpamLevel::Standard,
        },
    }
}
