//! `groupdel`: removes a tenant's group.
//!
//! Exit codes callers rely on: 6 = no such group (note that `userdel` already removes a
//! user's same-named primary group when USERGROUPS_ENAB is on), 8 = it is still some user's
//! primary group.

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::program::Program;
use crate::provider::Provider;

impl Provider {
    /// `groupdel [--prefix ROOT] -- NAME`.
    pub fn groupdel(&self, name: &str) -> Result<(), ProviderError> {
        let argv = self.groupdel_argv(name);
        self.execute(
            Program::Groupdel,
            &argv,
            None,
            Program::Groupdel.default_timeout(),
        )?;
        Ok(())
    }

    pub(crate) fn groupdel_argv(&self, name: &str) -> Argv {
        let mut argv = self.shadow_argv();
        argv.arg("--").arg(name);
        argv
    }
}
