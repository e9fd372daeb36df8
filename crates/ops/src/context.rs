//! What a handler works with: the provider, state.db, and the bookkeeping that lets a runner
//! pass coalesce reloads of shared services and revert their configuration when a reload fails.
//!
//! Handlers read resource rows through [`Ctx::view`], one typed view of state.db that already
//! includes this job's row and the rows of the batch's earlier jobs, which are committed only
//! with the batch ([`state::View`], [`state::Pending`]): a file derived whole from state is
//! rendered from the view alone. A handler records its own row with [`Ctx::set_row`] (or
//! [`Ctx::forget_row`]) before it renders, and the runner commits it with the job.
//!
//! A change to a shared service's configuration goes through [`Ctx::write_service_config`] or
//! [`Ctx::remove_service_config`]: the new file is written beside the old one, moved into
//! place atomically, the service's configuration test is run, and on failure the old file is
//! put back and the operation fails. The reload itself waits for the end of the batch
//! ([`Ctx::finish_batch`]), once per service however many jobs touched it.
//!
//! Handlers read the time from [`Ctx::clock`], the runner's, never the system's, so a
//! simulation that owns time owns it here too.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clock::Clock;
use provider::{AuditRecord, Provider, ProviderError};
use registry::{AuditDetail, Hex32, OpError, Owner};
use state::{ClaimedJob, Pending, ResourceChange, ResourceKey, StateDb, View};
use store::{StoreError, StoredRow};

/// A shared service whose configuration the node changes.
///
/// Declared in reload order (a batch reloads its services in `Ord` order): FPM first, so a
/// pool's socket is live before Apache's handler points at it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Service {
    /// The FPM of one PHP version: its pools are tested with `php-fpmX.Y -t -y` and the unit
    /// reloaded once per batch.
    PhpFpm(provider::PhpVersion),
    /// The FPM master of one tenant (its uid) for one PHP version, where tenants have their
    /// own (`provider::PhpFpmLayout::tenant_dir`): its configuration is tested with
    /// `php-fpmX.Y -t -y`, and its unit reloaded (started, or stopped when the configuration
    /// went) once per batch.
    TenantFpm(provider::PhpVersion, u32),
    Apache,
    /// Tested with `postfix check`, reloaded with `postfix reload`.
    Postfix,
    /// Tested with `doveconf -n`, reloaded with `doveadm reload`.
    Dovecot,
    /// OpenDKIM's KeyTable and SigningTable: no configuration test exists for them (they are
    /// derived whole from validated values); reloaded with `systemctl reload` when running.
    OpenDkim,
    /// systemd's own unit files (a tenant's slice limits): derived whole from validated
    /// numbers, so no test; `systemctl daemon-reload` makes systemd read them (skipped on a
    /// sysroot, which no service manager looks after).
    Systemd,
}

impl Service {
    pub fn name(self) -> &'static str {
        match self {
            Service::Apache => "apache",
            Service::PhpFpm(version) | Service::TenantFpm(version, _) => {
                provider::FpmName::fpm_name(version)
            }
            Service::Postfix => "postfix",
            Service::Dovecot => "dovecot",
            Service::OpenDkim => "opendkim",
            Service::Systemd => "systemd",
        }
    }

    fn test(self, provider: &Provider) -> Result<(), ProviderError> {
        match self {
            Service::Apache => provider.apache_configtest(),
            Service::PhpFpm(version) => provider.php_fpm_configtest(version),
            Service::TenantFpm(version, uid) => provider.tenant_fpm_configtest(version, uid),
            Service::Postfix => provider.postfix_check(),
            Service::Dovecot => provider.doveconf_check(),
            Service::OpenDkim | Service::Systemd => Ok(()),
        }
    }

    fn reload(self, provider: &Provider) -> Result<(), ProviderError> {
        match self {
            // A stopped Apache is not started (the reload would start it); the changed files
            // are in place for its next start.
            Service::Apache => provider.apache_reload().map(|reloaded| {
                if !reloaded {
                    tracing::warn!(
                        service = "apache",
                        "Apache is not running: its configuration changed but it was not \
                         started; it takes effect when Apache is started"
                    );
                }
            }),
            Service::PhpFpm(version) => provider.php_fpm_reload(version),
            Service::TenantFpm(version, uid) => provider.tenant_fpm_reload(version, uid),
            Service::Postfix => provider.postfix_reload(),
            Service::Dovecot => provider.dovecot_reload(),
            Service::OpenDkim => provider.opendkim_reload().map(|_| ()),
            Service::Systemd => provider.systemd_daemon_reload().map(|_| ()),
        }
    }
}

/// A configuration file changed in this batch, with what to put back if the reload fails.
#[derive(Debug)]
struct Changed {
    service: Service,
    path: PathBuf,
    previous: Option<Vec<u8>>,
    secret_group: Option<SecretGroup>,
}

/// A file's path, its content before the change, and its secret group.
type Previous = (PathBuf, Option<Vec<u8>>, Option<SecretGroup>);

/// The group a secret file (mode 0640) is readable by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecretGroup {
    /// A service's group, looked up by name (`dovecot`).
    Named(&'static str),
    /// A gid the node recorded (an account's own group, for its `AuthUserFile`s, which
    /// Apache reads as the account).
    Id(u32),
}

/// One file of a service's configuration, for [`Ctx::write_service_configs`].
#[derive(Clone, Debug)]
pub struct ConfigFile {
    pub path: PathBuf,
    pub content: Vec<u8>,
    /// `Some(group)`: mode 0640 with that group (a file holding secrets); `None`: 0644.
    pub secret_group: Option<SecretGroup>,
}

pub struct Ctx {
    pub provider: Arc<Provider>,
    pub state: StateDb,
    /// The running job's row and the batch's rows, not committed yet.
    pending: Pending,
    job_services: BTreeSet<Service>,
    changed: Vec<Changed>,
    /// The node's data directory, for handlers that read uploaded blobs (`blobs/in`).
    layout: Option<store::Layout>,
    /// The certificates whose chain was put in place in this batch (account, id, the chain's
    /// fingerprint): their listeners are checked when the batch ends.
    fresh_certificates: Vec<(Hex32, Hex32, String)>,
}

impl Ctx {
    pub fn new(provider: Arc<Provider>, state: StateDb) -> Ctx {
        Ctx {
            provider,
            state,
            pending: Pending::default(),
            job_services: BTreeSet::new(),
            changed: Vec::new(),
            layout: None,
            fresh_certificates: Vec::new(),
        }
    }

    /// Gives handlers the node's data directory (the runner always does).
    pub fn with_layout(mut self, layout: store::Layout) -> Ctx {
        self.layout = Some(layout);
        self
    }

    /// The node's data directory; a context made without one cannot read blobs.
    pub fn layout(&self) -> Result<&store::Layout, OpError> {
        self.layout.as_ref().ok_or_else(|| {
            OpError::permanent(
                "blobs_unavailable",
                "this context has no data directory to read blobs from",
            )
        })
    }

    /// The clock a handler reads the time from (a certificate's validity, a backup's date):
    /// the store's, which is the runner's, so a simulation that owns time owns it here too.
    pub fn clock(&self) -> &dyn Clock {
        &**self.state.clock()
    }

    /// The resource rows as this job sees them: state.db with this job's change, the
    /// batch's earlier jobs' changes and this job's purges applied.
    pub fn view(&self) -> View<'_> {
        View::new(&self.state, &self.pending)
    }

    /// The resource rows as this job found them: state.db with the batch's changes, without
    /// this job's (what a failed job puts its files back to).
    pub fn view_before_job(&self) -> View<'_> {
        View::before_job(&self.state, &self.pending)
    }

    /// Called by the runner before it applies `job`: the rows the job records are its
    /// resource's.
    pub fn begin_job(&mut self, job: &ClaimedJob) {
        self.pending.begin_job(job.key());
    }

    /// Records the row this job leaves behind (written with the job's completion, shown by
    /// [`Ctx::view`] at once).
    pub fn set_row<T: StoredRow>(&mut self, row: &T) {
        self.pending.set_row(row);
    }

    /// Records that this job removed its resource.
    pub fn forget_row(&mut self) {
        self.pending.forget_row();
    }

    /// Drops the row change a handler recorded, keeping the services it touched: a replayed
    /// request (`rebuild_account`) re-derives files without moving its rows.
    pub fn discard_row_change(&mut self) {
        self.pending.discard_change();
    }

    /// For a purge hook: from now on the view leaves out `account`'s rows of `T`'s family,
    /// so the files it renders next are without them; the hook then forgets them in
    /// state.db ([`Ctx::forget_rows_of`]).
    pub fn drop_rows_of<T: StoredRow>(&mut self, account: &Hex32) {
        self.pending
            .drop_rows_of(T::FAMILY, &Owner::Tenant(account.clone()));
    }

    /// Forgets `account`'s rows of `T`'s family in state.db at once, after its purge hook
    /// removed them from the OS. A crash before this runs leaves the rows, so the purge runs
    /// again.
    pub fn forget_rows_of<T: StoredRow>(&mut self, account: &Hex32) -> Result<(), OpError> {
        self.drop_rows_of::<T>(account);
        self.state
            .forget_resources_of(account, T::FAMILY)
            .map_err(store_error)?;
        Ok(())
    }

    /// Runs `f` as a job of its own on `key` (a request replayed by `rebuild_account`): the
    /// rows it records are shown to it alone, and dropped when it returns.
    pub fn replaying<R>(&mut self, key: ResourceKey, f: impl FnOnce(&mut Ctx) -> R) -> R {
        let outer = self.pending.nest(key);
        let out = f(self);
        self.pending.unnest(outer);
        out
    }

    /// Called by the runner after each job: what the job did to its resource row and which
    /// shared services it touched.
    pub fn take_job_effects(&mut self) -> (ResourceChange, BTreeSet<Service>) {
        (
            self.pending.take_job(),
            std::mem::take(&mut self.job_services),
        )
    }

    /// Called by the runner for a job that waits for its batch's reloads before it is
    /// completed: its row stays in the view until the batch ends ([`Ctx::finish_batch`]).
    pub fn hold_for_batch(&mut self, job: &ClaimedJob, change: &ResourceChange) {
        self.pending.hold(job.key(), change);
    }

    /// Installs a shared service's configuration file: written to a temporary file and moved
    /// into place atomically, tested, and put back as it was if the test fails.
    pub fn write_service_config(
        &mut self,
        service: Service,
        path: &Path,
        content: &[u8],
    ) -> Result<(), OpError> {
        // Written and tested even when unchanged: a crash may have put this content in place
        // before it was tested, or before the service was reloaded.
        let previous = self.provider.read_config(path).map_err(provider_error)?;
        self.provider
            .write_config_atomic(path, content, 0o644)
            .map_err(provider_error)?;
        self.test_or_revert(service, vec![(path.to_owned(), previous, None)])
    }

    /// Installs several files of one service together: each written atomically, then one
    /// configuration test; if it fails, every one of them is put back as it was.
    pub fn write_service_configs(
        &mut self,
        service: Service,
        files: &[ConfigFile],
    ) -> Result<(), OpError> {
        let mut previous = Vec::with_capacity(files.len());
        for file in files {
            let before = self
                .provider
                .read_config(&file.path)
                .map_err(provider_error)?;
            previous.push((file.path.clone(), before, file.secret_group));
        }
        for file in files {
            if let Err(e) = write(&self.provider, &file.path, &file.content, file.secret_group) {
                for (path, before, group) in &previous {
                    restore(&self.provider, path, before.as_deref(), *group);
                }
                return Err(provider_error(e));
            }
        }
        self.test_or_revert(service, previous)
    }

    /// Removes a shared service's configuration file, tested like a write.
    pub fn remove_service_config(&mut self, service: Service, path: &Path) -> Result<(), OpError> {
        let previous = self.provider.read_config(path).map_err(provider_error)?;
        if previous.is_some() {
            self.provider.remove_config(path).map_err(provider_error)?;
        }
        // Tested and reloaded even when already absent: a crash may have removed the file
        // before the service was reloaded.
        self.test_or_revert(service, vec![(path.to_owned(), previous, None)])
    }

    fn test_or_revert(&mut self, service: Service, files: Vec<Previous>) -> Result<(), OpError> {
        if let Err(e) = service.test(&self.provider) {
            for (path, previous, group) in &files {
                restore(&self.provider, path, previous.as_deref(), *group);
            }
            return Err(OpError::permanent(
                "config_test_failed",
                format!(
                    "the {} configuration test failed; the change was reverted: {}",
                    service.name(),
                    e
                ),
            ));
        }
        self.job_services.insert(service);
        // Keep the oldest known content: a revert puts back what was there before the batch.
        for (path, previous, secret_group) in files {
            if !self.changed.iter().any(|c| c.path == path) {
                self.changed.push(Changed {
                    service,
                    path,
                    previous,
                    secret_group,
                });
            }
        }
        Ok(())
    }

    /// Reloads `service` now if this batch changed its configuration, instead of waiting for
    /// the end of the batch: for a job that needs the new configuration live while it runs
    /// (an ACME challenge answered by a vhost written earlier in the batch). The changes stay
    /// recorded, so the batch still reloads and, on a failed reload, reverts them.
    pub fn reload_now(&mut self, service: Service) -> Result<(), OpError> {
        if !self.changed.iter().any(|c| c.service == service) {
            return Ok(());
        }
        service.reload(&self.provider).map_err(|e| {
            OpError::retryable(
                "reload_failed",
                format!("the {} reload failed: {e}", service.name()),
            )
        })
    }

    /// Ends a batch: reloads each service touched in it, once. A service whose reload fails
    /// gets its configuration files put back as they were before the batch and is reloaded
    /// again; its name is returned so the runner fails the jobs that touched it.
    pub fn finish_batch(&mut self) -> BTreeSet<Service> {
        let services: BTreeSet<Service> = self.changed.iter().map(|c| c.service).collect();
        let mut failed = BTreeSet::new();
        for service in services {
            crash::point(crash::runner::BATCH_BEFORE_RELOAD);
            let reloaded = service.reload(&self.provider);
            crash::point(crash::runner::BATCH_AFTER_RELOAD);
            if let Err(e) = reloaded {
                tracing::error!(service = service.name(), error = %e, "reload failed; reverting this batch's configuration changes");
                for changed in self.changed.iter().filter(|c| c.service == service) {
                    restore(
                        &self.provider,
                        &changed.path,
                        changed.previous.as_deref(),
                        changed.secret_group,
                    );
                }
                if let Err(e) = service.reload(&self.provider) {
                    tracing::error!(service = service.name(), error = %e, "reload after revert failed too");
                }
                failed.insert(service);
            }
        }
        // With the batch's rows still in the view: the listeners of a new certificate.
        let fresh = std::mem::take(&mut self.fresh_certificates);
        if !fresh.is_empty() {
            let failed: Vec<Service> = failed.iter().copied().collect();
            crate::certificate::listeners::follow(self, &fresh, &failed);
        }
        self.changed.clear();
        self.pending.clear_batch();
        failed
    }

    /// Records that certificate `id` of `account` has a chain with `fingerprint` in place:
    /// [`Ctx::finish_batch`] checks its listeners after the reloads.
    pub fn certificate_in_place(&mut self, account: &Hex32, id: &Hex32, fingerprint: &str) {
        self.fresh_certificates.retain(|(_, cert, _)| cert != id);
        self.fresh_certificates
            .push((account.clone(), id.clone(), fingerprint.to_owned()));
    }
}

fn write(
    provider: &Provider,
    path: &Path,
    content: &[u8],
    secret_group: Option<SecretGroup>,
) -> Result<(), ProviderError> {
    match secret_group {
        Some(SecretGroup::Named(group)) => provider.write_group_secret(path, content, group),
        Some(SecretGroup::Id(gid)) => provider.write_gid_secret(path, content, gid),
        None => provider.write_config_atomic(path, content, 0o644),
    }
}

fn restore(
    provider: &Provider,
    path: &Path,
    previous: Option<&[u8]>,
    secret_group: Option<SecretGroup>,
) {
    let restored = match previous {
        Some(content) => write(provider, path, content, secret_group),
        None => provider.remove_config(path),
    };
    if let Err(e) = restored {
        tracing::error!(path = %path.display(), error = %e, "could not restore a configuration file");
    }
}

impl Ctx {
    /// The programs run since the last call, as audit trail records with the Unix time in ms
    /// each started: the runner commits them with the job they belong to, or on their own.
    pub fn take_invocations(&self) -> Vec<(i64, AuditDetail)> {
        self.provider
            .take_audit_records()
            .into_iter()
            .map(invocation)
            .collect()
    }
}

fn invocation(record: AuditRecord) -> (i64, AuditDetail) {
    let at = i64::try_from(record.at).unwrap_or(i64::MAX);
    (
        at,
        AuditDetail::Invocation {
            program: record.program,
            path: record.path,
            args: record.args,
            status: record.status,
            ms: record.ms,
            backend: record.backend,
            error: record.error,
        },
    )
}

/// Turns a store failure into the operation's failure: a row that does not have its
/// family's shape is permanent (`state_corrupt`), anything else is retried.
pub fn store_error(e: StoreError) -> OpError {
    match e {
        StoreError::InvalidRow { ref source, .. } => {
            OpError::permanent("state_corrupt", format!("{e}: {source}"))
        }
        other => OpError::retryable("state_unavailable", other.to_string()),
    }
}

/// Turns a provider failure into the operation's failure. Tenant paths are the tenant's
/// problem (the operation fails, nothing else); the rest keeps the provider's stable code.
pub fn provider_error(e: ProviderError) -> OpError {
    let retryable = matches!(
        e.code(),
        "program_timeout" | "program_spawn_failed" | "mariadb_unavailable"
    );
    OpError {
        code: e.code().into(),
        message: e.to_string(),
        retryable,
    }
}
