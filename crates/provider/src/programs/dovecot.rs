//! `doveconf -n` and `doveadm`: Dovecot's configuration test, its reload, and an
//! authentication test against the running auth service (tests and diagnostics).
//!
//! With a sysroot every command gets `-c <sysroot>/etc/dovecot/dovecot.conf`.

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::program::Program;
use crate::provider::Provider;

impl Provider {
    /// `doveconf [-c FILE] -n`: the configuration parses and its settings are valid.
    pub fn doveconf_check(&self) -> Result<(), ProviderError> {
        let mut argv = self.dovecot_config_argv();
        argv.arg("-n");
        self.execute(
            Program::Doveconf,
            &argv,
            None,
            Program::Doveconf.default_timeout(),
        )?;
        Ok(())
    }

    /// `doveadm [-c FILE] reload`: the master process rereads its configuration; the
    /// passwd-file itself is reread by the auth process whenever it changes.
    pub fn dovecot_reload(&self) -> Result<(), ProviderError> {
        let mut argv = self.dovecot_config_argv();
        argv.arg("reload");
        self.execute(
            Program::Doveadm,
            &argv,
            None,
            Program::Doveadm.default_timeout(),
        )?;
        Ok(())
    }

    /// `doveadm [-c FILE] auth test USER PASSWORD`: whether the running auth service accepts
    /// the password (exit 77 is a refusal). The password is redacted in the audit log.
    pub fn doveadm_auth_test(&self, user: &str, password: &str) -> Result<bool, ProviderError> {
        let mut argv = self.dovecot_config_argv();
        argv.arg("auth").arg("test").arg(user).secret(password);
        match self.execute(
            Program::Doveadm,
            &argv,
            None,
            Program::Doveadm.default_timeout(),
        ) {
            Ok(_) => Ok(true),
            Err(ProviderError::Failed { status: 77, .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    pub(crate) fn dovecot_config_argv(&self) -> Argv {
        let mut argv = Argv::new();
        if !self.root_is_slash() {
            argv.arg("-c")
                .arg(self.sysconf(self.mail_layout().dovecot_config));
        }
        argv
    }
}
