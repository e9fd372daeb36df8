//! Limits and isolation.
//!
//! On `cloudlinux` the limits are LVE's and CageFS isolates: every change is read back before
//! the job reports it: `lvectl set-user` then `lvectl list-user`, `cagefsctl
//! --enable`/`--disable` then `--list-enabled`, and the database limits through MySQL
//! Governor, `dbctl set` then `dbctl list --bb` (dbctl exits 0 even when it refuses), only
//! where the governor is installed (without it a request with database limits fails
//! `unsupported_on_platform`); limits set again without database limits remove the
//! governor's (`dbctl delete`).
//!
//! On `debian` the limits are systemd's, on the account's slice (`user-<uid>.slice`): a
//! drop-in the node derives from the recorded limits (`provider::SliceLimits`), which
//! systemd reads at `daemon-reload`, read back with `systemctl show`. They bound what runs in
//! the slice: the account's own FPM masters (`php8.2-fpm@<uid>.service`, `crate::php::pool`),
//! whose children `entry_processes` bounds too (its pools' `pm.max_children`), and its SSH
//! sessions and cron jobs, which `pam_systemd` puts there (`layerone install` adds it to
//! cron's PAM stack, `install::cron_slice`). The result says, per limit, whether the host's
//! kernel enforces it (the controller is there: `Provider::cgroup_controllers`). FTP sessions
//! are pure-ftpd's processes, in no unit of the account's: on both platforms the account's
//! FTP logins get pure-ftpd's per-user bandwidth (`io_kib_per_sec`) and concurrent sessions
//! (`entry_processes`), read back with `pure-pw show` (`crate::ftp_account::apply_limits`). CageFS does not exist there:
//! `set_account_isolation` fails `unsupported_on_platform` before anything runs.
//!
//! The account's purge resets them all (`lvectl delete-user`, `cagefsctl --disable`, `dbctl
//! delete` while the user exists; the slice's drop-in, `removal.rs`), so a later account of
//! the same name or uid does not inherit them.

use provider::{GovernorLimits, LveLimits, Platform, SliceLimits, slice_drop_in};
use registry::{Apply, OpError};

use super::{
    AccountInfo, AccountLimitsResult, AccountRow, EnforcedLimits, Limits, MysqlLimits,
    MysqlLimitsRequest, SetAccountIsolation, SetAccountIsolationRequest, SetAccountLimits,
    SetAccountLimitsRequest, account_info, account_row,
};
use crate::context::{Ctx, Service, provider_error};
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
        if ctx.provider.platform() == Platform::Debian {
            return set_slice_limits(ctx, req, info);
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
        // The account's PHP pools take their children from the limits (`PoolLimits`), its FTP
        // logins their bandwidth and sessions.
        pool::sync(ctx, &req.id, PoolSync::Update)?;
        crate::ftp_account::apply_limits(ctx, &req.id, &as_limits(wanted))?;
        Ok(AccountLimitsResult {
            username: info.username,
            limits,
            enforced: None,
            cagefs: None,
            mysql,
        })
    }
}

/// The drop-in of the slice of the user `uid`, whose home is `home`, for `limits` (mapped
/// path, text).
pub(super) fn slice_drop_in_of(
    ctx: &Ctx,
    account: &registry::Hex32,
    uid: u32,
    home: &std::path::Path,
    limits: &Limits,
) -> (std::path::PathBuf, String) {
    (
        ctx.provider.sysconf(slice_drop_in(uid)),
        slice_limits_of(limits).render(account.as_str(), home),
    )
}

/// The slice limits a recorded [`Limits`] derives.
fn slice_limits_of(limits: &Limits) -> SliceLimits {
    SliceLimits {
        cpu_percent: limits.cpu_percent,
        memory_mib: limits.memory_mib,
        io_kib_per_sec: limits.io_kib_per_sec,
        tasks: limits.processes,
    }
}

/// [`Limits`] from a slice's, with the entry processes the account's pools carry.
fn limits_of(slice: SliceLimits, entry_processes: u64) -> Limits {
    Limits {
        cpu_percent: slice.cpu_percent,
        memory_mib: slice.memory_mib,
        io_kib_per_sec: slice.io_kib_per_sec,
        processes: slice.tasks,
        entry_processes,
    }
}

/// The limits of `info`'s slice as `systemctl show` reports them, with the entry processes
/// `recorded` gave its pools; `None` when systemd shows them in another shape than the node
/// writes.
pub(super) fn slice_limits_in_effect(
    ctx: &Ctx,
    info: &AccountInfo,
    recorded: &Limits,
) -> Result<Option<Limits>, OpError> {
    let shown = ctx
        .provider
        .slice_limits_shown(info.uid, &info.home)
        .map_err(provider_error)?;
    Ok(shown.map(|s| limits_of(s, recorded.entry_processes)))
}

/// `set_account_limits` on `debian`: the slice's drop-in written, systemd told, the limits
/// read back from systemd before the row records them and the pools take their children.
fn set_slice_limits(
    ctx: &mut Ctx,
    req: &SetAccountLimitsRequest,
    info: AccountInfo,
) -> Result<AccountLimitsResult, OpError> {
    let limits = Limits {
        cpu_percent: req.cpu_percent.get(),
        memory_mib: req.memory_mib.get(),
        io_kib_per_sec: req.io_kib_per_sec.get(),
        processes: req.processes.get(),
        entry_processes: req.entry_processes.get(),
    };
    let wanted = slice_limits_of(&limits);
    let (path, text) = slice_drop_in_of(ctx, &req.id, info.uid, &info.home, &limits);
    if let Some(dir) = path.parent() {
        ctx.provider.ensure_dir(dir, 0o755).map_err(provider_error)?;
    }
    let previous = ctx.provider.read_config(&path).map_err(provider_error)?;
    ctx.write_service_config(Service::Systemd, &path, text.as_bytes())?;
    ctx.reload_now(Service::Systemd)?;
    crash::point(super::AFTER_SLICE_LIMITS);
    let shown = ctx
        .provider
        .slice_limits_shown(info.uid, &info.home)
        .map_err(provider_error)?;
    if shown.as_ref() != Some(&wanted) {
        // What the row does not record must not stay in force: the drop-in goes back to what
        // it was (none, for an account without limits), and systemd is told.
        match previous {
            Some(before) => ctx.write_service_config(Service::Systemd, &path, &before)?,
            None => ctx.remove_service_config(Service::Systemd, &path)?,
        }
        ctx.reload_now(Service::Systemd)?;
        return Err(OpError::retryable(
            "limits_not_in_effect",
            format!(
                "systemd read the limits of {} but shows {shown:?} for {}",
                info.username,
                provider::slice_unit(info.uid)
            ),
        ));
    }
    ctx.set_row(&AccountRow {
        limits: Some(limits),
        mysql_limits: Some(None),
        ..account_row(ctx, &req.id)?
    });
    // The account's PHP pools take their children from the limits (`PoolLimits`), its FTP
    // logins their bandwidth and sessions.
    pool::sync(ctx, &req.id, PoolSync::Update)?;
    crate::ftp_account::apply_limits(ctx, &req.id, &limits)?;
    let controllers = ctx.provider.cgroup_controllers();
    Ok(AccountLimitsResult {
        username: info.username,
        limits: Some(limits),
        enforced: Some(EnforcedLimits {
            cpu_percent: controllers.cpu,
            memory_mib: controllers.memory,
            io_kib_per_sec: controllers.io,
            processes: controllers.pids,
            entry_processes: true,
        }),
        cagefs: None,
        mysql: None,
    })
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
            enforced: None,
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
