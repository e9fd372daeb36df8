//! Generations and supersession: each admitted job takes the next generation of its
//! resource, and a newer job supersedes the queued (not the running) jobs of the same
//! resource; a request carrying a control-plane generation older than a queued job's is
//! refused instead (`stale_generation`), so a late request never undoes a newer one.

use registry::{Hex32, Registry, ValidatedJob};
use rusqlite::params;

/// Allocates `job`'s generation (one more than its resource's last) and supersedes the
/// queued jobs of the same resource. Returns the generation and how many were superseded.
pub(super) fn supersede(
    tx: &rusqlite::Transaction<'_>,
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
    let superseded = tx
        .prepare_cached(
            "UPDATE jobs SET state = 'superseded', superseded_by = ?1, finished_at = ?2,
                 state_changed_at = ?2
             WHERE family = ?3 AND resource_id = ?4 AND state IN ('queued', 'running') AND state = 'queued'",
        )?
        .execute(params![
            job.request_id.as_str(),
            now,
            job.family,
            job.resource_id.as_str()
        ])?;
    Ok((generation, superseded))
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
