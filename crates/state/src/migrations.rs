//! state.db's schema, as versioned migrations applied in order (tracked in `user_version`).
//! A migration is appended, never edited: nodes in the field have run the old ones.

use rusqlite::Connection;

const MIGRATIONS: &[&str] = &[
    // 1: jobs, generations, resources, the events feed, step failures, the ingest watermark.
    r#"
    CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value INTEGER NOT NULL
    ) WITHOUT ROWID;
    INSERT INTO meta(key, value) VALUES ('ingest_watermark', 0);

    CREATE TABLE jobs (
        seq           INTEGER PRIMARY KEY,
        request_id    TEXT NOT NULL UNIQUE,
        operation     TEXT NOT NULL,
        family        TEXT,
        resource_id   TEXT,
        owner         TEXT,
        generation    INTEGER,
        body          TEXT,
        body_sha256   TEXT,
        state         TEXT NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'superseded')),
        result        TEXT,
        error         TEXT,
        superseded_by TEXT,
        attempts      INTEGER NOT NULL DEFAULT 0,
        inbox_seq     INTEGER,
        received_at   INTEGER,
        queued_at     INTEGER NOT NULL,
        started_at    INTEGER,
        finished_at   INTEGER
    );
    CREATE INDEX jobs_pending ON jobs(state, seq) WHERE state IN ('queued', 'running');
    CREATE INDEX jobs_key ON jobs(family, resource_id) WHERE state IN ('queued', 'running');

    CREATE TABLE generations (
        family      TEXT NOT NULL,
        resource_id TEXT NOT NULL,
        generation  INTEGER NOT NULL,
        PRIMARY KEY (family, resource_id)
    ) WITHOUT ROWID;

    CREATE TABLE resources (
        family      TEXT NOT NULL,
        resource_id TEXT NOT NULL,
        owner       TEXT NOT NULL,
        generation  INTEGER NOT NULL,
        data        TEXT NOT NULL,
        updated_at  INTEGER NOT NULL,
        PRIMARY KEY (family, resource_id)
    ) WITHOUT ROWID;
    CREATE INDEX resources_owner ON resources(owner, family);

    CREATE TABLE events (
        cursor     INTEGER PRIMARY KEY,
        request_id TEXT NOT NULL,
        operation  TEXT NOT NULL,
        state      TEXT NOT NULL,
        at         INTEGER NOT NULL
    );
    -- Every job state change appends an event in the same transaction, so claiming stays one
    -- UPDATE and the feed can never miss or invent a change.
    CREATE TRIGGER jobs_event_insert AFTER INSERT ON jobs BEGIN
        INSERT INTO events(request_id, operation, state, at)
        VALUES (NEW.request_id, NEW.operation, NEW.state, CAST(unixepoch('subsec') * 1000 AS INTEGER));
    END;
    CREATE TRIGGER jobs_event_update AFTER UPDATE OF state ON jobs WHEN NEW.state <> OLD.state BEGIN
        INSERT INTO events(request_id, operation, state, at)
        VALUES (NEW.request_id, NEW.operation, NEW.state, CAST(unixepoch('subsec') * 1000 AS INTEGER));
    END;

    CREATE TABLE step_failures (
        id      INTEGER PRIMARY KEY,
        step    TEXT NOT NULL,
        at      INTEGER NOT NULL,
        message TEXT NOT NULL
    );
    "#,
    // 2: the audit trail: every program the provider ran and every node-scope request, with
    // the job it belongs to when there is one. Append-only: rows are inserted and, past the
    // retention, trimmed oldest first; never changed. AUTOINCREMENT so a sequence number is
    // never reused, even after a trim emptied the table: it is a client's cursor.
    r#"
    CREATE TABLE audit (
        seq        INTEGER PRIMARY KEY AUTOINCREMENT,
        at         INTEGER NOT NULL,
        request_id TEXT,
        kind       TEXT NOT NULL CHECK (kind IN ('invocation', 'node_request')),
        detail     TEXT NOT NULL
    );
    CREATE INDEX audit_at ON audit(at);
    CREATE INDEX audit_request ON audit(request_id) WHERE request_id IS NOT NULL;
    CREATE TRIGGER audit_append_only BEFORE UPDATE ON audit BEGIN
        SELECT RAISE(ABORT, 'the audit trail is append-only');
    END;
    "#,
    // 3: drift on the events feed. The drift check records what it finds in `drift` (one row
    // per resource and aspect, kept while the drift lasts); the triggers append one `drift`
    // event when a row appears and one `drift_resolved` when it goes, so a drift is reported
    // once, not on every check. Job events keep their columns; drift events leave
    // request_id and operation empty and carry their detail as JSON.
    r#"
    ALTER TABLE events ADD COLUMN kind TEXT NOT NULL DEFAULT 'job'
        CHECK (kind IN ('job', 'drift', 'drift_resolved'));
    ALTER TABLE events ADD COLUMN detail TEXT;

    CREATE TABLE drift (
        family      TEXT NOT NULL,
        resource_id TEXT NOT NULL,
        aspect      TEXT NOT NULL,
        owner       TEXT NOT NULL,
        message     TEXT NOT NULL,
        first_seen  INTEGER NOT NULL,
        PRIMARY KEY (family, resource_id, aspect)
    ) WITHOUT ROWID;
    CREATE TRIGGER drift_found AFTER INSERT ON drift BEGIN
        INSERT INTO events(request_id, operation, state, at, kind, detail)
        VALUES ('', '', '', NEW.first_seen, 'drift',
                json_object('family', NEW.family, 'resource_id', NEW.resource_id,
                            'owner', NEW.owner, 'aspect', NEW.aspect, 'message', NEW.message));
    END;
    CREATE TRIGGER drift_gone AFTER DELETE ON drift BEGIN
        INSERT INTO events(request_id, operation, state, at, kind, detail)
        VALUES ('', '', '', CAST(unixepoch('subsec') * 1000 AS INTEGER), 'drift_resolved',
                json_object('family', OLD.family, 'resource_id', OLD.resource_id,
                            'owner', OLD.owner, 'aspect', OLD.aspect, 'message', OLD.message));
    END;
    "#,
    // 4: a resource's job history by key, for `rebuild_account`'s replay: without it every
    // replay scanned the whole jobs table, so a rebuild cost grew with the node.
    r#"
    CREATE INDEX jobs_history ON jobs(family, resource_id, seq);
    "#,
    // 5: the system identities the node handed out, and the ones it must never hand out
    // (ARCHITECTURE.md invariant 15). An account's row (its user name, its uid, and the gid of the
    // group the node created for it) is committed before groupadd and useradd run, so a retry
    // after a crash adopts only what the node itself created, never a group or user that
    // merely has the name; after the account's purge the row stays, marked removed, so its
    // ids are not the first handed out again. An administrator's row (a name and uid once on
    // the sudo allowlist) is never removed: no tenant ever gets that name or that uid.
    r#"
    CREATE TABLE identities (
        seq         INTEGER PRIMARY KEY,
        kind        TEXT NOT NULL CHECK (kind IN ('account', 'administrator')),
        owner       TEXT NOT NULL,
        name        TEXT NOT NULL,
        uid         INTEGER NOT NULL CHECK (uid BETWEEN 1 AND 4294967294),
        gid         INTEGER CHECK (gid BETWEEN 1 AND 4294967294),
        recorded_at INTEGER NOT NULL,
        removed_at  INTEGER
    );
    CREATE UNIQUE INDEX identities_live_account ON identities(owner)
        WHERE kind = 'account' AND removed_at IS NULL;
    CREATE UNIQUE INDEX identities_administrator ON identities(name, uid)
        WHERE kind = 'administrator';
    "#,
    // 6: event times from root's clock, not SQLite's. Each statement that changes a job's
    // state sets `state_changed_at` to the store's clock (`clock::Clock`; the system clock in
    // production, a simulation's own under test), a resolved drift gets `resolved_at` before
    // its row goes, and the triggers copy that time onto the event, so a simulation that owns
    // time replays the feed exactly. A writer that sets neither (a hand edit) gets SQLite's
    // time, as before, or the time of the job's previous change.
    r#"
    ALTER TABLE jobs ADD COLUMN state_changed_at INTEGER;
    ALTER TABLE drift ADD COLUMN resolved_at INTEGER;
    DROP TRIGGER jobs_event_insert;
    DROP TRIGGER jobs_event_update;
    DROP TRIGGER drift_gone;
    CREATE TRIGGER jobs_event_insert AFTER INSERT ON jobs BEGIN
        INSERT INTO events(request_id, operation, state, at)
        VALUES (NEW.request_id, NEW.operation, NEW.state,
                COALESCE(NEW.state_changed_at, CAST(unixepoch('subsec') * 1000 AS INTEGER)));
    END;
    CREATE TRIGGER jobs_event_update AFTER UPDATE OF state ON jobs WHEN NEW.state <> OLD.state BEGIN
        INSERT INTO events(request_id, operation, state, at)
        VALUES (NEW.request_id, NEW.operation, NEW.state,
                COALESCE(NEW.state_changed_at, CAST(unixepoch('subsec') * 1000 AS INTEGER)));
    END;
    CREATE TRIGGER drift_gone AFTER DELETE ON drift BEGIN
        INSERT INTO events(request_id, operation, state, at, kind, detail)
        VALUES ('', '', '', COALESCE(OLD.resolved_at, CAST(unixepoch('subsec') * 1000 AS INTEGER)),
                'drift_resolved',
                json_object('family', OLD.family, 'resource_id', OLD.resource_id,
                            'owner', OLD.owner, 'aspect', OLD.aspect, 'message', OLD.message));
    END;
    "#,
    // 7: where each request came in (`registry::Origin`), on its job and on every audit
    // record of it; and a `request` record for every tenant-scope admission and rejection.
    // SQLite cannot change a CHECK in place, so the audit table is rebuilt with its rows, its
    // sequence (a trimmed trail never hands out a cursor twice), its indexes and its trigger.
    r#"
    ALTER TABLE jobs ADD COLUMN origin TEXT;
    CREATE TABLE audit_next (
        seq        INTEGER PRIMARY KEY AUTOINCREMENT,
        at         INTEGER NOT NULL,
        request_id TEXT,
        kind       TEXT NOT NULL CHECK (kind IN ('invocation', 'node_request', 'request')),
        detail     TEXT NOT NULL,
        origin     TEXT
    );
    INSERT INTO audit_next(seq, at, request_id, kind, detail)
        SELECT seq, at, request_id, kind, detail FROM audit ORDER BY seq;
    DELETE FROM sqlite_sequence WHERE name = 'audit_next';
    INSERT INTO sqlite_sequence(name, seq) SELECT 'audit_next', seq FROM sqlite_sequence WHERE name = 'audit';
    DROP TABLE audit;
    ALTER TABLE audit_next RENAME TO audit;
    CREATE INDEX audit_at ON audit(at);
    CREATE INDEX audit_request ON audit(request_id) WHERE request_id IS NOT NULL;
    CREATE TRIGGER audit_append_only BEFORE UPDATE ON audit BEGIN
        SELECT RAISE(ABORT, 'the audit trail is append-only');
    END;
    "#,
    // 8: a full file system on the events feed. The runner records each of the node's file
    // systems it finds out of space in `disk_full` (one row per file system, by its stable
    // name, kept while the condition lasts); the triggers append one `disk_full` event when a
    // row appears and one `disk_ok` when it goes, dated like drift by the runner's clock
    // (`since`, `ok_at`). The events table is rebuilt with its rows and cursors for the wider
    // CHECK, and the triggers that write it are dropped first and made again unchanged.
    r#"
    DROP TRIGGER jobs_event_insert;
    DROP TRIGGER jobs_event_update;
    DROP TRIGGER drift_found;
    DROP TRIGGER drift_gone;
    CREATE TABLE events_next (
        cursor     INTEGER PRIMARY KEY,
        request_id TEXT NOT NULL,
        operation  TEXT NOT NULL,
        state      TEXT NOT NULL,
        at         INTEGER NOT NULL,
        kind       TEXT NOT NULL DEFAULT 'job'
            CHECK (kind IN ('job', 'drift', 'drift_resolved', 'disk_full', 'disk_ok')),
        detail     TEXT
    );
    INSERT INTO events_next(cursor, request_id, operation, state, at, kind, detail)
        SELECT cursor, request_id, operation, state, at, kind, detail FROM events ORDER BY cursor;
    DROP TABLE events;
    ALTER TABLE events_next RENAME TO events;
    CREATE TRIGGER jobs_event_insert AFTER INSERT ON jobs BEGIN
        INSERT INTO events(request_id, operation, state, at)
        VALUES (NEW.request_id, NEW.operation, NEW.state,
                COALESCE(NEW.state_changed_at, CAST(unixepoch('subsec') * 1000 AS INTEGER)));
    END;
    CREATE TRIGGER jobs_event_update AFTER UPDATE OF state ON jobs WHEN NEW.state <> OLD.state BEGIN
        INSERT INTO events(request_id, operation, state, at)
        VALUES (NEW.request_id, NEW.operation, NEW.state,
                COALESCE(NEW.state_changed_at, CAST(unixepoch('subsec') * 1000 AS INTEGER)));
    END;
    CREATE TRIGGER drift_found AFTER INSERT ON drift BEGIN
        INSERT INTO events(request_id, operation, state, at, kind, detail)
        VALUES ('', '', '', NEW.first_seen, 'drift',
                json_object('family', NEW.family, 'resource_id', NEW.resource_id,
                            'owner', NEW.owner, 'aspect', NEW.aspect, 'message', NEW.message));
    END;
    CREATE TRIGGER drift_gone AFTER DELETE ON drift BEGIN
        INSERT INTO events(request_id, operation, state, at, kind, detail)
        VALUES ('', '', '', COALESCE(OLD.resolved_at, CAST(unixepoch('subsec') * 1000 AS INTEGER)),
                'drift_resolved',
                json_object('family', OLD.family, 'resource_id', OLD.resource_id,
                            'owner', OLD.owner, 'aspect', OLD.aspect, 'message', OLD.message));
    END;

    CREATE TABLE disk_full (
        filesystem         TEXT PRIMARY KEY CHECK (filesystem IN ('state', 'inbox', 'blobs')),
        since              INTEGER NOT NULL,
        available_bytes    INTEGER NOT NULL,
        ok_at              INTEGER,
        ok_available_bytes INTEGER
    ) WITHOUT ROWID;
    CREATE TRIGGER disk_full_found AFTER INSERT ON disk_full BEGIN
        INSERT INTO events(request_id, operation, state, at, kind, detail)
        VALUES ('', '', '', NEW.since, 'disk_full',
                json_object('filesystem', NEW.filesystem, 'available_bytes', NEW.available_bytes));
    END;
    CREATE TRIGGER disk_full_gone AFTER DELETE ON disk_full BEGIN
        INSERT INTO events(request_id, operation, state, at, kind, detail)
        VALUES ('', '', '', COALESCE(OLD.ok_at, CAST(unixepoch('subsec') * 1000 AS INTEGER)),
                'disk_ok',
                json_object('filesystem', OLD.filesystem,
                            'available_bytes', COALESCE(OLD.ok_available_bytes, 0)));
    END;
    "#,
    // 9: each owner's pending jobs in admission order. The main lane takes each account's
    // oldest pending job, accounts in turn (`state::claim`), and admission counts each
    // account's queue (`store::queries::backlog`): both read this index, never the jobs of
    // every other account.
    r#"
    CREATE INDEX jobs_owner ON jobs(owner, seq) WHERE state IN ('queued', 'running');
    "#,
    // 10: the jobs a dead runner left running, queued again (`StateDb::recover_running`): the
    // main lane takes them first (`state::claim`). Empty but after a crash.
    r#"
    CREATE INDEX jobs_recovered ON jobs(seq) WHERE state = 'queued' AND attempts > 0;
    "#,
];

/// The schema version a fully migrated state.db has (its `user_version`).
pub const STATE_SCHEMA_VERSION: usize = MIGRATIONS.len();

/// Applies the migrations this database has not seen, each in its own transaction.
pub fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
    let current: usize =
        conn.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0))? as usize;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current) {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_audit_rebuild_keeps_rows_trigger_and_a_trimmed_trails_cursor() {
        let mut conn = Connection::open_in_memory().unwrap();
        for (i, sql) in MIGRATIONS.iter().enumerate().take(6) {
            conn.execute_batch(sql).unwrap();
            conn.pragma_update(None, "user_version", (i + 1) as i64)
                .unwrap();
        }
        let insert =
            "INSERT INTO audit(at, request_id, kind, detail) VALUES (1, 'r', 'invocation', '{}')";
        for _ in 0..3 {
            conn.execute(insert, []).unwrap();
        }
        // Trimmed down to one row, the oldest two gone.
        conn.execute("DELETE FROM audit WHERE seq <= 2", [])
            .unwrap();

        migrate(&mut conn).unwrap();
        let kept: Vec<i64> = conn
            .prepare("SELECT seq FROM audit ORDER BY seq")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(kept, [3]);
        conn.execute("DELETE FROM audit", []).unwrap();
        conn.execute(insert, []).unwrap();
        let next: i64 = conn
            .query_row("SELECT max(seq) FROM audit", [], |r| r.get(0))
            .unwrap();
        assert_eq!(next, 4, "a cursor was handed out twice");
        assert!(
            conn.execute("UPDATE audit SET detail = 'x'", []).is_err(),
            "the rebuilt trail is not append-only"
        );
        conn.execute(
            "INSERT INTO audit(at, kind, detail, origin) VALUES (1, 'request', '{}', '{\"via\":\"api\"}')",
            [],
        )
        .unwrap();
    }
}
