//! The queries that turn state.db rows into what a control plane reads. Shared by root's
//! [`crate::StateDb`] and the API's [`crate::StateReader`], so both see jobs the same way.

use registry::{
    AuditEntry, DiskCondition, Drift, Event, EventKind, JobState, JobView, OpError, Timings,
};
use rusqlite::{Connection, OptionalExtension, params};

fn corrupt(what: &str) -> rusqlite::Error {
    rusqlite::Error::InvalidColumnType(0, what.to_owned(), rusqlite::types::Type::Text)
}

pub fn job(conn: &Connection, request_id: &str) -> rusqlite::Result<Option<JobView>> {
    conn.prepare_cached(
        "SELECT request_id, operation, state, resource_id, generation, result, error, superseded_by,
                attempts, received_at, queued_at, started_at, finished_at
         FROM jobs WHERE request_id = ?1",
    )?
    .query_row(params![request_id], |r| {
        let state: String = r.get(2)?;
        let result: Option<String> = r.get(5)?;
        let error: Option<String> = r.get(6)?;
        Ok(JobView {
            request_id: r.get(0)?,
            operation: r.get(1)?,
            operation_sha256: None,
            state: JobState::parse(&state).ok_or_else(|| corrupt("state"))?,
            resource_id: r.get(3)?,
            generation: r.get(4)?,
            result: result.map(|s| serde_json::from_str(&s)).transpose().map_err(|_| corrupt("result"))?,
            error: error
                .map(|s| serde_json::from_str::<OpError>(&s))
                .transpose()
                .map_err(|_| corrupt("error"))?,
            superseded_by: r.get(7)?,
            attempts: r.get(8)?,
            timings: Timings {
                received_at_ms: r.get(9)?,
                queued_at_ms: r.get(10)?,
                started_at_ms: r.get(11)?,
                finished_at_ms: r.get(12)?,
            },
        })
    })
    .optional()
}

/// The body hash of a job, to tell a repeated request from a conflicting one.
pub fn job_body_sha(
    conn: &Connection,
    request_id: &str,
) -> rusqlite::Result<Option<Option<String>>> {
    conn.prepare_cached("SELECT body_sha256 FROM jobs WHERE request_id = ?1")?
        .query_row(params![request_id], |r| r.get(0))
        .optional()
}

pub fn events(conn: &Connection, after: i64, limit: u32) -> rusqlite::Result<Vec<Event>> {
    let mut stmt = conn.prepare_cached(
        "SELECT cursor, request_id, operation, state, at, kind, detail FROM events WHERE cursor > ?1 ORDER BY cursor LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![after, limit], |r| {
        let kind: String = r.get(5)?;
        let kind = EventKind::parse(&kind).ok_or_else(|| corrupt("event kind"))?;
        let (cursor, at_ms) = (r.get(0)?, r.get(4)?);
        let event = |drift, disk| Event {
            cursor,
            kind,
            request_id: None,
            operation: None,
            state: None,
            drift,
            disk,
            at_ms,
        };
        match kind {
            EventKind::Job => {
                let state: String = r.get(3)?;
                Ok(Event {
                    request_id: Some(r.get(1)?),
                    operation: Some(r.get(2)?),
                    state: Some(JobState::parse(&state).ok_or_else(|| corrupt("event state"))?),
                    ..event(None, None)
                })
            }
            EventKind::Drift | EventKind::DriftResolved => {
                let detail: String = r.get(6)?;
                let drift =
                    serde_json::from_str::<Drift>(&detail).map_err(|_| corrupt("drift detail"))?;
                Ok(event(Some(drift), None))
            }
            EventKind::DiskFull | EventKind::DiskOk => {
                let detail: String = r.get(6)?;
                let disk = serde_json::from_str::<DiskCondition>(&detail)
                    .map_err(|_| corrupt("disk detail"))?;
                Ok(event(None, Some(disk)))
            }
        }
    })?;
    rows.collect()
}

/// The file systems the runner recorded full (`disk_full`), by name.
pub fn full_filesystems(conn: &Connection) -> rusqlite::Result<Vec<crate::state::FullFileSystem>> {
    let mut stmt = conn.prepare_cached(
        "SELECT filesystem, since, available_bytes FROM disk_full ORDER BY filesystem",
    )?;
    let rows = stmt.query_map([], |r| {
        let name: String = r.get(0)?;
        Ok(crate::state::FullFileSystem {
            filesystem: registry::FileSystem::parse(&name).ok_or_else(|| corrupt("file system"))?,
            since_ms: r.get(1)?,
            available_bytes: r.get::<_, i64>(2)?.max(0) as u64,
        })
    })?;
    rows.collect()
}

pub fn audit(conn: &Connection, after: i64, limit: u32) -> rusqlite::Result<Vec<AuditEntry>> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, at, request_id, detail, origin FROM audit WHERE seq > ?1 ORDER BY seq LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![after, limit], |r| {
        let detail: String = r.get(3)?;
        let origin: Option<String> = r.get(4)?;
        Ok(AuditEntry {
            seq: r.get(0)?,
            at_ms: r.get(1)?,
            request_id: r.get(2)?,
            origin: match origin {
                None => None,
                Some(text) => Some(
                    registry::Origin::parse_stored(&text).ok_or_else(|| corrupt("audit origin"))?,
                ),
            },
            detail: serde_json::from_str(&detail).map_err(|_| corrupt("audit detail"))?,
        })
    })?;
    rows.collect()
}

pub fn meta(conn: &Connection, key: &str) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT value FROM meta WHERE key = ?1")?
        .query_row(params![key], |r| r.get(0))
        .optional()
        .map(|v| v.unwrap_or(0))
}

/// Every resource of one family, in a stable order, for read-only listings (the CloudLinux
/// panel-integration scripts). A row root could not have written is reported as corrupt.
pub fn resources_of_family(
    conn: &Connection,
    family: &str,
) -> rusqlite::Result<Vec<crate::ResourceRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT family, resource_id, owner, generation, data FROM resources WHERE family = ?1 ORDER BY resource_id",
    )?;
    let rows = stmt.query_map(params![family], crate::state::read_resource)?;
    let mut out = Vec::new();
    for row in rows {
        out.push(row?.map_err(|e| corrupt(&e.to_string()))?);
    }
    Ok(out)
}

/// The node's assignment ([`crate::assignment`]): the `assignment` family's row of the
/// owner `node:`, or `None` when the node has none. More than one such row, or one of
/// another shape, is a row root did not write.
pub fn assignment(conn: &Connection) -> rusqlite::Result<Option<crate::AssignmentRow>> {
    let rows = resources_of_family(conn, crate::assignment::FAMILY)?;
    let mut rows = rows
        .into_iter()
        .filter(|row| row.owner == registry::Owner::Node);
    let Some(row) = rows.next() else {
        return Ok(None);
    };
    if rows.next().is_some() {
        return Err(corrupt("two assignment rows"));
    }
    serde_json::from_value(row.data)
        .map(Some)
        .map_err(|_| corrupt("assignment row"))
}
