//! Generations and supersession: each admitted job takes the next generation of its
//! resource, and a newer job supersedes the queued (never the running) jobs it makes
//! redundant; a request carrying a control-plane generation older than a queued job's is
//! refused instead (`stale_generation`), so a late request never undoes a newer one.
//!
//! A queued job is redundant when running it first would leave the node as running the newer
//! job alone does (serial equivalence, DESIGN.md section 5):
//!
//! - it is the same operation on the same resource, of a kind [`Registry::supersedes`]
//!   allows, and it says the same (the same request content): applied twice, an idempotent
//!   operation leaves what it leaves once, and fails the second time only where it failed
//!   the first. A different content is not taken: the newer one may fail (a name another
//!   account holds) where the older one would have succeeded;
//! - it is among the owner's newest queued jobs, walking back from the newest while each one
//!   is redundant: a job of the owner queued after it (a `set_account_limits` after an
//!   `ensure_account`) needs what it does, so the walk stops there and it runs;
//! - no node-scope job is queued after it: those act on what every tenant's jobs may need
//!   (a PHP runtime, the database server), so the newer job could fail where it succeeded.

use registry::{Hex32, Owner, Registry, ValidatedJob};
use rusqlite::params;

/// Allocates `job`'s generation (one more than its resource's last) and supersedes the
/// queued jobs it makes redundant (see the module documentation). Returns the generation and
/// how many were superseded.
pub(super) fn supersede(
    tx: &rusqlite::Transaction<'_>,
    registry: &Registry,
    job: &ValidatedJob,
    now: i64,
) -> rusqlite::Result<(i64, usize)> {
    let generation: i64 = tx
        .prepare_cached(
            "INSERT INTO generations(family, resource_id, generation) VALUES (?1, ?2, 1)
             ON CONFLICT (family, resource_id) DO UPDATE SET generation = generation + 1
             RETURNING generation",
        )?
        .query_row(params![job.family, job.resource_id.as_str()], |r| r.get(0))?;
    let node_after: i64 = tx
        .prepare_cached(
            "SELECT coalesce(max(seq), 0) FROM jobs
             WHERE state IN ('queued', 'running') AND owner = ?1",
        )?
        .query_row(params![Owner::NODE], |r| r.get(0))?;
    let content = resource_of(&job.canonical);
    let mut redundant = Vec::new();
    {
        let mut newest_first = tx.prepare_cached(
            "SELECT seq, state, operation, family, resource_id, body FROM jobs
             WHERE state IN ('queued', 'running') AND owner = ?1
             ORDER BY seq DESC",
        )?;
        let mut rows = newest_first.query(params![job.owner.as_str()])?;
        while let Some(row) = rows.next()? {
            let seq: i64 = row.get(0)?;
            let state: String = row.get(1)?;
            let operation: String = row.get(2)?;
            let family: Option<String> = row.get(3)?;
            let resource_id: Option<String> = row.get(4)?;
            let same_resource = family.as_deref() == Some(job.family)
                && resource_id.as_deref() == Some(job.resource_id.as_str());
            let redundant_here = state == "queued"
                && same_resource
                && registry.supersedes(job.operation, &operation)
                && (job.owner == Owner::Node || seq > node_after)
                && content.is_some()
                && resource_of(&row.get::<_, String>(5)?) == content;
            if !redundant_here {
                break;
            }
            redundant.push(seq);
        }
    }
    let mut mark = tx.prepare_cached(
        "UPDATE jobs SET state = 'superseded', superseded_by = ?1, finished_at = ?2,
             state_changed_at = ?2
         WHERE seq = ?3 AND state = 'queued'",
    )?;
    for seq in &redundant {
        mark.execute(params![job.request_id.as_str(), now, seq])?;
    }
    Ok((generation, redundant.len()))
}

/// What a stored job body asks for: its `resource`, whatever its request id. A body that does
/// not parse (root's own database, so never) compares equal to nothing.
fn resource_of(body: &str) -> Option<serde_json::Value> {
    let mut body: serde_json::Value = serde_json::from_str(body).ok()?;
    Some(body.get_mut("resource")?.take())
}

/// The control-plane generation of a job queued for the same resource, when it is at least
/// `generation`: such a job must not be superseded by an older change.
pub(super) fn queued_generation_at_least(
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

/// The bodies of a resource's queued jobs. It repeats the partial index's condition so that
/// SQLite may use `jobs_key`.
pub(super) const QUEUED_BODIES: &str = "SELECT body FROM jobs
     WHERE state IN ('queued', 'running') AND family = ?1 AND resource_id = ?2 AND state = 'queued'";
