//! `crontab`: a tenant's scheduled tasks, installed whole through the system's own installer.
//!
//! The node writes the complete crontab of a user to a root-only staging file
//! (`/var/lib/layerone/crontabs/USER`, mapped with `sysconf`), checks it with the installer's
//! dry run, then installs it with `crontab -u USER FILE`. Going through `crontab` rather than
//! writing the spool file ourselves keeps the spool's ownership, mode and the daemon's change
//! notification the cron package's business (Debian's spool is `crontab`-group 1730, cronie's
//! is root 0700), and the installer refuses a file with a bad line and keeps the old one.
//!
//! Command forms:
//! - check: `crontab -n FILE` (Debian's cron 3.0pl1-162+: "dry run: checks the syntax, then
//!   bails out"); `crontab -T FILE` on CloudLinux (cronie: "test the crontab file syntax");
//! - install: `crontab -u USER FILE`;
//! - remove: `crontab -u USER -r` ("no crontab for USER" is already-absent, not a failure).

use std::path::PathBuf;

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::platform::Platform;
use crate::program::Program;
use crate::provider::Provider;

/// Where the node stages each user's crontab before installing it (a system path).
pub const CRONTAB_STAGING_DIR: &str = "/var/lib/layerone/crontabs";

/// The spool the installed crontabs end up in (a system path). Only Sim writes it itself.
pub fn crontab_spool(platform: Platform) -> &'static str {
    match platform {
        Platform::Debian => "/var/spool/cron/crontabs",
        Platform::CloudLinux => "/var/spool/cron",
    }
}

impl Provider {
    /// The mapped staging file of `user`'s crontab.
    pub fn crontab_staging(&self, user: &str) -> PathBuf {
        self.sysconf(CRONTAB_STAGING_DIR).join(user)
    }

    /// Checks `content` with the installer's dry run, then installs it as `user`'s whole
    /// crontab. A file the check refuses is never installed: the user keeps the old crontab.
    /// `user` must be a name the caller validated (a tenant's username).
    pub fn install_crontab(&self, user: &str, content: &[u8]) -> Result<(), ProviderError> {
        let staging = self.crontab_staging(user);
        self.ensure_dir(&self.sysconf(CRONTAB_STAGING_DIR), 0o700)?;
        self.write_config_atomic(&staging, content, 0o600)?;
        self.check_crontab_file(&staging)?;
        let mut argv = Argv::new();
        argv.arg("-u").arg(user).arg(&staging);
        self.execute(
            Program::Crontab,
            &argv,
            None,
            Program::Crontab.default_timeout(),
        )?;
        Ok(())
    }

    /// The installer's syntax check of a crontab file (see the module doc for each form).
    pub fn check_crontab_file(&self, file: &std::path::Path) -> Result<(), ProviderError> {
        let mut argv = Argv::new();
        match self.platform {
            Platform::Debian => argv.arg("-n"),
            Platform::CloudLinux => argv.arg("-T"),
        };
        argv.arg(file);
        self.execute(
            Program::Crontab,
            &argv,
            None,
            Program::Crontab.default_timeout(),
        )?;
        Ok(())
    }

    /// Removes `user`'s crontab and the staging copy; already absent is success.
    pub fn remove_crontab(&self, user: &str) -> Result<(), ProviderError> {
        let mut argv = Argv::new();
        argv.arg("-u").arg(user).arg("-r");
        match self.execute(
            Program::Crontab,
            &argv,
            None,
            Program::Crontab.default_timeout(),
        ) {
            Ok(_) => {}
            Err(ProviderError::Failed { ref stderr, .. }) if stderr.contains("no crontab for") => {}
            Err(e) => return Err(e),
        }
        self.remove_config(&self.crontab_staging(user))
    }
}
