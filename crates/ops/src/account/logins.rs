//! What the account's logins may do: `suspend_account` and `unsuspend_account` lock and
//! unlock them (password locked, account expired), `set_account_password` sets the hash.

use provider::{Expire, UserMod};
use registry::types::Presence;
use registry::{Apply, Family, OpError};
use serde_json::json;

use super::{
    Account, AccountRef, AccountResult, SetAccountPassword, SetAccountPasswordRequest,
    SuspendAccount, UnsuspendAccount, account_info, store_error,
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
    let mut row = ctx
        .state
        .resource(Account::NAME, &req.id)
        .map_err(store_error)?
        .map(|r| r.data)
        .unwrap_or_default();
    row["suspended"] = json!(suspended);
    let result = AccountResult {
        state: Presence::Present,
        username: Some(info.username.clone()),
        uid: Some(info.uid),
        gid: Some(info.gid),
        home: Some(info.home.display().to_string()),
        shell: row["shell"].as_str().map(str::to_owned),
        suspended: Some(suspended),
        disk_quota_mib: row["disk_quota_mib"].as_u64(),
        inode_quota: row["inode_quota"].as_u64(),
    };
    ctx.set_resource(row);
    Ok(result)
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
        let row = ctx
            .state
            .resource(Account::NAME, &req.id)
            .map_err(store_error)?
            .map(|r| r.data)
            .unwrap_or_default();
        let suspended = row["suspended"].as_bool().unwrap_or(false);
        // The hash goes to usermod as a secret argument: the audit trail shows `<redacted>`.
        ctx.provider
            .usermod(&UserMod {
                name: &info.username,
                password_hash: Some(req.password_hash.as_str()),
                lock: suspended.then_some(true),
                ..UserMod::default()
            })
            .map_err(provider_error)?;
        Ok(AccountResult {
            state: Presence::Present,
            username: Some(info.username.clone()),
            uid: Some(info.uid),
            gid: Some(info.gid),
            home: Some(info.home.display().to_string()),
            shell: row["shell"].as_str().map(str::to_owned),
            suspended: Some(suspended),
            disk_quota_mib: row["disk_quota_mib"].as_u64(),
            inode_quota: row["inode_quota"].as_u64(),
        })
    }
}
