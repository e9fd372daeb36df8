//! PHP-FPM, one binary per PHP version: the configuration test (`php-fpmX.Y -t -y CONF`), the
//! module list (`php-fpmX.Y -m`), the reload of its unit (through `systemctl`), and where each
//! platform keeps each version's files.
//!
//! The versions a node can offer are the binaries that exist (`/usr/sbin/php-fpm8.2` on
//! Debian, `/opt/alt/php82/usr/sbin/php-fpm` for CloudLinux's alt-php); their extensions are
//! what the binary itself lists with `-m`. Nothing here takes a path or a version string from
//! a request: a version is the closed [`PhpVersion`] enum, every path comes from this table.

use std::path::Path;

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::platform::Platform;
use crate::program::Program;
use crate::provider::Provider;

/// A PHP version the node knows how to run: the registry's closed list, one type for the
/// requests and the programs. Which of them a node really has is observed
/// ([`Provider::php_installed_versions`]); its program names and paths are this module's
/// table ([`FpmName`], the platform paths of [`PhpFpmLayout`]).
pub use registry::types::PhpVersion;

/// One row of the version table: every name and path of one version, on both platforms.
struct Row {
    fpm_name: &'static str,
    debian_fpm: &'static str,
    debian_dir: &'static str,
    debian_cli: &'static str,
    debian_unit: &'static str,
    alt_dir: &'static str,
}

macro_rules! row {
    ($dotted:literal, $compact:literal) => {
        Row {
            fpm_name: concat!("php-fpm", $dotted),
            debian_fpm: concat!("/usr/sbin/php-fpm", $dotted),
            debian_dir: concat!("/etc/php/", $dotted),
            debian_cli: concat!("/usr/bin/php", $dotted),
            debian_unit: concat!("php", $dotted, "-fpm.service"),
            alt_dir: concat!("/opt/alt/php", $compact),
        }
    };
}

fn row(version: PhpVersion) -> Row {
    match version {
        PhpVersion::V7_4 => row!("7.4", "74"),
        PhpVersion::V8_0 => row!("8.0", "80"),
        PhpVersion::V8_1 => row!("8.1", "81"),
        PhpVersion::V8_2 => row!("8.2", "82"),
        PhpVersion::V8_3 => row!("8.3", "83"),
        PhpVersion::V8_4 => row!("8.4", "84"),
    }
}

/// The name a version's FPM program goes by.
pub trait FpmName {
    /// `php-fpm8.2`: the program's stable name in errors and the audit log.
    fn fpm_name(self) -> &'static str;
}

impl FpmName for PhpVersion {
    fn fpm_name(self) -> &'static str {
        row(self).fpm_name
    }
}

/// Debian's FPM binary of `version`.
pub(crate) fn debian_fpm(version: PhpVersion) -> &'static str {
    row(version).debian_fpm
}

/// CloudLinux's alt-php FPM binary of `version`.
pub(crate) fn alt_fpm(version: PhpVersion) -> &'static str {
    match version {
        PhpVersion::V7_4 => "/opt/alt/php74/usr/sbin/php-fpm",
        PhpVersion::V8_0 => "/opt/alt/php80/usr/sbin/php-fpm",
        PhpVersion::V8_1 => "/opt/alt/php81/usr/sbin/php-fpm",
        PhpVersion::V8_2 => "/opt/alt/php82/usr/sbin/php-fpm",
        PhpVersion::V8_3 => "/opt/alt/php83/usr/sbin/php-fpm",
        PhpVersion::V8_4 => "/opt/alt/php84/usr/sbin/php-fpm",
    }
}

/// Where one PHP version keeps its files on one platform. System paths: map them with
/// [`Provider::sysconf`] before touching them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhpFpmLayout {
    pub version: PhpVersion,
    /// The FPM main configuration, passed to `-t -y`.
    pub main_config: String,
    /// The directory the main configuration includes pools from. The node's pools are the
    /// `layerone-*.conf` files in it.
    pub pool_dir: String,
    /// The ini directory whose files load this version's extensions (read by Sim's `-m`).
    pub ini_dir: String,
    /// Where the node's pool sockets are created.
    pub socket_dir: String,
    /// The command-line PHP of this version, for scheduled scripts.
    pub cli: String,
    /// The systemd unit of the version's shared master (reloaded after a change of a pool in
    /// [`PhpFpmLayout::pool_dir`]).
    pub unit: String,
    /// Where each tenant's own FPM configuration is, whole (`<uid>.conf`: a `[global]`
    /// section and the tenant's one pool), run by a master of its own, the instance
    /// [`PhpFpmLayout::tenant_unit`] of the template [`PhpFpmLayout::tenant_template`], in
    /// the tenant's slice: Debian. `None` where the tenants' pools are sections of the
    /// version's shared master in [`PhpFpmLayout::pool_dir`] (CloudLinux, whose LVE bounds
    /// each tenant's processes wherever they run).
    pub tenant_dir: Option<String>,
    /// The user Apache runs as before a request becomes its tenant's: the distribution's
    /// default pool runs as it, which the installer replaces.
    pub web_user: &'static str,
}

impl PhpFpmLayout {
    /// Debian: `php8.2-fpm` from the distribution (or sury.org), `/etc/php/8.2/fpm`.
    /// CloudLinux: alt-php (`/opt/alt/php82`, unit `alt-php82-fpm`), Apache as `apache`.
    pub fn for_platform(platform: Platform, version: PhpVersion) -> PhpFpmLayout {
        let row = row(version);
        match platform {
            Platform::Debian => PhpFpmLayout {
                version,
                main_config: format!("{}/fpm/php-fpm.conf", row.debian_dir),
                pool_dir: format!("{}/fpm/pool.d", row.debian_dir),
                ini_dir: format!("{}/fpm/conf.d", row.debian_dir),
                socket_dir: "/run/php".into(),
                cli: row.debian_cli.into(),
                unit: row.debian_unit.into(),
                tenant_dir: Some(format!("{}/fpm/layerone", row.debian_dir)),
                web_user: "www-data",
            },
            Platform::CloudLinux => PhpFpmLayout {
                version,
                main_config: format!("{}/etc/php-fpm.conf", row.alt_dir),
                pool_dir: format!("{}/etc/php-fpm.d", row.alt_dir),
                ini_dir: format!("{}/etc/php.d", row.alt_dir),
                socket_dir: format!("{}/var/run", row.alt_dir),
                cli: format!("{}/usr/bin/php", row.alt_dir),
                unit: format!(
                    "alt-php{}-fpm.service",
                    row.alt_dir.trim_start_matches("/opt/alt/php")
                ),
                tenant_dir: None,
                web_user: "apache",
            },
        }
    }

    /// `uid`'s own FPM configuration, where tenants have their own masters.
    pub fn tenant_config(&self, uid: u32) -> Option<String> {
        self.tenant_dir
            .as_ref()
            .map(|dir| format!("{dir}/{uid}.conf"))
    }

    /// The unit file of the template of the tenants' masters
    /// (`/etc/systemd/system/php8.2-fpm@.service`), installed by `layerone install` beside
    /// the distribution's `php8.2-fpm.service`; its instance is a tenant's uid, which names
    /// both the configuration it runs and its slice (`user-<uid>.slice`).
    pub fn tenant_template(&self) -> Option<String> {
        self.tenant_dir.as_ref()?;
        Some(format!(
            "/etc/systemd/system/php{}-fpm@.service",
            self.version.as_str()
        ))
    }

    /// The template unit's text, where the platform has tenant masters: the instance is the
    /// tenant's uid, which names the configuration the node writes for it and its slice,
    /// where systemd bounds it with the account's limits (`set_account_limits`). The master
    /// runs as root (it binds the pool's socket and becomes the tenant for its children), in
    /// the foreground for systemd (`Type=notify`), reloaded gracefully by `SIGUSR2`, as the
    /// distribution's `php8.2-fpm.service` is; `/run/php` is the distribution's (tmpfiles).
    /// An instance whose configuration is gone is skipped at boot (`ConditionPathExists=`),
    /// not started into a failure.
    pub fn tenant_template_text(&self, fpm: &str) -> Option<String> {
        let dir = self.tenant_dir.as_ref()?;
        let v = self.version.as_str();
        Some(format!(
            "# Derived by `layerone install`; edits here are moved to /etc/layerone/override/ by\n\
             # the next install. One PHP {v} FPM master per tenant: the instance is the tenant's\n\
             # uid, which names its configuration (written by the node) and its slice.\n\
             [Unit]\n\
             Description=PHP {v} FastCGI Process Manager of uid %i\n\
             Documentation=man:php-fpm{v}(8)\n\
             After=network.target\n\
             ConditionPathExists={dir}/%i.conf\n\
             \n\
             [Service]\n\
             Type=notify\n\
             Slice=user-%i.slice\n\
             ExecStart={fpm} --nodaemonize --fpm-config {dir}/%i.conf\n\
             ExecReload=/bin/kill -USR2 $MAINPID\n\
             Restart=on-failure\n\
             RestartSec=5s\n\
             \n\
             [Install]\n\
             WantedBy=multi-user.target\n"
        ))
    }

    /// The unit of `uid`'s own master: `php8.2-fpm@1001.service`.
    pub fn tenant_unit(&self, uid: u32) -> String {
        format!("php{}-fpm@{uid}.service", self.version.as_str())
    }

    /// The version and uid of a tenant master's unit, if `unit` is one (Sim's systemctl).
    pub fn tenant_of_unit(platform: Platform, unit: &str) -> Option<(PhpVersion, u32)> {
        PhpVersion::ALL.iter().copied().find_map(|v| {
            let layout = PhpFpmLayout::for_platform(platform, v);
            layout.tenant_dir.as_ref()?;
            let prefix = format!("php{}-fpm@", v.as_str());
            let uid = unit.strip_prefix(&prefix)?.strip_suffix(".service")?;
            if uid.is_empty() || !uid.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some((v, uid.parse().ok()?))
        })
    }

    /// The version whose unit is `unit`, if it is one of the table's (Sim's systemctl uses
    /// this to refuse units the node never reloads).
    pub fn version_of_unit(platform: Platform, unit: &str) -> Option<PhpVersion> {
        PhpVersion::ALL
            .iter()
            .copied()
            .find(|&v| PhpFpmLayout::for_platform(platform, v).unit == unit)
    }
}

impl Provider {
    pub fn php_fpm_layout(&self, version: PhpVersion) -> PhpFpmLayout {
        PhpFpmLayout::for_platform(self.platform, version)
    }

    /// The versions whose FPM binary exists on this node, oldest first. Under Sim the
    /// sysroot stands for the machine, except for a version run for real, whose real binary
    /// is looked at.
    pub fn php_installed_versions(&self) -> Vec<PhpVersion> {
        PhpVersion::ALL
            .iter()
            .copied()
            .filter(|&v| self.program_installed(Program::PhpFpm(v)))
            .collect()
    }

    /// Whether the command-line PHP of `version` exists (scheduled scripts need it).
    pub fn php_cli_installed(&self, version: PhpVersion) -> bool {
        let cli = self.php_fpm_layout(version).cli;
        if self.runs_real(Program::PhpFpm(version)) {
            Path::new(&cli).exists()
        } else {
            self.sysconf(&cli).exists()
        }
    }

    /// Whether `program` exists on this node: its path on the platform, in the sysroot, or on
    /// the machine itself for a program the executor runs for real (under Sim the sysroot
    /// stands for the machine). A program the platform has no path for is not installed.
    pub fn program_installed(&self, program: Program) -> bool {
        let Some(path) = program.path(self.platform) else {
            return false;
        };
        if self.runs_real(program) {
            Path::new(path).exists()
        } else {
            self.sysconf(path).exists()
        }
    }

    /// `php-fpmX.Y -t -y CONF`: checks the version's main configuration and every pool it
    /// includes. `Err(Failed { stderr })` carries FPM's `ERROR:` lines.
    pub fn php_fpm_configtest(&self, version: PhpVersion) -> Result<(), ProviderError> {
        let mut argv = Argv::new();
        argv.arg("-t")
            .arg("-y")
            .arg(self.sysconf(self.php_fpm_layout(version).main_config));
        let program = Program::PhpFpm(version);
        self.execute(program, &argv, None, program.default_timeout())?;
        Ok(())
    }

    /// `php-fpmX.Y -m`: the modules this version loads, in its own order (the `[PHP Modules]`
    /// section; Zend extensions such as OPcache are listed under their PHP module name too).
    pub fn php_fpm_modules(&self, version: PhpVersion) -> Result<Vec<String>, ProviderError> {
        let mut argv = Argv::new();
        argv.arg("-m");
        let program = Program::PhpFpm(version);
        let out = self.execute(program, &argv, None, program.default_timeout())?;
        Ok(parse_modules(&String::from_utf8_lossy(&out.stdout)))
    }

    /// `php-fpmX.Y -t -y CONF` of `uid`'s own configuration; `Ok` when it has none (its
    /// master is stopped by [`Provider::tenant_fpm_reload`]).
    pub fn tenant_fpm_configtest(
        &self,
        version: PhpVersion,
        uid: u32,
    ) -> Result<(), ProviderError> {
        let Some(config) = self.php_fpm_layout(version).tenant_config(uid) else {
            return Ok(());
        };
        let config = self.sysconf(&config);
        if !config.exists() {
            return Ok(());
        }
        let mut argv = Argv::new();
        argv.arg("-t").arg("-y").arg(config);
        let program = Program::PhpFpm(version);
        self.execute(program, &argv, None, program.default_timeout())?;
        Ok(())
    }

    /// Whether this node runs tenants' own masters of `version`: the platform has them and
    /// `layerone install` wrote their template unit.
    pub fn tenant_masters(&self, version: PhpVersion) -> bool {
        self.php_fpm_layout(version)
            .tenant_template()
            .is_some_and(|t| self.sysconf(t).exists())
    }

    /// Brings `uid`'s own master of `version` in line with its configuration: with one,
    /// `systemctl enable` (it starts at boot) and `systemctl reload-or-restart` (a running
    /// master re-reads it gracefully, a stopped one starts); without one, `systemctl disable
    /// --now` (it stops, and its children with it) unless systemd shows it inactive already,
    /// so a master left running by an attempt that crashed after removing its configuration
    /// is stopped by the retry. Nothing where the node has no tenant masters of that version
    /// (no master can run without the template).
    ///
    /// A start that fails is tried once more after the version's shared master is reloaded:
    /// a pool of the tenant's moved out of the shared master (a node from before tenant
    /// masters, or an attempt that crashed before that master's reload) may still hold the
    /// socket, which FPM refuses to share, and that master's reload (`SIGUSR2`) returns before
    /// it has let go.
    pub fn tenant_fpm_reload(&self, version: PhpVersion, uid: u32) -> Result<(), ProviderError> {
        let layout = self.php_fpm_layout(version);
        let Some(config) = layout.tenant_config(uid) else {
            return Ok(());
        };
        if !self.tenant_masters(version) {
            return Ok(());
        }
        let unit = layout.tenant_unit(uid);
        if !self.sysconf(&config).exists() {
            let stopped = self
                .tenant_fpm_state(version, uid)?
                .is_none_or(|shown| matches!(shown.active_state.as_str(), "" | "inactive"));
            if stopped {
                return Ok(());
            }
            return self.systemctl(&["disable", "--now", &unit]);
        }
        self.systemctl(&["enable", &unit])?;
        match self.systemctl(&["reload-or-restart", &unit]) {
            Ok(()) => Ok(()),
            Err(first) => {
                tracing::warn!(%unit, error = %first, "the tenant's FPM master did not start; the shared master is reloaded and the start tried again");
                self.php_fpm_reload(version)?;
                std::thread::sleep(std::time::Duration::from_secs(1));
                self.systemctl(&["reload-or-restart", &unit])
            }
        }
    }

    /// `systemctl reload php8.2-fpm.service` (`alt-php82-fpm.service` on CloudLinux): FPM
    /// re-reads its pools gracefully (SIGUSR2 through the unit's `ExecReload`).
    pub fn php_fpm_reload(&self, version: PhpVersion) -> Result<(), ProviderError> {
        self.systemctl(&["reload", &self.php_fpm_layout(version).unit])
    }
}

/// The names of the `[PHP Modules]` section of `php -m`, lowercased (`Zend OPcache` is
/// reported as `Zend OPcache` under `[Zend Modules]` and as nothing under PHP modules on some
/// builds, so the Zend section is read too and mapped to its extension name).
pub fn parse_modules(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut section = "";
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') && line.ends_with(']') {
            section = line;
            continue;
        }
        if line.is_empty() {
            continue;
        }
        let name = match (section, line) {
            ("[PHP Modules]", name) => name.to_ascii_lowercase(),
            ("[Zend Modules]", "Zend OPcache") => "opcache".to_owned(),
            _ => continue,
        };
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_list_is_parsed_from_both_sections() {
        let text = "[PHP Modules]\nCore\ndate\nPDO\n\n[Zend Modules]\nZend OPcache\n\n";
        assert_eq!(parse_modules(text), ["core", "date", "pdo", "opcache"]);
    }

    #[test]
    fn layouts_follow_each_platform() {
        let d = PhpFpmLayout::for_platform(Platform::Debian, PhpVersion::V8_2);
        assert_eq!(d.pool_dir, "/etc/php/8.2/fpm/pool.d");
        assert_eq!(d.unit, "php8.2-fpm.service");
        assert_eq!(d.cli, "/usr/bin/php8.2");
        let c = PhpFpmLayout::for_platform(Platform::CloudLinux, PhpVersion::V8_2);
        assert_eq!(c.pool_dir, "/opt/alt/php82/etc/php-fpm.d");
        assert_eq!(c.unit, "alt-php82-fpm.service");
        assert_eq!(c.cli, "/opt/alt/php82/usr/bin/php");
        assert_eq!(
            Program::PhpFpm(PhpVersion::V8_2).path(Platform::CloudLinux),
            Some("/opt/alt/php82/usr/sbin/php-fpm")
        );
        assert_eq!(
            PhpFpmLayout::version_of_unit(Platform::Debian, "php8.2-fpm.service"),
            Some(PhpVersion::V8_2)
        );
        assert_eq!(
            PhpFpmLayout::version_of_unit(Platform::Debian, "ssh.service"),
            None
        );
        assert_eq!(
            d.tenant_config(1001).as_deref(),
            Some("/etc/php/8.2/fpm/layerone/1001.conf")
        );
        assert_eq!(d.tenant_unit(1001), "php8.2-fpm@1001.service");
        assert_eq!(c.tenant_config(1001), None);
        assert_eq!(
            PhpFpmLayout::tenant_of_unit(Platform::Debian, "php8.2-fpm@1001.service"),
            Some((PhpVersion::V8_2, 1001))
        );
        for other in [
            "php8.2-fpm.service",
            "php8.2-fpm@.service",
            "php8.2-fpm@x1.service",
        ] {
            assert_eq!(PhpFpmLayout::tenant_of_unit(Platform::Debian, other), None);
        }
        assert_eq!(
            PhpFpmLayout::tenant_of_unit(Platform::CloudLinux, "php8.2-fpm@1001.service"),
            None
        );
    }
}
