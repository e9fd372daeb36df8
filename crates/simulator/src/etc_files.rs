//! The colon-separated account databases of a sysroot, as the Sim edits them.
//!
//! Lines the Sim does not touch are written back byte for byte. Every write goes through a
//! temporary file and a rename (`files::write_atomic`), so a crash or a concurrent reader
//! never sees half a passwd file, and all edits hold `<root>/etc/.pwd.lock` (the lock file
//! shadow-utils use) so two Sim invocations, in threads or processes, never lose an update.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use provider::{ProviderError, write_atomic};
use rustix::fs::{FlockOperation, Mode, OFlags};

/// One database file, loaded.
pub(super) struct Table {
    path: PathBuf,
    mode: u32,
    pub(super) lines: Vec<String>,
    existed: bool,
}

impl Table {
    /// Loads `path`; a missing file is an empty table that `save` will create with `mode`.
    pub(super) fn load(path: PathBuf, mode: u32) -> Result<Table, ProviderError> {
        match std::fs::read(&path) {
            Ok(bytes) => {
                let text = String::from_utf8(bytes).map_err(|e| {
                    ProviderError::io(
                        "parse",
                        &path,
                        io::Error::new(io::ErrorKind::InvalidData, e),
                    )
                })?;
                Ok(Table {
                    path,
                    mode,
                    lines: text.lines().map(str::to_owned).collect(),
                    existed: true,
                })
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Table {
                path,
                mode,
                lines: Vec::new(),
                existed: false,
            }),
            Err(e) => Err(ProviderError::io("read", &path, e)),
        }
    }

    pub(super) fn exists(&self) -> bool {
        self.existed
    }

    /// The index of the line whose first field is `name`.
    pub(super) fn find(&self, name: &str) -> Option<usize> {
        self.lines
            .iter()
            .position(|line| line.split(':').next() == Some(name))
    }

    pub(super) fn fields(&self, index: usize) -> Vec<String> {
        self.lines[index].split(':').map(str::to_owned).collect()
    }

    pub(super) fn set_fields(&mut self, index: usize, fields: &[String]) {
        self.lines[index] = fields.join(":");
    }

    pub(super) fn remove(&mut self, name: &str) -> bool {
        let before = self.lines.len();
        self.lines
            .retain(|line| line.split(':').next() != Some(name));
        self.lines.len() != before
    }

    /// Writes the table back, keeping the existing file's mode if there is one.
    pub(super) fn save(&self) -> Result<(), ProviderError> {
        use std::os::unix::fs::PermissionsExt;
        let mode = match std::fs::metadata(&self.path) {
            Ok(meta) => meta.permissions().mode() & 0o7777,
            Err(_) => self.mode,
        };
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| ProviderError::io("create directory", parent, e))?;
        }
        let mut text = self.lines.join("\n");
        if !text.is_empty() {
            text.push('\n');
        }
        write_atomic(&self.path, text.as_bytes(), mode, None)
    }
}

/// An exclusive lock on the sysroot's account databases, released on drop.
pub(super) struct DbLock {
    _file: File,
}

pub(super) fn lock(etc: &Path) -> Result<DbLock, ProviderError> {
    std::fs::create_dir_all(etc).map_err(|e| ProviderError::io("create directory", etc, e))?;
    let path = etc.join(".pwd.lock");
    let fd = rustix::fs::open(
        &path,
        OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .map_err(|e| ProviderError::io("open lock", &path, e.into()))?;
    rustix::fs::flock(&fd, FlockOperation::LockExclusive)
        .map_err(|e| ProviderError::io("lock", &path, e.into()))?;
    Ok(DbLock {
        _file: File::from(fd),
    })
}
