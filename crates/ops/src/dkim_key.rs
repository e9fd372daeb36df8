//! The `dkim_key` family: an OpenDKIM key pair for one of the account's mail domains, made
//! by `opendkim-genkey` with a typed selector and size, listed in OpenDKIM's KeyTable and
//! SigningTable (derived whole, see `mail.rs`).
//!
//! The result carries the exact TXT record the control plane must publish
//! (`<selector>._domainkey.<domain>`), read back from the key's zone stub, plus the SPF and
//! DMARC records the node recommends for the domain. A re-sent request with the same
//! selector and size keeps the existing key while its private key is there (the published
//! record stays valid); another selector or size, or a lost private key, makes a new one.

pub use declarations::dkim_key::*;

use registry::types::mail::{DkimKeyBits, DkimSelector};
use registry::types::{DomainName, Hex32, Presence};
use registry::{Apply, Aspects, Content, Derive, Derived, Of, OpError, Purge, RowType};
use serde::{Deserialize, Serialize};
use store::StoredRow;

use crate::account::account_info;
use crate::context::{Ctx, provider_error, store_error};
use crate::mail::{DKIM_KEY, Target, derived_tables, dkim_key_dir, own_domain, purge_family, sync};

crash::points! {
    AFTER_GENKEY = "dkim_key.after_genkey",
}

/// A DKIM key as stored: its domain, selector and size (the key itself is on disk only).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DkimKeyRow {
    pub domain: DomainName,
    pub selector: DkimSelector,
    pub bits: DkimKeyBits,
}

impl StoredRow for DkimKeyRow {
    const FAMILY: &'static str = DKIM_KEY;
}

impl Purge<Ctx> for DkimKey {
    const ROW: Option<RowType> = Some(store::row_type::<DkimKeyRow>());

    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let rows = purge_family::<DkimKeyRow>(ctx, account, &[Target::Dkim])?;
        for stored in &rows {
            let dir = dkim_key_dir(&ctx.provider, &stored.id);
            ctx.provider.remove_tree(&dir).map_err(provider_error)?;
        }
        ctx.forget_rows_of::<DkimKeyRow>(account)
    }
}

/// The SPF and DMARC records the node recommends for `domain` (`crate::mail_records`).
pub fn recommended_records(domain: &str) -> (TxtRecord, TxtRecord) {
    (
        TxtRecord {
            name: domain.to_owned(),
            value: crate::mail_records::SPF.to_owned(),
        },
        TxtRecord {
            name: format!("_dmarc.{domain}"),
            value: crate::mail_records::DMARC.to_owned(),
        },
    )
}

/// The zone stub `opendkim-genkey` wrote for DKIM key `id` (mapped): its public record.
pub fn public_key_stub(
    provider: &provider::Provider,
    id: &Hex32,
    selector: &DkimSelector,
) -> std::path::PathBuf {
    dkim_key_dir(provider, id).join(format!("{selector}.txt"))
}

const PRIVATE_KEY: Aspects = Aspects::new(DKIM_KEY_MISSING, DKIM_KEY_MISSING);

/// The private key of DKIM key `id` (mapped), as `opendkim-genkey` names it.
fn private_key(ctx: &Ctx, id: &Hex32, selector: &DkimSelector) -> std::path::PathBuf {
    dkim_key_dir(&ctx.provider, id).join(format!("{selector}.private"))
}

impl Derive<Ctx> for DkimKey {
    /// The key's lines in OpenDKIM's KeyTable and SigningTable
    /// (`crate::mail::derived_tables`), and its private key file (generated, so only its
    /// presence is compared).
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        let mut items = derived_tables(ctx, DKIM_KEY)?;
        for stored in ctx.view().all::<DkimKeyRow>().map_err(store_error)? {
            let path = private_key(ctx, &stored.id, &stored.row.selector);
            let actual = match ctx.provider.read_config(&path).map_err(provider_error)? {
                Some(_) => Content::Present,
                None => Content::Absent,
            };
            items.push(Derived::path(
                Of::new(&stored.id, &stored.owner),
                path,
                Content::Present,
                actual,
                PRIVATE_KEY,
            ));
        }
        Ok(items)
    }
}

impl Apply<Ctx> for EnsureDkimKey {
    fn apply(ctx: &mut Ctx, req: &EnsureDkimKeyRequest) -> Result<DkimKeyResult, OpError> {
        account_info(ctx, &req.account)?;
        own_domain(ctx, &req.account, req.domain.as_str())?;
        let provider = ctx.provider.clone();
        let dir = dkim_key_dir(&provider, &req.id);
        let stub_path = public_key_stub(&provider, &req.id, &req.selector);
        let row = DkimKeyRow {
            domain: req.domain.clone(),
            selector: req.selector.clone(),
            bits: req.bits,
        };
        let same = ctx
            .view()
            .get::<DkimKeyRow>(&req.id)
            .map_err(store_error)?
            .is_some_and(|stored| stored.row == row);
        let stub = provider.read_config(&stub_path).map_err(provider_error)?;
        let private = provider
            .read_config(&private_key(ctx, &req.id, &req.selector))
            .map_err(provider_error)?;
        if !same || stub.is_none() || private.is_none() {
            // A key whose row was never written (a crash), that the request changes, or
            // whose private half is gone (OpenDKIM cannot sign with a record alone) is made
            // anew: the published record must match the key on disk.
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
            crash::point(AFTER_GENKEY);
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
        ctx.set_row(&row);
        sync(ctx, &[Target::Dkim])?;
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
        ctx.forget_row();
        sync(ctx, &[Target::Dkim])?;
        let dir = dkim_key_dir(&ctx.provider, &req.id);
        ctx.provider.remove_tree(&dir).map_err(provider_error)?;
        Ok(DkimKeyResult {
            state: Presence::Absent,
            dkim: None,
            spf: None,
            dmarc: None,
        })
    }
}
