//! Stopping every process of a tenant before its account is removed: the tenant worker's
//! `TerminateProcesses` request (`crates/tenant/src/terminate.rs`), run through
//! [`Provider::as_tenant`] like any tenant work, so the kills are made by a process that is the
//! tenant and can signal nothing else.
//!
//! # Under Sim
//!
//! The tenants of a Sim sysroot are simulated, but the worker that would signal them runs for
//! real when the provider is root (`programs/tenant_worker.rs`), and a kill as a uid reaches
//! every process of that uid on this machine. A sysroot's uids are whatever its useradd handed
//! out (1000 and up by default), which on a developer's machine or a CI host are real people's
//! and services' uids. So under Sim the worker is started only for a uid in
//! [`SIM_REAL_PROCESS_UIDS`], a band that no allocator on a Linux host uses (above systemd's
//! container ranges, below the foreign-uid range) and that this machine's own `/etc/passwd`
//! does not name: the tests that start real processes as a tenant give their sysroot a
//! `login.defs` with that band. For any other uid no real process can be the simulated
//! tenant's, and the model does nothing and reports none found. Production (`Backend::Real`)
//! always runs the worker.

use std::ops::RangeInclusive;

use tenant::{Identity, Request, TenantResult, Terminated};

use crate::error::ProviderError;
use crate::program::Program;
use crate::provider::{Backend, Provider};

/// The uids a Sim sysroot's tenants may have for their processes to be real: 2 000 000 000 to
/// 2 099 999 999 (systemd's documented ranges end at 1 879 048 191 for containers and start
/// again at 2 147 352 576 for foreign uids; subordinate uid ranges of rootless containers
/// start at 100 000 and are 65 536 wide per user).
pub const SIM_REAL_PROCESS_UIDS: RangeInclusive<u32> = 2_000_000_000..=2_099_999_999;

impl Provider {
    /// Kills every process of the tenant `who` (its uid), as the tenant, until none runs;
    /// `tenant_processes_remain` when some still run after the worker's bound. The home in
    /// `who` is not touched. See the module documentation for Sim.
    pub fn terminate_tenant_processes(&self, who: &Identity) -> Result<Terminated, ProviderError> {
        if !self.signals_for_real(who.uid)? {
            return Ok(Terminated::default());
        }
        match self.as_tenant(who, &Request::TerminateProcesses { uid: who.uid })? {
            TenantResult::TerminateProcesses(done) => Ok(done),
            // as_tenant checks the reply answers the request; kept typed all the same.
            other => Err(ProviderError::TenantReply {
                reason: format!("a {} result answered terminate_processes", other.name()),
            }),
        }
    }

    /// Whether a kill as `uid` reaches only the tenant's own processes (see the module
    /// documentation).
    fn signals_for_real(&self, uid: u32) -> Result<bool, ProviderError> {
        Ok(match &self.backend {
            Backend::Real => true,
            Backend::Sim { .. } => {
                self.runs_real(Program::TenantWorker)
                    && SIM_REAL_PROCESS_UIDS.contains(&uid)
                    && !this_machine_names_uid(uid)?
            }
        })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;
    use crate::testing::{audit_records, sim_provider};

    /// A Sim tenant outside the band, or a provider that is not root, never starts a worker
    /// that could signal this machine's processes.
    #[test]
    fn sim_signals_only_uids_of_the_band_unknown_to_this_machine() {
        let dir = tempfile::tempdir().unwrap();
        let mut provider = sim_provider(Platform::Debian, dir.path(), vec![])
            .with_tenant_worker("/nonexistent/layerone-tenant");
        provider.is_root = true;
        let who = |uid| Identity::new(uid, uid, vec![], "/home/acme".into()).unwrap();
        for uid in [1000, 65_533, 1_999_999_999, 2_100_000_000] {
            assert_eq!(
                provider.terminate_tenant_processes(&who(uid)).unwrap(),
                Terminated::default()
            );
        }
        assert!(audit_records(&provider).unwrap().is_empty());
        provider.is_root = false;
        assert_eq!(
            provider
                .terminate_tenant_processes(&who(2_000_000_000))
                .unwrap(),
            Terminated::default()
        );
        // Root, in the band: the worker is started (here a missing one, which fails).
        provider.is_root = true;
        let err = provider
            .terminate_tenant_processes(&who(2_000_000_001))
            .unwrap_err();
        assert_eq!(err.code(), "program_spawn_failed", "{err:?}");
        assert_eq!(audit_records(&provider).unwrap().len(), 1);
    }
}
