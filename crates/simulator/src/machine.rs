//! The simulated machine: the provider's [`Machine`] for the dev node and the tests, the
//! other implementation of what `provider::RealMachine` is on a server.
//!
//! It goes with a [`SimExecutor`](crate::SimExecutor) (`SimExecutor::machine`), and both act
//! as root or not alike: acting unprivileged, the provider gives no file an owner and no real
//! kill is sent. It offers the model of MariaDB (`mariadb.rs`), lets the worker kill only as a
//! uid of [`SIM_REAL_PROCESS_UIDS`](crate::SIM_REAL_PROCESS_UIDS) that this machine's own
//! `/etc/passwd` does not name, has no listener to handshake, needs no root to change its
//! sysroot, and issues certificates from the simulated CA (`certificate_authority.rs`).

use provider::{CertificateRequest, DatabaseSession, IssueError, Machine, Provider, ProviderError};

use crate::{SIM_REAL_PROCESS_UIDS, certificate_authority, mariadb};

/// The simulated machine.
#[derive(Clone, Copy, Debug)]
pub struct SimMachine {
    /// Whether the provider acts as root and a real kill may be sent (the simulated
    /// executor's tenant work then runs in the real worker).
    root: bool,
}

impl SimMachine {
    /// The simulated machine as this process runs: acting as root when it is root.
    pub fn new() -> SimMachine {
        SimMachine {
            root: rustix::process::geteuid().is_root(),
        }
    }

    /// The same machine acting as root or not, whoever runs it (see
    /// [`SimExecutor::acting_as_root`](crate::SimExecutor::acting_as_root)).
    pub fn acting_as_root(mut self, root: bool) -> SimMachine {
        self.root = root;
        self
    }
}

impl Default for SimMachine {
    fn default() -> SimMachine {
        SimMachine::new()
    }
}

impl Machine for SimMachine {
    /// As [`SimExecutor::acting_as_root`](crate::SimExecutor::acting_as_root) says: acting
    /// unprivileged, the provider gives no file an owner, as without root.
    fn acts_as_root(&self) -> bool {
        self.root
    }

    fn changes_need_root(&self) -> bool {
        false
    }

    fn database_model(&self, provider: &Provider) -> Option<Box<dyn DatabaseSession>> {
        Some(Box::new(mariadb::SimDb::new(provider)))
    }

    fn may_signal_as(&self, uid: u32) -> Result<bool, ProviderError> {
        Ok(self.root && SIM_REAL_PROCESS_UIDS.contains(&uid) && !this_machine_names_uid(uid)?)
    }

    fn listeners_reachable(&self, _provider: &Provider) -> bool {
        false
    }

    fn issue_certificate(
        &self,
        provider: &Provider,
        request: &CertificateRequest<'_>,
    ) -> Result<String, IssueError> {
        certificate_authority::issue(provider, request)
    }
}

/// Whether this machine's own `/etc/passwd` (deliberately not the sysroot's) has a user with
/// `uid`.
fn this_machine_names_uid(uid: u32) -> Result<bool, ProviderError> {
    let path = "/etc/passwd";
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(ProviderError::io("read", path, e)),
    };
    Ok(text
        .lines()
        .any(|l| l.split(':').nth(2).and_then(|v| v.parse::<u32>().ok()) == Some(uid)))
}
