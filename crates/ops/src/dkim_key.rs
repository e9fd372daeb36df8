//! The `dkim_key` family: an OpenDKIM key pair for one of the account's mail domains, made
//! by `opendkim-genkey` with a typed selector and size, listed in OpenDKIM's KeyTable and
//! SigningTable (derived whole, see `mail.rs`).
//!
//! The result carries the exact TXT record the control plane must publish
//! (`<selector>._domainkey.<domain>`), read back from the key's zone stub, plus the SPF and
//! DMARC records the node recommends for the domain. A re-sent request with the same
//! selector and size keeps the existing key (the published record stays valid); another
//! selector or size makes a new one.

pub use declarations::dkim_key::*;

use registry::types::{Hex32, Presence};
use registry::{Apply, OpError, Purge};
use serde_json::json;

use crate::account::{account_info, store_error};
use crate::context::{Ctx, provider_error};
use crate::mail::{Change, DKIM_KEY, MailState, Target, dkim_key_dir, own_domain, sync};

impl Purge<Ctx> for DkimKey {
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let rows = crate::mail::purge_family(ctx, DKIM_KEY, account, &[Target::Dkim])?;
        for row in &rows {
            let dir = dkim_key_dir(&ctx.provider, &row.id);
            ctx.provider.remove_tree(&dir).map_err(provider_error)?;
        }
        crate::mail::forget_family(ctx, DKIM_KEY, account)
    }
}

/// The SPF and DMARC records the node recommends: mail leaves through the domain's MX and A
/// hosts, others soft-fail; a DMARC failure is quarantined.
pub fn recommended_records(domain: &str) -> (TxtRecord, TxtRecord) {
    (
        TxtRecord {
            name: domain.to_owned(),
            value: "v=spf1 a mx ~all".to_owned(),
        },
        TxtRecord {
            name: format!("_dmarc.{domain}"),
            value: "v=DMARC1; p=quarantine; adkim=r; aspf=r".to_owned(),
        },
    )
}

impl Apply<Ctx> for EnsureDkimKey {
    fn apply(ctx: &mut Ctx, req: &EnsureDkimKeyRequest) -> Result<DkimKeyResult, OpError> {
        account_info(ctx, &req.account)?;
        own_domain(ctx, &req.account, req.domain.as_str())?;
        let provider = ctx.provider.clone();
        let dir = dkim_key_dir(&provider, &req.id);
        let stub_path = dir.join(format!("{}.txt", req.selector));
        let data = json!({"domain": req.domain, "selector": req.selector, "bits": req.bits});
        let mail = MailState::load_in(ctx, &Change::None).map_err(store_error)?;
        let same = mail
            .of(DKIM_KEY)
            .find(|r| r.id == req.id)
            .is_some_and(|r| r.data == data);
        let stub = provider.read_config(&stub_path).map_err(provider_error)?;
        if !same || stub.is_none() {
            // A key whose row was never written (a crash) or that the request changes is
            // made anew: the published record must match the key on disk.
            provider.remove_tree(&dir).map_err(provider_error)?;
            provider.ensure_dir(&dir, 0o750).map_err(provider_error)?;
            provider
                .dkim_genkey(
                    &dir,
                    req.domain.as_str(),
                    req.selector.as_str(),
                    req.bits.bits(),
                )
                .map_err(provider_error)?;
            crash::point("dkim_key.after_genkey");
        }
        let stub = provider
            .read_config(&stub_path)
            .map_err(provider_error)?
            .unwrap_or_default();
        let value = provider::parse_dkim_txt(&String::from_utf8_lossy(&stub)).ok_or_else(|| {
            OpError::permanent(
                "dkim_key_unreadable",
                format!(
                    "{} is not an opendkim-genkey zone stub",
                    stub_path.display()
                ),
            )
        })?;
        sync(
            ctx,
            Change::Upsert {
                family: DKIM_KEY,
                id: &req.id,
                account: &req.account,
                data: data.clone(),
            },
            &[Target::Dkim],
        )?;
        ctx.set_resource(data);
        let (spf, dmarc) = recommended_records(req.domain.as_str());
        Ok(DkimKeyResult {
            state: Presence::Present,
            dkim: Some(TxtRecord {
                name: format!("{}._domainkey.{}", req.selector, req.domain),
                value,
            }),
            spf: Some(spf),
            dmarc: Some(dmarc),
        })
    }
}

impl Apply<Ctx> for RemoveDkimKey {
    fn apply(ctx: &mut Ctx, req: &RemoveDkimKeyRequest) -> Result<DkimKeyResult, OpError> {
        sync(
            ctx,
            Change::Delete {
                family: DKIM_KEY,
                id: &req.id,
            },
            &[Target::Dkim],
        )?;
        let dir = dkim_key_dir(&ctx.provider, &req.id);
        ctx.provider.remove_tree(&dir).map_err(provider_error)?;
        ctx.forget_row();
        Ok(DkimKeyResult {
            state: Presence::Absent,
            dkim: None,
            spf: None,
            dmarc: None,
        })
    }
}
