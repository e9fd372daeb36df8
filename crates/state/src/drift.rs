//! The drift check's findings: each one recorded once (a `drift` event) and resolved once
//! (a `drift_resolved` event), by the triggers of migration 3.

use rusqlite::{TransactionBehavior, params};

use crate::StateDb;
use store::StoreError;

impl StateDb {
    /// Records the drift check's findings: a drift not yet recorded is inserted (its trigger
    /// appends one `drift` event), a recorded one no longer found is deleted (one
    /// `drift_resolved` event), one still there is left alone. The recorded drift of the
    /// `unchecked` families (the check could not look at them) is left alone too: not
    /// looking is not finding it gone. Nothing changed writes nothing. Returns how many were
    /// new and how many resolved.
    pub fn record_drift(
        &mut self,
        found: &[registry::Drift],
        unchecked: &[&str],
    ) -> Result<(usize, usize), StoreError> {
        let key = |family: &str, id: &str, aspect: &str| format!("{family}\0{id}\0{aspect}");
        let family_of = |key: &str| key.split('\0').next().unwrap_or_default().to_owned();
        let recorded: std::collections::BTreeSet<String> = {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT family, resource_id, aspect FROM drift")
                .map_err(StoreError::sqlite("read drift"))?;
            stmt.query_map([], |r| {
                Ok(key(
                    &r.get::<_, String>(0)?,
                    &r.get::<_, String>(1)?,
                    &r.get::<_, String>(2)?,
                ))
            })
            .and_then(|rows| rows.collect())
            .map_err(StoreError::sqlite("read drift"))?
        };
        let wanted: std::collections::BTreeMap<String, &registry::Drift> = found
            .iter()
            .map(|d| (key(&d.family, &d.resource_id, d.aspect.as_str()), d))
            .collect();
        let new: Vec<&&registry::Drift> = wanted
            .iter()
            .filter(|(k, _)| !recorded.contains(*k))
            .map(|(_, d)| d)
            .collect();
        let gone: Vec<&String> = recorded
            .iter()
            .filter(|k| !wanted.contains_key(*k) && !unchecked.contains(&family_of(k).as_str()))
            .collect();
        if new.is_empty() && gone.is_empty() {
            return Ok((0, 0));
        }
        let now = self.now_ms();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(StoreError::sqlite("begin recording drift"))?;
        for d in &new {
            tx.prepare_cached(
                "INSERT INTO drift(family, resource_id, aspect, owner, message, first_seen)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    d.family,
                    d.resource_id,
                    d.aspect.as_str(),
                    d.owner,
                    d.message,
                    now
                ])
            })
            .map_err(StoreError::sqlite("record drift"))?;
        }
        for k in &gone {
            let mut parts = k.split('\0');
            let (family, id, aspect) = (parts.next(), parts.next(), parts.next());
            // The time it was resolved first, for the `drift_resolved` event the deletion
            // appends.
            tx.prepare_cached(
                "UPDATE drift SET resolved_at = ?4
                 WHERE family = ?1 AND resource_id = ?2 AND aspect = ?3",
            )
            .and_then(|mut st| st.execute(params![family, id, aspect, now]))
            .and_then(|_| {
                tx.prepare_cached(
                    "DELETE FROM drift WHERE family = ?1 AND resource_id = ?2 AND aspect = ?3",
                )
            })
            .and_then(|mut st| st.execute(params![family, id, aspect]))
            .map_err(StoreError::sqlite("resolve drift"))?;
        }
        tx.commit().map_err(StoreError::sqlite("commit drift"))?;
        Ok((new.len(), gone.len()))
    }
}

#[cfg(test)]
mod tests {
    use registry::{Drift, DriftAspect, EventKind};

    use super::*;

    fn drift(family: &str, aspect: DriftAspect) -> Drift {
        Drift {
            family: family.to_owned(),
            resource_id: "a".repeat(32),
            owner: "a".repeat(32),
            aspect,
            message: format!("{family} drifted"),
        }
    }

    #[test]
    fn a_family_the_check_could_not_look_at_keeps_its_recorded_drift() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = StateDb::open(&dir.path().join("state.db")).unwrap();
        let grant = drift("mysql_grant", DriftAspect::declared("mysql_grant_differs"));
        let vhost = drift("web_domain", DriftAspect::declared("vhost_missing"));
        assert_eq!(state.record_drift(&[grant, vhost], &[]).unwrap(), (2, 0));
        // MariaDB unreachable: its grant's drift stands, the vhost's is resolved.
        assert_eq!(state.record_drift(&[], &["mysql_grant"]).unwrap(), (0, 1));
        // Looked at again and gone: resolved now.
        assert_eq!(state.record_drift(&[], &[]).unwrap(), (0, 1));
        let kinds: Vec<(EventKind, String)> = state
            .events(0, 100)
            .unwrap()
            .events
            .into_iter()
            .map(|e| (e.kind, e.drift.unwrap().family))
            .collect();
        assert_eq!(
            kinds,
            [
                (EventKind::Drift, "mysql_grant".to_owned()),
                (EventKind::Drift, "web_domain".to_owned()),
                (EventKind::DriftResolved, "web_domain".to_owned()),
                (EventKind::DriftResolved, "mysql_grant".to_owned()),
            ]
        );
    }
}
