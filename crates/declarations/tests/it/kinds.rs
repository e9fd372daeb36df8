//! What each operation does to its resource (its kind), what it follows (its prerequisites),
//! and the examples the crash matrix, the seeded histories and the purge test build from.
//! `Registry::check_structure` holds the kinds together for every binary; these tests hold
//! the names, the examples and the kinds of the node's own registry to each other.

use std::collections::BTreeSet;

use registry::{Kind, Scope};

/// The verb an operation's name starts with says its kind, and the kind its verb: a reader of
/// the catalogue can trust either. A new verb is a new line here, with the kinds it may have.
#[test]
fn operation_names_agree_with_their_kinds() {
    let verbs: &[(&str, &[Kind])] = &[
        ("ensure_", &[Kind::Declare]),
        ("set_", &[Kind::Declare, Kind::Set]),
        // The fleet's signed decision, applied whole (`apply_assignment`).
        ("apply_", &[Kind::Declare]),
        ("suspend_", &[Kind::Suspend]),
        ("unsuspend_", &[Kind::Unsuspend]),
        ("remove_", &[Kind::Remove]),
        ("observe_", &[Kind::Observe]),
        ("read_", &[Kind::Observe]),
        ("create_", &[Kind::Snapshot]),
        ("restore_", &[Kind::Action]),
        ("renew_", &[Kind::Action]),
        ("rebuild_", &[Kind::Action]),
    ];
    let mut seen = BTreeSet::new();
    for op in declarations::registry().operations() {
        // The verbs of state and observation are fixed; a one-off action names what it does
        // (`flush_mail_queue`).
        let (verb, kinds) = verbs
            .iter()
            .find(|(verb, _)| op.name().starts_with(verb))
            .copied()
            .unwrap_or(("another verb", &[Kind::Action]));
        assert!(
            kinds.contains(&op.kind()),
            "{} is of kind {:?}; a `{verb}` operation is one of {kinds:?}",
            op.name(),
            op.kind()
        );
        seen.insert(op.kind());
    }
    assert_eq!(
        seen,
        Kind::ALL.into_iter().collect(),
        "every kind is some operation's"
    );
    // A `set_` declares only where its family has nothing else that does.
    for op in declarations::registry().operations_of_kind(Kind::Set) {
        let declaring = declarations::registry()
            .declaring(op.family())
            .unwrap_or_else(|| panic!("{} sets a part of a family nothing declares", op.name()));
        assert_ne!(declaring.name(), op.name());
    }
}

/// What a rebuild replays is what declares state: every `ensure_`, `set_`, `apply_`,
/// `suspend_` and `unsuspend_` operation, and nothing else (no removal, observation, backup or
/// action).
#[test]
fn the_replayed_kinds_are_the_operations_that_declare_state() {
    let registry = declarations::registry();
    let replayed: BTreeSet<&str> = Kind::ALL
        .into_iter()
        .filter(|k| k.is_replayed())
        .flat_map(|k| registry.operations_of_kind(k).map(|op| op.name()))
        .collect();
    let by_verb: BTreeSet<&str> = registry
        .operations()
        .map(|op| op.name())
        .filter(|name| {
            ["ensure_", "set_", "apply_", "suspend_", "unsuspend_"]
                .iter()
                .any(|verb| name.starts_with(verb))
        })
        .collect();
    assert_eq!(replayed, by_verb);
}

/// Every family whose resources an operation removes, suspends or sets has the one operation
/// that declares them, and an operation's prerequisites are declared operations of its scope
/// that it follows: its family's declaring operation among them unless it is that operation.
#[test]
fn every_operation_follows_its_family_declaration_and_what_its_example_needs() {
    let registry = declarations::registry();
    registry
        .check_structure()
        .expect("the kinds and needs add up");
    for op in registry.operations() {
        let before = registry.prerequisites(op.name());
        let names: Vec<&str> = before.iter().map(|o| o.name()).collect();
        assert!(!names.contains(&op.name()), "{} follows itself", op.name());
        assert_eq!(
            names.iter().collect::<BTreeSet<_>>().len(),
            names.len(),
            "{}: {names:?} repeats an operation",
            op.name()
        );
        for p in &before {
            assert_eq!(p.scope(), op.scope(), "{} follows {}", op.name(), p.name());
            // Each prerequisite comes after its own.
            let own: Vec<&str> = registry
                .prerequisites(p.name())
                .iter()
                .map(|o| o.name())
                .collect();
            let at = names.iter().position(|n| *n == p.name()).unwrap();
            for needed in own {
                let needed_at = names.iter().position(|n| *n == needed);
                assert!(
                    needed_at.is_some_and(|i| i < at),
                    "{}: {} comes before {needed}",
                    op.name(),
                    p.name()
                );
            }
        }
        match registry.declaring(op.family()) {
            Some(declaring) if declaring.name() != op.name() => assert!(
                names.contains(&declaring.name()),
                "{} does not follow {}",
                op.name(),
                declaring.name()
            ),
            Some(_) => {}
            None => assert!(
                matches!(op.kind(), Kind::Observe | Kind::Action),
                "{} acts on a resource nothing declares",
                op.name()
            ),
        }
        if op.kind() == Kind::Unsuspend {
            assert!(
                before.iter().any(|p| p.kind() == Kind::Suspend),
                "{} does not follow a suspension",
                op.name()
            );
        }
    }
    // Every tenant resource belongs to an account: every tenant operation but the account's
    // own declaration follows it.
    let account = registry
        .declaring("account")
        .expect("the account family has a declaring operation");
    for op in registry.operations() {
        if op.scope() == Scope::Tenant && op.name() != account.name() {
            assert_eq!(
                registry.prerequisites(op.name())[0].name(),
                account.name(),
                "{} does not start from the account",
                op.name()
            );
        }
    }
}

/// The examples made into another account's, and into a second resource of each family
/// (`declarations::example::another`), are still valid requests, each naming resources that
/// are not the example's.
#[test]
fn another_account_and_resource_like_every_example_is_a_valid_request() {
    let registry = declarations::registry();
    let node_id: registry::Hex32 = "00000000000000000000000000000001".parse().unwrap();
    let mut checked = 0;
    for op in registry
        .operations()
        .filter(|op| op.scope() == Scope::Tenant)
    {
        for example in std::iter::once(op.example()).chain(op.other_examples()) {
            for account in 0..declarations::example::INSTANCES {
                for instance in 0..declarations::example::INSTANCES {
                    let resource = declarations::example::another(&example, account, instance);
                    let body = serde_json::json!({
                        "request_id": "0123456789abcdef0123456789abcdef",
                        "operation": op.name(),
                        "resource": resource,
                    });
                    let job = registry
                        .validate(body.to_string().as_bytes(), &node_id)
                        .unwrap_or_else(|e| {
                            panic!("{} for ({account}, {instance}): {e:?}", op.name())
                        });
                    let owner = job.owner.as_str().to_owned();
                    assert_eq!(
                        owner
                            == example["account"]
                                .as_str()
                                .unwrap_or(example["id"].as_str().unwrap()),
                        account == 0,
                        "{}: account {account} is owned by {owner}",
                        op.name()
                    );
                    if (account, instance) == (0, 0) {
                        assert_eq!(resource, example);
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 0);
}

/// Every operation's other examples are valid requests for the example's resource.
#[test]
fn other_examples_are_valid_requests_for_the_examples_resource() {
    let registry = declarations::registry();
    for op in registry.operations() {
        for other in op.other_examples() {
            let parsed = op
                .parse(other.clone())
                .unwrap_or_else(|e| panic!("{}: {e:?}", op.name()));
            assert_eq!(
                parsed.resource_id.as_str(),
                op.example()["id"].as_str().unwrap(),
                "{}: another example names another resource",
                op.name()
            );
            assert_ne!(other, op.example(), "{}: the same example twice", op.name());
        }
    }
}
