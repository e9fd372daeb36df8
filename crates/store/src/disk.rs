//! The node's file systems running out of space, each named by what it holds
//! ([`registry::FileSystem`]: `state`, `inbox`, `blobs`), never by a path.
//!
//! A full disk is not an error of any request: the API refuses admission with `disk_full`
//! (503, `Retry-After`) while the inbox's file system is below [`min_free`] (or SQLite finds it
//! full), so that root keeps room to record what it sees; the runner looks at each file system
//! on every pass (one `statvfs` each, no program), records each change on the events feed
//! (`disk_full`, then `disk_ok`) and, while `state` is full, admits and applies nothing: a job
//! would fail for want of space, not for its own reason, and what was accepted waits in the
//! inbox until space is back. A file system counts as having space again only once it has
//! twice its [`min_free`], so a pass that frees a few pages does not flap the condition.

use std::path::{Path, PathBuf};

use registry::FileSystem;
use rustix::io::Errno;

use crate::{Layout, StoreError};

const MIB: u64 = 1024 * 1024;

/// Below this many available bytes a file system counts as full. The inbox's margin is the
/// larger: the API stops taking requests while root still has room for its own writes on a
/// node whose data lives on one file system.
pub fn min_free(fs: FileSystem) -> u64 {
    match fs {
        FileSystem::State => MIB,
        FileSystem::Inbox => 4 * MIB,
        FileSystem::Blobs => MIB,
    }
}

/// Whether `available` bytes on `fs` is a full file system, given whether it was full at the
/// last look (the condition ends only at twice the margin).
pub fn is_full(fs: FileSystem, available: u64, was_full: bool) -> bool {
    if was_full {
        available < 2 * min_free(fs)
    } else {
        available < min_free(fs)
    }
}

/// The directory whose file system is `fs`'s.
pub fn dir_of(layout: &Layout, fs: FileSystem) -> PathBuf {
    match fs {
        FileSystem::State => layout.state_dir(),
        FileSystem::Inbox => layout.inbox_dir(),
        FileSystem::Blobs => layout.blobs_out(),
    }
}

/// The bytes an unprivileged writer can still use on the file system holding `path`.
pub fn available(path: &Path) -> Result<u64, StoreError> {
    let stat = rustix::fs::statvfs(path).map_err(|e| StoreError::Io {
        path: path.to_owned(),
        source: e.into(),
    })?;
    Ok(stat.f_bavail.saturating_mul(stat.f_frsize))
}

/// Whether an error, or any error it was caused by, is the kernel's or SQLite's "no space
/// left" (`ENOSPC`, `EDQUOT`, `SQLITE_FULL`) or this crate's [`StoreError::DiskFull`].
pub fn is_out_of_space(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(e) = next {
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && io.raw_os_error().is_some_and(|n| {
                [Errno::NOSPC, Errno::DQUOT].contains(&Errno::from_raw_os_error(n))
            })
        {
            return true;
        }
        if let Some(rusqlite::Error::SqliteFailure(f, _)) = e.downcast_ref::<rusqlite::Error>()
            && f.code == rusqlite::ErrorCode::DiskFull
        {
            return true;
        }
        if let Some(StoreError::DiskFull { .. }) = e.downcast_ref::<StoreError>() {
            return true;
        }
        next = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_file_system_has_space_again_only_at_twice_its_margin() {
        let m = min_free(FileSystem::State);
        assert!(!is_full(FileSystem::State, m, false));
        assert!(is_full(FileSystem::State, m - 1, false));
        assert!(
            is_full(FileSystem::State, m, true),
            "no flapping at the margin"
        );
        assert!(is_full(FileSystem::State, 2 * m - 1, true));
        assert!(!is_full(FileSystem::State, 2 * m, true));
        assert!(min_free(FileSystem::Inbox) > min_free(FileSystem::State));
    }

    #[test]
    fn enospc_and_sqlite_full_are_out_of_space_through_their_causes() {
        let io = std::io::Error::from(Errno::NOSPC);
        assert!(is_out_of_space(&io));
        let wrapped = StoreError::Io {
            path: "/x".into(),
            source: io,
        };
        assert!(is_out_of_space(&wrapped));
        let full = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
            None,
        );
        assert!(is_out_of_space(&StoreError::Sqlite {
            context: "commit".into(),
            source: full,
        }));
        let other = std::io::Error::from(Errno::ACCESS);
        assert!(!is_out_of_space(&other));
    }
}
