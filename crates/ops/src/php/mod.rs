//! The PHP families: which PHP version serves each web domain (`set_php_version`,
//! `remove_php_version`), the account's PHP settings (`set_php_options`) and the extensions it
//! needs (`set_php_extensions`), and what the node can offer (`observe_php_versions`).
//!
//! **One PHP-FPM pool per account, per version the account uses**, not one per domain. The
//! pool is the unit of identity (it runs as the account's user) and of memory: FPM keeps
//! workers per pool, so an account with twenty domains would hold twenty idle worker sets
//! with per-domain pools, for no isolation gained (every domain of an account runs as the
//! same user and can read the same home anyway). Settings are per account for the same
//! reason. A domain chooses its version; the account gets one pool for each version one of
//! its domains uses, and the vhost's FastCGI handler points at that pool's socket.
//!
//! **On Debian each pool has a master of its own**: the file is the whole configuration of
//! `php8.2-fpm@<uid>.service`, an instance of the template unit `layerone install` writes,
//! whose `Slice=user-%i.slice` puts the tenant's PHP under the limits of its slice
//! (`set_account_limits`). A pool FPM refuses (a file edited by hand) stops that tenant's
//! master and no one else's PHP; the drift check names the file. (A pool names its user by
//! the uid the node recorded, which FPM does not look up: a user removed behind the node's
//! back stops no master, and the drift check names the missing user.) A node whose installer
//! has not written the template unit yet keeps the pools in the shared master
//! (`pool::pool_file`). On CloudLinux the pools stay sections of alt-php's shared master per
//! version, which the LVE bounds per tenant.
//!
//! Everything is derived whole from the view on every change, by the pools' owner
//! ([`pool`], `pool::sync`): the pool files of the account are rewritten (or removed) for
//! every version, each through [`Ctx::write_service_config`] (written, checked with the real
//! `php-fpmX.Y -t -y CONF`, reverted on failure, reloaded once per batch); a domain's vhost
//! gets its handler from the vhost owner (`crate::vhost`). Options are written as
//! `php_admin_value[...]`/`php_admin_flag[...]` lines from typed, bounded values, so no value
//! can add a directive. A version the node does not have, or an extension a version does not
//! load, fails the job (`php_version_unavailable`, `php_extension_unavailable`) with nothing
//! changed; `observe_php_versions` shows the same facts so a control plane never offers what
//! the node rejects.
//!
//! Extensions: both platforms load an installed, enabled extension for every pool of its
//! version (Debian's `phpenmod` on package install; alt-php's `php.d`), so
//! `set_php_extensions` records what the account needs and checks that every version it uses
//! really loads each one (`php-fpmX.Y -m`); the results report the modules really in effect.
//! On CloudLinux an installed but disabled extension (`selectorctl --list-extensions`) is
//! accepted too, and the account's list becomes the user's PHP Selector choice
//! (`selectorctl --replace-user-extensions`), which their command-line PHP and cron jobs load;
//! the result shows it apart (`selector_extensions`) from what FPM loads.

pub use declarations::php::*;

crash::points! {
    AFTER_POOLS = "php.after_pools",
    AFTER_VHOST = "php.after_vhost",
}

pub mod pool;

use registry::types::{PhpOptions, PhpVersion, Presence};
use registry::{Apply, Derive, Derived, Family, Hex32, OpError, Purge, RowType};
use serde::{Deserialize, Serialize};
use store::StoredRow;

use crate::account::account_info;
use crate::context::Ctx;
use crate::vhost;
use crate::web_domain::WebDomainRow;
use pool::PoolSync;

/// A web domain's PHP version as stored (its resource id is the web domain's).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhpVersionRow {
    pub version: PhpVersion,
}

impl StoredRow for PhpVersionRow {
    const FAMILY: &'static str = PhpVersionFamily::NAME;
}

/// The account's PHP options as stored (its resource id is the account's).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhpOptionsRow {
    pub options: PhpOptions,
}

impl StoredRow for PhpOptionsRow {
    const FAMILY: &'static str = PhpOptionsFamily::NAME;
}

/// The extensions the account needs, by module name, as stored (its resource id is the
/// account's).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhpExtensionsRow {
    pub extensions: Vec<String>,
}

impl StoredRow for PhpExtensionsRow {
    const FAMILY: &'static str = PhpExtensionsFamily::NAME;
}

/// Checks that this node has `version`, with a clear error when it does not.
pub fn require_version(ctx: &Ctx, version: PhpVersion) -> Result<(), OpError> {
    if ctx
        .provider
        .php_installed_versions()
        .contains(&version)
    {
        Ok(())
    } else {
        let offered: Vec<&str> = ctx
            .provider
            .php_installed_versions()
            .iter()
            .map(|v| v.as_str())
            .collect();
        Err(OpError::permanent(
            "php_version_unavailable",
            format!(
                "PHP {} is not installed on this node (it offers: {})",
                version.as_str(),
                if offered.is_empty() {
                    "none".into()
                } else {
                    offered.join(", ")
                }
            ),
        ))
    }
}

impl Purge<Ctx> for PhpVersionFamily {
    const ROW: Option<RowType> = Some(store::row_type::<PhpVersionRow>());

    /// Removes the account's pools (every version) and forgets its version choices. Runs
    /// before `web_domain`'s purge, so the vhosts still naming the sockets go right after.
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        pool::remove_all(ctx, account)?;
        ctx.forget_rows_of::<PhpVersionRow>(account)
    }
}

impl Purge<Ctx> for PhpOptionsFamily {
    const ROW: Option<RowType> = Some(store::row_type::<PhpOptionsRow>());

    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        pool::remove_all(ctx, account)?;
        ctx.forget_rows_of::<PhpOptionsRow>(account)
    }
}

impl Purge<Ctx> for PhpExtensionsFamily {
    const ROW: Option<RowType> = Some(store::row_type::<PhpExtensionsRow>());

    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        ctx.forget_rows_of::<PhpExtensionsRow>(account)
    }
}

impl Purge<Ctx> for PhpRuntime {
    /// An observation leaves nothing behind, for a tenant or for the node.
    fn purge(_: &mut Ctx, _: &Hex32) -> Result<(), OpError> {
        Ok(())
    }
}

/// The pools of `accounts` whose user is there ([`pool::derived`]): a pool of a version no
/// domain of the account uses is drift too.
fn derived_pools(
    ctx: &Ctx,
    accounts: impl IntoIterator<Item = Hex32>,
) -> Result<Vec<Derived>, OpError> {
    let mut items = Vec::new();
    for account in accounts {
        items.extend(pool::derived(ctx, &account)?);
    }
    Ok(items)
}

impl Derive<Ctx> for PhpVersionFamily {
    /// The FPM pools (reported under the account) of every account with a web domain or a
    /// version (the requests whose replay rewrites its pools), and the vhost of each domain
    /// with a version (its FastCGI handler; reported under the web domain).
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        let mut accounts = crate::drift::accounts_of::<WebDomainRow>(ctx)?;
        accounts.extend(crate::drift::accounts_of::<PhpVersionRow>(ctx)?);
        let mut items = derived_pools(ctx, accounts)?;
        items.extend(vhost::derived_vhosts::<PhpVersionRow>(ctx, |stored| {
            &stored.id
        })?);
        Ok(items)
    }
}

impl Derive<Ctx> for PhpOptionsFamily {
    /// The pools of each account with options (their `php_admin_value` lines; reported
    /// under `php_version` when it lists them too).
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        derived_pools(ctx, crate::drift::accounts_of::<PhpOptionsRow>(ctx)?)
    }
}

impl Derive<Ctx> for PhpExtensionsFamily {
    /// Nothing: the extensions an account needs are checked against what each version
    /// loads, not written anywhere on Debian; on CloudLinux they are also the PHP Selector's
    /// choice, which only `selectorctl` shows, and the drift check runs no program.
    fn derive(_: &Ctx) -> Result<Vec<Derived>, OpError> {
        Ok(Vec::new())
    }
}

impl Derive<Ctx> for PhpRuntime {
    /// Nothing: an observation derives nothing.
    fn derive(_: &Ctx) -> Result<Vec<Derived>, OpError> {
        Ok(Vec::new())
    }
}

impl Apply<Ctx> for SetPhpVersion {
    fn apply(ctx: &mut Ctx, req: &SetPhpVersionRequest) -> Result<PhpVersionResult, OpError> {
        account_info(ctx, &req.account)?;
        require_version(ctx, req.version)?;
        vhost::require_domain(ctx, &req.account, &req.id)?;
        ctx.set_row(&PhpVersionRow {
            version: req.version,
        });
        let pools = pool::sync(ctx, &req.account, PoolSync::Update)?;
        vhost::sync(ctx, &req.account, &req.id)?;
        crash::point(AFTER_VHOST);
        let extensions = pools
            .iter()
            .find(|p| p.version == req.version.as_str())
            .map(|p| p.extensions.clone())
            .unwrap_or_default();
        Ok(PhpVersionResult {
            state: Presence::Present,
            version: Some(req.version.as_str().to_owned()),
            extensions,
            pools,
        })
    }
}

impl Apply<Ctx> for RemovePhpVersion {
    fn apply(ctx: &mut Ctx, req: &RemovePhpVersionRequest) -> Result<PhpVersionResult, OpError> {
        ctx.forget_row();
        // The vhost first: it must stop naming the socket before the pool goes.
        vhost::sync(ctx, &req.account, &req.id)?;
        let pools = pool::sync(ctx, &req.account, PoolSync::Removal)?;
        Ok(PhpVersionResult {
            state: Presence::Absent,
            version: None,
            extensions: Vec::new(),
            pools,
        })
    }
}

impl Apply<Ctx> for SetPhpOptions {
    fn apply(ctx: &mut Ctx, req: &SetPhpOptionsRequest) -> Result<PhpSettingsResult, OpError> {
        account_info(ctx, &req.id)?;
        ctx.set_row(&PhpOptionsRow {
            options: req.options.clone(),
        });
        let pools = pool::sync(ctx, &req.id, PoolSync::Update)?;
        let (_, extensions) = pool::settings(ctx, &req.id)?;
        Ok(PhpSettingsResult {
            state: Presence::Present,
            options: req.options.clone(),
            extensions,
            pools,
        })
    }
}

impl Apply<Ctx> for SetPhpExtensions {
    fn apply(ctx: &mut Ctx, req: &SetPhpExtensionsRequest) -> Result<PhpSettingsResult, OpError> {
        account_info(ctx, &req.id)?;
        let extensions: Vec<String> = req.extensions.iter().map(|e| e.module_name()).collect();
        ctx.set_row(&PhpExtensionsRow {
            extensions: extensions.clone(),
        });
        let pools = pool::sync(ctx, &req.id, PoolSync::Extensions)?;
        let (options, _) = pool::settings(ctx, &req.id)?;
        Ok(PhpSettingsResult {
            state: Presence::Present,
            options,
            extensions,
            pools,
        })
    }
}

impl Apply<Ctx> for ObservePhpVersions {
    fn apply(ctx: &mut Ctx, _: &ObservePhpVersionsRequest) -> Result<PhpVersionsResult, OpError> {
        let mut versions = Vec::new();
        for version in ctx.provider.php_installed_versions() {
            let fpm = provider::Program::PhpFpm(version)
                .path(ctx.provider.platform())
                .unwrap_or_default()
                .to_owned();
            let (extensions, error) = match ctx.provider.php_fpm_modules(version) {
                Ok(m) => (m, None),
                Err(e) => (Vec::new(), Some(e.code().to_owned())),
            };
            versions.push(OfferedPhpVersion {
                version: version.as_str().to_owned(),
                fpm,
                cli: ctx.provider.php_cli_installed(version),
                extensions,
                error,
            });
        }
        Ok(PhpVersionsResult {
            platform: ctx.provider.platform().as_str().to_owned(),
            versions,
        })
    }
}
