//! The queries that turn state.db rows into what a control plane reads. Shared by root's
//! `state::StateDb` and the API's [`crate::StateReader`], so both see jobs the same way.

use registry::{
    AuditEntry, DiskCondition, Drift, Event, EventKind, EventPage, JobState, JobView, OpError,
    Timings,
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

/// The events after `after`, at most `limit`, and no more result and error bytes than
/// [`registry::EVENTS_PAGE_RESULT_BYTES`] (at least one event whatever its size). A
/// `succeeded` job event carries the job's stored result and a `failed` one its error, read
/// in the same statement: a job's row is final once it reached either state.
pub fn events(conn: &Connection, after: i64, limit: u32) -> rusqlite::Result<EventPage> {
    let mut stmt = conn.prepare_cached(EVENTS_PAGE)?;
    let mut rows = stmt.query(params![after, limit])?;
    let mut events = Vec::new();
    let mut bytes = 0;
    let mut truncated = false;
    while let Some(r) = rows.next()? {
        let result: Option<String> = r.get(7)?;
        let error: Option<String> = r.get(8)?;
        let size = result.as_ref().map_or(0, String::len) + error.as_ref().map_or(0, String::len);
        if !events.is_empty() && bytes + size > registry::EVENTS_PAGE_RESULT_BYTES {
            truncated = true;
            break;
        }
        bytes += size;
        events.push(event(r, result, error)?);
    }
    let next = events.last().map_or(after, |e| e.cursor);
    Ok(EventPage {
        events,
        next,
        truncated,
    })
}

/// The oldest cursor the feed still holds, when the events just after `after` were trimmed
/// away; `page` is the page read from `after` (in the same read, so the two agree).
///
/// Cursors are handed out one after another from 1 (the events table's `INTEGER PRIMARY KEY`
/// takes the largest plus one), and the only rows ever deleted are the oldest, by the trim
/// (`state::StateDb::trim_events`), which always keeps the newest. So the feed holds every
/// cursor from its oldest to its newest, a feed never trimmed starts at 1, and a page from
/// `after` that starts past `after + 1` starts at the oldest event kept: the ones between were
/// trimmed. `after` 0 on a feed never trimmed, `after` one below the oldest kept and any
/// `after` at or past the newest lose nothing.
pub fn trimmed_after(after: i64, page: &EventPage) -> Option<i64> {
    let first = page.events.first()?.cursor;
    (first > after.saturating_add(1)).then_some(first)
}

/// The events feed from a cursor, each final job event beside its job's result or error.
pub const EVENTS_PAGE: &str =
    "SELECT e.cursor, e.request_id, e.operation, e.state, e.at, e.kind, e.detail,
            CASE e.state WHEN 'succeeded' THEN j.result END,
            CASE e.state WHEN 'failed' THEN j.error END
     FROM events e
     LEFT JOIN jobs j
       ON e.kind = 'job' AND e.state IN ('succeeded', 'failed') AND j.request_id = e.request_id
     WHERE e.cursor > ?1 ORDER BY e.cursor LIMIT ?2";

fn event(
    r: &rusqlite::Row<'_>,
    result: Option<String>,
    error: Option<String>,
) -> rusqlite::Result<Event> {
    let kind: String = r.get(5)?;
    let kind = EventKind::parse(&kind).ok_or_else(|| corrupt("event kind"))?;
    if kind == EventKind::Job {
        let state: String = r.get(3)?;
        Ok(Event {
            cursor: r.get(0)?,
            kind,
            request_id: Some(r.get(1)?),
            operation: Some(r.get(2)?),
            state: Some(JobState::parse(&state).ok_or_else(|| corrupt("event state"))?),
            result: result
                .map(|s| serde_json::from_str(&s))
                .transpose()
                .map_err(|_| corrupt("event result"))?,
            error: error
                .map(|s| serde_json::from_str::<OpError>(&s))
                .transpose()
                .map_err(|_| corrupt("event error"))?,
            drift: None,
            disk: None,
            at_ms: r.get(4)?,
        })
    } else {
        let detail: String = r.get(6)?;
        let (drift, disk) = match kind {
            EventKind::DiskFull | EventKind::DiskOk => (
                None,
                Some(
                    serde_json::from_str::<DiskCondition>(&detail)
                        .map_err(|_| corrupt("disk detail"))?,
                ),
            ),
            _ => (
                Some(serde_json::from_str::<Drift>(&detail).map_err(|_| corrupt("drift detail"))?),
                None,
            ),
        };
        Ok(Event {
            cursor: r.get(0)?,
            kind,
            request_id: None,
            operation: None,
            state: None,
            result: None,
            error: None,
            drift,
            disk,
            at_ms: r.get(4)?,
        })
    }
}

/// The file systems the runner recorded full (`disk_full`), by name.
pub fn full_filesystems(conn: &Connection) -> rusqlite::Result<Vec<crate::FullFileSystem>> {
    let mut stmt = conn.prepare_cached(
        "SELECT filesystem, since, available_bytes FROM disk_full ORDER BY filesystem",
    )?;
    let rows = stmt.query_map([], |r| {
        let name: String = r.get(0)?;
        Ok(crate::FullFileSystem {
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

/// Root's ingest watermark and how many jobs each owner has pending (queued or running), in
/// one statement and so one snapshot: a row the inbox holds beyond that watermark is not
/// among these jobs, and one at or below it is. Reads the pending jobs through the
/// `jobs_owner` partial index, never the whole table.
pub fn backlog(conn: &Connection) -> rusqlite::Result<crate::Backlog> {
    let mut backlog = crate::Backlog::default();
    let mut stmt = conn.prepare_cached(BACKLOG)?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        match row.get::<_, Option<String>>(0)? {
            None => backlog.watermark = row.get(1)?,
            Some(owner) => {
                backlog
                    .pending
                    .insert(owner, row.get::<_, i64>(1)?.max(0) as u64);
            }
        }
    }
    Ok(backlog)
}

/// [`backlog`]'s statement: the watermark's row first (no owner), then one row per owner.
pub const BACKLOG: &str = "SELECT NULL, value FROM meta WHERE key = 'ingest_watermark'
     UNION ALL
     SELECT owner, count(*) FROM jobs WHERE state IN ('queued', 'running') GROUP BY owner";

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
    let rows = stmt.query_map(params![family], crate::rows::read_resource)?;
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
