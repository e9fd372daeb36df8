//! The `runtime` family (node scope): what the node's shared services and host look like now,
//! in a schema a control plane can rely on: every field typed, states as enums.
//!
//! Services: Apache, every configured PHP-FPM version, MariaDB, Postfix, Dovecot; and on
//! Debian each tenant's own FPM master (`tenant_php`), one per account and version its
//! domains use, its unit's state from the same `systemctl show`. Whether
//! each is running comes from `systemctl show` (a closed unit table, never a unit from a
//! request); whether it is installed and its version from dpkg's status file on Debian (on
//! CloudLinux the version is `null`: its package database is not a text file, and `rpm -q`
//! is not a program of the node yet). Load and memory come from `/proc`, disk from
//! `statvfs` of `/`, `/home` and `/var/lib/mysql`, all through `sysconf`.

pub use declarations::runtime::*;


use provider::{ServiceUnit, UnitState};
use registry::types::Hex32;
use registry::{Apply, Derive, Derived, OpError, Owner, Purge};

use crate::account::AccountRow;
use crate::context::{Ctx, provider_error, store_error};
use crate::php::pool;

crash::points! {}

impl Purge<Ctx> for Runtime {
    /// Observations leave nothing behind, for a tenant or for the node.
    fn purge(_: &mut Ctx, _: &Hex32) -> Result<(), OpError> {
        Ok(())
    }
}

impl Derive<Ctx> for Runtime {
    /// Nothing: an observation derives nothing.
    fn derive(_: &Ctx) -> Result<Vec<Derived>, OpError> {
        Ok(Vec::new())
    }
}

const DISK_PATHS: &[&str] = &["/", "/home", "/var/lib/mysql"];

/// A unit's state as the result types it.
fn state_of(shown: &UnitState) -> ServiceState {
    if shown.load_state == "not-found" || shown.load_state.is_empty() {
        return ServiceState::NotFound;
    }
    match shown.active_state.as_str() {
        "active" => ServiceState::Active,
        "reloading" => ServiceState::Reloading,
        "inactive" => ServiceState::Inactive,
        "failed" => ServiceState::Failed,
        "activating" => ServiceState::Activating,
        "deactivating" => ServiceState::Deactivating,
        _ => ServiceState::Unknown,
    }
}

/// Each account's own FPM masters, one per version its web domains use, with their units'
/// states (none where the platform has no tenant masters), in account order. The rows are
/// read once for the node, not once per account.
fn tenant_masters(ctx: &Ctx) -> Result<Vec<TenantPhpStatus>, OpError> {
    let mut used = pool::versions_by_account(ctx)?;
    let mut out = Vec::new();
    for account in ctx.view().all::<AccountRow>().map_err(store_error)? {
        let versions = used.remove(&Owner::Tenant(account.id.clone())).unwrap_or_default();
        for version in versions {
            let uid = account.row.uid;
            let Some(shown) = ctx
                .provider
                .tenant_fpm_state(version, uid)
                .map_err(provider_error)?
            else {
                continue;
            };
            out.push(TenantPhpStatus {
                account: account.id.to_string(),
                php_version: version.as_str().to_owned(),
                unit: ctx.provider.php_fpm_layout(version).tenant_unit(uid),
                state: state_of(&shown),
            });
        }
    }
    Ok(out)
}

impl Apply<Ctx> for ObserveRuntime {
    fn apply(ctx: &mut Ctx, _: &ObserveRuntimeRequest) -> Result<RuntimeResult, OpError> {
        let p = &ctx.provider;
        let mut units = vec![ServiceUnit::Apache];
        units.extend(p.php_fpm_versions().map_err(provider_error)?);
        units.extend([
            ServiceUnit::Mariadb,
            ServiceUnit::Postfix,
            ServiceUnit::Dovecot,
        ]);
        let mut services = Vec::new();
        for unit in units {
            let shown = p.unit_state(unit).map_err(provider_error)?;
            let installed = shown.load_state != "not-found" && !shown.load_state.is_empty();
            let state = state_of(&shown);
            let (service, php_version) = match unit {
                ServiceUnit::Apache => (ServiceKind::Apache, None),
                ServiceUnit::PhpFpm(a, b) => (ServiceKind::PhpFpm, Some(format!("{a}.{b}"))),
                ServiceUnit::Mariadb => (ServiceKind::Mariadb, None),
                ServiceUnit::Postfix => (ServiceKind::Postfix, None),
                ServiceUnit::Dovecot => (ServiceKind::Dovecot, None),
            };
            services.push(ServiceStatus {
                service,
                php_version,
                unit: unit.unit(p.platform()),
                installed,
                state,
                version: p.package_version(unit).map_err(provider_error)?,
            });
        }
        let load = p.host_load().map_err(provider_error)?;
        let memory = p.host_memory().map_err(provider_error)?;
        let mut disks = Vec::new();
        for path in DISK_PATHS {
            if let Some(d) = p.disk_space(path).map_err(provider_error)? {
                disks.push(DiskStatus {
                    path: (*path).to_owned(),
                    total_bytes: d.total_bytes,
                    available_bytes: d.available_bytes,
                    total_inodes: d.total_inodes,
                    free_inodes: d.free_inodes,
                });
            }
        }
        let tenant_php = tenant_masters(ctx)?;
        let p = &ctx.provider;
        Ok(RuntimeResult {
            platform: p.platform().as_str().to_owned(),
            tenant_php,
            services,
            load: LoadAverage {
                one: load.one,
                five: load.five,
                fifteen: load.fifteen,
            },
            memory: MemoryStatus {
                total_bytes: memory.total_bytes,
                available_bytes: memory.available_bytes,
                swap_total_bytes: memory.swap_total_bytes,
                swap_free_bytes: memory.swap_free_bytes,
            },
            disks,
        })
    }
}
