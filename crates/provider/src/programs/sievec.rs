//! `sievec`: Pigeonhole's Sieve compiler. A generated script is compiled (to `NAME.svbin`
//! beside it) before Dovecot can run it, so a script that does not compile fails the
//! operation instead of every delivery to the mailbox.

use std::path::Path;

use crate::error::ProviderError;
use crate::program::Program;
use crate::provider::Provider;

impl Provider {
    /// `sievec [-c FILE] SCRIPT`: compiles `script` (mapped) to `SCRIPT.svbin`. On failure
    /// the error carries the compiler's messages (`line N: error: ...`).
    pub fn sieve_compile(&self, script: &Path) -> Result<(), ProviderError> {
        self.assert_mapped(script);
        let mut argv = self.dovecot_config_argv();
        argv.arg(script);
        self.execute(
            Program::Sievec,
            &argv,
            None,
            Program::Sievec.default_timeout(),
        )?;
        Ok(())
    }
}
