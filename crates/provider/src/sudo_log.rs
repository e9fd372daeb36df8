//! Reading sudo's own log file (the one the node's sudoers drop-in names with
//! `Defaults logfile=`) a bounded chunk at a time, from a cursor.
//!
//! The cursor is a byte offset plus the identity of the file it was taken from (device and
//! inode). When the file at the path is another file (logrotate moved the old one away) or is
//! shorter than the offset (truncated), reading restarts at its beginning and says so, instead
//! of skipping or repeating lines silently. The file is opened `O_NOFOLLOW`: a symlink planted
//! in its place is an error, not something root reads through. Parsing the lines is the
//! caller's business (`ops::sudo`); this module only hands out bytes that end at a line end.

use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use rustix::fs::{Mode, OFlags};

use crate::error::ProviderError;
use crate::provider::Provider;

/// Where a read starts: a byte offset in the file with this identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogPosition {
    pub device: u64,
    pub inode: u64,
    pub offset: u64,
}

/// What one read returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogChunk {
    /// Where `bytes` starts. `None` when there is no log file yet (no sudo use since the
    /// drop-in was installed).
    pub start: Option<LogPosition>,
    /// Whole lines only, each ending with `\n`; a last line still being written is left for
    /// the next read. At most the requested number of bytes, unless one line alone is longer:
    /// then that line is cut there (and the cut reported by `truncated_line`).
    pub bytes: Vec<u8>,
    /// True when the cursor named another file or an offset past the end, so reading
    /// restarted at the beginning of the current file.
    pub restarted: bool,
    /// True when a single line was longer than the read size and was cut to it.
    pub truncated_line: bool,
    /// The offset in the file just after what `bytes` holds: where the next read starts.
    pub next_offset: u64,
}

impl Provider {
    /// Reads up to `max` bytes of whole lines of the log at `path` (mapped with `sysconf`),
    /// from `from` if it names this file, else from the start.
    pub fn read_log_chunk(
        &self,
        path: &Path,
        from: Option<LogPosition>,
        max: usize,
    ) -> Result<LogChunk, ProviderError> {
        self.assert_mapped(path);
        let fd = match rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => {
                return Ok(LogChunk {
                    start: None,
                    bytes: Vec::new(),
                    restarted: from.is_some(),
                    truncated_line: false,
                    next_offset: 0,
                });
            }
            Err(e) => return Err(ProviderError::io("open", path, e.into())),
        };
        let stat = rustix::fs::fstat(&fd).map_err(|e| ProviderError::io("stat", path, e.into()))?;
        if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::RegularFile {
            return Err(ProviderError::io(
                "read",
                path,
                io::Error::new(io::ErrorKind::InvalidData, "not a regular file"),
            ));
        }
        let (device, inode, size) = (stat.st_dev, stat.st_ino, stat.st_size as u64);
        let (offset, restarted) = match from {
            Some(p) if p.device == device && p.inode == inode && p.offset <= size => {
                (p.offset, false)
            }
            Some(_) => (0, true),
            None => (0, false),
        };
        let mut file = std::fs::File::from(fd);
        file.seek(SeekFrom::Start(offset))
            .map_err(|e| ProviderError::io("seek", path, e))?;
        let mut bytes = Vec::with_capacity(max.min(64 * 1024));
        file.take(max as u64)
            .read_to_end(&mut bytes)
            .map_err(|e| ProviderError::io("read", path, e))?;
        let mut truncated_line = false;
        let consumed = match bytes.iter().rposition(|&b| b == b'\n') {
            Some(end) => {
                bytes.truncate(end + 1);
                bytes.len()
            }
            // One line longer than the whole read: hand it out cut, so the reader moves on.
            None if bytes.len() == max && max > 0 => {
                truncated_line = true;
                bytes.push(b'\n');
                max
            }
            None => {
                bytes.clear();
                0
            }
        };
        Ok(LogChunk {
            start: Some(LogPosition {
                device,
                inode,
                offset,
            }),
            bytes,
            restarted,
            truncated_line,
            next_offset: offset + consumed as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;
    use crate::provider::test_provider;

    #[test]
    fn chunks_end_at_line_ends_and_a_rotated_file_restarts() {
        let dir = tempfile::tempdir().unwrap();
        let p = test_provider(Platform::Debian, dir.path());
        let log = p.sysconf("/var/log/layerone/sudo.log");
        assert_eq!(p.read_log_chunk(&log, None, 100).unwrap().start, None);
        p.ensure_dir(log.parent().unwrap(), 0o700).unwrap();
        std::fs::write(&log, b"one\ntwo\nthr").unwrap();
        let first = p.read_log_chunk(&log, None, 6).unwrap();
        assert_eq!(first.bytes, b"one\n");
        assert_eq!(first.next_offset, 4);
        let next = LogPosition {
            offset: first.next_offset,
            ..first.start.unwrap()
        };
        let second = p.read_log_chunk(&log, Some(next), 100).unwrap();
        assert_eq!(second.bytes, b"two\n", "the unfinished line waits");
        assert!(!second.restarted);
        // Rotated: a new file at the same path.
        std::fs::rename(&log, log.with_extension("log.1")).unwrap();
        std::fs::write(&log, b"new\n").unwrap();
        let after = p.read_log_chunk(&log, Some(next), 100).unwrap();
        assert!(after.restarted);
        assert_eq!(after.bytes, b"new\n");
        // A line longer than the read is cut, not a read that never moves.
        std::fs::write(&log, b"0123456789\n").unwrap();
        let cut = p.read_log_chunk(&log, None, 4).unwrap();
        assert!(cut.truncated_line);
        assert_eq!(cut.bytes, b"0123\n");
        assert_eq!(cut.next_offset, 4);
    }

    #[test]
    fn a_symlink_in_place_of_the_log_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = test_provider(Platform::Debian, dir.path());
        let log = p.sysconf("/var/log/layerone/sudo.log");
        p.ensure_dir(log.parent().unwrap(), 0o700).unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, b"root's secret\n").unwrap();
        std::os::unix::fs::symlink(&secret, &log).unwrap();
        assert_eq!(
            p.read_log_chunk(&log, None, 100).unwrap_err().code(),
            "io_error"
        );
    }
}
