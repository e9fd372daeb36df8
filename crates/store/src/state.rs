//! state.db, root's database: admission, generations and supersession in one `BEGIN
//! IMMEDIATE`; claiming as one `UPDATE … RETURNING` (one per lane of the runner: the main
//! lane's and the long lane's, which together keep every account's jobs in admission order);
//! completion as one `UPDATE` (with the resource it changed, in the same transaction);
//! resources tracked with their owner so a purge knows what exists.
//!
//! Only the runner opens it read-write. OS changes happen outside these transactions, so
//! handlers keep what they need to finish or undo a change on the OS side or here, and a job
//! found `running` at the start of a pass is simply run again (each lane's by that lane,
//! under its lock: [`StateDb::recover_running`]).

use std::path::{Path, PathBuf};

use registry::{
    AuditDetail, FieldError, Hex32, JobView, Lane, NodeRequestStage, OpError, Owner, Registry,
    Scope, ValidatedJob,
};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde_json::Value;

use crate::inbox::InboxRow;
use crate::{StoreError, crash_points, migrations, now_ms, sqlite, views};

pub struct StateDb {
    pub(crate) conn: Connection,
    path: PathBuf,
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

/// What a handler's success does to the resource row that tracks it.
#[derive(Clone, Debug, PartialEq)]
pub enum ResourceChange {
    Keep,
    Upsert(Value),
    Delete,
}

/// How a job ended.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub result: Result<Value, OpError>,
    pub resource: ResourceChange,
}

/// A tracked resource.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceRow {
    pub family: String,
    pub resource_id: Hex32,
    pub owner: Owner,
    pub generation: i64,
    pub data: Value,
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

/// What the main lane holds back ([`StateDb::main_lane_hold`]).
#[derive(Clone, Debug)]
pub struct MainLaneHold {
    long: String,
    /// `[[owner, oldest long job's seq], ...]`.
    held: String,
}

/// What one ingest did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IngestReport {
    pub admitted: usize,
    pub rejected: usize,
    pub duplicates: usize,
    pub superseded: usize,
    pub watermark: i64,
}

impl StateDb {
    /// Opens (creating if needed) and migrates state.db.
    pub fn open(path: &Path) -> Result<StateDb, StoreError> {
        let mut conn = sqlite::open_state_rw(path)
            .map_err(StoreError::sqlite(format!("open {}", path.display())))?;
        migrations::migrate(&mut conn).map_err(StoreError::sqlite("migrate state.db"))?;
        Ok(StateDb {
            conn,
            path: path.to_owned(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `PRAGMA quick_check`, run at the start of each pass. Opening the database for it also
    /// rolls back a hot journal left by a crashed commit.
    pub fn quick_check(&self) -> Result<(), StoreError> {
        let verdict: String = self
            .conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(StoreError::sqlite("quick_check"))?;
        if verdict == "ok" {
            Ok(())
        } else {
            Err(StoreError::Corrupt(verdict))
        }
    }

    /// `PRAGMA integrity_check`'s verdict, for the tests.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        self.conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(StoreError::sqlite("integrity_check"))
    }

    /// The highest inbox sequence number already admitted.
    pub fn watermark(&self) -> Result<i64, StoreError> {
        views::meta(&self.conn, "ingest_watermark")
            .map_err(StoreError::sqlite("read the watermark"))
    }

    /// Admits inbox rows. Every row is hostile input: it is validated again through the
    /// registry, and a row that fails becomes a failed job with the validation's code (and
    /// changes nothing else). Admission, generation allocation, supersession and the watermark
    /// move happen in one `BEGIN IMMEDIATE`.
    pub fn ingest(
        &mut self,
        registry: &Registry,
        node_id: &Hex32,
        rows: &[InboxRow],
    ) -> Result<IngestReport, StoreError> {
        let mut report = IngestReport {
            watermark: self.watermark()?,
            ..IngestReport::default()
        };
        if rows.is_empty() {
            return Ok(report);
        }
        let now = now_ms();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(StoreError::sqlite("begin ingest"))?;
        for row in rows {
            report.watermark = report.watermark.max(row.seq);
            match admit_row(&tx, registry, node_id, row, now)
                .map_err(StoreError::sqlite("admit an inbox row"))?
            {
                Admitted::Queued { superseded } => {
                    report.admitted += 1;
                    report.superseded += superseded;
                }
                Admitted::Rejected => report.rejected += 1,
                Admitted::Duplicate => report.duplicates += 1,
            }
        }
        tx.execute(
            "UPDATE meta SET value = ?1 WHERE key = 'ingest_watermark'",
            params![report.watermark],
        )
        .map_err(StoreError::sqlite("move the watermark"))?;
        crash_points::point("ingest.before_commit");
        tx.commit().map_err(StoreError::sqlite("commit ingest"))?;
        crash_points::point("ingest.after_commit");
        Ok(report)
    }

    /// Admits a request the node makes of itself (the runner's certificate renewals):
    /// validated through the registry and queued exactly like an inbox row, so it is a job
    /// on the events feed with the same crash safety, but with no inbox row behind it
    /// (`inbox_seq` stays empty and the watermark does not move). Returns false when the
    /// request id was already admitted (the same request made twice).
    pub fn admit_local(
        &mut self,
        registry: &Registry,
        node_id: &Hex32,
        body: &[u8],
    ) -> Result<bool, StoreError> {
        let job = registry
            .validate(body, node_id)
            .map_err(|e| StoreError::Corrupt(format!("a request of the node's own: {e}")))?;
        let now = now_ms();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(StoreError::sqlite("begin a local admission"))?;
        if views::job_body_sha(&tx, job.request_id.as_str())
            .map_err(StoreError::sqlite("look up a request id"))?
            .is_some()
        {
            return Ok(false);
        }
        let row = InboxRow {
            seq: 0,
            request_id: job.request_id.to_string(),
            operation: job.operation.to_owned(),
            body: body.to_vec(),
            body_len: body.len() as i64,
            received_at: None,
        };
        admit(&tx, &job, &row, now)
            .and_then(|_| {
                tx.execute(
                    "UPDATE jobs SET inbox_seq = NULL WHERE request_id = ?1",
                    params![job.request_id.as_str()],
                )
            })
            .map_err(StoreError::sqlite("admit a local request"))?;
        tx.commit()
            .map_err(StoreError::sqlite("commit a local admission"))?;
        Ok(true)
    }

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
                "UPDATE jobs SET state = 'queued' WHERE state IN ('queued', 'running') AND state = 'running'
                 AND operation NOT IN (SELECT value FROM json_each(?1))"
            }
            Lane::Long => {
                "UPDATE jobs SET state = 'queued' WHERE state IN ('queued', 'running') AND state = 'running'
                 AND operation IN (SELECT value FROM json_each(?1))"
            }
        };
        self.conn
            .execute(sql, params![long.json])
            .map_err(StoreError::sqlite("requeue interrupted jobs"))
    }

    /// Claims the oldest queued job, unless a job for the same resource is running (the newer
    /// one waits), whatever its lane. One `UPDATE … RETURNING`, one durable commit. The runner
    /// claims per lane ([`StateDb::claim_main`], [`StateDb::claim_long`]); this is the single
    /// lane of tools and tests that stand in for it.
    pub fn claim_next(&self) -> Result<Option<ClaimedJob>, StoreError> {
        self.claim(
            "UPDATE jobs SET state = 'running', started_at = ?1, attempts = attempts + 1
             WHERE seq = (SELECT seq FROM jobs WHERE state IN ('queued', 'running') AND state = 'queued' ORDER BY seq LIMIT 1)
               AND NOT EXISTS (SELECT 1 FROM jobs r WHERE r.state IN ('queued', 'running') AND r.state = 'running'
                               AND r.family = jobs.family AND r.resource_id = jobs.resource_id)
             RETURNING seq, request_id, operation, family, resource_id, owner, generation, body, attempts",
            params![now_ms()],
        )
    }

    /// What the main lane must hold back: every account with long work pending (queued or
    /// running), from its oldest such job on, so that an account's jobs keep their admission
    /// order across the two lanes. A read of the pending jobs, taken before each batch.
    ///
    /// A snapshot is enough: jobs are admitted only by the pass, before its main lane runs,
    /// so while the main lane claims, the set can only shrink (the long lane completing a
    /// job). A stale snapshot holds back a job that could already run, never the reverse.
    pub fn main_lane_hold(&self, long: &LongOperations) -> Result<MainLaneHold, StoreError> {
        let held: String = self
            .conn
            .prepare_cached(MAIN_LANE_HOLD)
            .and_then(|mut s| s.query_row(params![long.json], |r| r.get(0)))
            .map_err(StoreError::sqlite(
                "look for accounts with long work pending",
            ))?;
        Ok(MainLaneHold {
            long: long.json.clone(),
            held,
        })
    }

    /// Claims the next job of the main lane: the oldest queued job that is not long work and
    /// whose account has no older long work pending (`hold`), and whose resource no long job
    /// is running. `None` also when that job's account or resource has a job running (one
    /// of the batch: the batch ends, and the job is claimed after its completion). One
    /// `UPDATE … RETURNING`, one durable commit.
    pub fn claim_main(&self, hold: &MainLaneHold) -> Result<Option<ClaimedJob>, StoreError> {
        self.claim(CLAIM_MAIN, params![now_ms(), hold.long, hold.held])
    }

    /// Claims the next job of the long lane: the oldest queued long job that is the oldest
    /// pending job of its account (everything the account asked for before it is done) and
    /// whose resource has no job running. One `UPDATE … RETURNING`, one durable commit.
    pub fn claim_long(&self, long: &LongOperations) -> Result<Option<ClaimedJob>, StoreError> {
        self.claim(CLAIM_LONG, params![now_ms(), long.json])
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
        crash_points::point("claim.after_commit");
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

    /// Records how a claimed job ended, and what it did to its resource row, in one
    /// transaction: one durable commit.
    pub fn complete(&mut self, job: &ClaimedJob, outcome: &Outcome) -> Result<(), StoreError> {
        self.complete_audited(job, outcome, &[])
    }

    /// [`StateDb::complete`], with the audit records of the programs the job ran (each with
    /// the Unix time in ms it started) appended to the audit trail under the job's request id
    /// in the same transaction. A node-scope job also leaves a `node_request` record of how it
    /// ended.
    pub fn complete_audited(
        &mut self,
        job: &ClaimedJob,
        outcome: &Outcome,
        invocations: &[(i64, AuditDetail)],
    ) -> Result<(), StoreError> {
        let now = now_ms();
        let (state, result, error) = match &outcome.result {
            Ok(value) => ("succeeded", Some(value.to_string()), None),
            Err(e) => (
                "failed",
                None,
                Some(serde_json::to_string(e).expect("an OpError always serializes")),
            ),
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(StoreError::sqlite("begin completion"))?;
        let updated = tx
            .prepare_cached(
                "UPDATE jobs SET state = ?1, result = ?2, error = ?3, finished_at = ?4
                 WHERE seq = ?5 AND state = 'running'",
            )
            .and_then(|mut s| s.execute(params![state, result, error, now, job.seq]))
            .map_err(StoreError::sqlite("complete a job"))?;
        if updated == 1 && outcome.result.is_ok() {
            match &outcome.resource {
                ResourceChange::Keep => {}
                ResourceChange::Upsert(data) => {
                    tx.prepare_cached(
                        "INSERT INTO resources(family, resource_id, owner, generation, data, updated_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                         ON CONFLICT (family, resource_id) DO UPDATE
                         SET owner = excluded.owner, generation = excluded.generation,
                             data = excluded.data, updated_at = excluded.updated_at",
                    )
                    .and_then(|mut s| {
                        s.execute(params![
                            job.family,
                            job.resource_id.as_str(),
                            job.owner.as_str(),
                            job.generation,
                            data.to_string(),
                            now
                        ])
                    })
                    .map_err(StoreError::sqlite("record a resource"))?;
                }
                ResourceChange::Delete => {
                    tx.execute(
                        "DELETE FROM resources WHERE family = ?1 AND resource_id = ?2",
                        params![job.family, job.resource_id.as_str()],
                    )
                    .map_err(StoreError::sqlite("forget a resource"))?;
                }
            }
        }
        if updated == 1 {
            for (at, detail) in invocations {
                insert_audit(&tx, *at, Some(&job.request_id), detail)
                    .map_err(StoreError::sqlite("record the job's invocations"))?;
            }
            if job.owner == Owner::Node {
                let (stage, code) = match &outcome.result {
                    Ok(_) => (NodeRequestStage::Succeeded, None),
                    Err(e) => (NodeRequestStage::Failed, Some(e.code.to_string())),
                };
                let detail = AuditDetail::NodeRequest {
                    action: job.operation.clone(),
                    stage,
                    code,
                };
                insert_audit(&tx, now, Some(&job.request_id), &detail)
                    .map_err(StoreError::sqlite("record a node-scope request"))?;
            }
        }
        crash_points::point("complete.before_commit");
        tx.commit()
            .map_err(StoreError::sqlite("commit completion"))?;
        crash_points::point("complete.after_commit");
        Ok(())
    }

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

    /// Records the drift check's findings: a drift not yet recorded is inserted (its trigger
    /// appends one `drift` event), a recorded one no longer found is deleted (one
    /// `drift_resolved` event), one still there is left alone. Nothing changed writes
    /// nothing. Returns how many were new and how many resolved.
    pub fn record_drift(
        &mut self,
        found: &[registry::Drift],
    ) -> Result<(usize, usize), StoreError> {
        let key = |family: &str, id: &str, aspect: &str| format!("{family}\0{id}\0{aspect}");
        let recorded: std::collections::BTreeSet<String> = {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT family, resource_id, aspect FROM drift")
                .map_err(StoreError::sqlite("read drift"))?;
            stmt.query_map([], |r| {
                Ok(key(
                    &r.get::<_, String>(0)?,
                    &r.get::<_, String>(1)?,
                    &r.get::<_, String>(2)?,
                ))
            })
            .and_then(|rows| rows.collect())
            .map_err(StoreError::sqlite("read drift"))?
        };
        let wanted: std::collections::BTreeMap<String, &registry::Drift> = found
            .iter()
            .map(|d| (key(&d.family, &d.resource_id, d.aspect.as_str()), d))
            .collect();
        let new: Vec<&&registry::Drift> = wanted
            .iter()
            .filter(|(k, _)| !recorded.contains(*k))
            .map(|(_, d)| d)
            .collect();
        let gone: Vec<&String> = recorded
            .iter()
            .filter(|k| !wanted.contains_key(*k))
            .collect();
        if new.is_empty() && gone.is_empty() {
            return Ok((0, 0));
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(StoreError::sqlite("begin recording drift"))?;
        let now = now_ms();
        for d in &new {
            tx.prepare_cached(
                "INSERT INTO drift(family, resource_id, aspect, owner, message, first_seen)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    d.family,
                    d.resource_id,
                    d.aspect.as_str(),
                    d.owner,
                    d.message,
                    now
                ])
            })
            .map_err(StoreError::sqlite("record drift"))?;
        }
        for k in &gone {
            let mut parts = k.split('\0');
            let (family, id, aspect) = (parts.next(), parts.next(), parts.next());
            tx.prepare_cached(
                "DELETE FROM drift WHERE family = ?1 AND resource_id = ?2 AND aspect = ?3",
            )
            .and_then(|mut st| st.execute(params![family, id, aspect]))
            .map_err(StoreError::sqlite("resolve drift"))?;
        }
        tx.commit().map_err(StoreError::sqlite("commit drift"))?;
        Ok((new.len(), gone.len()))
    }

    /// Records that a runner step failed; the runner logs it too and moves on.
    pub fn record_step_failure(&self, step: &str, message: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO step_failures(step, at, message) VALUES (?1, ?2, ?3)",
                params![step, now_ms(), message],
            )
            .map_err(StoreError::sqlite("record a step failure"))?;
        // Keep the table bounded: it is a recent history, not an archive.
        self.conn
            .execute(
                "DELETE FROM step_failures WHERE id <= (SELECT max(id) FROM step_failures) - 1000",
                [],
            )
            .map_err(StoreError::sqlite("trim step failures"))?;
        Ok(())
    }

    /// Recent step failures, newest first.
    pub fn step_failures(&self, limit: u32) -> Result<Vec<(String, i64, String)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT step, at, message FROM step_failures ORDER BY id DESC LIMIT ?1")
            .map_err(StoreError::sqlite("list step failures"))?;
        let rows = stmt
            .query_map(params![limit], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .and_then(|rows| rows.collect())
            .map_err(StoreError::sqlite("list step failures"))?;
        Ok(rows)
    }

    /// Appends audit records that belong to no job (a reload at the end of a batch, a purge
    /// sweep), each with the Unix time in ms it happened, in one commit. Nothing to append
    /// costs nothing.
    pub fn append_audit(&mut self, records: &[(i64, AuditDetail)]) -> Result<(), StoreError> {
        if records.is_empty() {
            return Ok(());
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(StoreError::sqlite("begin an audit append"))?;
        for (at, detail) in records {
            insert_audit(&tx, *at, None, detail).map_err(StoreError::sqlite("append audit"))?;
        }
        tx.commit().map_err(StoreError::sqlite("commit audit"))
    }

    /// A page of the audit trail after `after`, oldest first.
    pub fn audit(&self, after: i64, limit: u32) -> Result<Vec<registry::AuditEntry>, StoreError> {
        views::audit(&self.conn, after, limit).map_err(StoreError::sqlite("read the audit trail"))
    }

    /// Drops audit records beyond the newest `keep`, and those older than `max_age_ms`.
    /// Costs one indexed read when there is nothing to drop.
    pub fn trim_audit(&self, keep: i64, max_age_ms: i64) -> Result<usize, StoreError> {
        let cutoff = now_ms() - max_age_ms;
        let (max, oldest): (Option<i64>, Option<i64>) = self
            .conn
            .query_row(
                "SELECT (SELECT max(seq) FROM audit), (SELECT min(at) FROM audit)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(StoreError::sqlite("measure the audit trail"))?;
        let (Some(max), Some(oldest)) = (max, oldest) else {
            return Ok(0);
        };
        let min: i64 = self
            .conn
            .query_row("SELECT min(seq) FROM audit", [], |r| r.get(0))
            .map_err(StoreError::sqlite("measure the audit trail"))?;
        if !beyond_slack(max - min, keep) && oldest >= cutoff {
            return Ok(0);
        }
        self.conn
            .execute(
                "DELETE FROM audit WHERE seq <= ?1 OR at < ?2",
                params![max - keep, cutoff],
            )
            .map_err(StoreError::sqlite("trim the audit trail"))
    }

    /// Drops the oldest events beyond `keep`. Costs two key lookups when there is nothing to
    /// drop: `min` and `max` in separate subqueries, because SQLite answers a lone `min()` or
    /// `max()` from the end of the index but scans the whole table for both in one SELECT.
    pub fn trim_events(&self, keep: i64) -> Result<usize, StoreError> {
        let (min, max): (Option<i64>, Option<i64>) = self
            .conn
            .query_row(EVENTS_BOUNDS, [], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(StoreError::sqlite("measure events"))?;
        match (min, max) {
            (Some(min), Some(max)) if beyond_slack(max - min, keep) => self
                .conn
                .execute("DELETE FROM events WHERE cursor <= ?1", params![max - keep])
                .map_err(StoreError::sqlite("trim events")),
            _ => Ok(0),
        }
    }

    pub fn job(&self, request_id: &str) -> Result<Option<JobView>, StoreError> {
        views::job(&self.conn, request_id).map_err(StoreError::sqlite("read a job"))
    }

    /// Counts of jobs by state, for the tests and `layerone status`.
    pub fn job_counts(&self) -> Result<Vec<(String, i64)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT state, count(*) FROM jobs GROUP BY state ORDER BY state")
            .map_err(StoreError::sqlite("count jobs"))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|rows| rows.collect())
            .map_err(StoreError::sqlite("count jobs"))?;
        Ok(rows)
    }

    pub fn events(&self, after: i64, limit: u32) -> Result<Vec<registry::Event>, StoreError> {
        views::events(&self.conn, after, limit).map_err(StoreError::sqlite("read events"))
    }
}

pub(crate) fn read_resource(
    r: &rusqlite::Row<'_>,
) -> rusqlite::Result<Result<ResourceRow, StoreError>> {
    let family: String = r.get(0)?;
    let id: String = r.get(1)?;
    let owner: String = r.get(2)?;
    let generation: i64 = r.get(3)?;
    let data: String = r.get(4)?;
    Ok((|| {
        Ok(ResourceRow {
            resource_id: id
                .parse()
                .map_err(|_| StoreError::Corrupt(format!("resource id {id:?}")))?,
            owner: Owner::parse(&owner)
                .ok_or_else(|| StoreError::Corrupt(format!("owner {owner:?}")))?,
            data: serde_json::from_str(&data)
                .map_err(|_| StoreError::Corrupt(format!("resource data of {id}")))?,
            family,
            generation,
        })
    })())
}

enum Admitted {
    Queued { superseded: usize },
    Rejected,
    Duplicate,
}

fn admit_row(
    tx: &rusqlite::Transaction<'_>,
    registry: &Registry,
    node_id: &Hex32,
    row: &InboxRow,
    now: i64,
) -> rusqlite::Result<Admitted> {
    let validated = row
        .check()
        .and_then(|()| registry.validate(&row.body, node_id))
        .and_then(|job| {
            if job.request_id.as_str() == row.request_id {
                Ok(job)
            } else {
                Err(FieldError::new(
                    "inbox_mismatch",
                    "request_id",
                    "the inbox row and its body name different request ids",
                ))
            }
        });
    let job = match validated {
        Ok(job) => job,
        Err(error) => return reject(tx, registry, row, &error, now),
    };
    if let Some(existing) = views::job_body_sha(tx, job.request_id.as_str())? {
        if existing.as_deref() != Some(job.body_sha256.as_str()) {
            // The API answers 409 for this; a row that still gets here bypassed the API.
            tracing::warn!(request_id = %job.request_id, inbox_seq = row.seq, "inbox row reuses a request id with another body; dropped");
        }
        return Ok(Admitted::Duplicate);
    }
    if let Some(generation) = job.request_generation
        && let Some(newer) = queued_generation_at_least(tx, registry, node_id, &job, generation)?
    {
        let error = FieldError::new(
            "stale_generation",
            "resource.generation",
            format!("generation {generation} is not newer than the queued generation {newer}"),
        );
        return reject(tx, registry, row, &error, now);
    }
    let admitted = admit(tx, &job, row, now)?;
    if job.scope == Scope::Node {
        let detail = AuditDetail::NodeRequest {
            action: job.operation.to_owned(),
            stage: NodeRequestStage::Admitted,
            code: None,
        };
        insert_audit(tx, now, Some(job.request_id.as_str()), &detail)?;
    }
    Ok(admitted)
}

/// The control-plane generation of a job queued for the same resource, when it is at least
/// `generation`: such a job must not be superseded by an older change.
fn queued_generation_at_least(
    tx: &rusqlite::Transaction<'_>,
    registry: &Registry,
    node_id: &Hex32,
    job: &ValidatedJob,
    generation: u64,
) -> rusqlite::Result<Option<u64>> {
    let mut stmt = tx.prepare_cached(QUEUED_BODIES)?;
    let bodies = stmt
        .query_map(params![job.family, job.resource_id.as_str()], |r| {
            r.get::<_, String>(0)
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(bodies
        .iter()
        .filter_map(|body| registry.validate(body.as_bytes(), node_id).ok())
        .filter_map(|queued| queued.request_generation)
        .filter(|&queued| queued >= generation)
        .max())
}

/// Whether a trail spanning `span` rows beyond its oldest has grown enough past `keep` to
/// trim. The 1% of slack makes a busy node trim once per thousand new rows (at 100,000 kept)
/// instead of spending a durable commit on every pass once the trail is full.
fn beyond_slack(span: i64, keep: i64) -> bool {
    span >= keep + keep / 100
}

/// The oldest and newest event cursors (see [`StateDb::trim_events`]).
/// The filter of [`StateDb::resources_of`]. Without statistics SQLite would walk the primary
/// key for the `ORDER BY` and read every row of the family (60,000 SSH keys to find an
/// account's six); the owner index gives the same order.
const RESOURCES_OF: &str = "INDEXED BY resources_owner WHERE owner = ?1 AND family = ?2";

/// A resource's succeeded requests, through `jobs_history`.
const SUCCEEDED_REQUESTS: &str = "SELECT seq, operation, body FROM jobs
     WHERE family = ?1 AND resource_id = ?2 AND state = 'succeeded' AND body IS NOT NULL
     ORDER BY seq";

/// The bodies of a resource's queued jobs. It repeats the partial index's condition so that
/// SQLite may use `jobs_key`.
const QUEUED_BODIES: &str = "SELECT body FROM jobs
     WHERE state IN ('queued', 'running') AND family = ?1 AND resource_id = ?2 AND state = 'queued'";

/// The main lane's claim ([`StateDb::claim_main`]): ?1 now, ?2 the long operations, ?3 the
/// held accounts. The candidate is found in admission order through `jobs_pending`; the job
/// is taken only if its account and its resource have no job running.
const CLAIM_MAIN: &str = "UPDATE jobs SET state = 'running', started_at = ?1, attempts = attempts + 1
     WHERE seq = (
         SELECT c.seq FROM jobs c
         WHERE c.state IN ('queued', 'running') AND c.state = 'queued'
           AND c.operation NOT IN (SELECT value FROM json_each(?2))
           AND NOT EXISTS (SELECT 1 FROM json_each(?3) h
                           WHERE h.value ->> 0 = c.owner AND h.value ->> 1 < c.seq)
           AND NOT EXISTS (SELECT 1 FROM jobs k
                           WHERE k.state IN ('queued', 'running') AND k.state = 'running'
                             AND k.family = c.family AND k.resource_id = c.resource_id
                             AND k.operation IN (SELECT value FROM json_each(?2)))
         ORDER BY c.seq LIMIT 1)
       AND state = 'queued'
       AND NOT EXISTS (SELECT 1 FROM jobs r WHERE r.state IN ('queued', 'running') AND r.state = 'running'
                       AND (r.owner = jobs.owner
                            OR (r.family = jobs.family AND r.resource_id = jobs.resource_id)))
     RETURNING seq, request_id, operation, family, resource_id, owner, generation, body, attempts";

/// The long lane's claim ([`StateDb::claim_long`]): ?1 now, ?2 the long operations.
const CLAIM_LONG: &str =
    "UPDATE jobs SET state = 'running', started_at = ?1, attempts = attempts + 1
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

/// [`StateDb::main_lane_hold`]: ?1 the long operations.
const MAIN_LANE_HOLD: &str = "SELECT json_group_array(json_array(owner, first)) FROM (
     SELECT owner, min(seq) AS first FROM jobs
     WHERE state IN ('queued', 'running')
       AND operation IN (SELECT value FROM json_each(?1))
     GROUP BY owner)";

/// [`StateDb::long_work_pending`]: ?1 the long operations.
const LONG_WORK_PENDING: &str =
    "SELECT EXISTS (SELECT 1 FROM jobs WHERE state IN ('queued', 'running')
     AND operation IN (SELECT value FROM json_each(?1)))";

const EVENTS_BOUNDS: &str =
    "SELECT (SELECT min(cursor) FROM events), (SELECT max(cursor) FROM events)";

/// Appends one record to the audit trail.
fn insert_audit(
    conn: &Connection,
    at: i64,
    request_id: Option<&str>,
    detail: &AuditDetail,
) -> rusqlite::Result<()> {
    let json = serde_json::to_string(detail).expect("an audit record always serializes");
    conn.prepare_cached("INSERT INTO audit(at, request_id, kind, detail) VALUES (?1, ?2, ?3, ?4)")?
        .execute(params![at, request_id, detail.kind(), json])?;
    Ok(())
}

/// Whether an inbox row is a node-scope request: its operation column names a node-scope
/// operation, or its body is an envelope with an `action` (the node-scope form).
fn is_node_scope(registry: &Registry, row: &InboxRow) -> bool {
    registry
        .operation(&row.operation)
        .is_some_and(|op| op.scope() == Scope::Node)
        || (row.body.len() <= registry::envelope::MAX_BODY
            && serde_json::from_slice::<Value>(&row.body).is_ok_and(|v| v.get("action").is_some()))
}

fn admit(
    tx: &rusqlite::Transaction<'_>,
    job: &ValidatedJob,
    row: &InboxRow,
    now: i64,
) -> rusqlite::Result<Admitted> {
    let generation: i64 = tx
        .prepare_cached(
            "INSERT INTO generations(family, resource_id, generation) VALUES (?1, ?2, 1)
             ON CONFLICT (family, resource_id) DO UPDATE SET generation = generation + 1
             RETURNING generation",
        )?
        .query_row(params![job.family, job.resource_id.as_str()], |r| r.get(0))?;
    let superseded = tx
        .prepare_cached(
            "UPDATE jobs SET state = 'superseded', superseded_by = ?1, finished_at = ?2
             WHERE family = ?3 AND resource_id = ?4 AND state IN ('queued', 'running') AND state = 'queued'",
        )?
        .execute(params![
            job.request_id.as_str(),
            now,
            job.family,
            job.resource_id.as_str()
        ])?;
    tx.prepare_cached(
        "INSERT INTO jobs(request_id, operation, family, resource_id, owner, generation, body, body_sha256,
                          state, inbox_seq, received_at, queued_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'queued', ?9, ?10, ?11)",
    )?
    .execute(params![
        job.request_id.as_str(),
        job.operation,
        job.family,
        job.resource_id.as_str(),
        job.owner.as_str(),
        generation,
        job.canonical,
        job.body_sha256,
        row.seq,
        row.received_at,
        now
    ])?;
    Ok(Admitted::Queued { superseded })
}

/// Records a hostile or invalid inbox row as a failed job, so the control plane sees why.
fn reject(
    tx: &rusqlite::Transaction<'_>,
    registry: &Registry,
    row: &InboxRow,
    error: &FieldError,
    now: i64,
) -> rusqlite::Result<Admitted> {
    // A usable request id keeps its own name; otherwise the job is named after its inbox row.
    let request_id = match row.request_id.parse::<Hex32>() {
        Ok(id) if views::job_body_sha(tx, id.as_str())?.is_none() => id.to_string(),
        Ok(_) => return Ok(Admitted::Duplicate),
        Err(_) => format!("inbox-{}", row.seq),
    };
    // Only a registered name is echoed back; anything else from the row stays out of state.db.
    let operation = registry
        .operation(&row.operation)
        .map(|op| op.name())
        .unwrap_or("unknown");
    let field = if error.field.is_empty() {
        "body"
    } else {
        error.field.as_str()
    };
    let error = OpError {
        code: error.code.clone(),
        message: format!("{field}: {}", error.message),
        retryable: false,
    };
    tx.prepare_cached(
        "INSERT INTO jobs(request_id, operation, state, error, inbox_seq, received_at, queued_at, finished_at)
         VALUES (?1, ?2, 'failed', ?3, ?4, ?5, ?6, ?6)
         ON CONFLICT (request_id) DO NOTHING",
    )?
    .execute(params![
        request_id,
        operation,
        serde_json::to_string(&error).expect("an OpError always serializes"),
        row.seq,
        row.received_at,
        now
    ])?;
    if is_node_scope(registry, row) {
        let detail = AuditDetail::NodeRequest {
            action: operation.to_owned(),
            stage: NodeRequestStage::Rejected,
            code: Some(error.code.to_string()),
        };
        insert_audit(tx, now, Some(&request_id), &detail)?;
    }
    Ok(Admitted::Rejected)
}

/// The runner's last finished pass, as `layerone status` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LastPass {
    pub started_ms: i64,
    pub finished_ms: i64,
    /// `(step, at_ms, message)` of the steps that failed during that pass.
    pub failed_steps: Vec<(String, i64, String)>,
}

/// Reads the last pass: its start and end from the runner's lock file (written there, not in
/// state.db, so that an idle pass commits nothing), its failed steps from state.db opened
/// read-only (never created or migrated). `None` when no pass has finished yet.
pub fn last_pass(layout: &crate::Layout) -> Result<Option<LastPass>, StoreError> {
    let text = match std::fs::read_to_string(layout.runner_lock()) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(StoreError::Io {
                path: layout.runner_lock(),
                source,
            });
        }
    };
    let mut fields = text.split_whitespace().map(str::parse::<i64>);
    let (Some(Ok(started_ms)), Some(Ok(finished_ms))) = (fields.next(), fields.next()) else {
        return Ok(None);
    };
    let conn = Connection::open_with_flags(
        layout.state_db(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(StoreError::sqlite("open state.db read-only"))?;
    let mut stmt = conn
        .prepare(
            "SELECT step, at, message FROM step_failures WHERE at >= ?1 AND at <= ?2 ORDER BY id",
        )
        .map_err(StoreError::sqlite("list the pass's step failures"))?;
    let failed_steps = stmt
        .query_map(params![started_ms, finished_ms], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .and_then(|rows| rows.collect())
        .map_err(StoreError::sqlite("list the pass's step failures"))?;
    Ok(Some(LastPass {
        started_ms,
        finished_ms,
        failed_steps,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An idle pass trims events: finding there is nothing to trim must not read the table.
    #[test]
    fn measuring_the_events_feed_reads_no_table() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDb::open(&dir.path().join("state.db")).unwrap();
        let mut stmt = state
            .conn
            .prepare(&format!("EXPLAIN QUERY PLAN {EVENTS_BOUNDS}"))
            .unwrap();
        let plan: Vec<String> = stmt
            .query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            plan.iter().all(|step| !step.starts_with("SCAN events")),
            "{plan:?}"
        );
        assert!(plan.iter().any(|step| step.starts_with("SEARCH events")));
    }

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

    /// The lanes' claims and the checks every pass makes read the pending jobs through the
    /// partial indexes, never the whole jobs table (which keeps every job ever admitted).
    #[test]
    fn lane_claims_read_only_pending_jobs_through_their_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDb::open(&dir.path().join("state.db")).unwrap();
        for (name, sql, params) in [
            ("claim_main", CLAIM_MAIN, 3),
            ("claim_long", CLAIM_LONG, 2),
            ("main_lane_hold", MAIN_LANE_HOLD, 1),
            ("long_work_pending", LONG_WORK_PENDING, 1),
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
            assert!(
                plan.iter().all(|step| !step.starts_with("SCAN jobs")
                    && !step.starts_with("SCAN c")
                    && !step.starts_with("SCAN e")
                    && !step.starts_with("SCAN r")
                    && !step.starts_with("SCAN k")),
                "{name} scans the jobs table: {plan:?}"
            );
            assert!(
                plan.iter()
                    .any(|step| step.contains("jobs_pending") || step.contains("jobs_key")),
                "{name}: {plan:?}"
            );
        }
    }

    /// A full feed is trimmed once per 1% of growth, not on every pass that adds an event:
    /// each trim is a durable commit.
    #[test]
    fn a_full_events_feed_is_trimmed_in_steps_of_its_slack() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDb::open(&dir.path().join("state.db")).unwrap();
        let add = |n: i64| {
            state
                .conn
                .execute(
                    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
                     INSERT INTO events(request_id, operation, state, at) SELECT 'r', 'o', 'queued', 0 FROM n",
                    [n],
                )
                .unwrap();
        };
        let count = || -> i64 {
            state
                .conn
                .query_row("SELECT count(*) FROM events", [], |r| r.get(0))
                .unwrap()
        };
        add(1000);
        assert_eq!(state.trim_events(1000).unwrap(), 0);
        add(10);
        assert_eq!(state.trim_events(1000).unwrap(), 0, "within the slack");
        add(1);
        assert_eq!(
            state.trim_events(1000).unwrap(),
            11,
            "past it: back to keep"
        );
        assert_eq!(count(), 1000);
    }

    fn invocation(program: &str) -> AuditDetail {
        AuditDetail::Invocation {
            program: program.into(),
            path: format!("/usr/sbin/{program}"),
            args: vec!["--password".into(), "<redacted>".into()],
            status: Some(0),
            ms: 1,
            backend: "sim".into(),
            error: None,
        }
    }

    #[test]
    fn audit_trail_is_append_only_trimmed_oldest_first_and_never_reuses_a_cursor() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = StateDb::open(&dir.path().join("state.db")).unwrap();
        let now = now_ms();
        let records: Vec<_> = (0..5)
            .map(|i| (now, invocation(&format!("p{i}"))))
            .collect();
        state.append_audit(&records).unwrap();
        let page = state.audit(0, 100).unwrap();
        assert_eq!(page.len(), 5);
        assert_eq!(page[0].detail, invocation("p0"));
        assert!(page.windows(2).all(|w| w[0].seq < w[1].seq));

        let changed = state.conn.execute("UPDATE audit SET detail = '{}'", []);
        assert!(changed.is_err(), "an audit row was changed");

        // Nothing to trim: no write.
        assert_eq!(state.trim_audit(100, 3_600_000).unwrap(), 0);
        assert_eq!(state.trim_audit(2, 3_600_000).unwrap(), 3);
        let kept = state.audit(0, 100).unwrap();
        assert_eq!(kept.iter().map(|e| e.seq).collect::<Vec<_>>(), [4, 5]);

        // Trimmed by age down to nothing, the next record still gets a newer cursor.
        state
            .append_audit(&[(now - 10_000, invocation("old"))])
            .unwrap();
        assert_eq!(state.trim_audit(100, 5_000).unwrap(), 1);
        assert_eq!(state.trim_audit(0, 0).unwrap(), 2);
        assert!(state.audit(0, 100).unwrap().is_empty());
        state.append_audit(&[(now, invocation("new"))]).unwrap();
        assert_eq!(state.audit(0, 100).unwrap()[0].seq, 7);
    }
}
