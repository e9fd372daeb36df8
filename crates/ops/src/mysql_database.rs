//! The `mysql_database` family: an account's MariaDB databases, its MySQL quota and the
//! usage behind it. The MariaDB families share the helpers at the end of this module.
//!
//! Names: a request carries only the account's own part (`MysqlName`, `[a-z0-9]{1,32}`);
//! the object in MariaDB is `<username>_<name>`, like hosting panels name them, so a request
//! can only ever name one of its own account's objects. An account whose user name holds a
//! `-` cannot have MariaDB objects (`username_not_mysql_compatible`).
//!
//! Quota (what was chosen): `set_mysql_quota` records the account's limit in MiB (0: none)
//! and `observe_mysql_usage` measures every database of the account (data plus index bytes
//! from `information_schema.TABLES`). Both enforce, the way hosting panels do: while the
//! account's total is over its limit, its users' grants lose the privileges that let data
//! grow (INSERT, UPDATE, CREATE, ALTER, INDEX, REFERENCES, CREATE TEMPORARY TABLES,
//! CREATE VIEW, CREATE ROUTINE, ALTER ROUTINE, EVENT, TRIGGER); SELECT, DELETE and DROP stay,
//! so the tenant can read and free space. When a later observation finds the account back
//! under, the grants are restored from state.db. The state (`writes_revoked`, bytes used) is
//! the quota's resource row in state.db, and each observation is a job whose result reaches
//! the events feed; the control plane schedules `observe_mysql_usage` (the runner has no timer
//! of its own yet).

pub use declarations::mysql_database::*;

use std::collections::{BTreeMap, BTreeSet};

use provider::{Collation, DbAccount, DbHost, DbName, DbUser, Mariadb, Privilege};
use registry::types::{Hex32, MysqlCollation, MysqlHost, MysqlName, MysqlPrivilegeSet};
use registry::{Apply, Aspects, Derive, Derived, Family, Of, OpError, Operation, Purge, RowType};
use serde::{Deserialize, Serialize};
use state::Stored;
use store::{StoreError, StoredRow};

use crate::account::{AccountRow, account_info};
use crate::context::{Ctx, provider_error, store_error};
use crate::mysql_grant::MysqlGrantRow;
use crate::mysql_user::MysqlUserRow;

crash::points! {
    AFTER_CREATE_DATABASE = "mysql.after_create_database",
    BEFORE_DROP_DATABASE = "mysql.before_drop_database",
    AFTER_DROP_DATABASE = "mysql.after_drop_database",
    AFTER_QUOTA_GRANTS = "mysql.after_quota_grants",
}

const MIB: u64 = 1024 * 1024;

/// A row of the `mysql_database` family: one of the account's databases, or (under the
/// account's own id) its quota and the state of its enforcement.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum MysqlDatabaseRow {
    /// A database: its full name in MariaDB (`<username>_<name>`), as MariaDB reports its
    /// charset and collation.
    Database {
        name: String,
        charset: String,
        collation: String,
    },
    /// The account's quota (0: none), whether its write privileges are revoked for being
    /// over it, and the bytes last measured.
    Quota {
        quota_mib: u64,
        writes_revoked: bool,
        total_bytes: u64,
    },
}

impl StoredRow for MysqlDatabaseRow {
    const FAMILY: &'static str = MysqlDatabase::NAME;
    /// The quota's row is `set_mysql_quota`'s; an observation measures again and enforces
    /// the quota already declared.
    const FIELD_OWNERS: registry::FieldOwners = &[
        ("kind", &[EnsureMysqlDatabase::NAME, SetMysqlQuota::NAME]),
        ("quota_mib", &[SetMysqlQuota::NAME]),
        ("writes_revoked", &[SetMysqlQuota::NAME, ObserveMysqlUsage::NAME]),
        ("total_bytes", &[SetMysqlQuota::NAME, ObserveMysqlUsage::NAME]),
    ];
}

impl Purge<Ctx> for MysqlDatabase {
    const ROW: Option<RowType> = Some(store::row_type::<MysqlDatabaseRow>());

    /// Drops every database of the account (its users and grants went first: those
    /// families are declared after this one), and forgets the quota.
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let view = MysqlState::load(ctx, account)?;
        if !view.databases.is_empty() {
            let mut db = ctx.provider.mariadb().map_err(provider_error)?;
            for name in view.databases.values() {
                db.drop_database(&db_name(name)?).map_err(provider_error)?;
                crash::point(AFTER_DROP_DATABASE);
            }
        }
        ctx.forget_rows_of::<MysqlDatabaseRow>(account)
    }
}

const DATABASE: Aspects = Aspects::new(
    MYSQL_DATABASE_MISSING,
    MYSQL_DATABASE_DIFFERS,
);

impl Derive<Ctx> for MysqlDatabase {
    /// Each recorded database, in MariaDB with the character set and collation recorded.
    /// The quota's enforcement shows in the grants (`mysql_grant`).
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        derive_each::<MysqlDatabaseRow>(ctx, |db, stored| {
            let MysqlDatabaseRow::Database {
                name,
                charset,
                collation,
            } = &stored.row
            else {
                return Ok(None);
            };
            let found = db.database(&db_name(name)?).map_err(provider_error)?;
            Ok(Some(Derived::setting(
                Of::new(&stored.id, &stored.owner),
                format!("the database {name}"),
                format!("{charset}, {collation}"),
                found.map(|info| format!("{}, {}", info.charset, info.collation)),
                DATABASE,
            )))
        })
    }
}

/// The settings a MariaDB family derives: what `setting` finds for each row of `T` (`None`
/// for a row that derives nothing), through one session opened when first needed (a node
/// without MariaDB resources opens none).
pub(crate) fn derive_each<T: StoredRow>(
    ctx: &Ctx,
    mut setting: impl FnMut(&mut Mariadb<'_>, &Stored<T>) -> Result<Option<Derived>, OpError>,
) -> Result<Vec<Derived>, OpError> {
    let mut items = Vec::new();
    let mut session = None;
    for stored in ctx.view().all::<T>().map_err(store_error)? {
        items.extend(setting(open(ctx, &mut session)?, &stored)?);
    }
    Ok(items)
}

/// A derive hook's MariaDB session, opened on first use.
pub(crate) fn open<'s, 'p>(
    ctx: &'p Ctx,
    session: &'s mut Option<Mariadb<'p>>,
) -> Result<&'s mut Mariadb<'p>, OpError> {
    match session {
        Some(db) => Ok(db),
        None => Ok(session.insert(ctx.provider.mariadb().map_err(provider_error)?)),
    }
}

impl Apply<Ctx> for EnsureMysqlDatabase {
    fn apply(
        ctx: &mut Ctx,
        req: &EnsureMysqlDatabaseRequest,
    ) -> Result<MysqlDatabaseResult, OpError> {
        // An account's id names its quota row in this family.
        if req.id == req.account
            || ctx
                .view()
                .get::<AccountRow>(&req.id)
                .map_err(store_error)?
                .is_some()
        {
            return Err(OpError::permanent(
                "id_reserved",
                "a database id cannot be an account's id (that id names the account's quota)",
            ));
        }
        let collation = req
            .collation
            .unwrap_or_else(|| req.charset.default_collation());
        if collation.charset() != req.charset {
            return Err(OpError::permanent(
                "collation_mismatch",
                format!(
                    "collation {} does not belong to charset {}",
                    serde_json::to_value(collation).unwrap_or_default(),
                    serde_json::to_value(req.charset).unwrap_or_default()
                ),
            ));
        }
        let view = MysqlState::load(ctx, &req.account)?;
        let full = full_name(ctx, &req.account, &req.name)?;
        if let Some(previous) = view.databases.get(&req.id)
            && previous != &full
        {
            return Err(OpError::permanent(
                "name_immutable",
                format!("database {} is already named {previous}", req.id),
            ));
        }
        if let Some((other, _)) = view
            .databases
            .iter()
            .find(|(id, name)| **id != req.id && **name == full)
        {
            return Err(OpError::permanent(
                "name_taken",
                format!("the account's database {other} is already named {full}"),
            ));
        }
        let name = db_name(&full)?;
        let provider = ctx.provider.clone();
        let mut db = provider.mariadb().map_err(provider_error)?;
        db.ensure_database(&name, provider_collation(collation))
            .map_err(provider_error)?;
        crash::point(AFTER_CREATE_DATABASE);
        let info = db.database(&name).map_err(provider_error)?.ok_or_else(|| {
            OpError::retryable(
                "database_not_created",
                format!("{full} is not in MariaDB after CREATE DATABASE"),
            )
        })?;
        ctx.set_row(&MysqlDatabaseRow::Database {
            name: full.clone(),
            charset: info.charset.clone(),
            collation: info.collation.clone(),
        });
        MysqlState::load(ctx, &req.account)?.sync_grants(&mut db)?;
        let size = db.database_size(&name).map_err(provider_error)?;
        Ok(MysqlDatabaseResult {
            state: registry::types::Presence::Present,
            name: Some(full),
            charset: Some(info.charset),
            collation: Some(info.collation),
            size_bytes: Some(size),
        })
    }
}

impl Apply<Ctx> for RemoveMysqlDatabase {
    fn apply(
        ctx: &mut Ctx,
        req: &RemoveMysqlDatabaseRequest,
    ) -> Result<MysqlDatabaseResult, OpError> {
        let view = MysqlState::load(ctx, &req.account)?;
        if !view.databases.contains_key(&req.id) && req.id == req.account {
            return Err(OpError::permanent(
                "id_reserved",
                "an account's id names its quota, not a database",
            ));
        }
        if let Some(full) = view.databases.get(&req.id) {
            let name = db_name(full)?;
            let mut db = ctx.provider.mariadb().map_err(provider_error)?;
            // MariaDB keeps grants on a dropped database; a later one of the same name must
            // not inherit them.
            for user in view.users.values() {
                for host in &user.hosts {
                    db.set_grants(&user.account(host)?, &name, &BTreeSet::new())
                        .map_err(provider_error)?;
                }
            }
            crash::point(BEFORE_DROP_DATABASE);
            db.drop_database(&name).map_err(provider_error)?;
        }
        ctx.forget_row();
        Ok(MysqlDatabaseResult {
            state: registry::types::Presence::Absent,
            name: None,
            charset: None,
            collation: None,
            size_bytes: None,
        })
    }
}

impl Apply<Ctx> for SetMysqlQuota {
    fn apply(ctx: &mut Ctx, req: &SetMysqlQuotaRequest) -> Result<MysqlUsageResult, OpError> {
        account_info(ctx, &req.id)?;
        enforce(ctx, &req.id, Some(req.quota_mib.get()))
    }
}

impl Apply<Ctx> for ObserveMysqlUsage {
    fn apply(ctx: &mut Ctx, req: &ObserveMysqlUsageRequest) -> Result<MysqlUsageResult, OpError> {
        account_info(ctx, &req.id)?;
        enforce(ctx, &req.id, None)
    }
}

/// Measures the account, revokes or restores write privileges, and records the quota row.
fn enforce(
    ctx: &mut Ctx,
    account: &Hex32,
    new_quota: Option<u64>,
) -> Result<MysqlUsageResult, OpError> {
    let view = MysqlState::load(ctx, account)?;
    if view.databases.contains_key(account) {
        return Err(OpError::permanent(
            "id_reserved",
            "a database of this account has the account's id",
        ));
    }
    let quota_mib = new_quota.unwrap_or(view.quota_mib);
    let provider = ctx.provider.clone();
    let mut db = provider.mariadb().map_err(provider_error)?;
    let mut databases = Vec::new();
    for (id, full) in &view.databases {
        let size = db.database_size(&db_name(full)?).map_err(provider_error)?;
        databases.push(DatabaseUsage {
            database: id.to_string(),
            name: full.clone(),
            size_bytes: size,
        });
    }
    let total_bytes: u64 = databases.iter().map(|d| d.size_bytes).sum();
    let over = quota_mib > 0 && total_bytes > quota_mib.saturating_mul(MIB);
    ctx.set_row(&MysqlDatabaseRow::Quota {
        quota_mib,
        writes_revoked: over,
        total_bytes,
    });
    MysqlState::load(ctx, account)?.sync_grants(&mut db)?;
    crash::point(AFTER_QUOTA_GRANTS);
    Ok(MysqlUsageResult {
        databases,
        total_bytes,
        quota_mib,
        writes_revoked: over,
    })
}

/// Typed rows by resource id.
fn by_id<T>(rows: Result<Vec<Stored<T>>, StoreError>) -> Result<BTreeMap<Hex32, T>, OpError> {
    Ok(rows
        .map_err(store_error)?
        .into_iter()
        .map(|stored| (stored.id, stored.row))
        .collect())
}

// --- shared by the MariaDB families --------------------------------------------------------

/// The privileges that let an account's data grow: revoked while it is over its quota.
pub(crate) const WRITE_PRIVILEGES: &[Privilege] = &[
    Privilege::Insert,
    Privilege::Update,
    Privilege::Create,
    Privilege::Alter,
    Privilege::Index,
    Privilege::References,
    Privilege::CreateTemporaryTables,
    Privilege::CreateView,
    Privilege::CreateRoutine,
    Privilege::AlterRoutine,
    Privilege::Event,
    Privilege::Trigger,
];

/// The explicit privilege list of a set.
pub fn privileges_of(set: MysqlPrivilegeSet) -> BTreeSet<Privilege> {
    use Privilege::*;
    let read_only = [Select, ShowView, LockTables];
    let read_write = [Insert, Update, Delete, CreateTemporaryTables, Execute];
    let all = [
        Create,
        Drop,
        Alter,
        Index,
        References,
        CreateView,
        CreateRoutine,
        AlterRoutine,
        Event,
        Trigger,
    ];
    let mut out: BTreeSet<Privilege> = read_only.into_iter().collect();
    if matches!(set, MysqlPrivilegeSet::ReadWrite | MysqlPrivilegeSet::All) {
        out.extend(read_write);
    }
    if set == MysqlPrivilegeSet::All {
        out.extend(all);
    }
    out
}

/// The privileges a grant has in MariaDB, given the account's quota state.
pub fn effective(set: MysqlPrivilegeSet, writes_revoked: bool) -> BTreeSet<Privilege> {
    let mut privs = privileges_of(set);
    if writes_revoked {
        for p in WRITE_PRIVILEGES {
            privs.remove(p);
        }
    }
    privs
}

pub(crate) fn provider_collation(c: MysqlCollation) -> Collation {
    match c {
        MysqlCollation::Utf8mb4UnicodeCi => Collation::Utf8mb4UnicodeCi,
        MysqlCollation::Utf8mb4GeneralCi => Collation::Utf8mb4GeneralCi,
        MysqlCollation::Utf8mb4Bin => Collation::Utf8mb4Bin,
        MysqlCollation::Utf8mb4Unicode520Ci => Collation::Utf8mb4Unicode520Ci,
        MysqlCollation::Utf8mb3UnicodeCi => Collation::Utf8mb3UnicodeCi,
        MysqlCollation::Utf8mb3GeneralCi => Collation::Utf8mb3GeneralCi,
        MysqlCollation::Latin1SwedishCi => Collation::Latin1SwedishCi,
        MysqlCollation::Latin1GeneralCi => Collation::Latin1GeneralCi,
        MysqlCollation::Latin1Bin => Collation::Latin1Bin,
        MysqlCollation::AsciiGeneralCi => Collation::AsciiGeneralCi,
        MysqlCollation::AsciiBin => Collation::AsciiBin,
    }
}

/// `<username>_<name>` for the account; refused when the user name is not a MariaDB name.
pub(crate) fn full_name(ctx: &Ctx, account: &Hex32, name: &MysqlName) -> Result<String, OpError> {
    let info = account_info(ctx, account)?;
    if !info
        .username
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return Err(OpError::permanent(
            "username_not_mysql_compatible",
            format!(
                "the account's user name {} is not [a-z0-9_]: it cannot prefix MariaDB names",
                info.username
            ),
        ));
    }
    Ok(format!("{}_{}", info.username, name))
}

pub(crate) fn db_name(full: &str) -> Result<DbName, OpError> {
    DbName::new(full).map_err(provider_error)
}

pub(crate) fn db_user(full: &str) -> Result<DbUser, OpError> {
    DbUser::new(full).map_err(provider_error)
}

impl MysqlUserRow {
    /// The MariaDB account of this user at `host`.
    pub(crate) fn account(&self, host: &MysqlHost) -> Result<DbAccount, OpError> {
        Ok(DbAccount {
            user: db_user(&self.name)?,
            host: DbHost::new(host.as_str()).map_err(provider_error)?,
        })
    }
}

/// A grant as MariaDB must show it ([`MysqlState::effective_grants`]).
pub(crate) struct EffectiveGrant<'a> {
    pub id: &'a Hex32,
    /// The database's full name.
    pub database: &'a str,
    pub user: &'a MysqlUserRow,
    pub privileges: BTreeSet<Privilege>,
}

/// Everything of one account in MariaDB as the view records it (this job's row included),
/// by resource id: the desired state that [`MysqlState::sync_grants`] makes true.
#[derive(Debug, Default)]
pub(crate) struct MysqlState {
    pub databases: BTreeMap<Hex32, String>,
    pub users: BTreeMap<Hex32, MysqlUserRow>,
    pub grants: BTreeMap<Hex32, MysqlGrantRow>,
    pub quota_mib: u64,
    pub writes_revoked: bool,
}

impl MysqlState {
    pub(crate) fn load(ctx: &Ctx, account: &Hex32) -> Result<MysqlState, OpError> {
        let view = ctx.view();
        let mut mysql = MysqlState::default();
        for stored in view
            .of_account::<MysqlDatabaseRow>(account)
            .map_err(store_error)?
        {
            match stored.row {
                MysqlDatabaseRow::Quota {
                    quota_mib,
                    writes_revoked,
                    ..
                } => {
                    mysql.quota_mib = quota_mib;
                    mysql.writes_revoked = writes_revoked;
                }
                MysqlDatabaseRow::Database { name, .. } => {
                    mysql.databases.insert(stored.id, name);
                }
            }
        }
        mysql.users = by_id(view.of_account::<MysqlUserRow>(account))?;
        mysql.grants = by_id(view.of_account::<MysqlGrantRow>(account))?;
        Ok(mysql)
    }

    /// Every recorded grant whose database and user are recorded, with the privileges it
    /// makes: its set, less the write privileges while the account is over its quota.
    pub(crate) fn effective_grants(&self) -> Vec<EffectiveGrant<'_>> {
        self.grants
            .iter()
            .filter_map(|(id, grant)| {
                Some(EffectiveGrant {
                    id,
                    database: self.databases.get(&grant.database)?,
                    user: self.users.get(&grant.user)?,
                    privileges: effective(grant.privileges, self.writes_revoked),
                })
            })
            .collect()
    }

    /// Makes every recorded grant true in MariaDB, for every host of its user, with the write
    /// privileges left out while the account is over its quota. Grants whose database or user
    /// is gone are skipped (the removal revoked them).
    pub(crate) fn sync_grants(&self, db: &mut Mariadb<'_>) -> Result<(), OpError> {
        for grant in self.effective_grants() {
            let name = db_name(grant.database)?;
            for host in &grant.user.hosts {
                db.set_grants(&grant.user.account(host)?, &name, &grant.privileges)
                    .map_err(provider_error)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn privilege_sets_are_nested_explicit_lists() {
        let ro = privileges_of(MysqlPrivilegeSet::ReadOnly);
        let rw = privileges_of(MysqlPrivilegeSet::ReadWrite);
        let all = privileges_of(MysqlPrivilegeSet::All);
        assert!(ro.is_subset(&rw) && rw.is_subset(&all));
        assert_eq!(all, Privilege::ALL.iter().copied().collect());
        assert!(!ro.contains(&Privilege::Insert) && rw.contains(&Privilege::Insert));
        assert!(!rw.contains(&Privilege::Create) && all.contains(&Privilege::Create));
    }

    #[test]
    fn over_quota_keeps_read_delete_and_drop_only() {
        let over = effective(MysqlPrivilegeSet::All, true);
        for p in WRITE_PRIVILEGES {
            assert!(!over.contains(p), "{p:?} kept over quota");
        }
        for p in [
            Privilege::Select,
            Privilege::Delete,
            Privilege::Drop,
            Privilege::ShowView,
        ] {
            assert!(over.contains(&p), "{p:?} revoked over quota");
        }
        assert_eq!(
            effective(MysqlPrivilegeSet::All, false),
            privileges_of(MysqlPrivilegeSet::All)
        );
    }
}
