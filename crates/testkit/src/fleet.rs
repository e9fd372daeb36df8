//! A fleet for the tests: the example fleet whose key signs the declarations' example
//! assignment, the identity `layerone join` would pin on a node, assignments signed as the
//! fleet signs them, and the programs each module needs, put into a Sim sysroot.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use declarations::assignment::{EXAMPLE_FLEET_KEY, EXAMPLE_NODE, IDENTITY_PATH, signed_bytes};
use provider::{CONFIG_MODE, PostfixTool, Program, Provider, ProviderError};
use registry::Module;
use registry::types::NodeName;

/// The example fleet's seed: a key for tests only, whose public key is
/// [`EXAMPLE_FLEET_KEY`]. It signed the declarations' example assignment.
pub const EXAMPLE_FLEET_SEED: &str = "SAAOSRTHY4HZXG4EB742DYIM3QQYUOLSH6DEBKKAYEQKI4QTS4BWVZ6TSU";

/// The example fleet's key pair.
pub fn example_fleet() -> nkeys::KeyPair {
    nkeys::KeyPair::from_seed(EXAMPLE_FLEET_SEED).expect("the example seed is an nkeys seed")
}

/// Pins a fleet identity on the node, as `layerone join` writes it: the node's name, the
/// fleet's public key, and fields root does not read (the brokers).
pub fn write_fleet_identity(
    provider: &Provider,
    node: &str,
    fleet_key: &str,
) -> Result<(), ProviderError> {
    let path = provider.sysconf(IDENTITY_PATH);
    if let Some(parent) = path.parent() {
        provider.ensure_dir(parent, 0o755)?;
    }
    let identity = format!(
        "{{\"node\": {node:?}, \"fleet_key\": {fleet_key:?}, \"brokers\": [\"tls://127.0.0.1:4222\"], \"joined_at\": 1760000000}}\n"
    );
    provider.write_config_atomic(&path, identity.as_bytes(), CONFIG_MODE)
}

/// Pins the example fleet's identity (node [`EXAMPLE_NODE`]), so the example assignment
/// applies.
pub fn seed_example_fleet(provider: &Provider) -> Result<(), ProviderError> {
    write_fleet_identity(provider, EXAMPLE_NODE, EXAMPLE_FLEET_KEY)
}

/// `fleet`'s signature of `node`'s assignment `generation` of `modules`, as the fleet sends it.
pub fn sign_assignment(
    fleet: &nkeys::KeyPair,
    node: &str,
    generation: u64,
    modules: &[Module],
) -> String {
    let node: NodeName = node.parse().expect("a valid node name");
    let signature = fleet
        .sign(&signed_bytes(&node, generation, modules))
        .expect("a key pair with its seed signs");
    URL_SAFE_NO_PAD.encode(signature)
}

/// Puts into the sysroot what the `web` and `mail` modules need to be ready (Apache's control
/// program, Postfix and Dovecot), as empty files where the Sim looks for the machine's
/// programs; `php` needs [`crate::seed_php`], `mysql` is the Sim's model.
pub fn seed_module_programs(provider: &Provider) -> Result<(), ProviderError> {
    for program in [
        Program::ApacheCtl,
        Program::Postfix(PostfixTool::Postfix),
        Program::Doveconf,
    ] {
        let path = provider.sysconf(
            program
                .path(provider.platform())
                .expect("every platform has these programs"),
        );
        if let Some(parent) = path.parent() {
            provider.ensure_dir(parent, 0o755)?;
        }
        provider.write_config_atomic(&path, b"", 0o755)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_seed_is_the_example_fleet_key() {
        assert_eq!(example_fleet().public_key(), EXAMPLE_FLEET_KEY);
    }
}
