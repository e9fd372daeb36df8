//! The `ssh_key` family's declarations: the public keys authorized for a tenant's user.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::ssh_key`.

use registry::types::{Hex32, Presence, SshPublicKey};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::account::EnsureAccount;
use crate::declare::{family, impl_resource, operation};
use crate::example;
use crate::resource::AccountResource;

family! {
    pub struct SshKey {
        name: "ssh_key",
        module: Core,
        drift: {
            /// The account has SSH keys recorded and no `authorized_keys`.
            AUTHORIZED_KEYS_MISSING = "authorized_keys_missing",
            /// `authorized_keys` is not what state.db derives.
            AUTHORIZED_KEYS_DIFFERS = "authorized_keys_differs",
        },
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureSshKeyRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// One OpenSSH public key line, without options.
    pub key: SshPublicKey,
}

impl_resource!(owner = account: EnsureSshKeyRequest);

pub type RemoveSshKeyRequest = AccountResource;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SshKeyResult {
    pub state: Presence,
    /// `SHA256:...` of the key now in `authorized_keys`.
    pub fingerprint: Option<String>,
    /// How many keys the account's `authorized_keys` now holds.
    pub keys_in_file: u32,
}

const EXAMPLE_KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGn4w0x3qmW1b4PQ1b1pDpDkHc3uqm3n8dHTV1G4ZvDN ops@example";

operation! {
    pub struct EnsureSshKey {
        name: "ensure_ssh_key",
        kind: Declare,
        family: SshKey,
        summary: "Authorize an SSH public key for the account's user",
        request: EnsureSshKeyRequest,
        result: SshKeyResult,
        needs: [EnsureAccount],
        example: EnsureSshKeyRequest {
            id: example::id(0xb2),
            account: example::account(),
            key: example::parse(EXAMPLE_KEY),
        },
    }
}

operation! {
    pub struct RemoveSshKey {
        name: "remove_ssh_key",
        kind: Remove,
        family: SshKey,
        summary: "Remove an SSH public key from the account's authorized keys",
        request: RemoveSshKeyRequest,
        result: SshKeyResult,
        example: AccountResource::example(0xb2),
    }
}
