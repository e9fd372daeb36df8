//! `apachectl` (`apache2ctl` on Debian): configuration test and graceful reload, plus where
//! the platform keeps Apache's configuration.
//!
//! Changing a shared service's configuration follows ARCHITECTURE.md invariant 8: write to a
//! temporary file, `apache_configtest`, move into place, `apache_reload`, revert on failure.
//! With a sysroot (tests, dev node) the main configuration is passed with `-f` so the real
//! `apache2ctl` reads the sysroot's config instead of `/etc`.

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::platform::Platform;
use crate::program::Program;
use crate::provider::Provider;

/// Where the platform's Apache keeps the files the node cares about. All are system paths:
/// map them with [`Provider::sysconf`] before touching them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApacheLayout {
    /// The main configuration file.
    pub main_config: &'static str,
    /// The directory the node's vhost files (`*.conf`) go in. The node owns it entirely.
    pub vhosts_dir: &'static str,
    /// The line the main configuration needs so Apache reads the node's vhosts.
    pub include_line: &'static str,
    /// The directory of the protected directories' `AuthUserFile`s (root's, 0640 to
    /// `group`), outside every home.
    pub auth_dir: &'static str,
    /// The group Apache's children run as before they become a tenant (mpm-itk).
    pub group: &'static str,
    /// Where the distribution enables modules one file each (Debian's `mods-enabled`);
    /// `None` where one file loads them all (CloudLinux's `conf.modules.d`).
    pub mods_enabled: Option<&'static str>,
}

/// Modules the node's Apache must not load: their handlers show every tenant's requests
/// (`server-status`, `server-info`), and a tenant reaches any loaded handler through a
/// `RewriteRule`'s `[H=...]` or a content type (`AddType application/x-httpd-status`),
/// which no `.htaccess` rule can take away. The installer disables them.
pub const SHARED_STATE_MODULES: &[&str] = &["status", "info"];

/// The module that runs each tenant vhost's requests as the tenant (`AssignUserID`); the
/// node's tenant vhosts do not pass Apache's configuration test without it.
pub const MPM_ITK_MODULE: &str = "mpm_itk";

impl ApacheLayout {
    pub fn for_platform(platform: Platform) -> ApacheLayout {
        match platform {
            Platform::Debian => ApacheLayout {
                main_config: "/etc/apache2/apache2.conf",
                vhosts_dir: "/etc/apache2/layerone/vhosts",
                include_line: "IncludeOptional /etc/apache2/layerone/vhosts/*.conf",
                auth_dir: "/etc/apache2/layerone/auth",
                group: "www-data",
                mods_enabled: Some("/etc/apache2/mods-enabled"),
            },
            Platform::CloudLinux => ApacheLayout {
                main_config: "/etc/httpd/conf/httpd.conf",
                vhosts_dir: "/etc/httpd/layerone/vhosts",
                include_line: "IncludeOptional /etc/httpd/layerone/vhosts/*.conf",
                auth_dir: "/etc/httpd/layerone/auth",
                group: "apache",
                mods_enabled: None,
            },
        }
    }
}

impl Provider {
    pub fn apache_layout(&self) -> ApacheLayout {
        ApacheLayout::for_platform(self.platform)
    }

    /// `apachectl [-f CONF] -t`. `Err(ProviderError::Failed { stderr, .. })` carries Apache's
    /// explanation (`AH00526: Syntax error on line N of FILE: ...`).
    pub fn apache_configtest(&self) -> Result<(), ProviderError> {
        let argv = self.apache_argv(ApacheAction::ConfigTest);
        self.execute(
            Program::ApacheCtl,
            &argv,
            None,
            Program::ApacheCtl.default_timeout(),
        )?;
        Ok(())
    }

    /// A graceful reload: `apachectl graceful`, or `apachectl -f CONF -k graceful` with a
    /// sysroot. Running requests finish on the old configuration.
    pub fn apache_reload(&self) -> Result<(), ProviderError> {
        let argv = self.apache_argv(ApacheAction::GracefulReload);
        self.execute(
            Program::ApacheCtl,
            &argv,
            None,
            Program::ApacheCtl.default_timeout(),
        )?;
        Ok(())
    }

    pub(crate) fn apache_argv(&self, action: ApacheAction) -> Argv {
        let mut argv = Argv::new();
        if self.root_is_slash() {
            match action {
                ApacheAction::ConfigTest => argv.arg("-t"),
                // The wrapper's own `graceful` tests the config first and refuses to signal
                // a server whose config is broken.
                ApacheAction::GracefulReload => argv.arg("graceful"),
            };
        } else {
            // With arguments besides the verb, apache2ctl passes everything straight to the
            // server binary, so the verb must be the server's own `-k graceful`.
            argv.arg("-f")
                .arg(self.sysconf(self.apache_layout().main_config));
            match action {
                ApacheAction::ConfigTest => argv.arg("-t"),
                ApacheAction::GracefulReload => argv.arg("-k").arg("graceful"),
            };
        }
        argv
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ApacheAction {
    ConfigTest,
    GracefulReload,
}
