//! Claiming: each lane of the runner claims its next job with one `UPDATE … RETURNING` and
//! one durable commit, so every account's jobs run in admission order across the main lane
//! and the long lane; and the recovery of the jobs a dead runner left `running`.

use registry::{Hex32, Lane, Owner, Registry};
use rusqlite::{OptionalExtension, params};

use crate::StateDb;
use store::StoreError;

impl StateDb {
    /// Whether a job for this resource is queued or running.
    pub fn pending_job(&self, family: &str, id: &Hex32) -> Result<bool, StoreError> {
        self.conn
            .prepare_cached(
                "SELECT 1 FROM jobs WHERE family = ?1 AND resource_id = ?2
                 AND state IN ('queued', 'running') LIMIT 1",
            )
            .and_then(|mut st| {
                st.query_row(params![family, id.as_str()], |_| Ok(()))
                    .optional()
            })
            .map(|found| found.is_some())
            .map_err(StoreError::sqlite("look up pending jobs"))
    }

    /// Puts the jobs of `lane` left `running` by a runner that died back in the queue, in
    /// their original admission order. Costs one read and no commit when there are none.
    ///
    /// Each lane recovers only its own jobs, and only while it holds that lane's lock (the
    /// pass lock for the main lane, the long lane's own for the long one): a long job that a
    /// live long lane is running is never put back while it runs.
    pub fn recover_running(
        &mut self,
        lane: Lane,
        long: &LongOperations,
    ) -> Result<usize, StoreError> {
        let any: bool = self
            .conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM jobs WHERE state IN ('queued', 'running') AND state = 'running')",
                [],
                |r| r.get(0),
            )
            .map_err(StoreError::sqlite("look for interrupted jobs"))?;
        if !any {
            return Ok(0);
        }
        let sql = match lane {
            Lane::Main => {
                "UPDATE jobs SET state = 'queued', state_changed_at = ?2
                 WHERE state IN ('queued', 'running') AND state = 'running'
                 AND operation NOT IN (SELECT value FROM json_each(?1))"
            }
            Lane::Long => {
                "UPDATE jobs SET state = 'queued', state_changed_at = ?2
                 WHERE state IN ('queued', 'running') AND state = 'running'
                 AND operation IN (SELECT value FROM json_each(?1))"
            }
        };
        self.conn
            .execute(sql, params![long.json, self.now_ms()])
            .map_err(StoreError::sqlite("requeue interrupted jobs"))
    }

    /// Claims the oldest queued job, unless a job for the same resource is running (the newer
    /// one waits), whatever its lane. One `UPDATE … RETURNING`, one durable commit. The runner
    /// claims per lane ([`StateDb::claim_main`], [`StateDb::claim_long`]); this is the single
    /// lane of tools and tests that stand in for it.
    pub fn claim_next(&self) -> Result<Option<ClaimedJob>, StoreError> {
        self.claim(
            "UPDATE jobs SET state = 'running', started_at = ?1, state_changed_at = ?1,
                 attempts = attempts + 1
             WHERE seq = (SELECT seq FROM jobs WHERE state IN ('queued', 'running') AND state = 'queued' ORDER BY seq LIMIT 1)
               AND NOT EXISTS (SELECT 1 FROM jobs r WHERE r.state IN ('queued', 'running') AND r.state = 'running'
                               AND r.family = jobs.family AND r.resource_id = jobs.resource_id)
             RETURNING seq, request_id, operation, family, resource_id, owner, generation, body, attempts",
            params![self.now_ms()],
        )
    }

    /// Claims the next job of the main lane, taking accounts in turn: of the accounts not in
    /// `served` (the owners, [`Owner::as_str`], of the jobs this batch took already) whose
    /// oldest pending job is a queued main-lane job, the one whose oldest job is the oldest.
    /// An account whose oldest pending job is running or is long work waits, so its jobs run
    /// in admission order across both lanes; nothing waits behind another account's jobs.
    /// `None` when no account has such a job: the batch ends. One `UPDATE … RETURNING` (two
    /// when none of the oldest queued jobs is one: [`CLAIM_MAIN`]), one durable commit.
    pub fn claim_main(
        &self,
        long: &LongOperations,
        served: &[String],
    ) -> Result<Option<ClaimedJob>, StoreError> {
        let served = serde_json::to_string(served).expect("names always serialize");
        let now = self.now_ms();
        match self.claim(CLAIM_MAIN, params![now, long.json, served])? {
            Some(job) => Ok(Some(job)),
            None => self.claim(CLAIM_MAIN_BY_OWNER, params![now, long.json, served]),
        }
    }

    /// Claims the next job of the long lane: the oldest queued long job that is the oldest
    /// pending job of its account (everything the account asked for before it is done) and
    /// whose resource has no job running. One `UPDATE … RETURNING`, one durable commit.
    pub fn claim_long(&self, long: &LongOperations) -> Result<Option<ClaimedJob>, StoreError> {
        self.claim(CLAIM_LONG, params![self.now_ms(), long.json])
    }

    /// Whether long work is queued or running: what decides that a pass starts the long
    /// lane. One read; on an idle node it finds no pending job at all.
    pub fn long_work_pending(&self, long: &LongOperations) -> Result<bool, StoreError> {
        self.conn
            .prepare_cached(LONG_WORK_PENDING)
            .and_then(|mut s| s.query_row(params![long.json], |r| r.get(0)))
            .map_err(StoreError::sqlite("look for long work"))
    }

    /// Runs one claiming `UPDATE … RETURNING` and reads the job it returned.
    fn claim(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
    ) -> Result<Option<ClaimedJob>, StoreError> {
        let row = self
            .conn
            .prepare_cached(sql)
            .and_then(|mut stmt| {
                stmt.query_row(params, |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, String>(5)?,
                        r.get::<_, i64>(6)?,
                        r.get::<_, String>(7)?,
                        r.get::<_, i64>(8)?,
                    ))
                })
                .optional()
            })
            .map_err(StoreError::sqlite("claim a job"))?;
        let Some((
            seq,
            request_id,
            operation,
            family,
            resource_id,
            owner,
            generation,
            body,
            attempts,
        )) = row
        else {
            return Ok(None);
        };
        crash::point(crash::runner::CLAIM_AFTER_COMMIT);
        // Root wrote these columns itself from validated values; a value that does not parse
        // means state.db was changed behind its back.
        let resource_id = resource_id
            .parse()
            .map_err(|_| StoreError::Corrupt(format!("job {seq} resource_id")))?;
        let owner =
            Owner::parse(&owner).ok_or_else(|| StoreError::Corrupt(format!("job {seq} owner")))?;
        Ok(Some(ClaimedJob {
            seq,
            request_id,
            operation,
            family,
            resource_id,
            owner,
            generation,
            body,
            attempts,
        }))
    }
}

/// A job the runner claimed: everything it needs to apply it, re-read from state.db.
#[derive(Clone, Debug)]
pub struct ClaimedJob {
    pub seq: i64,
    pub request_id: String,
    pub operation: String,
    pub family: String,
    pub resource_id: Hex32,
    pub owner: Owner,
    pub generation: i64,
    /// The canonical envelope admitted; root parses it again before applying.
    pub body: String,
    pub attempts: i64,
}

/// The operations the long lane applies, derived from their declarations
/// ([`registry::Operation::LANE`]); bound into the claim queries as a JSON array of names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LongOperations {
    json: String,
}

impl LongOperations {
    /// The operations of `registry` declared [`Lane::Long`].
    pub fn of(registry: &Registry) -> LongOperations {
        let names: Vec<&str> = registry
            .operations()
            .filter(|op| op.lane() == Lane::Long)
            .map(|op| op.name())
            .collect();
        LongOperations {
            json: serde_json::to_string(&names).expect("names always serialize"),
        }
    }
}

/// The main lane's claims ([`StateDb::claim_main`]): ?1 now, ?2 the long operations, ?3 the
/// owners this batch served. Each account's candidate is its oldest pending job (`h`, one seek
/// of the `jobs_owner` index); the oldest candidate that is a queued main-lane job of an
/// account not served yet is taken; one a dead runner left running (queued again with
/// attempts made, `d`, read through the `jobs_recovered` index, empty but after a crash) first,
/// so the jobs of an interrupted batch run again in the order they first ran (within a batch,
/// the order of their `seq`) before any other account's: what they did before the crash (a
/// uid handed out) is in that order. The last guard keeps the rule whatever the candidates: no
/// job is taken while its account or its resource has one running.
///
/// [`CLAIM_MAIN`] reads the queued jobs oldest first and stops at the first candidate, looking
/// no further than the 4,096 oldest (`bound`): its cost is the number of jobs it passes over
/// (the served accounts' later ones), whatever the number of accounts waiting. When none of
/// those is a candidate, [`CLAIM_MAIN_BY_OWNER`] walks the owners with pending jobs instead
/// (two seeks of `jobs_owner` each, however many jobs an owner has queued). Both take the same
/// job when the window holds a candidate: any candidate beyond it is younger.
const CLAIM_MAIN: &str = "UPDATE jobs
     SET state = 'running', started_at = ?1, state_changed_at = ?1, attempts = attempts + 1
     WHERE seq = coalesce(
         (SELECT d.seq FROM jobs d
          WHERE d.state = 'queued' AND d.attempts > 0
            AND d.operation NOT IN (SELECT value FROM json_each(?2))
            AND d.owner NOT IN (SELECT value FROM json_each(?3))
            AND d.seq = (SELECT min(h.seq) FROM jobs h
                         WHERE h.state IN ('queued', 'running') AND h.owner = d.owner)
          ORDER BY d.seq LIMIT 1),
         (SELECT w.seq FROM jobs w
          WHERE w.state IN ('queued', 'running') AND w.state = 'queued'
            AND w.seq <= coalesce((SELECT bound.seq FROM jobs bound
                                   WHERE bound.state IN ('queued', 'running')
                                     AND bound.state = 'queued'
                                   ORDER BY bound.seq LIMIT 1 OFFSET 4095),
                                  9223372036854775807)
            AND w.operation NOT IN (SELECT value FROM json_each(?2))
            AND w.owner NOT IN (SELECT value FROM json_each(?3))
            AND w.seq = (SELECT min(h.seq) FROM jobs h
                         WHERE h.state IN ('queued', 'running') AND h.owner = w.owner)
          ORDER BY w.seq LIMIT 1))
       AND state = 'queued'
       AND NOT EXISTS (SELECT 1 FROM jobs r WHERE r.state IN ('queued', 'running') AND r.state = 'running'
                       AND (r.owner = jobs.owner
                            OR (r.family = jobs.family AND r.resource_id = jobs.resource_id)))
     RETURNING seq, request_id, operation, family, resource_id, owner, generation, body, attempts";

/// [`CLAIM_MAIN`] beyond its window: `owners` walks the owners with pending jobs. `INDEXED BY`:
/// left to itself, the planner reads each step's next owner through `jobs_pending`, every
/// pending job of every owner at each step.
const CLAIM_MAIN_BY_OWNER: &str = "UPDATE jobs
     SET state = 'running', started_at = ?1, state_changed_at = ?1, attempts = attempts + 1
     WHERE seq = (
         WITH RECURSIVE owners(owner) AS (
             SELECT (SELECT min(f.owner) FROM jobs f INDEXED BY jobs_owner
                     WHERE f.state IN ('queued', 'running'))
             UNION ALL
             SELECT (SELECT min(n.owner) FROM jobs n INDEXED BY jobs_owner
                     WHERE n.state IN ('queued', 'running') AND n.owner > owners.owner)
             FROM owners WHERE owners.owner IS NOT NULL)
         SELECT c.seq FROM owners
         JOIN jobs c ON c.seq = (SELECT min(h.seq) FROM jobs h
                                 WHERE h.state IN ('queued', 'running') AND h.owner = owners.owner)
         WHERE c.state = 'queued'
           AND c.operation NOT IN (SELECT value FROM json_each(?2))
           AND c.owner NOT IN (SELECT value FROM json_each(?3))
         ORDER BY c.attempts > 0 DESC, c.seq LIMIT 1)
       AND state = 'queued'
       AND NOT EXISTS (SELECT 1 FROM jobs r WHERE r.state IN ('queued', 'running') AND r.state = 'running'
                       AND (r.owner = jobs.owner
                            OR (r.family = jobs.family AND r.resource_id = jobs.resource_id)))
     RETURNING seq, request_id, operation, family, resource_id, owner, generation, body, attempts";

/// The long lane's claim ([`StateDb::claim_long`]): ?1 now, ?2 the long operations.
const CLAIM_LONG: &str = "UPDATE jobs
     SET state = 'running', started_at = ?1, state_changed_at = ?1, attempts = attempts + 1
     WHERE seq = (
         SELECT c.seq FROM jobs c
         WHERE c.state IN ('queued', 'running') AND c.state = 'queued'
           AND c.operation IN (SELECT value FROM json_each(?2))
           AND c.seq = (SELECT min(e.seq) FROM jobs e
                        WHERE e.state IN ('queued', 'running') AND e.owner = c.owner)
           AND NOT EXISTS (SELECT 1 FROM jobs r
                           WHERE r.state IN ('queued', 'running') AND r.state = 'running'
                             AND r.family = c.family AND r.resource_id = c.resource_id)
         ORDER BY c.seq LIMIT 1)
       AND state = 'queued'
     RETURNING seq, request_id, operation, family, resource_id, owner, generation, body, attempts";

/// [`StateDb::long_work_pending`]: ?1 the long operations.
const LONG_WORK_PENDING: &str =
    "SELECT EXISTS (SELECT 1 FROM jobs WHERE state IN ('queued', 'running')
     AND operation IN (SELECT value FROM json_each(?1)))";

#[cfg(test)]
mod tests {
    use super::*;

    /// The lanes' claims and the checks every pass makes read the pending jobs through the
    /// partial indexes, never the whole jobs table (which keeps every job ever admitted).
    #[test]
    fn lane_claims_read_only_pending_jobs_through_their_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDb::open(&dir.path().join("state.db")).unwrap();
        for (name, sql, params) in [
            ("claim_main", CLAIM_MAIN, 3),
            ("claim_main_by_owner", CLAIM_MAIN_BY_OWNER, 3),
            ("claim_long", CLAIM_LONG, 2),
            ("long_work_pending", LONG_WORK_PENDING, 1),
            ("backlog", store::queries::BACKLOG, 0),
        ] {
            let mut stmt = state
                .conn
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .unwrap();
            let values = ["0", "[\"slow\"]", "[]"];
            let plan: Vec<String> = stmt
                .query_map(rusqlite::params_from_iter(&values[..params]), |r| {
                    r.get::<_, String>(3)
                })
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            // The jobs table (under any of the queries' names for it) is only ever scanned
            // through a partial index of the pending jobs.
            let scans_jobs = |step: &String| {
                ["jobs", "c", "e", "r", "k", "f", "n", "h", "w", "d", "bound"]
                    .iter()
                    .any(|name| step.split_whitespace().take(2).eq(["SCAN", name]))
            };
            let partial = |step: &String| {
                ["jobs_pending", "jobs_key", "jobs_owner", "jobs_recovered"]
                    .iter()
                    .any(|index| step.contains(&format!("INDEX {index}")))
            };
            assert!(
                plan.iter().all(|step| !scans_jobs(step) || partial(step)),
                "{name} scans the jobs table: {plan:?}"
            );
            assert!(
                plan.iter().any(|step| step.contains("jobs_pending")
                    || step.contains("jobs_key")
                    || step.contains("jobs_owner")),
                "{name}: {plan:?}"
            );
            // The main lane's claim stops at its first candidate: nothing sorts the window.
            assert!(
                name != "claim_main" || plan.iter().all(|step| !step.contains("TEMP B-TREE")),
                "{name} sorts what it reads: {plan:?}"
            );
        }
    }
}
