//! The `mysql_user` family's declarations: an account's MariaDB users, their hosts and
//! password hashes.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::mysql_user`.

use registry::types::{Hex32, MysqlHosts, MysqlName, MysqlPasswordHash, Presence};
use registry::{Family, Module, Operation, Owner, Resource, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub struct MysqlUserFamily;

impl Family for MysqlUserFamily {
    const NAME: &'static str = "mysql_user";
    const MODULE: Module = Module::Mysql;
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureMysqlUserRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// The account's part of the name; the user is `<username>_<name>`.
    pub name: MysqlName,
    /// `PASSWORD('...')`: `*` and 40 hexadecimal digits.
    pub password_hash: MysqlPasswordHash,
    /// Where the user may connect from; `["localhost"]` by default.
    #[serde(default)]
    pub hosts: MysqlHosts,
}

impl Resource for EnsureMysqlUserRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetMysqlUserPasswordRequest {
    pub id: Hex32,
    pub account: Hex32,
    pub password_hash: MysqlPasswordHash,
}

impl Resource for SetMysqlUserPasswordRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveMysqlUserRequest {
    pub id: Hex32,
    pub account: Hex32,
}

impl Resource for RemoveMysqlUserRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

/// The user as MariaDB shows it after the change.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MysqlUserResult {
    pub state: Presence,
    /// The full name in MariaDB.
    pub name: Option<String>,
    /// The hosts MariaDB has the user at.
    pub hosts: Vec<String>,
}

const EXAMPLE_HASH: &str = "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19";

fn example_id() -> Hex32 {
    "e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5"
        .parse()
        .expect("valid example")
}

fn example_account() -> Hex32 {
    "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
        .parse()
        .expect("valid example")
}

pub struct EnsureMysqlUser;

impl Operation for EnsureMysqlUser {
    const NAME: &'static str = "ensure_mysql_user";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Create or converge a MariaDB user `<username>_<name>` with a native password hash and allowed hosts";
    type Family = MysqlUserFamily;
    type Request = EnsureMysqlUserRequest;
    type Result = MysqlUserResult;

    fn example() -> EnsureMysqlUserRequest {
        EnsureMysqlUserRequest {
            id: example_id(),
            account: example_account(),
            name: "app".parse().expect("valid example"),
            password_hash: EXAMPLE_HASH.parse().expect("valid example"),
            hosts: MysqlHosts::default(),
        }
    }
}

pub struct SetMysqlUserPassword;

impl Operation for SetMysqlUserPassword {
    const NAME: &'static str = "set_mysql_user_password";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Change a MariaDB user's password hash at every host";
    type Family = MysqlUserFamily;
    type Request = SetMysqlUserPasswordRequest;
    type Result = MysqlUserResult;

    fn example() -> SetMysqlUserPasswordRequest {
        SetMysqlUserPasswordRequest {
            id: example_id(),
            account: example_account(),
            password_hash: EXAMPLE_HASH.parse().expect("valid example"),
        }
    }
}

pub struct RemoveMysqlUser;

impl Operation for RemoveMysqlUser {
    const NAME: &'static str = "remove_mysql_user";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Drop a MariaDB user at every host, with its grants";
    type Family = MysqlUserFamily;
    type Request = RemoveMysqlUserRequest;
    type Result = MysqlUserResult;

    fn example() -> RemoveMysqlUserRequest {
        RemoveMysqlUserRequest {
            id: example_id(),
            account: example_account(),
        }
    }
}
