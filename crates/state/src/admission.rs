//! Admission: every inbox row is hostile input, validated again through the registry, and
//! either admitted as a queued job or recorded as a failed one with the validation's code;
//! admission, generation allocation, supersession and the watermark move happen in one
//! `BEGIN IMMEDIATE`. The node's own requests (certificate renewals) are admitted the same
//! way without an inbox row. Every admission and rejection is an audit record, with the
//! request's origin ([`Origin`]).

use registry::{
    AuditDetail, FieldError, Hex32, NodeRequestStage, OpError, Origin, Registry, RequestStage,
    Scope, ValidatedJob,
};
use rusqlite::{TransactionBehavior, params};
use serde_json::Value;

use crate::StateDb;
use crate::audit::insert_audit;
use crate::supersession::{queued_generation_at_least, supersede};
use inbox::InboxRow;
use store::{StoreError, queries};

impl StateDb {
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
        let now = self.now_ms();
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
        crash::point(crash::runner::INGEST_BEFORE_COMMIT);
        tx.commit().map_err(StoreError::sqlite("commit ingest"))?;
        crash::point(crash::runner::INGEST_AFTER_COMMIT);
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
        let now = self.now_ms();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(StoreError::sqlite("begin a local admission"))?;
        if queries::job_body_sha(&tx, job.request_id.as_str())
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
            origin: Some(Origin::Node.stored()),
        };
        admit(&tx, registry, &job, &row, Some(&Origin::Node), now)
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
        .and_then(|()| row.checked_origin())
        .and_then(|origin| Ok((origin, registry.validate(&row.body, node_id)?)))
        .and_then(|(origin, job)| {
            if job.request_id.as_str() == row.request_id {
                Ok((origin, job))
            } else {
                Err(FieldError::new(
                    "inbox_mismatch",
                    "request_id",
                    "the inbox row and its body name different request ids",
                ))
            }
        });
    let (origin, job) = match validated {
        Ok(validated) => validated,
        Err(error) => return reject(tx, registry, row, None, &error, now),
    };
    if let Some(existing) = queries::job_body_sha(tx, job.request_id.as_str())? {
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
        // A valid request refused: it keeps its body's hash, so the same request sent again
        // is this job and another body under its id a conflict, as for an admitted one.
        return reject(tx, registry, row, Some(&job.body_sha256), &error, now);
    }
    let admitted = admit(tx, registry, &job, row, origin.as_ref(), now)?;
    let detail = match job.scope {
        Scope::Node => AuditDetail::NodeRequest {
            action: job.operation.to_owned(),
            stage: NodeRequestStage::Admitted,
            code: None,
        },
        Scope::Tenant => AuditDetail::Request {
            operation: job.operation.to_owned(),
            stage: RequestStage::Admitted,
            code: None,
        },
    };
    insert_audit(tx, now, Some(job.request_id.as_str()), &detail)?;
    Ok(admitted)
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
    registry: &Registry,
    job: &ValidatedJob,
    row: &InboxRow,
    origin: Option<&Origin>,
    now: i64,
) -> rusqlite::Result<Admitted> {
    let (generation, superseded) = supersede(tx, registry, job, now)?;
    tx.prepare_cached(
        "INSERT INTO jobs(request_id, operation, family, resource_id, owner, generation, body, body_sha256,
                          state, inbox_seq, received_at, queued_at, state_changed_at, origin)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'queued', ?9, ?10, ?11, ?11, ?12)",
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
        now,
        origin.map(|o| o.stored())
    ])?;
    Ok(Admitted::Queued { superseded })
}

/// Records a hostile or invalid inbox row as a failed job, so the control plane sees why;
/// `body_sha256`: the hash of a valid request's body (none for a row that did not validate).
fn reject(
    tx: &rusqlite::Transaction<'_>,
    registry: &Registry,
    row: &InboxRow,
    body_sha256: Option<&str>,
    error: &FieldError,
    now: i64,
) -> rusqlite::Result<Admitted> {
    // A usable request id keeps its own name; otherwise the job is named after its inbox row.
    let request_id = match row.request_id.parse::<Hex32>() {
        Ok(id) if queries::job_body_sha(tx, id.as_str())?.is_none() => id.to_string(),
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
    // An origin the API never writes is not carried into state.db.
    let origin = row.checked_origin().ok().flatten();
    tx.prepare_cached(
        "INSERT INTO jobs(request_id, operation, state, error, inbox_seq, received_at, queued_at, finished_at,
                          state_changed_at, origin, body_sha256)
         VALUES (?1, ?2, 'failed', ?3, ?4, ?5, ?6, ?6, ?6, ?7, ?8)
         ON CONFLICT (request_id) DO NOTHING",
    )?
    .execute(params![
        request_id,
        operation,
        serde_json::to_string(&error).expect("an OpError always serializes"),
        row.seq,
        row.received_at,
        now,
        origin.map(|o| o.stored()),
        body_sha256
    ])?;
    let code = Some(error.code.to_string());
    let detail = if is_node_scope(registry, row) {
        AuditDetail::NodeRequest {
            action: operation.to_owned(),
            stage: NodeRequestStage::Rejected,
            code,
        }
    } else {
        AuditDetail::Request {
            operation: operation.to_owned(),
            stage: RequestStage::Rejected,
            code,
        }
    };
    insert_audit(tx, now, Some(&request_id), &detail)?;
    Ok(Admitted::Rejected)
}
