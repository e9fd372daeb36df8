//! `rebuild_account`: the account's user and home, then everything the account declared,
//! replayed from its succeeded requests.
//!
//! What is replayed is derived from the declarations, not listed here: for the account and
//! every resource it owns, the last succeeded request of each operation whose kind declares
//! state (`Kind::is_replayed`: declare, set, suspend, unsuspend) since the resource's last
//! operation of kind `Remove`, in admission order. A new family is rebuilt from its declared
//! kinds without registering anything.

use registry::types::Hex32;
use registry::{Apply, Family, Kind, OpError, Operation, Owner};
use state::ResourceKey;

use super::{
    Account, AccountRef, AccountRow, EnsureAccount, RebuildAccount, RebuildResult, account_info,
    store_error,
};
use crate::context::{Ctx, provider_error};

impl Apply<Ctx> for RebuildAccount {
    fn apply(ctx: &mut Ctx, req: &AccountRef) -> Result<RebuildResult, OpError> {
        rebuild(ctx, &req.id)
    }
}

/// The kind `operation` is declared with (`registry::Kind`); `None` for a name the
/// declarations no longer hold.
fn kind_of(operation: &str) -> Option<Kind> {
    declarations::registry()
        .operation(operation)
        .map(|op| op.kind())
}

/// Whether replaying `operation` again re-derives its resource's state: the kinds that
/// declare state ([`Kind::is_replayed`]: declare, set, suspend, unsuspend) do; removals,
/// observations, snapshots (a backup) and one-off actions (a restore, a rebuild) do not. A
/// new family is replayed by the kinds its operations declare; nothing else to register.
pub fn replayable(operation: &str) -> bool {
    kind_of(operation).is_some_and(Kind::is_replayed)
}

/// Rebuilds an account: the user (created again if gone), the home, then, for the account and
/// for every resource it owns in state.db, the last succeeded request of each replayable
/// operation since the resource's last removal (an operation of kind [`Kind::Remove`]), in admission order. Each family's handler
/// derives its files whole from state.db, so the replay puts back exactly what was there
/// (vhosts through the configuration test and a reload, `authorized_keys`, document roots as
/// the tenant). The account's row is kept, its uid and gid refreshed from passwd.
pub fn rebuild(ctx: &mut Ctx, account: &Hex32) -> Result<RebuildResult, OpError> {
    let missing = || {
        OpError::permanent(
            "account_missing",
            format!("account {account} is not recorded on this node"),
        )
    };
    let stored = ctx
        .view()
        .get::<AccountRow>(account)
        .map_err(store_error)?
        .ok_or_else(missing)?
        .row;
    let mut keys = vec![(Account::NAME, account.clone())];
    let owner = Owner::Tenant(account.clone());
    for family in declarations::registry().families() {
        if family.name == Account::NAME {
            continue;
        }
        // Which resources exist, whatever their family's row shape: the ids are all a replay
        // needs, and each replayed handler reads its rows typed.
        for id in ctx
            .view()
            .ids_of(family.name, &owner)
            .map_err(store_error)?
        {
            keys.push((family.name, id));
        }
    }
    let mut replayed = Vec::new();
    let mut home_recreated = false;
    for (family, id) in keys {
        let jobs = ctx
            .state
            .succeeded_requests(family, &id)
            .map_err(store_error)?;
        let since = jobs
            .iter()
            .rposition(|(_, op, _)| kind_of(op) == Some(Kind::Remove))
            .map_or(0, |i| i + 1);
        let mut latest: std::collections::BTreeMap<&str, (i64, &str)> = Default::default();
        for (seq, op, body) in &jobs[since..] {
            if replayable(op) {
                latest.insert(op, (*seq, body));
            }
        }
        let mut order: Vec<(i64, &str, &str)> = latest
            .into_iter()
            .map(|(op, (seq, body))| (seq, op, body))
            .collect();
        order.sort();
        for (_, op, body) in order {
            let entry = crate::handlers().operation(op).ok_or_else(|| {
                OpError::permanent(
                    "rebuild_failed",
                    format!("state.db holds a job of an unknown operation {op:?}"),
                )
            })?;
            let resource = registry::stored_resource(body).ok_or_else(|| {
                    OpError::permanent(
                        "rebuild_failed",
                        format!("the stored {op} is not an envelope with a resource"),
                    )
                })?;
            // A job of its own on the replayed resource: its row is seen by the replay and
            // never recorded.
            let key = ResourceKey {
                family: family.to_owned(),
                id: id.clone(),
                owner: owner.clone(),
            };
            ctx.replaying(key, |ctx| entry.apply(ctx, resource))
                .map_err(|e| OpError {
                    message: format!("replaying {op} for {family} {id}: {}", e.message),
                    ..e
                })?;
            replayed.push(format!("{family}/{op}/{id}"));
            if family == Account::NAME && op == EnsureAccount::NAME {
                home_recreated = ensure_home(ctx, account)?;
            }
        }
    }
    crash::point(super::REBUILD_AFTER_REPLAY);
    let info = account_info(ctx, account)?;
    ctx.set_row(&AccountRow {
        uid: info.uid,
        gid: info.gid,
        home: info.home.display().to_string(),
        ..stored
    });
    Ok(RebuildResult {
        username: info.username,
        home_recreated,
        replayed,
    })
}

/// Creates the home again (mode [`provider::HOME_MODE`], owned by the tenant in the web
/// server's group, as `useradd` left it) when it is gone.
fn ensure_home(ctx: &Ctx, account: &Hex32) -> Result<bool, OpError> {
    let info = account_info(ctx, account)?;
    let home = ctx.provider.sysconf(&info.home);
    if std::fs::symlink_metadata(&home).is_ok() {
        return Ok(false);
    }
    ctx.provider
        .ensure_dir(&home, provider::HOME_MODE)
        .map_err(provider_error)?;
    ctx.provider
        .set_owner_mode(
            &home,
            provider::HOME_MODE,
            (
                info.uid,
                ctx.provider.home_group(info.gid).map_err(provider_error)?,
            ),
        )
        .map_err(provider_error)?;
    Ok(true)
}
