//! The `mysql_user` family: an account's MariaDB users, `<username>_<name>`, each one
//! MariaDB account per allowed host (`user@localhost`, `user@10.0.0.%`...), all with the same
//! `mysql_native_password` hash. The node never sees a password: the request carries the
//! hash (`MysqlPasswordHash`), bound as a parameter, never written into a statement.
//!
//! The user's grants (the `mysql_grant` family) follow its hosts: after a change, every
//! recorded grant is made true for every host, and a host no longer listed is dropped with
//! its grants.

use registry::types::{Hex32, MysqlHosts, MysqlName, MysqlPasswordHash, Presence};
use registry::{Family, Module, OpError, Operation, Owner, Resource, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::account::store_error;
use crate::context::{Ctx, provider_error};
use crate::mysql_database::{AccountMysql, UserView, db_user, full_name};

pub struct MysqlUserFamily;

impl Family for MysqlUserFamily {
    const NAME: &'static str = "mysql_user";
    const MODULE: Module = Module::Mysql;
    type Context = Ctx;

    /// Drops every MariaDB account of the account's users (their grants go with them).
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let view = AccountMysql::load(ctx, account)?;
        if !view.users.is_empty() {
            let mut db = ctx.provider.mariadb().map_err(provider_error)?;
            for user in view.users.values() {
                drop_all_hosts(&mut db, &user.name)?;
                crash::point("mysql.after_drop_user");
            }
        }
        ctx.state
            .forget_resources_of(account, MysqlUserFamily::NAME)
            .map_err(store_error)?;
        Ok(())
    }
}

/// Drops `name` at every host MariaDB has it at (not only the recorded ones: a crash may
/// have left one the row does not list yet).
fn drop_all_hosts(db: &mut provider::Mariadb<'_>, name: &str) -> Result<(), OpError> {
    let user = db_user(name)?;
    for host in db.hosts_of(&user).map_err(provider_error)? {
        db.drop_account(&provider::DbAccount {
            user: user.clone(),
            host,
        })
        .map_err(provider_error)?;
    }
    Ok(())
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

/// Creates or converges the user at `hosts` with `hash`, drops other hosts, re-applies the
/// account's grants, and returns the hosts MariaDB now has.
fn converge(
    ctx: &mut Ctx,
    account: &Hex32,
    id: &Hex32,
    user: UserView,
    hash: &MysqlPasswordHash,
) -> Result<Vec<String>, OpError> {
    let mut view = AccountMysql::load(ctx, account)?;
    let name = db_user(&user.name)?;
    let hash = provider::NativeHash::new(hash.as_str()).map_err(provider_error)?;
    let mut db = ctx.provider.mariadb().map_err(provider_error)?;
    for host in db.hosts_of(&name).map_err(provider_error)? {
        if !user.hosts.iter().any(|h| h == host.as_str()) {
            db.drop_account(&provider::DbAccount {
                user: name.clone(),
                host,
            })
            .map_err(provider_error)?;
        }
    }
    for host in &user.hosts {
        db.ensure_account(&user.account(host)?, &hash)
            .map_err(provider_error)?;
        crash::point("mysql.after_create_user");
    }
    view.users.insert(id.clone(), user);
    view.sync_grants(&mut db)?;
    let mut hosts: Vec<String> = db
        .hosts_of(&name)
        .map_err(provider_error)?
        .into_iter()
        .map(|h| h.as_str().to_owned())
        .collect();
    hosts.sort();
    Ok(hosts)
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

    fn apply(ctx: &mut Ctx, req: &EnsureMysqlUserRequest) -> Result<MysqlUserResult, OpError> {
        let full = full_name(ctx, &req.account, &req.name)?;
        let view = AccountMysql::load(ctx, &req.account)?;
        if let Some(previous) = view.users.get(&req.id)
            && previous.name != full
        {
            return Err(OpError::permanent(
                "name_immutable",
                format!("user {} is already named {}", req.id, previous.name),
            ));
        }
        if let Some((other, _)) = view
            .users
            .iter()
            .find(|(id, u)| **id != req.id && u.name == full)
        {
            return Err(OpError::permanent(
                "name_taken",
                format!("the account's user {other} is already named {full}"),
            ));
        }
        let wanted: Vec<String> = req.hosts.iter().map(|h| h.as_str().to_owned()).collect();
        let user = UserView {
            name: full.clone(),
            hosts: wanted.clone(),
        };
        let hosts = converge(ctx, &req.account, &req.id, user, &req.password_hash)?;
        ctx.set_resource(json!({"name": full, "hosts": wanted}));
        Ok(MysqlUserResult {
            state: Presence::Present,
            name: Some(full),
            hosts,
        })
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

    fn apply(ctx: &mut Ctx, req: &SetMysqlUserPasswordRequest) -> Result<MysqlUserResult, OpError> {
        let view = AccountMysql::load(ctx, &req.account)?;
        let user = view.users.get(&req.id).cloned().ok_or_else(|| {
            OpError::permanent(
                "mysql_user_missing",
                format!("user {} does not exist for this account", req.id),
            )
        })?;
        let full = user.name.clone();
        let hosts = converge(ctx, &req.account, &req.id, user, &req.password_hash)?;
        Ok(MysqlUserResult {
            state: Presence::Present,
            name: Some(full),
            hosts,
        })
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

    fn apply(ctx: &mut Ctx, req: &RemoveMysqlUserRequest) -> Result<MysqlUserResult, OpError> {
        let view = AccountMysql::load(ctx, &req.account)?;
        if let Some(user) = view.users.get(&req.id) {
            let mut db = ctx.provider.mariadb().map_err(provider_error)?;
            drop_all_hosts(&mut db, &user.name)?;
        }
        ctx.forget_resource();
        Ok(MysqlUserResult {
            state: Presence::Absent,
            name: None,
            hosts: Vec::new(),
        })
    }
}
