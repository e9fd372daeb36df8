//! Declared once (DESIGN.md invariants 1 and 3): the registry is consistent, derives every
//! schema, and no result can carry the resource id.

use std::collections::BTreeSet;

use registry::Scope;

#[test]
fn registry_is_consistent_and_derives_everything() {
    let registry = ops::registry();
    registry.check().expect("the node's registry is consistent");
    let names: Vec<&str> = registry.operations().map(|op| op.name()).collect();
    for expected in [
        "ensure_account",
        "suspend_account",
        "unsuspend_account",
        "remove_account",
        "ensure_ssh_key",
        "remove_ssh_key",
        "ensure_web_domain",
        "remove_web_domain",
        "ensure_mysql_database",
        "remove_mysql_database",
        "set_mysql_quota",
        "observe_mysql_usage",
        "ensure_mysql_user",
        "set_mysql_user_password",
        "remove_mysql_user",
        "ensure_mysql_grant",
        "remove_mysql_grant",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} is not in the registry"
        );
    }
    let families: BTreeSet<&str> = registry.families().iter().map(|f| f.name).collect();
    let used: BTreeSet<&str> = registry.operations().map(|op| op.family()).collect();
    assert_eq!(
        families, used,
        "every family of an operation has a purge hook, and no other family exists"
    );
    assert_eq!(
        registry.families()[0].name,
        "account",
        "the account family is declared first, so it is purged last"
    );
    for op in registry.operations() {
        let request = op.request_schema();
        assert_eq!(
            request["additionalProperties"],
            false,
            "{}: unknown fields must be denied",
            op.name()
        );
        assert_eq!(op.scope(), Scope::Tenant);
        let example = serde_json::to_vec(&serde_json::json!({
            "request_id": "9".repeat(32), "operation": op.name(), "resource": op.example()
        }))
        .unwrap();
        let job = registry
            .validate(&example, &"0".repeat(32).parse().unwrap())
            .expect("the example validates");
        assert_eq!(job.family, op.family());
        assert_eq!(
            job.resource_id.as_str(),
            op.example()["id"].as_str().unwrap(),
            "the job key comes from the request"
        );
    }
    let catalogue = serde_json::to_value(registry.catalogue()).unwrap();
    assert_eq!(catalogue.as_array().unwrap().len(), names.len());
    let openapi = registry::openapi::document(registry, "test");
    for name in &names {
        assert!(openapi["components"]["schemas"][format!("{name}_request")].is_object());
        assert!(openapi["components"]["schemas"][format!("{name}_result")].is_object());
    }
}

#[test]
fn results_never_carry_resource_id_and_the_store_stamps_it() {
    for op in ops::registry().operations() {
        let result = op.result_schema();
        assert!(
            result["properties"].get("resource_id").is_none(),
            "{} has resource_id in its result",
            op.name()
        );
        assert!(
            result["properties"].get("id").is_none(),
            "{} echoes the id in its result",
            op.name()
        );
    }
}
