//! Generations and supersession: each admitted job takes the next generation of its
//! resource, and a newer job supersedes the queued (never the running) jobs it makes
//! redundant; a request carrying a control-plane generation older than a queued job's is
//! refused instead (`stale_generation`), so a late request never undoes a newer one.
//!
//! The main lane runs the node's jobs one at a time in admission order, whatever account they
//! are of. A queued job is redundant when running it just before the newer job leaves what
//! the newer job alone leaves, and nothing else runs between the two:
//!
//! - it is the same operation on the same resource, of a kind [`Registry::supersedes`]
//!   allows, and it says the same (the same `resource` in its body): applied twice in a row,
//!   an idempotent operation leaves what it leaves once, and fails the second time only where
//!   it failed the first. Another content is never taken: the newer one may fail (a name
//!   another account holds) where the older one would have succeeded;
//! - it is the newest pending job of the node, or followed only by jobs this walk takes:
//!   walking back from the newest queued job while each one is redundant, and stopping at the
//!   first that is not or at a running job. Whatever was queued between the two, of any
//!   account or of the node (another account's `ensure_account` of the same name, a PHP
//!   runtime removed), would run between them, and might make the newer one fail where the
//!   older one succeeded, or need what the older one does.

use registry::{Hex32, Registry, ValidatedJob};
use rusqlite::{OptionalExtension as _, params};

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
    // A running job after a candidate runs between it and `job`: the walk stops there.
    let running_after: i64 = tx
        .prepare_cached(
            "SELECT coalesce(max(seq), 0) FROM jobs
             WHERE state IN ('queued', 'running') AND state = 'running'",
        )?
        .query_row([], |r| r.get(0))?;
    let content = registry::stored_resource(&job.canonical);
    let mut redundant = Vec::new();
    let mut newest_before = i64::MAX;
    let mut newest_queued = tx.prepare_cached(
        "SELECT seq, operation, family, resource_id, body FROM jobs
         WHERE state IN ('queued', 'running') AND state = 'queued' AND seq < ?1
         ORDER BY seq DESC LIMIT 1",
    )?;
    loop {
        let candidate = newest_queued
            .query_row(params![newest_before], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<String>>(4)?,
                ))
            })
            .optional()?;
        let Some((seq, operation, family, resource_id, body)) = candidate else {
            break;
        };
        let is_redundant = seq > running_after
            && family.as_deref() == Some(job.family)
            && resource_id.as_deref() == Some(job.resource_id.as_str())
            && registry.supersedes(job.operation, &operation)
            && content.is_some()
            && body.as_deref().and_then(registry::stored_resource) == content;
        if !is_redundant {
            break;
        }
        redundant.push(seq);
        newest_before = seq;
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
