//! Stopping every process of a tenant before its account is removed: the tenant worker's
//! `TerminateProcesses` request (`crates/tenant/src/terminate.rs`), run through
//! [`Provider::as_tenant`] like any tenant work, so the kills are made by a process that is the
//! tenant and can signal nothing else.
//!
//! # Under a simulation
//!
//! The tenants of a simulated sysroot are simulated, but the worker that would signal them
//! runs for real when the provider is root (`programs/tenant_worker.rs`), and a kill as a uid
//! reaches every process of that uid on this machine. So before the worker is started, the
//! machine is asked whether a kill as the tenant's uid may be sent
//! ([`Machine::may_signal_as`](crate::Machine::may_signal_as)): a server always says yes
//! (the uid was handed out by this node); the simulated machine only for a uid of a band no
//! allocator on a Linux host uses and this machine does not name (`crates/simulator`). When
//! it says no, no real process can be the simulated tenant's: nothing is done and none is
//! reported found.
//!
//! # Under `hidepid=`
//!
//! With `/proc` mounted `hidepid=invisible` (`programs/mount.rs`), a process of the tenant is
//! invisible even to the tenant when the tenant could not trace it: one that made itself not
//! dumpable (`prctl(PR_SET_DUMPABLE, 0)`, or running a binary it may not read), or one running
//! with another group (a set-group-id program). Such a process would escape the worker's scan:
//! the worker would find nothing to kill, and `userdel` would refuse a user still running,
//! every time. So this one request's worker also holds the group exempted from `hidepid=`
//! ([`PROC_GROUP`], where the node has it): it sees every process, as it did before
//! `hidepid=`, and may signal no more than before, since signals follow the uid. The tenant
//! cannot borrow the group from it: the worker is not dumpable, executes nothing, and is
//! invisible to the tenant's processes.

use tenant::{Identity, Request, TenantResult, Terminated};

use crate::error::ProviderError;
use crate::programs::mount::PROC_GROUP;
use crate::programs::tenant_worker::tenant_error;
use crate::provider::Provider;

impl Provider {
    /// Kills every process of the tenant `who` (its uid), as the tenant, until none runs;
    /// `tenant_processes_remain` when some still run after the worker's bound. The home in
    /// `who` is not touched. See the module documentation for a simulation.
    pub fn terminate_tenant_processes(&self, who: &Identity) -> Result<Terminated, ProviderError> {
        if !self.machine.may_signal_as(who.uid)? {
            return Ok(Terminated::default());
        }
        let who = self.seeing_every_process(who)?;
        match self.as_tenant(&who, &Request::TerminateProcesses { uid: who.uid })? {
            TenantResult::TerminateProcesses(done) => Ok(done),
            // as_tenant checks the reply answers the request; kept typed all the same.
            other => Err(ProviderError::TenantReply {
                reason: format!("a {} result answered terminate_processes", other.name()),
            }),
        }
    }

    /// `who` with the group exempted from `/proc`'s `hidepid=` among its supplementary
    /// groups, where the node has that group (see the module documentation).
    fn seeing_every_process(&self, who: &Identity) -> Result<Identity, ProviderError> {
        let Some(group) = self.lookup_group(PROC_GROUP)? else {
            return Ok(who.clone());
        };
        let mut groups = who.groups.clone();
        groups.push(group.gid);
        Identity::new(who.uid, who.gid, groups, who.home.clone()).map_err(tenant_error)
    }
}
