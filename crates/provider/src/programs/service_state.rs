//! The state of the shared services, for `observe_runtime`: `systemctl show` for whether a
//! unit is loaded and active, and the package database for whether and which version is
//! installed.
//!
//! Units are a closed enum mapped per platform; nothing from a request names one. PHP-FPM's
//! units are versioned (`php8.2-fpm`): the versions come from the directories of
//! `/etc/php/` that hold an `fpm/` configuration, each checked to be `DIGIT.DIGIT` before it
//! becomes part of a unit name.
//!
//! `systemctl show --property=LoadState,ActiveState -- UNIT` exits 0 for a unit systemd does
//! not know (`LoadState=not-found`), unlike `is-active`, whose non-zero exit for an inactive
//! unit would be indistinguishable from a failure to run.

use crate::error::ProviderError;
use crate::platform::Platform;
use crate::provider::Provider;

/// A shared service the node reports on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ServiceUnit {
    Apache,
    /// PHP-FPM of one version (`major`, `minor`).
    PhpFpm(u8, u8),
    Mariadb,
    Postfix,
    Dovecot,
}

impl ServiceUnit {
    /// The systemd unit on `platform`.
    pub fn unit(self, platform: Platform) -> String {
        match (self, platform) {
            (ServiceUnit::Apache, Platform::Debian) => "apache2.service".into(),
            (ServiceUnit::Apache, Platform::CloudLinux) => "httpd.service".into(),
            (ServiceUnit::PhpFpm(a, b), Platform::Debian) => format!("php{a}.{b}-fpm.service"),
            (ServiceUnit::PhpFpm(a, b), Platform::CloudLinux) => {
                format!("alt-php{a}{b}-fpm.service")
            }
            (ServiceUnit::Mariadb, _) => "mariadb.service".into(),
            (ServiceUnit::Postfix, _) => "postfix.service".into(),
            (ServiceUnit::Dovecot, _) => "dovecot.service".into(),
        }
    }

    /// The Debian package that installs the service.
    pub fn package(self) -> String {
        match self {
            ServiceUnit::Apache => "apache2".into(),
            ServiceUnit::PhpFpm(a, b) => format!("php{a}.{b}-fpm"),
            ServiceUnit::Mariadb => "mariadb-server".into(),
            ServiceUnit::Postfix => "postfix".into(),
            ServiceUnit::Dovecot => "dovecot-core".into(),
        }
    }
}

/// What `systemctl show` reports for one unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitState {
    /// `loaded`, `not-found`, `masked`...
    pub load_state: String,
    /// `active`, `inactive`, `failed`, `activating`, `deactivating`, `reloading`.
    pub active_state: String,
}

/// Parses `KEY=VALUE` lines of `systemctl show`.
pub fn parse_show(text: &str) -> UnitState {
    let get = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .unwrap_or("")
            .to_owned()
    };
    UnitState {
        load_state: get("LoadState"),
        active_state: get("ActiveState"),
    }
}

/// The installed version of each of `packages` in a dpkg status file, when installed.
pub fn dpkg_versions(status: &str, package: &str) -> Option<String> {
    status.split("\n\n").find_map(|stanza| {
        let field = |name: &str| {
            stanza
                .lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
        };
        (field("Package") == Some(package) && field("Status") == Some("install ok installed"))
            .then(|| field("Version").map(str::to_owned))
            .flatten()
    })
}

impl Provider {
    /// `systemctl show --property=LoadState,ActiveState -- UNIT`.
    pub fn unit_state(&self, unit: ServiceUnit) -> Result<UnitState, ProviderError> {
        let shown = self.systemd_show("LoadState,ActiveState", &unit.unit(self.platform))?;
        Ok(parse_show(&shown))
    }

    /// `systemctl show --property=LoadState,ActiveState` of `uid`'s own FPM master of
    /// `version` (`php8.2-fpm@<uid>.service`); `None` where the platform has none.
    pub fn tenant_fpm_state(
        &self,
        version: crate::PhpVersion,
        uid: u32,
    ) -> Result<Option<UnitState>, ProviderError> {
        let layout = self.php_fpm_layout(version);
        if layout.tenant_dir.is_none() {
            return Ok(None);
        }
        let shown = self.systemd_show("LoadState,ActiveState", &layout.tenant_unit(uid))?;
        Ok(Some(parse_show(&shown)))
    }

    /// The PHP-FPM versions configured on this node: `/etc/php/X.Y/fpm` on Debian,
    /// `/opt/alt/phpXY/etc/php-fpm.conf` on CloudLinux.
    pub fn php_fpm_versions(&self) -> Result<Vec<ServiceUnit>, ProviderError> {
        let (dir, platform) = match self.platform {
            Platform::Debian => (self.sysconf("/etc/php"), Platform::Debian),
            Platform::CloudLinux => (self.sysconf("/opt/alt"), Platform::CloudLinux),
        };
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(ProviderError::io("list", &dir, e)),
        };
        let mut found = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let digits = match platform {
                Platform::Debian => name
                    .split_once('.')
                    .filter(|_| entry.path().join("fpm").is_dir())
                    .map(|(a, b)| (a.to_owned(), b.to_owned())),
                Platform::CloudLinux => name
                    .strip_prefix("php")
                    .filter(|v| v.len() == 2)
                    .filter(|_| entry.path().join("etc/php-fpm.conf").is_file())
                    .map(|v| (v[..1].to_owned(), v[1..].to_owned())),
            };
            let Some((a, b)) = digits else { continue };
            let one_digit = |s: &str| (s.len() == 1).then(|| s.parse::<u8>().ok()).flatten();
            if let (Some(a), Some(b)) = (one_digit(&a), one_digit(&b)) {
                found.push(ServiceUnit::PhpFpm(a, b));
            }
        }
        found.sort();
        Ok(found)
    }

    /// The installed version of the service's package, from dpkg's status file (Debian).
    /// `None` on CloudLinux, whose package database is not a text file the node reads.
    pub fn package_version(&self, unit: ServiceUnit) -> Result<Option<String>, ProviderError> {
        if self.platform != Platform::Debian {
            return Ok(None);
        }
        let path = self.sysconf("/var/lib/dpkg/status");
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(dpkg_versions(&text, &unit.package())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(ProviderError::io("read", &path, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn show_and_dpkg_status_are_parsed() {
        let s = parse_show("LoadState=loaded\nActiveState=failed\n");
        assert_eq!(
            (s.load_state.as_str(), s.active_state.as_str()),
            ("loaded", "failed")
        );
        let status = "Package: apache2\nStatus: install ok installed\nVersion: 2.4.62-1\n\n\
                      Package: postfix\nStatus: deinstall ok config-files\nVersion: 3.7\n";
        assert_eq!(
            dpkg_versions(status, "apache2").as_deref(),
            Some("2.4.62-1")
        );
        assert_eq!(dpkg_versions(status, "postfix"), None);
        assert_eq!(dpkg_versions(status, "dovecot-core"), None);
        assert_eq!(
            ServiceUnit::PhpFpm(8, 2).unit(Platform::Debian),
            "php8.2-fpm.service"
        );
    }
}
