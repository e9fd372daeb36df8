//! PHP-FPM's main configuration for each installed version (Debian:
//! `/etc/php/8.2/fpm/php-fpm.conf`), written whole: the pid file and log where the
//! distribution's unit expects them, and the include of the version's pool directory,
//! where the node's pools and the idle default pool (`web.rs`) are. On CloudLinux the
//! alt-php main configuration is left as its package ships it (not covered here).

use provider::{PhpVersion, Platform};

use super::{ServiceFile, Syntax};
use crate::converge::Engine;

/// The main configuration's rows for `version`, or `None` where it is not covered.
pub fn main_config(e: &Engine, version: PhpVersion) -> Option<ServiceFile> {
    if e.provider.platform() != Platform::Debian {
        return None;
    }
    let layout = e.provider.php_fpm_layout(version);
    let v = version.as_str();
    let path = |p: &str| e.map(p).display().to_string();
    let mut f = ServiceFile::new(
        "php-fpm",
        "php-fpm.conf",
        layout.main_config.clone(),
        Syntax::Ini,
    );
    f.set(
        "pid",
        path(&format!("{}/php{v}-fpm.pid", layout.socket_dir)),
    )
    .set("error_log", path(&format!("/var/log/php{v}-fpm.log")))
    .set("include", format!("{}/*.conf", path(&layout.pool_dir)));
    Some(f)
}
