//! The registry: the one list of declared operations, and everything derived from it.
//!
//! Operations are added by type ([`RegistryBuilder::op`]); their families are collected from
//! them, so every family is reachable by construction. What the compiler cannot check (unique
//! names, one module per family, schemas that generate with `additionalProperties: false`, no
//! `resource_id` in a result) is checked by [`Registry::check`], which `layerone catalogue`
//! and the tests run; every binary runs its cheap part at start-up
//! ([`Registry::check_structure`]: names, modules, and kinds and needs that add up). The
//! registry knows no handler: applying an operation and purging a family are the handler
//! table's (`handlers.rs`).
//!
//! What else is read off the declarations lives here too, so no list is kept by hand: the
//! operations of a kind ([`Registry::operations_of_kind`], what a rebuild replays), a
//! family's declaring operation ([`Registry::declaring`]), an operation's prerequisites in
//! order ([`Registry::prerequisites`], what the crash matrix and the purge test build their
//! histories from) and which request may supersede a queued one ([`Registry::supersedes`]).

use std::marker::PhantomData;
use std::sync::OnceLock;

use schemars::JsonSchema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde::Serialize;
use serde_json::Value;

use crate::declare::{Family, Kind, Lane, Module, Operation, Owner, Resource, Scope};
use crate::envelope::{Envelope, ValidatedJob, from_value};
use crate::error::FieldError;
use crate::types::Hex32;

/// A self-contained JSON Schema (2020-12) for `T`, with every subschema inlined.
pub fn schema_of<T: JsonSchema>() -> Value {
    let settings = SchemaSettings::draft2020_12().with(|s| s.inline_subschemas = true);
    SchemaGenerator::new(settings)
        .into_root_schema_for::<T>()
        .to_value()
}

/// An operation with its types erased, as the store, the runner and the API see it.
pub trait OperationEntry: Send + Sync {
    fn name(&self) -> &'static str;
    fn summary(&self) -> &'static str;
    fn scope(&self) -> Scope;
    fn family(&self) -> &'static str;
    fn module(&self) -> Module;
    /// [`Operation::LANE`].
    fn lane(&self) -> Lane;
    /// [`Operation::KIND`].
    fn kind(&self) -> Kind;
    /// [`Operation::NEEDS`]; [`Registry::prerequisites`] is what they add up to.
    fn needs(&self) -> &'static [&'static str];
    fn request_schema(&self) -> Value;
    fn result_schema(&self) -> Value;
    fn example(&self) -> Value;
    /// [`Operation::other_examples`].
    fn other_examples(&self) -> Vec<Value>;
    /// Parses a resource into the typed request, then checks it against the published request
    /// schema (compiled on first use).
    fn parse(&self, resource: Value) -> Result<Parsed, FieldError>;
    /// [`OperationEntry::parse`] without the schema check: what the start-up check of the
    /// examples needs, without compiling a validator for every operation in every process.
    fn parse_typed(&self, resource: Value) -> Result<Parsed, FieldError>;
    /// Checks a result against this operation's result schema.
    fn validate_result(&self, result: &Value) -> Result<(), String>;
}

/// A resource parsed into its typed request.
pub struct Parsed {
    pub resource_id: Hex32,
    pub owner: Owner,
    /// The request re-serialized from its typed form.
    pub canonical: Value,
    /// See [`Operation::request_generation`].
    pub request_generation: Option<u64>,
}

struct Entry<O> {
    request_validator: OnceLock<Result<jsonschema::Validator, String>>,
    result_validator: OnceLock<Result<jsonschema::Validator, String>>,
    op: PhantomData<fn() -> O>,
}

impl<O: Operation> OperationEntry for Entry<O> {
    fn name(&self) -> &'static str {
        O::NAME
    }
    fn summary(&self) -> &'static str {
        O::SUMMARY
    }
    fn scope(&self) -> Scope {
        O::SCOPE
    }
    fn family(&self) -> &'static str {
        <O::Family as Family>::NAME
    }
    fn module(&self) -> Module {
        <O::Family as Family>::MODULE
    }
    fn lane(&self) -> Lane {
        O::LANE
    }
    fn kind(&self) -> Kind {
        O::KIND
    }
    fn needs(&self) -> &'static [&'static str] {
        O::NEEDS
    }
    fn request_schema(&self) -> Value {
        schema_of::<O::Request>()
    }
    fn result_schema(&self) -> Value {
        schema_of::<O::Result>()
    }
    fn example(&self) -> Value {
        serde_json::to_value(O::example()).expect("a typed request always serializes to JSON")
    }
    fn other_examples(&self) -> Vec<Value> {
        O::other_examples()
            .iter()
            .map(|r| serde_json::to_value(r).expect("a typed request always serializes to JSON"))
            .collect()
    }
    fn parse(&self, resource: Value) -> Result<Parsed, FieldError> {
        let parsed = self.parse_typed(resource.clone())?;
        // serde is laxer than the published schema in places (a nested struct also accepts
        // an array of its fields): the schema has the last word.
        let validator = self.request_validator.get_or_init(|| {
            jsonschema::validator_for(&schema_of::<O::Request>()).map_err(|e| e.to_string())
        });
        match validator {
            Ok(v) => {
                if let Some(e) = v.iter_errors(&resource).next() {
                    let path = e.instance_path().to_string();
                    let field = std::iter::once("resource")
                        .chain(path.split('/').filter(|p| !p.is_empty()))
                        .collect::<Vec<_>>()
                        .join(".");
                    return Err(FieldError::new(
                        "invalid_field",
                        field,
                        "the value does not match the request schema",
                    ));
                }
            }
            Err(e) => panic!("the request schema of {} does not compile: {e}", O::NAME),
        }
        Ok(parsed)
    }
    fn parse_typed(&self, resource: Value) -> Result<Parsed, FieldError> {
        // serde would also build a struct from an array of its fields in order: only the
        // documented object form is accepted.
        if !resource.is_object() {
            return Err(FieldError::new(
                "invalid_field",
                "resource",
                "the resource must be a JSON object",
            ));
        }
        let request: O::Request = from_value(resource, "resource")?;
        let owner = request.owner();
        let scope_matches = matches!(
            (O::SCOPE, &owner),
            (Scope::Node, Owner::Node) | (Scope::Tenant, Owner::Tenant(_))
        );
        assert!(
            scope_matches,
            "operation {} declares scope {:?} but its request names owner {owner:?}",
            O::NAME,
            O::SCOPE
        );
        let canonical =
            serde_json::to_value(&request).expect("a typed request always serializes to JSON");
        Ok(Parsed {
            resource_id: request.resource_id().clone(),
            owner,
            canonical,
            request_generation: O::request_generation(&request),
        })
    }
    fn validate_result(&self, result: &Value) -> Result<(), String> {
        let validator = self.result_validator.get_or_init(|| {
            jsonschema::validator_for(&schema_of::<O::Result>()).map_err(|e| e.to_string())
        });
        match validator {
            Ok(v) => v
                .validate(result)
                .map_err(|e| format!("{} at {}", e, e.instance_path())),
            Err(e) => Err(format!("the result schema does not compile: {e}")),
        }
    }
}

/// A declared family: its name, its module and the drift aspects it declares.
pub struct FamilyEntry {
    pub name: &'static str,
    pub module: Module,
    pub drift_aspects: &'static [crate::DeclaredAspect],
}

/// Why a registry is refused at start-up.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("operation {0} is declared twice")]
    DuplicateOperation(&'static str),
    #[error("family {family} is declared with two modules")]
    FamilyModuleConflict { family: &'static str },
    #[error("family name {0} is used by two different family types")]
    DuplicateFamily(&'static str),
    #[error("drift aspect {0} is declared twice")]
    DuplicateDriftAspect(String),
    #[error("the {which} schema of {operation} is not a closed object: {reason}")]
    BadSchema {
        operation: &'static str,
        which: &'static str,
        reason: String,
    },
    #[error("the example of {operation} does not validate: {error}")]
    BadExample {
        operation: &'static str,
        error: FieldError,
    },
    #[error("operation {0} is declared but has no handler")]
    UnhandledOperation(&'static str),
    #[error("a handler is given for {0}, which is not declared")]
    UndeclaredHandler(&'static str),
    #[error("the handler of {operation} names family {handler}, its declaration {declared}")]
    HandlerFamily {
        operation: &'static str,
        declared: &'static str,
        handler: &'static str,
    },
    #[error("the handlers list {handler} where the declarations list {declared}")]
    HandlerOrder {
        declared: &'static str,
        handler: &'static str,
    },
    #[error("the purge hook of family {family} names the row type of family {row}")]
    RowOfAnotherFamily {
        family: &'static str,
        row: &'static str,
    },
    #[error("family {0} has a declaring operation, but its purge hook names no row type")]
    NoRowType(&'static str),
    #[error("family {0} has no declaring operation, but its purge hook names a row type")]
    RowTypeWithoutDeclaring(&'static str),
    #[error("family {family} has two declaring operations, {first} and {second}")]
    TwoDeclaringOperations {
        family: &'static str,
        first: &'static str,
        second: &'static str,
    },
    #[error("{operation} is of kind {kind:?}, but its family {family} has no declaring operation")]
    NoDeclaringOperation {
        operation: &'static str,
        kind: Kind,
        family: &'static str,
    },
    #[error("{operation} unsuspends, but its family {family} has no operation that suspends")]
    NoSuspendingOperation {
        operation: &'static str,
        family: &'static str,
    },
    #[error("{operation} needs {needed}, which is not declared")]
    UnknownNeed {
        operation: &'static str,
        needed: &'static str,
    },
    #[error("{operation} needs {needed}, which has another scope")]
    NeedAcrossScopes {
        operation: &'static str,
        needed: &'static str,
    },
    #[error("{operation} needs itself, through the operations it needs")]
    CyclicNeeds { operation: &'static str },
}

/// The one list of operations.
pub struct Registry {
    ops: Vec<Box<dyn OperationEntry>>,
    families: Vec<FamilyEntry>,
    family_types: Vec<std::any::TypeId>,
}

pub struct RegistryBuilder {
    registry: Registry,
}

impl RegistryBuilder {
    /// Adds an operation, and its family if this is the family's first operation.
    pub fn op<O: Operation>(mut self) -> Self {
        let family_type = std::any::TypeId::of::<O::Family>();
        if !self.registry.family_types.contains(&family_type) {
            self.registry.family_types.push(family_type);
            self.registry.families.push(FamilyEntry {
                name: <O::Family as Family>::NAME,
                module: <O::Family as Family>::MODULE,
                drift_aspects: <O::Family as Family>::DRIFT_ASPECTS,
            });
        }
        self.registry.ops.push(Box::new(Entry::<O> {
            request_validator: OnceLock::new(),
            result_validator: OnceLock::new(),
            op: PhantomData,
        }));
        self
    }

    pub fn build(self) -> Registry {
        self.registry
    }
}

/// One line of the catalogue: what a control plane needs to offer and call an operation.
#[derive(Clone, Debug, Serialize)]
pub struct CatalogueEntry {
    pub operation: &'static str,
    pub family: &'static str,
    pub module: Module,
    pub scope: Scope,
    pub kind: Kind,
    pub summary: &'static str,
    pub request_schema: Value,
    pub result_schema: Value,
    pub example: Value,
    /// The operation's own version: the SHA-256 (hex) of what a caller depends on, its name,
    /// family, module, scope, kind and both schemas as canonical JSON (not its summary or
    /// example). Two nodes whose hashes for an operation are equal take the same requests and
    /// give the same results; see [`Registry::catalogue_sha256`] for the whole catalogue.
    pub sha256: String,
}

/// The SHA-256 (hex) of a JSON value's serialization (`serde_json`'s maps are ordered by key,
/// so equal values hash equally).
fn sha256_of(value: &Value) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(
        serde_json::to_vec(value).expect("a JSON value always serializes"),
    ))
}

impl Registry {
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder {
            registry: Registry {
                ops: Vec::new(),
                families: Vec::new(),
                family_types: Vec::new(),
            },
        }
    }

    pub fn operations(&self) -> impl Iterator<Item = &dyn OperationEntry> {
        self.ops.iter().map(|b| b.as_ref())
    }

    pub fn operation(&self, name: &str) -> Option<&dyn OperationEntry> {
        self.operations().find(|op| op.name() == name)
    }

    /// The operations of one kind, in declaration order: what a rebuild replays
    /// ([`Kind::is_replayed`]), where it starts ([`Kind::Remove`]).
    pub fn operations_of_kind(&self, kind: Kind) -> impl Iterator<Item = &dyn OperationEntry> {
        self.operations().filter(move |op| op.kind() == kind)
    }

    /// Whether a newer request of `newer` may make a queued request of `older` on the same
    /// resource redundant, so that the older one ends `superseded` (docs/design.md section 5): only
    /// the same operation, of a kind that states its fields whole ([`Kind::is_replayed`]:
    /// declare, set, suspend, unsuspend) or a removal. Never otherwise: an observation, a
    /// snapshot or an action neither supersedes nor is superseded, a request of another
    /// operation whose effect a later one needs (create, then set limits) always runs, and a
    /// removal does not make the declarations before it moot (it keeps the customer's files a
    /// declaration made, and it is refused while the resource has dependents, so what the
    /// declaration did stays). The store adds the conditions that depend on the queue
    /// (`state::supersession`): the two requests say the same, and no other job of
    /// the node is pending between them.
    /// An unknown name supersedes and is superseded by nothing.
    pub fn supersedes(&self, newer: &str, older: &str) -> bool {
        let (Some(newer), Some(older)) = (self.operation(newer), self.operation(older)) else {
            return false;
        };
        newer.name() == older.name() && (newer.kind().is_replayed() || newer.kind() == Kind::Remove)
    }

    /// The operation that brings a family's resources into being ([`Kind::declares`]), if
    /// the family has one (an observation's family may have none).
    pub fn declaring(&self, family: &str) -> Option<&dyn OperationEntry> {
        self.operations()
            .find(|op| op.family() == family && op.kind().declares())
    }

    /// Every operation whose example must be applied, in this order, before the example of
    /// `name` can do all its work: what it needs ([`Operation::NEEDS`]), and, for an
    /// operation that acts on a resource its family declares (every kind but
    /// [`Kind::Declare`] and [`Kind::Snapshot`]), the family's declaring operation, after an
    /// unsuspension its family's suspension too; each with its own prerequisites first, each
    /// once. The crash matrix and the purge test build their histories from it.
    ///
    /// Panics on a registry [`Registry::check_structure`] refuses (an unknown or cyclic need).
    pub fn prerequisites(&self, name: &str) -> Vec<&dyn OperationEntry> {
        self.prerequisites_checked(name)
            .expect("the registry's needs passed check_structure")
    }

    fn prerequisites_checked(&self, name: &str) -> Result<Vec<&dyn OperationEntry>, RegistryError> {
        let op = self
            .operation(name)
            .unwrap_or_else(|| panic!("{name} is not a declared operation"));
        let mut out = Vec::new();
        self.visit_needs(op, &mut Vec::new(), &mut out)?;
        Ok(out)
    }

    /// What `op` follows, directly: its own needs, then what its kind implies.
    fn direct_needs<'a>(
        &'a self,
        op: &'a dyn OperationEntry,
    ) -> Result<Vec<&'a dyn OperationEntry>, RegistryError> {
        let mut needs = Vec::new();
        for needed in op.needs() {
            let entry = self.operation(needed).ok_or(RegistryError::UnknownNeed {
                operation: op.name(),
                needed,
            })?;
            if entry.scope() != op.scope() {
                return Err(RegistryError::NeedAcrossScopes {
                    operation: op.name(),
                    needed,
                });
            }
            needs.push(entry);
        }
        if !op.kind().declares() {
            needs.extend(self.declaring(op.family()));
        }
        if op.kind() == Kind::Unsuspend {
            needs.extend(
                self.operations()
                    .find(|o| o.family() == op.family() && o.kind() == Kind::Suspend),
            );
        }
        Ok(needs)
    }

    fn visit_needs<'a>(
        &'a self,
        op: &'a dyn OperationEntry,
        path: &mut Vec<&'static str>,
        out: &mut Vec<&'a dyn OperationEntry>,
    ) -> Result<(), RegistryError> {
        if path.contains(&op.name()) {
            return Err(RegistryError::CyclicNeeds {
                operation: op.name(),
            });
        }
        path.push(op.name());
        for needed in self.direct_needs(op)? {
            if out.iter().any(|o| o.name() == needed.name()) {
                continue;
            }
            self.visit_needs(needed, path, out)?;
            if !out.iter().any(|o| o.name() == needed.name()) {
                out.push(needed);
            }
        }
        path.pop();
        Ok(())
    }

    /// Families in declaration order. The purge sweep runs them in reverse, so the family
    /// declared first (the account) is removed last.
    pub fn families(&self) -> &[FamilyEntry] {
        &self.families
    }

    /// Every drift aspect the families declare, in the order of the families.
    pub fn drift_aspects(&self) -> impl Iterator<Item = &'static crate::DeclaredAspect> + '_ {
        self.families.iter().flat_map(|f| f.drift_aspects.iter())
    }

    /// Everything that cannot be checked by the compiler and compiles nothing: unique names,
    /// one module per family, schemas that generate as closed objects, no `resource_id` in a
    /// result, examples that parse. `layerone catalogue` and the unit tests run it; the
    /// binaries run its cheap part, [`Registry::check_structure`], and refuse to start on error.
    ///
    /// Compiling every schema and checking each example against it is
    /// [`Registry::check_schemas`], run by the registry's unit test: the registry is compiled
    /// into the binary, so a binary whose test passed cannot fail it at start-up. Result
    /// validators are compiled on first use.
    pub fn check(&self) -> Result<(), RegistryError> {
        self.check_structure()?;
        for op in self.operations() {
            let bad = |which, reason: String| RegistryError::BadSchema {
                operation: op.name(),
                which,
                reason,
            };
            let request = op.request_schema();
            if request.get("type") != Some(&Value::from("object")) {
                return Err(bad("request", "not an object".into()));
            }
            if request.get("additionalProperties") != Some(&Value::Bool(false)) {
                return Err(bad("request", "unknown fields are not denied".into()));
            }
            let result = op.result_schema();
            if result.get("type") != Some(&Value::from("object")) {
                return Err(bad("result", "not an object".into()));
            }
            if result.pointer("/properties/resource_id").is_some() {
                return Err(bad(
                    "result",
                    "a result must not carry resource_id: the store stamps it".into(),
                ));
            }
            op.parse_typed(op.example())
                .map_err(|error| RegistryError::BadExample {
                    operation: op.name(),
                    error,
                })?;
        }
        Ok(())
    }

    /// The part of [`Registry::check`] the binaries run at start: unique operation and family
    /// names, one module per family. It generates no schema: generating every operation's
    /// schemas touched several megabytes of code in every process (the API's and a runner
    /// pass's resident size), and the registry is compiled into the binary, so the schema
    /// checks that passed in its unit test cannot fail at start-up.
    pub fn check_structure(&self) -> Result<(), RegistryError> {
        for (i, op) in self.ops.iter().enumerate() {
            if self.ops[..i].iter().any(|o| o.name() == op.name()) {
                return Err(RegistryError::DuplicateOperation(op.name()));
            }
        }
        for (i, fam) in self.families.iter().enumerate() {
            if self.families[..i].iter().any(|f| f.name == fam.name) {
                return Err(RegistryError::DuplicateFamily(fam.name));
            }
        }
        let mut aspects = std::collections::BTreeSet::new();
        for declared in self.drift_aspects() {
            if !aspects.insert(declared.aspect.as_str()) {
                return Err(RegistryError::DuplicateDriftAspect(
                    declared.aspect.to_string(),
                ));
            }
        }
        for op in self.operations() {
            let module = self
                .families
                .iter()
                .find(|f| f.name == op.family())
                .map(|f| f.module);
            if module != Some(op.module()) {
                return Err(RegistryError::FamilyModuleConflict {
                    family: op.family(),
                });
            }
        }
        self.check_kinds()
    }

    /// The kinds add up: a family has at most one declaring operation; an operation that acts
    /// on a resource its family declares has one to follow (a removal, a suspension, a
    /// setting); an unsuspension has a suspension to undo; every need is a declared operation
    /// of the same scope, and no operation needs itself.
    fn check_kinds(&self) -> Result<(), RegistryError> {
        for op in self.operations() {
            if let Some(first) = self.declaring(op.family())
                && op.kind().declares()
                && first.name() != op.name()
            {
                return Err(RegistryError::TwoDeclaringOperations {
                    family: op.family(),
                    first: first.name(),
                    second: op.name(),
                });
            }
            let follows_a_declaration = matches!(
                op.kind(),
                Kind::Set | Kind::Suspend | Kind::Unsuspend | Kind::Remove
            );
            if follows_a_declaration && self.declaring(op.family()).is_none() {
                return Err(RegistryError::NoDeclaringOperation {
                    operation: op.name(),
                    kind: op.kind(),
                    family: op.family(),
                });
            }
            let suspends = self
                .operations()
                .any(|o| o.family() == op.family() && o.kind() == Kind::Suspend);
            if op.kind() == Kind::Unsuspend && !suspends {
                return Err(RegistryError::NoSuspendingOperation {
                    operation: op.name(),
                    family: op.family(),
                });
            }
            self.prerequisites_checked(op.name())?;
        }
        Ok(())
    }

    /// [`Registry::check`], and every request and result schema compiles into a validator and
    /// every example matches its request schema. For the unit tests (see `check`).
    pub fn check_schemas(&self) -> Result<(), RegistryError> {
        self.check()?;
        for op in self.operations() {
            let bad = |which, reason: String| RegistryError::BadSchema {
                operation: op.name(),
                which,
                reason,
            };
            let request = jsonschema::validator_for(&op.request_schema())
                .map_err(|e| bad("request", e.to_string()))?;
            jsonschema::validator_for(&op.result_schema())
                .map_err(|e| bad("result", e.to_string()))?;
            request.validate(&op.example()).map_err(|e| {
                bad(
                    "request",
                    format!("the example does not match the schema: {e}"),
                )
            })?;
        }
        Ok(())
    }

    /// Validates a request body into a job, exactly as the API does at admission and root does
    /// again when it reads the inbox. `node_id` is this node's id: a node-scope request for
    /// another node is refused.
    pub fn validate(&self, body: &[u8], node_id: &Hex32) -> Result<ValidatedJob, FieldError> {
        let envelope = Envelope::parse(body)?;
        let field = match envelope.scope {
            Scope::Tenant => "operation",
            Scope::Node => "action",
        };
        let op = self
            .operation(&envelope.operation)
            .filter(|op| op.scope() == envelope.scope)
            .ok_or_else(|| {
                FieldError::new(
                    "unknown_operation",
                    field,
                    format!(
                        "no {:?}-scope operation is named {:?}",
                        envelope.scope, envelope.operation
                    ),
                )
            })?;
        if let Some(requested) = &envelope.node_id
            && requested != node_id
        {
            return Err(FieldError::new(
                "wrong_node",
                "node_id",
                "this request is for another node",
            ));
        }
        let parsed = op.parse(envelope.resource.clone())?;
        Ok(ValidatedJob::new(
            &envelope,
            op.name(),
            op.family(),
            op.module(),
            parsed,
        ))
    }

    pub fn catalogue(&self) -> Vec<CatalogueEntry> {
        self.operations()
            .map(|op| {
                let (request_schema, result_schema) = (op.request_schema(), op.result_schema());
                let sha256 = sha256_of(&serde_json::json!({
                    "operation": op.name(),
                    "family": op.family(),
                    "module": op.module(),
                    "scope": op.scope(),
                    "kind": op.kind(),
                    "request_schema": request_schema,
                    "result_schema": result_schema,
                }));
                CatalogueEntry {
                    operation: op.name(),
                    family: op.family(),
                    module: op.module(),
                    scope: op.scope(),
                    kind: op.kind(),
                    summary: op.summary(),
                    request_schema,
                    result_schema,
                    example: op.example(),
                    sha256,
                }
            })
            .collect()
    }

    /// The catalogue's version: the SHA-256 (hex) of every operation's name and
    /// [`CatalogueEntry::sha256`], in the registry's order. It changes when any operation is
    /// added, removed or changes what it takes or gives, and with nothing else.
    pub fn catalogue_sha256(&self) -> String {
        let operations: Vec<Value> = self
            .catalogue()
            .into_iter()
            .map(|entry| serde_json::json!([entry.operation, entry.sha256]))
            .collect();
        sha256_of(&Value::Array(operations))
    }
}

#[cfg(test)]
mod tests {
    //! `check_structure` refuses kinds that do not add up and needs that go nowhere.

    use super::*;
    use crate::declare::Owner;

    struct Things;
    impl Family for Things {
        const NAME: &'static str = "thing";
        const MODULE: Module = Module::Core;
    }

    #[derive(Serialize, serde::Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
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

    macro_rules! op {
        ($ty:ident, $name:literal, $kind:ident $(, scope $scope:ident)? $(, needs $need:literal)?) => {
            struct $ty;
            impl Operation for $ty {
                const NAME: &'static str = $name;
                const SCOPE: Scope = { let _s = Scope::Tenant; $(let _s = Scope::$scope;)? _s };
                const SUMMARY: &'static str = "test";
                const KIND: Kind = Kind::$kind;
                const NEEDS: &'static [&'static str] = &[$($need)?];
                type Family = Things;
                type Request = Req;
                type Result = Req;
                fn example() -> Req {
                    Req {
                        id: "0".repeat(32).parse().unwrap(),
                    }
                }
            }
        };
    }
    op!(Ensure, "ensure_thing", Declare);
    op!(EnsureAgain, "ensure_thing_again", Declare);
    op!(Remove, "remove_thing", Remove);
    op!(Suspend, "suspend_thing", Suspend);
    op!(Unsuspend, "unsuspend_thing", Unsuspend);
    op!(Observe, "observe_thing", Observe, needs "set_thing");
    op!(Set, "set_thing", Set, needs "observe_thing");
    op!(Lost, "lost_thing", Action, needs "no_such_operation");
    op!(NodeWide, "node_thing", Action, scope Node, needs "ensure_thing");

    #[test]
    fn kinds_and_needs_that_do_not_add_up_are_refused() {
        let ok = Registry::builder()
            .op::<Ensure>()
            .op::<Suspend>()
            .op::<Unsuspend>()
            .op::<Remove>()
            .build();
        ok.check_structure().expect("a consistent family");
        let names =
            |name: &str| -> Vec<&str> { ok.prerequisites(name).iter().map(|o| o.name()).collect() };
        assert_eq!(names("unsuspend_thing"), ["ensure_thing", "suspend_thing"]);
        assert_eq!(names("remove_thing"), ["ensure_thing"]);
        assert!(names("ensure_thing").is_empty());
        assert_eq!(ok.declaring("thing").unwrap().name(), "ensure_thing");
        let removals: Vec<&str> = ok
            .operations_of_kind(Kind::Remove)
            .map(|o| o.name())
            .collect();
        assert_eq!(removals, ["remove_thing"]);

        let refused = |registry: Registry| registry.check_structure().unwrap_err();
        assert!(matches!(
            refused(Registry::builder().op::<Remove>().build()),
            RegistryError::NoDeclaringOperation {
                operation: "remove_thing",
                ..
            }
        ));
        assert!(matches!(
            refused(Registry::builder().op::<Ensure>().op::<Unsuspend>().build()),
            RegistryError::NoSuspendingOperation {
                operation: "unsuspend_thing",
                ..
            }
        ));
        assert!(matches!(
            refused(
                Registry::builder()
                    .op::<Ensure>()
                    .op::<EnsureAgain>()
                    .build()
            ),
            RegistryError::TwoDeclaringOperations {
                second: "ensure_thing_again",
                ..
            }
        ));
        assert!(matches!(
            refused(Registry::builder().op::<Lost>().build()),
            RegistryError::UnknownNeed {
                needed: "no_such_operation",
                ..
            }
        ));
        assert!(matches!(
            refused(Registry::builder().op::<Ensure>().op::<NodeWide>().build()),
            RegistryError::NeedAcrossScopes {
                operation: "node_thing",
                ..
            }
        ));
        assert!(matches!(
            refused(
                Registry::builder()
                    .op::<Ensure>()
                    .op::<Set>()
                    .op::<Observe>()
                    .build()
            ),
            RegistryError::CyclicNeeds { .. }
        ));
    }
}
