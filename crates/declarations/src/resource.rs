//! The request shapes many operations share: one resource of an account by its id
//! ([`AccountResource`]: every removal, suspension and other operation on a resource that
//! exists), one account by its id ([`AccountRef`]), and one of the node's own resources or
//! observations ([`NodeResource`]). A family names them under its own request names
//! (`pub type RemoveSshKeyRequest = AccountResource;`), so its operations read as before and
//! the shape is declared once.

use registry::types::Hex32;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::declare::impl_resource;
use crate::example;

// One resource of an account, by its id. (A plain comment: the struct's doc would become the
// description of every schema of this shape.)
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountResource {
    /// The resource's id, as the operation that declared it named it (for the settings kept
    /// per web domain, a PHP version or an IP block, the web domain's id).
    pub id: Hex32,
    /// The account that owns it.
    pub account: Hex32,
}

/// Names one existing account.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountRef {
    pub id: Hex32,
}

// One of the node's own resources or observations, by its id (node scope: owner `node:`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeResource {
    pub id: Hex32,
}

impl_resource!(owner = account: AccountResource);
impl_resource!(owner = id: AccountRef);
impl_resource!(owner = node: NodeResource);

impl AccountResource {
    /// The example account's resource `id_byte` ([`example::id`]).
    pub fn example(id_byte: u8) -> Self {
        AccountResource {
            id: example::id(id_byte),
            account: example::account(),
        }
    }
}

impl AccountRef {
    /// The example account.
    pub fn example() -> Self {
        AccountRef {
            id: example::account(),
        }
    }
}

impl NodeResource {
    /// The node's resource `id_byte` ([`example::id`]).
    pub fn example(id_byte: u8) -> Self {
        NodeResource {
            id: example::id(id_byte),
        }
    }
}
