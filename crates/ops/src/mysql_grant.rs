//! The `mysql_grant` family: what one of an account's MariaDB users may do in one of the
//! account's databases, as a typed set (`read_only`, `read_write`, `all`) mapped to an
//! explicit privilege list (`mysql_database::privileges_of`).
//!
//! The request names the database and the user by their resource ids, and both are looked up
//! among the resources the request's own account owns in state.db: a grant on another
//! account's database, or to another account's user, cannot be expressed (it fails with
//! `mysql_database_missing` / `mysql_user_missing`). The grant is made on exactly that
//! database (the name is escaped so `_` is not a wildcard) for every host of the user, minus
//! the write privileges while the account is over its MySQL quota.

use std::collections::BTreeSet;

use registry::types::{Hex32, MysqlPrivilegeSet, Presence};
use registry::{Family, Module, OpError, Operation, Owner, Resource, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::account::store_error;
use crate::context::{Ctx, provider_error};
use crate::mysql_database::{AccountMysql, GrantView, db_name, effective};

pub struct MysqlGrant;

impl Family for MysqlGrant {
    const NAME: &'static str = "mysql_grant";
    const MODULE: Module = Module::Mysql;
    type Context = Ctx;

    /// Revokes every recorded grant (the users' purge drops the users after this).
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let view = AccountMysql::load(ctx, account)?;
        if !view.grants.is_empty() {
            let mut db = ctx.provider.mariadb().map_err(provider_error)?;
            for grant in view.grants.values() {
                revoke(&view, &mut db, grant)?;
                crash::point("mysql.after_revoke");
            }
        }
        ctx.state
            .forget_resources_of(account, MysqlGrant::NAME)
            .map_err(store_error)?;
        Ok(())
    }
}

/// Takes every privilege of `grant` away in MariaDB (all hosts of its user).
fn revoke(
    view: &AccountMysql,
    db: &mut provider::Mariadb<'_>,
    grant: &GrantView,
) -> Result<(), OpError> {
    let (Some(database), Some(user)) = (
        view.databases.get(&grant.database),
        view.users.get(&grant.user),
    ) else {
        return Ok(());
    };
    let name = db_name(database)?;
    for host in &user.hosts {
        db.set_grants(&user.account(host)?, &name, &BTreeSet::new())
            .map_err(provider_error)?;
    }
    Ok(())
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

    fn apply(ctx: &mut Ctx, req: &EnsureMysqlGrantRequest) -> Result<MysqlGrantResult, OpError> {
        let mut view = AccountMysql::load(ctx, &req.account)?;
        let database = view.databases.get(&req.database).cloned().ok_or_else(|| {
            OpError::permanent(
                "mysql_database_missing",
                format!("database {} is not one of this account's", req.database),
            )
        })?;
        let user = view.users.get(&req.user).cloned().ok_or_else(|| {
            OpError::permanent(
                "mysql_user_missing",
                format!("user {} is not one of this account's", req.user),
            )
        })?;
        if let Some((other, _)) = view
            .grants
            .iter()
            .find(|(id, g)| **id != req.id && g.database == req.database && g.user == req.user)
        {
            return Err(OpError::permanent(
                "grant_exists",
                format!(
                    "grant {other} already sets what user {} may do in database {}",
                    req.user, req.database
                ),
            ));
        }
        let mut db = ctx.provider.mariadb().map_err(provider_error)?;
        // A grant moved to another database or user leaves the old one first.
        if let Some(previous) = view.grants.get(&req.id)
            && (previous.database != req.database || previous.user != req.user)
        {
            revoke(&view, &mut db, previous)?;
        }
        let grant = GrantView {
            database: req.database.clone(),
            user: req.user.clone(),
            privileges: req.privileges,
        };
        view.grants.insert(req.id.clone(), grant);
        view.sync_grants(&mut db)?;
        crash::point("mysql.after_grant");
        let name = db_name(&database)?;
        let shown = match user.hosts.first() {
            Some(host) => db
                .grants(&user.account(host)?, &name)
                .map_err(provider_error)?,
            None => BTreeSet::new(),
        };
        if shown != effective(req.privileges, view.writes_revoked) {
            return Err(OpError::retryable(
                "grant_not_applied",
                format!("MariaDB shows {shown:?} for {} on {database}", user.name),
            ));
        }
        ctx.set_resource(json!({
            "database": req.database,
            "user": req.user,
            "privileges": req.privileges,
        }));
        Ok(MysqlGrantResult {
            state: Presence::Present,
            database: Some(database),
            user: Some(user.name),
            privileges: shown.iter().map(|p| p.as_sql().to_owned()).collect(),
            writes_revoked: view.writes_revoked,
        })
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

    fn apply(ctx: &mut Ctx, req: &RemoveMysqlGrantRequest) -> Result<MysqlGrantResult, OpError> {
        let view = AccountMysql::load(ctx, &req.account)?;
        if let Some(grant) = view.grants.get(&req.id) {
            let mut db = ctx.provider.mariadb().map_err(provider_error)?;
            revoke(&view, &mut db, grant)?;
        }
        ctx.forget_resource();
        Ok(MysqlGrantResult {
            state: Presence::Absent,
            database: None,
            user: None,
            privileges: Vec::new(),
            writes_revoked: view.writes_revoked,
        })
    }
}
