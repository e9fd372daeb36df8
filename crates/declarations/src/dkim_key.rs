//! The `dkim_key` family's declarations: a DKIM key pair for one of the account's mail
//! domains, with a typed selector and size.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::dkim_key`.

use registry::types::mail::{DkimKeyBits, DkimSelector};
use registry::types::{DomainName, Hex32, Presence};
use registry::{Family, Module, Operation, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ex;
use crate::mail::{DKIM_KEY, tenant_resource};

pub struct DkimKey;

impl Family for DkimKey {
    const NAME: &'static str = DKIM_KEY;
    const MODULE: Module = Module::Mail;
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureDkimKeyRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// One of the account's mail domains.
    pub domain: DomainName,
    pub selector: DkimSelector,
    #[serde(default)]
    pub bits: DkimKeyBits,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveDkimKeyRequest {
    pub id: Hex32,
    pub account: Hex32,
}

tenant_resource!(EnsureDkimKeyRequest, RemoveDkimKeyRequest);

/// A DNS TXT record to publish.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TxtRecord {
    /// The fully qualified name, without a trailing dot.
    pub name: String,
    /// The record's text, unsplit.
    pub value: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DkimKeyResult {
    pub state: Presence,
    /// The DKIM public key record the control plane must publish.
    pub dkim: Option<TxtRecord>,
    /// The SPF record the node recommends for the domain.
    pub spf: Option<TxtRecord>,
    /// The DMARC record the node recommends for the domain.
    pub dmarc: Option<TxtRecord>,
}

pub struct EnsureDkimKey;

impl Operation for EnsureDkimKey {
    const NAME: &'static str = "ensure_dkim_key";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Sign a mail domain's mail with DKIM; returns the TXT record to publish, with SPF and DMARC";
    type Family = DkimKey;
    type Request = EnsureDkimKeyRequest;
    type Result = DkimKeyResult;

    fn example() -> EnsureDkimKeyRequest {
        EnsureDkimKeyRequest {
            id: ex("a9a9a9a9a9a9a9a9a9a9a9a9a9a9a9a9"),
            account: ex("a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"),
            domain: ex("shop.example.com"),
            selector: ex("mail2026"),
            bits: DkimKeyBits::Rsa2048,
        }
    }
}

pub struct RemoveDkimKey;

impl Operation for RemoveDkimKey {
    const NAME: &'static str = "remove_dkim_key";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Stop signing with a DKIM key and delete it";
    type Family = DkimKey;
    type Request = RemoveDkimKeyRequest;
    type Result = DkimKeyResult;

    fn example() -> RemoveDkimKeyRequest {
        RemoveDkimKeyRequest {
            id: ex("a9a9a9a9a9a9a9a9a9a9a9a9a9a9a9a9"),
            account: ex("a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"),
        }
    }
}
