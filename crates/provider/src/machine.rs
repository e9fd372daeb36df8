//! The machine the provider acts on ([`Machine`]), and the real one ([`RealMachine`]).
//!
//! An executor only carries out program invocations (`executor/`). What else differs between
//! a server and a simulation of one is the machine's, and each answer is an implementation,
//! never a branch on "is this a simulation": whether the provider gives tenant files their
//! owners, the MariaDB it talks to when no socket was configured, whether a kill as a uid can
//! reach only a tenant's processes, whether the services' listeners can be asked, whether
//! changing it takes root, and the certificate authority a node without an ACME CA has.
//!
//! [`RealMachine`] is the server the packaged binaries run on. The simulated machine lives
//! beside the simulated executor in `crates/simulator`, which no packaged binary links (the
//! Oxide omicron pattern: `illumos-utils/src/host/executor.rs`, a real and a fake
//! implementation of one interface). Whoever builds the provider picks one
//! ([`Provider::new`] acts on the real machine; a simulation hands its own to
//! [`ProviderConfig::machine`](crate::ProviderConfig::machine)).

use std::fmt;
use std::path::Path;

use clock::Clock;

use crate::error::ProviderError;
use crate::mariadb::DatabaseSession;
use crate::provider::Provider;

/// The machine a [`Provider`] changes: a server, or a simulation of one.
///
/// Every method that needs the system's paths takes the provider that asks, so an
/// implementation maps them (`Provider::sysconf`) the way the provider does.
pub trait Machine: Send + Sync + fmt::Debug {
    /// Whether the provider, when this process is root, acts as root: gives the files it
    /// creates for a tenant their owners, because the tenant's own work runs as that tenant,
    /// and so can tell a tenant's files on the machine by their owner
    /// (`Provider::remove_files_of_uid`). A server: always. A simulation acting unprivileged
    /// (its tenant work in this process, as this process's user) answers no, so what the
    /// provider creates for a tenant stays this process's, as it would without root, and its
    /// in-process worker can use it.
    fn acts_as_root(&self) -> bool;

    /// Whether changing this machine takes root, so a runner acting on it refuses to start
    /// without it: a server's system files do; a simulation's sysroot does not.
    fn changes_need_root(&self) -> bool;

    /// The model of MariaDB to use when no server socket was configured, or `None` to
    /// connect to the platform's server (a server).
    fn database_model(&self, provider: &Provider) -> Option<Box<dyn DatabaseSession>>;

    /// Whether the tenant worker may be started to kill every process of `uid`: whether a
    /// kill as `uid` can reach only the tenant's own processes. A server: always (the uid was
    /// handed out by this node). A simulation: only for a uid no real user or service of
    /// this machine can have (`programs/tenant_terminate.rs`).
    fn may_signal_as(&self, uid: u32) -> Result<bool, ProviderError>;

    /// Whether the services' listeners (Apache's 443, Dovecot's, Postfix's) can be asked by
    /// a handshake on 127.0.0.1: a server's, when the provider's root is its `/`; never a
    /// simulation's, nor a sysroot's.
    fn listeners_reachable(&self, provider: &Provider) -> bool;

    /// A chain for `request`'s names from the certificate authority this machine has of its
    /// own, which issues when the node's configuration names no ACME CA (no `[acme]` table).
    /// A server has none ([`IssueError::NoAuthority`]): only the configured ACME CA issues.
    /// A simulation issues from a throw-away CA after asking for the same challenge files an
    /// ACME CA would.
    fn issue_certificate(
        &self,
        provider: &Provider,
        request: &CertificateRequest<'_>,
    ) -> Result<String, IssueError>;
}

/// One certificate asked of a machine's own authority ([`Machine::issue_certificate`]).
#[derive(Clone, Copy, Debug)]
pub struct CertificateRequest<'a> {
    /// The names the certificate covers, the first being the domain.
    pub names: &'a [String],
    /// The certificate's private key (PEM).
    pub key_pem: &'a str,
    /// Where HTTP-01 challenge responses are served from, mapped under the provider's root:
    /// `<token>` in it answers `/.well-known/acme-challenge/<token>`.
    pub challenge_dir: &'a Path,
    /// The handler's clock: a certificate is valid from its now.
    pub clock: &'a dyn Clock,
}

/// Why a machine's own authority issued no certificate.
#[derive(Debug, thiserror::Error)]
pub enum IssueError {
    /// The machine has no authority of its own: only an ACME CA the node's configuration
    /// names issues.
    #[error("this machine has no certificate authority of its own")]
    NoAuthority,
    /// What was served for a challenge could not be read back.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// The authority issued nothing, for this reason.
    #[error("{0}")]
    Failed(String),
}

/// The server the provider runs on: production's machine.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealMachine;

impl Machine for RealMachine {
    fn acts_as_root(&self) -> bool {
        true
    }

    fn changes_need_root(&self) -> bool {
        true
    }

    fn database_model(&self, _provider: &Provider) -> Option<Box<dyn DatabaseSession>> {
        None
    }

    fn may_signal_as(&self, _uid: u32) -> Result<bool, ProviderError> {
        Ok(true)
    }

    fn listeners_reachable(&self, provider: &Provider) -> bool {
        provider.root_is_slash()
    }

    fn issue_certificate(
        &self,
        _provider: &Provider,
        _request: &CertificateRequest<'_>,
    ) -> Result<String, IssueError> {
        Err(IssueError::NoAuthority)
    }
}
