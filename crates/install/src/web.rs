//! The parts of Apache and PHP-FPM the installer owns so that tenants stay apart
//! (`docs/security.md`, "A tenant's web requests reach only its own code"):
//!
//! - the distribution's default FPM pool (`www.conf`, running as the web server's user, the
//!   group of every home) is replaced by an idle pool only root can reach, which also keeps
//!   FPM starting on a node with no tenant pool yet;
//! - the modules whose handlers show every tenant's requests (`server-status`,
//!   `server-info`) are disabled: their enabling files are moved to the override area;
//! - the Apache include carries `-FollowSymLinks +SymLinksIfOwnerMatch` for the homes
//!   ([`home_directory_rules`]), ahead of every vhost;
//! - the modules the node's vhosts need are enabled (`services/apache.rs`), and a note
//!   says so when mpm-itk is still not enabled, without which no tenant vhost passes
//!   Apache's configuration test;
//! - each version's main FPM configuration is derived with its pool (`services/php_fpm.rs`);
//! - where tenants have FPM masters of their own (Debian), each version's template unit of
//!   them (`php8.2-fpm@.service`, `provider::PhpFpmLayout::tenant_template_text`: the
//!   instance is the tenant's uid, in its slice) and the directory of their configurations,
//!   which the node writes.
//!
//! Each change is tested before it is kept (`php-fpmX.Y -t`, `apachectl -t`) and put back
//! when the test fails; the services are reloaded once.

use provider::{MPM_ITK_MODULE, PhpVersion, SHARED_STATE_MODULES};
use store::LayoutOwner;

use crate::InstallError;
use crate::converge::Engine;

/// Where tenants' homes are: the directory the include's symlink rule covers.
pub const HOMES: &str = "/home";

/// The installer's note when a change of Apache's configuration finds Apache stopped: it is
/// not started (`Provider::apache_reload`).
pub(crate) const NOT_RUNNING: &str = "Apache is not running: its configuration changed and takes effect when it is started \
     (layerone install does not start it)";

/// The file name of the distribution's default pool in each version's pool directory.
const DEFAULT_POOL: &str = "www.conf";

/// The `<Directory>` rules the Apache include puts ahead of every vhost: beneath the homes,
/// a symlink is followed only where its owner owns the target (defence in depth; the
/// barrier is that a request runs as its tenant), and no `.htaccess` is read above a
/// document root.
pub fn home_directory_rules(homes: &str) -> String {
    format!(
        "<Directory \"{homes}\">\n\
         \x20   Options -FollowSymLinks +SymLinksIfOwnerMatch\n\
         \x20   AllowOverride None\n\
         </Directory>\n"
    )
}

/// The pool that replaces the distribution's default one: no process until root connects,
/// and only root can.
pub fn idle_pool(version: PhpVersion, socket_dir: &str) -> String {
    let v = version.as_str();
    format!(
        "; Derived by `layerone install`. The distribution's default pool ran as the web\n\
         ; server's user, which may enter every home; the node's pools run as their tenants.\n\
         ; This idle pool keeps FPM starting with no tenant pool, and only root reaches it.\n\
         [layerone-idle]\n\
         user = 65534\n\
         group = 65534\n\
         listen = {socket_dir}/layerone-idle-php{v}.sock\n\
         listen.owner = 0\n\
         listen.group = 0\n\
         listen.mode = 0600\n\
         pm = ondemand\n\
         pm.max_children = 1\n\
         pm.process_idle_timeout = 10s\n"
    )
}

/// Replaces each installed version's default pool, installs its tenant masters' template,
/// and disables the shared-state modules.
pub fn converge(e: &mut Engine, notes: &mut Vec<String>) -> Result<(), InstallError> {
    let mut units_changed = false;
    for version in e.provider.php_installed_versions() {
        default_pool(e, version, notes)?;
        units_changed |= tenant_masters(e, version)?;
    }
    if units_changed
        && !e.check
        && let Err(err) = e.provider.systemd_daemon_reload()
    {
        notes.push(format!(
            "systemd did not reload its units after the PHP tenant templates changed: {err}"
        ));
    }
    let layout = e.provider.apache_layout();
    if !e.map(layout.main_config).is_file() {
        return Ok(());
    }
    let Some(mods) = layout.mods_enabled.filter(|dir| e.map(dir).is_dir()) else {
        if layout.mods_enabled.is_none() {
            notes.push(format!(
                "this platform loads Apache's modules from one file: make sure {} are not loaded and {MPM_ITK_MODULE} is",
                SHARED_STATE_MODULES.join(", ")
            ));
        }
        return Ok(());
    };
    let mut moved = false;
    for module in SHARED_STATE_MODULES {
        for ext in ["load", "conf"] {
            moved |= e.absent(
                &format!("{mods}/{module}.{ext}"),
                "its handler shows every tenant's requests to any tenant that names it; \
                 layerone install keeps it disabled",
            )?;
        }
    }
    moved |= crate::services::apache::modules(e, notes)?;
    if std::fs::symlink_metadata(e.map(&format!("{mods}/{MPM_ITK_MODULE}.load"))).is_err() {
        notes.push(format!(
            "{MPM_ITK_MODULE} is not enabled (Debian package libapache2-mpm-itk): tenant vhosts \
             run as their tenant with it and fail Apache's configuration test without it"
        ));
    }
    if moved && !e.check {
        match e.provider.apache_configtest() {
            Ok(()) => match e.provider.apache_reload() {
                Ok(true) => {}
                Ok(false) => notes.push(NOT_RUNNING.to_owned()),
                Err(err) => notes.push(format!("Apache reload failed: {err}")),
            },
            Err(err) => notes.push(format!(
                "Apache's configuration test failed after disabling {}: {err}",
                SHARED_STATE_MODULES.join(", ")
            )),
        }
    }
    Ok(())
}

/// The template unit of `version`'s tenant masters and the directory of their
/// configurations, where the platform has them; whether the unit file changed.
fn tenant_masters(e: &mut Engine, version: PhpVersion) -> Result<bool, InstallError> {
    let layout = e.provider.php_fpm_layout(version);
    let (Some(dir), Some(template)) = (layout.tenant_dir.clone(), layout.tenant_template()) else {
        return Ok(false);
    };
    // A version installed on the machine but not configured in this root gets nothing.
    if !e.map(&layout.main_config).is_file() {
        return Ok(false);
    }
    let Some(text) = provider::Program::PhpFpm(version)
        .path(e.provider.platform())
        .and_then(|fpm| layout.tenant_template_text(fpm))
    else {
        return Ok(false);
    };
    e.dir(&dir, 0o755, LayoutOwner::Root)?;
    e.derived(&template, text.as_bytes(), 0o644, LayoutOwner::Root)
}

fn default_pool(
    e: &mut Engine,
    version: PhpVersion,
    notes: &mut Vec<String>,
) -> Result<(), InstallError> {
    let layout = e.provider.php_fpm_layout(version);
    // A version whose FPM is installed on the machine but not configured in this root has
    // no pool to replace.
    if !e.map(&layout.main_config).is_file() {
        return Ok(());
    }
    let path = format!("{}/{DEFAULT_POOL}", layout.pool_dir);
    let socket_dir = e.map(&layout.socket_dir).display().to_string();
    let main = crate::services::php_fpm::main_config(e, version);
    let mut before = vec![(path.clone(), e.read_regular(&path)?)];
    if let Some(main) = &main {
        before.push((main.path.clone(), e.read_regular(&main.path)?));
    }
    let mut changed = false;
    if let Some(main) = &main {
        changed |= crate::services::converge_file(e, main)?;
    }
    changed |= e.derived(
        &path,
        idle_pool(version, &socket_dir).as_bytes(),
        0o644,
        LayoutOwner::Root,
    )?;
    if !changed || e.check {
        return Ok(());
    }
    if let Err(err) = e.provider.php_fpm_configtest(version) {
        // Put back what was there, so FPM keeps serving.
        e.put_back(before)?;
        notes.push(format!(
            "PHP {}'s configuration test failed with the derived php-fpm.conf and idle pool, which were reverted: {err}",
            version.as_str()
        ));
        return Ok(());
    }
    // The machine's FPM serves the machine's root; whoever serves a sysroot starts its own.
    if e.provider.root() == std::path::Path::new("/")
        && let Err(err) = e.provider.php_fpm_reload(version)
    {
        notes.push(format!("PHP {} reload failed: {err}", version.as_str()));
    }
    Ok(())
}
