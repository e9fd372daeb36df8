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

pub use declarations::mysql_grant::*;

use std::collections::BTreeSet;

use registry::types::{Hex32, MysqlPrivilegeSet, Presence};
use registry::{Apply, Aspects, Derive, Derived, Family, Of, OpError, Owner, Purge, RowType};
use serde::{Deserialize, Serialize};
use store::StoredRow;

use crate::context::{Ctx, provider_error};
use crate::mysql_database::{MysqlState, db_name, effective, open};

crash::points! {
    AFTER_GRANT = "mysql.after_grant",
    AFTER_REVOKE = "mysql.after_revoke",
}

/// One grant as stored: the account's database and user (by resource id) and the set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MysqlGrantRow {
    pub database: Hex32,
    pub user: Hex32,
    pub privileges: MysqlPrivilegeSet,
}

impl StoredRow for MysqlGrantRow {
    const FAMILY: &'static str = MysqlGrant::NAME;
}

impl Purge<Ctx> for MysqlGrant {
    const ROW: Option<RowType> = Some(store::row_type::<MysqlGrantRow>());

    /// Revokes every recorded grant (the users' purge drops the users after this).
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let view = MysqlState::load(ctx, account)?;
        if !view.grants.is_empty() {
            let mut db = ctx.provider.mariadb().map_err(provider_error)?;
            for grant in view.grants.values() {
                revoke(&view, &mut db, grant)?;
                crash::point(AFTER_REVOKE);
            }
        }
        ctx.forget_rows_of::<MysqlGrantRow>(account)
    }
}

const GRANT: Aspects = Aspects::new(
    MYSQL_GRANT_MISSING,
    MYSQL_GRANT_DIFFERS,
);

/// A privilege list in words, in the enum's order.
fn privileges_text(privileges: &BTreeSet<provider::Privilege>) -> String {
    privileges
        .iter()
        .map(|p| p.as_sql())
        .collect::<Vec<_>>()
        .join(", ")
}

impl Derive<Ctx> for MysqlGrant {
    /// Each recorded grant whose database and user are recorded: at every host of the user,
    /// exactly the privileges it makes on its database (its set, less the write privileges
    /// while the account is over its quota), as MariaDB shows them.
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        let mut items = Vec::new();
        let mut session = None;
        for account in crate::drift::accounts_of::<MysqlGrantRow>(ctx)? {
            let state = MysqlState::load(ctx, &account)?;
            for grant in state.effective_grants() {
                let name = db_name(grant.database)?;
                let db = open(ctx, &mut session)?;
                for host in &grant.user.hosts {
                    let shown = db
                        .grants(&grant.user.account(host)?, &name)
                        .map_err(provider_error)?;
                    items.push(Derived::setting(
                        Of::new(grant.id, &Owner::Tenant(account.clone())),
                        format!(
                            "the privileges of {}@{} on {}",
                            grant.user.name,
                            host.as_str(),
                            grant.database
                        ),
                        privileges_text(&grant.privileges),
                        (!shown.is_empty()).then(|| privileges_text(&shown)),
                        GRANT,
                    ));
                }
            }
        }
        Ok(items)
    }
}

/// Takes every privilege of `grant` away in MariaDB (all hosts of its user).
fn revoke(
    view: &MysqlState,
    db: &mut provider::Mariadb<'_>,
    grant: &MysqlGrantRow,
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

impl Apply<Ctx> for EnsureMysqlGrant {
    fn apply(ctx: &mut Ctx, req: &EnsureMysqlGrantRequest) -> Result<MysqlGrantResult, OpError> {
        let view = MysqlState::load(ctx, &req.account)?;
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
        let provider = ctx.provider.clone();
        let mut db = provider.mariadb().map_err(provider_error)?;
        // A grant moved to another database or user leaves the old one first.
        if let Some(previous) = view.grants.get(&req.id)
            && (previous.database != req.database || previous.user != req.user)
        {
            revoke(&view, &mut db, previous)?;
        }
        ctx.set_row(&MysqlGrantRow {
            database: req.database.clone(),
            user: req.user.clone(),
            privileges: req.privileges,
        });
        let view = MysqlState::load(ctx, &req.account)?;
        view.sync_grants(&mut db)?;
        crash::point(AFTER_GRANT);
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
        Ok(MysqlGrantResult {
            state: Presence::Present,
            database: Some(database),
            user: Some(user.name),
            privileges: shown.iter().map(|p| p.as_sql().to_owned()).collect(),
            writes_revoked: view.writes_revoked,
        })
    }
}

impl Apply<Ctx> for RemoveMysqlGrant {
    fn apply(ctx: &mut Ctx, req: &RemoveMysqlGrantRequest) -> Result<MysqlGrantResult, OpError> {
        let view = MysqlState::load(ctx, &req.account)?;
        if let Some(grant) = view.grants.get(&req.id) {
            let mut db = ctx.provider.mariadb().map_err(provider_error)?;
            revoke(&view, &mut db, grant)?;
        }
        ctx.forget_row();
        Ok(MysqlGrantResult {
            state: Presence::Absent,
            database: None,
            user: None,
            privileges: Vec::new(),
            writes_revoked: view.writes_revoked,
        })
    }
}
