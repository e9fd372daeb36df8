//! What the node recorded about the system identities it hands out, and about the ones it
//! must never hand out (ARCHITECTURE.md invariant 15; table `identities`, migration 5).
//!
//! The node knows its accounts by what it wrote here and in the account's resource row,
//! never by a field the tenant can edit (the GECOS comment, which `chfn` changes). Each write
//! is its own committed statement, made before the OS change it describes: a handler records
//! the uid and gid it is about to give an account, then runs groupadd and useradd, so a retry
//! after a crash recognises exactly the group and user it created and nothing that merely
//! has the same name.

use registry::Hex32;
use rusqlite::{OptionalExtension, params};

use crate::StateDb;
use store::StoreError;

/// Who an identity row is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdentityKind {
    /// A tenant account: the user, and the group of the same name the node created for it.
    Account,
    /// A sudo administrator once on the node's allowlist: its name and uid are never a
    /// tenant's.
    Administrator,
}

impl IdentityKind {
    fn parse(s: &str) -> Option<IdentityKind> {
        match s {
            "account" => Some(IdentityKind::Account),
            "administrator" => Some(IdentityKind::Administrator),
            _ => None,
        }
    }
}

/// One recorded identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdentityRow {
    pub kind: IdentityKind,
    /// The account's id; `node:` for an administrator.
    pub owner: String,
    pub name: String,
    pub uid: u32,
    /// The gid of the group the node created for an account; `None` for an administrator.
    pub gid: Option<u32>,
    /// Whether the account was removed (its ids may be handed out again, last); always false
    /// for an administrator.
    pub removed: bool,
}

const COLUMNS: &str = "kind, owner, name, uid, gid, removed_at IS NOT NULL";

fn read_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Result<IdentityRow, StoreError>> {
    let kind: String = r.get(0)?;
    let uid: i64 = r.get(3)?;
    let gid: Option<i64> = r.get(4)?;
    let id = |v: i64| u32::try_from(v).ok();
    Ok((|| {
        Ok(IdentityRow {
            kind: IdentityKind::parse(&kind)
                .ok_or_else(|| StoreError::Corrupt(format!("identity kind {kind:?}")))?,
            owner: r.get(1).map_err(StoreError::sqlite("read an identity"))?,
            name: r.get(2).map_err(StoreError::sqlite("read an identity"))?,
            uid: id(uid).ok_or_else(|| StoreError::Corrupt(format!("identity uid {uid}")))?,
            gid: match gid {
                Some(g) => {
                    Some(id(g).ok_or_else(|| StoreError::Corrupt(format!("identity gid {g}")))?)
                }
                None => None,
            },
            removed: r.get(5).map_err(StoreError::sqlite("read an identity"))?,
        })
    })())
}

impl StateDb {
    /// Records that `account` is (about to be) the user `name` with `uid`, in the group
    /// `name` with `gid` that the node creates: committed before the OS change. A second call
    /// for the same live account replaces its ids (a retry that found them taken before it
    /// created anything).
    pub fn record_account_identity(
        &mut self,
        account: &Hex32,
        name: &str,
        uid: u32,
        gid: u32,
    ) -> Result<(), StoreError> {
        let context = "record an account's identity";
        let now = self.now_ms();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(StoreError::sqlite(context))?;
        let updated = tx
            .execute(
                "UPDATE identities SET name = ?2, uid = ?3, gid = ?4
                 WHERE kind = 'account' AND owner = ?1 AND removed_at IS NULL",
                params![account.as_str(), name, uid, gid],
            )
            .map_err(StoreError::sqlite(context))?;
        if updated == 0 {
            tx.execute(
                "INSERT INTO identities(kind, owner, name, uid, gid, recorded_at)
                 VALUES ('account', ?1, ?2, ?3, ?4, ?5)",
                params![account.as_str(), name, uid, gid, now],
            )
            .map_err(StoreError::sqlite(context))?;
        }
        tx.commit().map_err(StoreError::sqlite(context))
    }

    /// The live (not removed) identity recorded for `account`.
    pub fn account_identity(&self, account: &Hex32) -> Result<Option<IdentityRow>, StoreError> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM identities
                 WHERE kind = 'account' AND owner = ?1 AND removed_at IS NULL"
            ))
            .and_then(|mut s| s.query_row(params![account.as_str()], read_row).optional())
            .map_err(StoreError::sqlite("read an account's identity"))?
            .transpose()
    }

    /// Marks the live identity of `account` removed, after its purge removed the user: its
    /// ids stay recorded, and are handed out again only once no never-used id is left.
    pub fn retire_account_identity(&mut self, account: &Hex32) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE identities SET removed_at = ?2
                 WHERE kind = 'account' AND owner = ?1 AND removed_at IS NULL",
                params![account.as_str(), self.now_ms()],
            )
            .map(drop)
            .map_err(StoreError::sqlite("retire an account's identity"))
    }

    /// Records that the administrator `name` with `uid` was on the sudo allowlist; kept for
    /// good. Recording the same pair again changes nothing.
    pub fn record_administrator(&mut self, name: &str, uid: u32) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO identities(kind, owner, name, uid, gid, recorded_at)
                 VALUES ('administrator', 'node:', ?1, ?2, NULL, ?3)
                 ON CONFLICT(name, uid) WHERE kind = 'administrator' DO NOTHING",
                params![name, uid, self.now_ms()],
            )
            .map(drop)
            .map_err(StoreError::sqlite("record an administrator"))
    }

    /// The recorded identities named `name`.
    pub fn identities_named(&self, name: &str) -> Result<Vec<IdentityRow>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM identities WHERE name = ?1 ORDER BY seq"
            ))
            .map_err(StoreError::sqlite("list identities"))?;
        let rows = stmt
            .query_map(params![name], read_row)
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(StoreError::sqlite("list identities"))?;
        rows.into_iter().collect()
    }

    /// Every id recorded (an identity's uid, and its gid when it has one), each with whether
    /// it is still held: an administrator's always, an account's until it is removed. What a
    /// new account's id is chosen against, without reading whole rows.
    pub fn recorded_ids(&self) -> Result<Vec<(u32, bool)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT uid, kind = 'administrator' OR removed_at IS NULL FROM identities
                 UNION ALL
                 SELECT gid, kind = 'administrator' OR removed_at IS NULL FROM identities
                 WHERE gid IS NOT NULL",
            )
            .map_err(StoreError::sqlite("list recorded ids"))?;
        let rows: Vec<(i64, bool)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|rows| rows.collect())
            .map_err(StoreError::sqlite("list recorded ids"))?;
        rows.into_iter()
            .map(|(id, held)| {
                u32::try_from(id)
                    .map(|id| (id, held))
                    .map_err(|_| StoreError::Corrupt(format!("identity id {id}")))
            })
            .collect()
    }

    /// The ids of `family`'s resources whose data holds the string `value` at the JSON
    /// `path` (`$.username`), found by SQLite without parsing the rows here.
    pub fn resource_ids_where(
        &self,
        family: &str,
        path: &str,
        value: &str,
    ) -> Result<Vec<Hex32>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT resource_id FROM resources
                 WHERE family = ?1 AND json_extract(data, ?2) = ?3 ORDER BY resource_id",
            )
            .map_err(StoreError::sqlite("find resources"))?;
        let ids: Vec<String> = stmt
            .query_map(params![family, path, value], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(StoreError::sqlite("find resources"))?;
        ids.into_iter()
            .map(|id| {
                id.parse()
                    .map_err(|_| StoreError::Corrupt(format!("resource id {id:?}")))
            })
            .collect()
    }

    /// Every integer `family`'s resources hold at one of the JSON `paths` (`$.uid`,
    /// `$.gid`), found by SQLite without parsing the rows here.
    pub fn resource_numbers(&self, family: &str, paths: &[&str]) -> Result<Vec<i64>, StoreError> {
        let mut out = Vec::new();
        for path in paths {
            let mut stmt = self
                .conn
                .prepare_cached(
                    "SELECT json_extract(data, ?2) FROM resources
                     WHERE family = ?1 AND json_type(data, ?2) = 'integer'",
                )
                .map_err(StoreError::sqlite("read resource numbers"))?;
            let values: Vec<i64> = stmt
                .query_map(params![family, path], |r| r.get(0))
                .and_then(|rows| rows.collect())
                .map_err(StoreError::sqlite("read resource numbers"))?;
            out.extend(values);
        }
        Ok(out)
    }

    /// Every recorded identity, in the order recorded.
    pub fn identities(&self) -> Result<Vec<IdentityRow>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM identities ORDER BY seq"))
            .map_err(StoreError::sqlite("list identities"))?;
        let rows = stmt
            .query_map([], read_row)
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(StoreError::sqlite("list identities"))?;
        rows.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account(n: u8) -> Hex32 {
        format!("{n:032x}").parse().unwrap()
    }

    #[test]
    fn an_account_identity_is_replaced_while_live_and_kept_once_removed() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = StateDb::open(&dir.path().join("state.db")).unwrap();
        assert_eq!(db.account_identity(&account(1)).unwrap(), None);
        db.record_account_identity(&account(1), "shop1", 5000, 5000)
            .unwrap();
        db.record_account_identity(&account(1), "shop1", 5001, 5001)
            .unwrap();
        let live = db.account_identity(&account(1)).unwrap().unwrap();
        assert_eq!(
            (live.uid, live.gid, live.removed),
            (5001, Some(5001), false)
        );
        db.retire_account_identity(&account(1)).unwrap();
        assert_eq!(db.account_identity(&account(1)).unwrap(), None);
        // The same account created again gets a new live row; the removed one stays.
        db.record_account_identity(&account(1), "shop1", 5002, 5002)
            .unwrap();
        let all = db.identities().unwrap();
        assert_eq!(all.len(), 2);
        assert!(all[0].removed && !all[1].removed);
        assert_eq!(all[1].uid, 5002);
    }

    #[test]
    fn administrators_are_recorded_once_per_name_and_uid_and_never_removed() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = StateDb::open(&dir.path().join("state.db")).unwrap();
        db.record_administrator("alice", 1500).unwrap();
        db.record_administrator("alice", 1500).unwrap();
        db.record_administrator("alice", 1600).unwrap();
        let all = db.identities().unwrap();
        assert_eq!(all.len(), 2);
        assert!(all.iter().all(|r| r.kind == IdentityKind::Administrator
            && r.owner == "node:"
            && r.gid.is_none()
            && !r.removed));
    }

    #[test]
    fn lookups_by_name_id_and_json_field_see_what_was_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = StateDb::open(&dir.path().join("state.db")).unwrap();
        db.record_account_identity(&account(1), "shop1", 5000, 5001)
            .unwrap();
        db.record_account_identity(&account(2), "shop2", 5002, 5002)
            .unwrap();
        db.retire_account_identity(&account(2)).unwrap();
        db.record_administrator("alice", 1500).unwrap();
        assert_eq!(db.identities_named("shop1").unwrap().len(), 1);
        assert!(db.identities_named("nobody").unwrap().is_empty());
        let mut ids = db.recorded_ids().unwrap();
        ids.sort_unstable();
        assert_eq!(
            ids,
            [
                (1500, true),
                (5000, true),
                (5001, true),
                (5002, false),
                (5002, false)
            ]
        );
        db.conn
            .execute(
                "INSERT INTO resources(family, resource_id, owner, generation, data, updated_at)
                 VALUES ('account', ?1, ?1, 1, ?2, 0)",
                params![
                    account(1).as_str(),
                    r#"{"username":"shop1","uid":5000,"gid":"x"}"#
                ],
            )
            .unwrap();
        assert_eq!(
            db.resource_ids_where("account", "$.username", "shop1")
                .unwrap(),
            [account(1)]
        );
        assert!(
            db.resource_ids_where("account", "$.username", "shop2")
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            db.resource_numbers("account", &["$.uid", "$.gid"]).unwrap(),
            [5000]
        );
    }

    #[test]
    fn ids_out_of_range_are_refused_by_the_schema() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = StateDb::open(&dir.path().join("state.db")).unwrap();
        assert!(db.record_administrator("root", 0).is_err());
        assert!(db.identities().unwrap().is_empty());
    }
}
