//! The `mysql_grant` family's declarations: what one of an account's MariaDB users may do
//! in one of the account's databases, as a typed privilege set.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::mysql_grant`.

use registry::types::{Hex32, MysqlPrivilegeSet, Presence};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::declare::{family, impl_resource, operation};
use crate::example;
use crate::mysql_database::EnsureMysqlDatabase;
use crate::mysql_user::EnsureMysqlUser;
use crate::resource::AccountResource;

family! {
    pub struct MysqlGrant {
        name: "mysql_grant",
        module: Mysql,
        drift: {
            /// A recorded grant's user has no privilege on its database at one of its hosts.
            MYSQL_GRANT_MISSING = "mysql_grant_missing",
            /// A grant's privileges in MariaDB are not the ones state.db derives (its set, less the write privileges while the account is over its quota).
            MYSQL_GRANT_DIFFERS = "mysql_grant_differs",
        },
    }
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

impl_resource!(owner = account: EnsureMysqlGrantRequest);

pub type RemoveMysqlGrantRequest = AccountResource;

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

/// The example grant's id byte.
const GRANT: u8 = 0xf6;

operation! {
    pub struct EnsureMysqlGrant {
        name: "ensure_mysql_grant",
        kind: Declare,
        family: MysqlGrant,
        summary: "Give one of the account's MariaDB users a privilege set on one of its databases",
        request: EnsureMysqlGrantRequest,
        result: MysqlGrantResult,
        needs: [EnsureMysqlDatabase, EnsureMysqlUser],
        example: EnsureMysqlGrantRequest {
            id: example::id(GRANT),
            account: example::account(),
            database: example::id(0xd4),
            user: example::id(0xe5),
            privileges: MysqlPrivilegeSet::ReadWrite,
        },
    }
}

operation! {
    pub struct RemoveMysqlGrant {
        name: "remove_mysql_grant",
        kind: Remove,
        family: MysqlGrant,
        summary: "Take a grant's privileges away from its MariaDB user",
        request: RemoveMysqlGrantRequest,
        result: MysqlGrantResult,
        example: AccountResource::example(GRANT),
    }
}
