//! `ensure_web_domain` and `remove_web_domain`: the domain's row, its document root (made by
//! the tenant worker, as the tenant), its vhost (rendered by `crate::vhost`) and the
//! account's PHP pools, which follow the domains that use them (`crate::php::pool`).

use std::path::{Path, PathBuf};

use registry::types::{DomainName, HomePath, Presence};
use registry::{Apply, Derive, Derived, Hex32, OpError, Owner, Purge, RowType};

use super::{
    EnsureWebDomain, EnsureWebDomainRequest, RemoveWebDomain, RemoveWebDomainRequest, WebDomain,
    WebDomainResult, WebDomainRow,
};
use crate::account::{AccountRow, account_info, tenant_of};
use crate::context::{Ctx, Service, provider_error, store_error};
use crate::php::pool::{self, PoolSync};
use crate::vhost;

impl Purge<Ctx> for WebDomain {
    const ROW: Option<RowType> = Some(store::row_type::<WebDomainRow>());

    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let rows = ctx
            .view()
            .of_account::<WebDomainRow>(account)
            .map_err(store_error)?;
        for stored in &rows {
            let path = vhost::path(ctx, &stored.id);
            ctx.remove_service_config(Service::Apache, &path)?;
        }
        if !rows.is_empty() {
            ctx.forget_rows_of::<WebDomainRow>(account)?;
        }
        Ok(())
    }
}

impl Derive<Ctx> for WebDomain {
    /// Each domain's vhost, as the vhost owner renders it from the view (`vhost::derived`).
    /// The document root is the tenant's to arrange and is not compared.
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        let mut items = Vec::new();
        for stored in ctx.view().all::<WebDomainRow>().map_err(store_error)? {
            if let Owner::Tenant(account) = &stored.owner
                && let Some(derived) = vhost::derived(ctx, account, &stored.id)?
            {
                items.push(derived.vhost);
            }
        }
        Ok(items)
    }
}

impl Apply<Ctx> for EnsureWebDomain {
    fn apply(ctx: &mut Ctx, req: &EnsureWebDomainRequest) -> Result<WebDomainResult, OpError> {
        let info = account_info(ctx, &req.account)?;
        check_names_free(ctx, req)?;
        let relative = match &req.docroot {
            Some(path) => PathBuf::from(path.as_str()),
            None => Path::new("web")
                .join(req.domain.as_str())
                .join("public_html"),
        };
        // Created by the tenant worker, as the tenant: the directories are the tenant's by
        // construction, and a symlink planted anywhere on the way fails this job only.
        let docroot_rel: tenant::RelPath = relative
            .to_str()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| invalid_docroot(&relative))?;
        let docroot: HomePath = relative
            .to_str()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| invalid_docroot(&relative))?;
        let who = tenant_of(ctx, &info)?;
        ctx.provider
            .as_tenant(
                &who,
                &tenant::Request::EnsureDirs {
                    dirs: vec![docroot_rel],
                    mode: tenant::DirMode::Public,
                },
            )
            .map_err(provider_error)?;
        crash::point(super::AFTER_DOCROOT);
        // Suspension belongs to the domain, not to this request: a changed domain stays
        // suspended until unsuspended.
        let suspended = ctx
            .view()
            .get::<WebDomainRow>(&req.id)
            .map_err(store_error)?
            .is_some_and(|stored| stored.row.suspended);
        ctx.set_row(&WebDomainRow {
            domain: req.domain.clone(),
            aliases: req.aliases.clone(),
            docroot,
            suspended,
        });
        // A PHP version recorded for this domain id gets its pool back with the domain.
        pool::sync(ctx, &req.account, PoolSync::Update)?;
        vhost::sync(ctx, &req.account, &req.id)?;
        crash::point(super::AFTER_VHOST_WRITE);
        Ok(WebDomainResult {
            state: Presence::Present,
            domain: Some(req.domain.to_string()),
            aliases: req.aliases.iter().map(ToString::to_string).collect(),
            // The path as the system names it, not where the provider's root maps it.
            document_root: Some(info.home.join(&relative).display().to_string()),
        })
    }
}

fn invalid_docroot(relative: &Path) -> OpError {
    OpError::permanent(
        "invalid_docroot",
        format!("{} is not a plain relative path", relative.display()),
    )
}

/// A host name is served by one vhost on a node: refuse one another web domain already has.
fn check_names_free(ctx: &Ctx, req: &EnsureWebDomainRequest) -> Result<(), OpError> {
    let wanted: Vec<&str> = std::iter::once(req.domain.as_str())
        .chain(req.aliases.iter().map(DomainName::as_str))
        .collect();
    for stored in ctx.view().all::<WebDomainRow>().map_err(store_error)? {
        if stored.id == req.id {
            continue;
        }
        let row = &stored.row;
        if let Some(taken) = std::iter::once(&row.domain)
            .chain(row.aliases.iter())
            .map(DomainName::as_str)
            .find(|n| wanted.contains(n))
        {
            return Err(OpError::permanent(
                "domain_taken",
                format!("{taken} is already served by another web domain on this node"),
            ));
        }
    }
    Ok(())
}

impl Apply<Ctx> for RemoveWebDomain {
    fn apply(ctx: &mut Ctx, req: &RemoveWebDomainRequest) -> Result<WebDomainResult, OpError> {
        ctx.remove_service_config(Service::Apache, &vhost::path(ctx, &req.id))?;
        crash::point(super::AFTER_OLD_VHOST_REMOVED);
        ctx.forget_row();
        // The account's pool of this domain's version goes if no other domain uses it. The
        // PHP version and redirects recorded for the domain stay (inert) until removed or the
        // account is purged, and apply again if the domain comes back.
        if ctx
            .view()
            .get::<AccountRow>(&req.account)
            .map_err(store_error)?
            .is_some()
        {
            pool::sync(ctx, &req.account, PoolSync::Removal)?;
        }
        Ok(WebDomainResult {
            state: Presence::Absent,
            domain: None,
            aliases: Vec::new(),
            document_root: None,
        })
    }
}
