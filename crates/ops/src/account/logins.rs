//! What the account's logins may do: `suspend_account` and `unsuspend_account` lock and
//! unlock them (password locked, account expired) and derive again the files the tenant is
//! served from, `set_account_password` sets the hash.
//!
//! An account's suspension is one flag of its row, which the owners of the derived files read
//! from the view beside each resource's own: a web domain's vhost answers 403 while the
//! domain or its account is suspended (`crate::vhost`), a mailbox's line in Dovecot's
//! passwd-file refuses every login while the mailbox or its account is (`crate::mail`: mail
//! is still delivered), and an FTP login is left out of pure-ftpd's files while it or its
//! account is (`crate::ftp_account`). So unsuspending the account leaves a resource suspended
//! on its own suspended, and unsuspending a resource of a suspended account leaves it
//! refused. The handlers here record the flag, then have each owner install its files again
//! from the view, once per family, the services reloaded with their batch; a crash between
//! the user and the files is repaired by the job's replay, which writes both again.

use provider::{Expire, UserMod};
use registry::types::{Hex32, Presence};
use registry::{Apply, OpError};

use super::{
    AccountInfo, AccountRef, AccountResult, AccountRow, AccountSuspensionResult,
    SetAccountPassword, SetAccountPasswordRequest, SuspendAccount, UnsuspendAccount,
    account_info, account_row,
};
use crate::context::{Ctx, provider_error, store_error};
use crate::ftp_account::{self, FtpAccountRow};
use crate::mail::{self, MailState, Target};
use crate::vhost;
use crate::web_domain::WebDomainRow;

/// Locks or unlocks the account's logins (password locked, account expired), records it,
/// then installs again what the account's sites, mailboxes and FTP logins are served from.
fn set_suspended(
    ctx: &mut Ctx,
    req: &AccountRef,
    suspended: bool,
) -> Result<AccountSuspensionResult, OpError> {
    let info = account_info(ctx, &req.id)?;
    let expire = if suspended {
        Expire::Expired
    } else {
        Expire::Never
    };
    ctx.provider
        .usermod(&UserMod {
            name: &info.username,
            lock: Some(suspended),
            expire: Some(expire),
            ..UserMod::default()
        })
        .map_err(provider_error)?;
    let row = AccountRow {
        suspended,
        ..account_row(ctx, &req.id)?
    };
    ctx.set_row(&row);
    crash::point(super::AFTER_SUSPENSION_USER);
    derive_served(ctx, &req.id)?;
    refused(ctx, &req.id, &info, suspended)
}

/// Installs again, from the view, the account's vhosts, Dovecot's passwd-file if the account
/// has a mailbox in it, and pure-ftpd's files if it has an FTP login.
fn derive_served(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
    let domains = ctx
        .view()
        .of_account::<WebDomainRow>(account)
        .map_err(store_error)?;
    for domain in &domains {
        vhost::sync(ctx, account, &domain.id)?;
    }
    let mail = MailState::of_job(ctx)?;
    if mail
        .mailbox_addresses()
        .values()
        .any(|m| m.owner.as_str() == account.as_str())
    {
        mail::sync(ctx, &[Target::Dovecot])?;
    }
    let logins = ctx
        .view()
        .of_account::<FtpAccountRow>(account)
        .map_err(store_error)?;
    if !logins.is_empty() {
        ftp_account::install(ctx)?;
    }
    Ok(())
}

/// What the account's tenant is refused now, as the view has it (this job's row included).
fn refused(
    ctx: &Ctx,
    account: &Hex32,
    info: &AccountInfo,
    suspended: bool,
) -> Result<AccountSuspensionResult, OpError> {
    let view = ctx.view();
    let web_domains = view
        .of_account::<WebDomainRow>(account)
        .map_err(store_error)?
        .into_iter()
        .filter(|d| suspended || d.row.suspended)
        .map(|d| d.row.domain.to_string())
        .collect();
    let mail = MailState::from_view(&view).map_err(store_error)?;
    let mailboxes = mail
        .mailbox_addresses()
        .into_iter()
        .filter(|(_, m)| m.owner.as_str() == account.as_str() && mail.login_refused(m))
        .map(|(address, _)| address)
        .collect();
    let accounts = super::suspended_accounts(&view).map_err(store_error)?;
    let ftp_logins = view
        .of_account::<FtpAccountRow>(account)
        .map_err(store_error)?
        .into_iter()
        .filter(|l| ftp_account::refused(l, &accounts))
        .map(|l| l.row.login.to_string())
        .collect();
    Ok(AccountSuspensionResult {
        username: info.username.clone(),
        suspended,
        web_domains,
        mailboxes,
        ftp_logins,
    })
}

fn result(info: &AccountInfo, row: &AccountRow) -> AccountResult {
    AccountResult {
        state: Presence::Present,
        username: Some(info.username.clone()),
        uid: Some(info.uid),
        gid: Some(info.gid),
        home: Some(info.home.display().to_string()),
        shell: Some(row.shell.clone()),
        suspended: Some(row.suspended),
        disk_quota_mib: Some(row.disk_quota_mib),
        inode_quota: Some(row.inode_quota),
        quota: None,
    }
}

impl Apply<Ctx> for SuspendAccount {
    fn apply(ctx: &mut Ctx, req: &AccountRef) -> Result<AccountSuspensionResult, OpError> {
        set_suspended(ctx, req, true)
    }
}

impl Apply<Ctx> for UnsuspendAccount {
    fn apply(ctx: &mut Ctx, req: &AccountRef) -> Result<AccountSuspensionResult, OpError> {
        set_suspended(ctx, req, false)
    }
}

impl Apply<Ctx> for SetAccountPassword {
    fn apply(ctx: &mut Ctx, req: &SetAccountPasswordRequest) -> Result<AccountResult, OpError> {
        let info = account_info(ctx, &req.id)?;
        let row = account_row(ctx, &req.id)?;
        let suspended = row.suspended;
        // The hash goes to usermod as a secret argument: the audit trail shows `<redacted>`.
        ctx.provider
            .usermod(&UserMod {
                name: &info.username,
                password_hash: Some(req.password_hash.as_str()),
                lock: suspended.then_some(true),
                ..UserMod::default()
            })
            .map_err(provider_error)?;
        Ok(result(&info, &row))
    }
}
