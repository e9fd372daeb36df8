//! The one error type of the provider.
//!
//! Each variant carries the context an operator needs (which program, which path) and, where
//! there is an underlying error, keeps it as `#[source]` instead of pasting it into the
//! message, so the whole chain is logged once by whoever logs it. `code()` gives the stable
//! string that ends up in a job's `{code, message, retryable}`.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use crate::platform::Platform;
use crate::program::Program;

/// Why a provider call failed.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// The program does not exist on this platform profile (for example `cagefsctl` on
    /// Debian).
    #[error("{program} is not available on the {platform} platform")]
    Unsupported {
        program: Program,
        platform: Platform,
    },

    /// The program ran and exited non-zero (or was killed by a signal).
    #[error("{program} exited with status {status}{}", stderr_summary(stderr))]
    Failed {
        program: Program,
        /// The exit code, or 128 + the signal number when a signal ended it (the shell
        /// convention, so one integer covers both).
        status: i32,
        /// The captured standard error, capped, lossily decoded.
        stderr: String,
    },

    /// The program ran past its deadline; it was killed and reaped.
    #[error("{program} did not finish within {timeout:?} and was killed")]
    Timeout { program: Program, timeout: Duration },

    /// The program stopped (`SIGSTOP`, `SIGTSTP`...) or was stopped and continued, and was
    /// killed at once with its process group: a stopped child would hold its lane until its
    /// deadline. A tenant can stop its own worker; nothing else the node runs ever stops.
    #[error("{program} was stopped{} and was killed", match signal {
        Some(signal) => format!(" by signal {signal}"),
        None => " and continued".to_owned(),
    })]
    Stopped {
        program: Program,
        /// The signal that stopped it, when it was still stopped when noticed.
        signal: Option<i32>,
    },

    /// The program could not be started at all.
    #[error("could not start {program} ({path})")]
    Spawn {
        program: Program,
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// A path inside a tenant's area was unsafe to use as root: a symlink, a `..`, or
    /// something that is not what the operation needs. It fails the operation, never the node
    /// (ARCHITECTURE.md invariant 7).
    #[error("unsafe tenant path {path}: {reason}")]
    TenantPath { path: PathBuf, reason: String },

    /// The tenant worker refused or failed the request, with its own stable code
    /// (`tenant_*`, see `tenant::ErrorCode`). Symlinks and escapes are `TenantPath` instead.
    #[error("tenant worker: {message}")]
    Tenant {
        code: tenant::ErrorCode,
        message: String,
    },

    /// The tenant worker's reply was not one valid, bounded reply to the request sent. It ran
    /// as the tenant, so this is treated like any hostile input: the operation fails.
    #[error("invalid reply from the tenant worker: {reason}")]
    TenantReply { reason: String },

    /// MariaDB refused or failed a statement (`code`: the server's error number), or a name
    /// failed the provider's own check before anything was sent.
    #[error("mariadb {op}{}: {message}", code.map(|c| format!(" (error {c})")).unwrap_or_default())]
    Mariadb {
        op: &'static str,
        code: Option<u16>,
        message: String,
    },

    /// The MariaDB server could not be reached (no socket, connection lost).
    #[error("mariadb unavailable: {message}")]
    MariadbUnavailable { message: String },

    /// A filesystem operation on a system or tenant path failed.
    #[error("{op} {path}")]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl ProviderError {
    /// The stable code for results and logs. Never reworded: the control plane matches on it.
    pub fn code(&self) -> &'static str {
        match self {
            ProviderError::Unsupported { .. } => "unsupported_on_platform",
            ProviderError::Failed { .. } => "program_failed",
            ProviderError::Timeout { .. } => "program_timeout",
            ProviderError::Stopped { .. } => "program_stopped",
            ProviderError::Spawn { .. } => "program_spawn_failed",
            ProviderError::TenantPath { .. } => "tenant_path_unsafe",
            ProviderError::Io { .. } => "io_error",
            ProviderError::Tenant { code, .. } => code.code(),
            ProviderError::TenantReply { .. } => "tenant_reply_invalid",
            ProviderError::Mariadb { .. } => "mariadb_failed",
            ProviderError::MariadbUnavailable { .. } => "mariadb_unavailable",
        }
    }

    /// The exit status when the program ran and failed; callers use it to recognise the
    /// documented codes of a program (shadow-utils: 6 = no such user/group, 9 = already
    /// exists).
    pub fn exit_status(&self) -> Option<i32> {
        match self {
            ProviderError::Failed { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// A filesystem operation `op` on `path` failed with `source`.
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        ProviderError::Io {
            op,
            path: path.into(),
            source,
        }
    }
}

/// The first lines of stderr, so a log line says why without a second lookup. The full
/// (capped) text stays in the `stderr` field.
fn stderr_summary(stderr: &str) -> String {
    const MAX_LINES: usize = 3;
    const MAX_CHARS: usize = 400;
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(MAX_LINES)
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let mut joined = lines.join(" / ");
    if joined.chars().count() > MAX_CHARS {
        joined = joined.chars().take(MAX_CHARS).collect::<String>() + "...";
    }
    format!(": {joined}")
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn codes_are_the_documented_stable_strings() {
        let mut cases: Vec<(ProviderError, &str)> = vec![
            (
                ProviderError::Unsupported {
                    program: Program::Cagefsctl,
                    platform: Platform::Debian,
                },
                "unsupported_on_platform",
            ),
            (
                ProviderError::Failed {
                    program: Program::Useradd,
                    status: 9,
                    stderr: String::new(),
                },
                "program_failed",
            ),
            (
                ProviderError::Timeout {
                    program: Program::ApacheCtl,
                    timeout: Duration::from_secs(30),
                },
                "program_timeout",
            ),
            (
                ProviderError::Stopped {
                    program: Program::TenantWorker,
                    signal: Some(19),
                },
                "program_stopped",
            ),
            (
                ProviderError::Spawn {
                    program: Program::Useradd,
                    path: "/usr/sbin/useradd".into(),
                    source: io::Error::from(io::ErrorKind::NotFound),
                },
                "program_spawn_failed",
            ),
            (
                ProviderError::TenantPath {
                    path: "/home/a/.ssh".into(),
                    reason: "symlink".into(),
                },
                "tenant_path_unsafe",
            ),
            (
                ProviderError::io(
                    "read",
                    "/etc/passwd",
                    io::Error::from(io::ErrorKind::PermissionDenied),
                ),
                "io_error",
            ),
        ];
        cases.push((
            ProviderError::Tenant {
                code: tenant::ErrorCode::PermissionDenied,
                message: "x".into(),
            },
            "tenant_permission_denied",
        ));
        cases.push((
            ProviderError::TenantReply { reason: "x".into() },
            "tenant_reply_invalid",
        ));
        for (err, code) in cases {
            assert_eq!(err.code(), code, "{err}");
        }
    }

    #[test]
    fn message_does_not_repeat_the_source() {
        let source = io::Error::other("disk on fire");
        let err = ProviderError::io("write", "/etc/x", source);
        assert_eq!(err.to_string(), "write /etc/x");
        assert_eq!(err.source().unwrap().to_string(), "disk on fire");
    }

    #[test]
    fn failed_message_summarises_stderr() {
        let err = ProviderError::Failed {
            program: Program::Useradd,
            status: 9,
            stderr: "useradd: user 'a' already exists\n".into(),
        };
        assert_eq!(
            err.to_string(),
            "useradd exited with status 9: useradd: user 'a' already exists"
        );
        assert_eq!(err.exit_status(), Some(9));
    }
}
