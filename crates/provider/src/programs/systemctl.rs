//! `systemctl`: enabling the node's own units, asking whether they are enabled, and restarting
//! or reloading the services that read a certificate after it changed.
//!
//! Unit names are constants of the installer, never input. With a sysroot, `--root` makes
//! `systemctl` work offline on the sysroot's unit directories (enable and is-enabled only:
//! there is no running manager for a sysroot, so reload and restart are not run there).

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::program::Program;
use crate::provider::Provider;

/// Whether a systemd action was carried out, or skipped because the root is a sysroot that no
/// running service manager looks after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Managed {
    Done,
    SkippedOnSysroot,
}

impl Provider {
    /// `systemctl WORDS...`, its output discarded: a verb on units the node names.
    pub(crate) fn systemctl(&self, words: &[&str]) -> Result<(), ProviderError> {
        let mut argv = Argv::new();
        for word in words {
            argv.arg(word);
        }
        self.run_systemctl(&argv).map(drop)
    }

    /// Runs `systemctl` with `argv`, with its default timeout.
    fn run_systemctl(&self, argv: &Argv) -> Result<crate::executor::Output, ProviderError> {
        self.execute(
            Program::Systemctl,
            argv,
            None,
            Program::Systemctl.default_timeout(),
        )
    }

    fn systemctl_argv(&self) -> Argv {
        let mut argv = Argv::new();
        if !self.root_is_slash() {
            argv.arg("--root").arg(&self.root);
        }
        argv
    }

    /// `systemctl enable --now -- UNIT...`, or `systemctl --root ROOT enable -- UNIT...` on a
    /// sysroot (nothing to start there): the `[Install]` links, made by systemd's own tool,
    /// never by the node.
    pub fn systemd_enable(&self, units: &[&str]) -> Result<(), ProviderError> {
        self.systemd_unit_files("enable", units)
    }

    /// `systemctl disable --now -- UNIT...` (or `--root ROOT disable` on a sysroot).
    pub fn systemd_disable(&self, units: &[&str]) -> Result<(), ProviderError> {
        self.systemd_unit_files("disable", units)
    }

    fn systemd_unit_files(&self, verb: &str, units: &[&str]) -> Result<(), ProviderError> {
        let mut argv = self.systemctl_argv();
        argv.arg(verb);
        if self.root_is_slash() {
            argv.arg("--now");
        }
        argv.arg("--");
        for unit in units {
            argv.arg(unit);
        }
        self.run_systemctl(&argv).map(drop)
    }

    /// The enablement state systemd reports for each of `units` (`enabled`, `disabled`,
    /// `masked`, `static`...), from `systemctl [--root ROOT] list-unit-files --no-legend
    /// --no-pager -- UNIT...`. A unit systemd has no file for is absent from the map.
    pub fn systemd_unit_states(
        &self,
        units: &[&str],
    ) -> Result<std::collections::BTreeMap<String, String>, ProviderError> {
        let mut argv = self.systemctl_argv();
        argv.arg("list-unit-files")
            .arg("--no-legend")
            .arg("--no-pager")
            .arg("--");
        for unit in units {
            argv.arg(unit);
        }
        let stdout = match self.run_systemctl(&argv) {
            Ok(out) => out.stdout,
            // Exit 1: none of the units has a file.
            Err(ProviderError::Failed { status: 1, .. }) => Vec::new(),
            Err(e) => return Err(e),
        };
        Ok(String::from_utf8_lossy(&stdout)
            .lines()
            .filter_map(|line| {
                let mut fields = line.split_whitespace();
                Some((fields.next()?.to_owned(), fields.next()?.to_owned()))
            })
            .collect())
    }

    /// `systemctl show --property=PROPERTIES -- UNIT`: its `KEY=VALUE` lines.
    pub(crate) fn systemd_show(
        &self,
        properties: &str,
        unit: &str,
    ) -> Result<String, ProviderError> {
        let mut argv = Argv::new();
        argv.arg("show")
            .arg(format!("--property={properties}"))
            .arg("--")
            .arg(unit);
        let out = self.run_systemctl(&argv)?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// `systemctl daemon-reload`, so a rewritten unit file takes effect. Skipped on a sysroot.
    pub fn systemd_daemon_reload(&self) -> Result<Managed, ProviderError> {
        if !self.root_is_slash() {
            return Ok(Managed::SkippedOnSysroot);
        }
        self.systemctl(&["daemon-reload"])?;
        Ok(Managed::Done)
    }

    /// `systemctl try-reload-or-restart -- UNIT`: a running unit re-reads its files (restarted
    /// when it has no reload); a stopped one stays stopped. Skipped on a sysroot.
    pub fn systemd_reload(&self, unit: &str) -> Result<Managed, ProviderError> {
        if !self.root_is_slash() {
            return Ok(Managed::SkippedOnSysroot);
        }
        self.systemctl(&["try-reload-or-restart", "--", unit])?;
        Ok(Managed::Done)
    }

    /// `systemctl try-restart -- UNIT` (restarts it only if it is running), or
    /// `systemctl restart -- UNIT` with `start` set. Skipped on a sysroot.
    pub fn systemd_restart(&self, unit: &str, start: bool) -> Result<Managed, ProviderError> {
        if !self.root_is_slash() {
            return Ok(Managed::SkippedOnSysroot);
        }
        self.systemctl(&[if start { "restart" } else { "try-restart" }, "--", unit])?;
        Ok(Managed::Done)
    }
}
