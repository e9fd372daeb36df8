//! The one owner of every tenant vhost: a web domain's Apache virtual host, and the
//! `AuthUserFile`s of its protected directories, rendered from the view alone.
//!
//! Several families contribute to a vhost, each through its rows in the view and nothing
//! else: `web_domain` (names, document root, suspension), `php_version` (the FastCGI handler
//! of the account's pool), `redirect`, `protected_directory` and `ip_block` (access rules),
//! and `certificate` (the HTTPS virtual host). A family's handler records its row
//! ([`Ctx::set_row`], [`Ctx::forget_row`]) and calls [`sync`] for the domain it touched;
//! families never call each other to change a vhost, and this module is the only one that
//! reads their rows to render one. Every vhost also carries what keeps a tenant's requests
//! to its own code and files (`crate::web_isolation`) and answers the node's ACME challenges.
//!
//! The vhost file is named after the web domain's resource id, so renaming a domain
//! rewrites one file and a retry after a crash rewrites the same one. The vhost and the user
//! files are installed together through [`Ctx::write_service_configs`]: written atomically,
//! checked with Apache's configuration test, put back on failure, reloaded once per batch.

mod render;

pub use render::{
    ACME_CHALLENGE_PREFIX, ProtectedDir, RedirectRule, TlsFiles, VhostExtras, redirect_pattern,
    redirect_target, render_ip_block, render_protected, render_user_file, render_vhost,
};

use std::path::PathBuf;

use registry::types::Hex32;
use registry::{OpError, Owner};
use store::{Stored, StoredRow, View};

use crate::account::{AccountInfo, account_info};
use crate::certificate::{CertificateRow, certificate_files, challenge_dir};
use crate::context::{ConfigFile, Ctx, SecretGroup, Service, provider_error, store_error};
use crate::php::PhpVersionRow;
use crate::php::pool::socket_path;
use crate::web_access::{IpBlockRow, ProtectedDirectoryRow};
use crate::web_domain::{RedirectRow, WebDomainRow};
use crate::web_isolation::WebTenant;

/// The vhost file of web domain `id` (mapped under the provider's root).
pub fn path(ctx: &Ctx, id: &Hex32) -> PathBuf {
    ctx.provider
        .sysconf(ctx.provider.apache_layout().vhosts_dir)
        .join(format!("{id}.conf"))
}

/// The `AuthUserFile` of protected directory `id` (mapped under the provider's root).
pub fn user_file_path(ctx: &Ctx, id: &Hex32) -> PathBuf {
    ctx.provider
        .sysconf(ctx.provider.apache_layout().auth_dir)
        .join(format!("{id}.htpasswd"))
}

/// The web domain a vhost part attaches to: `account`'s web domain `id` as the view has it,
/// or `web_domain_missing`.
pub fn require_domain(ctx: &Ctx, account: &Hex32, id: &Hex32) -> Result<WebDomainRow, OpError> {
    ctx.view()
        .get_owned::<WebDomainRow>(account, id)
        .map_err(store_error)?
        .ok_or_else(|| {
            OpError::permanent(
                "web_domain_missing",
                format!("web domain {id} does not exist for account {account}"),
            )
        })
}

/// Rewrites the vhost of `account`'s web domain `id` and the user files of its protected
/// directories from the view. A domain the view does not have has no vhost to write (the
/// parts recorded for it wait for it).
pub fn sync(ctx: &mut Ctx, account: &Hex32, id: &Hex32) -> Result<(), OpError> {
    let Some(domain) = ctx
        .view()
        .get_owned::<WebDomainRow>(account, id)
        .map_err(store_error)?
    else {
        return Ok(());
    };
    let info = account_info(ctx, account)?;
    let parts = Parts::of(ctx, account, id)?;
    let mut files = vec![ConfigFile {
        path: path(ctx, id),
        content: text(ctx, account, id, &domain, &info, &parts).into_bytes(),
        secret_group: None,
    }];
    if !parts.protected.is_empty() {
        ctx.provider
            .ensure_dir(
                &ctx.provider.sysconf(ctx.provider.apache_layout().auth_dir),
                0o755,
            )
            .map_err(provider_error)?;
    }
    // Apache reads them as the account (mpm-itk's `AssignUserID`), so it is the account's
    // group that may read them, and no other tenant's.
    for stored in &parts.protected {
        files.push(ConfigFile {
            path: user_file_path(ctx, &stored.id),
            content: render_user_file(&stored.row.users).into_bytes(),
            secret_group: Some(SecretGroup::Id(info.gid)),
        });
    }
    ctx.write_service_configs(Service::Apache, &files)
}

/// The vhost the view derives for a recorded web domain, or `None` when its rows or its
/// account's cannot be read back (a node bug the drift check reports as a differing vhost).
pub fn derived(ctx: &Ctx, domain: &Stored<WebDomainRow>) -> Result<Option<String>, OpError> {
    let Owner::Tenant(account) = &domain.owner else {
        return Ok(None);
    };
    let derive = || -> Result<String, OpError> {
        let info = account_info(ctx, account)?;
        let parts = Parts::of(ctx, account, &domain.id)?;
        Ok(text(ctx, account, &domain.id, &domain.row, &info, &parts))
    };
    match derive() {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.code == "state_corrupt" || e.code == "account_missing" => Ok(None),
        Err(e) => Err(e),
    }
}

/// What the families other than `web_domain` contribute to one domain's vhost, from the
/// view.
struct Parts {
    php_version: Option<PhpVersionRow>,
    redirects: Vec<RedirectRow>,
    protected: Vec<Stored<ProtectedDirectoryRow>>,
    ip_block: Option<IpBlockRow>,
    certificate: Option<Hex32>,
}

impl Parts {
    fn of(ctx: &Ctx, account: &Hex32, id: &Hex32) -> Result<Parts, OpError> {
        let view = ctx.view();
        Ok(Parts {
            php_version: view
                .get_owned::<PhpVersionRow>(account, id)
                .map_err(store_error)?,
            redirects: on_domain(&view, account, id, |r: &RedirectRow| &r.web_domain)?
                .into_iter()
                .map(|r| r.row)
                .collect(),
            protected: on_domain(&view, account, id, |p: &ProtectedDirectoryRow| {
                &p.web_domain
            })?,
            ip_block: view
                .get_owned::<IpBlockRow>(account, id)
                .map_err(store_error)?,
            certificate: on_domain(&view, account, id, |c: &CertificateRow| &c.web_domain)?
                .into_iter()
                .next()
                .map(|c| c.id),
        })
    }
}

/// The account's rows of `T`'s family that name web domain `id` (`web_domain` of the row).
fn on_domain<T: StoredRow>(
    view: &View<'_>,
    account: &Hex32,
    id: &Hex32,
    web_domain: impl Fn(&T) -> &Hex32,
) -> Result<Vec<Stored<T>>, OpError> {
    let rows = view.of_account::<T>(account).map_err(store_error)?;
    Ok(rows
        .into_iter()
        .filter(|stored| web_domain(&stored.row) == id)
        .collect())
}

/// The vhost of web domain `id` from its row and its parts.
fn text(
    ctx: &Ctx,
    account: &Hex32,
    id: &Hex32,
    domain: &WebDomainRow,
    info: &AccountInfo,
    parts: &Parts,
) -> String {
    let home = ctx.provider.sysconf(&info.home);
    let docroot = home.join(domain.docroot.as_str());
    let extras = VhostExtras {
        php_socket: parts
            .php_version
            .as_ref()
            .map(|p| socket_path(ctx, account, p.version)),
        redirects: parts
            .redirects
            .iter()
            .map(|r| RedirectRule {
                source: r.source.clone(),
                target: r.target.clone(),
                status: r.status,
            })
            .collect(),
        suspended: domain.suspended,
        protected: parts
            .protected
            .iter()
            .map(|p| ProtectedDir {
                path: p.row.path.clone(),
                realm: p.row.realm.clone(),
                user_file: user_file_path(ctx, &p.id),
            })
            .collect(),
        blocked: parts
            .ip_block
            .as_ref()
            .map(|b| b.networks.iter().cloned().collect())
            .unwrap_or_default(),
        tls: parts.certificate.as_ref().map(|cid| {
            let (chain, key) = certificate_files(ctx, cid);
            TlsFiles { chain, key }
        }),
        acme_challenges: Some(challenge_dir(ctx)),
    };
    let tenant = WebTenant {
        uid: info.uid,
        gid: info.gid,
        home,
    };
    render_vhost(
        id,
        account,
        &domain.domain,
        &domain.aliases,
        &docroot,
        &tenant,
        &extras,
    )
}
