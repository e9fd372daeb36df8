//! `fleet.db`, the daemon's own durable state on the unprivileged side: the cursor of root's
//! events feed it has published through, the events it made itself (lifecycle, refusals) until
//! the broker stored them, since when it has been cut off from the broker (or refused by it),
//! and the requests of
//! its queue it could not take yet, by account (`held`, [`crate::consume`] keeps each
//! account's order with it across restarts).
//!
//! Publishing is at least once from here (a crash between the broker's ack and the cursor's
//! update publishes again), and the events stream stores it once: every event's message id is
//! derived from where it comes from (`<node>.s.<cursor>` for root's feed, `<node>.o.<seq>` for
//! this outbox, whose sequence numbers are never reused), within the stream's duplicate window.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

const SCHEMA: &str = "
    PRAGMA journal_mode = WAL;
    PRAGMA synchronous = FULL;
    CREATE TABLE IF NOT EXISTS cursor (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        state_events INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS outbox (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        body TEXT NOT NULL,
        at_ms INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS link (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        connected INTEGER NOT NULL,
        since_ms INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS refusal (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        since_ms INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS held (
        seq INTEGER PRIMARY KEY,
        account TEXT NOT NULL
    );
";

pub struct Outbox {
    conn: Connection,
}

/// An event of this outbox, not yet stored by the broker.
#[derive(Debug, Clone)]
pub struct Pending {
    pub seq: i64,
    pub body: fleet::protocol::EventBody,
    pub at_ms: i64,
}

/// Whether the daemon reaches the broker, and since when.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Link {
    pub connected: bool,
    pub since_ms: i64,
}

impl Outbox {
    pub fn open(path: &Path) -> anyhow::Result<Outbox> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch(SCHEMA)?;
        Ok(Outbox { conn })
    }

    /// The last cursor of root's events feed the broker has stored (0: none yet).
    pub fn cursor(&self) -> anyhow::Result<i64> {
        Ok(self
            .conn
            .query_row("SELECT state_events FROM cursor WHERE id = 1", [], |r| {
                r.get(0)
            })
            .optional()?
            .unwrap_or(0))
    }

    pub fn set_cursor(&self, cursor: i64) -> anyhow::Result<()> {
        self.conn.execute(
            "INSERT INTO cursor(id, state_events) VALUES (1, ?1)
             ON CONFLICT(id) DO UPDATE SET state_events = excluded.state_events",
            params![cursor],
        )?;
        Ok(())
    }

    pub fn push(&self, body: &fleet::protocol::EventBody, at_ms: i64) -> anyhow::Result<i64> {
        self.conn.execute(
            "INSERT INTO outbox(kind, body, at_ms) VALUES (?1, ?2, ?3)",
            params![body.kind(), serde_json::to_string(body)?, at_ms],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    pub fn pending(&self, limit: usize) -> anyhow::Result<Vec<Pending>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT seq, body, at_ms FROM outbox ORDER BY seq LIMIT ?1")?;
        let rows = stmt.query_map(params![limit as i64], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, body, at_ms) = row?;
            out.push(Pending {
                seq,
                body: serde_json::from_str(&body)?,
                at_ms,
            });
        }
        Ok(out)
    }

    /// Forgets the events the broker stored, through `seq`.
    pub fn remove_through(&self, seq: i64) -> anyhow::Result<()> {
        self.conn
            .execute("DELETE FROM outbox WHERE seq <= ?1", params![seq])?;
        Ok(())
    }

    pub fn count(&self) -> anyhow::Result<i64> {
        Ok(self
            .conn
            .query_row("SELECT count(*) FROM outbox", [], |r| r.get(0))?)
    }

    /// Records a change of the link, with `now_ms` as its `since`. The same state again writes
    /// nothing (the publisher says it after every round: an idle node's disk stays idle).
    /// Returns whether it was a change.
    pub fn set_link(&self, connected: bool, now_ms: i64) -> anyhow::Result<bool> {
        if self.link()?.is_some_and(|l| l.connected == connected) {
            return Ok(false);
        }
        self.conn.execute(
            "INSERT INTO link(id, connected, since_ms) VALUES (1, ?1, ?2)
             ON CONFLICT(id) DO UPDATE SET connected = excluded.connected,
                 since_ms = excluded.since_ms",
            params![connected, now_ms],
        )?;
        Ok(true)
    }

    /// Since when the broker has refused the node's key (removed from the fleet, or its name
    /// joined by another machine), if it does.
    pub fn refused_since(&self) -> anyhow::Result<Option<i64>> {
        Ok(self
            .conn
            .query_row("SELECT since_ms FROM refusal WHERE id = 1", [], |r| {
                r.get(0)
            })
            .optional()?)
    }

    /// Records that the broker refuses the node's key (`Some(now_ms)`), or that it took it
    /// (`None`). The same state again writes nothing. Returns whether it was a change.
    pub fn set_refused(&self, now_ms: Option<i64>) -> anyhow::Result<bool> {
        let was = self.refused_since()?;
        match now_ms {
            Some(_) if was.is_some() => Ok(false),
            None if was.is_none() => Ok(false),
            Some(now) => {
                self.conn.execute(
                    "INSERT INTO refusal(id, since_ms) VALUES (1, ?1)",
                    params![now],
                )?;
                Ok(true)
            }
            None => {
                self.conn.execute("DELETE FROM refusal WHERE id = 1", [])?;
                Ok(true)
            }
        }
    }

    /// Records that the request at stream sequence `seq`, of `account`, was not taken yet.
    pub fn hold(&self, account: &str, seq: u64) -> anyhow::Result<()> {
        self.conn.execute(
            "INSERT INTO held(seq, account) VALUES (?1, ?2)
             ON CONFLICT(seq) DO UPDATE SET account = excluded.account",
            params![seq as i64, account],
        )?;
        Ok(())
    }

    /// Forgets the requests at these stream sequences (taken, refused for good, or gone).
    pub fn release(&self, seqs: &[u64]) -> anyhow::Result<()> {
        let tx = self.conn.unchecked_transaction()?;
        for seq in seqs {
            tx.execute("DELETE FROM held WHERE seq = ?1", params![*seq as i64])?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Every request not taken yet: (stream sequence, account).
    pub fn held(&self) -> anyhow::Result<Vec<(u64, String)>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT seq, account FROM held ORDER BY seq")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn link(&self) -> anyhow::Result<Option<Link>> {
        Ok(self
            .conn
            .query_row(
                "SELECT connected, since_ms FROM link WHERE id = 1",
                [],
                |r| {
                    Ok(Link {
                        connected: r.get(0)?,
                        since_ms: r.get(1)?,
                    })
                },
            )
            .optional()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet::protocol::EventBody;

    #[test]
    fn the_outbox_never_reuses_a_sequence_number_and_the_link_keeps_its_since() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fleet.db");
        let outbox = Outbox::open(&path).unwrap();
        assert_eq!(outbox.cursor().unwrap(), 0);
        let a = outbox.push(&EventBody::Stopping, 1).unwrap();
        outbox.remove_through(a).unwrap();
        drop(outbox);
        let outbox = Outbox::open(&path).unwrap();
        let b = outbox.push(&EventBody::Stopping, 2).unwrap();
        assert!(b > a, "{b} after {a}");
        outbox.set_cursor(7).unwrap();
        assert_eq!(outbox.cursor().unwrap(), 7);
        assert!(outbox.set_link(false, 100).unwrap());
        // The same state again: nothing is written, not even the same row.
        let changes = outbox.conn.total_changes();
        assert!(!outbox.set_link(false, 200).unwrap());
        assert_eq!(outbox.conn.total_changes(), changes);
        assert_eq!(
            outbox.link().unwrap(),
            Some(Link {
                connected: false,
                since_ms: 100
            })
        );
        assert!(outbox.set_link(true, 300).unwrap());
        assert_eq!(outbox.link().unwrap().unwrap().since_ms, 300);
    }

    #[test]
    fn held_requests_survive_a_reopen_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fleet.db");
        let outbox = Outbox::open(&path).unwrap();
        outbox.hold("a", 7).unwrap();
        outbox.hold("a", 9).unwrap();
        outbox.hold("node:", 8).unwrap();
        outbox.hold("a", 7).unwrap();
        drop(outbox);
        let outbox = Outbox::open(&path).unwrap();
        assert_eq!(
            outbox.held().unwrap(),
            vec![(7, "a".into()), (8, "node:".into()), (9, "a".into())]
        );
        outbox.release(&[7, 8, 100]).unwrap();
        assert_eq!(outbox.held().unwrap(), vec![(9, "a".into())]);
    }
}
