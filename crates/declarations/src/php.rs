//! The PHP families' declarations: the PHP version of each web domain, the account's PHP
//! settings and extensions, and the versions the node can offer.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::php`.

use registry::types::{PhpExtensions, PhpOptions, PhpVersion, Presence};
use registry::{Family, Hex32, Module, Operation, Owner, Resource, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// What an account's PHP looks like after a sync.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PoolInEffect {
    /// `8.2`.
    pub version: String,
    /// The pool's socket, which the account's vhosts of this version point at.
    pub socket: String,
    /// The modules this version loads (`php-fpmX.Y -m`), lowercased.
    pub extensions: Vec<String>,
    /// CloudLinux: the extensions set as the user's selection with `selectorctl
    /// --replace-user-extensions` (their command-line PHP and cron jobs); empty on Debian.
    pub selector_extensions: Vec<String>,
}

// ---------------------------------------------------------------------------------------
// Families.

/// The PHP version of one web domain (resource id: the web domain's id).
pub struct PhpVersionFamily;

impl Family for PhpVersionFamily {
    const NAME: &'static str = "php_version";
    const MODULE: Module = Module::Php;
}

/// The account's PHP options (resource id: the account's id).
pub struct PhpOptionsFamily;

impl Family for PhpOptionsFamily {
    const NAME: &'static str = "php_options";
    const MODULE: Module = Module::Php;
}

/// The extensions the account needs (resource id: the account's id).
pub struct PhpExtensionsFamily;

impl Family for PhpExtensionsFamily {
    const NAME: &'static str = "php_extensions";
    const MODULE: Module = Module::Php;
}

/// The node's PHP offer: an observation, nothing stored.
pub struct PhpRuntime;

impl Family for PhpRuntime {
    const NAME: &'static str = "php_runtime";
    const MODULE: Module = Module::Php;
}

// ---------------------------------------------------------------------------------------
// set_php_version / remove_php_version.

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetPhpVersionRequest {
    /// The web domain's id.
    pub id: Hex32,
    pub account: Hex32,
    pub version: PhpVersion,
}

impl Resource for SetPhpVersionRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemovePhpVersionRequest {
    /// The web domain's id.
    pub id: Hex32,
    pub account: Hex32,
}

impl Resource for RemovePhpVersionRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhpVersionResult {
    pub state: Presence,
    /// The version now serving the domain, if any.
    pub version: Option<String>,
    /// The modules that version loads, lowercased.
    pub extensions: Vec<String>,
    /// Every pool the account has after the change.
    pub pools: Vec<PoolInEffect>,
}

pub struct SetPhpVersion;

impl Operation for SetPhpVersion {
    const NAME: &'static str = "set_php_version";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Serve a web domain's PHP with one installed version, through the account's pool of it";
    type Family = PhpVersionFamily;
    type Request = SetPhpVersionRequest;
    type Result = PhpVersionResult;

    fn example() -> SetPhpVersionRequest {
        SetPhpVersionRequest {
            id: "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
                .parse()
                .expect("valid example"),
            account: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
                .parse()
                .expect("valid example"),
            version: PhpVersion::V8_2,
        }
    }
}

pub struct RemovePhpVersion;

impl Operation for RemovePhpVersion {
    const NAME: &'static str = "remove_php_version";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Stop running PHP for a web domain; its .php files are then served as plain files are not";
    type Family = PhpVersionFamily;
    type Request = RemovePhpVersionRequest;
    type Result = PhpVersionResult;

    fn example() -> RemovePhpVersionRequest {
        RemovePhpVersionRequest {
            id: "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
                .parse()
                .expect("valid example"),
            account: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
                .parse()
                .expect("valid example"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// set_php_options / set_php_extensions.

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetPhpOptionsRequest {
    /// The account's id: one set of settings per account.
    pub id: Hex32,
    /// The settings, each bounded; an absent one is PHP's default.
    pub options: PhpOptions,
}

impl Resource for SetPhpOptionsRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.id.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetPhpExtensionsRequest {
    /// The account's id: one set of settings per account.
    pub id: Hex32,
    /// The extensions the account's code needs; every version it uses must load them.
    pub extensions: PhpExtensions,
}

impl Resource for SetPhpExtensionsRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.id.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhpSettingsResult {
    pub state: Presence,
    /// The options as written into every pool of the account.
    pub options: PhpOptions,
    /// The extensions the account asked for.
    pub extensions: Vec<String>,
    /// Every pool of the account, with the modules really loaded.
    pub pools: Vec<PoolInEffect>,
}

pub struct SetPhpOptions;

impl Operation for SetPhpOptions {
    const NAME: &'static str = "set_php_options";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Set the account's PHP limits (memory, upload and post sizes, times, input vars, display_errors)";
    type Family = PhpOptionsFamily;
    type Request = SetPhpOptionsRequest;
    type Result = PhpSettingsResult;

    fn example() -> SetPhpOptionsRequest {
        SetPhpOptionsRequest {
            id: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
                .parse()
                .expect("valid example"),
            options: serde_json::from_value(json!({
                "memory_limit_mib": 256,
                "upload_max_filesize_mib": 64,
                "post_max_size_mib": 64,
                "max_execution_time_s": 60,
                "max_input_time_s": 60,
                "max_input_vars": 3000,
                "display_errors": false
            }))
            .expect("valid example"),
        }
    }
}

pub struct SetPhpExtensions;

impl Operation for SetPhpExtensions {
    const NAME: &'static str = "set_php_extensions";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Require PHP extensions for the account; refused when a version it uses does not load one";
    type Family = PhpExtensionsFamily;
    type Request = SetPhpExtensionsRequest;
    type Result = PhpSettingsResult;

    fn example() -> SetPhpExtensionsRequest {
        SetPhpExtensionsRequest {
            id: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
                .parse()
                .expect("valid example"),
            extensions: serde_json::from_value(json!(["opcache", "intl"])).expect("valid example"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// observe_php_versions.

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObservePhpVersionsRequest {
    pub id: Hex32,
}

impl Resource for ObservePhpVersionsRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Node
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OfferedPhpVersion {
    /// `8.2`.
    pub version: String,
    /// The FPM binary found.
    pub fpm: String,
    /// Whether its command-line PHP exists too (scheduled PHP scripts need it).
    pub cli: bool,
    /// The modules it loads (`php-fpmX.Y -m`), lowercased; empty with `error` set when the
    /// binary would not list them.
    pub extensions: Vec<String>,
    pub error: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhpVersionsResult {
    /// The platform profile (`debian`, `cloudlinux`).
    pub platform: String,
    /// Every PHP version whose FPM binary this node has, oldest first.
    pub versions: Vec<OfferedPhpVersion>,
}

pub struct ObservePhpVersions;

impl Operation for ObservePhpVersions {
    const NAME: &'static str = "observe_php_versions";
    const SCOPE: Scope = Scope::Node;
    const SUMMARY: &'static str = "The PHP versions this node can serve and the extensions each loads, as found on the machine";
    type Family = PhpRuntime;
    type Request = ObservePhpVersionsRequest;
    type Result = PhpVersionsResult;

    fn example() -> ObservePhpVersionsRequest {
        ObservePhpVersionsRequest {
            id: "e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5"
                .parse()
                .expect("valid example"),
        }
    }
}
