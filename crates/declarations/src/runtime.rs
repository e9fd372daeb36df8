//! The `runtime` family's declarations (node scope): what the node's shared services and
//! host look like, every field typed, states as enums.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::runtime`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::declare::{family, operation};
use crate::resource::NodeResource;

family! { pub struct Runtime { name: "runtime", module: Core } }

pub type ObserveRuntimeRequest = NodeResource;

/// Which shared service.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ServiceKind {
    Apache,
    PhpFpm,
    Mariadb,
    Postfix,
    Dovecot,
}

/// systemd's ActiveState, closed: anything systemd adds later is `unknown`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ServiceState {
    Active,
    Reloading,
    Inactive,
    Failed,
    Activating,
    Deactivating,
    /// systemd has no such unit.
    NotFound,
    Unknown,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServiceStatus {
    pub service: ServiceKind,
    /// `8.2` for PHP-FPM; `null` for the others.
    pub php_version: Option<String>,
    /// The systemd unit asked about.
    pub unit: String,
    /// Whether systemd knows the unit (its unit file is installed).
    pub installed: bool,
    pub state: ServiceState,
    /// The installed package version (Debian); `null` where the node cannot read it.
    pub version: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadAverage {
    pub one: f64,
    pub five: f64,
    pub fifteen: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryStatus {
    pub total_bytes: u64,
    pub available_bytes: u64,
    pub swap_total_bytes: u64,
    pub swap_free_bytes: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiskStatus {
    /// `/`, `/home` or `/var/lib/mysql`.
    pub path: String,
    pub total_bytes: u64,
    pub available_bytes: u64,
    pub total_inodes: u64,
    pub free_inodes: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuntimeResult {
    /// `debian` or `cloudlinux`.
    pub platform: String,
    pub services: Vec<ServiceStatus>,
    pub load: LoadAverage,
    pub memory: MemoryStatus,
    /// The file systems of the paths that exist on this node.
    pub disks: Vec<DiskStatus>,
    /// Each tenant's own PHP-FPM master (`debian`): one per account and PHP version its web
    /// domains use, with its unit's state, so a tenant whose pool FPM refuses is seen at
    /// once. Empty on `cloudlinux`, whose pools are sections of the shared masters listed in
    /// `services`.
    pub tenant_php: Vec<TenantPhpStatus>,
}

/// One tenant's own PHP-FPM master.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TenantPhpStatus {
    /// The account's id.
    pub account: String,
    /// `8.2`.
    pub php_version: String,
    /// Its systemd unit: `php8.2-fpm@<uid>.service`, in the account's slice.
    pub unit: String,
    pub state: ServiceState,
}

operation! {
    pub struct ObserveRuntime {
        name: "observe_runtime",
        kind: Observe,
        scope: Node,
        family: Runtime,
        summary: "Report the state of Apache, PHP-FPM (the shared masters and each tenant's own), MariaDB, Postfix and Dovecot, and the node's load, memory and disk",
        request: ObserveRuntimeRequest,
        result: RuntimeResult,
        example: NodeResource::example(0xd4),
    }
}
