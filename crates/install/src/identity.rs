//! `/etc/layerone/identity.md`: who the node is, a derived file of its configuration (its
//! name, id and platform profile, and how it presents itself to an operator's MCP session).
//! Written whole by every install like the environment file: an edited copy is moved to the
//! override area with a note and the derived one put back. World-readable, so `layerone mcp`,
//! which runs as an operator, hands it to the session as the start of its instructions, after
//! checking that it names the node the API says it is.

use crate::config::NodeConfig;

/// The text of the identity file.
pub fn render(config: &NodeConfig) -> String {
    let name = config.name.as_str();
    let platform = config.platform.as_str();
    format!(
        "# layerone node {name}\n\n\
         - Name: {name}\n\
         - Node id: {id}\n\
         - Platform: {platform}\n\n\
         This is the layerone node agent of {name}, a Linux web-hosting server on the \
         {platform} profile. It keeps accounts, web domains, PHP, MariaDB databases, mail, \
         certificates and backups as its tenants' control plane declared them, and changes \
         the server only through its declared operations, each checked, run by root through \
         the node's own audited programs, and recorded.\n",
        id = config.node_id,
    )
}
