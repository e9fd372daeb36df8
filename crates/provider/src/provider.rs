//! The `Provider` handle: platform, system root, executor, machine, audit directory and clock.
//!
//! One value is built at start-up and shared by reference with every handler. It holds no
//! mutable state but the audit records not yet handed to state.db (behind a mutex), so it is
//! `Send + Sync`; everything else that changes lives on disk (the sysroot and the audit log),
//! where tests can look at it.
//!
//! The seams a simulation drives: the system root (every system path is mapped under it by
//! [`Provider::sysconf`]), the executor (how programs run), the machine (what else differs
//! from a server: [`ProviderConfig::machine`], `machine.rs`), and the clock
//! ([`Provider::with_clock`]) that the audit lines' times are read from and that a simulated
//! executor's models read theirs from.
//! The real executor's child deadlines stay on the system's monotonic time whatever the
//! clock: they bound real processes.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use clock::Clock;

use crate::audit::AuditRecord;
use crate::executor::Executor;
use crate::machine::Machine;
use crate::platform::Platform;

/// Everything needed to build a [`Provider`].
#[derive(Clone, Debug)]
pub struct ProviderConfig {
    pub platform: Platform,
    /// `/` in production; a temporary directory in tests and in the dev node. Must be
    /// absolute.
    pub root: PathBuf,
    /// How programs run: [`RealExecutor`](crate::RealExecutor) in production; a simulation
    /// (`crates/simulator`) in the dev node and tests.
    pub executor: Arc<dyn Executor>,
    /// The machine it acts on: [`RealMachine`](crate::RealMachine) in production; the
    /// simulator's (`SimExecutor::machine`) with the simulated executor. Always named, so a
    /// simulation cannot end up acting on the real machine by leaving it out.
    pub machine: Arc<dyn Machine>,
    /// Where `audit.log` is appended, one JSON line per program invocation. Created (0700)
    /// on first use.
    pub audit_dir: PathBuf,
}

/// The only door to programs and system paths.
#[derive(Debug)]
pub struct Provider {
    pub(crate) platform: Platform,
    pub(crate) root: PathBuf,
    pub(crate) executor: Arc<dyn Executor>,
    /// The machine it acts on (`ProviderConfig::machine`).
    pub(crate) machine: Arc<dyn Machine>,
    pub(crate) audit_dir: PathBuf,
    /// Ownership changes need root; tests run unprivileged too, and then skip them.
    pub(crate) is_root: bool,
    /// The tenant worker, when configured (`with_tenant_worker`); otherwise the one beside
    /// the running executable.
    pub(crate) tenant_worker: Option<PathBuf>,
    /// Invocations not yet taken by [`Provider::take_audit_records`] (see `audit.rs`).
    pub(crate) audit_sink: Mutex<Vec<AuditRecord>>,
    /// The MariaDB server socket, when configured (`with_mariadb_socket`); otherwise the
    /// machine's model of MariaDB if it has one, else the platform's default socket.
    pub(crate) mariadb_socket: Option<PathBuf>,
    /// Where the times it records come from (`with_clock`); the system clock by default.
    pub(crate) clock: Arc<dyn Clock>,
}

impl Provider {
    /// Builds the provider, acting on `config.machine`: [`RealMachine`](crate::RealMachine)
    /// in what a packaged binary builds, the simulator's in a simulation.
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
        let machine = config.machine;
        Provider {
            platform: config.platform,
            root: config.root,
            executor: config.executor,
            is_root: is_root_on(&*machine),
            machine,
            audit_dir: config.audit_dir,
            tenant_worker: None,
            audit_sink: Mutex::new(Vec::new()),
            mariadb_socket: None,
            clock: clock::system(),
        }
    }

    /// The machine this provider acts on.
    pub fn machine(&self) -> &dyn Machine {
        &*self.machine
    }

    /// The same provider reading the times it records from `clock` (the runner's): when each
    /// invocation started and how long it took, and, for a simulated executor, whatever
    /// time its models record.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Provider {
        self.clock = clock;
        self
    }

    /// The clock the provider reads its times from.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The same provider with an audit sink of its own, for a second lane of work whose
    /// invocations are committed with that lane's jobs (the runner's long lane): records
    /// taken from one sink never belong to the other lane's jobs.
    pub fn for_another_lane(&self) -> Provider {
        Provider {
            platform: self.platform,
            root: self.root.clone(),
            executor: self.executor.clone(),
            machine: self.machine.clone(),
            audit_dir: self.audit_dir.clone(),
            is_root: self.is_root,
            tenant_worker: self.tenant_worker.clone(),
            audit_sink: Mutex::new(Vec::new()),
            mariadb_socket: self.mariadb_socket.clone(),
            clock: self.clock.clone(),
        }
    }

    pub fn platform(&self) -> Platform {
        self.platform
    }

    /// The system root every system path is mapped under (see [`Provider::sysconf`]).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether this process runs as root and the machine has the provider act as root
    /// ([`Machine::acts_as_root`]), so it gives the files it creates their owners (an
    /// unprivileged test or dev node cannot, and leaves them its own).
    pub fn is_root(&self) -> bool {
        self.is_root
    }

    /// The directory holding `audit.log`.
    pub fn audit_dir(&self) -> &Path {
        &self.audit_dir
    }

    /// Whether the root is the real `/` (production) rather than a sysroot.
    pub fn root_is_slash(&self) -> bool {
        self.root == Path::new("/")
    }
}

/// Whether a provider on `machine` gives files their owners: this process is root and the
/// machine has it act as root.
fn is_root_on(machine: &dyn Machine) -> bool {
    rustix::process::geteuid().is_root() && machine.acts_as_root()
}

/// A provider on the real executor whose sysroot is `<dir>/root` and audit directory
/// `<dir>/audit`, for the unit tests of what does not run a program (the simulator's tests
/// live in `crates/simulator`, which this crate's unit tests cannot link).
#[cfg(test)]
pub(crate) fn test_provider(platform: Platform, dir: &Path) -> Provider {
    Provider::new(ProviderConfig {
        platform,
        root: dir.join("root"),
        executor: Arc::new(crate::executor::RealExecutor),
        machine: Arc::new(crate::machine::RealMachine),
        audit_dir: dir.join("audit"),
    })
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
            executor: Arc::new(crate::executor::RealExecutor),
            machine: Arc::new(crate::machine::RealMachine),
            audit_dir: "/tmp".into(),
        });
    }
}
