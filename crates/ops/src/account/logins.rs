//! What the account's logins may do: `suspend_account` and `unsuspend_account` lock and
//! unlock them (password locked, account expired), `set_account_password` sets the hash.

use provider::{Expire, UserMod};
use registry::types::Presence;
use registry::{Apply, OpError};

use super::{
    AccountInfo, AccountRef, AccountResult, AccountRow, SetAccountPassword,
    SetAccountPasswordRequest, SuspendAccount, UnsuspendAccount, account_info, account_row,
};
use crate::context::{Ctx, provider_error};

/// Locks or unlocks the account's logins (password locked, account expired) and records it.
fn set_suspended(
    ctx: &mut Ctx,
    req: &AccountRef,
    suspended: bool,
) -> Result<AccountResult, OpError> {
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
    Ok(result(&info, &row))
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
    fn apply(ctx: &mut Ctx, req: &AccountRef) -> Result<AccountResult, OpError> {
        set_suspended(ctx, req, true)
    }
}

impl Apply<Ctx> for UnsuspendAccount {
    fn apply(ctx: &mut Ctx, req: &AccountRef) -> Result<AccountResult, OpError> {
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
