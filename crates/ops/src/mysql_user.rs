//! The `mysql_user` family: an account's MariaDB users, `<username>_<name>`, each one
//! MariaDB account per allowed host (`user@localhost`, `user@10.0.0.%`...), all with the same
//! `mysql_native_password` hash. The node never sees a password: the request carries the
//! hash (`MysqlPasswordHash`), bound as a parameter, never written into a statement.
//!
//! The user's grants (the `mysql_grant` family) follow its hosts: after a change, every
//! recorded grant is made true for every host, and a host no longer listed is dropped with
//! its grants.

pub use declarations::mysql_user::*;

use registry::types::{Hex32, MysqlHost, MysqlPasswordHash, Presence};
use registry::{Apply, Aspects, Derive, Derived, Family, Of, OpError, Purge, RowType};
use serde::{Deserialize, Serialize};
use store::StoredRow;

use crate::context::{Ctx, provider_error};
use crate::mysql_database::{MysqlState, db_user, derive_each, full_name};

crash::points! {
    AFTER_CREATE_USER = "mysql.after_create_user",
    AFTER_DROP_USER = "mysql.after_drop_user",
}

/// One MariaDB user as stored: its full name (`<username>_<name>`) and the hosts it has an
/// account at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MysqlUserRow {
    pub name: String,
    pub hosts: Vec<MysqlHost>,
}

impl StoredRow for MysqlUserRow {
    const FAMILY: &'static str = MysqlUserFamily::NAME;
}

impl Purge<Ctx> for MysqlUserFamily {
    const ROW: Option<RowType> = Some(store::row_type::<MysqlUserRow>());

    /// Drops every MariaDB account of the account's users (their grants go with them).
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let view = MysqlState::load(ctx, account)?;
        if !view.users.is_empty() {
            let mut db = ctx.provider.mariadb().map_err(provider_error)?;
            for user in view.users.values() {
                drop_all_hosts(&mut db, &user.name)?;
                crash::point(AFTER_DROP_USER);
            }
        }
        ctx.forget_rows_of::<MysqlUserRow>(account)
    }
}

const USER: Aspects = Aspects::new(MYSQL_USER_MISSING, MYSQL_USER_DIFFERS);

impl Derive<Ctx> for MysqlUserFamily {
    /// Each recorded user, in MariaDB at exactly the hosts recorded (its password hash is
    /// not recorded, and not compared).
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        derive_each::<MysqlUserRow>(ctx, |db, stored| {
            let mut recorded: Vec<&str> = stored.row.hosts.iter().map(|h| h.as_str()).collect();
            recorded.sort_unstable();
            let mut found: Vec<String> = db
                .hosts_of(&db_user(&stored.row.name)?)
                .map_err(provider_error)?
                .into_iter()
                .map(|h| h.as_str().to_owned())
                .collect();
            found.sort_unstable();
            Ok(Some(Derived::setting(
                Of::new(&stored.id, &stored.owner),
                format!("the hosts of the user {}", stored.row.name),
                recorded.join(", "),
                (!found.is_empty()).then(|| found.join(", ")),
                USER,
            )))
        })
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

/// Creates or converges user `id` as the view records it (this job's row included) with
/// `hash`: its hosts, no other host, the account's grants re-applied. Returns the hosts
/// MariaDB now has.
fn converge(
    ctx: &mut Ctx,
    account: &Hex32,
    id: &Hex32,
    hash: &MysqlPasswordHash,
) -> Result<Vec<String>, OpError> {
    let view = MysqlState::load(ctx, account)?;
    let user = view.users.get(id).cloned().ok_or_else(|| missing(id))?;
    let name = db_user(&user.name)?;
    let hash = provider::NativeHash::new(hash.as_str()).map_err(provider_error)?;
    let mut db = ctx.provider.mariadb().map_err(provider_error)?;
    for host in db.hosts_of(&name).map_err(provider_error)? {
        if !user.hosts.iter().any(|h| h.as_str() == host.as_str()) {
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
        crash::point(AFTER_CREATE_USER);
    }
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

fn missing(id: &Hex32) -> OpError {
    OpError::permanent(
        "mysql_user_missing",
        format!("user {id} does not exist for this account"),
    )
}

impl Apply<Ctx> for EnsureMysqlUser {
    fn apply(ctx: &mut Ctx, req: &EnsureMysqlUserRequest) -> Result<MysqlUserResult, OpError> {
        let full = full_name(ctx, &req.account, &req.name)?;
        let view = MysqlState::load(ctx, &req.account)?;
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
        ctx.set_row(&MysqlUserRow {
            name: full.clone(),
            hosts: req.hosts.iter().cloned().collect(),
        });
        let hosts = converge(ctx, &req.account, &req.id, &req.password_hash)?;
        Ok(MysqlUserResult {
            state: Presence::Present,
            name: Some(full),
            hosts,
        })
    }
}

impl Apply<Ctx> for SetMysqlUserPassword {
    fn apply(ctx: &mut Ctx, req: &SetMysqlUserPasswordRequest) -> Result<MysqlUserResult, OpError> {
        let view = MysqlState::load(ctx, &req.account)?;
        let full = view
            .users
            .get(&req.id)
            .ok_or_else(|| missing(&req.id))?
            .name
            .clone();
        let hosts = converge(ctx, &req.account, &req.id, &req.password_hash)?;
        Ok(MysqlUserResult {
            state: Presence::Present,
            name: Some(full),
            hosts,
        })
    }
}

impl Apply<Ctx> for RemoveMysqlUser {
    fn apply(ctx: &mut Ctx, req: &RemoveMysqlUserRequest) -> Result<MysqlUserResult, OpError> {
        let view = MysqlState::load(ctx, &req.account)?;
        if let Some(user) = view.users.get(&req.id) {
            let mut db = ctx.provider.mariadb().map_err(provider_error)?;
            drop_all_hosts(&mut db, &user.name)?;
        }
        ctx.forget_row();
        Ok(MysqlUserResult {
            state: Presence::Absent,
            name: None,
            hosts: Vec::new(),
        })
    }
}
