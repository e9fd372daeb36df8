//! The `ftp_account` family: FTP logins for a tenant, as pure-ftpd virtual users.
//!
//! Why virtual users (pure-ftpd's PureDB) rather than system users: an FTP login is not a
//! shell account. A virtual user has no passwd entry, no shell and no home of its own; it maps
//! to the tenant's uid and gid (so files it writes are the tenant's) and is jailed to one
//! directory beneath the tenant's home (pure-ftpd's `/./` chroot marker), so a tenant can hand
//! an upload login to a designer without giving out SSH or the whole home. vsftpd would need
//! a PAM module and a per-user configuration directory for the same; ProFTPD's `AuthUserFile`
//! works alike but pure-ftpd is the lighter daemon and the usual one on hosting servers.
//!
//! The passwd file is derived whole from state.db on every change (every `ftp_account` row
//! of every account, sorted), written atomically (0600, root), and compiled with the real
//! `pure-pw mkdb`. pure-pw skips a line it cannot parse and still exits 0, so each field is a
//! validated type here, and the login is read back with `pure-pw show` before the job
//! reports it present.
//!
//! A suspended login (`suspend_ftp_account`) keeps its row, line and files but is left out
//! of the passwd file and the PureDB, so pure-ftpd does not know it; `unsuspend_ftp_account`
//! puts the same line back. A changed password or directory while suspended is recorded and
//! applies when unsuspended.

pub use declarations::ftp_account::*;

use std::path::PathBuf;

use registry::types::{Hex32, PasswordHash, Presence};
use registry::{Apply, Family, OpError, Owner, Purge};
use serde_json::json;

use crate::account::{account_info, store_error, tenant_of};
use crate::context::{Ctx, provider_error};

impl Purge<Ctx> for FtpAccount {
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let owner = Owner::Tenant(account.clone());
        if ctx
            .state
            .resources_of(&owner, FtpAccount::NAME)
            .map_err(store_error)?
            .is_empty()
        {
            return Ok(());
        }
        install(ctx, &Change::DropAccount(account))?;
        crash::point("ftp_account.after_install");
        ctx.state
            .forget_resources_of(account, FtpAccount::NAME)
            .map_err(store_error)?;
        Ok(())
    }
}

/// One passwd line: `LOGIN:HASH:UID:GID::DIR/./` and the twelve optional fields, empty.
fn line(login: &str, hash: &str, uid: u64, gid: u64, dir: &str) -> String {
    format!("{login}:{hash}:{uid}:{gid}::{dir}/./::::::::::::\n")
}

enum Change<'a> {
    Upsert { id: &'a Hex32, line: String },
    Remove(&'a Hex32),
    DropAccount(&'a Hex32),
}

/// Writes the passwd file derived from every recorded FTP account with `change` applied,
/// then `pure-pw mkdb`. An empty set leaves an empty file and database: pure-ftpd then has no
/// virtual user.
fn install(ctx: &Ctx, change: &Change<'_>) -> Result<(), OpError> {
    let mut lines: Vec<(String, String)> = ctx
        .state
        .resources_of_family(FtpAccount::NAME)
        .map_err(store_error)?
        .into_iter()
        .filter(|row| match change {
            Change::Upsert { id, .. } | Change::Remove(id) => &row.resource_id != *id,
            Change::DropAccount(account) => row.owner.as_str() != account.as_str(),
        })
        .filter(|row| !is_suspended(&row.data))
        .filter_map(|row| {
            Some((
                row.resource_id.to_string(),
                row.data["line"].as_str()?.to_owned(),
            ))
        })
        .collect();
    if let Change::Upsert { id, line } = change {
        lines.push((id.to_string(), line.clone()));
    }
    lines.sort();
    let content: String = lines.into_iter().map(|(_, l)| l).collect();
    let layout = ctx.provider.ftp_layout();
    let passwd = ctx.provider.sysconf(layout.passwd);
    let pdb = ctx.provider.sysconf(layout.pdb);
    if let Some(dir) = passwd.parent() {
        ctx.provider
            .ensure_dir(dir, 0o755)
            .map_err(provider_error)?;
    }
    ctx.provider
        .write_config_atomic(&passwd, content.as_bytes(), 0o600)
        .map_err(provider_error)?;
    crash::point("ftp_account.after_passwd");
    ctx.provider
        .pure_pw_mkdb(&passwd, &pdb)
        .map_err(provider_error)?;
    Ok(())
}

fn is_suspended(data: &serde_json::Value) -> bool {
    data["suspended"] == json!(true)
}

/// Installs `line` for `id`, or leaves the login out of pure-ftpd's files while it is
/// suspended.
fn install_line(ctx: &Ctx, id: &Hex32, line: &str, suspended: bool) -> Result<(), OpError> {
    if suspended {
        install(ctx, &Change::Remove(id))
    } else {
        install(
            ctx,
            &Change::Upsert {
                id,
                line: line.to_owned(),
            },
        )
    }
}

impl Apply<Ctx> for EnsureFtpAccount {
    fn apply(ctx: &mut Ctx, req: &EnsureFtpAccountRequest) -> Result<FtpAccountResult, OpError> {
        let info = account_info(ctx, &req.account)?;
        let login = req.login.as_str();
        for row in ctx
            .state
            .resources_of_family(FtpAccount::NAME)
            .map_err(store_error)?
        {
            if row.resource_id != req.id && row.data["login"].as_str() == Some(login) {
                return Err(OpError::permanent(
                    "ftp_login_taken",
                    format!("the FTP login {login} is taken on this node"),
                ));
            }
        }
        if ctx
            .provider
            .lookup_user(login)
            .map_err(provider_error)?
            .is_some()
        {
            return Err(OpError::permanent(
                "ftp_login_taken",
                format!("{login} is a system user on this node"),
            ));
        }
        let relative = req.directory.as_ref().map(|d| PathBuf::from(d.as_str()));
        if let Some(rel) = &relative {
            let dir: tenant::RelPath =
                rel.to_str().and_then(|s| s.parse().ok()).ok_or_else(|| {
                    OpError::permanent(
                        "invalid_directory",
                        format!("{} is not a plain relative path", rel.display()),
                    )
                })?;
            // Created as the tenant: a symlink planted on the way fails this job only.
            let who = tenant_of(ctx, &info)?;
            ctx.provider
                .as_tenant(
                    &who,
                    &tenant::Request::EnsureDirs {
                        dirs: vec![dir],
                        mode: tenant::DirMode::Group,
                    },
                )
                .map_err(provider_error)?;
            crash::point("ftp_account.after_directory");
        }
        let home = ctx.provider.sysconf(&info.home);
        let jail = relative.map_or(home.clone(), |r| home.join(r));
        let jail = jail.display().to_string();
        let line = line(
            login,
            req.password_hash.as_str(),
            u64::from(info.uid),
            u64::from(info.gid),
            &jail,
        );
        // Suspension belongs to the login, not to this request.
        let suspended = ctx
            .state
            .resource(FtpAccount::NAME, &req.id)
            .map_err(store_error)?
            .is_some_and(|row| is_suspended(&row.data));
        install_line(ctx, &req.id, &line, suspended)?;
        crash::point("ftp_account.after_install");
        let result = if suspended {
            FtpAccountResult {
                state: Presence::Present,
                login: Some(login.to_owned()),
                directory: Some(jail.clone()),
                uid: Some(info.uid),
                gid: Some(info.gid),
            }
        } else {
            read_back(ctx, login, Some(&req.password_hash))?
        };
        let mut data = json!({"login": login, "directory": jail, "line": line});
        if suspended {
            data["suspended"] = json!(true);
        }
        ctx.set_resource(data);
        Ok(result)
    }
}

impl Apply<Ctx> for SetFtpAccountPassword {
    fn apply(
        ctx: &mut Ctx,
        req: &SetFtpAccountPasswordRequest,
    ) -> Result<FtpAccountResult, OpError> {
        let row = match ctx
            .state
            .resource(FtpAccount::NAME, &req.id)
            .map_err(store_error)?
        {
            Some(row) if row.owner == Owner::Tenant(req.account.clone()) => row,
            _ => {
                return Err(OpError::permanent(
                    "ftp_account_missing",
                    format!("no FTP account {} of account {}", req.id, req.account),
                ));
            }
        };
        let info = account_info(ctx, &req.account)?;
        let (Some(login), Some(jail)) =
            (row.data["login"].as_str(), row.data["directory"].as_str())
        else {
            return Err(OpError::permanent(
                "state_corrupt",
                "a recorded FTP account does not parse",
            ));
        };
        let line = line(
            login,
            req.password_hash.as_str(),
            u64::from(info.uid),
            u64::from(info.gid),
            jail,
        );
        let suspended = is_suspended(&row.data);
        install_line(ctx, &req.id, &line, suspended)?;
        crash::point("ftp_account.after_install");
        let result = if suspended {
            FtpAccountResult {
                state: Presence::Present,
                login: Some(login.to_owned()),
                directory: Some(jail.to_owned()),
                uid: Some(info.uid),
                gid: Some(info.gid),
            }
        } else {
            read_back(ctx, login, Some(&req.password_hash))?
        };
        let mut data = row.data;
        data["line"] = json!(line);
        ctx.set_resource(data);
        Ok(result)
    }
}

/// The login as `pure-pw show` reads it from the installed passwd file; with `hash`, the
/// hash it shows must be that one.
fn read_back(
    ctx: &Ctx,
    login: &str,
    hash: Option<&PasswordHash>,
) -> Result<FtpAccountResult, OpError> {
    let passwd = ctx.provider.sysconf(ctx.provider.ftp_layout().passwd);
    let shown = ctx
        .provider
        .pure_pw_show(login, &passwd)
        .map_err(provider_error)?
        .ok_or_else(|| {
            OpError::permanent(
                "ftp_account_not_installed",
                format!("pure-pw does not show {login} after mkdb"),
            )
        })?;
    if let Some(hash) = hash
        && shown.password != hash.as_str()
    {
        return Err(OpError::permanent(
            "ftp_account_not_installed",
            format!("pure-pw shows another password hash for {login} after mkdb"),
        ));
    }
    Ok(FtpAccountResult {
        state: Presence::Present,
        login: Some(shown.login),
        directory: Some(
            shown
                .directory
                .strip_suffix("/./")
                .unwrap_or(&shown.directory)
                .to_owned(),
        ),
        uid: Some(shown.uid),
        gid: Some(shown.gid),
    })
}

impl Apply<Ctx> for RemoveFtpAccount {
    fn apply(ctx: &mut Ctx, req: &RemoveFtpAccountRequest) -> Result<FtpAccountResult, OpError> {
        install(ctx, &Change::Remove(&req.id))?;
        crash::point("ftp_account.after_remove");
        ctx.forget_row();
        Ok(FtpAccountResult {
            state: Presence::Absent,
            login: None,
            directory: None,
            uid: None,
            gid: None,
        })
    }
}

fn set_suspended(
    ctx: &mut Ctx,
    req: &FtpAccountSuspensionRequest,
    suspended: bool,
) -> Result<FtpSuspensionResult, OpError> {
    let row = match ctx
        .state
        .resource(FtpAccount::NAME, &req.id)
        .map_err(store_error)?
    {
        Some(row) if row.owner == Owner::Tenant(req.account.clone()) => row,
        _ => {
            return Err(OpError::permanent(
                "ftp_account_missing",
                format!("no FTP account {} of account {}", req.id, req.account),
            ));
        }
    };
    let (Some(login), Some(line)) = (row.data["login"].as_str(), row.data["line"].as_str()) else {
        return Err(OpError::permanent(
            "state_corrupt",
            "a recorded FTP account does not parse",
        ));
    };
    let login = login.to_owned();
    install_line(ctx, &req.id, line, suspended)?;
    crash::point("ftp_account.after_suspension");
    let passwd = ctx.provider.sysconf(ctx.provider.ftp_layout().passwd);
    let shown = ctx
        .provider
        .pure_pw_show(&login, &passwd)
        .map_err(provider_error)?;
    if shown.is_some() == suspended {
        return Err(OpError::permanent(
            "ftp_account_not_installed",
            format!(
                "pure-pw {} {login} after mkdb",
                if suspended {
                    "still shows"
                } else {
                    "does not show"
                }
            ),
        ));
    }
    let mut data = row.data;
    if let Some(fields) = data.as_object_mut() {
        if suspended {
            fields.insert("suspended".to_owned(), json!(true));
        } else {
            fields.remove("suspended");
        }
    }
    ctx.set_resource(data);
    Ok(FtpSuspensionResult {
        state: Presence::Present,
        login,
        suspended,
    })
}

impl Apply<Ctx> for SuspendFtpAccount {
    fn apply(
        ctx: &mut Ctx,
        req: &FtpAccountSuspensionRequest,
    ) -> Result<FtpSuspensionResult, OpError> {
        set_suspended(ctx, req, true)
    }
}

impl Apply<Ctx> for UnsuspendFtpAccount {
    fn apply(
        ctx: &mut Ctx,
        req: &FtpAccountSuspensionRequest,
    ) -> Result<FtpSuspensionResult, OpError> {
        set_suspended(ctx, req, false)
    }
}
