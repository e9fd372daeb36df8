//! The `web_domain` family: one Apache virtual host per domain, with its aliases and its
//! document root inside the tenant's home.
//!
//! The vhost file is named after the resource id, so renaming a domain rewrites one file and
//! a retry after a crash rewrites the same one. It is installed through
//! [`Ctx::write_service_config`]: written atomically, checked with Apache's configuration
//! test, put back on failure, and reloaded once per batch. The document root is created by
//! the tenant worker, as the tenant (`Provider::as_tenant`).

pub use declarations::web_domain::*;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use registry::types::{
    DomainAliases, DomainName, Hex32, HomePath, HttpUrl, PhpVersion, Presence, RedirectSource,
    RedirectStatus,
};
use registry::{Apply, Family, OpError, Owner, Purge};
use serde_json::{Value, json};

use crate::account::{account_info, store_error, tenant_of};
use crate::certificate::{self, Certificate};
use crate::context::{ConfigFile, Ctx, Service, provider_error};
use crate::php::{self, PhpVersionFamily, PoolChange};
use crate::web_access::{self, IpBlock, ProtectedDir, ProtectedDirectory};
use crate::web_isolation::{self, WebTenant};

impl Purge<Ctx> for WebDomain {
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let owner = Owner::Tenant(account.clone());
        let rows = ctx
            .state
            .resources_of(&owner, WebDomain::NAME)
            .map_err(store_error)?;
        for row in &rows {
            let path = vhost_path(ctx, &row.resource_id);
            ctx.remove_service_config(Service::Apache, &path)?;
        }
        if !rows.is_empty() {
            ctx.state
                .forget_resources_of(account, WebDomain::NAME)
                .map_err(store_error)?;
        }
        Ok(())
    }
}

/// The vhost file of one web domain (mapped under the provider's root).
pub fn vhost_path(ctx: &Ctx, id: &Hex32) -> PathBuf {
    ctx.provider
        .sysconf(ctx.provider.apache_layout().vhosts_dir)
        .join(format!("{id}.conf"))
}

/// The HTTP-01 challenge path. It is never redirected and stays reachable on a suspended
/// domain, so a certificate can be issued or renewed whatever else the vhost does.
pub const ACME_CHALLENGE_PREFIX: &str = "/.well-known/acme-challenge/";

/// One redirect as the vhost renders it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedirectRule {
    pub source: RedirectSource,
    pub target: HttpUrl,
    pub status: RedirectStatus,
}

/// What a vhost holds besides its names and document root.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VhostExtras {
    /// The socket of the account's pool for the domain's PHP version.
    pub php_socket: Option<PathBuf>,
    pub redirects: Vec<RedirectRule>,
    /// Serve 403 for everything but the challenge path; the document root is left alone.
    pub suspended: bool,
    /// Directories beneath the document root behind HTTP Basic authentication.
    pub protected: Vec<ProtectedDir>,
    /// Addresses and networks answered 403 (all but the challenge path).
    pub blocked: Vec<registry::types::IpNetwork>,
    /// A certificate bound to the domain: the same site is also served over HTTPS.
    pub tls: Option<TlsFiles>,
    /// The node's directory of HTTP-01 challenge responses (mapped path): answers
    /// `/.well-known/acme-challenge/` from outside the tenant's document root, so neither a
    /// redirect nor the tenant's `.htaccess` can stand in the way of an ACME certificate.
    pub acme_challenges: Option<PathBuf>,
}

/// The files of a certificate bound to a vhost (mapped paths).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsFiles {
    pub chain: PathBuf,
    pub key: PathBuf,
}

/// `RedirectMatch`'s pattern for a source prefix: the prefix itself or anything beneath it,
/// never the challenge path (a negative lookahead anchored at the start). The source is
/// `[A-Za-z0-9._~/-]` only, so escaping `.` is all a regular expression needs.
pub fn redirect_pattern(source: &RedirectSource) -> String {
    let escaped = source.as_str().replace('.', "\\.");
    let challenge = ACME_CHALLENGE_PREFIX.replace('.', "\\.");
    if escaped.ends_with('/') {
        format!("^(?!{challenge}){escaped}(.*)$")
    } else {
        format!("^(?!{challenge}){escaped}(/.*)?$")
    }
}

/// `RedirectMatch`'s target: the URL then the rest of the path. `&` means "the whole match"
/// to Apache's substitution, so it is escaped; the URL type admits no `$`, quote or
/// backslash.
pub fn redirect_target(target: &HttpUrl) -> String {
    format!("{}$1", target.as_str().replace('&', "\\&"))
}

/// The vhost state.db derives for a recorded web domain (its row), or `None` when the row
/// or its account's row cannot be read back into valid types (a node bug the drift check
/// reports as a differing vhost).
pub fn derived_vhost(ctx: &Ctx, row: &store::ResourceRow) -> Result<Option<String>, OpError> {
    let registry::Owner::Tenant(account) = &row.owner else {
        return Ok(None);
    };
    match vhost_text(ctx, account, &row.resource_id, VhostChange::Nothing) {
        Ok(text) => Ok(text),
        Err(e) if e.code == "state_corrupt" || e.code == "account_missing" => Ok(None),
        Err(e) => Err(e),
    }
}

/// Renders the virtual host. Every value in it comes from a validated type (a domain name is
/// lowercase LDH, a home path is `[A-Za-z0-9._-]` components, a redirect source
/// `[A-Za-z0-9._~/-]`, a target URL has no quote, backslash or space), so nothing a tenant
/// sends can open a new directive or section.
pub fn render_vhost(
    id: &Hex32,
    account: &Hex32,
    domain: &DomainName,
    aliases: &DomainAliases,
    docroot: &Path,
    tenant: &WebTenant,
    extras: &VhostExtras,
) -> String {
    let docroot_path = docroot;
    let docroot = docroot.display();
    let header = format!(
        "# Managed by layerone node for web domain {id} of account {account}.\n\
         # Changes made here are replaced.\n"
    );
    let mut names = format!("    ServerName {domain}\n");
    if !aliases.is_empty() {
        let list: Vec<&str> = aliases.iter().map(DomainName::as_str).collect();
        names.push_str(&format!("    ServerAlias {}\n", list.join(" ")));
    }
    // The body both virtual hosts share: the same site over HTTP and, with a certificate,
    // over HTTPS (the challenge path stays exempt from redirects in both).
    let mut out = web_isolation::render_tenant_section(tenant);
    if let Some(challenges) = &extras.acme_challenges {
        let dir = challenges.display();
        out.push_str(&format!(
            "    # ACME HTTP-01 challenge responses of the node: never redirected nor denied.\n\
             \x20   Alias \"{ACME_CHALLENGE_PREFIX}\" \"{dir}/\"\n\
             \x20   <Directory \"{dir}\">\n\
             \x20       Options None\n\
             \x20       AllowOverride None\n\
             \x20       Require all granted\n\
             \x20   </Directory>\n"
        ));
    }
    out.push_str(&format!("    DocumentRoot \"{docroot}\"\n"));
    out.push_str(&web_isolation::render_docroot_directory(docroot_path));
    // Deeper `<Directory>` sections replace the document root's `Require all granted`.
    let mut protected: Vec<&ProtectedDir> = extras.protected.iter().collect();
    protected.sort_by(|a, b| a.path.cmp(&b.path));
    for dir in protected {
        out.push_str(&web_access::render_protected(&format!("{docroot}"), dir));
    }
    if let Some(socket) = &extras.php_socket {
        out.push_str(&format!(
            "    <FilesMatch \"\\.php$\">\n\
             \x20       SetHandler \"proxy:unix:{}|fcgi://localhost\"\n\
             \x20   </FilesMatch>\n",
            socket.display()
        ));
    }
    if extras.suspended {
        out.push_str(&format!(
            "    # Suspended: everything answers 403 but the certificate challenge.\n\
             \x20   <Location \"/\">\n\
             \x20       Require all denied\n\
             \x20   </Location>\n\
             \x20   <Location \"{ACME_CHALLENGE_PREFIX}\">\n\
             \x20       Require all granted\n\
             \x20   </Location>\n"
        ));
    } else {
        // Longest source first: the most specific redirect wins.
        let mut redirects: Vec<&RedirectRule> = extras.redirects.iter().collect();
        redirects.sort_by(|a, b| {
            b.source
                .as_str()
                .len()
                .cmp(&a.source.as_str().len())
                .then(a.source.cmp(&b.source))
        });
        for rule in redirects {
            out.push_str(&format!(
                "    RedirectMatch {} \"{}\" \"{}\"\n",
                rule.status.code(),
                redirect_pattern(&rule.source),
                redirect_target(&rule.target)
            ));
        }
        if !extras.blocked.is_empty() {
            out.push_str(&web_access::render_ip_block(&extras.blocked));
        }
    }
    let mut vhost = format!("{header}<VirtualHost *:80>\n{names}{out}</VirtualHost>\n");
    if let Some(tls) = &extras.tls {
        vhost.push_str(&format!(
            "<VirtualHost *:443>\n{names}\
             \x20   SSLEngine on\n\
             \x20   SSLCertificateFile \"{}\"\n\
             \x20   SSLCertificateKeyFile \"{}\"\n\
             {out}</VirtualHost>\n",
            tls.chain.display(),
            tls.key.display()
        ));
    }
    vhost
}

/// The change the running job makes to a vhost, applied over what state.db records.
#[derive(Clone, Copy, Debug)]
pub enum VhostChange<'a> {
    Nothing,
    /// The web domain's own row as this job writes it.
    Domain(&'a Value),
    PhpVersion(Option<PhpVersion>),
    /// A redirect of this domain is written (`Some(row data)`) or removed (`None`).
    Redirect(&'a Hex32, Option<&'a Value>),
    /// A certificate of this domain is bound (`Some(row data)`) or unbound (`None`).
    Certificate(&'a Hex32, Option<&'a Value>),
    /// A protected directory is written (`Some(row data)`) or removed (`None`).
    Protected(&'a Hex32, Option<&'a Value>),
    /// The domain's IP block is written (`Some(row data)`) or removed (`None`).
    IpBlock(Option<&'a Value>),
}

pub(crate) fn corrupt(what: &str) -> OpError {
    OpError::permanent("state_corrupt", format!("a recorded {what} does not parse"))
}

pub(crate) fn parse_field<T: std::str::FromStr>(value: &Value, what: &str) -> Result<T, OpError> {
    value
        .as_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| corrupt(what))
}

/// Fails with `web_domain_missing` unless `account` has the web domain `id`.
pub fn require_domain(ctx: &Ctx, account: &Hex32, id: &Hex32) -> Result<Value, OpError> {
    match ctx
        .state
        .resource(WebDomain::NAME, id)
        .map_err(store_error)?
    {
        Some(row) if row.owner == Owner::Tenant(account.clone()) => Ok(row.data),
        _ => Err(OpError::permanent(
            "web_domain_missing",
            format!("web domain {id} does not exist for account {account}"),
        )),
    }
}

/// Rewrites the vhost of web domain `id` from state.db with `change` applied: names and
/// document root, PHP handler, redirects, suspension. A domain with no row has no vhost to
/// write (its PHP version or redirects wait for it).
pub fn sync_vhost(
    ctx: &mut Ctx,
    account: &Hex32,
    id: &Hex32,
    change: VhostChange<'_>,
) -> Result<(), OpError> {
    match vhost_text(ctx, account, id, change)? {
        Some(vhost) => {
            ctx.write_service_config(Service::Apache, &vhost_path(ctx, id), vhost.as_bytes())
        }
        None => Ok(()),
    }
}

/// The vhost file of web domain `id` as state.db derives it with `change` applied, for a
/// handler that installs it with other files in one configuration test; `None` when the
/// domain has no row.
pub fn vhost_file(
    ctx: &Ctx,
    account: &Hex32,
    id: &Hex32,
    change: VhostChange<'_>,
) -> Result<Option<ConfigFile>, OpError> {
    Ok(
        vhost_text(ctx, account, id, change)?.map(|text| ConfigFile {
            path: vhost_path(ctx, id),
            content: text.into_bytes(),
            secret_group: None,
        }),
    )
}

/// The vhost of web domain `id` as state.db derives it with `change` applied; `None` when
/// the domain has no row.
fn vhost_text(
    ctx: &Ctx,
    account: &Hex32,
    id: &Hex32,
    change: VhostChange<'_>,
) -> Result<Option<String>, OpError> {
    let data = match change {
        VhostChange::Domain(data) => data.clone(),
        _ => match ctx
            .state
            .resource(WebDomain::NAME, id)
            .map_err(store_error)?
        {
            Some(row) if row.owner == Owner::Tenant(account.clone()) => row.data,
            _ => return Ok(None),
        },
    };
    let domain: DomainName = parse_field(&data["domain"], "domain")?;
    let aliases: DomainAliases =
        serde_json::from_value(data["aliases"].clone()).map_err(|_| corrupt("alias list"))?;
    let relative: HomePath = parse_field(&data["docroot"], "document root")?;
    let info = account_info(ctx, account)?;
    let docroot = ctx.provider.sysconf(&info.home).join(relative.as_str());
    let version = match change {
        VhostChange::PhpVersion(v) => v,
        _ => ctx
            .state
            .resource(PhpVersionFamily::NAME, id)
            .map_err(store_error)?
            .and_then(|row| serde_json::from_value(row.data["version"].clone()).ok()),
    };
    let php_socket = version.map(|v| php::socket_path(ctx, account, v));
    let mut rows: BTreeMap<Hex32, Value> = ctx
        .state
        .resources_of(&Owner::Tenant(account.clone()), Redirect::NAME)
        .map_err(store_error)?
        .into_iter()
        .map(|r| (r.resource_id, r.data))
        .collect();
    if let VhostChange::Redirect(rid, row) = change {
        match row {
            Some(data) => rows.insert(rid.clone(), data.clone()),
            None => rows.remove(rid),
        };
    }
    let mut redirects = Vec::new();
    for data in rows.values().filter(|d| d["web_domain"] == id.as_str()) {
        redirects.push(RedirectRule {
            source: parse_field(&data["source"], "redirect source")?,
            target: parse_field(&data["target"], "redirect target")?,
            status: serde_json::from_value(data["status"].clone())
                .map_err(|_| corrupt("redirect status"))?,
        });
    }
    let mut certificates: BTreeMap<Hex32, Value> = ctx
        .state
        .resources_of(&Owner::Tenant(account.clone()), Certificate::NAME)
        .map_err(store_error)?
        .into_iter()
        .map(|r| (r.resource_id, r.data))
        .collect();
    if let VhostChange::Certificate(cid, row) = change {
        match row {
            Some(data) => certificates.insert(cid.clone(), data.clone()),
            None => certificates.remove(cid),
        };
    }
    let tls = certificates
        .iter()
        .find(|(_, d)| d["web_domain"] == id.as_str())
        .map(|(cid, _)| {
            let (chain, key) = certificate::certificate_files(ctx, cid);
            TlsFiles { chain, key }
        });
    let mut protected_rows: BTreeMap<Hex32, Value> = ctx
        .state
        .resources_of(&Owner::Tenant(account.clone()), ProtectedDirectory::NAME)
        .map_err(store_error)?
        .into_iter()
        .map(|r| (r.resource_id, r.data))
        .collect();
    if let VhostChange::Protected(pid, row) = change {
        match row {
            Some(data) => protected_rows.insert(pid.clone(), data.clone()),
            None => protected_rows.remove(pid),
        };
    }
    let mut protected = Vec::new();
    for (pid, data) in protected_rows
        .iter()
        .filter(|(_, d)| d["web_domain"] == id.as_str())
    {
        protected.push(web_access::protected_dir(ctx, pid, data)?);
    }
    let block = match change {
        VhostChange::IpBlock(row) => row.cloned(),
        _ => ctx
            .state
            .resource(IpBlock::NAME, id)
            .map_err(store_error)?
            .filter(|row| row.owner == Owner::Tenant(account.clone()))
            .map(|row| row.data),
    };
    let blocked = match block {
        Some(data) => web_access::blocked_networks(&data)?,
        None => Vec::new(),
    };
    let extras = VhostExtras {
        php_socket,
        redirects,
        suspended: data["suspended"].as_bool().unwrap_or(false),
        tls,
        acme_challenges: Some(certificate::challenge_dir(ctx)),
        protected,
        blocked,
    };
    let tenant = WebTenant {
        uid: info.uid,
        gid: info.gid,
        home: ctx.provider.sysconf(&info.home),
    };
    Ok(Some(render_vhost(
        id, account, &domain, &aliases, &docroot, &tenant, &extras,
    )))
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
            .ok_or_else(|| {
                OpError::permanent(
                    "invalid_docroot",
                    format!("{} is not a plain relative path", relative.display()),
                )
            })?;
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
        crash::point("web_domain.after_docroot");
        let aliases: Vec<String> = req.aliases.iter().map(ToString::to_string).collect();
        // Suspension belongs to the domain, not to this request: a changed domain stays
        // suspended until unsuspended.
        let suspended = ctx
            .state
            .resource(WebDomain::NAME, &req.id)
            .map_err(store_error)?
            .is_some_and(|row| row.data["suspended"].as_bool().unwrap_or(false));
        let data = json!({
            "domain": req.domain,
            "aliases": aliases,
            "docroot": relative,
            "suspended": suspended,
        });
        // A PHP version recorded for this domain id gets its pool back with the domain.
        php::sync_pools(ctx, &req.account, PoolChange::Domain(&req.id, true))?;
        sync_vhost(ctx, &req.account, &req.id, VhostChange::Domain(&data))?;
        crash::point("web_domain.after_vhost_write");
        ctx.set_resource(data);
        Ok(WebDomainResult {
            state: Presence::Present,
            domain: Some(req.domain.to_string()),
            aliases,
            // The path as the system names it, not where the provider's root maps it.
            document_root: Some(info.home.join(&relative).display().to_string()),
        })
    }
}

/// A host name is served by one vhost on a node: refuse one another web domain already has.
fn check_names_free(ctx: &Ctx, req: &EnsureWebDomainRequest) -> Result<(), OpError> {
    let wanted: Vec<&str> = std::iter::once(req.domain.as_str())
        .chain(req.aliases.iter().map(DomainName::as_str))
        .collect();
    for row in ctx
        .state
        .resources_of_family(WebDomain::NAME)
        .map_err(store_error)?
    {
        if row.resource_id == req.id {
            continue;
        }
        let names = std::iter::once(&row.data["domain"])
            .chain(row.data["aliases"].as_array().into_iter().flatten());
        if let Some(taken) = names
            .filter_map(|n| n.as_str())
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
        ctx.remove_service_config(Service::Apache, &vhost_path(ctx, &req.id))?;
        crash::point("web_domain.after_old_vhost_removed");
        // The account's pool of this domain's version goes if no other domain uses it. The
        // PHP version and redirects recorded for the domain stay (inert) until removed or the
        // account is purged, and apply again if the domain comes back.
        if ctx
            .state
            .resource(crate::account::Account::NAME, &req.account)
            .map_err(store_error)?
            .is_some()
        {
            php::sync_pools(ctx, &req.account, PoolChange::Domain(&req.id, false))?;
        }
        ctx.forget_row();
        Ok(WebDomainResult {
            state: Presence::Absent,
            domain: None,
            aliases: Vec::new(),
            document_root: None,
        })
    }
}

fn set_suspended(
    ctx: &mut Ctx,
    req: &WebDomainSuspensionRequest,
    suspended: bool,
) -> Result<WebDomainSuspensionResult, OpError> {
    let mut data = require_domain(ctx, &req.account, &req.id)?;
    data["suspended"] = json!(suspended);
    sync_vhost(ctx, &req.account, &req.id, VhostChange::Domain(&data))?;
    crash::point("web_domain.after_suspension_vhost");
    let domain = data["domain"].as_str().unwrap_or_default().to_owned();
    ctx.set_resource(data);
    Ok(WebDomainSuspensionResult {
        state: Presence::Present,
        domain,
        suspended,
    })
}

impl Apply<Ctx> for SuspendWebDomain {
    fn apply(
        ctx: &mut Ctx,
        req: &WebDomainSuspensionRequest,
    ) -> Result<WebDomainSuspensionResult, OpError> {
        set_suspended(ctx, req, true)
    }
}

impl Apply<Ctx> for UnsuspendWebDomain {
    fn apply(
        ctx: &mut Ctx,
        req: &WebDomainSuspensionRequest,
    ) -> Result<WebDomainSuspensionResult, OpError> {
        set_suspended(ctx, req, false)
    }
}

impl Purge<Ctx> for Redirect {
    /// Forgets the account's redirects. Runs before `web_domain`'s purge, which removes the
    /// vhosts they were rendered into.
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        ctx.state
            .forget_resources_of(account, Redirect::NAME)
            .map_err(store_error)?;
        Ok(())
    }
}

impl Apply<Ctx> for EnsureRedirect {
    fn apply(ctx: &mut Ctx, req: &EnsureRedirectRequest) -> Result<RedirectResult, OpError> {
        require_domain(ctx, &req.account, &req.web_domain)?;
        // A redirect that moved to another domain leaves its old vhost first.
        let previous = ctx
            .state
            .resource(Redirect::NAME, &req.id)
            .map_err(store_error)?;
        for row in ctx
            .state
            .resources_of(&Owner::Tenant(req.account.clone()), Redirect::NAME)
            .map_err(store_error)?
        {
            if row.resource_id != req.id
                && row.data["web_domain"] == req.web_domain.as_str()
                && row.data["source"] == req.source.as_str()
            {
                return Err(OpError::permanent(
                    "redirect_conflict",
                    format!(
                        "redirect {} already redirects {} on this domain",
                        row.resource_id, req.source
                    ),
                ));
            }
        }
        let data = json!({
            "web_domain": req.web_domain,
            "source": req.source,
            "target": req.target,
            "status": req.status,
        });
        if let Some(old) = previous
            && let Some(old_domain) = old.data["web_domain"]
                .as_str()
                .and_then(|s| s.parse::<Hex32>().ok())
            && old_domain != req.web_domain
        {
            sync_vhost(
                ctx,
                &req.account,
                &old_domain,
                VhostChange::Redirect(&req.id, None),
            )?;
        }
        sync_vhost(
            ctx,
            &req.account,
            &req.web_domain,
            VhostChange::Redirect(&req.id, Some(&data)),
        )?;
        crash::point("redirect.after_vhost");
        ctx.set_resource(data);
        Ok(RedirectResult {
            state: Presence::Present,
            directive: Some(format!(
                "RedirectMatch {} \"{}\" \"{}\"",
                req.status.code(),
                redirect_pattern(&req.source),
                redirect_target(&req.target)
            )),
        })
    }
}

impl Apply<Ctx> for RemoveRedirect {
    fn apply(ctx: &mut Ctx, req: &RemoveRedirectRequest) -> Result<RedirectResult, OpError> {
        if let Some(row) = ctx
            .state
            .resource(Redirect::NAME, &req.id)
            .map_err(store_error)?
            && row.owner == Owner::Tenant(req.account.clone())
            && let Some(domain) = row.data["web_domain"]
                .as_str()
                .and_then(|s| s.parse::<Hex32>().ok())
        {
            sync_vhost(
                ctx,
                &req.account,
                &domain,
                VhostChange::Redirect(&req.id, None),
            )?;
        }
        ctx.forget_row();
        Ok(RedirectResult {
            state: Presence::Absent,
            directive: None,
        })
    }
}
