//! The `mysql_grant` family's declarations: what one of an account's MariaDB users may do
//! in one of the account's databases, as a typed privilege set.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::mysql_grant`.

use registry::types::{Hex32, MysqlPrivilegeSet, Presence};
use registry::{Family, Module, Operation, Owner, Resource, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub struct MysqlGrant;

impl Family for MysqlGrant {
    const NAME: &'static str = "mysql_grant";
    const MODULE: Module = Module::Mysql;
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureMysqlGrantRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// The resource id of one of the account's databases.
    pub database: Hex32,
    /// The resource id of one of the account's MariaDB users.
    pub user: Hex32,
    pub privileges: MysqlPrivilegeSet,
}

impl Resource for EnsureMysqlGrantRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveMysqlGrantRequest {
    pub id: Hex32,
    pub account: Hex32,
}

impl Resource for RemoveMysqlGrantRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

/// The grant as MariaDB shows it after the change.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MysqlGrantResult {
    pub state: Presence,
    pub database: Option<String>,
    pub user: Option<String>,
    /// The privileges MariaDB now shows for the user on the database (SQL spelling), at its
    /// first host.
    pub privileges: Vec<String>,
    /// Whether write privileges are held back because the account is over its quota.
    pub writes_revoked: bool,
}

fn example_id() -> Hex32 {
    "f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6"
        .parse()
        .expect("valid example")
}

fn example_account() -> Hex32 {
    "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
        .parse()
        .expect("valid example")
}

pub struct EnsureMysqlGrant;

impl Operation for EnsureMysqlGrant {
    const NAME: &'static str = "ensure_mysql_grant";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Give one of the account's MariaDB users a privilege set on one of its databases";
    type Family = MysqlGrant;
    type Request = EnsureMysqlGrantRequest;
    type Result = MysqlGrantResult;

    fn example() -> EnsureMysqlGrantRequest {
        EnsureMysqlGrantRequest {
            id: example_id(),
            account: example_account(),
            database: "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4"
                .parse()
                .expect("valid example"),
            user: "e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5"
                .parse()
                .expect("valid example"),
            privileges: MysqlPrivilegeSet::ReadWrite,
        }
    }
}

pub struct RemoveMysqlGrant;

impl Operation for RemoveMysqlGrant {
    const NAME: &'static str = "remove_mysql_grant";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Take a grant's privileges away from its MariaDB user";
    type Family = MysqlGrant;
    type Request = RemoveMysqlGrantRequest;
    type Result = MysqlGrantResult;

    fn example() -> RemoveMysqlGrantRequest {
        RemoveMysqlGrantRequest {
            id: example_id(),
            account: example_account(),
        }
    }
}
