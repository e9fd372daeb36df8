//! The `mysql_user` family's declarations: an account's MariaDB users, their hosts and
//! password hashes.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::mysql_user`.

use registry::types::{Hex32, MysqlHosts, MysqlName, MysqlPasswordHash, Presence};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::account::EnsureAccount;
use crate::declare::{family, impl_resource, operation};
use crate::example;
use crate::resource::AccountResource;

family! {
    pub struct MysqlUserFamily {
        name: "mysql_user",
        module: Mysql,
        drift: {
            /// A recorded MariaDB user has no account at any host.
            MYSQL_USER_MISSING = "mysql_user_missing",
            /// A MariaDB user's hosts are not the ones recorded.
            MYSQL_USER_DIFFERS = "mysql_user_differs",
        },
    }
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

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetMysqlUserPasswordRequest {
    pub id: Hex32,
    pub account: Hex32,
    pub password_hash: MysqlPasswordHash,
}

impl_resource!(
    owner = account: EnsureMysqlUserRequest,
    SetMysqlUserPasswordRequest,
);

pub type RemoveMysqlUserRequest = AccountResource;

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

/// The example database user's id byte.
const USER: u8 = 0xe5;

operation! {
    pub struct EnsureMysqlUser {
        name: "ensure_mysql_user",
        kind: Declare,
        family: MysqlUserFamily,
        summary: "Create or converge a MariaDB user `<username>_<name>` with a native password hash and allowed hosts",
        request: EnsureMysqlUserRequest,
        result: MysqlUserResult,
        needs: [EnsureAccount],
        example: EnsureMysqlUserRequest {
            id: example::id(USER),
            account: example::account(),
            name: example::parse("app"),
            password_hash: example::parse(EXAMPLE_HASH),
            hosts: MysqlHosts::default(),
        },
    }
}

operation! {
    pub struct SetMysqlUserPassword {
        name: "set_mysql_user_password",
        kind: Set,
        family: MysqlUserFamily,
        summary: "Change a MariaDB user's password hash at every host",
        request: SetMysqlUserPasswordRequest,
        result: MysqlUserResult,
        example: SetMysqlUserPasswordRequest {
            id: example::id(USER),
            account: example::account(),
            password_hash: example::parse(EXAMPLE_HASH),
        },
    }
}

operation! {
    pub struct RemoveMysqlUser {
        name: "remove_mysql_user",
        kind: Remove,
        family: MysqlUserFamily,
        summary: "Drop a MariaDB user at every host, with its grants",
        request: RemoveMysqlUserRequest,
        result: MysqlUserResult,
        example: AccountResource::example(USER),
    }
}
