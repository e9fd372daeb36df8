//! The file systems the runner found full: each recorded once (a `disk_full` event) and
//! cleared once (a `disk_ok` event), like drift (migration 8).

use registry::FileSystem;
use rusqlite::{TransactionBehavior, params};

use crate::StateDb;
use store::{FullFileSystem, StoreError, disk, queries};

/// What one look at the file systems changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiskChanges {
    pub full: Vec<FileSystem>,
    pub ok: Vec<FileSystem>,
}

impl StateDb {
    /// The file systems recorded full.
    pub fn full_filesystems(&self) -> Result<Vec<FullFileSystem>, StoreError> {
        queries::full_filesystems(&self.conn).map_err(StoreError::sqlite("read disk_full"))
    }

    /// Records what the runner saw: each file system with the bytes available on it. One that
    /// became full is inserted (its trigger appends a `disk_full` event), one recorded full
    /// that has space again ([`disk::is_full`]) is deleted (a `disk_ok` event). Nothing
    /// changed writes nothing, so an idle pass commits nothing.
    pub fn record_disk(&mut self, looked: &[(FileSystem, u64)]) -> Result<DiskChanges, StoreError> {
        let recorded: Vec<FileSystem> = self
            .full_filesystems()?
            .into_iter()
            .map(|f| f.filesystem)
            .collect();
        let mut changes = DiskChanges::default();
        for &(fs, available) in looked {
            let was = recorded.contains(&fs);
            match (was, disk::is_full(fs, available, was)) {
                (false, true) => changes.full.push(fs),
                (true, false) => changes.ok.push(fs),
                _ => {}
            }
        }
        if changes == DiskChanges::default() {
            return Ok(changes);
        }
        let now = self.now_ms();
        let available = |fs: FileSystem| {
            looked
                .iter()
                .find(|(f, _)| *f == fs)
                .map_or(0, |(_, a)| i64::try_from(*a).unwrap_or(i64::MAX))
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(StoreError::sqlite("begin recording disk space"))?;
        for fs in &changes.full {
            tx.execute(
                "INSERT INTO disk_full(filesystem, since, available_bytes) VALUES (?1, ?2, ?3)",
                params![fs.as_str(), now, available(*fs)],
            )
            .map_err(StoreError::sqlite("record a full file system"))?;
        }
        for fs in &changes.ok {
            // The time and the space first, for the `disk_ok` event the deletion appends.
            tx.execute(
                "UPDATE disk_full SET ok_at = ?2, ok_available_bytes = ?3 WHERE filesystem = ?1",
                params![fs.as_str(), now, available(*fs)],
            )
            .and_then(|_| {
                tx.execute(
                    "DELETE FROM disk_full WHERE filesystem = ?1",
                    params![fs.as_str()],
                )
            })
            .map_err(StoreError::sqlite("record a file system with space again"))?;
        }
        tx.commit()
            .map_err(StoreError::sqlite("commit disk space"))?;
        Ok(changes)
    }
}

/// The file systems recorded full, from state.db opened read-only (never created or
/// migrated): what `layerone status` shows. Empty when state.db has no such table yet.
pub fn full_filesystems(layout: &store::Layout) -> Result<Vec<FullFileSystem>, StoreError> {
    let conn = rusqlite::Connection::open_with_flags(
        layout.state_db(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(StoreError::sqlite("open state.db read-only"))?;
    queries::full_filesystems(&conn).map_err(StoreError::sqlite("read disk_full"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full file system is one `disk_full` event when found and one `disk_ok` when it has
    /// space again; looking again in between records nothing.
    #[test]
    fn a_full_file_system_is_one_event_each_way() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = StateDb::open(&dir.path().join("state.db")).unwrap();
        let full = disk::min_free(FileSystem::State) - 1;
        let plenty = 1 << 40;
        let look = |state: &mut StateDb, state_bytes| {
            state
                .record_disk(&[
                    (FileSystem::State, state_bytes),
                    (FileSystem::Blobs, plenty),
                ])
                .unwrap()
        };
        assert_eq!(look(&mut state, full).full, [FileSystem::State]);
        assert_eq!(look(&mut state, full), DiskChanges::default());
        assert_eq!(
            look(&mut state, disk::min_free(FileSystem::State)),
            DiskChanges::default(),
            "at the margin it stays full"
        );
        let recorded = state.full_filesystems().unwrap();
        assert_eq!(recorded.len(), 1);
        assert_eq!(recorded[0].available_bytes, full);
        assert_eq!(look(&mut state, plenty).ok, [FileSystem::State]);
        let events = state.events(0, 10).unwrap().events;
        let kinds: Vec<_> = events
            .iter()
            .map(|e| (e.kind, e.disk.clone().unwrap()))
            .collect();
        assert_eq!(
            kinds,
            [
                (
                    registry::EventKind::DiskFull,
                    registry::DiskCondition {
                        filesystem: FileSystem::State,
                        available_bytes: full
                    }
                ),
                (
                    registry::EventKind::DiskOk,
                    registry::DiskCondition {
                        filesystem: FileSystem::State,
                        available_bytes: plenty
                    }
                ),
            ]
        );
        assert!(state.full_filesystems().unwrap().is_empty());
    }
}
