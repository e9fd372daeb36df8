//! The web access families, rendered into a web domain's vhost by the vhost owner
//! (`crate::vhost`) from their rows:
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
//! issued or renewed. The vhost owner installs the vhost and its `AuthUserFile`s together
//! through [`Ctx::write_service_configs`]: one configuration test, all reverted on failure.

pub use declarations::web_access::*;

use registry::types::{AuthRealm, AuthUsers, Hex32, IpNetworks, Presence, ProtectedPath};
use registry::{Apply, Derive, Derived, Family, OpError, Owner, Purge, RowType};
use serde::{Deserialize, Serialize};
use store::StoredRow;

use crate::account::account_info;
use crate::context::{Ctx, provider_error, store_error};
use crate::vhost::{self, user_file_path};

crash::points! {
    PROTECTED_DIRECTORY_AFTER_VHOST = "protected_directory.after_vhost",
    PROTECTED_DIRECTORY_AFTER_VHOST_REMOVED = "protected_directory.after_vhost_removed",
    PROTECTED_DIRECTORY_AFTER_USER_FILES_REMOVED = "protected_directory.after_user_files_removed",
    IP_BLOCK_AFTER_VHOST = "ip_block.after_vhost",
}

/// A protected directory as stored: the web domain (by resource id), the path beneath its
/// document root, the realm, and the users with their crypt SHA-512 hashes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProtectedDirectoryRow {
    pub web_domain: Hex32,
    pub path: ProtectedPath,
    pub realm: AuthRealm,
    pub users: AuthUsers,
}

impl StoredRow for ProtectedDirectoryRow {
    const FAMILY: &'static str = ProtectedDirectory::NAME;
}

/// A web domain's IP block as stored (its resource id is the web domain's).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IpBlockRow {
    pub networks: IpNetworks,
}

impl StoredRow for IpBlockRow {
    const FAMILY: &'static str = IpBlock::NAME;
}

impl Purge<Ctx> for ProtectedDirectory {
    const ROW: Option<RowType> = Some(store::row_type::<ProtectedDirectoryRow>());

    /// Removes the account's `AuthUserFile`s and forgets the rows. Runs before `web_domain`'s
    /// purge, which removes the vhosts that name them (a vhost left by a crash in between
    /// names a missing file: Apache refuses the login, it does not open the directory).
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let rows = ctx
            .view()
            .of_account::<ProtectedDirectoryRow>(account)
            .map_err(store_error)?;
        for stored in &rows {
            ctx.provider
                .remove_config(&user_file_path(ctx, &stored.id))
                .map_err(provider_error)?;
        }
        crash::point(PROTECTED_DIRECTORY_AFTER_USER_FILES_REMOVED);
        if !rows.is_empty() {
            ctx.forget_rows_of::<ProtectedDirectoryRow>(account)?;
        }
        Ok(())
    }
}

impl Derive<Ctx> for ProtectedDirectory {
    /// Each protected directory's `AuthUserFile` and the vhost of its domain (its
    /// `<Directory>` section), as the vhost owner renders them.
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        let mut domains = std::collections::BTreeSet::new();
        for stored in ctx
            .view()
            .all::<ProtectedDirectoryRow>()
            .map_err(store_error)?
        {
            if let Owner::Tenant(account) = stored.owner {
                domains.insert((account, stored.row.web_domain));
            }
        }
        let mut items = Vec::new();
        for (account, domain) in domains {
            if let Some(derived) = vhost::derived(ctx, &account, &domain)? {
                items.push(derived.vhost);
                items.extend(derived.user_files);
            }
        }
        Ok(items)
    }
}

impl Apply<Ctx> for EnsureProtectedDirectory {
    fn apply(
        ctx: &mut Ctx,
        req: &EnsureProtectedDirectoryRequest,
    ) -> Result<ProtectedDirectoryResult, OpError> {
        let domain = vhost::require_domain(ctx, &req.account, &req.web_domain)?;
        let view = ctx.view();
        let previous = view
            .get::<ProtectedDirectoryRow>(&req.id)
            .map_err(store_error)?;
        for stored in view
            .of_account::<ProtectedDirectoryRow>(&req.account)
            .map_err(store_error)?
        {
            if stored.id != req.id
                && stored.row.web_domain == req.web_domain
                && stored.row.path == req.path
            {
                return Err(OpError::permanent(
                    "protected_directory_conflict",
                    format!(
                        "protected directory {} already protects {} on this domain",
                        stored.id, req.path
                    ),
                ));
            }
        }
        let info = account_info(ctx, &req.account)?;
        ctx.set_row(&ProtectedDirectoryRow {
            web_domain: req.web_domain.clone(),
            path: req.path.clone(),
            realm: req.realm.clone(),
            users: req.users.clone(),
        });
        // A directory that moved to another domain leaves its old vhost first.
        if let Some(old) = previous
            && old.row.web_domain != req.web_domain
        {
            vhost::sync(ctx, &req.account, &old.row.web_domain)?;
        }
        vhost::sync(ctx, &req.account, &req.web_domain)?;
        crash::point(PROTECTED_DIRECTORY_AFTER_VHOST);
        let directory = ctx
            .provider
            .sysconf(&info.home)
            .join(domain.docroot.as_str())
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
        let previous = ctx
            .view()
            .get_owned::<ProtectedDirectoryRow>(&req.account, &req.id)
            .map_err(store_error)?;
        ctx.forget_row();
        if let Some(old) = previous {
            vhost::sync(ctx, &req.account, &old.web_domain)?;
        }
        crash::point(PROTECTED_DIRECTORY_AFTER_VHOST_REMOVED);
        ctx.provider
            .remove_config(&user_file_path(ctx, &req.id))
            .map_err(provider_error)?;
        Ok(ProtectedDirectoryResult {
            state: Presence::Absent,
            directory: None,
            users: Vec::new(),
        })
    }
}

impl Derive<Ctx> for IpBlock {
    /// The vhost of each blocked domain (its `Require not ip` lines are the vhost owner's;
    /// the vhost is reported under its web domain).
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        vhost::derived_vhosts::<IpBlockRow>(ctx, |stored| &stored.id)
    }
}

impl Purge<Ctx> for IpBlock {
    const ROW: Option<RowType> = Some(store::row_type::<IpBlockRow>());

    /// Forgets the account's blocks. Runs before `web_domain`'s purge, which removes the
    /// vhosts they were rendered into.
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        ctx.forget_rows_of::<IpBlockRow>(account)
    }
}

impl Apply<Ctx> for EnsureIpBlock {
    fn apply(ctx: &mut Ctx, req: &EnsureIpBlockRequest) -> Result<IpBlockResult, OpError> {
        vhost::require_domain(ctx, &req.account, &req.id)?;
        ctx.set_row(&IpBlockRow {
            networks: req.networks.clone(),
        });
        vhost::sync(ctx, &req.account, &req.id)?;
        crash::point(IP_BLOCK_AFTER_VHOST);
        Ok(IpBlockResult {
            state: Presence::Present,
            blocked: req.networks.iter().map(ToString::to_string).collect(),
        })
    }
}

impl Apply<Ctx> for RemoveIpBlock {
    fn apply(ctx: &mut Ctx, req: &RemoveIpBlockRequest) -> Result<IpBlockResult, OpError> {
        ctx.forget_row();
        // A domain removed meanwhile has no vhost to change (the owner writes none).
        vhost::sync(ctx, &req.account, &req.id)?;
        Ok(IpBlockResult {
            state: Presence::Absent,
            blocked: Vec::new(),
        })
    }
}
