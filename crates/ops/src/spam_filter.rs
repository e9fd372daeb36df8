//! The `spam_filter` family: how hard Postfix filters one mail domain's incoming mail.
//!
//! The filter is Postfix's own, chosen because it needs no further daemon and is checked by
//! `postfix check` like the rest: a `check_recipient_access` table maps the domain to a
//! restriction class (`main.cf`, see `provider::MailLayout`): `standard` rejects clients
//! listed on Spamhaus ZEN and senders whose domain does not resolve; `strict` adds the
//! Spamhaus DBL for the sender's domain and clients without reverse DNS. `off` leaves the
//! domain out of the table. It is connection and envelope filtering, not content scoring:
//! a message from a clean host is not scored.

pub use declarations::spam_filter::*;

use registry::types::mail::SpamLevel;
use registry::types::{DomainName, Hex32};
use registry::{Apply, Derive, Derived, OpError, Purge, RowType};
use serde::{Deserialize, Serialize};
use store::StoredRow;

use crate::account::account_info;
use crate::context::Ctx;
use crate::mail::{MailState, SPAM_FILTER, Target, derived_tables, own_domain, purge_family, sync};

crash::points! {}

/// A domain's spam filter setting as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpamFilterRow {
    pub domain: DomainName,
    pub level: SpamLevel,
}

impl StoredRow for SpamFilterRow {
    const FAMILY: &'static str = SPAM_FILTER;
}

impl Purge<Ctx> for SpamFilter {
    const ROW: Option<RowType> = Some(store::row_type::<SpamFilterRow>());

    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        purge_family::<SpamFilterRow>(ctx, account, &[Target::Postfix])?;
        ctx.forget_rows_of::<SpamFilterRow>(account)
    }
}

impl Derive<Ctx> for SpamFilter {
    /// The domain's restriction class in Postfix's `check_recipient_access` table (none when
    /// `off`; `crate::mail::derived_tables`).
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        derived_tables(ctx, SPAM_FILTER)
    }
}

impl Apply<Ctx> for SetSpamFilter {
    fn apply(ctx: &mut Ctx, req: &SetSpamFilterRequest) -> Result<SpamFilterResult, OpError> {
        account_info(ctx, &req.account)?;
        own_domain(ctx, &req.account, req.domain.as_str())?;
        let mail = MailState::of_job(ctx)?;
        if mail
            .spam_filters
            .iter()
            .any(|f| f.id != req.id && f.row.domain == req.domain)
        {
            return Err(OpError::permanent(
                "spam_filter_exists",
                format!("{} already has a spam filter setting", req.domain),
            ));
        }
        ctx.set_row(&SpamFilterRow {
            domain: req.domain.clone(),
            level: req.level,
        });
        sync(ctx, &[Target::Postfix])?;
        let restriction_class = match req.level {
            SpamLevel::Off => None,
            SpamLevel::Standard => Some(provider::SPAM_CLASS_STANDARD.to_owned()),
            SpamLevel::Strict => Some(provider::SPAM_CLASS_STRICT.to_owned()),
        };
        Ok(SpamFilterResult {
            domain: req.domain.to_string(),
            level: req.level,
            restriction_class,
        })
    }
}
