//! The one owner of every tenant vhost: a web domain's Apache virtual host, and the
//! `AuthUserFile`s of its protected directories, rendered from the view alone.
//!
//! Several families contribute to a vhost, each through its rows in the view and nothing
//! else: `web_domain` (names, document root, suspension), `account` (a suspended account's
//! domains answer 403 too), `php_version` (the FastCGI handler of the account's pool),
//! `redirect`, `protected_directory` and `ip_block` (access rules), `certificate` (the HTTPS
//! virtual host), `https_policy` (forced HTTPS and the HSTS header, applied while a
//! certificate is bound), `error_pages` (`ErrorDocument`s, left out while suspended) and
//! `mail_domain` (the mail clients' settings of a mail domain of
//! the same name, `crate::mail_clients`). A family's handler records its row
//! ([`Ctx::set_row`], [`Ctx::forget_row`]) and calls [`sync`] for the domain it touched;
//! families never call each other to change a vhost, and this module is the only one that
//! reads their rows to render one. Every vhost also carries what keeps a tenant's requests
//! to its own code and files (`crate::web_isolation`) and answers the node's ACME challenges.
//!
//! The vhost file is named after the web domain's resource id, so renaming a domain
//! rewrites one file and a retry after a crash rewrites the same one. What [`sync`] installs
//! is also what the drift check compares ([`derived`]): one function renders both. The vhost and the user
//! files are installed together through [`Ctx::write_service_configs`]: written atomically,
//! checked with Apache's configuration test, put back on failure, reloaded once per batch.

mod render;

pub use render::{
    ACME_CHALLENGE_PREFIX, HttpsRules, ProtectedDir, RedirectRule, SSL_PROTOCOLS, TlsFiles,
    VhostExtras, hsts_value, redirect_pattern, redirect_target, render_ip_block, render_protected,
    render_user_file, render_vhost, sends_back_to_itself,
};

use std::path::PathBuf;

use registry::types::Hex32;
use registry::{Aspects, Content, Derived, Of, OpError, Owner};
use state::{Stored, View};
use store::StoredRow;

use crate::account::{AccountInfo, AccountRow, account_info, live_account_info};
use crate::certificate::{CertificateRow, certificate_files, challenge_dir};
use crate::context::{ConfigFile, Ctx, SecretGroup, Service, provider_error, store_error};
use crate::error_pages::ErrorPagesRow;
use crate::mail_domain::MailDomainRow;
use crate::php::PhpVersionRow;
use crate::php::pool::socket_path;
use crate::web_access::{IpBlockRow, ProtectedDirectoryRow};
use crate::web_domain::{HttpsPolicyRow, RedirectRow, WebDomainRow};
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

/// Whether a certificate of `account` is bound to its web domain `id` in the view: what the
/// domain's HTTPS virtual host, and its HTTPS policy, stand on.
pub fn has_certificate(ctx: &Ctx, account: &Hex32, id: &Hex32) -> Result<bool, OpError> {
    let bound = on_domain(&ctx.view(), account, id, |c: &CertificateRow| &c.web_domain)?;
    Ok(!bound.is_empty())
}

/// Rewrites the vhost of `account`'s web domain `id` and the user files of its protected
/// directories from the view. A domain the view does not have has no vhost to write (the
/// parts recorded for it wait for it).
pub fn sync(ctx: &mut Ctx, account: &Hex32, id: &Hex32) -> Result<(), OpError> {
    let Some(domain) = Domain::of(ctx, account, id, |ctx, account| {
        account_info(ctx, account).map(Some)
    })?
    else {
        return Ok(());
    };
    if !domain.parts.protected.is_empty() {
        ctx.provider
            .ensure_dir(
                &ctx.provider.sysconf(ctx.provider.apache_layout().auth_dir),
                0o755,
            )
            .map_err(provider_error)?;
    }
    let files: Vec<ConfigFile> = files(ctx, &domain)
        .into_iter()
        .map(|(_, file)| file)
        .collect();
    ctx.write_service_configs(Service::Apache, &files)
}

/// What one domain's files are rendered from, as the view has it: the domain's row, its
/// account's user, and what the other families contribute.
struct Domain<'a> {
    account: &'a Hex32,
    id: &'a Hex32,
    row: WebDomainRow,
    info: AccountInfo,
    /// Whether the domain's account is suspended: its vhost answers 403 as the domain's own
    /// suspension makes it.
    account_suspended: bool,
    parts: Parts,
}

impl<'a> Domain<'a> {
    /// `account`'s web domain `id`, with its account's user as `user` finds it; `None` when
    /// the view has no such domain or `user` finds none.
    fn of(
        ctx: &Ctx,
        account: &'a Hex32,
        id: &'a Hex32,
        user: impl FnOnce(&Ctx, &Hex32) -> Result<Option<AccountInfo>, OpError>,
    ) -> Result<Option<Domain<'a>>, OpError> {
        let Some(row) = ctx
            .view()
            .get_owned::<WebDomainRow>(account, id)
            .map_err(store_error)?
        else {
            return Ok(None);
        };
        let Some(info) = user(ctx, account)? else {
            return Ok(None);
        };
        let account_suspended = ctx
            .view()
            .get::<AccountRow>(account)
            .map_err(store_error)?
            .is_some_and(|stored| stored.row.suspended);
        Ok(Some(Domain {
            account,
            id,
            row,
            info,
            account_suspended,
            parts: Parts::of(ctx, account, id)?,
        }))
    }
}

impl Domain<'_> {
    /// Whether the vhost answers 403: the domain or its account is suspended.
    fn suspended(&self) -> bool {
        self.row.suspended || self.account_suspended
    }
}

/// The vhost and the `AuthUserFile`s of one domain: each file with the resource it is
/// derived for (the domain, or its protected directory).
fn files(ctx: &Ctx, domain: &Domain<'_>) -> Vec<(Hex32, ConfigFile)> {
    let mut files = vec![(
        domain.id.clone(),
        ConfigFile {
            path: path(ctx, domain.id),
            content: text(ctx, domain).into_bytes(),
            secret_group: None,
        },
    )];
    // Apache reads them as the account (mpm-itk's `AssignUserID`), so it is the account's
    // group that may read them, and no other tenant's.
    for stored in &domain.parts.protected {
        files.push((
            stored.id.clone(),
            ConfigFile {
                path: user_file_path(ctx, &stored.id),
                content: render_user_file(&stored.row.users).into_bytes(),
                secret_group: Some(SecretGroup::Id(domain.info.gid)),
            },
        ));
    }
    files
}

/// What a vhost's file is, for the drift check.
pub const VHOST_FILE: Aspects = Aspects::new(
    crate::web_domain::VHOST_MISSING,
    crate::web_domain::VHOST_DIFFERS,
);

/// What an `AuthUserFile` is, for the drift check.
pub const USER_FILE: Aspects = Aspects::new(
    crate::web_access::AUTH_USER_FILE_MISSING,
    crate::web_access::AUTH_USER_FILE_DIFFERS,
);

/// One domain's files as [`sync`] would install them now, each with what is there: for the
/// drift check of every family that contributes to them.
pub struct DerivedVhost {
    /// The vhost, reported under the web domain.
    pub vhost: Derived,
    /// Each protected directory's `AuthUserFile`, reported under the directory.
    pub user_files: Vec<Derived>,
}

/// [`DerivedVhost`] of `account`'s web domain `id`, or `None` when the view has no such
/// domain or the account's user is gone (nothing is derived for it then).
pub fn derived(ctx: &Ctx, account: &Hex32, id: &Hex32) -> Result<Option<DerivedVhost>, OpError> {
    let Some(domain) = Domain::of(ctx, account, id, live_account_info)? else {
        return Ok(None);
    };
    let owner = Owner::Tenant(account.clone());
    let mut items = Vec::new();
    for (i, (of, file)) in files(ctx, &domain).into_iter().enumerate() {
        let actual = ctx
            .provider
            .read_config(&file.path)
            .map_err(provider_error)?;
        let aspects = if i == 0 { VHOST_FILE } else { USER_FILE };
        items.push(Derived::path(
            Of::new(&of, &owner),
            file.path,
            Content::Bytes(file.content),
            Content::file(actual),
            aspects,
        ));
    }
    let vhost = items.remove(0);
    Ok(Some(DerivedVhost {
        vhost,
        user_files: items,
    }))
}

/// The vhosts of the web domains `rows` name (`web_domain` of each row), once each: what a
/// family contributing to them derives.
pub fn derived_vhosts<T: StoredRow>(
    ctx: &Ctx,
    web_domain: impl Fn(&Stored<T>) -> &Hex32,
) -> Result<Vec<Derived>, OpError> {
    let mut domains = std::collections::BTreeSet::new();
    for stored in ctx.view().all::<T>().map_err(store_error)? {
        if let Owner::Tenant(account) = &stored.owner {
            domains.insert((account.clone(), web_domain(&stored).clone()));
        }
    }
    let mut items = Vec::new();
    for (account, id) in domains {
        if let Some(derived) = derived(ctx, &account, &id)? {
            items.push(derived.vhost);
        }
    }
    Ok(items)
}

/// What the families other than `web_domain` contribute to one domain's vhost, from the
/// view.
struct Parts {
    php_version: Option<PhpVersionRow>,
    redirects: Vec<RedirectRow>,
    protected: Vec<Stored<ProtectedDirectoryRow>>,
    ip_block: Option<IpBlockRow>,
    certificate: Option<Hex32>,
    https_policy: Option<HttpsPolicyRow>,
    error_pages: Option<ErrorPagesRow>,
    /// The account's mail domain named as the web domain (or one of its aliases).
    mail_domain: Option<Hex32>,
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
            https_policy: view
                .get_owned::<HttpsPolicyRow>(account, id)
                .map_err(store_error)?,
            error_pages: view
                .get_owned::<ErrorPagesRow>(account, id)
                .map_err(store_error)?,
            mail_domain: mail_domain_of(&view, account, id)?,
        })
    }
}

/// The account's mail domain named as its web domain `id`, the web domain's own name first
/// and then its aliases.
fn mail_domain_of(view: &View<'_>, account: &Hex32, id: &Hex32) -> Result<Option<Hex32>, OpError> {
    let Some(web) = view
        .get_owned::<WebDomainRow>(account, id)
        .map_err(store_error)?
    else {
        return Ok(None);
    };
    let mail = view
        .of_account::<MailDomainRow>(account)
        .map_err(store_error)?;
    Ok(std::iter::once(&web.domain)
        .chain(web.aliases.iter())
        .find_map(|name| mail.iter().find(|m| &m.row.domain == name))
        .map(|m| m.id.clone()))
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

/// The vhost of a web domain from its row and its parts.
fn text(ctx: &Ctx, of: &Domain<'_>) -> String {
    let (account, id, domain, info, parts) = (of.account, of.id, &of.row, &of.info, &of.parts);
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
        suspended: of.suspended(),
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
        https: parts
            .https_policy
            .as_ref()
            .map(|p| HttpsRules {
                force_https: p.force_https,
                hsts: p.hsts.clone(),
            })
            .unwrap_or_default(),
        error_pages: parts.error_pages.as_ref().map_or_else(Vec::new, |e| {
            e.pages
                .pages()
                .into_iter()
                .map(|(status, page)| (status, page.clone()))
                .collect()
        }),
        acme_challenges: Some(challenge_dir(ctx)),
        mail_clients: parts
            .mail_domain
            .as_ref()
            .map(|mail| crate::mail_clients::dir(ctx, mail)),
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
