//! How each side opens each database. The settings are the ones docs/design.md section 6 names, in
//! one place, so a reader can check them against the design at a glance.

use std::path::Path;
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags};

/// `SQLITE_READONLY_ROLLBACK`: a read-only connection found a hot journal it cannot roll back.
pub const READONLY_ROLLBACK: i32 = 776;

/// Whether an error is a transient lock or recovery condition (busy, locked, hot journal).
pub fn is_transient(err: &rusqlite::Error) -> bool {
    match err {
        rusqlite::Error::SqliteFailure(e, _) => {
            e.extended_code == READONLY_ROLLBACK
                || matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                )
        }
        _ => false,
    }
}

/// Settings for a file root does not own: no trusted schema (so a hostile `CREATE VIEW` or
/// trigger runs nothing of root's), defensive mode, cell checks, no mmap.
fn harden(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    conn.pragma_update(None, "trusted_schema", "OFF")?;
    conn.pragma_update(None, "cell_size_check", "ON")?;
    conn.pragma_update(None, "mmap_size", 0)?;
    Ok(())
}

/// Root's read-write connection to state.db: rollback journal (never WAL, never PERSIST), full
/// sync, and a bounded busy timeout so a reader holding a lock becomes a failed, retried step,
/// never a hang.
pub fn open_state_rw(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NOFOLLOW
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(Duration::from_millis(2000))?;
    conn.pragma_update(None, "journal_mode", "DELETE")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "trusted_schema", "OFF")?;
    Ok(conn)
}

/// The API's read-only connection to state.db: it can read, never write, and never reads torn
/// state (no `immutable`, no `nolock`).
pub fn open_state_ro(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NOFOLLOW
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(Duration::from_millis(250))?;
    conn.pragma_update(None, "query_only", "ON")?;
    conn.pragma_update(None, "trusted_schema", "OFF")?;
    Ok(conn)
}

/// The API's read-write connection to its own inbox: WAL, full sync.
pub fn open_inbox_rw(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NOFOLLOW
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(Duration::from_millis(5000))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    Ok(conn)
}

/// Root's view of the inbox: read-only, not following a symlink, with every setting for an
/// untrusted file. Each row it returns is re-validated before it can become a job.
pub fn open_inbox_untrusted(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NOFOLLOW
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(Duration::from_millis(1000))?;
    harden(&conn)?;
    conn.pragma_update(None, "query_only", "ON")?;
    Ok(conn)
}
