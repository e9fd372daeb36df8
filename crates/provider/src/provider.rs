//! The `Provider` handle: platform, system root, backend and audit directory.
//!
//! One value is built at start-up and shared by reference with every handler. It holds no
//! mutable state but the audit records not yet handed to state.db (behind a mutex), so it is
//! `Send + Sync`; everything else that changes lives on disk (the sysroot and the audit log),
//! where tests can look at it.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::audit::AuditRecord;
use crate::platform::Platform;
use crate::program::Program;

/// How programs are run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backend {
    /// Production: every program is started for real.
    Real,
    /// The dev node and tests: each program's effect on the sysroot is modelled in-process
    /// (see `sim/`), except the programs listed in `real`, which are started for real. Only
    /// list programs that can be pointed at the sysroot (`apachectl -f`); a real program that
    /// ignores the sysroot would change this machine.
    Sim { real: Vec<Program> },
}

impl Backend {
    /// Whether `program` is started as a process under this backend.
    pub fn runs_real(&self, program: Program) -> bool {
        match self {
            Backend::Real => true,
            Backend::Sim { real } => real.contains(&program),
        }
    }
}

/// Everything needed to build a [`Provider`].
#[derive(Clone, Debug)]
pub struct ProviderConfig {
    pub platform: Platform,
    /// `/` in production; a temporary directory in tests and in the dev node. Must be
    /// absolute.
    pub root: PathBuf,
    pub backend: Backend,
    /// Where `audit.log` is appended, one JSON line per program invocation. Created (0700)
    /// on first use.
    pub audit_dir: PathBuf,
}

/// The only door to programs and system paths.
#[derive(Debug)]
pub struct Provider {
    pub(crate) platform: Platform,
    pub(crate) root: PathBuf,
    pub(crate) backend: Backend,
    pub(crate) audit_dir: PathBuf,
    /// Ownership changes need root; tests run unprivileged too, and then skip them.
    pub(crate) is_root: bool,
    /// The tenant worker, when configured (`with_tenant_worker`); otherwise the one beside
    /// the running executable.
    pub(crate) tenant_worker: Option<PathBuf>,
    /// Invocations not yet taken by [`Provider::take_audit_records`] (see `audit.rs`).
    pub(crate) audit_sink: Mutex<Vec<AuditRecord>>,
    /// The MariaDB server socket, when configured (`with_mariadb_socket`); otherwise the
    /// platform's default under `Backend::Real` and the model under `Backend::Sim`.
    pub(crate) mariadb_socket: Option<PathBuf>,
}

impl Provider {
    /// Builds the provider.
    ///
    /// # Panics
    /// If `root` or `audit_dir` is not absolute: every system path is joined under `root`,
    /// and a relative one would silently depend on the current directory.
    pub fn new(config: ProviderConfig) -> Provider {
        assert!(
            config.root.is_absolute(),
            "ProviderConfig.root must be absolute, got {}",
            config.root.display()
        );
        assert!(
            config.audit_dir.is_absolute(),
            "ProviderConfig.audit_dir must be absolute, got {}",
            config.audit_dir.display()
        );
        Provider {
            platform: config.platform,
            root: config.root,
            backend: config.backend,
            audit_dir: config.audit_dir,
            is_root: rustix::process::geteuid().is_root(),
            tenant_worker: None,
            audit_sink: Mutex::new(Vec::new()),
            mariadb_socket: None,
        }
    }

    /// The same provider with an audit sink of its own, for a second lane of work whose
    /// invocations are committed with that lane's jobs (the runner's long lane): records
    /// taken from one sink never belong to the other lane's jobs.
    pub fn for_another_lane(&self) -> Provider {
        Provider {
            platform: self.platform,
            root: self.root.clone(),
            backend: self.backend.clone(),
            audit_dir: self.audit_dir.clone(),
            is_root: self.is_root,
            tenant_worker: self.tenant_worker.clone(),
            audit_sink: Mutex::new(Vec::new()),
            mariadb_socket: self.mariadb_socket.clone(),
        }
    }

    pub fn platform(&self) -> Platform {
        self.platform
    }

    /// The system root every system path is mapped under (see [`Provider::sysconf`]).
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The directory holding `audit.log`.
    pub fn audit_dir(&self) -> &Path {
        &self.audit_dir
    }

    /// Whether the root is the real `/` (production) rather than a sysroot.
    pub(crate) fn root_is_slash(&self) -> bool {
        self.root == Path::new("/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn provider_is_send_and_sync() {
        assert_send_sync::<Provider>();
    }

    #[test]
    #[should_panic(expected = "root must be absolute")]
    fn relative_root_is_a_programmer_error() {
        Provider::new(ProviderConfig {
            platform: Platform::Debian,
            root: "sysroot".into(),
            backend: Backend::Real,
            audit_dir: "/tmp".into(),
        });
    }

    #[test]
    fn sim_runs_only_listed_programs_for_real() {
        let sim = Backend::Sim {
            real: vec![Program::ApacheCtl],
        };
        assert!(sim.runs_real(Program::ApacheCtl));
        assert!(!sim.runs_real(Program::Useradd));
        assert!(Backend::Real.runs_real(Program::Useradd));
    }
}
