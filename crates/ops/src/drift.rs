//! The drift check: what state.db records that the OS no longer shows as recorded, built from
//! what each family declares it derives (its `registry::Derive` hook, which the handler
//! table requires beside `Purge`). It names no family: [`detect`] asks every family of
//! [`crate::handlers()`] in the declarations' order and `registry::derive::findings`
//! compares, so a new family is covered by its own hook, without a line here.
//!
//! Each hook renders what the family derives with its owner's own renderer, from the view
//! (the same function the handlers install with), and reads what is there through the
//! provider: files derived whole (vhosts, `AuthUserFile`s, FPM pools, crontabs, Sieve
//! scripts, the sudo drop-in), the lines each resource contributes to a shared table (the
//! Postfix maps, Dovecot's passwd-file, OpenDKIM's tables, pure-ftpd's passwd), files the
//! node generated (keys, archives) and settings outside files (the account's user, MariaDB's
//! databases, users and grants). The check reads only: the runner records what it finds as
//! events (`StateDb::record_drift`), and `rebuild_account` is the repair.
//!
//! A hook that fails (MariaDB unreachable) or panics leaves its family unchecked, never the
//! others: its findings recorded earlier stand until it can look again.

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};

use registry::{DriftCheck, Hex32, OpError, Owner};
use store::StoredRow;

use crate::context::{Ctx, store_error};

/// Every family's derivations compared with what is there, and the families that could not
/// be looked at.
pub fn detect(ctx: &Ctx) -> DriftCheck {
    let mut derived = Vec::new();
    let mut unchecked = Vec::new();
    for family in crate::handlers().families() {
        match catch_unwind(AssertUnwindSafe(|| (family.derive)(ctx))) {
            Ok(Ok(items)) => derived.push((family.name, items)),
            Ok(Err(e)) => unchecked.push((family.name, e)),
            Err(_) => unchecked.push((
                family.name,
                OpError::permanent(
                    "derive_panicked",
                    format!("the {} derive hook panicked: a node bug", family.name),
                ),
            )),
        }
    }
    DriftCheck {
        found: registry::derive::findings(derived),
        unchecked,
    }
}

/// The accounts that have rows of `T`'s family: whose derivations a family's hook lists.
pub(crate) fn accounts_of<T: StoredRow>(ctx: &Ctx) -> Result<BTreeSet<Hex32>, OpError> {
    Ok(ctx
        .view()
        .all::<T>()
        .map_err(store_error)?
        .into_iter()
        .filter_map(|stored| match stored.owner {
            Owner::Tenant(account) => Some(account),
            Owner::Node => None,
        })
        .collect())
}
