//! `userdel`: removes a tenant's system user, and optionally its home and mail spool.
//!
//! No `--force`: it would remove a group that is still another user's primary group and
//! delete a user with running processes; a busy user is a failed, retried operation instead.
//! Exit codes callers rely on: 6 = no such user, 8 = the user has running processes,
//! 12 = the home could not be removed. With USERGROUPS_ENAB (the Debian and CloudLinux
//! default) userdel also removes the group named like the user when it is the user's primary
//! group and has no other members.

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::program::Program;
use crate::provider::Provider;

impl Provider {
    /// `userdel [--prefix ROOT] [--remove] -- NAME`.
    pub fn userdel(&self, name: &str, remove_home: bool) -> Result<(), ProviderError> {
        let argv = self.userdel_argv(name, remove_home);
        self.execute(
            Program::Userdel,
            &argv,
            None,
            Program::Userdel.default_timeout(),
        )?;
        Ok(())
    }

    pub(crate) fn userdel_argv(&self, name: &str, remove_home: bool) -> Argv {
        let mut argv = self.shadow_argv();
        if remove_home {
            argv.arg("--remove");
        }
        argv.arg("--").arg(name);
        argv
    }
}
