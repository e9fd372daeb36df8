//! `layerone-tenant`: work inside a tenant's home, done as the tenant (DESIGN.md section 8).
//!
//! [`Provider::as_tenant`] starts the worker through the one audited `execute` (timeout,
//! output cap, audit line) with the tenant's identity as arguments, feeds it one typed
//! request on stdin and parses its one typed reply from stdout. The identity comes from the
//! system's passwd and group files ([`Provider::tenant_identity`]); the worker's path is the
//! `layerone-tenant` beside the running executable, or the one configured with
//! [`Provider::with_tenant_worker`]; nothing of either comes from a request. The reply was
//! written by a process running as the tenant, so it is parsed as hostile input: bounded,
//! strictly typed, and checked to answer the request that was sent.
//!
//! # How the worker is started
//!
//! - **Real backend**: started for real; it drops to the tenant itself (`crates/tenant`,
//!   `sandbox.rs`).
//! - **Sim backend, provider running as root**: started for real too. The drop is real and
//!   testable as root, and the Sim sysroot's homes are chowned to their tenants.
//! - **Sim backend, provider not root**: it could not drop to a tenant, so the same request
//!   code runs in-process, as the provider's own user, without the drop. The audit line
//!   says `sim` instead of `real`; [`Provider::tenant_isolation`] says which applies.
//!
//! # CloudLinux
//!
//! On the `cloudlinux` profile the worker is started inside the tenant's LVE and CageFS:
//!
//! ```text
//! /bin/lve_suwrapper <uid> <worker> --uid <uid> --gid <gid> --groups <g,...> --home <home>
//! ```
//!
//! `lve_suwrapper LVE_ID COMMAND [ARGS...]` is CloudLinux's tool (package `lve-wrappers`)
//! for root to run a command inside the LVE `LVE_ID`; an account's LVE id is its uid. It
//! keeps the caller's credentials, so the worker still starts as root and drops itself,
//! and its arguments stay a list (no shell). Without `-n` ("without namespace") it also
//! enters the LVE's namespace, where CageFS mounts the user's cage on LVE kernels.
//! The alternatives were considered and not used:
//! - `cagefs_enter_user USER COMMAND` (`/sbin/cagefs_enter_user`, lve-wrappers 0.6+) switches
//!   to the user itself, before the worker could set its own groups, limits and
//!   `no_new_privs`, and is documented with the command as one string;
//! - `cagefs_enter` / `cagefs_enter.proxied` are run by the user, not root.
//!
//! Neither form could be run here (no CloudLinux host): the Sim backend checks the argv has
//! the documented shape and records it in the audit log. Confirming on a CloudLinux host
//! that the worker then sees the cage (for example that `/etc/passwd` is the cage's) is left
//! to an integration test there.

use std::path::PathBuf;

use tenant::protocol::ErrorCode;
use tenant::wire::decode_reply;
use tenant::{Identity, Reply, Request, TenantError, TenantResult};

use crate::error::ProviderError;
use crate::exec::Argv;
use crate::platform::Platform;
use crate::program::Program;
use crate::provider::{Backend, Provider};

/// The worker's file name, looked for beside the running executable.
pub const TENANT_WORKER_NAME: &str = "layerone-tenant";

/// How tenant work is isolated under the current configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TenantIsolation {
    /// A real `layerone-tenant` process that drops to the tenant.
    Worker { path: PathBuf },
    /// The request code runs in this process without any drop (Sim, not root).
    InProcess,
}

impl Provider {
    /// Uses the worker at `path` instead of the one beside the running executable.
    ///
    /// # Panics
    /// If `path` is not absolute (programs are never looked up in a search path).
    pub fn with_tenant_worker(mut self, path: impl Into<PathBuf>) -> Provider {
        let path = path.into();
        assert!(
            path.is_absolute(),
            "the tenant worker path must be absolute, got {}",
            path.display()
        );
        self.tenant_worker = Some(path);
        self
    }

    /// How [`Provider::as_tenant`] will run.
    pub fn tenant_isolation(&self) -> TenantIsolation {
        match self.program_path(Program::TenantWorker) {
            // On CloudLinux the Sim's lve_suwrapper runs the worker under the same rule.
            Some(path) if self.runs_real(Program::TenantWorker) => TenantIsolation::Worker { path },
            _ => TenantIsolation::InProcess,
        }
    }

    /// The tenant `username` as the worker should become it: uid, primary gid, the groups
    /// whose member list names it, and its home; `None` if there is no such user.
    pub fn tenant_identity(&self, username: &str) -> Result<Option<Identity>, ProviderError> {
        let Some(user) = self.lookup_user(username)? else {
            return Ok(None);
        };
        let groups = self.supplementary_groups(username)?;
        Identity::new(user.uid, user.gid, groups, user.home)
            .map(Some)
            .map_err(tenant_error)
    }

    /// Runs `request` as the tenant `who` (whose `home` is a system path, mapped here under
    /// the provider's root) and returns its result.
    pub fn as_tenant(
        &self,
        who: &Identity,
        request: &Request,
    ) -> Result<TenantResult, ProviderError> {
        let mapped = Identity::new(
            who.uid,
            who.gid,
            who.groups.clone(),
            self.sysconf(&who.home),
        )
        .map_err(tenant_error)?;
        let stdin = serde_json::to_vec(request).expect("a request always serializes");
        let (program, argv) = self.tenant_argv(&mapped)?;
        let output = self.execute(
            program,
            &argv,
            Some(&stdin),
            Program::TenantWorker.default_timeout(),
        )?;
        if output.stdout_truncated {
            return Err(reply_invalid("the reply was cut at the output cap"));
        }
        match decode_reply(&output.stdout) {
            Ok(Reply::Ok(result)) if result.name() == request.name() => Ok(result),
            Ok(Reply::Ok(result)) => Err(reply_invalid(format!(
                "a {} result answered a {} request",
                result.name(),
                request.name()
            ))),
            Ok(Reply::Error(e)) if e.code == ErrorCode::PathUnsafe => {
                Err(ProviderError::TenantPath {
                    path: mapped.home,
                    reason: e.message,
                })
            }
            Ok(Reply::Error(e)) => Err(tenant_error(e)),
            Err(why) => Err(reply_invalid(why)),
        }
    }

    /// The program to start and its argv: the worker itself, or on CloudLinux the worker
    /// wrapped by `lve_suwrapper` (see the module documentation).
    pub(crate) fn tenant_argv(&self, who: &Identity) -> Result<(Program, Argv), ProviderError> {
        let mut argv = Argv::new();
        match self.platform {
            Platform::Debian => {
                for arg in who.to_args() {
                    argv.arg(arg);
                }
                Ok((Program::TenantWorker, argv))
            }
            Platform::CloudLinux => {
                let worker =
                    self.program_path(Program::TenantWorker)
                        .ok_or(ProviderError::Unsupported {
                            program: Program::TenantWorker,
                            platform: self.platform,
                        })?;
                argv.arg(who.uid.to_string()).arg(worker);
                for arg in who.to_args() {
                    argv.arg(arg);
                }
                Ok((Program::LveSuwrapper, argv))
            }
        }
    }

    /// `Program::path`, except that the tenant worker is the configured one or the one
    /// beside the running executable (`None` if that cannot be determined).
    pub(crate) fn program_path(&self, program: Program) -> Option<PathBuf> {
        match program {
            Program::TenantWorker => self.tenant_worker.clone().or_else(|| {
                let exe = std::env::current_exe().ok()?;
                Some(exe.parent()?.join(TENANT_WORKER_NAME))
            }),
            other => other.path(self.platform).map(PathBuf::from),
        }
    }

    /// `Backend::runs_real`, except that under Sim the tenant worker runs for real whenever
    /// the provider is root (the drop is real and safe in a sandbox: the worker only touches
    /// the home it is given, as its tenant).
    pub(crate) fn runs_real(&self, program: Program) -> bool {
        match (&self.backend, program) {
            (Backend::Sim { .. }, Program::TenantWorker) => self.is_root,
            (backend, program) => backend.runs_real(program),
        }
    }
}

fn tenant_error(e: TenantError) -> ProviderError {
    ProviderError::Tenant {
        code: e.code,
        message: e.message,
    }
}

fn reply_invalid(why: impl Into<String>) -> ProviderError {
    ProviderError::TenantReply { reason: why.into() }
}
