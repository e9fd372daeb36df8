//! The `assignment` family's declarations (node scope): which modules the fleet has this node
//! run. The fleet signs the assignment with its key (an nkeys account key pair, Ed25519); it
//! reaches root through the inbox as `apply_assignment`, which checks the signature against
//! the fleet key pinned on the node when it joined, records the assignment and reports
//! whether each assigned module can run here. Once a node has an assignment, a job of a
//! module it is not assigned fails `module_not_assigned`, and one of an assigned module that
//! cannot run fails `module_unavailable` with the reason; a node with none (outside any fleet)
//! runs every module.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::assignment`.

use registry::Module;
use registry::types::{AssignmentGeneration, Hex32, NodeName};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::declare::{family, impl_resource, operation};
use crate::example;

family! { pub struct Assignment { name: "assignment", module: Core } }

/// Where `layerone join` pins the node's fleet identity (root's, 0644): a JSON object whose
/// `node` is the node's name in its fleet and `fleet_key` the fleet's public key (an nkeys
/// account key, `A...`), among fields of the joining side's that readers ignore.
pub const IDENTITY_PATH: &str = "/etc/layerone/fleet/identity.json";

/// What the fleet's key signs, version 1: `layerone-assignment:v1`, the node's name, the
/// generation in decimal and the modules (their names, sorted and de-duplicated, joined by
/// `,`), each on a line of its own, with no newline at the end.
pub const SIGNED_PREFIX: &str = "layerone-assignment:v1";

/// The bytes the fleet signs for `node`'s assignment `generation` of `modules`: the one
/// definition of the signed message (see [`SIGNED_PREFIX`]).
pub fn signed_bytes(node: &NodeName, generation: u64, modules: &[Module]) -> Vec<u8> {
    let mut names: Vec<&str> = modules.iter().map(|m| m.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    format!(
        "{SIGNED_PREFIX}\n{node}\n{generation}\n{}",
        names.join(",")
    )
    .into_bytes()
}

/// Apply the fleet's assignment of modules to this node.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyAssignmentRequest {
    /// This node's id. A node has one assignment: once one is applied, every later request
    /// names the same id.
    pub id: Hex32,
    /// The node's name in its fleet: the name pinned in its fleet identity, or the request is
    /// refused (`wrong_fleet_node`).
    pub node: NodeName,
    /// Raised by the fleet on every change: a generation older than the one applied is
    /// refused (`stale_generation`), and so is the same generation with other modules.
    pub generation: AssignmentGeneration,
    /// The modules the node runs; `core` runs whether it is listed or not. The order and
    /// repetitions do not matter: the signature covers the names sorted and de-duplicated.
    pub modules: Vec<Module>,
    /// The fleet key's Ed25519 signature of the assignment (see [`signed_bytes`]), in
    /// base64url without padding.
    #[schemars(pattern("^[A-Za-z0-9_-]{86}$"))]
    pub signature: String,
}

impl ApplyAssignmentRequest {
    /// What the fleet's key signed for this request ([`signed_bytes`]).
    pub fn signed_bytes(&self) -> Vec<u8> {
        signed_bytes(&self.node, self.generation.get(), &self.modules)
    }
}

impl_resource!(owner = node: ApplyAssignmentRequest);

/// One assigned module and whether it can run on this node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModuleStatus {
    pub module: Module,
    /// Whether what the module needs is on this node; its operations fail
    /// `module_unavailable` while it is not.
    pub ready: bool,
    /// What is missing, in words; `null` when ready.
    pub reason: Option<String>,
}

/// The assignment as the node now applies it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssignmentResult {
    pub node: NodeName,
    /// The generation now in effect.
    pub generation: u64,
    /// Every assigned module, `core` included, in the order of the module list.
    pub modules: Vec<ModuleStatus>,
}

/// The example assignment's id byte: a node has one assignment, and every request names it.
const ASSIGNMENT: u8 = 0xf1;

/// The example fleet's public key (an nkeys account key), which the example node pinned
/// when it joined; the example is signed by its seed (the test support's example fleet).
pub const EXAMPLE_FLEET_KEY: &str = "AAS47JTHRFH7T6F7YCSATY2B2UD6I6JZ6QAJTF4BFKC42LFNEKMXN6LC";

/// The example node's name in its fleet.
pub const EXAMPLE_NODE: &str = "web-1";

/// The example fleet key's signature of the example: generation 1, every module.
const EXAMPLE_SIGNATURE: &str =
    "o9o7lhlBEDVqdJajgdO_IC_j4taUaz7kR2pvPaPCqD7bcZetkgwYxAuPk4e7tYOjsKkykaKXblqZyhBOt-ECAQ";

operation! {
    pub struct ApplyAssignment {
        name: "apply_assignment",
        kind: Declare,
        scope: Node,
        family: Assignment,
        summary: "Run the modules the fleet assigned to this node (signed by the fleet's key, monotonic generation) and report whether each can run here",
        request: ApplyAssignmentRequest,
        result: AssignmentResult,
        generation: generation,
        example: ApplyAssignmentRequest {
            id: example::id(ASSIGNMENT),
            node: example::parse(EXAMPLE_NODE),
            generation: example::number(1),
            modules: Module::ALL.to_vec(),
            signature: EXAMPLE_SIGNATURE.to_owned(),
        },
    }
}
