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
//! puts the same line back. A suspended account's logins are left out the same way, each
//! keeping its own suspension for when the account is unsuspended (`suspend_account` installs
//! the files again, [`install`]). A changed password or directory while suspended is recorded
//! and applies when unsuspended.

pub use declarations::ftp_account::*;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use registry::types::{FtpLogin, Hex32, PasswordHash, Presence};
use registry::{Apply, Aspects, Derive, Derived, DerivedTable, Family, Of, OpError, Operation, Owner, Purge, RowType};
use serde::{Deserialize, Serialize};
use state::Stored;
use store::StoredRow;

use crate::account::{AccountRow, Limits, account_info, suspended_accounts, tenant_of};
use crate::context::{Ctx, provider_error, store_error};
use crate::row_fields::is_false;

crash::points! {
    AFTER_DIRECTORY = "ftp_account.after_directory",
    AFTER_PASSWD = "ftp_account.after_passwd",
    AFTER_INSTALL = "ftp_account.after_install",
    AFTER_REMOVE = "ftp_account.after_remove",
    AFTER_SUSPENSION = "ftp_account.after_suspension",
}

/// One FTP login as stored: its jail (the mapped path pure-ftpd chroots to) and its whole
/// passwd line; `suspended` only while it is (its line is then left out of pure-ftpd's
/// files).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtpAccountRow {
    pub login: FtpLogin,
    pub directory: String,
    pub line: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub suspended: bool,
}

impl StoredRow for FtpAccountRow {
    const FAMILY: &'static str = FtpAccount::NAME;
    /// The password is in the line, and both `ensure_ftp_account` and
    /// `set_ftp_account_password` state it whole: the later request's is the one in force.
    const FIELD_OWNERS: registry::FieldOwners = &[
        ("line", &[EnsureFtpAccount::NAME, SetFtpAccountPassword::NAME]),
        ("suspended", &[SuspendFtpAccount::NAME, UnsuspendFtpAccount::NAME]),
    ];
}

impl Purge<Ctx> for FtpAccount {
    const ROW: Option<RowType> = Some(store::row_type::<FtpAccountRow>());

    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        if ctx
            .view()
            .of_account::<FtpAccountRow>(account)
            .map_err(store_error)?
            .is_empty()
        {
            return Ok(());
        }
        ctx.drop_rows_of::<FtpAccountRow>(account);
        install(ctx)?;
        crash::point(AFTER_INSTALL);
        ctx.forget_rows_of::<FtpAccountRow>(account)
    }
}

/// One passwd line: `LOGIN:HASH:UID:GID::DIR/./` and the twelve optional fields, empty.
fn line(login: &str, hash: &str, uid: u64, gid: u64, dir: &str) -> String {
    format!("{login}:{hash}:{uid}:{gid}::{dir}/./::::::::::::\n")
}

/// The logins in pure-ftpd's passwd file, from the view: every FTP login of the node that is
/// not suspended and whose account is not, this job's change included, in id order, each
/// with its whole line.
fn logins(ctx: &Ctx) -> Result<Vec<Stored<FtpAccountRow>>, OpError> {
    let view = ctx.view();
    let suspended_accounts = suspended_accounts(&view).map_err(store_error)?;
    Ok(view
        .all::<FtpAccountRow>()
        .map_err(store_error)?
        .into_iter()
        .filter(|stored| !refused(stored, &suspended_accounts))
        .collect())
}

/// Whether pure-ftpd is not to know `login`: it or its account is suspended.
pub fn refused(login: &Stored<FtpAccountRow>, suspended_accounts: &BTreeSet<Hex32>) -> bool {
    login.row.suspended
        || matches!(&login.owner, Owner::Tenant(account) if suspended_accounts.contains(account))
}

/// Whether `account` is suspended as the view has it.
fn account_suspended(ctx: &Ctx, account: &Hex32) -> Result<bool, OpError> {
    Ok(suspended_accounts(&ctx.view())
        .map_err(store_error)?
        .contains(account))
}

/// The login's line as pure-ftpd gets it: the stored line with its account's limits
/// (`set_account_limits`) in pure-ftpd's own per-user fields: the upload and download
/// bandwidth of each session (fields 7 and 8, bytes per second) from `io_kib_per_sec`, and
/// the concurrent sessions (field 11) from `entry_processes`, each left empty (unlimited)
/// at 0. pure-ftpd runs a session as its own process with the login's uid, in no unit of
/// the account's and outside its slice: these fields are what bounds it.
pub fn line_with_limits(line: &str, limits: Option<&Limits>) -> String {
    let Some(limits) = limits else {
        return line.to_owned();
    };
    let mut fields: Vec<String> = line
        .trim_end_matches('\n')
        .split(':')
        .map(str::to_owned)
        .collect();
    if fields.len() < 11 {
        return line.to_owned();
    }
    let value = |n: u64| if n == 0 { String::new() } else { n.to_string() };
    let bandwidth = value(limits.io_kib_per_sec.saturating_mul(1024));
    fields[6] = bandwidth.clone();
    fields[7] = bandwidth;
    fields[10] = value(limits.entry_processes);
    format!("{}\n", fields.join(":"))
}

/// Each of `logins`' lines as pure-ftpd gets them ([`line_with_limits`], its account's
/// recorded limits from the view).
fn lines(ctx: &Ctx, logins: &[Stored<FtpAccountRow>]) -> Result<Vec<String>, OpError> {
    let mut limits: BTreeMap<Hex32, Option<Limits>> = BTreeMap::new();
    let mut out = Vec::with_capacity(logins.len());
    for stored in logins {
        let of_account = match &stored.owner {
            Owner::Tenant(account) => match limits.get(account) {
                Some(l) => *l,
                None => {
                    let l = ctx
                        .view()
                        .get::<AccountRow>(account)
                        .map_err(store_error)?
                        .and_then(|row| row.row.limits);
                    limits.insert(account.clone(), l);
                    l
                }
            },
            Owner::Node => None,
        };
        out.push(line_with_limits(&stored.row.line, of_account.as_ref()));
    }
    Ok(out)
}

/// Writes the passwd file derived from the view ([`logins`]), then `pure-pw mkdb`. An empty
/// set leaves an empty file and database: pure-ftpd then has no virtual user.
pub fn install(ctx: &Ctx) -> Result<(), OpError> {
    let content: String = lines(ctx, &logins(ctx)?)?.concat();
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
    crash::point(AFTER_PASSWD);
    ctx.provider
        .pure_pw_mkdb(&passwd, &pdb)
        .map_err(provider_error)?;
    Ok(())
}

const PASSWD: Aspects = Aspects::new(FTP_LOGIN_MISSING, FTP_PASSWD_DIFFERS);

impl Derive<Ctx> for FtpAccount {
    /// pure-ftpd's passwd file: each login's line (a suspended login, or a suspended
    /// account's, has none), and no line beyond them, such a login's included. The PureDB compiled from it is read by
    /// `pure-pw show` only, a program, which the drift check does not run.
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        let logins = logins(ctx)?;
        let lines = lines(ctx, &logins)?;
        let path = ctx.provider.sysconf(ctx.provider.ftp_layout().passwd);
        let actual = ctx.provider.read_config(&path).map_err(provider_error)?;
        let entries = logins
            .iter()
            .zip(&lines)
            .map(|(stored, line)| {
                let line = line.trim_end_matches('\n').to_owned();
                (Of::new(&stored.id, &stored.owner), vec![line])
            })
            .collect();
        Ok(vec![Derived::Table(DerivedTable {
            path,
            expected: lines.concat().into_bytes(),
            actual,
            entries,
            aspects: PASSWD,
        })])
    }
}

/// The account's login `id`, or `ftp_account_missing`.
fn own_row(ctx: &Ctx, account: &Hex32, id: &Hex32) -> Result<FtpAccountRow, OpError> {
    ctx.view()
        .get_owned::<FtpAccountRow>(account, id)
        .map_err(store_error)?
        .ok_or_else(|| {
            OpError::permanent(
                "ftp_account_missing",
                format!("no FTP account {id} of account {account}"),
            )
        })
}

impl Apply<Ctx> for EnsureFtpAccount {
    fn apply(ctx: &mut Ctx, req: &EnsureFtpAccountRequest) -> Result<FtpAccountResult, OpError> {
        let info = account_info(ctx, &req.account)?;
        let login = req.login.as_str();
        for stored in ctx.view().all::<FtpAccountRow>().map_err(store_error)? {
            if stored.id != req.id && stored.row.login == req.login {
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
            crash::point(AFTER_DIRECTORY);
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
            .view()
            .get::<FtpAccountRow>(&req.id)
            .map_err(store_error)?
            .is_some_and(|stored| stored.row.suspended);
        ctx.set_row(&FtpAccountRow {
            login: req.login.clone(),
            directory: jail.clone(),
            line,
            suspended,
        });
        install(ctx)?;
        crash::point(AFTER_INSTALL);
        let result = if suspended || account_suspended(ctx, &req.account)? {
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
        Ok(result)
    }
}

impl Apply<Ctx> for SetFtpAccountPassword {
    fn apply(
        ctx: &mut Ctx,
        req: &SetFtpAccountPasswordRequest,
    ) -> Result<FtpAccountResult, OpError> {
        let row = own_row(ctx, &req.account, &req.id)?;
        let info = account_info(ctx, &req.account)?;
        let (login, jail, suspended) = (row.login.as_str(), row.directory.as_str(), row.suspended);
        let line = line(
            login,
            req.password_hash.as_str(),
            u64::from(info.uid),
            u64::from(info.gid),
            jail,
        );
        ctx.set_row(&FtpAccountRow {
            line,
            ..row.clone()
        });
        install(ctx)?;
        crash::point(AFTER_INSTALL);
        let result = if suspended || account_suspended(ctx, &req.account)? {
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
        Ok(result)
    }
}

/// Puts the account's recorded limits (this job's row, in the view) into pure-ftpd's fields
/// of each of its logins ([`line_with_limits`]) and reads each back with `pure-pw show`;
/// nothing when it has no login pure-ftpd knows. `limits_not_in_effect` when pure-pw shows
/// other limits.
pub fn apply_limits(ctx: &Ctx, account: &Hex32, limits: &Limits) -> Result<(), OpError> {
    let suspended = suspended_accounts(&ctx.view()).map_err(store_error)?;
    let own: Vec<Stored<FtpAccountRow>> = ctx
        .view()
        .of_account::<FtpAccountRow>(account)
        .map_err(store_error)?
        .into_iter()
        .filter(|stored| !refused(stored, &suspended))
        .collect();
    if own.is_empty() {
        return Ok(());
    }
    install(ctx)?;
    let passwd = ctx.provider.sysconf(ctx.provider.ftp_layout().passwd);
    let wanted = |n: u64| (n > 0).then_some(n);
    for stored in own {
        let login = stored.row.login.as_str();
        let shown = ctx
            .provider
            .pure_pw_show(login, &passwd)
            .map_err(provider_error)?;
        let got = shown.as_ref().map(|s| {
            (
                s.download_kib_per_sec,
                s.upload_kib_per_sec,
                s.max_sessions,
            )
        });
        let want = (
            wanted(limits.io_kib_per_sec),
            wanted(limits.io_kib_per_sec),
            wanted(limits.entry_processes),
        );
        if got != Some(want) {
            return Err(OpError::retryable(
                "limits_not_in_effect",
                format!(
                    "pure-pw shows {got:?} (download, upload KiB/s, sessions) for {login}, not {want:?}"
                ),
            ));
        }
    }
    Ok(())
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
    fn apply(ctx: &mut Ctx, _: &RemoveFtpAccountRequest) -> Result<FtpAccountResult, OpError> {
        ctx.forget_row();
        install(ctx)?;
        crash::point(AFTER_REMOVE);
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
    let row = own_row(ctx, &req.account, &req.id)?;
    let login = row.login.to_string();
    ctx.set_row(&FtpAccountRow { suspended, ..row });
    install(ctx)?;
    crash::point(AFTER_SUSPENSION);
    let passwd = ctx.provider.sysconf(ctx.provider.ftp_layout().passwd);
    let shown = ctx
        .provider
        .pure_pw_show(&login, &passwd)
        .map_err(provider_error)?;
    // Left out while it or its account is suspended.
    let left_out = suspended || account_suspended(ctx, &req.account)?;
    if shown.is_some() == left_out {
        return Err(OpError::permanent(
            "ftp_account_not_installed",
            format!(
                "pure-pw {} {login} after mkdb",
                if left_out {
                    "still shows"
                } else {
                    "does not show"
                }
            ),
        ));
    }
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
