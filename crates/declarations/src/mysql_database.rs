//! The `mysql_database` family's declarations: an account's MariaDB databases, its MySQL
//! quota and the usage behind it.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::mysql_database`.

use registry::types::{Hex32, MiB, MysqlCharset, MysqlCollation, MysqlName};
use registry::{Family, Module, Operation, Owner, Resource, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub struct MysqlDatabase;

impl Family for MysqlDatabase {
    const NAME: &'static str = "mysql_database";
    const MODULE: Module = Module::Mysql;
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

impl Resource for EnsureMysqlDatabaseRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveMysqlDatabaseRequest {
    pub id: Hex32,
    pub account: Hex32,
}

impl Resource for RemoveMysqlDatabaseRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

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

impl Resource for SetMysqlQuotaRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.id.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObserveMysqlUsageRequest {
    /// The account.
    pub id: Hex32,
}

impl Resource for ObserveMysqlUsageRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.id.clone())
    }
}

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

const EXAMPLE_ACCOUNT: &str = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";

pub struct EnsureMysqlDatabase;

impl Operation for EnsureMysqlDatabase {
    const NAME: &'static str = "ensure_mysql_database";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Create or converge a MariaDB database `<username>_<name>` with a charset and collation";
    type Family = MysqlDatabase;
    type Request = EnsureMysqlDatabaseRequest;
    type Result = MysqlDatabaseResult;

    fn example() -> EnsureMysqlDatabaseRequest {
        EnsureMysqlDatabaseRequest {
            id: "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4"
                .parse()
                .expect("valid example"),
            account: EXAMPLE_ACCOUNT.parse().expect("valid example"),
            name: "shop".parse().expect("valid example"),
            charset: MysqlCharset::Utf8mb4,
            collation: Some(MysqlCollation::Utf8mb4UnicodeCi),
        }
    }
}

pub struct RemoveMysqlDatabase;

impl Operation for RemoveMysqlDatabase {
    const NAME: &'static str = "remove_mysql_database";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Drop a MariaDB database with its tables, and the grants on it";
    type Family = MysqlDatabase;
    type Request = RemoveMysqlDatabaseRequest;
    type Result = MysqlDatabaseResult;

    fn example() -> RemoveMysqlDatabaseRequest {
        RemoveMysqlDatabaseRequest {
            id: "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4"
                .parse()
                .expect("valid example"),
            account: EXAMPLE_ACCOUNT.parse().expect("valid example"),
        }
    }
}

pub struct SetMysqlQuota;

impl Operation for SetMysqlQuota {
    const NAME: &'static str = "set_mysql_quota";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Set the account's MySQL quota (MiB, 0: none) and enforce it now";
    type Family = MysqlDatabase;
    type Request = SetMysqlQuotaRequest;
    type Result = MysqlUsageResult;

    fn example() -> SetMysqlQuotaRequest {
        SetMysqlQuotaRequest {
            id: EXAMPLE_ACCOUNT.parse().expect("valid example"),
            quota_mib: MiB::try_from(1024).expect("valid example"),
        }
    }
}

pub struct ObserveMysqlUsage;

impl Operation for ObserveMysqlUsage {
    const NAME: &'static str = "observe_mysql_usage";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Measure the account's databases and enforce its MySQL quota";
    type Family = MysqlDatabase;
    type Request = ObserveMysqlUsageRequest;
    type Result = MysqlUsageResult;

    fn example() -> ObserveMysqlUsageRequest {
        ObserveMysqlUsageRequest {
            id: EXAMPLE_ACCOUNT.parse().expect("valid example"),
        }
    }
}
