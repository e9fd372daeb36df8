//! The `dkim_key` family's declarations: a DKIM key pair for one of the account's mail
//! domains, with a typed selector and size.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::dkim_key`.

use registry::types::mail::{DkimKeyBits, DkimSelector};
use registry::types::{DomainName, Hex32, Presence};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::declare::{family, impl_resource, operation};
use crate::example;
use crate::mail::DKIM_KEY;
use crate::mail_domain::EnsureMailDomain;
use crate::resource::AccountResource;

family! {
    pub struct DkimKey {
        name: DKIM_KEY,
        module: Mail,
        drift: {
            /// OpenDKIM's KeyTable or SigningTable lacks the DKIM key's line.
            OPEN_DKIM_ENTRY_MISSING = "open_dkim_entry_missing",
            /// OpenDKIM's KeyTable or SigningTable holds a line state.db does not derive.
            OPEN_DKIM_TABLE_DIFFERS = "open_dkim_table_differs",
            /// A DKIM key's private key file is gone.
            DKIM_KEY_MISSING = "dkim_key_missing",
        },
    }
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

impl_resource!(owner = account: EnsureDkimKeyRequest);

pub type RemoveDkimKeyRequest = AccountResource;

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

/// The example key's id byte.
const KEY: u8 = 0xa9;

operation! {
    pub struct EnsureDkimKey {
        name: "ensure_dkim_key",
        kind: Declare,
        family: DkimKey,
        summary: "Sign a mail domain's mail with DKIM; returns the TXT record to publish, with SPF and DMARC",
        request: EnsureDkimKeyRequest,
        result: DkimKeyResult,
        needs: [EnsureMailDomain],
        example: EnsureDkimKeyRequest {
            id: example::id(KEY),
            account: example::account(),
            domain: example::parse("shop.example.com"),
            selector: example::parse("mail2026"),
            bits: DkimKeyBits::Rsa2048,
        },
    }
}

operation! {
    pub struct RemoveDkimKey {
        name: "remove_dkim_key",
        kind: Remove,
        family: DkimKey,
        summary: "Stop signing with a DKIM key and delete it",
        request: RemoveDkimKeyRequest,
        result: DkimKeyResult,
        example: AccountResource::example(KEY),
    }
}
