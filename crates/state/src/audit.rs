//! The append-only audit trail: the programs each job ran, committed with its completion,
//! and the records that belong to no job; trimmed oldest first, never reusing a cursor.
//!
//! The provider hands over what it ran (`Provider::take_audit_records`), committed with the
//! job's completion (`StateDb::complete_audited`) or on its own ([`StateDb::append_audit`]).
//! Admission adds a record for every request it admits or rejects (`request` for tenant
//! scope; `node_request` for node scope, which also records its completion), and each
//! record of a request carries that request's `registry::Origin`, copied from its job's row
//! (migration 7). The API serves the trail at `GET /v1/audit` and never writes it.

use registry::AuditDetail;
use rusqlite::{Connection, TransactionBehavior, params};

use crate::StateDb;
use store::{StoreError, queries};

impl StateDb {
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
        queries::audit(&self.conn, after, limit).map_err(StoreError::sqlite("read the audit trail"))
    }

    /// Drops audit records beyond the newest `keep`, and those older than `max_age_ms`.
    /// Costs one indexed read when there is nothing to drop.
    pub fn trim_audit(&self, keep: i64, max_age_ms: i64) -> Result<usize, StoreError> {
        let cutoff = self.now_ms() - max_age_ms;
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
}

/// Appends one record to the audit trail, with the origin of its job's request (read from
/// the job's row, which is written before any record of it).
pub(super) fn insert_audit(
    conn: &Connection,
    at: i64,
    request_id: Option<&str>,
    detail: &AuditDetail,
) -> rusqlite::Result<()> {
    let json = serde_json::to_string(detail).expect("an audit record always serializes");
    conn.prepare_cached(
        "INSERT INTO audit(at, request_id, kind, detail, origin)
         VALUES (?1, ?2, ?3, ?4, (SELECT origin FROM jobs WHERE request_id = ?2))",
    )?
    .execute(params![at, request_id, detail.kind(), json])?;
    Ok(())
}

/// Whether a trail spanning `span` rows beyond its oldest has grown enough past `keep` to
/// trim. The 1% of slack makes a busy node trim once per thousand new rows (at 100,000 kept)
/// instead of spending a durable commit on every pass once the trail is full.
pub(super) fn beyond_slack(span: i64, keep: i64) -> bool {
    span >= keep + keep / 100
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let now = state.now_ms();
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
