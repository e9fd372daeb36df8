//! The web access families, rendered into a web domain's vhost by `sync_vhost`:
//!
//! - `protected_directory` (`ensure_protected_directory`, `remove_protected_directory`): HTTP
//!   Basic authentication on a directory beneath a web domain's document root. Its users and
//!   their crypt SHA-512 hashes go into an `AuthUserFile` the node derives whole from the
//!   resource's row, one file per protected directory, under the Apache layout's `auth_dir`
//!   (outside every home, through `sysconf()`), root's and 0640 to Apache's group. The vhost
//!   gets a `<Directory>` section with `AuthType Basic` and `Require valid-user`.
//! - `ip_block` (`ensure_ip_block`, `remove_ip_block`): per web domain (the resource id is the
//!   web domain's), addresses and networks answered 403: `<Location "/">` with
//!   `AuthMerging And` and `<RequireAll> Require all granted / Require not ip ...`, so the
//!   block adds to a protected directory's password instead of replacing it.
//!
//! `/.well-known/acme-challenge/` is never protected (a protected path has no hidden segment)
//! and is exempt from a block (a later `<Location>` grants it), so a certificate can always be
//! issued or renewed. The vhost and the `AuthUserFile` are installed together through
//! [`Ctx::write_service_configs`]: one configuration test, both reverted on failure.

pub use declarations::web_access::*;

use std::path::PathBuf;

use registry::types::{
    AuthRealm, AuthUsers, Hex32, IpNetwork, IpNetworks, Presence, ProtectedPath,
};
use registry::{Apply, Family, OpError, Owner, Purge};
use serde_json::{Value, json};

use crate::account::store_error;
use crate::context::{ConfigFile, Ctx, SecretGroup, Service, provider_error};
use crate::web_domain::{
    ACME_CHALLENGE_PREFIX, VhostChange, WebDomain, corrupt, parse_field, require_domain,
    sync_vhost, vhost_file,
};

/// One protected directory as the vhost renders it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtectedDir {
    pub path: ProtectedPath,
    pub realm: AuthRealm,
    /// The mapped `AuthUserFile`.
    pub user_file: PathBuf,
}

/// The `AuthUserFile` of protected directory `id` (mapped under the provider's root).
pub fn user_file_path(ctx: &Ctx, id: &Hex32) -> PathBuf {
    ctx.provider
        .sysconf(ctx.provider.apache_layout().auth_dir)
        .join(format!("{id}.htpasswd"))
}

/// The vhost's view of a recorded protected directory.
pub fn protected_dir(ctx: &Ctx, id: &Hex32, data: &Value) -> Result<ProtectedDir, OpError> {
    Ok(ProtectedDir {
        path: parse_field(&data["path"], "protected directory path")?,
        realm: parse_field(&data["realm"], "protected directory realm")?,
        user_file: user_file_path(ctx, id),
    })
}

/// The networks of a recorded IP block.
pub fn blocked_networks(data: &Value) -> Result<Vec<IpNetwork>, OpError> {
    let networks: IpNetworks =
        serde_json::from_value(data["networks"].clone()).map_err(|_| corrupt("IP block"))?;
    Ok(networks.iter().cloned().collect())
}

/// The `<Directory>` section of one protected directory beneath `docroot`. The path is
/// `[A-Za-z0-9._-]` segments and the realm has no quote, backslash, `$` or `%`.
pub fn render_protected(docroot: &str, dir: &ProtectedDir) -> String {
    format!(
        "    <Directory \"{docroot}/{path}\">\n\
         \x20       AuthType Basic\n\
         \x20       AuthName \"{realm}\"\n\
         \x20       AuthBasicProvider file\n\
         \x20       AuthUserFile \"{file}\"\n\
         \x20       Require valid-user\n\
         \x20   </Directory>\n",
        path = dir.path,
        realm = dir.realm,
        file = dir.user_file.display(),
    )
}

/// The block of a domain's addresses, added (`AuthMerging And`) to whatever else the path
/// requires, and the challenge path granted after it.
pub fn render_ip_block(blocked: &[IpNetwork]) -> String {
    let list: Vec<&str> = blocked.iter().map(IpNetwork::as_str).collect();
    format!(
        "    # Blocked addresses: 403 everywhere but the certificate challenge.\n\
         \x20   <Location \"/\">\n\
         \x20       AuthMerging And\n\
         \x20       <RequireAll>\n\
         \x20           Require all granted\n\
         \x20           Require not ip {}\n\
         \x20       </RequireAll>\n\
         \x20   </Location>\n\
         \x20   <Location \"{ACME_CHALLENGE_PREFIX}\">\n\
         \x20       Require all granted\n\
         \x20   </Location>\n",
        list.join(" ")
    )
}

/// `name:hash` lines, in the request's order.
pub fn render_user_file(users: &AuthUsers) -> String {
    users
        .iter()
        .map(|u| format!("{}:{}\n", u.name, u.password_hash))
        .collect()
}

fn parse_domain(data: &Value) -> Option<Hex32> {
    data["web_domain"].as_str().and_then(|s| s.parse().ok())
}

impl Purge<Ctx> for ProtectedDirectory {
    /// Removes the account's `AuthUserFile`s and forgets the rows. Runs before `web_domain`'s
    /// purge, which removes the vhosts that name them (a vhost left by a crash in between
    /// names a missing file: Apache refuses the login, it does not open the directory).
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let rows = ctx
            .state
            .resources_of(&Owner::Tenant(account.clone()), ProtectedDirectory::NAME)
            .map_err(store_error)?;
        for row in &rows {
            ctx.provider
                .remove_config(&user_file_path(ctx, &row.resource_id))
                .map_err(provider_error)?;
        }
        crash::point("protected_directory.after_user_files_removed");
        if !rows.is_empty() {
            ctx.state
                .forget_resources_of(account, ProtectedDirectory::NAME)
                .map_err(store_error)?;
        }
        Ok(())
    }
}

impl Apply<Ctx> for EnsureProtectedDirectory {
    fn apply(
        ctx: &mut Ctx,
        req: &EnsureProtectedDirectoryRequest,
    ) -> Result<ProtectedDirectoryResult, OpError> {
        let domain = require_domain(ctx, &req.account, &req.web_domain)?;
        let previous = ctx
            .state
            .resource(ProtectedDirectory::NAME, &req.id)
            .map_err(store_error)?;
        for row in ctx
            .state
            .resources_of(
                &Owner::Tenant(req.account.clone()),
                ProtectedDirectory::NAME,
            )
            .map_err(store_error)?
        {
            if row.resource_id != req.id
                && row.data["web_domain"] == req.web_domain.as_str()
                && row.data["path"] == req.path.as_str()
            {
                return Err(OpError::permanent(
                    "protected_directory_conflict",
                    format!(
                        "protected directory {} already protects {} on this domain",
                        row.resource_id, req.path
                    ),
                ));
            }
        }
        let data = json!({
            "web_domain": req.web_domain,
            "path": req.path,
            "realm": req.realm,
            "users": req.users,
        });
        // A directory that moved to another domain leaves its old vhost first.
        if let Some(old) = previous
            && let Some(old_domain) = parse_domain(&old.data)
            && old_domain != req.web_domain
        {
            sync_vhost(
                ctx,
                &req.account,
                &old_domain,
                VhostChange::Protected(&req.id, None),
            )?;
        }
        // Apache reads it as the account (mpm-itk's `AssignUserID`), so it is the account's
        // group that may read it, and no other tenant's.
        let owner = crate::account::account_info(ctx, &req.account)?;
        let mut files = vec![ConfigFile {
            path: user_file_path(ctx, &req.id),
            content: render_user_file(&req.users).into_bytes(),
            secret_group: Some(SecretGroup::Id(owner.gid)),
        }];
        files.extend(vhost_file(
            ctx,
            &req.account,
            &req.web_domain,
            VhostChange::Protected(&req.id, Some(&data)),
        )?);
        ctx.provider
            .ensure_dir(
                &ctx.provider.sysconf(ctx.provider.apache_layout().auth_dir),
                0o755,
            )
            .map_err(provider_error)?;
        ctx.write_service_configs(Service::Apache, &files)?;
        crash::point("protected_directory.after_vhost");
        ctx.set_resource(data);
        let info = crate::account::account_info(ctx, &req.account)?;
        let docroot: registry::types::HomePath = parse_field(&domain["docroot"], "document root")?;
        let directory = ctx
            .provider
            .sysconf(&info.home)
            .join(docroot.as_str())
            .join(req.path.as_str());
        Ok(ProtectedDirectoryResult {
            state: Presence::Present,
            directory: Some(directory.display().to_string()),
            users: req.users.iter().map(|u| u.name.to_string()).collect(),
        })
    }
}

impl Apply<Ctx> for RemoveProtectedDirectory {
    fn apply(
        ctx: &mut Ctx,
        req: &RemoveProtectedDirectoryRequest,
    ) -> Result<ProtectedDirectoryResult, OpError> {
        if let Some(row) = ctx
            .state
            .resource(ProtectedDirectory::NAME, &req.id)
            .map_err(store_error)?
            && row.owner == Owner::Tenant(req.account.clone())
            && let Some(domain) = parse_domain(&row.data)
        {
            sync_vhost(
                ctx,
                &req.account,
                &domain,
                VhostChange::Protected(&req.id, None),
            )?;
        }
        crash::point("protected_directory.after_vhost_removed");
        ctx.provider
            .remove_config(&user_file_path(ctx, &req.id))
            .map_err(provider_error)?;
        ctx.forget_row();
        Ok(ProtectedDirectoryResult {
            state: Presence::Absent,
            directory: None,
            users: Vec::new(),
        })
    }
}

impl Purge<Ctx> for IpBlock {
    /// Forgets the account's blocks. Runs before `web_domain`'s purge, which removes the
    /// vhosts they were rendered into.
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        ctx.state
            .forget_resources_of(account, IpBlock::NAME)
            .map_err(store_error)?;
        Ok(())
    }
}

impl Apply<Ctx> for EnsureIpBlock {
    fn apply(ctx: &mut Ctx, req: &EnsureIpBlockRequest) -> Result<IpBlockResult, OpError> {
        require_domain(ctx, &req.account, &req.id)?;
        let data = json!({ "networks": req.networks });
        sync_vhost(
            ctx,
            &req.account,
            &req.id,
            VhostChange::IpBlock(Some(&data)),
        )?;
        crash::point("ip_block.after_vhost");
        ctx.set_resource(data);
        Ok(IpBlockResult {
            state: Presence::Present,
            blocked: req.networks.iter().map(ToString::to_string).collect(),
        })
    }
}

impl Apply<Ctx> for RemoveIpBlock {
    fn apply(ctx: &mut Ctx, req: &RemoveIpBlockRequest) -> Result<IpBlockResult, OpError> {
        // A domain removed meanwhile has no vhost to change.
        if ctx
            .state
            .resource(WebDomain::NAME, &req.id)
            .map_err(store_error)?
            .is_some_and(|row| row.owner == Owner::Tenant(req.account.clone()))
        {
            sync_vhost(ctx, &req.account, &req.id, VhostChange::IpBlock(None))?;
        }
        ctx.forget_row();
        Ok(IpBlockResult {
            state: Presence::Absent,
            blocked: Vec::new(),
        })
    }
}
