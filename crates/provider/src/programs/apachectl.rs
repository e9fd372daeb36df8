//! `apachectl` (`apache2ctl` on Debian): configuration test and graceful reload, plus where
//! the platform keeps Apache's configuration and whether its Apache is running.
//!
//! Changing a shared service's configuration follows ARCHITECTURE.md invariant 8: write to a
//! temporary file, `apache_configtest`, move into place, `apache_reload`, revert on failure.
//! With a sysroot (tests, dev node) the main configuration is passed with `-f` so the real
//! `apache2ctl` reads the sysroot's config instead of `/etc`.
//!
//! A graceful reload of a stopped Apache (`apachectl graceful`, `apache2 -k graceful`) starts
//! it, outside the service manager. The node never starts Apache: a reload first asks whether
//! it runs ([`Provider::apache_running`], its pid file and `/proc`), and a stopped one is left
//! stopped, with its configuration in place for the next start.

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
    /// The server's binary, which the running master's `/proc/<pid>/exe` names.
    pub server: &'static str,
    /// Where the running master writes its pid (`PidFile`; Debian's `envvars`
    /// `APACHE_PID_FILE`, the `run/httpd.pid` of CloudLinux's `ServerRoot`).
    pub pid_file: &'static str,
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
                server: "/usr/sbin/apache2",
                pid_file: "/run/apache2/apache2.pid",
                vhosts_dir: "/etc/apache2/layerone/vhosts",
                include_line: "IncludeOptional /etc/apache2/layerone/vhosts/*.conf",
                auth_dir: "/etc/apache2/layerone/auth",
                group: "www-data",
                mods_enabled: Some("/etc/apache2/mods-enabled"),
            },
            Platform::CloudLinux => ApacheLayout {
                main_config: "/etc/httpd/conf/httpd.conf",
                server: "/usr/sbin/httpd",
                pid_file: "/run/httpd/httpd.pid",
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

    /// A graceful reload of a running Apache: `apachectl graceful`, or `apachectl -f CONF -k
    /// graceful` with a sysroot. Running requests finish on the old configuration. `Ok(true)`
    /// when it was reloaded; `Ok(false)` when Apache is not running ([`Provider::apache_running`]):
    /// nothing is run, since either command would start it (outside the service manager on a
    /// server). Its configuration is in place, and the next start reads it; whoever stopped
    /// Apache starts it. The caller reports it.
    pub fn apache_reload(&self) -> Result<bool, ProviderError> {
        if !self.apache_running()? {
            return Ok(false);
        }
        let argv = self.apache_argv(ApacheAction::GracefulReload);
        self.execute(
            Program::ApacheCtl,
            &argv,
            None,
            Program::ApacheCtl.default_timeout(),
        )?;
        Ok(true)
    }

    /// Whether the Apache this node configures is running: the pid file of
    /// [`ApacheLayout::pid_file`] (under the root) names a live process of
    /// [`ApacheLayout::server`]. Only read (the file, `/proc/<pid>/exe`); a missing or stale
    /// pid file is a stopped Apache. Where `apachectl` is modelled rather than run
    /// (`Executor::runs_real`), its Apache is the model's, which always runs.
    pub fn apache_running(&self) -> Result<bool, ProviderError> {
        if !self.runs_real(Program::ApacheCtl) {
            return Ok(true);
        }
        let layout = self.apache_layout();
        let pid_file = self.sysconf(layout.pid_file);
        let text = match std::fs::read_to_string(&pid_file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(ProviderError::io("read Apache's pid file", pid_file, e)),
        };
        let Ok(pid) = text.trim().parse::<u32>() else {
            return Ok(false);
        };
        Ok(process_runs(pid, layout.server))
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

/// Whether `pid` is a live process of the binary `server` (its `/proc/<pid>/exe`; ` (deleted)`
/// after a package upgrade replaced the file). A zombie has no `exe`.
pub fn process_runs(pid: u32, server: &str) -> bool {
    let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe")) else {
        return false;
    };
    let exe = exe.to_string_lossy();
    exe.strip_suffix(" (deleted)").unwrap_or(&exe) == server
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ApacheAction {
    ConfigTest,
    GracefulReload,
}
