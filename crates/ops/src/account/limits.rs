//! Limits and isolation. LVE limits and CageFS exist on the `cloudlinux` profile only; on
//! `debian` both operations fail `unsupported_on_platform` before anything runs (the provider
//! has no path for `lvectl` or `cagefsctl` there). systemd slices could cap CPU, memory, I/O
//! and tasks per user on Debian (`user-UID.slice` drop-ins), but not entry processes, and
//! PHP-FPM and Apache children run in the services' own slices, not the user's: the limits
//! would look enforced and not be. They stay unsupported until the web stack runs per-user
//! units.
//!
//! On `cloudlinux` every change is read back before the job reports it: `lvectl set-user`
//! then `lvectl list-user`, `cagefsctl --enable`/`--disable` then `--list-enabled`, and the
//! database limits through MySQL Governor, `dbctl set` then `dbctl list --bb` (dbctl exits 0
//! even when it refuses), only where the governor is installed (without it a request with
//! database limits fails `unsupported_on_platform`); limits set again without database
//! limits remove the governor's (`dbctl delete`). The account's purge resets them all
//! (`lvectl delete-user`, `cagefsctl --disable`, `dbctl delete`, `removal.rs`) while the user
//! exists, so a later account of the same name does not inherit them.

use provider::{GovernorLimits, LveLimits};
use registry::{Apply, OpError};

use super::{
    AccountLimitsResult, AccountRow, Limits, MysqlLimits, MysqlLimitsRequest, SetAccountIsolation,
    SetAccountIsolationRequest, SetAccountLimits, SetAccountLimitsRequest, account_info,
    account_row,
};
use crate::context::{Ctx, provider_error};
use crate::php::pool::{self, PoolSync};

/// Database limits as the result reports them, from what was given to `dbctl`.
fn as_mysql_limits(l: GovernorLimits) -> MysqlLimits {
    MysqlLimits {
        cpu_percent: l.cpu_pct,
        read_kib_per_sec: l.read_kibs,
        write_kib_per_sec: l.write_kibs,
    }
}

/// LVE limits as the result reports them.
fn as_limits(l: LveLimits) -> Limits {
    Limits {
        cpu_percent: l.speed_pct,
        memory_mib: l.pmem_mib,
        io_kib_per_sec: l.io_kibs,
        processes: l.nproc,
        entry_processes: l.entry_procs,
    }
}

/// The limits `lvectl list-user` reports for `user`, or `None` when it lists none.
pub(super) fn lve_limits_of(ctx: &Ctx, user: &str) -> Result<Option<Limits>, OpError> {
    Ok(ctx
        .provider
        .lvectl_list_user()
        .map_err(provider_error)?
        .into_iter()
        .find(|(name, _)| name == user)
        .map(|(_, l)| as_limits(l)))
}

pub(super) fn cagefs_of(ctx: &Ctx, user: &str) -> Result<bool, OpError> {
    Ok(ctx
        .provider
        .cagefs_enabled_users()
        .map_err(provider_error)?
        .iter()
        .any(|u| u == user))
}

impl Apply<Ctx> for SetAccountLimits {
    fn apply(ctx: &mut Ctx, req: &SetAccountLimitsRequest) -> Result<AccountLimitsResult, OpError> {
        let info = account_info(ctx, &req.id)?;
        // Database limits need the governor: refused before anything runs where it is absent
        // (always on debian), never dropped silently.
        if req.mysql.is_some() && !ctx.provider.mysql_governor_present() {
            return Err(OpError::permanent(
                "unsupported_on_platform",
                format!(
                    "database limits need MySQL Governor (dbctl), which this {} node does not have",
                    ctx.provider.platform()
                ),
            ));
        }
        let wanted = LveLimits {
            speed_pct: req.cpu_percent.get(),
            pmem_mib: req.memory_mib.get(),
            io_kibs: req.io_kib_per_sec.get(),
            nproc: req.processes.get(),
            entry_procs: req.entry_processes.get(),
        };
        ctx.provider
            .lvectl_set_user(&info.username, &wanted)
            .map_err(provider_error)?;
        crash::point(super::AFTER_LVECTL_SET);
        let limits = lve_limits_of(ctx, &info.username)?;
        if limits != Some(as_limits(wanted)) {
            return Err(OpError::retryable(
                "limits_not_in_effect",
                format!(
                    "lvectl accepted the limits of {} but lists {limits:?}",
                    info.username
                ),
            ));
        }
        let row = account_row(ctx, &req.id)?;
        let had_mysql = row.mysql_limits().is_some();
        let mysql = match &req.mysql {
            Some(db) => Some(set_mysql_limits(ctx, &info.username, db)?),
            None => {
                if had_mysql {
                    ctx.provider
                        .dbctl_delete(&info.username)
                        .map_err(provider_error)?;
                }
                None
            }
        };
        ctx.set_row(&AccountRow {
            limits: Some(as_limits(wanted)),
            mysql_limits: Some(mysql),
            ..row
        });
        // The account's PHP pools take their children from the limits (`PoolLimits`).
        pool::sync(ctx, &req.id, PoolSync::Update)?;
        Ok(AccountLimitsResult {
            username: info.username,
            limits,
            cagefs: None,
            mysql,
        })
    }
}

/// `dbctl set` for `user`, then `dbctl list --bb` to see it in effect (dbctl exits 0 even
/// when it refuses its arguments, so only the read-back says it worked).
fn set_mysql_limits(
    ctx: &mut Ctx,
    user: &str,
    db: &MysqlLimitsRequest,
) -> Result<MysqlLimits, OpError> {
    let wanted = GovernorLimits {
        cpu_pct: db.cpu_percent.get(),
        read_kibs: db.read_kib_per_sec.get(),
        write_kibs: db.write_kib_per_sec.get(),
    };
    ctx.provider
        .dbctl_set(user, &wanted)
        .map_err(provider_error)?;
    // No crash point of its own: a retry sets the same limits again, and a crash before the
    // row is recorded leaves the previous row, whose purge still resets the user.
    let listed = ctx.provider.dbctl_list().map_err(provider_error)?;
    match listed.iter().find(|(name, _)| name == user) {
        Some((_, line)) if line.matches(&wanted) => Ok(as_mysql_limits(wanted)),
        other => Err(OpError::retryable(
            "limits_not_in_effect",
            format!("dbctl was given the database limits of {user} but lists {other:?}"),
        )),
    }
}

impl Apply<Ctx> for SetAccountIsolation {
    fn apply(
        ctx: &mut Ctx,
        req: &SetAccountIsolationRequest,
    ) -> Result<AccountLimitsResult, OpError> {
        let info = account_info(ctx, &req.id)?;
        ctx.provider
            .cagefs_set(&info.username, req.cagefs)
            .map_err(provider_error)?;
        crash::point(super::AFTER_CAGEFSCTL);
        let cagefs = cagefs_of(ctx, &info.username)?;
        if cagefs != req.cagefs {
            return Err(OpError::retryable(
                "isolation_not_in_effect",
                format!(
                    "cagefsctl accepted the change for {} but its list disagrees",
                    info.username
                ),
            ));
        }
        ctx.set_row(&AccountRow {
            cagefs: Some(cagefs),
            ..account_row(ctx, &req.id)?
        });
        Ok(AccountLimitsResult {
            username: info.username,
            limits: None,
            cagefs: Some(cagefs),
            mysql: None,
        })
    }
}

/// What `dbctl list --bb` shows for `user`: its line, else the `default` line (the governor
/// lists users with their own limits and those active since it started).
pub(super) fn mysql_limits_of(ctx: &Ctx, user: &str) -> Result<Option<MysqlLimits>, OpError> {
    if !ctx.provider.mysql_governor_present() {
        return Ok(None);
    }
    let listed = ctx.provider.dbctl_list().map_err(provider_error)?;
    let line = listed
        .iter()
        .find(|(name, _)| name == user)
        .or_else(|| listed.iter().find(|(name, _)| name == "default"));
    Ok(line.map(|(_, l)| MysqlLimits {
        cpu_percent: l.cpu_pct,
        read_kib_per_sec: l.read_bytes / 1024,
        write_kib_per_sec: l.write_bytes / 1024,
    }))
}
