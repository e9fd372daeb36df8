//! The web access families' declarations: `protected_directory` (HTTP Basic
//! authentication on a path beneath a document root) and `ip_block` (addresses and networks
//! answered 403 on a web domain).
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::web_access`.

use registry::types::{AuthRealm, AuthUsers, Hex32, IpNetworks, Presence, ProtectedPath};
use registry::{Family, Module, Operation, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::mail::tenant_resource;

// ---------------------------------------------------------------------------------------
// protected_directory.

pub struct ProtectedDirectory;

impl Family for ProtectedDirectory {
    const NAME: &'static str = "protected_directory";
    const MODULE: Module = Module::Web;
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

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveProtectedDirectoryRequest {
    pub id: Hex32,
    pub account: Hex32,
}

tenant_resource!(
    EnsureProtectedDirectoryRequest,
    RemoveProtectedDirectoryRequest
);

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProtectedDirectoryResult {
    pub state: Presence,
    /// The absolute directory Apache protects.
    pub directory: Option<String>,
    /// The user names that may enter (hashes are never returned).
    pub users: Vec<String>,
}

pub struct EnsureProtectedDirectory;

fn protected_example_ids() -> (Hex32, Hex32) {
    (
        "d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7"
            .parse()
            .expect("valid example"),
        "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
            .parse()
            .expect("valid example"),
    )
}

impl Operation for EnsureProtectedDirectory {
    const NAME: &'static str = "ensure_protected_directory";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Put a directory of a web domain behind HTTP Basic authentication (the ACME challenge path is never protected)";
    type Family = ProtectedDirectory;
    type Request = EnsureProtectedDirectoryRequest;
    type Result = ProtectedDirectoryResult;

    fn example() -> EnsureProtectedDirectoryRequest {
        let (id, account) = protected_example_ids();
        EnsureProtectedDirectoryRequest {
            id,
            account,
            web_domain: "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
                .parse()
                .expect("valid example"),
            path: "staff/reports".parse().expect("valid example"),
            realm: "Staff only".parse().expect("valid example"),
            users: serde_json::from_value(json!([{
                "name": "alice",
                "password_hash": format!("$6$saltsalt${}", "c".repeat(86)),
            }]))
            .expect("valid example"),
        }
    }
}

pub struct RemoveProtectedDirectory;

impl Operation for RemoveProtectedDirectory {
    const NAME: &'static str = "remove_protected_directory";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Serve a protected directory without authentication again";
    type Family = ProtectedDirectory;
    type Request = RemoveProtectedDirectoryRequest;
    type Result = ProtectedDirectoryResult;

    fn example() -> RemoveProtectedDirectoryRequest {
        let (id, account) = protected_example_ids();
        RemoveProtectedDirectoryRequest { id, account }
    }
}

// ---------------------------------------------------------------------------------------
// ip_block.

pub struct IpBlock;

impl Family for IpBlock {
    const NAME: &'static str = "ip_block";
    const MODULE: Module = Module::Web;
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureIpBlockRequest {
    /// The web domain's id: one block list per domain.
    pub id: Hex32,
    pub account: Hex32,
    /// Addresses and CIDR networks answered 403 (the whole list; it replaces the last).
    pub networks: IpNetworks,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveIpBlockRequest {
    /// The web domain's id.
    pub id: Hex32,
    pub account: Hex32,
}

tenant_resource!(EnsureIpBlockRequest, RemoveIpBlockRequest);

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IpBlockResult {
    pub state: Presence,
    /// The addresses and networks the vhost now denies.
    pub blocked: Vec<String>,
}

pub struct EnsureIpBlock;

fn block_example_ids() -> (Hex32, Hex32) {
    (
        "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
            .parse()
            .expect("valid example"),
        "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
            .parse()
            .expect("valid example"),
    )
}

impl Operation for EnsureIpBlock {
    const NAME: &'static str = "ensure_ip_block";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Deny addresses and networks access to a web domain (403; the ACME challenge path stays reachable)";
    type Family = IpBlock;
    type Request = EnsureIpBlockRequest;
    type Result = IpBlockResult;

    fn example() -> EnsureIpBlockRequest {
        let (id, account) = block_example_ids();
        EnsureIpBlockRequest {
            id,
            account,
            networks: serde_json::from_value(json!([
                "192.0.2.0/24",
                "2001:db8::/32",
                "198.51.100.7"
            ]))
            .expect("valid example"),
        }
    }
}

pub struct RemoveIpBlock;

impl Operation for RemoveIpBlock {
    const NAME: &'static str = "remove_ip_block";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Let every address reach a web domain again";
    type Family = IpBlock;
    type Request = RemoveIpBlockRequest;
    type Result = IpBlockResult;

    fn example() -> RemoveIpBlockRequest {
        let (id, account) = block_example_ids();
        RemoveIpBlockRequest { id, account }
    }
}
