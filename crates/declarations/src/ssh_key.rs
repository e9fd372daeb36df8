//! The `ssh_key` family's declarations: the public keys authorized for a tenant's user.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::ssh_key`.

use registry::types::{Hex32, Presence, SshPublicKey};
use registry::{Family, Module, Operation, Owner, Resource, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub struct SshKey;

impl Family for SshKey {
    const NAME: &'static str = "ssh_key";
    const MODULE: Module = Module::Core;
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureSshKeyRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// One OpenSSH public key line, without options.
    pub key: SshPublicKey,
}

impl Resource for EnsureSshKeyRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveSshKeyRequest {
    pub id: Hex32,
    pub account: Hex32,
}

impl Resource for RemoveSshKeyRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

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

pub struct EnsureSshKey;

impl Operation for EnsureSshKey {
    const NAME: &'static str = "ensure_ssh_key";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Authorize an SSH public key for the account's user";
    type Family = SshKey;
    type Request = EnsureSshKeyRequest;
    type Result = SshKeyResult;

    fn example() -> EnsureSshKeyRequest {
        EnsureSshKeyRequest {
            id: "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"
                .parse()
                .expect("valid example"),
            account: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
                .parse()
                .expect("valid example"),
            key: EXAMPLE_KEY.parse().expect("valid example"),
        }
    }
}

pub struct RemoveSshKey;

impl Operation for RemoveSshKey {
    const NAME: &'static str = "remove_ssh_key";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Remove an SSH public key from the account's authorized keys";
    type Family = SshKey;
    type Request = RemoveSshKeyRequest;
    type Result = SshKeyResult;

    fn example() -> RemoveSshKeyRequest {
        RemoveSshKeyRequest {
            id: "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"
                .parse()
                .expect("valid example"),
            account: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
                .parse()
                .expect("valid example"),
        }
    }
}
