//! The handlers cover the declarations exactly (ARCHITECTURE.md invariants 1 and 2): every declared
//! operation has a handler and no handler exists for an undeclared one, each with its declared
//! family, and every declared family has a purge hook, in the declared order (the purge sweep
//! runs them in reverse, so the account goes last).

use registry::{Handlers, Registry, RegistryError};

#[test]
fn every_declared_operation_has_a_handler_and_every_family_a_purge_hook() {
    let registry = declarations::registry();
    let handlers = ops::handlers();
    handlers
        .check(registry)
        .expect("the handlers cover exactly the declared operations");
    let declared: Vec<&str> = registry.operations().map(|op| op.name()).collect();
    let handled: Vec<&str> = handlers.operations().map(|op| op.name).collect();
    assert_eq!(
        handled, declared,
        "one handler per declared operation, in order"
    );
    for op in registry.operations() {
        let handler = handlers.operation(op.name()).expect("checked above");
        assert_eq!(handler.family, op.family(), "{}", op.name());
    }
    let declared_families: Vec<&str> = registry.families().iter().map(|f| f.name).collect();
    let purged: Vec<&str> = handlers.families().iter().map(|f| f.name).collect();
    assert_eq!(
        purged, declared_families,
        "every declared family has a purge hook, and no other family has one"
    );
    assert_eq!(
        handlers.families()[0].name,
        "account",
        "the account family is first, so it is purged last"
    );
}

/// What `Handlers::check` refuses, on a table that is not the node's: a declared operation
/// without a handler, a handler without a declaration, and the same operations out of order.
#[test]
fn a_handler_table_that_does_not_match_the_declarations_is_refused() {
    use ops::account::{EnsureAccount, SuspendAccount};
    use ops::ssh_key::EnsureSshKey;

    let declared = Registry::builder()
        .op::<EnsureAccount>()
        .op::<SuspendAccount>()
        .build();
    let missing = Handlers::<ops::Ctx>::builder()
        .op::<EnsureAccount>()
        .build();
    assert_eq!(
        missing.check(&declared),
        Err(RegistryError::UnhandledOperation("suspend_account"))
    );
    let extra = Handlers::<ops::Ctx>::builder()
        .op::<EnsureAccount>()
        .op::<SuspendAccount>()
        .op::<EnsureSshKey>()
        .build();
    assert_eq!(
        extra.check(&declared),
        Err(RegistryError::UndeclaredHandler("ensure_ssh_key"))
    );
    let reordered = Handlers::<ops::Ctx>::builder()
        .op::<SuspendAccount>()
        .op::<EnsureAccount>()
        .build();
    assert_eq!(
        reordered.check(&declared),
        Err(RegistryError::HandlerOrder {
            declared: "ensure_account",
            handler: "suspend_account",
        })
    );
    let exact = Handlers::<ops::Ctx>::builder()
        .op::<EnsureAccount>()
        .op::<SuspendAccount>()
        .build();
    assert_eq!(exact.check(&declared), Ok(()));
}
