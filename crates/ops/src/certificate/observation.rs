//! What is in place: `observe_certificates` (the row's source and domain, the chain on
//! disk), and the renewal requests the runner's `renew_certificates` step queues.

use registry::{Apply, Family, OpError, Operation, Owner};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use state::Stored;

use super::chain::renewal_due;
use super::{
    Certificate, CertificateRow, CertificateSource, ObserveCertificates, ObservedCertificate,
    ObservedCertificates, RenewCertificate, certificate_files, hex,
};
use crate::account::AccountRef;
use crate::context::{Ctx, store_error};
use crate::web_domain::WebDomainRow;

/// One recorded certificate as observed: the row's source and domain, the chain in place.
fn observe_one(ctx: &Ctx, stored: &Stored<CertificateRow>, now: i64) -> ObservedCertificate {
    let row = &stored.row;
    // A domain whose row cannot be read names nothing: the certificate is then due.
    let domain_row = ctx
        .view()
        .get::<WebDomainRow>(&row.web_domain)
        .ok()
        .flatten();
    let names: Vec<String> = domain_row
        .iter()
        .flat_map(|d| std::iter::once(&d.row.domain).chain(d.row.aliases.iter()))
        .map(ToString::to_string)
        .collect();
    let source = row.source;
    let (chain_path, _) = certificate_files(ctx, &stored.id);
    let chain = ctx
        .provider
        .read_config(&chain_path)
        .ok()
        .flatten()
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    let leaf = chain.as_deref().and_then(|c| acme::parse_chain(c).ok());
    ObservedCertificate {
        id: stored.id.clone(),
        web_domain: row.web_domain.clone(),
        domain: names.first().cloned(),
        source,
        not_after: leaf.as_ref().map(|(l, _)| l.not_after),
        fingerprint_sha256: leaf.as_ref().map(|(l, _)| hex(&Sha256::digest(&l.der))),
        renewal_due: source == CertificateSource::Acme
            && renewal_due(chain.as_deref(), &names, now),
    }
}

impl Apply<Ctx> for ObserveCertificates {
    fn apply(ctx: &mut Ctx, req: &AccountRef) -> Result<ObservedCertificates, OpError> {
        crate::account::account_info(ctx, &req.id)?;
        let now = ctx.clock().now_secs();
        let rows = ctx
            .view()
            .of_account::<CertificateRow>(&req.id)
            .map_err(store_error)?;
        Ok(ObservedCertificates {
            certificates: rows.iter().map(|r| observe_one(ctx, r, now)).collect(),
        })
    }
}

/// The renewal requests the runner's `renew_certificates` step queues: one per ACME
/// certificate that is due and has no job queued or running, with a request id derived from
/// the certificate, the chain in place and `day`: the same request is admitted once, so a
/// renewal that failed (the chain in place stays) is made again the next day.
pub fn renewal_requests(ctx: &Ctx, day: i64) -> Result<Vec<Value>, OpError> {
    let now = ctx.clock().now_secs();
    let mut out = Vec::new();
    for stored in ctx.view().all::<CertificateRow>().map_err(store_error)? {
        let Owner::Tenant(account) = &stored.owner else {
            continue;
        };
        let seen = observe_one(ctx, &stored, now);
        if !seen.renewal_due
            || ctx
                .state
                .pending_job(Certificate::NAME, &stored.id)
                .map_err(store_error)?
        {
            continue;
        }
        let in_place = seen.fingerprint_sha256.as_deref().unwrap_or("none");
        let digest = Sha256::digest(format!(
            "renew_certificate\0{}\0{in_place}\0{day}",
            stored.id
        ));
        let request_id = hex(&digest[..16]);
        out.push(json!({
            "request_id": request_id,
            "operation": RenewCertificate::NAME,
            "resource": {"id": stored.id, "account": account},
        }));
    }
    Ok(out)
}
