//! How a program invocation is carried out: the one interface every invocation goes through
//! ([`Executor`]), and its real implementation (`real.rs`, [`RealExecutor`]).
//!
//! The provider decides *what* runs: the program of the closed table, its absolute path, the
//! argument list a reviewed builder in `programs/` made, stdin and the deadline. It writes the
//! audit line and turns a non-zero exit into `ProviderError::Failed` (`exec.rs`), around
//! whichever executor it holds, so every implementation is audited and checked the same way.
//! An executor decides only *how* the invocation is carried out:
//!
//! - [`RealExecutor`] starts the process (`real.rs` is the one file of the workspace that
//!   builds a command) and enforces the deadline;
//! - the simulator (`crates/simulator`, which no packaged binary links) models each program's
//!   effect on the sysroot instead, receiving the very same argument list;
//! - [`ReadOnlyExecutor`] starts nothing, for commands that only read the node.
//!
//! An executor answers nothing but how a program runs: [`Executor::run`],
//! [`Executor::run_streaming`], and [`Executor::runs_real`], where the program's binary is
//! taken from. Whatever else differs under a simulation (the owners of tenant files, the
//! MariaDB model, which uids a kill may reach, the listeners, the certificate authority) is
//! the machine's (`machine.rs`, [`Machine`](crate::Machine)), another interface with a real
//! and a simulated implementation; the provider never asks which implementation it holds (the
//! Oxide omicron pattern: `illumos-utils/src/host/executor.rs` with its real and fake
//! implementations). `executor_is_only_about_running_programs` (cli) holds the trait to that.

pub mod real;

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use crate::error::ProviderError;
use crate::program::Program;
use crate::provider::Provider;

pub use real::RealExecutor;

/// Carries out the program invocations of a [`Provider`]: for real, or as a model. Every
/// method is about running a program; what else a simulation changes is the
/// [`Machine`](crate::Machine)'s.
///
/// Every method takes the provider that asks, so an implementation can map system paths
/// (`Provider::sysconf`) and read the system's files the way the provider does.
pub trait Executor: Send + Sync + fmt::Debug {
    /// Whether `program` is started as a process of this machine, so its binary is this
    /// machine's (`/usr/sbin/...`) rather than the sysroot's. Always true for the real
    /// executor; the audit line says `real` or `sim` from it.
    ///
    /// This stays the executor's because it is about running one program: which binary an
    /// invocation of `program` starts, so where that binary is looked for (is it installed,
    /// `Provider::program_installed`) and whether the tenant worker is a process of its own
    /// (`Provider::tenant_isolation`). It says nothing of the machine as a whole: a
    /// simulation may start some programs for real and model the others.
    fn runs_real(&self, program: Program) -> bool;

    /// Runs one invocation to its end: stdin fed from `stdin` (null when `None`), stdout and
    /// stderr captured up to [`OUTPUT_CAP`](crate::OUTPUT_CAP) each. A non-zero exit is an
    /// `Ok` output; the provider turns it into an error after the audit line.
    fn run(
        &self,
        provider: &Provider,
        call: &Invocation<'_>,
        stdin: Option<&[u8]>,
    ) -> Result<Output, ProviderError>;

    /// Like [`Executor::run`], with stdin streamed from `input` and stdout into `output` as
    /// the program runs (the tenant worker's archives). The output's `stdout` stays empty.
    fn run_streaming(
        &self,
        provider: &Provider,
        call: &Invocation<'_>,
        input: &mut (dyn Read + Send),
        output: &mut (dyn Write + Send),
    ) -> Result<Output, ProviderError>;
}

/// One program invocation, as the provider resolved it.
#[derive(Clone, Copy, Debug)]
pub struct Invocation<'a> {
    pub program: Program,
    /// The absolute path the provider resolved for `program` on its platform.
    pub path: &'a Path,
    pub argv: &'a Argv,
    /// When the program is killed with its process group if still running.
    pub timeout: Duration,
}

/// An argument list, with the positions that must not be written to the audit log.
///
/// Builders in `programs/` produce one; a simulation reads the same list, so what is tested
/// is the argv production would run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Argv {
    args: Vec<OsString>,
    secret: Vec<bool>,
}

impl Argv {
    pub fn new() -> Argv {
        Argv::default()
    }

    /// Appends an ordinary argument.
    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Argv {
        self.args.push(arg.as_ref().to_owned());
        self.secret.push(false);
        self
    }

    /// Appends an argument that is logged as `<redacted>` (a password hash).
    pub fn secret(&mut self, arg: impl AsRef<OsStr>) -> &mut Argv {
        self.args.push(arg.as_ref().to_owned());
        self.secret.push(true);
        self
    }

    pub fn args(&self) -> &[OsString] {
        &self.args
    }

    /// The list as written to the audit log.
    pub fn for_audit(&self) -> Vec<String> {
        self.args
            .iter()
            .zip(&self.secret)
            .map(|(arg, &secret)| {
                if secret {
                    "<redacted>".to_owned()
                } else {
                    arg.to_string_lossy().into_owned()
                }
            })
            .collect()
    }
}

/// What a program printed and how it exited.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    /// The exit code, or 128 + the signal that ended it.
    pub status: i32,
    pub stdout: Vec<u8>,
    /// Whether stdout went past the cap and was cut there.
    pub stdout_truncated: bool,
    pub stderr: Vec<u8>,
    pub stderr_truncated: bool,
}

/// An executor for commands that only read the node (the CloudLinux panel scripts): it starts
/// nothing, and every invocation fails. `programs_in_root` says where a program's binary is
/// looked for: under the provider's root (a sysroot standing for the machine, as on a dev
/// node) or on this machine.
#[derive(Clone, Copy, Debug)]
pub struct ReadOnlyExecutor {
    pub programs_in_root: bool,
}

impl ReadOnlyExecutor {
    fn refuse(call: &Invocation<'_>) -> ProviderError {
        ProviderError::Spawn {
            program: call.program,
            path: call.path.to_owned(),
            source: std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "this command only reads the node and starts no program",
            ),
        }
    }
}

impl Executor for ReadOnlyExecutor {
    fn runs_real(&self, _program: Program) -> bool {
        !self.programs_in_root
    }

    fn run(
        &self,
        _provider: &Provider,
        call: &Invocation<'_>,
        _stdin: Option<&[u8]>,
    ) -> Result<Output, ProviderError> {
        Err(ReadOnlyExecutor::refuse(call))
    }

    fn run_streaming(
        &self,
        _provider: &Provider,
        call: &Invocation<'_>,
        _input: &mut (dyn Read + Send),
        _output: &mut (dyn Write + Send),
    ) -> Result<Output, ProviderError> {
        Err(ReadOnlyExecutor::refuse(call))
    }
}
