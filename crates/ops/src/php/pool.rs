//! The owner of the account's PHP-FPM pools: one pool per account per version its domains
//! use, derived whole from the view ([`sync`]) whenever something it derives from changes:
//! a domain's version (`php_version`), the account's options (`php_options`) and extensions
//! (`php_extensions`), its web domains (`web_domain`), its limits (`set_account_limits`).
//! Those families record their rows and call [`sync`]; each pool goes through
//! [`Ctx::write_service_config`] with the service that runs it ([`pool_file`]: the tenant's
//! own master, `Service::TenantFpm`, on Debian; the version's shared one, `Service::PhpFpm`,
//! on CloudLinux): written, checked with the real `php-fpmX.Y -t -y CONF`, reverted on
//! failure, and (re)started or reloaded once per batch. The drift check
//! compares the pools with what [`sync`] would write now ([`derived`], the same renderer).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use registry::types::{PhpOptions, PhpVersion};
use registry::{Aspects, Content, Derived, Hex32, Of, OpError, Owner};

use super::{
    PhpExtensionsRow, PhpOptionsRow, PhpVersionRow, PoolInEffect, require_version,
};
use crate::account::{AccountInfo, account_info, account_row, live_account_info};
use crate::context::{Ctx, Service, provider_error, store_error};
use crate::web_domain::WebDomainRow;

/// Why the pools are synced, for what the view alone does not say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolSync {
    /// Something the pools derive from was set.
    Update,
    /// A domain or its version went: every installed version the account no longer uses is
    /// tested and reloaded, its pool present or not (a retry after a crash may find the pool
    /// already gone but FPM not reloaded).
    Removal,
    /// The extensions were set: on CloudLinux the selector's choice is replaced even with an
    /// empty list.
    Extensions,
}

/// Where the account's pool of one version is, and the service that runs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolFile {
    /// The file (mapped).
    pub path: PathBuf,
    pub service: Service,
}

impl PoolFile {
    /// Whether the file is the whole configuration of the tenant's own master (Debian) rather
    /// than a section of the version's shared one (CloudLinux).
    pub fn own_master(&self) -> bool {
        matches!(self.service, Service::TenantFpm(..))
    }
}

/// The pool file of `account` (uid `uid`) for `version`: its own master's configuration
/// where the node runs tenants' own masters (`provider::Provider::tenant_masters`: the
/// platform has them and `layerone install` wrote their template unit), or its section of
/// the version's shared master.
pub fn pool_file(ctx: &Ctx, account: &Hex32, uid: u32, version: PhpVersion) -> PoolFile {
    let own = ctx.provider.tenant_masters(version);
    match ctx
        .provider
        .php_fpm_layout(version)
        .tenant_config(uid)
        .filter(|_| own)
    {
        Some(config) => PoolFile {
            path: ctx.provider.sysconf(config),
            service: Service::TenantFpm(version, uid),
        },
        None => PoolFile {
            path: shared_pool_path(ctx, account, version),
            service: Service::PhpFpm(version),
        },
    }
}

/// The account's pool as a section of the version's shared master (mapped): where
/// CloudLinux keeps it, and where a Debian node kept it before each tenant had its own
/// master (such a file is removed by the next sync, named by the drift check until then).
pub fn shared_pool_path(ctx: &Ctx, account: &Hex32, version: PhpVersion) -> PathBuf {
    let layout = ctx.provider.php_fpm_layout(version);
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
    let layout = ctx.provider.php_fpm_layout(version);
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
///
/// With `own_master`, the file is the whole configuration of the tenant's own master
/// (`php8.2-fpm@<uid>.service`): a `[global]` section first, which logs to syslog (the
/// journal, under the unit's name) and keeps the master in the foreground for systemd.
#[allow(clippy::too_many_arguments)]
pub fn render_pool(
    account: &Hex32,
    info: &AccountInfo,
    home: &std::path::Path,
    socket: &std::path::Path,
    version: PhpVersion,
    options: &PhpOptions,
    limits: PoolLimits,
    own_master: bool,
) -> String {
    let [tmp, uploads, sessions] = private_dirs(version).map(|d| home.join(d));
    let global = if own_master {
        format!(
            "; The whole configuration of the account's own FPM master, php{v}-fpm@{uid}.service,\n\
             ; in user-{uid}.slice.\n\
             [global]\n\
             error_log = syslog\n\
             syslog.ident = php{v}-fpm@{uid}\n\
             daemonize = no\n",
            v = version.as_str(),
            uid = info.uid,
        )
    } else {
        String::new()
    };
    let mut out = format!(
        "; Managed by layerone node for account {account}, PHP {v}.\n\
         ; Changes made here are replaced.\n\
         {global}\
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

/// The account's recorded options and extensions, as the view has them.
pub fn settings(ctx: &Ctx, account: &Hex32) -> Result<(PhpOptions, Vec<String>), OpError> {
    let view = ctx.view();
    let options = view
        .get_owned::<PhpOptionsRow>(account, account)
        .map_err(store_error)?
        .map(|row| row.options)
        .unwrap_or_default();
    let extensions = view
        .get_owned::<PhpExtensionsRow>(account, account)
        .map_err(store_error)?
        .map(|row| row.extensions)
        .unwrap_or_default();
    Ok((options, extensions))
}

/// The version of each existing web domain of `account` that has one, as the view has them.
pub fn domain_versions(ctx: &Ctx, account: &Hex32) -> Result<BTreeMap<Hex32, PhpVersion>, OpError> {
    let view = ctx.view();
    let domains: BTreeSet<Hex32> = view
        .of_account::<WebDomainRow>(account)
        .map_err(store_error)?
        .into_iter()
        .map(|stored| stored.id)
        .collect();
    Ok(view
        .of_account::<PhpVersionRow>(account)
        .map_err(store_error)?
        .into_iter()
        .filter(|stored| domains.contains(&stored.id))
        .map(|stored| (stored.id, stored.row.version))
        .collect())
}

/// The versions each account's existing web domains use ([`domain_versions`]' rule, for
/// every account at once: the rows are read once for the node).
pub fn versions_by_account(ctx: &Ctx) -> Result<HashMap<Owner, BTreeSet<PhpVersion>>, OpError> {
    let view = ctx.view();
    let domains: BTreeSet<Hex32> = view
        .all::<WebDomainRow>()
        .map_err(store_error)?
        .into_iter()
        .map(|stored| stored.id)
        .collect();
    let mut used: HashMap<Owner, BTreeSet<PhpVersion>> = HashMap::new();
    for stored in view.all::<PhpVersionRow>().map_err(store_error)? {
        if domains.contains(&stored.id) {
            used.entry(stored.owner)
                .or_default()
                .insert(stored.row.version);
        }
    }
    Ok(used)
}

/// Rewrites the account's pools from the view (this job's row included): one pool for each
/// version its domains use, none for the others. Returns what is in effect.
pub fn sync(
    ctx: &mut Ctx,
    account: &Hex32,
    reason: PoolSync,
) -> Result<Vec<PoolInEffect>, OpError> {
    let used: BTreeSet<PhpVersion> = domain_versions(ctx, account)?.into_values().collect();
    let (options, extensions) = settings(ctx, account)?;
    check_option_consistency(&options)?;
    // Check everything before writing anything: a missing version or extension changes
    // nothing.
    let mut modules = BTreeMap::new();
    let cloudlinux = ctx.provider.platform() == provider::Platform::CloudLinux;
    for &version in &used {
        require_version(ctx, version)?;
        let loaded = ctx
            .provider
            .php_fpm_modules(version)
            .map_err(provider_error)?;
        // On CloudLinux the selector can also give the user an installed, disabled one.
        let selectable: Vec<String> = if cloudlinux && !extensions.is_empty() {
            ctx.provider
                .selector_extensions(version)
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
        let limits = limits_of(ctx, account, &options)?;
        for (&version, loaded) in &modules {
            ensure_private_dirs(ctx, &info, version)?;
            let file = pool_file(ctx, account, info.uid, version);
            let pool = pool_text(ctx, account, &info, version, &options, limits, &file);
            if file.own_master()
                && let Some(dir) = file.path.parent()
            {
                ctx.provider
                    .ensure_dir(dir, 0o755)
                    .map_err(provider_error)?;
            }
            ctx.write_service_config(file.service, &file.path, pool.as_bytes())?;
            if file.own_master() {
                retire_shared_pool(ctx, account, version)?;
            }
            let selected =
                if cloudlinux && (!extensions.is_empty() || reason == PoolSync::Extensions) {
                    ctx.provider
                        .selector_replace_user_extensions(
                            &info.username,
                            version,
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
    let removal = reason == PoolSync::Removal;
    let installed = ctx.provider.php_installed_versions();
    let uid = account_row(ctx, account)?.uid;
    for &version in PhpVersion::ALL {
        if used.contains(&version) {
            continue;
        }
        let file = pool_file(ctx, account, uid, version);
        // A tenant's own master of an installed version is stopped whether or not its file
        // is still there: an attempt that crashed after removing it did not stop it.
        let stop = if file.own_master() {
            installed.contains(&version)
        } else {
            removal && installed.contains(&version)
        };
        if present(ctx, &file.path)? || stop {
            ctx.remove_service_config(file.service, &file.path)?;
        }
        if file.own_master() {
            retire_shared_pool(ctx, account, version)?;
        }
    }
    crash::point(super::AFTER_POOLS);
    Ok(in_effect)
}

fn present(ctx: &Ctx, path: &Path) -> Result<bool, OpError> {
    Ok(ctx
        .provider
        .read_config(path)
        .map_err(provider_error)?
        .is_some())
}

/// Removes the account's section of the version's shared master, left by a node from before
/// each tenant had its own master: the shared master drops it at the batch's reload, before
/// the tenant's own master starts on the same socket (reloads run in `Service` order).
fn retire_shared_pool(ctx: &mut Ctx, account: &Hex32, version: PhpVersion) -> Result<(), OpError> {
    let shared = shared_pool_path(ctx, account, version);
    if present(ctx, &shared)? {
        ctx.remove_service_config(Service::PhpFpm(version), &shared)?;
    }
    Ok(())
}

/// The pool limits of `account` from its recorded limits and `options`.
fn limits_of(ctx: &Ctx, account: &Hex32, options: &PhpOptions) -> Result<PoolLimits, OpError> {
    let recorded = account_row(ctx, account)?.limits;
    Ok(PoolLimits::derive(recorded.as_ref(), options))
}

/// The pool of `account` for `version` in `file`, as [`sync`] writes it.
fn pool_text(
    ctx: &Ctx,
    account: &Hex32,
    info: &AccountInfo,
    version: PhpVersion,
    options: &PhpOptions,
    limits: PoolLimits,
    file: &PoolFile,
) -> String {
    let home = ctx.provider.sysconf(&info.home);
    let socket = socket_path(ctx, account, version);
    render_pool(
        account,
        info,
        &home,
        &socket,
        version,
        options,
        limits,
        file.own_master(),
    )
}

const POOL_FILE: Aspects = Aspects::new(super::PHP_POOL_MISSING, super::PHP_POOL_DIFFERS);

/// The account's pool files as [`sync`] leaves them, each with what is there: the pool of
/// every version its domains use, and no pool of any other version. Empty while the
/// account's user is gone.
pub fn derived(ctx: &Ctx, account: &Hex32) -> Result<Vec<Derived>, OpError> {
    let Some(info) = live_account_info(ctx, account)? else {
        return Ok(Vec::new());
    };
    let used: BTreeSet<PhpVersion> = domain_versions(ctx, account)?.into_values().collect();
    let (options, _) = settings(ctx, account)?;
    let limits = limits_of(ctx, account, &options)?;
    let mut items = Vec::new();
    let mut item = |path: PathBuf, expected: Content| -> Result<(), OpError> {
        let actual = ctx.provider.read_config(&path).map_err(provider_error)?;
        items.push(Derived::path(
            Of::account(account),
            path,
            expected,
            Content::file(actual),
            POOL_FILE,
        ));
        Ok(())
    };
    for &version in PhpVersion::ALL {
        let file = pool_file(ctx, account, info.uid, version);
        let expected = if used.contains(&version) {
            let text = pool_text(ctx, account, &info, version, &options, limits, &file);
            Content::Bytes(text.into_bytes())
        } else {
            Content::Absent
        };
        let own_master = file.own_master();
        item(file.path, expected)?;
        if own_master {
            item(shared_pool_path(ctx, account, version), Content::Absent)?;
        }
    }
    Ok(items)
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

/// Removes every pool file of `account` (purge), whatever state.db says, in either place;
/// the tenant's own masters of every installed version are stopped and disabled at the
/// batch's end, their files there or not (an attempt that crashed after removing them did
/// not stop them).
pub(super) fn remove_all(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
    let uid = match account_row(ctx, account) {
        Ok(row) => Some(row.uid),
        Err(e) if e.code == "account_missing" => None,
        Err(e) => return Err(e),
    };
    let installed = ctx.provider.php_installed_versions();
    for &version in PhpVersion::ALL {
        if let Some(uid) = uid {
            let file = pool_file(ctx, account, uid, version);
            if file.own_master() && (installed.contains(&version) || present(ctx, &file.path)?) {
                ctx.remove_service_config(file.service, &file.path)?;
            }
        }
        let shared = shared_pool_path(ctx, account, version);
        if present(ctx, &shared)? {
            ctx.remove_service_config(Service::PhpFpm(version), &shared)?;
        }
    }
    Ok(())
}
