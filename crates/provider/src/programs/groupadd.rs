//! `groupadd`: creates a tenant's primary group.
//!
//! Exit codes callers rely on (shadow-utils): 9 = the group already exists, 4 = the gid given
//! with `--gid` already exists, 3 = invalid name or gid.

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::program::Program;
use crate::provider::Provider;

impl Provider {
    /// `groupadd [--prefix ROOT] -- NAME`; the system picks the gid (GID_MIN..GID_MAX).
    pub fn groupadd(&self, name: &str) -> Result<(), ProviderError> {
        let argv = self.groupadd_argv(name);
        self.execute(
            Program::Groupadd,
            &argv,
            None,
            Program::Groupadd.default_timeout(),
        )?;
        Ok(())
    }

    /// `groupadd [--prefix ROOT] --gid GID -- NAME`: a tenant's group with the gid the node
    /// chose (at or above GID_MIN, never one in use: `ops::account` allocates it).
    pub fn groupadd_with_gid(&self, name: &str, gid: u32) -> Result<(), ProviderError> {
        let mut argv = self.shadow_argv();
        argv.arg("--gid").arg(gid.to_string()).arg("--").arg(name);
        self.execute(
            Program::Groupadd,
            &argv,
            None,
            Program::Groupadd.default_timeout(),
        )?;
        Ok(())
    }

    pub(crate) fn groupadd_argv(&self, name: &str) -> Argv {
        let mut argv = self.shadow_argv();
        // `--` so a name can never be read as an option, whatever validated it upstream.
        argv.arg("--").arg(name);
        argv
    }
}

impl Provider {
    /// `groupadd [--prefix ROOT] --system -- NAME`: a system group (gid from the system
    /// range), for the node's own service users.
    pub fn groupadd_system(&self, name: &str) -> Result<(), ProviderError> {
        let mut argv = self.shadow_argv();
        argv.arg("--system").arg("--").arg(name);
        self.execute(
            Program::Groupadd,
            &argv,
            None,
            Program::Groupadd.default_timeout(),
        )?;
        Ok(())
    }
}
