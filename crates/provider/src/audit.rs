//! The audit of program invocations, real or simulated, with secrets redacted.
//!
//! Every invocation goes two ways:
//!
//! - a JSON line appended to `audit.log` at once. The file is opened before a program starts
//!   (if the audit cannot be written, nothing runs), and it is the record that survives a
//!   runner killed between running a program and committing its job: the crash tests and an
//!   operator can still see what ran;
//! - a record kept in the provider's sink until the runner takes it
//!   ([`Provider::take_audit_records`]) and commits it to state.db's audit table, with the
//!   job's completion when the invocation belongs to a job. That table is what the API serves.
//!
//! The sink is bounded ([`AUDIT_SINK_MAX`]): a provider used without a runner draining it (a
//! test, a tool) cannot grow without limit; what is dropped is still in `audit.log`.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};
use serde::{Deserialize, Serialize};

use crate::error::ProviderError;
use crate::provider::Provider;

/// The file name inside the audit directory.
pub const AUDIT_FILE: &str = "audit.log";

/// The most records the sink holds before new ones are dropped (and logged as dropped).
pub const AUDIT_SINK_MAX: usize = 10_000;

impl Provider {
    /// Takes the invocation records kept since the last call, oldest first.
    pub fn take_audit_records(&self) -> Vec<AuditRecord> {
        std::mem::take(
            &mut *self
                .audit_sink
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    pub(crate) fn keep_audit_record(&self, record: AuditRecord) {
        let mut sink = self
            .audit_sink
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if sink.len() < AUDIT_SINK_MAX {
            sink.push(record);
        } else {
            tracing::error!(
                target: "audit",
                program = record.program,
                "the audit sink is full (nothing takes its records); this one is only in audit.log"
            );
        }
    }
}

/// One line of `audit.log`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// Unix time in milliseconds when the invocation started.
    pub at: u64,
    /// The program's symbolic name (`Program::name`).
    pub program: String,
    /// The absolute path that was (or, under Sim, would have been) executed.
    pub path: String,
    /// The argument list, lossily decoded; secrets (password hashes) are replaced by
    /// `<redacted>`.
    pub args: Vec<String>,
    /// The exit status; `None` when the program timed out or could not start.
    pub status: Option<i32>,
    /// Wall time in milliseconds.
    pub ms: u64,
    /// `"real"` or `"sim"`.
    pub backend: String,
    /// The error code when there was no exit status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

pub(crate) struct AuditLog {
    file: File,
    path: PathBuf,
}

impl AuditLog {
    /// Opens `<dir>/audit.log` for appending, creating the directory (0700) and the file
    /// (0600) if missing. `O_NOFOLLOW` because the log is root's and a planted symlink must
    /// not redirect it.
    pub(crate) fn open(dir: &Path) -> Result<AuditLog, ProviderError> {
        let path = dir.join(AUDIT_FILE);
        let open = || {
            rustix::fs::open(
                &path,
                OFlags::WRONLY
                    | OFlags::APPEND
                    | OFlags::CREATE
                    | OFlags::NOFOLLOW
                    | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o600),
            )
        };
        let fd = match open() {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(dir)
                    .map_err(|e| ProviderError::io("create audit directory", dir, e))?;
                open().map_err(|e| ProviderError::io("open audit log", &path, e.into()))?
            }
            Err(e) => return Err(ProviderError::io("open audit log", &path, e.into())),
        };
        Ok(AuditLog {
            file: File::from(fd),
            path,
        })
    }

    /// Appends one record as a single `write`, so concurrent writers (threads, or the runner
    /// and a test) never interleave inside a line.
    pub(crate) fn append(&mut self, record: &AuditRecord) -> io::Result<()> {
        let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
        line.push(b'\n');
        self.file.write_all(&line)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

/// Reads every record of `<dir>/audit.log`; a missing file means no program ever ran.
///
/// For tests and for the operator's tooling; the runner never reads its own audit log.
pub fn read_audit_log(dir: &Path) -> Result<Vec<AuditRecord>, ProviderError> {
    let path = dir.join(AUDIT_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(ProviderError::io("read audit log", path, e)),
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            serde_json::from_str(line).map_err(|e| {
                ProviderError::io(
                    "parse audit log",
                    &path,
                    io::Error::new(io::ErrorKind::InvalidData, e),
                )
            })
        })
        .collect()
}
