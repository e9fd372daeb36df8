//! The `assignment` family (node scope, docs/design.md section 10): which modules the fleet has
//! this node run, and whether each of them can run here.
//!
//! `apply_assignment` trusts nothing but the fleet identity root keeps on the node
//! (`/etc/layerone/fleet/identity.json`, written by `layerone join`): the request must name
//! the node it pins (`wrong_fleet_node`) and carry the signature of the fleet key it pins over
//! [`signed_bytes`] (`invalid_signature`); a node with no identity is in no fleet and takes no
//! assignment (`not_in_fleet`). The generation only moves forward (`stale_generation`; the
//! same generation again, with the same modules, checks the modules' readiness anew). A
//! module the assignment takes away while the node still holds resources of its families is
//! refused, with the counts (`module_in_use`), and nothing changes: the control plane moves or
//! removes them first. A node without an assignment runs every module, so its first
//! assignment takes away every module it leaves out.
//!
//! What each module needs is looked at through the provider when the assignment is applied,
//! and recorded with it (`store::AssignmentRow`, the shape the API reads too): `web` Apache's
//! control program, `php` at least one PHP-FPM version, `mysql` MariaDB answering on its
//! socket, `mail` Postfix and Dovecot; `core`, `tls` and `backup` need nothing more. The
//! runner refuses the jobs of a module not assigned or not ready before their handlers run
//! ([`admits`]).
//!
//! Purge: the assignment belongs to the node, never to a tenant, so a tenant's purge leaves it
//! alone. It derives no file: it is the fleet's decision, recorded.

pub use declarations::assignment::*;
pub use store::assignment::{AssignedModule, AssignmentRow};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use nkeys::{KeyPair, KeyPairType};
use provider::{PostfixTool, Program, Provider};
use registry::types::{Hex32, NodeName};
use registry::{Apply, Derive, Derived, Module, OpError, Owner, Purge, RowType};
use serde::Deserialize;
use state::Stored;

use crate::context::{Ctx, provider_error, store_error};

crash::points! {}

/// The part of the fleet identity root relies on. The file holds more (the brokers, what the
/// daemon needs) and may gain fields: they are not root's, so they are not refused.
#[derive(Debug, Deserialize)]
struct FleetIdentity {
    /// The node's name in its fleet.
    node: NodeName,
    /// The fleet's signing key: an nkeys account public key (`A...`).
    fleet_key: String,
}

impl Purge<Ctx> for Assignment {
    const ROW: Option<RowType> = Some(store::row_type::<AssignmentRow>());

    /// Nothing of a tenant's: the assignment is the node's (owner `node:`).
    fn purge(_: &mut Ctx, _: &Hex32) -> Result<(), OpError> {
        Ok(())
    }
}

impl Derive<Ctx> for Assignment {
    /// Nothing: the assignment is recorded, and no file is derived from it.
    fn derive(_: &Ctx) -> Result<Vec<Derived>, OpError> {
        Ok(Vec::new())
    }
}

impl Apply<Ctx> for ApplyAssignment {
    fn apply(ctx: &mut Ctx, req: &ApplyAssignmentRequest) -> Result<AssignmentResult, OpError> {
        let identity = read_identity(&ctx.provider)?;
        if req.node != identity.node {
            return Err(OpError::permanent(
                "wrong_fleet_node",
                format!(
                    "this assignment is for {}, and this node is {} in its fleet",
                    req.node, identity.node
                ),
            ));
        }
        verify(&identity, req)?;
        let current = current(ctx)?;
        let modules = assigned(&req.modules);
        if let Some(current) = &current {
            check_generation(current, req, &modules)?;
        }
        let before: Vec<Module> = match &current {
            Some(current) => current.row.modules.iter().map(|m| m.module).collect(),
            None => Module::ALL.to_vec(),
        };
        check_not_in_use(ctx, &before, &modules)?;
        let statuses: Vec<AssignedModule> = modules
            .iter()
            .map(|&module| {
                let reason = missing(&ctx.provider, module);
                AssignedModule {
                    module,
                    ready: reason.is_none(),
                    reason,
                }
            })
            .collect();
        ctx.set_row(&AssignmentRow {
            node: req.node.clone(),
            generation: req.generation.get(),
            modules: statuses.clone(),
        });
        Ok(AssignmentResult {
            node: req.node.clone(),
            generation: req.generation.get(),
            modules: statuses
                .into_iter()
                .map(|m| ModuleStatus {
                    module: m.module,
                    ready: m.ready,
                    reason: m.reason,
                })
                .collect(),
        })
    }
}

/// Whether a job of `module` may run on this node, as its assignment says
/// (`store::assignment::admits`): what the runner asks before it hands a job to its handler.
/// A `core` job is never refused, so it reads nothing.
pub fn admits(ctx: &Ctx, module: Module) -> Result<(), OpError> {
    if module == Module::Core {
        return Ok(());
    }
    let rows = ctx
        .view()
        .of_owner::<AssignmentRow>(&Owner::Node)
        .map_err(store_error)?;
    store::assignment::admits(rows.first().map(|r| r.row.modules.as_slice()), module)
}

fn read_identity(provider: &Provider) -> Result<FleetIdentity, OpError> {
    let path = provider.sysconf(IDENTITY_PATH);
    let bytes = provider
        .read_config(&path)
        .map_err(provider_error)?
        .ok_or_else(|| {
            OpError::permanent(
                "not_in_fleet",
                format!("this node has joined no fleet: {IDENTITY_PATH} does not exist"),
            )
        })?;
    serde_json::from_slice(&bytes).map_err(|e| {
        OpError::permanent(
            "fleet_identity_invalid",
            format!("{IDENTITY_PATH} is not a fleet identity: {e}"),
        )
    })
}

/// The request's signature is the pinned fleet key's over what it assigns.
fn verify(identity: &FleetIdentity, req: &ApplyAssignmentRequest) -> Result<(), OpError> {
    let key = KeyPair::from_public_key(&identity.fleet_key)
        .ok()
        .filter(|key| key.key_pair_type() == KeyPairType::Account)
        .ok_or_else(|| {
            OpError::permanent(
                "fleet_identity_invalid",
                format!("the fleet key in {IDENTITY_PATH} is not an nkeys account public key"),
            )
        })?;
    let invalid = || {
        OpError::permanent(
            "invalid_signature",
            format!(
                "the signature of generation {} for {} is not the fleet key's",
                req.generation.get(),
                req.node
            ),
        )
    };
    let signature = URL_SAFE_NO_PAD
        .decode(&req.signature)
        .map_err(|_| invalid())?;
    key.verify(&req.signed_bytes(), &signature)
        .map_err(|_| invalid())
}

/// The node's assignment in effect, if it has one.
fn current(ctx: &Ctx) -> Result<Option<Stored<AssignmentRow>>, OpError> {
    Ok(ctx
        .view()
        .of_owner::<AssignmentRow>(&Owner::Node)
        .map_err(store_error)?
        .into_iter()
        .next())
}

/// The modules a request assigns, in the order of [`Module::ALL`], `core` always among them.
fn assigned(requested: &[Module]) -> Vec<Module> {
    Module::ALL
        .into_iter()
        .filter(|m| *m == Module::Core || requested.contains(m))
        .collect()
}

/// Refuses a request for another assignment than the node's, or one older than it; the same
/// generation may come again only with the same modules.
fn check_generation(
    current: &Stored<AssignmentRow>,
    req: &ApplyAssignmentRequest,
    modules: &[Module],
) -> Result<(), OpError> {
    if current.id != req.id {
        return Err(OpError::permanent(
            "assignment_id_mismatch",
            format!(
                "this node's assignment is {}; requests must name it",
                current.id
            ),
        ));
    }
    let applied = current.row.generation;
    let generation = req.generation.get();
    if generation < applied {
        return Err(OpError::permanent(
            "stale_generation",
            format!("generation {generation} is older than the applied generation {applied}"),
        ));
    }
    let same: Vec<Module> = current.row.modules.iter().map(|m| m.module).collect();
    if generation == applied && same != modules {
        return Err(OpError::permanent(
            "stale_generation",
            format!("generation {generation} is already applied, with other modules"),
        ));
    }
    Ok(())
}

/// Refuses to take away a module whose families still hold resources on the node, naming
/// how many of each.
fn check_not_in_use(ctx: &Ctx, before: &[Module], after: &[Module]) -> Result<(), OpError> {
    let registry = declarations::registry();
    let mut in_use = Vec::new();
    for module in before.iter().filter(|m| !after.contains(m)) {
        let mut counts = Vec::new();
        for family in registry.families().iter().filter(|f| f.module == *module) {
            let held = ctx
                .view()
                .ids_of_family(family.name)
                .map_err(store_error)?
                .len();
            if held > 0 {
                counts.push(format!("{held} {}", family.name));
            }
        }
        if !counts.is_empty() {
            in_use.push(format!("{}: {}", module.as_str(), counts.join(", ")));
        }
    }
    if in_use.is_empty() {
        return Ok(());
    }
    Err(OpError::permanent(
        "module_in_use",
        format!(
            "the modules this assignment takes away still hold resources on this node ({}); \
             remove them first",
            in_use.join("; ")
        ),
    ))
}

/// What `module` needs that this node lacks, in words; `None` when it can run.
fn missing(provider: &Provider, module: Module) -> Option<String> {
    let absent = |name: &str, program: Program| {
        (!provider.program_installed(program)).then(|| {
            let path = provider
                .program_path(program)
                .map_or_else(|| "nothing".to_owned(), |p| p.display().to_string());
            format!("{name} is not installed (no {path})")
        })
    };
    match module {
        Module::Core | Module::Tls | Module::Backup => None,
        Module::Web => absent("Apache", Program::ApacheCtl),
        Module::Php => provider
            .php_installed_versions()
            .is_empty()
            .then(|| "no PHP-FPM version is installed".to_owned()),
        Module::Mysql => provider
            .mariadb()
            .err()
            .map(|e| format!("MariaDB does not answer: {e}")),
        Module::Mail => {
            let gaps: Vec<String> = [
                absent("Postfix", Program::Postfix(PostfixTool::Postfix)),
                absent("Dovecot", Program::Doveconf),
            ]
            .into_iter()
            .flatten()
            .collect();
            (!gaps.is_empty()).then(|| gaps.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use registry::{Family, Operation};

    #[test]
    fn the_stored_row_is_the_familys() {
        assert_eq!(
            <AssignmentRow as store::StoredRow>::FAMILY,
            Assignment::NAME
        );
    }

    #[test]
    fn the_example_is_signed_by_the_example_fleet_key() {
        let example = ApplyAssignment::example();
        let key = KeyPair::from_public_key(EXAMPLE_FLEET_KEY).unwrap();
        assert_eq!(key.key_pair_type(), KeyPairType::Account);
        let signature = URL_SAFE_NO_PAD.decode(&example.signature).unwrap();
        key.verify(&example.signed_bytes(), &signature)
            .expect("the example's signature verifies");
        assert_eq!(example.node.as_str(), EXAMPLE_NODE);
    }

    #[test]
    fn the_signed_bytes_sort_and_deduplicate_the_modules() {
        let node: NodeName = "web-1".parse().unwrap();
        let bytes = signed_bytes(&node, 7, &[Module::Web, Module::Core, Module::Web, Module::Backup]);
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            "layerone-assignment:v1\nweb-1\n7\nbackup,core,web"
        );
        assert_eq!(
            String::from_utf8(signed_bytes(&node, 1, &[])).unwrap(),
            "layerone-assignment:v1\nweb-1\n1\n"
        );
    }

    #[test]
    fn core_is_always_assigned_in_the_module_order() {
        assert_eq!(
            assigned(&[Module::Mail, Module::Web, Module::Mail]),
            [Module::Core, Module::Web, Module::Mail]
        );
        assert_eq!(assigned(&[]), [Module::Core]);
    }
}
