//! dovecot: not configured yet.

use crate::InstallError;
use crate::converge::Engine;

pub fn converge(
    _e: &mut Engine,
    _config: &crate::config::NodeConfig,
    _notes: &mut Vec<String>,
) -> Result<bool, InstallError> {
    Ok(false)
}
