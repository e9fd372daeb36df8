//! The `web_domain` family: one Apache virtual host per domain, with its aliases and its
//! document root inside the tenant's home.
//!
//! The vhost file is named after the resource id, so renaming a domain rewrites one file and
//! a retry after a crash rewrites the same one. It is installed through
//! [`Ctx::write_service_config`]: written atomically, checked with Apache's configuration
//! test, put back on failure, and reloaded once per batch. The document root is created by
//! the tenant worker, as the tenant (`Provider::as_tenant`).

use std::path::{Path, PathBuf};

use registry::types::{DomainAliases, DomainName, Hex32, HomePath, Presence};
use registry::{Family, Module, OpError, Operation, Owner, Resource, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::account::{account_info, store_error, tenant_of};
use crate::context::{Ctx, Service, provider_error};

pub struct WebDomain;

impl Family for WebDomain {
    const NAME: &'static str = "web_domain";
    const MODULE: Module = Module::Web;
    type Context = Ctx;

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

/// The vhost state.db derives for a recorded web domain (its row), or `None` when the row
/// or its account's row cannot be read back into valid types (a node bug the drift check
/// reports as a differing vhost).
pub fn derived_vhost(ctx: &Ctx, row: &store::ResourceRow) -> Result<Option<String>, OpError> {
    let registry::Owner::Tenant(account) = &row.owner else {
        return Ok(None);
    };
    let Some(account_row) = ctx
        .state
        .resource(crate::account::Account::NAME, account)
        .map_err(store_error)?
    else {
        return Ok(None);
    };
    let domain: Option<DomainName> = serde_json::from_value(row.data["domain"].clone()).ok();
    let aliases: Option<DomainAliases> = serde_json::from_value(row.data["aliases"].clone()).ok();
    let (Some(domain), Some(aliases), Some(home), Some(docroot)) = (
        domain,
        aliases,
        account_row.data["home"].as_str(),
        row.data["docroot"].as_str(),
    ) else {
        return Ok(None);
    };
    let docroot = ctx.provider.sysconf(home).join(docroot);
    Ok(Some(render_vhost(
        &row.resource_id,
        account,
        &domain,
        &aliases,
        &docroot,
    )))
}

/// Renders the virtual host. Every value in it comes from a validated type (a domain name is
/// lowercase LDH, a home path is `[A-Za-z0-9._-]` components), so nothing a tenant sends can
/// open a new directive or section.
pub fn render_vhost(
    id: &Hex32,
    account: &Hex32,
    domain: &DomainName,
    aliases: &DomainAliases,
    docroot: &Path,
) -> String {
    let docroot = docroot.display();
    let mut out = format!(
        "# Managed by layerone node for web domain {id} of account {account}.\n\
         # Changes made here are replaced.\n\
         <VirtualHost *:80>\n    ServerName {domain}\n"
    );
    if !aliases.is_empty() {
        let names: Vec<&str> = aliases.iter().map(DomainName::as_str).collect();
        out.push_str(&format!("    ServerAlias {}\n", names.join(" ")));
    }
    out.push_str(&format!(
        "    DocumentRoot \"{docroot}\"\n\
         \x20   <Directory \"{docroot}\">\n\
         \x20       Options -Indexes +SymLinksIfOwnerMatch\n\
         \x20       AllowOverride AuthConfig FileInfo Indexes Limit\n\
         \x20       Require all granted\n\
         \x20   </Directory>\n\
         </VirtualHost>\n"
    ));
    out
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureWebDomainRequest {
    pub id: Hex32,
    pub account: Hex32,
    pub domain: DomainName,
    #[serde(default)]
    pub aliases: DomainAliases,
    /// The document root, relative to the home. Default: `web/<domain>/public_html`.
    #[serde(default)]
    pub docroot: Option<HomePath>,
}

impl Resource for EnsureWebDomainRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveWebDomainRequest {
    pub id: Hex32,
    pub account: Hex32,
}

impl Resource for RemoveWebDomainRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebDomainResult {
    pub state: Presence,
    pub domain: Option<String>,
    /// The host names the vhost answers besides `domain`.
    pub aliases: Vec<String>,
    /// The absolute document root Apache serves.
    pub document_root: Option<String>,
}

pub struct EnsureWebDomain;

impl Operation for EnsureWebDomain {
    const NAME: &'static str = "ensure_web_domain";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Serve a domain (and its aliases) from a document root in the account's home";
    type Family = WebDomain;
    type Request = EnsureWebDomainRequest;
    type Result = WebDomainResult;

    fn example() -> EnsureWebDomainRequest {
        EnsureWebDomainRequest {
            id: "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
                .parse()
                .expect("valid example"),
            account: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
                .parse()
                .expect("valid example"),
            domain: "shop.example.com".parse().expect("valid example"),
            aliases: serde_json::from_value(json!(["www.shop.example.com"]))
                .expect("valid example"),
            docroot: None,
        }
    }

    fn apply(ctx: &mut Ctx, req: &EnsureWebDomainRequest) -> Result<WebDomainResult, OpError> {
        let info = account_info(ctx, &req.account)?;
        check_names_free(ctx, req)?;
        let relative = match &req.docroot {
            Some(path) => PathBuf::from(path.as_str()),
            None => Path::new("web")
                .join(req.domain.as_str())
                .join("public_html"),
        };
        let home = ctx.provider.sysconf(&info.home);
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
        let docroot = home.join(&relative);
        let vhost = render_vhost(&req.id, &req.account, &req.domain, &req.aliases, &docroot);
        ctx.write_service_config(Service::Apache, &vhost_path(ctx, &req.id), vhost.as_bytes())?;
        crash::point("web_domain.after_vhost_write");
        let aliases: Vec<String> = req.aliases.iter().map(ToString::to_string).collect();
        ctx.set_resource(json!({
            "domain": req.domain,
            "aliases": aliases,
            "docroot": relative,
        }));
        Ok(WebDomainResult {
            state: Presence::Present,
            domain: Some(req.domain.to_string()),
            aliases,
            document_root: Some(docroot.display().to_string()),
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

pub struct RemoveWebDomain;

impl Operation for RemoveWebDomain {
    const NAME: &'static str = "remove_web_domain";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Stop serving a domain; the files in its document root are left to the tenant";
    type Family = WebDomain;
    type Request = RemoveWebDomainRequest;
    type Result = WebDomainResult;

    fn example() -> RemoveWebDomainRequest {
        RemoveWebDomainRequest {
            id: "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
                .parse()
                .expect("valid example"),
            account: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
                .parse()
                .expect("valid example"),
        }
    }

    fn apply(ctx: &mut Ctx, req: &RemoveWebDomainRequest) -> Result<WebDomainResult, OpError> {
        ctx.remove_service_config(Service::Apache, &vhost_path(ctx, &req.id))?;
        crash::point("web_domain.after_old_vhost_removed");
        ctx.forget_resource();
        Ok(WebDomainResult {
            state: Presence::Absent,
            domain: None,
            aliases: Vec::new(),
            document_root: None,
        })
    }
}
