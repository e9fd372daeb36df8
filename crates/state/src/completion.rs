//! Completion: how a claimed job ended and what it did to its resource row, recorded in one
//! transaction (one durable commit) with the audit records of the programs it ran.

use registry::{AuditDetail, NodeRequestStage, OpError, Owner};
use rusqlite::{TransactionBehavior, params};
use serde_json::Value;

use crate::StateDb;
use crate::audit::insert_audit;
use crate::claim::ClaimedJob;
use store::StoreError;

impl StateDb {
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
        let now = self.now_ms();
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
                "UPDATE jobs SET state = ?1, result = ?2, error = ?3, finished_at = ?4,
                 state_changed_at = ?4 WHERE seq = ?5 AND state = 'running'",
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
        crash::point(crash::runner::COMPLETE_BEFORE_COMMIT);
        tx.commit()
            .map_err(StoreError::sqlite("commit completion"))?;
        crash::point(crash::runner::COMPLETE_AFTER_COMMIT);
        Ok(())
    }
}

/// What a handler's success does to the resource row that tracks it.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ResourceChange {
    #[default]
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
