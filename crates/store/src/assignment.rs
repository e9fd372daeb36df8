//! The node's assignment as state.db keeps it, and the one decision taken from it.
//!
//! `apply_assignment` (`crates/ops/src/assignment.rs`) records the fleet's signed assignment
//! as the `assignment` family's one row, owner `node:`, with whether each assigned module
//! could run when it was applied. Two sides read it: the runner, before it hands a job to its
//! handler (through the handlers' view), and the API, before it admits a request
//! ([`crate::StateReader::assigned_modules`]); both decide with [`admits`], so a refused
//! request reads the same wherever it is refused.

use registry::types::NodeName;
use registry::{Module, OpError};
use serde::{Deserialize, Serialize};

use crate::StoredRow;

/// The family's name, as `declarations::assignment::Assignment` declares it (the handlers'
/// test holds the two together).
pub const FAMILY: &str = "assignment";

/// The assignment in effect: the fleet's name for the node, the generation applied, and every
/// assigned module (`core` included) with whether it could run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssignmentRow {
    pub node: NodeName,
    pub generation: u64,
    pub modules: Vec<AssignedModule>,
}

impl StoredRow for AssignmentRow {
    const FAMILY: &'static str = FAMILY;
}

/// One assigned module, as found when the assignment was applied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssignedModule {
    pub module: Module,
    /// Whether what the module needs was on the node.
    pub ready: bool,
    /// What was missing, in words; `None` when ready.
    pub reason: Option<String>,
}

/// Whether a job of `module` may run, given the node's assigned modules (`None`: the node
/// has no assignment, it is outside any fleet, and runs every module). `core` always runs.
/// Otherwise a module that is not assigned is refused `module_not_assigned`, and an assigned
/// one that was not ready `module_unavailable` with the reason; both permanent, naming the
/// module.
pub fn admits(assigned: Option<&[AssignedModule]>, module: Module) -> Result<(), OpError> {
    let Some(assigned) = assigned else {
        return Ok(());
    };
    if module == Module::Core {
        return Ok(());
    }
    match assigned.iter().find(|a| a.module == module) {
        None => {
            let names: Vec<&str> = assigned.iter().map(|a| a.module.as_str()).collect();
            Err(OpError::permanent(
                "module_not_assigned",
                format!(
                    "this node is not assigned the {} module (its fleet assigned: {})",
                    module.as_str(),
                    names.join(", ")
                ),
            ))
        }
        Some(found) if !found.ready => Err(OpError::permanent(
            "module_unavailable",
            format!(
                "the {} module cannot run on this node: {}",
                module.as_str(),
                found.reason.as_deref().unwrap_or("it was not ready")
            ),
        )),
        Some(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assigned(module: Module, ready: bool, reason: Option<&str>) -> AssignedModule {
        AssignedModule {
            module,
            ready,
            reason: reason.map(str::to_owned),
        }
    }

    #[test]
    fn only_an_assignment_refuses_and_core_always_runs() {
        for module in Module::ALL {
            assert!(
                admits(None, module).is_ok(),
                "outside a fleet {module:?} runs"
            );
        }
        let modules = [
            assigned(Module::Core, true, None),
            assigned(Module::Mail, false, Some("postfix is not installed")),
            assigned(Module::Web, true, None),
        ];
        assert!(admits(Some(&modules), Module::Core).is_ok());
        assert!(admits(Some(&[]), Module::Core).is_ok());
        assert!(admits(Some(&modules), Module::Web).is_ok());
        let refused = admits(Some(&modules), Module::Mysql).unwrap_err();
        assert_eq!(refused.code, "module_not_assigned");
        assert!(refused.message.contains("mysql"), "{}", refused.message);
        let unavailable = admits(Some(&modules), Module::Mail).unwrap_err();
        assert_eq!(unavailable.code, "module_unavailable");
        assert!(
            unavailable.message.contains("mail") && unavailable.message.contains("postfix"),
            "{}",
            unavailable.message
        );
        assert!(!refused.retryable && !unavailable.retryable);
    }
}
