//! The handler table: how each declared operation is applied and each declared family purged,
//! in one context `C` (the node's is `ops::Ctx`).
//!
//! The table is apart from the [`Registry`] so that the unprivileged side (the API, clients)
//! links the declarations without the handlers. It is built by type like the registry
//! ([`HandlersBuilder::op`]), which takes an operation only if it has an [`Apply`] in `C` and
//! its family a [`Purge`] and a [`Derive`] in `C`: a family without a purge hook, or without
//! a derive hook saying what it derives, does not compile into a table.
//! [`Handlers::check`] holds the table to the declarations: the same operations, with the same
//! families, in the same order (so the purge sweep's order is the declarations' order). The
//! node's start-up and its unit tests run it.

use serde_json::Value;

use crate::declare::{Apply, Family, FieldOwners, Kind, Purge, RowType};
use crate::derive::{Derive, Derived};
use crate::envelope::from_value;
use crate::error::OpError;
use crate::registry::{Registry, RegistryError};
use crate::types::Hex32;

/// How one operation is applied: the request parsed again from its JSON (root re-checks what
/// it reads back from SQLite), the handler run, its result serialized.
pub struct OperationHandler<C> {
    pub name: &'static str,
    pub family: &'static str,
    /// The operation's declared [`Kind`]: what a rebuild replays, where it starts.
    pub kind: Kind,
    apply: fn(&mut C, Value) -> Result<Value, OpError>,
}

impl<C> OperationHandler<C> {
    /// Parses `resource` into the operation's typed request and applies it.
    pub fn apply(&self, ctx: &mut C, resource: Value) -> Result<Value, OpError> {
        (self.apply)(ctx, resource)
    }
}

/// A family as the purge sweep and the drift check see it.
pub struct FamilyHandler<C> {
    pub name: &'static str,
    pub purge: fn(&mut C, &Hex32) -> Result<(), OpError>,
    /// Its stored row type, for a family that keeps rows ([`Purge::ROW`]).
    pub row: Option<RowType>,
    /// What the family derives now, with what is there ([`Derive`]).
    pub derive: fn(&C) -> Result<Vec<Derived>, OpError>,
}

fn apply_typed<C, O: Apply<C>>(ctx: &mut C, resource: Value) -> Result<Value, OpError> {
    let request: O::Request = from_value(resource, "resource")?;
    let result = O::apply(ctx, &request)?;
    serde_json::to_value(&result).map_err(|e| {
        OpError::permanent(
            "invalid_result",
            format!("the result does not serialize: {e}"),
        )
    })
}

/// The handlers of a list of operations, and the purge and derive hooks of their families.
pub struct Handlers<C: 'static> {
    ops: Vec<OperationHandler<C>>,
    families: Vec<FamilyHandler<C>>,
    family_types: Vec<std::any::TypeId>,
}

pub struct HandlersBuilder<C: 'static> {
    handlers: Handlers<C>,
}

impl<C: 'static> HandlersBuilder<C> {
    /// Adds an operation's handler, and its family's purge and derive hooks if this is the
    /// family's first operation.
    pub fn op<O>(mut self) -> Self
    where
        O: Apply<C>,
        O::Family: Purge<C> + Derive<C>,
    {
        let family_type = std::any::TypeId::of::<O::Family>();
        if !self.handlers.family_types.contains(&family_type) {
            self.handlers.family_types.push(family_type);
            self.handlers.families.push(FamilyHandler {
                name: <O::Family as Family>::NAME,
                purge: <O::Family as Purge<C>>::purge,
                row: <O::Family as Purge<C>>::ROW,
                derive: <O::Family as Derive<C>>::derive,
            });
        }
        self.handlers.ops.push(OperationHandler {
            name: O::NAME,
            family: <O::Family as Family>::NAME,
            kind: O::KIND,
            apply: apply_typed::<C, O>,
        });
        self
    }

    pub fn build(self) -> Handlers<C> {
        self.handlers
    }
}

impl<C: 'static> Handlers<C> {
    pub fn builder() -> HandlersBuilder<C> {
        HandlersBuilder {
            handlers: Handlers {
                ops: Vec::new(),
                families: Vec::new(),
                family_types: Vec::new(),
            },
        }
    }

    pub fn operations(&self) -> impl Iterator<Item = &OperationHandler<C>> {
        self.ops.iter()
    }

    pub fn operation(&self, name: &str) -> Option<&OperationHandler<C>> {
        self.ops.iter().find(|op| op.name == name)
    }

    /// Families in the order of their first operation: the declarations' order once
    /// [`Handlers::check`] passed. The purge sweep runs them in reverse; the drift check in
    /// this order.
    pub fn families(&self) -> &[FamilyHandler<C>] {
        &self.families
    }

    pub fn family(&self, name: &str) -> Option<&FamilyHandler<C>> {
        self.families.iter().find(|f| f.name == name)
    }

    /// The families that keep rows, each with its stored row type.
    pub fn stored_rows(&self) -> impl Iterator<Item = (&'static str, RowType)> + '_ {
        self.families
            .iter()
            .filter_map(|f| f.row.map(|row| (f.name, row)))
    }

    /// Which operations own each field of `family`'s stored rows besides its declaring
    /// operation; empty for a family whose every field is the declaring operation's, or that
    /// keeps no row.
    pub fn field_owners(&self, family: &str) -> FieldOwners {
        self.family(family)
            .and_then(|f| f.row)
            .map_or(&[], |row| row.field_owners)
    }

    /// The table covers exactly the declared operations: none missing, none extra, each with
    /// its declared family, in the declared order (so the families, and the purge sweep, are
    /// in the declared order too); a family keeps rows of its own type exactly when it has a
    /// declaring operation.
    pub fn check(&self, registry: &Registry) -> Result<(), RegistryError> {
        for declared in registry.operations() {
            if self.operation(declared.name()).is_none() {
                return Err(RegistryError::UnhandledOperation(declared.name()));
            }
        }
        for handler in &self.ops {
            if registry.operation(handler.name).is_none() {
                return Err(RegistryError::UndeclaredHandler(handler.name));
            }
        }
        for (declared, handler) in registry.operations().zip(&self.ops) {
            if declared.name() != handler.name {
                return Err(RegistryError::HandlerOrder {
                    declared: declared.name(),
                    handler: handler.name,
                });
            }
            if declared.family() != handler.family {
                return Err(RegistryError::HandlerFamily {
                    operation: handler.name,
                    declared: declared.family(),
                    handler: handler.family,
                });
            }
        }
        for family in &self.families {
            let declared = registry.declaring(family.name).is_some();
            match family.row {
                Some(row) if row.family != family.name => {
                    return Err(RegistryError::RowOfAnotherFamily {
                        family: family.name,
                        row: row.family,
                    });
                }
                None if declared => return Err(RegistryError::NoRowType(family.name)),
                Some(_) if !declared => {
                    return Err(RegistryError::RowTypeWithoutDeclaring(family.name));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::declare::{Module, Operation, Owner, Resource, Scope};

    #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
    struct Req {
        id: Hex32,
    }
    impl Resource for Req {
        fn resource_id(&self) -> &Hex32 {
            &self.id
        }
        fn owner(&self) -> Owner {
            Owner::Tenant(self.id.clone())
        }
    }

    /// A family of one operation of kind `$kind`, whose purge hook names `$row`.
    macro_rules! family_with_row {
        ($family:ident = $family_name:literal, $op:ident = $op_name:literal, $kind:ident, $row:expr) => {
            struct $family;
            impl Family for $family {
                const NAME: &'static str = $family_name;
                const MODULE: Module = Module::Core;
            }
            impl Purge<()> for $family {
                const ROW: Option<RowType> = $row;
                fn purge(_: &mut (), _: &Hex32) -> Result<(), OpError> {
                    Ok(())
                }
            }
            impl Derive<()> for $family {
                fn derive(_: &()) -> Result<Vec<Derived>, OpError> {
                    Ok(Vec::new())
                }
            }
            struct $op;
            impl Operation for $op {
                const NAME: &'static str = $op_name;
                const SCOPE: Scope = Scope::Tenant;
                const SUMMARY: &'static str = "a test operation";
                const KIND: Kind = Kind::$kind;
                type Family = $family;
                type Request = Req;
                type Result = Req;
                fn example() -> Req {
                    Req {
                        id: "0".repeat(32).parse().unwrap(),
                    }
                }
            }
            impl Apply<()> for $op {
                fn apply(_: &mut (), req: &Req) -> Result<Req, OpError> {
                    Ok(Req { id: req.id.clone() })
                }
            }
        };
    }

    const fn row(family: &'static str) -> Option<RowType> {
        Some(RowType {
            family,
            field_owners: &[("note", &["set_note"])],
        })
    }

    family_with_row!(
        Kept = "kept",
        EnsureKept = "ensure_kept",
        Declare,
        row("kept")
    );
    family_with_row!(
        Unnamed = "unnamed",
        EnsureUnnamed = "ensure_unnamed",
        Declare,
        None
    );
    family_with_row!(
        Borrowed = "borrowed",
        EnsureBorrowed = "ensure_borrowed",
        Declare,
        row("kept")
    );
    family_with_row!(
        Observed = "observed",
        ObserveObserved = "observe_observed",
        Observe,
        row("observed")
    );

    fn checked<O: Apply<()>>() -> Result<Handlers<()>, RegistryError>
    where
        O::Family: Purge<()> + Derive<()>,
    {
        let handlers = Handlers::<()>::builder().op::<O>().build();
        handlers
            .check(&Registry::builder().op::<O>().build())
            .map(|()| handlers)
    }

    /// A family keeps rows of its own type exactly when it has a declaring operation, and the
    /// owners of its fields are read from that type.
    #[test]
    fn a_purge_hook_names_its_own_row_type_exactly_when_its_family_declares() {
        let kept = checked::<EnsureKept>().unwrap();
        assert_eq!(kept.field_owners("kept"), &[("note", &["set_note"][..])]);
        assert_eq!(kept.field_owners("other"), &[]);
        assert_eq!(
            kept.stored_rows().map(|(f, _)| f).collect::<Vec<_>>(),
            ["kept"]
        );
        assert_eq!(
            checked::<EnsureUnnamed>().err(),
            Some(RegistryError::NoRowType("unnamed"))
        );
        assert_eq!(
            checked::<EnsureBorrowed>().err(),
            Some(RegistryError::RowOfAnotherFamily {
                family: "borrowed",
                row: "kept",
            })
        );
        assert_eq!(
            checked::<ObserveObserved>().err(),
            Some(RegistryError::RowTypeWithoutDeclaring("observed"))
        );
    }
}
