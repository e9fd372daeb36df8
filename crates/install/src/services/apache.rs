//! Apache's modules, enabled the way Debian's `a2enmod` does it: for each module, the
//! `mods-enabled/<module>.load` (and `.conf`, where the package ships one) symlink to
//! `../mods-available/`. The node needs TLS, the proxy and request timeouts for its own vhost
//! (`tls.rs`: `ssl` brings Debian's `Listen 443`; `reqtimeout` cuts off slow clients before
//! the proxy, behind which every request reaches the API from one address), FastCGI for the
//! tenants' PHP, mpm-itk (which runs on the prefork MPM, so `mpm_event` and `mpm_worker` are
//! disabled) and what the tenant vhosts emit (`crates/ops/src/vhost/`: aliases, HTTP Basic
//! auth, rewrites and redirects, headers, `SetEnvIf`, `Expires*`). `--check` names each
//! missing link. Where the platform loads its modules from one file (CloudLinux), a note says
//! which modules must be loaded.

use super::present;
use crate::InstallError;
use crate::converge::Engine;

/// The modules the node's vhosts need, in the order `a2enmod` would take them (an MPM's
/// dependency first).
pub const MODULES: &[&str] = &[
    "mpm_prefork",
    "mpm_itk",
    "authz_core",
    "authz_host",
    "authz_user",
    "authn_core",
    "authn_file",
    "auth_basic",
    "alias",
    "dir",
    "mime",
    "env",
    "setenvif",
    "headers",
    "expires",
    "rewrite",
    "reqtimeout",
    "socache_shmcb",
    "ssl",
    "proxy",
    "proxy_http",
    "proxy_fcgi",
];

/// The MPMs that exclude mpm-itk's prefork.
pub const EXCLUDED: &[&str] = &["mpm_event", "mpm_worker"];

/// Links every module of [`MODULES`] that the root's Apache ships and disables the excluded
/// MPMs. Returns whether a link changed (the caller tests the configuration and reloads).
pub fn modules(e: &mut Engine, notes: &mut Vec<String>) -> Result<bool, InstallError> {
    let layout = e.provider.apache_layout();
    let Some(enabled) = layout.mods_enabled else {
        notes.push(format!(
            "this platform loads Apache's modules from one file: make sure {} are loaded",
            MODULES.join(", ")
        ));
        return Ok(false);
    };
    if !present(e, enabled) {
        return Ok(false);
    }
    let available = enabled.replace("mods-enabled", "mods-available");
    let mut changed = false;
    for module in EXCLUDED {
        for ext in ["load", "conf"] {
            changed |= e.absent(
                &format!("{enabled}/{module}.{ext}"),
                "mpm-itk runs on the prefork MPM, which excludes this one; layerone install keeps it disabled",
            )?;
        }
    }
    let mut missing = Vec::new();
    for module in MODULES {
        if !present(e, &format!("{available}/{module}.load")) {
            missing.push(*module);
            continue;
        }
        for ext in ["load", "conf"] {
            if present(e, &format!("{available}/{module}.{ext}")) {
                changed |= e.link(
                    &format!("{enabled}/{module}.{ext}"),
                    &format!("../mods-available/{module}.{ext}"),
                )?;
            }
        }
    }
    if !missing.is_empty() {
        notes.push(format!(
            "Apache modules not available in {available} (packages apache2, libapache2-mpm-itk): {}",
            missing.join(", ")
        ));
    }
    Ok(changed)
}
