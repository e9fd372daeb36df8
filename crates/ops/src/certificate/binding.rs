//! The certificate's files and their binding to the web domain's vhost: `ensure_certificate`
//! (kept when converged, issued or read from a bundle otherwise), `renew_certificate` (a new
//! ACME chain for the kept key) and `remove_certificate` (unbound, then deleted).

use std::path::PathBuf;

use registry::types::{DomainName, Hex32, Presence};
use registry::{Apply, BlobId, OpError, Owner};

use super::bundle::{bundle_refused, read_bundle, source_field};
use super::chain::{check_chain, renewal_due};
use super::issuance::{issue_chain, key_for};
use super::{
    CERTIFICATE_DIR, CertificateRef, CertificateResult, CertificateRow, CertificateSource,
    EnsureCertificate, EnsureCertificateRequest, RemoveCertificate, RenewCertificate,
    certificate_files, refused,
};
use crate::context::{Ctx, provider_error, store_error};
use crate::web_domain::WebDomainRow;
use crate::{mail_clients, mail_hosts, vhost};

/// Rewrites the vhost of the domain `row` was bound to, once the view no longer has the row
/// (the caller forgot or dropped it), then deletes the certificate's files.
pub(super) fn unbind_and_delete(
    ctx: &mut Ctx,
    account: &Hex32,
    id: &Hex32,
    row: &CertificateRow,
) -> Result<(), OpError> {
    vhost::sync(ctx, account, &row.web_domain)?;
    // The mail hosts stop naming the files before they go (Dovecot's test reads them).
    let affected = mail_domains_served(ctx, account, &row.web_domain)?;
    mail_hosts::sync(ctx, false)?;
    crash::point(super::AFTER_UNBIND);
    let (chain, key) = certificate_files(ctx, id);
    for path in [chain, key] {
        ctx.provider.remove_config(&path).map_err(provider_error)?;
    }
    for mail_domain in affected {
        mail_clients::sync(ctx, &mail_domain)?;
    }
    Ok(())
}

/// The account's mail domains whose mail host name `mail.<domain>` is the web domain's name
/// or one of its aliases: those a certificate bound to it serves mail for.
fn mail_domains_served(
    ctx: &Ctx,
    account: &Hex32,
    web_domain: &Hex32,
) -> Result<Vec<Hex32>, OpError> {
    let Some(web) = ctx
        .view()
        .get_owned::<WebDomainRow>(account, web_domain)
        .map_err(store_error)?
    else {
        return Ok(Vec::new());
    };
    let mut names: Vec<DomainName> = web.aliases.iter().cloned().collect();
    names.push(web.domain.clone());
    mail_hosts::mail_domains_hosted_at(ctx, account, &names)
}

/// After a certificate was put in place or replaced: the SNI files of the mail hosts it
/// serves are rewritten and their services reloaded (forced when it serves one: the files'
/// text is the same, the certificate is new), and those mail domains' client settings follow
/// their mail host.
fn follow_mail_hosts(ctx: &mut Ctx, account: &Hex32, web_domain: &Hex32) -> Result<(), OpError> {
    let affected = mail_domains_served(ctx, account, web_domain)?;
    mail_hosts::sync(ctx, !affected.is_empty())?;
    for mail_domain in affected {
        mail_clients::sync(ctx, &mail_domain)?;
    }
    Ok(())
}

/// The web domain's name and aliases, from its row.
fn domain_names(
    ctx: &Ctx,
    account: &Hex32,
    web_domain: &Hex32,
) -> Result<(DomainName, Vec<String>), OpError> {
    let row = vhost::require_domain(ctx, account, web_domain)?;
    let aliases = row.aliases.iter().map(ToString::to_string).collect();
    Ok((row.domain, aliases))
}

/// The chain and key in place for certificate `id`, each when present.
fn in_place(ctx: &Ctx, id: &Hex32) -> Result<(Option<String>, Option<String>), OpError> {
    let (chain_path, key_path) = certificate_files(ctx, id);
    let read = |path: &PathBuf| -> Result<Option<String>, OpError> {
        Ok(ctx
            .provider
            .read_config(path)
            .map_err(provider_error)?
            .map(|b| String::from_utf8_lossy(&b).into_owned()))
    };
    Ok((read(&chain_path)?, read(&key_path)?))
}

/// Writes the key (first, so a chain never names a key that is not there yet) and the chain,
/// each only when it changed.
fn install_files(ctx: &Ctx, id: &Hex32, key: &str, chain: &str) -> Result<(), OpError> {
    let dir = ctx.provider.sysconf(CERTIFICATE_DIR);
    ctx.provider
        .ensure_dir(&dir, 0o755)
        .map_err(provider_error)?;
    let (chain_path, key_path) = certificate_files(ctx, id);
    let (chain_now, key_now) = in_place(ctx, id)?;
    if key_now.as_deref() != Some(key) {
        ctx.provider
            .write_config_atomic(&key_path, key.as_bytes(), 0o600)
            .map_err(provider_error)?;
    }
    crash::point(super::AFTER_KEY);
    if chain_now.as_deref() != Some(chain) {
        ctx.provider
            .write_config_atomic(&chain_path, chain.as_bytes(), 0o644)
            .map_err(provider_error)?;
    }
    crash::point(super::AFTER_CHAIN);
    Ok(())
}

/// Puts a checked chain and key in place for certificate `id`, binds it to the web domain's
/// vhost and records the row. Shared by ensure and renew.
#[allow(clippy::too_many_arguments)]
fn bind(
    ctx: &mut Ctx,
    account: &Hex32,
    id: &Hex32,
    web_domain: &Hex32,
    (source, blob): (CertificateSource, Option<&BlobId>),
    (domain, aliases): (&DomainName, &[String]),
    (chain, key): (&str, &str),
    issued: bool,
) -> Result<CertificateResult, OpError> {
    let now = ctx.clock().now_secs();
    let checked = check_chain(chain, key, domain, aliases, source_field(source), now)?;
    install_files(ctx, id, key, chain)?;
    // Its listeners are checked once the batch's reloads ran (`listeners::follow`).
    ctx.certificate_in_place(account, id, &checked.fingerprint);
    ctx.set_row(&CertificateRow {
        web_domain: web_domain.clone(),
        source,
        not_after: checked.not_after,
        fingerprint_sha256: Some(checked.fingerprint.clone()),
        // The blob's name (a digest), so a replayed request converges without the blob.
        blob: blob.cloned(),
    });
    // Rewritten and tested even when the text is the same: Apache reloads the new chain.
    vhost::sync(ctx, account, web_domain)?;
    follow_mail_hosts(ctx, account, web_domain)?;
    crash::point(super::AFTER_VHOST);
    Ok(CertificateResult {
        state: Presence::Present,
        domain: Some(domain.to_string()),
        covered: checked.covered,
        uncovered: checked.uncovered,
        not_after: Some(checked.not_after),
        fingerprint_sha256: Some(checked.fingerprint),
        issued,
    })
}

/// The row of certificate `id` when `account` owns it.
fn owned_row(ctx: &Ctx, account: &Hex32, id: &Hex32) -> Result<Option<CertificateRow>, OpError> {
    match ctx.view().get::<CertificateRow>(id).map_err(store_error)? {
        Some(stored) if stored.owner == Owner::Tenant(account.clone()) => Ok(Some(stored.row)),
        Some(_) => Err(refused(
            "certificate_conflict",
            format!("certificate {id} belongs to another account"),
        )),
        None => Ok(None),
    }
}

impl Apply<Ctx> for EnsureCertificate {
    fn apply(ctx: &mut Ctx, req: &EnsureCertificateRequest) -> Result<CertificateResult, OpError> {
        let (domain, aliases) = domain_names(ctx, &req.account, &req.web_domain)?;
        for stored in ctx.view().all::<CertificateRow>().map_err(store_error)? {
            if stored.id != req.id && stored.row.web_domain == req.web_domain {
                return Err(refused(
                    "certificate_conflict",
                    format!(
                        "resource.web_domain: certificate {} is already bound to web domain {}",
                        stored.id, req.web_domain
                    ),
                ));
            }
        }
        match (req.source, &req.blob) {
            (CertificateSource::Bundle, None) => {
                return Err(bundle_refused(
                    "blob_required",
                    "a bundle certificate names its uploaded blob",
                ));
            }
            (CertificateSource::Acme, Some(_)) => {
                return Err(bundle_refused(
                    "blob_not_expected",
                    "an ACME certificate takes no blob",
                ));
            }
            _ => {}
        }
        let previous = owned_row(ctx, &req.account, &req.id)?;
        let names: Vec<String> = std::iter::once(domain.to_string())
            .chain(aliases.iter().cloned())
            .collect();
        let (chain_now, key_now) = in_place(ctx, &req.id)?;
        let now = ctx.clock().now_secs();
        // Converged already: the same domain, source (and blob), and a chain in place that
        // matches its key; an ACME one also covers every name and is not due.
        let same = previous.as_ref().is_some_and(|row| {
            row.web_domain == req.web_domain
                && row.source == req.source
                && req
                    .blob
                    .as_ref()
                    .is_none_or(|blob| row.blob.as_ref() == Some(blob))
        });
        let keep = match (&chain_now, &key_now) {
            (Some(chain), Some(key))
                if same
                    && (req.source == CertificateSource::Bundle
                        || !renewal_due(Some(chain), &names, now))
                    && check_chain(
                        chain,
                        key,
                        &domain,
                        &aliases,
                        source_field(req.source),
                        now,
                    )
                    .is_ok() =>
            {
                Some((chain.clone(), key.clone()))
            }
            _ => None,
        };
        let issued = keep.is_none();
        let (chain, key) = match (keep, req.source, &req.blob) {
            (Some(pair), _, _) => pair,
            (None, CertificateSource::Bundle, Some(blob)) => {
                let (chain, key) = read_bundle(ctx, blob)?;
                // Checked before anything changes: a refused bundle leaves everything as it was.
                check_chain(&chain, &key, &domain, &aliases, "resource.blob", now)?;
                (chain, key)
            }
            _ => {
                let key = key_for(key_now)?;
                (issue_chain(ctx, &names, &key)?, key)
            }
        };
        // A certificate that moves to another domain leaves its old vhost first: the view
        // has no row for it until `bind` records the new one.
        if let Some(old) = &previous
            && old.web_domain != req.web_domain
        {
            ctx.forget_row();
            vhost::sync(ctx, &req.account, &old.web_domain)?;
            follow_mail_hosts(ctx, &req.account, &old.web_domain)?;
        }
        bind(
            ctx,
            &req.account,
            &req.id,
            &req.web_domain,
            (req.source, req.blob.as_ref()),
            (&domain, &aliases),
            (&chain, &key),
            issued,
        )
    }
}

impl Apply<Ctx> for RenewCertificate {
    fn apply(ctx: &mut Ctx, req: &CertificateRef) -> Result<CertificateResult, OpError> {
        let Some(row) = owned_row(ctx, &req.account, &req.id)? else {
            return Err(refused(
                "certificate_missing",
                format!(
                    "resource.id: certificate {} does not exist for account {}",
                    req.id, req.account
                ),
            ));
        };
        let source = row.source;
        if source != CertificateSource::Acme {
            return Err(refused(
                "certificate_not_renewable",
                format!(
                    "resource.id: certificate {} came from a {} source; only ACME certificates are renewed by the node",
                    req.id,
                    source.as_str()
                ),
            ));
        }
        let web_domain = row.web_domain;
        let (domain, aliases) = domain_names(ctx, &req.account, &web_domain)?;
        let names: Vec<String> = std::iter::once(domain.to_string())
            .chain(aliases.iter().cloned())
            .collect();
        let (_, key_now) = in_place(ctx, &req.id)?;
        let key = key_for(key_now)?;
        let chain = issue_chain(ctx, &names, &key)?;
        bind(
            ctx,
            &req.account,
            &req.id,
            &web_domain,
            (source, None),
            (&domain, &aliases),
            (&chain, &key),
            true,
        )
    }
}

impl Apply<Ctx> for RemoveCertificate {
    fn apply(ctx: &mut Ctx, req: &CertificateRef) -> Result<CertificateResult, OpError> {
        let previous = owned_row(ctx, &req.account, &req.id)?;
        ctx.forget_row();
        match previous {
            Some(row) => unbind_and_delete(ctx, &req.account, &req.id, &row)?,
            None => {
                // Nothing recorded: files a crash left behind still go.
                let (chain, key) = certificate_files(ctx, &req.id);
                for path in [chain, key] {
                    ctx.provider.remove_config(&path).map_err(provider_error)?;
                }
            }
        }
        Ok(CertificateResult {
            state: Presence::Absent,
            domain: None,
            covered: Vec::new(),
            uncovered: Vec::new(),
            not_after: None,
            fingerprint_sha256: None,
            issued: false,
        })
    }
}
