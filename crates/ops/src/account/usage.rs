//! `observe_account_usage`: the home's bytes and inodes as the tenant worker measures them,
//! with the limits recorded and those in effect, and the quota as the kernel reports it
//! (`quota.rs`: used and limit read back, `enforced` only when a limit is held). The result
//! says `complete: false`, with `unreadable_dirs` and `unreadable_entries`, when a bound
//! stopped the walk or the tenant made part of its home unreadable to itself: the figures are
//! then a lower bound.

use provider::Platform;
use registry::types::Hex32;
use registry::{Apply, OpError};

use super::limits::{cagefs_of, lve_limits_of, mysql_limits_of, slice_limits_in_effect};
use super::{
    AccountRef, AccountUsageResult, ObserveAccountUsage, SliceUsage, account_info, account_row,
    quota, tenant_of,
};
use crate::context::{Ctx, provider_error};

/// Bytes and inodes in an account's home, measured by the tenant worker as the tenant (no
/// symlink followed, no other device entered, bounded in time and entries). The basis of a
/// periodic `observe_account_usage`; not yet scheduled by the runner.
pub fn account_usage(ctx: &Ctx, account: &Hex32) -> Result<tenant::DiskUsage, OpError> {
    let info = account_info(ctx, account)?;
    let who = tenant_of(ctx, &info)?;
    match ctx
        .provider
        .as_tenant(&who, &tenant::Request::DiskUsage { budget_ms: None })
        .map_err(provider_error)?
    {
        tenant::TenantResult::DiskUsage(usage) => Ok(usage),
        // as_tenant checks the reply answers the request; this arm cannot be reached.
        other => Err(OpError::permanent(
            "tenant_reply_invalid",
            format!("a {} result answered a disk_usage request", other.name()),
        )),
    }
}

impl Apply<Ctx> for ObserveAccountUsage {
    fn apply(ctx: &mut Ctx, req: &AccountRef) -> Result<AccountUsageResult, OpError> {
        let info = account_info(ctx, &req.id)?;
        let usage = account_usage(ctx, &req.id)?;
        let row = account_row(ctx, &req.id)?;
        let fs = quota::homes_fs(ctx)?;
        let quota = quota::status(ctx, &fs, &info.home, info.uid)?;
        let limits_recorded = row.limits;
        let (limits_in_effect, cagefs, slice) = match ctx.provider.platform() {
            Platform::CloudLinux => (
                lve_limits_of(ctx, &info.username)?,
                Some(cagefs_of(ctx, &info.username)?),
                None,
            ),
            // The slice's limits as systemd holds them, once the node set some, and its
            // counters.
            Platform::Debian => {
                let in_effect = match limits_recorded {
                    Some(recorded) => slice_limits_in_effect(ctx, &info, &recorded)?,
                    None => None,
                };
                let used = ctx
                    .provider
                    .slice_usage(info.uid)
                    .map_err(provider_error)?;
                let slice = SliceUsage {
                    cpu_usage_nsec: used.cpu_usage_nsec,
                    memory_bytes: used.memory_bytes,
                    tasks: used.tasks,
                    io_read_bytes: used.io_read_bytes,
                    io_write_bytes: used.io_write_bytes,
                };
                (in_effect, None, Some(slice))
            }
        };
        let mysql_limits_recorded = row.mysql_limits();
        let mysql_limits_in_effect = mysql_limits_of(ctx, &info.username)?;
        Ok(AccountUsageResult {
            mysql_limits_recorded,
            mysql_limits_in_effect,
            username: info.username,
            disk_bytes: usage.bytes,
            inodes: usage.inodes,
            complete: usage.complete,
            unreadable_dirs: usage.unreadable_dirs,
            unreadable_entries: usage.unreadable_entries,
            disk_quota_mib: row.disk_quota_mib,
            inode_quota: row.inode_quota,
            quota,
            limits_recorded,
            limits_in_effect,
            cagefs,
            slice,
        })
    }
}
