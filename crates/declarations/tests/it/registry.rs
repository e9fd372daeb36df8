//! Declared once (ARCHITECTURE.md invariants 1 and 3): the registry is consistent, derives every
//! schema, and no result can carry the resource id. That every declared family has a purge
//! hook is the handlers' test (`crates/ops/tests/it/handlers.rs`).

use std::collections::BTreeSet;

use registry::Scope;

#[test]
fn registry_is_consistent_and_derives_everything() {
    let registry = declarations::registry();
    registry.check().expect("the node's registry is consistent");
    registry
        .check_schemas()
        .expect("every schema compiles and every example matches its schema");
    let names: Vec<&str> = registry.operations().map(|op| op.name()).collect();
    for expected in [
        "ensure_account",
        "suspend_account",
        "unsuspend_account",
        "remove_account",
        "set_account_password",
        "ensure_ssh_key",
        "remove_ssh_key",
        "ensure_web_domain",
        "remove_web_domain",
        "set_sudo_allowlist",
        "remove_sudo_allowlist",
        "read_sudo_events",
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
        "every family of an operation is declared, and no other family exists"
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
        let node_id = "0".repeat(32);
        let example = serde_json::to_vec(&match op.scope() {
            Scope::Tenant => serde_json::json!({
                "request_id": "9".repeat(32), "operation": op.name(), "resource": op.example()
            }),
            Scope::Node => serde_json::json!({
                "request_id": "9".repeat(32), "action": op.name(), "node_id": node_id,
                "resource": op.example()
            }),
        })
        .unwrap();
        let job = registry
            .validate(&example, &node_id.parse().unwrap())
            .expect("the example validates");
        assert_eq!(job.family, op.family());
        assert_eq!(job.scope, op.scope());
        let owner_is_node = job.owner == registry::Owner::Node;
        assert_eq!(
            owner_is_node,
            op.scope() == Scope::Node,
            "{}: node-scope requests, and only they, are owned by `node:`",
            op.name()
        );
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
    for op in declarations::registry().operations() {
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

/// Every object nested in a request, sent as an array of its values (which serde alone would
/// accept for a struct), is refused with that field named.
#[test]
fn a_nested_object_sent_as_an_array_is_refused_naming_the_field() {
    fn objects(value: &serde_json::Value, path: &str, out: &mut Vec<String>) {
        if let Some(map) = value.as_object() {
            for (key, child) in map {
                let child_path = format!("{path}.{key}");
                if child.is_object() {
                    out.push(child_path.clone());
                }
                objects(child, &child_path, out);
            }
        }
    }
    let registry = declarations::registry();
    let node_id: registry::Hex32 = "00000000000000000000000000000001".parse().unwrap();
    let mut checked = 0;
    for op in registry.operations() {
        let example = op.example();
        let mut paths = Vec::new();
        objects(&example, "resource", &mut paths);
        for path in paths {
            let mut resource = example.clone();
            let pointer = path.trim_start_matches("resource").replace('.', "/");
            let target = resource.pointer_mut(&pointer).unwrap();
            let values: Vec<serde_json::Value> =
                target.as_object().unwrap().values().cloned().collect();
            *target = serde_json::Value::Array(values);
            let mut body = serde_json::json!({
                "request_id": "0123456789abcdef0123456789abcdef",
                "resource": resource,
            });
            match op.scope() {
                Scope::Tenant => body["operation"] = op.name().into(),
                Scope::Node => {
                    body["action"] = op.name().into();
                    body["node_id"] = node_id.to_string().into();
                }
            }
            let error = registry
                .validate(body.to_string().as_bytes(), &node_id)
                .expect_err("an array in place of an object is refused");
            assert_eq!(error.field, path, "{}: {error:?}", op.name());
            checked += 1;
        }
    }
    assert!(
        checked > 0,
        "the registry has nested request objects to check"
    );
}

#[test]
fn each_operation_and_the_catalogue_have_a_version_of_what_callers_depend_on() {
    let registry = declarations::registry();
    let catalogue = registry.catalogue();
    let hashes: BTreeSet<&str> = catalogue.iter().map(|e| e.sha256.as_str()).collect();
    assert_eq!(
        hashes.len(),
        catalogue.len(),
        "two operations share a version"
    );
    assert!(
        catalogue
            .iter()
            .all(|e| { e.sha256.len() == 64 && e.sha256.bytes().all(|b| b.is_ascii_hexdigit()) })
    );
    // Stable: computed again, the same.
    assert_eq!(registry.catalogue_sha256(), registry.catalogue_sha256());
    assert_eq!(
        catalogue.iter().map(|e| &e.sha256).collect::<Vec<_>>(),
        registry
            .catalogue()
            .iter()
            .map(|e| &e.sha256)
            .collect::<Vec<_>>()
    );
    // A catalogue without one operation is another version; the operations' own are kept.
    let fewer = registry::Registry::builder()
        .op::<declarations::account::EnsureAccount>()
        .build();
    assert_ne!(fewer.catalogue_sha256(), registry.catalogue_sha256());
    let ensure = |c: &[registry::CatalogueEntry]| {
        c.iter()
            .find(|e| e.operation == "ensure_account")
            .unwrap()
            .sha256
            .clone()
    };
    assert_eq!(ensure(&fewer.catalogue()), ensure(&catalogue));
}

/// Each family's drift aspects are declared with it (`family!`), each once across the node,
/// and the events feed's schema in the OpenAPI document lists exactly those, each with what
/// it means: a new family's aspects reach the schema from its own file.
#[test]
fn every_declared_drift_aspect_is_in_the_events_schema_under_its_name() {
    let registry = declarations::registry();
    let declared: Vec<&str> = registry
        .drift_aspects()
        .map(|d| d.aspect.as_str())
        .collect();
    let unique: BTreeSet<&str> = declared.iter().copied().collect();
    assert_eq!(unique.len(), declared.len(), "an aspect is declared twice");
    assert!(unique.contains("vhost_missing") && unique.contains("backup_differs"));
    assert_eq!(
        serde_json::to_value(declarations::web_domain::VHOST_MISSING).unwrap(),
        serde_json::Value::from("vhost_missing")
    );
    let document = registry::openapi::document(registry, "test");
    let aspect = document
        .pointer("/components/schemas/EventPage/properties/events/items/properties/drift/properties/aspect")
        .unwrap_or_else(|| panic!("no aspect in the events schema"));
    let listed: BTreeSet<&str> = aspect["oneOf"]
        .as_array()
        .expect("the aspects are a oneOf")
        .iter()
        .map(|variant| {
            let description = variant["description"].as_str().unwrap_or_default();
            assert!(
                !description.is_empty() && description == description.trim(),
                "an aspect without a description: {variant}"
            );
            variant["const"].as_str().expect("each aspect is a const")
        })
        .collect();
    assert_eq!(listed, unique, "the schema and the declared aspects differ");
}
