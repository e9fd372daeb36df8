//! The contract check on the shipped sample and on a broken one, and the compatibility gate
//! on modified copies of the released catalogue.

use serde_json::{Value, json};

const RELEASED: &str = include_str!("../../../contract/catalogue-v1.json");
const SAMPLE: &str = include_str!("../../../contract/sample-control-plane.json");
const CHANGELOG: &str = include_str!("../../../CHANGELOG.md");

fn released() -> Value {
    serde_json::from_str(RELEASED).expect("the released catalogue is JSON")
}

fn current() -> Value {
    let registry = declarations::registry();
    json!({ "sha256": registry.catalogue_sha256(), "operations": registry.catalogue() })
}

fn op<'a>(catalogue: &'a mut Value, name: &str) -> &'a mut Value {
    catalogue["operations"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|o| o["operation"] == name)
        .unwrap()
}

#[test]
fn the_sample_contract_holds_against_the_released_and_the_current_catalogue() {
    let sample: contract::Contract = serde_json::from_str(SAMPLE).unwrap();
    for catalogue in [released(), current()] {
        let report = contract::check(&sample, &catalogue, &contract::RequestSchema);
        assert!(report.ok, "{:#?}", report.findings);
    }
}

#[test]
fn a_contract_that_sends_a_refused_field_and_reads_what_is_not_given_fails_with_each() {
    let broken: contract::Contract = serde_json::from_value(json!({
        "name": "broken",
        "operations": {
            "ensure_account": {
                "sends": [{"id": "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1", "username": "shop1", "colour": "red"}],
                "reads": [
                    {"pointer": "/owner_email", "type": "string", "optional": true},
                    {"pointer": "/uid", "type": "integer"},
                    {"pointer": "/state", "type": "string", "enum": ["present"]},
                    {"pointer": "/suspended", "type": "string", "optional": true}
                ]
            }
        }
    }))
    .unwrap();
    let report = contract::check(&broken, &released(), &contract::RequestSchema);
    assert!(!report.ok);
    let kinds: Vec<(&str, &str)> = report
        .findings
        .iter()
        .map(|f| (f.kind.as_str(), f.at.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("refused_send", "sends[0]"),
            ("missing", "/owner_email"),
            ("optional", "/uid"),
            ("narrower_enum", "/state"),
            ("type", "/suspended"),
        ]
    );
    let refusal = report.findings[0].refusal.as_ref().unwrap();
    assert_eq!(
        (refusal.code.as_str(), refusal.field.as_str()),
        ("unknown_field", "resource.colour")
    );
}

#[test]
fn a_send_schema_that_may_leave_out_a_required_field_is_refused_with_the_field() {
    let broken: contract::Contract = serde_json::from_value(json!({
        "name": "loose",
        "operations": {"ensure_account": {"send_schema": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "username": {"type": "string"}},
            "required": ["id"]
        }}}
    }))
    .unwrap();
    let report = contract::check(&broken, &released(), &contract::RequestSchema);
    let refusal = report.findings[0].refusal.as_ref().unwrap();
    assert_eq!(
        (refusal.code.as_str(), refusal.field.as_str()),
        ("missing_field", "resource.username")
    );
}

#[test]
fn the_current_catalogue_passes_the_gate_against_the_released_one() {
    let version: u64 = released()["version"].as_u64().unwrap();
    contract::gate(
        &released(),
        version,
        &current(),
        declarations::CATALOGUE_VERSION,
        CHANGELOG,
    )
    .unwrap_or_else(|refusal| panic!("{refusal:#?}"));
}

/// The kinds the gate reports for `modify` applied to a copy of the released catalogue.
fn breaking(modify: impl FnOnce(&mut Value)) -> Vec<(String, String, String)> {
    let mut copy = released();
    modify(&mut copy);
    contract::breaking_changes(&released(), &copy)
        .into_iter()
        .map(|c| (c.operation, c.kind, c.field))
        .collect()
}

fn one(operation: &str, kind: &str, field: &str) -> Vec<(String, String, String)> {
    vec![(operation.into(), kind.into(), field.into())]
}

#[test]
fn the_gate_fails_on_a_removed_operation() {
    let found = breaking(|c| {
        c["operations"]
            .as_array_mut()
            .unwrap()
            .retain(|o| o["operation"] != "ensure_mailbox")
    });
    assert_eq!(found, one("ensure_mailbox", "operation_removed", ""));
}

#[test]
fn the_gate_fails_on_a_renamed_operation() {
    let found = breaking(|c| op(c, "ensure_mailbox")["operation"] = json!("create_mailbox"));
    assert_eq!(found, one("ensure_mailbox", "operation_removed", ""));
}

#[test]
fn the_gate_fails_on_a_removed_result_field() {
    let found = breaking(|c| {
        op(c, "ensure_mailbox")["result_schema"]["properties"]
            .as_object_mut()
            .unwrap()
            .remove("quota_mib");
    });
    assert_eq!(
        found,
        one("ensure_mailbox", "result_field_removed", "/quota_mib")
    );
}

#[test]
fn the_gate_fails_on_a_changed_result_type() {
    let found = breaking(|c| {
        op(c, "ensure_mailbox")["result_schema"]["properties"]["quota_mib"]["type"] =
            json!(["string", "null"])
    });
    assert_eq!(
        found,
        one("ensure_mailbox", "result_type_changed", "/quota_mib")
    );
}

#[test]
fn the_gate_fails_on_a_result_field_made_optional() {
    let found = breaking(|c| op(c, "ensure_mailbox")["result_schema"]["required"] = json!([]));
    assert_eq!(
        found,
        one("ensure_mailbox", "result_made_optional", "/state")
    );
}

#[test]
fn the_gate_fails_on_a_request_field_made_required() {
    let found = breaking(|c| {
        op(c, "ensure_account")["request_schema"]["required"]
            .as_array_mut()
            .unwrap()
            .push(json!("shell"))
    });
    assert_eq!(
        found,
        one("ensure_account", "request_field_required", "resource.shell")
    );
}

#[test]
fn the_gate_fails_on_a_narrowed_enum() {
    let found = breaking(|c| {
        op(c, "ensure_account")["request_schema"]["properties"]["shell"]["enum"] =
            json!(["bash", "nologin"])
    });
    assert_eq!(
        found,
        one("ensure_account", "request_enum_narrowed", "resource.shell")
    );
}

#[test]
fn the_gate_fails_on_a_changed_scope() {
    let found = breaking(|c| op(c, "ensure_mailbox")["scope"] = json!("node"));
    assert_eq!(found, one("ensure_mailbox", "scope_changed", ""));
}

#[test]
fn the_gate_passes_additions() {
    let found = breaking(|c| {
        let mut added = op(c, "ensure_mailbox").clone();
        added["operation"] = json!("ensure_mailbox_alias");
        c["operations"].as_array_mut().unwrap().push(added);
        let mailbox = op(c, "ensure_mailbox");
        mailbox["result_schema"]["properties"]["used_mib"] = json!({"type": "integer"});
        mailbox["request_schema"]["properties"]["note"] = json!({"type": "string"});
        op(c, "ensure_account")["request_schema"]["properties"]["shell"]["enum"] =
            json!(["bash", "sh", "nologin", "zsh"]);
    });
    assert_eq!(found, []);
}

#[test]
fn a_breaking_change_passes_only_with_a_raised_version_listed_in_the_changelog() {
    let mut copy = released();
    op(&mut copy, "ensure_mailbox")["scope"] = json!("node");
    let refused = contract::gate(&released(), 1, &copy, 1, "");
    assert!(matches!(
        refused,
        Err(contract::GateRefusal::VersionNotRaised { .. })
    ));
    let refused = contract::gate(&released(), 1, &copy, 2, "## Catalogue version 2\n");
    assert!(matches!(
        refused,
        Err(contract::GateRefusal::NotInChangelog { .. })
    ));
    let changelog =
        "## Catalogue version 2\n\n- `ensure_mailbox` `scope_changed`: a node action now.\n";
    assert_eq!(contract::gate(&released(), 1, &copy, 2, changelog), Ok(()));
}

#[test]
fn the_gate_fails_on_a_removed_request_field() {
    let found = breaking(|c| {
        op(c, "ensure_account")["request_schema"]["properties"]
            .as_object_mut()
            .unwrap()
            .remove("shell");
    });
    assert_eq!(
        found,
        one("ensure_account", "request_field_removed", "resource.shell")
    );
}

#[test]
fn the_gate_fails_on_a_changed_request_type() {
    let found = breaking(|c| {
        let shell = &mut op(c, "ensure_account")["request_schema"]["properties"]["shell"];
        shell.as_object_mut().unwrap().remove("enum");
        shell["type"] = json!("integer");
    });
    assert_eq!(
        found,
        one("ensure_account", "request_type_changed", "resource.shell")
    );
}

#[test]
fn the_gate_fails_on_a_widened_result_enum() {
    let found = breaking(|c| {
        op(c, "ensure_mailbox")["result_schema"]["properties"]["state"]["enum"] =
            json!(["present", "absent", "moving"])
    });
    assert_eq!(
        found,
        one("ensure_mailbox", "result_enum_widened", "/state")
    );
}
