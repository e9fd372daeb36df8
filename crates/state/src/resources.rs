//! The resource rows: what each job left behind, tracked with its owner so a purge knows
//! what exists, read back as [`ResourceRow`]s (handlers read them typed, through
//! [`crate::View`]).

use registry::{Hex32, Owner};
use rusqlite::{OptionalExtension, params};

use crate::StateDb;
use store::rows::read_resource;
use store::{ResourceRow, StoreError};

impl StateDb {
    pub fn resource(&self, family: &str, id: &Hex32) -> Result<Option<ResourceRow>, StoreError> {
        self.conn
            .prepare_cached("SELECT family, resource_id, owner, generation, data FROM resources WHERE family = ?1 AND resource_id = ?2")
            .and_then(|mut s| s.query_row(params![family, id.as_str()], read_resource).optional())
            .map_err(StoreError::sqlite("read a resource"))?
            .transpose()
    }

    /// Every resource of one family that `owner` has, in a stable order.
    pub fn resources_of(
        &self,
        owner: &Owner,
        family: &str,
    ) -> Result<Vec<ResourceRow>, StoreError> {
        self.list_resources(RESOURCES_OF, params![owner.as_str(), family])
    }

    /// The succeeded jobs of one resource key, oldest first: `(seq, operation, canonical
    /// envelope)`. `rebuild_account` replays the last of them to re-derive what drifted.
    pub fn succeeded_requests(
        &self,
        family: &str,
        id: &Hex32,
    ) -> Result<Vec<(i64, String, String)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(SUCCEEDED_REQUESTS)
            .map_err(StoreError::sqlite("list succeeded requests"))?;
        let rows = stmt
            .query_map(params![family, id.as_str()], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .and_then(|rows| rows.collect())
            .map_err(StoreError::sqlite("list succeeded requests"))?;
        Ok(rows)
    }

    /// Every resource of one family, whoever owns it.
    pub fn resources_of_family(&self, family: &str) -> Result<Vec<ResourceRow>, StoreError> {
        self.list_resources("WHERE family = ?1", params![family])
    }

    /// Owners (with the family) of resources whose account row is gone: what the orphan
    /// purge sweeps. One indexed query; empty on a healthy node.
    pub fn orphan_owners(&self, account_family: &str) -> Result<Vec<(String, Owner)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT DISTINCT r.family, r.owner FROM resources r
                 WHERE r.family <> ?1 AND r.owner <> 'node:'
                   AND NOT EXISTS (SELECT 1 FROM resources a WHERE a.family = ?1 AND a.resource_id = r.owner)
                 ORDER BY r.owner, r.family",
            )
            .map_err(StoreError::sqlite("find orphans"))?;
        let rows: Vec<(String, String)> = stmt
            .query_map(params![account_family], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|rows| rows.collect())
            .map_err(StoreError::sqlite("find orphans"))?;
        rows.into_iter()
            .map(|(family, owner)| {
                Owner::parse(&owner)
                    .map(|o| (family, o))
                    .ok_or_else(|| StoreError::Corrupt(format!("owner {owner:?}")))
            })
            .collect()
    }

    /// Every tracked resource, for the tests that compare the OS with state.db.
    pub fn all_resources(&self) -> Result<Vec<ResourceRow>, StoreError> {
        self.list_resources("", params![])
    }

    /// The one query behind the resource listings: `filter` is a fixed `WHERE` clause.
    fn list_resources(
        &self,
        filter: &str,
        args: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<ResourceRow>, StoreError> {
        let sql = format!(
            "SELECT family, resource_id, owner, generation, data FROM resources {filter} ORDER BY family, resource_id"
        );
        let mut stmt = self
            .conn
            .prepare_cached(&sql)
            .map_err(StoreError::sqlite("list resources"))?;
        let rows = stmt
            .query_map(args, read_resource)
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(StoreError::sqlite("list resources"))?;
        rows.into_iter().collect()
    }

    /// Forgets one family's resources of an account, after its purge hook removed them from
    /// the OS. A crash before this runs leaves the rows, so the purge runs again.
    pub fn forget_resources_of(
        &mut self,
        owner: &Hex32,
        family: &str,
    ) -> Result<usize, StoreError> {
        self.conn
            .execute(
                "DELETE FROM resources WHERE owner = ?1 AND family = ?2",
                params![owner.as_str(), family],
            )
            .map_err(StoreError::sqlite("forget resources"))
    }
}

/// The filter of [`StateDb::resources_of`]. Without statistics SQLite would walk the primary
/// key for the `ORDER BY` and read every row of the family (60,000 SSH keys to find an
/// account's six); the owner index gives the same order.
pub(super) const RESOURCES_OF: &str = "INDEXED BY resources_owner WHERE owner = ?1 AND family = ?2";

/// A resource's succeeded requests, through `jobs_history`.
pub(super) const SUCCEEDED_REQUESTS: &str = "SELECT seq, operation, body FROM jobs
     WHERE family = ?1 AND resource_id = ?2 AND state = 'succeeded' AND body IS NOT NULL
     ORDER BY seq";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::supersession::QUEUED_BODIES;

    /// The queries a working pass or a rebuild runs per job or per resource must find their
    /// rows through an index, or their cost grows with the node. Without `ANALYZE` statistics
    /// SQLite plans the same whatever the table sizes, so an empty state.db shows the plan a
    /// node with 100,000 resources gets.
    #[test]
    fn per_job_queries_search_an_index_instead_of_scanning() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDb::open(&dir.path().join("state.db")).unwrap();
        let resources_of = format!(
            "SELECT family, resource_id, owner, generation, data FROM resources {RESOURCES_OF} ORDER BY family, resource_id"
        );
        for (sql, index) in [
            (resources_of.as_str(), "resources_owner"),
            (SUCCEEDED_REQUESTS, "jobs_history"),
            // jobs_key or jobs_history: either reads one resource's rows.
            (QUEUED_BODIES, "USING INDEX jobs_"),
        ] {
            let mut stmt = state
                .conn
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .unwrap();
            let plan: Vec<String> = stmt
                .query_map(["f", "r"], |r| r.get::<_, String>(3))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert!(
                plan.iter()
                    .all(|step| !step.starts_with("SCAN") && !step.contains("TEMP B-TREE")),
                "{sql}: {plan:?}"
            );
            assert!(
                plan.iter().any(|step| step.contains(index)),
                "{sql} should use {index}: {plan:?}"
            );
        }
    }
}
