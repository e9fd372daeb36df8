//! The `mail_forwarder` family: an address of one of the account's mail domains that Postfix
//! forwards to one or more addresses (`virtual_alias_maps`). See `mail.rs`.

pub use declarations::mail_forwarder::*;

use registry::types::mail::{MailAddress, MailDestinations};
use registry::types::{Hex32, Presence};
use registry::{Apply, Derive, Derived, OpError, Purge, RowType};
use serde::{Deserialize, Serialize};
use store::StoredRow;

use crate::account::account_info;
use crate::context::Ctx;
use crate::mail::{
    MAIL_FORWARDER, Target, check_address_free, derived_tables, own_domain, purge_family, sync,
};

crash::points! {}

/// A forwarder as stored: the address and where its mail goes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MailForwarderRow {
    pub address: MailAddress,
    pub destinations: MailDestinations,
}

impl StoredRow for MailForwarderRow {
    const FAMILY: &'static str = MAIL_FORWARDER;
}

impl Purge<Ctx> for MailForwarder {
    const ROW: Option<RowType> = Some(store::row_type::<MailForwarderRow>());

    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        purge_family::<MailForwarderRow>(ctx, account, &[Target::Postfix])?;
        ctx.forget_rows_of::<MailForwarderRow>(account)
    }
}

impl Derive<Ctx> for MailForwarder {
    /// The forwarder's line in Postfix's `virtual_alias_maps` (`crate::mail::derived_tables`).
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        derived_tables(ctx, MAIL_FORWARDER)
    }
}

impl Apply<Ctx> for EnsureMailForwarder {
    fn apply(
        ctx: &mut Ctx,
        req: &EnsureMailForwarderRequest,
    ) -> Result<MailForwarderResult, OpError> {
        account_info(ctx, &req.account)?;
        own_domain(ctx, &req.account, req.address.domain())?;
        check_address_free(ctx, req.address.as_str(), &req.id)?;
        ctx.set_row(&MailForwarderRow {
            address: req.address.clone(),
            destinations: req.destinations.clone(),
        });
        sync(ctx, &[Target::Postfix])?;
        Ok(MailForwarderResult {
            state: Presence::Present,
            address: Some(req.address.to_string()),
            destinations: req.destinations.iter().map(ToString::to_string).collect(),
        })
    }
}

impl Apply<Ctx> for RemoveMailForwarder {
    fn apply(
        ctx: &mut Ctx,
        _: &RemoveMailForwarderRequest,
    ) -> Result<MailForwarderResult, OpError> {
        ctx.forget_row();
        sync(ctx, &[Target::Postfix])?;
        Ok(MailForwarderResult {
            state: Presence::Absent,
            address: None,
            destinations: Vec::new(),
        })
    }
}
