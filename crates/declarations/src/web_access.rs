//! The web access families' declarations: `protected_directory` (HTTP Basic
//! authentication on a path beneath a document root) and `ip_block` (addresses and networks
//! answered 403 on a web domain).
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::web_access`.

use registry::types::{AuthRealm, AuthUsers, Hex32, IpNetworks, Presence, ProtectedPath};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::declare::{family, impl_resource, operation};
use crate::example;
use crate::resource::AccountResource;
use crate::web_domain::EnsureWebDomain;

/// The example web domain's id byte: an IP block's resource is its web domain's.
const DOMAIN: u8 = 0xc3;

// ---------------------------------------------------------------------------------------
// protected_directory.

family! {
    pub struct ProtectedDirectory {
        name: "protected_directory",
        module: Web,
        drift: {
            /// A protected directory's `AuthUserFile` is gone.
            AUTH_USER_FILE_MISSING = "auth_user_file_missing",
            /// A protected directory's `AuthUserFile` is not what state.db derives.
            AUTH_USER_FILE_DIFFERS = "auth_user_file_differs",
        },
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureProtectedDirectoryRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// The web domain whose document root holds the directory.
    pub web_domain: Hex32,
    /// The directory, relative to the document root (never `.well-known`).
    pub path: ProtectedPath,
    /// What the browser's password dialog shows.
    pub realm: AuthRealm,
    /// Who may enter: names and crypt SHA-512 hashes (the whole list; it replaces the last).
    pub users: AuthUsers,
}

impl_resource!(owner = account: EnsureProtectedDirectoryRequest);

pub type RemoveProtectedDirectoryRequest = AccountResource;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProtectedDirectoryResult {
    pub state: Presence,
    /// The absolute directory Apache protects.
    pub directory: Option<String>,
    /// The user names that may enter (hashes are never returned).
    pub users: Vec<String>,
}

/// The example protected directory's id byte.
const DIRECTORY: u8 = 0xd7;

operation! {
    pub struct EnsureProtectedDirectory {
        name: "ensure_protected_directory",
        kind: Declare,
        family: ProtectedDirectory,
        summary: "Put a directory of a web domain behind HTTP Basic authentication (the ACME challenge path is never protected)",
        request: EnsureProtectedDirectoryRequest,
        result: ProtectedDirectoryResult,
        needs: [EnsureWebDomain],
        example: EnsureProtectedDirectoryRequest {
            id: example::id(DIRECTORY),
            account: example::account(),
            web_domain: example::id(DOMAIN),
            path: example::parse("staff/reports"),
            realm: example::parse("Staff only"),
            users: example::json(json!([{
                "name": "alice",
                "password_hash": format!("$6$saltsalt${}", "c".repeat(86)),
            }])),
        },
    }
}

operation! {
    pub struct RemoveProtectedDirectory {
        name: "remove_protected_directory",
        kind: Remove,
        family: ProtectedDirectory,
        summary: "Serve a protected directory without authentication again",
        request: RemoveProtectedDirectoryRequest,
        result: ProtectedDirectoryResult,
        example: AccountResource::example(DIRECTORY),
    }
}

// ---------------------------------------------------------------------------------------
// ip_block.

family! { pub struct IpBlock { name: "ip_block", module: Web } }

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureIpBlockRequest {
    /// The web domain's id: one block list per domain.
    pub id: Hex32,
    pub account: Hex32,
    /// Addresses and CIDR networks answered 403 (the whole list; it replaces the last).
    pub networks: IpNetworks,
}

impl_resource!(owner = account: EnsureIpBlockRequest);

pub type RemoveIpBlockRequest = AccountResource;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IpBlockResult {
    pub state: Presence,
    /// The addresses and networks the vhost now denies.
    pub blocked: Vec<String>,
}

operation! {
    pub struct EnsureIpBlock {
        name: "ensure_ip_block",
        kind: Declare,
        family: IpBlock,
        summary: "Deny addresses and networks access to a web domain (403; the ACME challenge path stays reachable)",
        request: EnsureIpBlockRequest,
        result: IpBlockResult,
        needs: [EnsureWebDomain],
        example: EnsureIpBlockRequest {
            id: example::id(DOMAIN),
            account: example::account(),
            networks: example::json(json!(["192.0.2.0/24", "2001:db8::/32", "198.51.100.7"])),
        },
    }
}

operation! {
    pub struct RemoveIpBlock {
        name: "remove_ip_block",
        kind: Remove,
        family: IpBlock,
        summary: "Let every address reach a web domain again",
        request: RemoveIpBlockRequest,
        result: IpBlockResult,
        example: AccountResource::example(DOMAIN),
    }
}
