//! `nats-server -t -c CONF`: the fleet broker's configuration test, run before the broker is
//! told to reload a configuration the fleet derived (`layerone fleet serve`).

use std::path::Path;

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::program::Program;
use crate::provider::Provider;

impl Provider {
    /// Checks a broker configuration without starting a broker. A refused one is
    /// `ProviderError::Failed` with the broker's words.
    pub fn check_broker_config(&self, conf: &Path) -> Result<(), ProviderError> {
        let mut argv = Argv::new();
        argv.arg("-t").arg("-c").arg(conf.as_os_str());
        self.execute(
            Program::NatsServer,
            &argv,
            None,
            Program::NatsServer.default_timeout(),
        )?;
        Ok(())
    }
}
