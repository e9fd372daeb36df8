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

use registry::types::Hex32;
use registry::types::mail::SpamLevel;
use registry::{Apply, OpError, Purge};
use serde_json::json;

use crate::account::{account_info, store_error};
use crate::context::Ctx;
use crate::mail::{Change, MailState, SPAM_FILTER, Target, own_domain, sync};

impl Purge<Ctx> for SpamFilter {
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        crate::mail::purge_family(ctx, SPAM_FILTER, account, &[Target::Postfix])?;
        crate::mail::forget_family(ctx, SPAM_FILTER, account)
    }
}

impl Apply<Ctx> for SetSpamFilter {
    fn apply(ctx: &mut Ctx, req: &SetSpamFilterRequest) -> Result<SpamFilterResult, OpError> {
        account_info(ctx, &req.account)?;
        own_domain(ctx, &req.account, req.domain.as_str())?;
        let mail = MailState::load_in(ctx, &Change::None).map_err(store_error)?;
        if mail
            .of(SPAM_FILTER)
            .any(|r| r.id != req.id && r.str("domain") == req.domain.as_str())
        {
            return Err(OpError::permanent(
                "spam_filter_exists",
                format!("{} already has a spam filter setting", req.domain),
            ));
        }
        let data = json!({"domain": req.domain, "level": req.level});
        sync(
            ctx,
            Change::Upsert {
                family: SPAM_FILTER,
                id: &req.id,
                account: &req.account,
                data: data.clone(),
            },
            &[Target::Postfix],
        )?;
        ctx.set_resource(data);
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
