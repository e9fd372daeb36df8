//! The PHP families' declarations: the PHP version of each web domain, the account's PHP
//! settings and extensions, and the versions the node can offer.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::php`.

use registry::Hex32;
use registry::types::{PhpExtensions, PhpOptions, PhpVersion, Presence};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::declare::{family, impl_resource, operation};
use crate::example;
use crate::resource::{AccountResource, NodeResource};
use crate::web_domain::EnsureWebDomain;

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

family! {
    /// The PHP version of one web domain (resource id: the web domain's id).
    pub struct PhpVersionFamily {
        name: "php_version",
        module: Php,
        drift: {
            /// The account's FPM pool for a PHP version its domains use is gone.
            PHP_POOL_MISSING = "php_pool_missing",
            /// An FPM pool of the account is not what state.db derives, or is there for a version none of its domains uses.
            PHP_POOL_DIFFERS = "php_pool_differs",
        },
    }
}

family! {
    /// The account's PHP options (resource id: the account's id).
    pub struct PhpOptionsFamily { name: "php_options", module: Php }
}

family! {
    /// The extensions the account needs (resource id: the account's id).
    pub struct PhpExtensionsFamily { name: "php_extensions", module: Php }
}

family! {
    /// The node's PHP offer: an observation, nothing stored.
    pub struct PhpRuntime { name: "php_runtime", module: Php }
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

impl_resource!(owner = account: SetPhpVersionRequest);

pub type RemovePhpVersionRequest = AccountResource;

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

/// The example web domain's id byte: a PHP version's resource is its web domain's.
const DOMAIN: u8 = 0xc3;

operation! {
    pub struct SetPhpVersion {
        name: "set_php_version",
        kind: Declare,
        family: PhpVersionFamily,
        summary: "Serve a web domain's PHP with one installed version, through the account's pool of it",
        request: SetPhpVersionRequest,
        result: PhpVersionResult,
        needs: [EnsureWebDomain],
        example: SetPhpVersionRequest {
            id: example::id(DOMAIN),
            account: example::account(),
            version: PhpVersion::V8_2,
        },
    }
}

operation! {
    pub struct RemovePhpVersion {
        name: "remove_php_version",
        kind: Remove,
        family: PhpVersionFamily,
        summary: "Stop running PHP for a web domain; its .php files are then served as plain files are not",
        request: RemovePhpVersionRequest,
        result: PhpVersionResult,
        example: AccountResource::example(DOMAIN),
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

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetPhpExtensionsRequest {
    /// The account's id: one set of settings per account.
    pub id: Hex32,
    /// The extensions the account's code needs; every version it uses must load them.
    pub extensions: PhpExtensions,
}

impl_resource!(owner = id: SetPhpOptionsRequest, SetPhpExtensionsRequest);

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

// The account's settings apply to its pools: the examples set them where a pool exists.
operation! {
    pub struct SetPhpOptions {
        name: "set_php_options",
        kind: Declare,
        family: PhpOptionsFamily,
        summary: "Set the account's PHP limits (memory, upload and post sizes, times, input vars, display_errors)",
        request: SetPhpOptionsRequest,
        result: PhpSettingsResult,
        needs: [SetPhpVersion],
        example: SetPhpOptionsRequest {
            id: example::account(),
            options: example::json(json!({
                "memory_limit_mib": 256,
                "upload_max_filesize_mib": 64,
                "post_max_size_mib": 64,
                "max_execution_time_s": 60,
                "max_input_time_s": 60,
                "max_input_vars": 3000,
                "display_errors": false
            })),
        },
    }
}

operation! {
    pub struct SetPhpExtensions {
        name: "set_php_extensions",
        kind: Declare,
        family: PhpExtensionsFamily,
        summary: "Require PHP extensions for the account; refused when a version it uses does not load one",
        request: SetPhpExtensionsRequest,
        result: PhpSettingsResult,
        needs: [SetPhpVersion],
        example: SetPhpExtensionsRequest {
            id: example::account(),
            extensions: example::json(json!(["opcache", "intl"])),
        },
    }
}

// ---------------------------------------------------------------------------------------
// observe_php_versions.

pub type ObservePhpVersionsRequest = NodeResource;

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

operation! {
    pub struct ObservePhpVersions {
        name: "observe_php_versions",
        kind: Observe,
        scope: Node,
        family: PhpRuntime,
        summary: "The PHP versions this node can serve and the extensions each loads, as found on the machine",
        request: ObservePhpVersionsRequest,
        result: PhpVersionsResult,
        example: NodeResource::example(0xe5),
    }
}
