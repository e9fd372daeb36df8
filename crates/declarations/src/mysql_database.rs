//! The `mysql_database` family's declarations: an account's MariaDB databases, its MySQL
//! quota and the usage behind it.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::mysql_database`.

use registry::types::{Hex32, MiB, MysqlCharset, MysqlCollation, MysqlName};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::account::EnsureAccount;
use crate::declare::{family, impl_resource, operation};
use crate::example;
use crate::mysql_grant::EnsureMysqlGrant;
use crate::resource::{AccountRef, AccountResource};

family! {
    pub struct MysqlDatabase {
        name: "mysql_database",
        module: Mysql,
        drift: {
            /// A recorded database is not in MariaDB.
            MYSQL_DATABASE_MISSING = "mysql_database_missing",
            /// A database's character set or collation is not the one recorded.
            MYSQL_DATABASE_DIFFERS = "mysql_database_differs",
        },
    }
}

// --- requests and results ------------------------------------------------------------------

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureMysqlDatabaseRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// The account's part of the name; the database is `<username>_<name>`.
    pub name: MysqlName,
    #[serde(default)]
    pub charset: MysqlCharset,
    /// Must belong to `charset`; the charset's default when absent.
    #[serde(default)]
    pub collation: Option<MysqlCollation>,
}

impl_resource!(owner = account: EnsureMysqlDatabaseRequest);

pub type RemoveMysqlDatabaseRequest = AccountResource;

/// A database as MariaDB shows it after the change.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MysqlDatabaseResult {
    pub state: registry::types::Presence,
    /// The full name in MariaDB.
    pub name: Option<String>,
    pub charset: Option<String>,
    pub collation: Option<String>,
    pub size_bytes: Option<u64>,
}

/// The account's MySQL limit. `id` is the account's id: one quota per account.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetMysqlQuotaRequest {
    /// The account.
    pub id: Hex32,
    /// Total size of the account's databases in MiB; 0: unlimited.
    pub quota_mib: MiB,
}

impl_resource!(owner = id: SetMysqlQuotaRequest);

pub type ObserveMysqlUsageRequest = AccountRef;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DatabaseUsage {
    /// The database's resource id.
    pub database: String,
    pub name: String,
    pub size_bytes: u64,
}

/// The account's MySQL usage and what the quota does about it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MysqlUsageResult {
    pub databases: Vec<DatabaseUsage>,
    pub total_bytes: u64,
    /// 0: unlimited.
    pub quota_mib: u64,
    /// Whether the account's users are now without write privileges.
    pub writes_revoked: bool,
}

// --- operations ----------------------------------------------------------------------------

/// The example database's id byte.
const DATABASE: u8 = 0xd4;

operation! {
    pub struct EnsureMysqlDatabase {
        name: "ensure_mysql_database",
        kind: Declare,
        family: MysqlDatabase,
        summary: "Create or converge a MariaDB database `<username>_<name>` with a charset and collation",
        request: EnsureMysqlDatabaseRequest,
        result: MysqlDatabaseResult,
        needs: [EnsureAccount],
        example: EnsureMysqlDatabaseRequest {
            id: example::id(DATABASE),
            account: example::account(),
            name: example::parse("shop"),
            charset: MysqlCharset::Utf8mb4,
            collation: Some(MysqlCollation::Utf8mb4UnicodeCi),
        },
    }
}

operation! {
    pub struct RemoveMysqlDatabase {
        name: "remove_mysql_database",
        kind: Remove,
        family: MysqlDatabase,
        summary: "Drop a MariaDB database with its tables, and the grants on it",
        request: RemoveMysqlDatabaseRequest,
        result: MysqlDatabaseResult,
        example: AccountResource::example(DATABASE),
    }
}

// The quota acts on the account's users' grants: the example has one to act on.
operation! {
    pub struct SetMysqlQuota {
        name: "set_mysql_quota",
        kind: Set,
        family: MysqlDatabase,
        summary: "Set the account's MySQL quota (MiB, 0: none) and enforce it now",
        request: SetMysqlQuotaRequest,
        result: MysqlUsageResult,
        needs: [EnsureMysqlGrant],
        example: SetMysqlQuotaRequest {
            id: example::account(),
            quota_mib: example::number(1024),
        },
    }
}

operation! {
    pub struct ObserveMysqlUsage {
        name: "observe_mysql_usage",
        kind: Observe,
        family: MysqlDatabase,
        summary: "Measure the account's databases and enforce its MySQL quota",
        request: ObserveMysqlUsageRequest,
        result: MysqlUsageResult,
        needs: [SetMysqlQuota],
        example: AccountRef::example(),
    }
}
