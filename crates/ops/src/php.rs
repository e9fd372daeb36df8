//! The PHP families: which PHP version serves each web domain (`set_php_version`,
//! `remove_php_version`), the account's PHP settings (`set_php_options`) and the extensions it
//! needs (`set_php_extensions`), and what the node can offer (`observe_php_versions`).
//!
//! **One PHP-FPM pool per account, per version the account uses**, not one per domain. The
//! pool is the unit of identity (it runs as the account's user) and of memory: FPM keeps
//! workers per pool, so an account with twenty domains would hold twenty idle worker sets
//! with per-domain pools, for no isolation gained (every domain of an account runs as the
//! same user and can read the same home anyway). Settings are per account for the same
//! reason. A domain chooses its version; the account gets one pool in each version's FPM
//! that one of its domains uses, and the vhost's FastCGI handler points at that pool's
//! socket.
//!
//! Everything is derived whole from state.db on every change ([`sync_pools`]): the pool
//! files of the account are rewritten (or removed) for every version, each through
//! [`Ctx::write_service_config`] (written, checked with the real `php-fpmX.Y -t -y CONF`,
//! reverted on failure, reloaded once per batch). Options are written as
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

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use registry::types::{PhpExtensions, PhpOptions, PhpVersion, Presence};
use registry::{Apply, Family, Hex32, OpError, Owner, Purge};
use serde_json::{Value, json};

use crate::account::{AccountInfo, account_info, store_error};
use crate::context::{Ctx, Service, provider_error};
use crate::web_domain::{self, VhostChange, WebDomain};

/// The provider's version for a request's version (the same closed list on both sides).
pub fn provider_version(version: PhpVersion) -> provider::PhpVersion {
    match version {
        PhpVersion::V7_4 => provider::PhpVersion::V7_4,
        PhpVersion::V8_0 => provider::PhpVersion::V8_0,
        PhpVersion::V8_1 => provider::PhpVersion::V8_1,
        PhpVersion::V8_2 => provider::PhpVersion::V8_2,
        PhpVersion::V8_3 => provider::PhpVersion::V8_3,
        PhpVersion::V8_4 => provider::PhpVersion::V8_4,
    }
}

/// The pool file of `account` for `version` (mapped).
pub fn pool_path(ctx: &Ctx, account: &Hex32, version: PhpVersion) -> PathBuf {
    let layout = ctx.provider.php_fpm_layout(provider_version(version));
    ctx.provider
        .sysconf(&layout.pool_dir)
        .join(format!("layerone-{account}.conf"))
}

/// The socket of `account`'s pool for `version` (mapped): what the vhost's handler names.
pub fn socket_path(ctx: &Ctx, account: &Hex32, version: PhpVersion) -> PathBuf {
    ctx.provider
        .sysconf(socket_system_path(ctx, account, version))
}

/// The same socket as the system names it, for results.
pub fn socket_system_path(ctx: &Ctx, account: &Hex32, version: PhpVersion) -> PathBuf {
    let layout = ctx.provider.php_fpm_layout(provider_version(version));
    PathBuf::from(&layout.socket_dir)
        .join(format!("layerone-{account}-php{}.sock", version.as_str()))
}

/// The pool's own directories beneath the home, for temporary files, uploads and sessions:
/// PHP writes nothing outside the home, so `open_basedir` names the home alone.
pub fn private_dirs(version: PhpVersion) -> [String; 3] {
    let v = version.as_str();
    [
        format!(".php/{v}/tmp"),
        format!(".php/{v}/uploads"),
        format!(".php/{v}/sessions"),
    ]
}

/// How much of the node one account's pool may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolLimits {
    /// Concurrent PHP requests (`pm.max_children`).
    pub max_children: u64,
    /// A request running longer is killed by FPM (`request_terminate_timeout`), whatever
    /// the script did with `set_time_limit`.
    pub request_timeout_s: u64,
}

/// Children when the account has no recorded limits (Debian, where `set_account_limits` is
/// not available, or an account never limited).
pub const DEFAULT_MAX_CHILDREN: u64 = 5;
/// The most children a pool ever gets, whatever the account's limits say.
pub const MAX_CHILDREN_CEILING: u64 = 50;
/// A request's time when the account sets no `max_execution_time`.
pub const DEFAULT_REQUEST_TIMEOUT_S: u64 = 300;
/// The time FPM leaves past `max_execution_time` before it kills the request.
const REQUEST_TIMEOUT_MARGIN_S: u64 = 30;

impl PoolLimits {
    /// The pool's limits from the account's recorded limits (`processes` and
    /// `entry_processes`, 0 meaning unlimited) and its PHP options.
    pub fn derive(limits: Option<&crate::account::Limits>, options: &PhpOptions) -> PoolLimits {
        let bounds = limits
            .map(|l| [l.entry_processes, l.processes])
            .unwrap_or_default();
        let max_children = bounds
            .into_iter()
            .filter(|&n| n > 0)
            .min()
            .unwrap_or(DEFAULT_MAX_CHILDREN)
            .min(MAX_CHILDREN_CEILING);
        let request_timeout_s = options
            .max_execution_time_s
            .map_or(DEFAULT_REQUEST_TIMEOUT_S, |t| {
                t.get() + REQUEST_TIMEOUT_MARGIN_S
            });
        PoolLimits {
            max_children,
            request_timeout_s,
        }
    }
}

/// Renders one pool. Every value comes from a validated type or the provider's tables: the
/// uid and gid are the ones the node recorded, a home path is the provider's, options are
/// bounded integers and booleans, so no line can carry a second directive or section.
///
/// The pool runs as the account's recorded uid and gid and listens on a socket only that
/// uid may open (0600): the vhost's requests run as the same uid (`AssignUserID`), and no
/// other tenant's can connect (`crates/ops/src/web_isolation.rs`).
pub fn render_pool(
    account: &Hex32,
    info: &AccountInfo,
    home: &std::path::Path,
    socket: &std::path::Path,
    version: PhpVersion,
    options: &PhpOptions,
    limits: PoolLimits,
) -> String {
    let [tmp, uploads, sessions] = private_dirs(version).map(|d| home.join(d));
    let mut out = format!(
        "; Managed by layerone node for account {account}, PHP {v}.\n\
         ; Changes made here are replaced.\n\
         [layerone-{account}]\n\
         user = {uid}\n\
         group = {gid}\n\
         listen = {socket}\n\
         listen.owner = {uid}\n\
         listen.group = {gid}\n\
         listen.mode = 0600\n\
         pm = ondemand\n\
         pm.max_children = {children}\n\
         pm.process_idle_timeout = 10s\n\
         pm.max_requests = 500\n\
         request_terminate_timeout = {timeout}s\n\
         rlimit_core = 0\n\
         rlimit_files = 4096\n\
         chdir = /\n\
         clear_env = yes\n\
         security.limit_extensions = .php\n\
         env[TMPDIR] = {tmp}\n\
         env[TMP] = {tmp}\n\
         env[TEMP] = {tmp}\n\
         php_admin_value[open_basedir] = {home}/\n\
         php_admin_value[sys_temp_dir] = {tmp}\n\
         php_admin_value[upload_tmp_dir] = {uploads}\n\
         php_admin_value[session.save_path] = {sessions}\n",
        v = version.as_str(),
        uid = info.uid,
        gid = info.gid,
        children = limits.max_children,
        timeout = limits.request_timeout_s,
        socket = socket.display(),
        home = home.display(),
        tmp = tmp.display(),
        uploads = uploads.display(),
        sessions = sessions.display(),
    );
    let mib = |name: &str, v: u64| format!("php_admin_value[{name}] = {v}M\n");
    let num = |name: &str, v: u64| format!("php_admin_value[{name}] = {v}\n");
    if let Some(v) = options.memory_limit_mib {
        out.push_str(&mib("memory_limit", v.get()));
    }
    if let Some(v) = options.upload_max_filesize_mib {
        out.push_str(&mib("upload_max_filesize", v.get()));
    }
    if let Some(v) = options.post_max_size_mib {
        out.push_str(&mib("post_max_size", v.get()));
    }
    if let Some(v) = options.max_execution_time_s {
        out.push_str(&num("max_execution_time", v.get()));
    }
    if let Some(v) = options.max_input_time_s {
        out.push_str(&num("max_input_time", v.get()));
    }
    if let Some(v) = options.max_input_vars {
        out.push_str(&num("max_input_vars", v.get()));
    }
    if let Some(on) = options.display_errors {
        // A flag, not an admin flag: the tenant's code may still turn it off with ini_set.
        out.push_str(&format!(
            "php_flag[display_errors] = {}\n",
            if on { "on" } else { "off" }
        ));
    }
    out
}

/// The account's limits as `set_account_limits` recorded them, if it did.
fn recorded_limits(ctx: &Ctx, account: &Hex32) -> Result<Option<crate::account::Limits>, OpError> {
    Ok(ctx
        .state
        .resource(crate::account::Account::NAME, account)
        .map_err(store_error)?
        .and_then(|row| serde_json::from_value(row.data["limits"].clone()).ok()))
}

/// Creates the pool's temporary, upload and session directories beneath the home, as the
/// tenant (0700, the tenant's by construction; a symlink on the way fails this job only).
fn ensure_private_dirs(ctx: &Ctx, info: &AccountInfo, version: PhpVersion) -> Result<(), OpError> {
    let dirs = private_dirs(version)
        .iter()
        .map(|d| d.parse::<tenant::RelPath>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| OpError::permanent("invalid_path", "a pool directory is not a plain path"))?;
    let who = crate::account::tenant_of(ctx, info)?;
    ctx.provider
        .as_tenant(
            &who,
            &tenant::Request::EnsureDirs {
                dirs,
                mode: tenant::DirMode::Private,
            },
        )
        .map_err(provider_error)?;
    Ok(())
}

/// The change the running job makes, applied over what state.db records.
#[derive(Clone, Copy, Debug)]
pub enum PoolChange<'a> {
    Nothing,
    /// A domain's version is set (`Some`) or removed (`None`).
    Version(&'a Hex32, Option<PhpVersion>),
    Options(&'a PhpOptions),
    Extensions(&'a PhpExtensions),
    /// A web domain comes (`true`) or goes (`false`).
    Domain(&'a Hex32, bool),
    /// The account's limits are set: its pools' children follow them.
    Limits(&'a crate::account::Limits),
}

fn parse_version(value: &Value) -> Option<PhpVersion> {
    serde_json::from_value(value.clone()).ok()
}

/// The account's recorded options and extensions, with the running job's change applied.
fn settings(
    ctx: &Ctx,
    account: &Hex32,
    change: PoolChange<'_>,
) -> Result<(PhpOptions, Vec<String>), OpError> {
    let options = match change {
        PoolChange::Options(o) => o.clone(),
        _ => match ctx
            .state
            .resource(PhpOptionsFamily::NAME, account)
            .map_err(store_error)?
        {
            Some(row) => serde_json::from_value(row.data["options"].clone()).map_err(corrupt)?,
            None => PhpOptions::default(),
        },
    };
    let extensions = match change {
        PoolChange::Extensions(e) => e.iter().map(|x| x.module_name()).collect(),
        _ => match ctx
            .state
            .resource(PhpExtensionsFamily::NAME, account)
            .map_err(store_error)?
        {
            Some(row) => serde_json::from_value(row.data["extensions"].clone()).map_err(corrupt)?,
            None => Vec::new(),
        },
    };
    Ok((options, extensions))
}

fn corrupt(e: serde_json::Error) -> OpError {
    OpError::permanent(
        "state_corrupt",
        format!("a recorded PHP setting does not parse: {e}"),
    )
}

/// The version of each existing web domain of `account` that has one, with the change.
pub fn domain_versions(
    ctx: &Ctx,
    account: &Hex32,
    change: PoolChange<'_>,
) -> Result<BTreeMap<Hex32, PhpVersion>, OpError> {
    let owner = Owner::Tenant(account.clone());
    let mut domains: BTreeSet<Hex32> = ctx
        .state
        .resources_of(&owner, WebDomain::NAME)
        .map_err(store_error)?
        .into_iter()
        .map(|r| r.resource_id)
        .collect();
    if let PoolChange::Domain(id, exists) = change {
        if exists {
            domains.insert(id.clone());
        } else {
            domains.remove(id);
        }
    }
    let mut versions: BTreeMap<Hex32, PhpVersion> = ctx
        .state
        .resources_of(&owner, PhpVersionFamily::NAME)
        .map_err(store_error)?
        .into_iter()
        .filter_map(|r| parse_version(&r.data["version"]).map(|v| (r.resource_id, v)))
        .collect();
    if let PoolChange::Version(id, version) = change {
        match version {
            Some(v) => versions.insert(id.clone(), v),
            None => versions.remove(id),
        };
    }
    versions.retain(|id, _| domains.contains(id));
    Ok(versions)
}

/// Checks that this node has `version`, with a clear error when it does not.
pub fn require_version(ctx: &Ctx, version: PhpVersion) -> Result<(), OpError> {
    if ctx
        .provider
        .php_installed_versions()
        .contains(&provider_version(version))
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

/// Rewrites the account's pools from state.db with `change` applied: one pool for each
/// version its domains use, none for the others. Returns what is in effect.
pub fn sync_pools(
    ctx: &mut Ctx,
    account: &Hex32,
    change: PoolChange<'_>,
) -> Result<Vec<PoolInEffect>, OpError> {
    let used: BTreeSet<PhpVersion> = domain_versions(ctx, account, change)?
        .into_values()
        .collect();
    let (options, extensions) = settings(ctx, account, change)?;
    check_option_consistency(&options)?;
    // Check everything before writing anything: a missing version or extension changes
    // nothing.
    let mut modules = BTreeMap::new();
    let cloudlinux = ctx.provider.platform() == provider::Platform::CloudLinux;
    for &version in &used {
        require_version(ctx, version)?;
        let loaded = ctx
            .provider
            .php_fpm_modules(provider_version(version))
            .map_err(provider_error)?;
        // On CloudLinux the selector can also give the user an installed, disabled one.
        let selectable: Vec<String> = if cloudlinux && !extensions.is_empty() {
            ctx.provider
                .selector_extensions(provider_version(version))
                .map_err(provider_error)?
                .into_iter()
                .map(|(name, _)| name)
                .collect()
        } else {
            Vec::new()
        };
        if let Some(missing) = extensions
            .iter()
            .find(|e| !loaded.contains(e) && !selectable.contains(e))
        {
            return Err(OpError::permanent(
                "php_extension_unavailable",
                format!(
                    "PHP {} on this node does not load the extension {missing}",
                    version.as_str()
                ),
            ));
        }
        modules.insert(version, loaded);
    }
    let mut in_effect = Vec::new();
    if !used.is_empty() {
        let info = account_info(ctx, account)?;
        let home = ctx.provider.sysconf(&info.home);
        let recorded = match change {
            PoolChange::Limits(l) => Some(*l),
            _ => recorded_limits(ctx, account)?,
        };
        let limits = PoolLimits::derive(recorded.as_ref(), &options);
        for (&version, loaded) in &modules {
            let socket = socket_path(ctx, account, version);
            ensure_private_dirs(ctx, &info, version)?;
            let pool = render_pool(account, &info, &home, &socket, version, &options, limits);
            let path = pool_path(ctx, account, version);
            ctx.write_service_config(
                Service::PhpFpm(provider_version(version)),
                &path,
                pool.as_bytes(),
            )?;
            let selected = if cloudlinux
                && (!extensions.is_empty() || matches!(change, PoolChange::Extensions(_)))
            {
                ctx.provider
                    .selector_replace_user_extensions(
                        &info.username,
                        provider_version(version),
                        &extensions,
                    )
                    .map_err(provider_error)?;
                extensions.clone()
            } else {
                Vec::new()
            };
            in_effect.push(PoolInEffect {
                version: version.as_str().to_owned(),
                socket: socket_system_path(ctx, account, version)
                    .display()
                    .to_string(),
                extensions: loaded.clone(),
                selector_extensions: selected,
            });
        }
    }
    // A removal retried after a crash may find its pool already gone but FPM not reloaded:
    // removals test and reload every installed version they leave unused, present or not.
    let removal = matches!(
        change,
        PoolChange::Version(_, None) | PoolChange::Domain(_, false)
    );
    let installed = ctx.provider.php_installed_versions();
    for &version in PhpVersion::ALL {
        if used.contains(&version) {
            continue;
        }
        let path = pool_path(ctx, account, version);
        let present = ctx
            .provider
            .read_config(&path)
            .map_err(provider_error)?
            .is_some();
        if present || (removal && installed.contains(&provider_version(version))) {
            ctx.remove_service_config(Service::PhpFpm(provider_version(version)), &path)?;
        }
    }
    crash::point("php.after_pools");
    Ok(in_effect)
}

fn check_option_consistency(options: &PhpOptions) -> Result<(), OpError> {
    if let (Some(upload), Some(post)) = (options.upload_max_filesize_mib, options.post_max_size_mib)
        && upload.get() > post.get()
    {
        return Err(OpError::permanent(
            "invalid_php_options",
            "upload_max_filesize_mib must not exceed post_max_size_mib (PHP would refuse such uploads)",
        ));
    }
    Ok(())
}

/// Removes every pool file of `account` (purge), whatever state.db says.
fn remove_all_pools(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
    for &version in PhpVersion::ALL {
        let path = pool_path(ctx, account, version);
        if ctx
            .provider
            .read_config(&path)
            .map_err(provider_error)?
            .is_some()
        {
            ctx.remove_service_config(Service::PhpFpm(provider_version(version)), &path)?;
        }
    }
    Ok(())
}

impl Purge<Ctx> for PhpVersionFamily {
    /// Removes the account's pools (every version) and forgets its version choices. Runs
    /// before `web_domain`'s purge, so the vhosts still naming the sockets go right after.
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        remove_all_pools(ctx, account)?;
        ctx.state
            .forget_resources_of(account, PhpVersionFamily::NAME)
            .map_err(store_error)?;
        Ok(())
    }
}

impl Purge<Ctx> for PhpOptionsFamily {
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        remove_all_pools(ctx, account)?;
        ctx.state
            .forget_resources_of(account, PhpOptionsFamily::NAME)
            .map_err(store_error)?;
        Ok(())
    }
}

impl Purge<Ctx> for PhpExtensionsFamily {
    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        ctx.state
            .forget_resources_of(account, PhpExtensionsFamily::NAME)
            .map_err(store_error)?;
        Ok(())
    }
}

impl Purge<Ctx> for PhpRuntime {
    /// An observation leaves nothing behind, for a tenant or for the node.
    fn purge(_: &mut Ctx, _: &Hex32) -> Result<(), OpError> {
        Ok(())
    }
}

impl Apply<Ctx> for SetPhpVersion {
    fn apply(ctx: &mut Ctx, req: &SetPhpVersionRequest) -> Result<PhpVersionResult, OpError> {
        account_info(ctx, &req.account)?;
        require_version(ctx, req.version)?;
        web_domain::require_domain(ctx, &req.account, &req.id)?;
        let pools = sync_pools(
            ctx,
            &req.account,
            PoolChange::Version(&req.id, Some(req.version)),
        )?;
        web_domain::sync_vhost(
            ctx,
            &req.account,
            &req.id,
            VhostChange::PhpVersion(Some(req.version)),
        )?;
        crash::point("php.after_vhost");
        ctx.set_resource(json!({"version": req.version}));
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
        // The vhost first: it must stop naming the socket before the pool goes.
        web_domain::sync_vhost(ctx, &req.account, &req.id, VhostChange::PhpVersion(None))?;
        let pools = sync_pools(ctx, &req.account, PoolChange::Version(&req.id, None))?;
        ctx.forget_row();
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
        let pools = sync_pools(ctx, &req.id, PoolChange::Options(&req.options))?;
        let (_, extensions) = settings(ctx, &req.id, PoolChange::Nothing)?;
        ctx.set_resource(json!({"options": req.options}));
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
        let pools = sync_pools(ctx, &req.id, PoolChange::Extensions(&req.extensions))?;
        let (options, _) = settings(ctx, &req.id, PoolChange::Nothing)?;
        let extensions: Vec<String> = req.extensions.iter().map(|e| e.module_name()).collect();
        ctx.set_resource(json!({"extensions": extensions}));
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
