//! `layerone contract check`, the real binary: the shipped sample contract passes with a JSON
//! report, a contract that depends on what the node does not give fails with each finding in
//! the report, and `--live` checks against a running node over the pinned client.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::*;
use serde_json::{Value, json};

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contract/sample-control-plane.json")
}

/// Runs `layerone contract check ARGS`: its exit code and its JSON report.
#[allow(clippy::disallowed_methods)] // Tests run the real binary.
fn check(args: &[&str]) -> (i32, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_layerone"))
        .args(["contract", "check"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("layerone runs");
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not a JSON report ({e}): {out:?}"));
    (out.status.code().expect("an exit code"), report)
}

/// A contract that sends a field the node refuses, reads a result field the node never
/// gives, and reads an optional one as required.
fn broken_contract(dir: &Path) -> PathBuf {
    let contract = json!({
        "name": "broken control plane",
        "operations": {
            "ensure_account": {
                "sends": [
                    {"id": "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1", "username": "shop1", "colour": "red"}
                ],
                "reads": [
                    {"pointer": "/state", "type": "string", "enum": ["present", "absent"]},
                    {"pointer": "/shoe_size", "type": "integer"},
                    {"pointer": "/uid", "type": "integer"}
                ]
            }
        }
    });
    let path = dir.join("broken.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&contract).unwrap()).unwrap();
    path
}

/// The findings of `report`, as (operation, kind, at, refusal code, refusal field).
fn findings(report: &Value) -> Vec<(String, String, String, String, String)> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                text(&f["operation"]),
                text(&f["kind"]),
                text(&f["at"]),
                text(&f["refusal"]["code"]),
                text(&f["refusal"]["field"]),
            )
        })
        .collect()
}

fn expected_findings() -> Vec<(String, String, String, String, String)> {
    let f = |kind: &str, at: &str, code: &str, field: &str| {
        (
            "ensure_account".to_owned(),
            kind.to_owned(),
            at.to_owned(),
            code.to_owned(),
            field.to_owned(),
        )
    };
    vec![
        f(
            "refused_send",
            "sends[0]",
            "unknown_field",
            "resource.colour",
        ),
        f("missing", "/shoe_size", "", ""),
        f("optional", "/uid", "", ""),
    ]
}

#[test]
fn the_shipped_sample_contract_passes_with_exit_0_and_a_json_report() {
    let (code, report) = check(&[sample().to_str().unwrap()]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["ok"], true);
    assert_eq!(report["contract"], "sample control plane");
    assert_eq!(report["sends_checked_by"], "registry");
    assert_eq!(report["findings"], json!([]));
    assert_eq!(
        report["catalogue_sha256"],
        declarations::registry().catalogue_sha256().as_str()
    );
}

#[test]
fn a_contract_sending_a_refused_field_and_reading_missing_or_optional_fields_fails_naming_each() {
    let dir = tempfile::tempdir().unwrap();
    let contract = broken_contract(dir.path());
    let (code, report) = check(&[contract.to_str().unwrap()]);
    assert_ne!(code, 0, "{report:#}");
    assert_eq!(report["ok"], false);
    assert_eq!(findings(&report), expected_findings(), "{report:#}");
}

#[test]
fn contract_check_live_checks_against_a_running_node_over_the_pinned_client() {
    let node = Node::new();
    let api = start_api(&node);
    let target = [
        "--live", "--url", &api.url, "--key", &api.key, "--pin", &api.pin,
    ];
    let sample = sample();
    let mut args = vec![sample.to_str().unwrap()];
    args.extend(target);
    let (code, report) = check(&args);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["sends_checked_by"], "request_schema");
    let served = api.client.catalogue().expect("the catalogue");
    assert_eq!(report["catalogue_sha256"], served["sha256"]);
    let dir = tempfile::tempdir().unwrap();
    let contract = broken_contract(dir.path());
    let mut args = vec![contract.to_str().unwrap()];
    args.extend(target);
    let (code, report) = check(&args);
    assert_ne!(code, 0, "{report:#}");
    assert_eq!(findings(&report), expected_findings(), "{report:#}");
    // A wrong pin: no report, a failure before anything is read from the node.
    let wrong = "00".repeat(32);
    #[allow(clippy::disallowed_methods)] // Tests run the real binary.
    let out = Command::new(env!("CARGO_BIN_EXE_layerone"))
        .args(["contract", "check", sample.to_str().unwrap(), "--live"])
        .args(["--url", &api.url, "--key", &api.key, "--pin", &wrong])
        .stdin(Stdio::null())
        .output()
        .expect("layerone runs");
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "{out:?}");
}
