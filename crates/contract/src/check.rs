//! `contract check`: a control plane's contract against a node's catalogue.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::compare::{self, Difference, non_null, non_null_values, show, show_values};
use crate::gate::find;
use crate::schema::{
    enumerated, items, merged, open, property, types, types_within, values_within,
};

/// What a control plane depends on, per operation.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Contract {
    /// The control plane's name, for the report.
    pub name: String,
    pub operations: BTreeMap<String, OperationContract>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OperationContract {
    /// Example requests (the `resource` of the envelope) the control plane sends.
    #[serde(default)]
    pub sends: Vec<Value>,
    /// A JSON Schema of every `resource` the control plane may send.
    #[serde(default)]
    pub send_schema: Option<Value>,
    /// What it reads from the result.
    #[serde(default)]
    pub reads: Vec<Read>,
}

/// One value the control plane reads from an operation's result.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Read {
    /// A JSON pointer into the result, such as `/quota/enforced`.
    pub pointer: String,
    /// The JSON type it expects (`string`, `integer`, `number`, `boolean`, `object`,
    /// `array`, `null`), or a list of them.
    #[serde(rename = "type")]
    pub types: OneOrMany,
    /// Whether the control plane copes with the value being absent or `null`.
    #[serde(default)]
    pub optional: bool,
    /// The values it handles, if it handles a closed list.
    #[serde(default, rename = "enum")]
    pub values: Option<Vec<Value>>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn set(&self) -> std::collections::BTreeSet<String> {
        match self {
            OneOrMany::One(t) => [t.clone()].into(),
            OneOrMany::Many(ts) => ts.iter().cloned().collect(),
        }
    }
}

/// Why a node would refuse a request: its error code and field, as its API answers them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Refusal {
    pub code: String,
    pub field: String,
    pub message: String,
}

/// How sends are checked: with the node's own validation, or with its request schema.
pub trait Sends {
    /// `refused_by` in the report: `registry` or `request_schema`.
    fn name(&self) -> &'static str;
    /// The node's refusal of `resource` for `operation` (whose catalogue entry is `entry`).
    fn refusal(&self, operation: &str, entry: &Value, resource: &Value) -> Option<Refusal>;
}

/// Sends checked against the catalogue entry's request schema (a catalogue file or a live
/// node's): the first failing keyword, named as the node names fields (`resource.a.b`).
pub struct RequestSchema;

impl Sends for RequestSchema {
    fn name(&self) -> &'static str {
        "request_schema"
    }

    fn refusal(&self, _operation: &str, entry: &Value, resource: &Value) -> Option<Refusal> {
        let schema = entry.get("request_schema").unwrap_or(&Value::Bool(true));
        let validator = match jsonschema::validator_for(schema) {
            Ok(v) => v,
            Err(e) => {
                return Some(Refusal {
                    code: "invalid_request_schema".to_owned(),
                    field: String::new(),
                    message: format!("the catalogue's request schema does not compile: {e}"),
                });
            }
        };
        let error = validator.iter_errors(resource).next()?;
        let mut field: Vec<String> = vec!["resource".to_owned()];
        field.extend(
            error
                .instance_path()
                .to_string()
                .split('/')
                .filter(|p| !p.is_empty())
                .map(str::to_owned),
        );
        let code = match error.kind() {
            jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } => {
                field.extend(unexpected.first().cloned());
                "unknown_field"
            }
            jsonschema::error::ValidationErrorKind::Required { property } => {
                field.extend(property.as_str().map(str::to_owned));
                "missing_field"
            }
            _ => "invalid_field",
        };
        Some(Refusal {
            code: code.to_owned(),
            field: field.join("."),
            message: error.to_string(),
        })
    }
}

/// One thing the contract depends on that the node does not give.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub operation: String,
    /// `unknown_operation` (the node has no such operation), `refused_send` (an example
    /// the node refuses, with `refusal`), `send_schema` (the send schema admits a request the
    /// node refuses, with the node's code in `refusal`), or for a read: `missing`,
    /// `optional` (may be absent or `null` where the control plane requires it), `type`,
    /// `narrower_enum` (the node may give a value outside the ones the control plane
    /// handles).
    pub kind: String,
    /// Which example (`sends[i]`) or read pointer.
    pub at: String,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refusal: Option<Refusal>,
}

/// The JSON report `contract check` prints.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub contract: String,
    pub catalogue_sha256: Option<String>,
    /// How sends were checked: `registry` (this build's own validation) or `request_schema`.
    pub sends_checked_by: &'static str,
    pub ok: bool,
    pub findings: Vec<Finding>,
}

/// Checks `contract` against `catalogue` (as `/v1/catalogue` gives it).
pub fn check(contract: &Contract, catalogue: &Value, sends: &dyn Sends) -> Report {
    let mut findings = Vec::new();
    for (operation, wants) in &contract.operations {
        let finding = |kind: &str, at: String, detail: String, refusal: Option<Refusal>| Finding {
            operation: operation.clone(),
            kind: kind.to_owned(),
            at,
            detail,
            refusal,
        };
        let Some(entry) = find(catalogue, operation) else {
            findings.push(finding(
                "unknown_operation",
                String::new(),
                "the node's catalogue has no operation of this name".to_owned(),
                None,
            ));
            continue;
        };
        for (i, resource) in wants.sends.iter().enumerate() {
            if let Some(refusal) = sends.refusal(operation, entry, resource) {
                findings.push(finding(
                    "refused_send",
                    format!("sends[{i}]"),
                    format!("the node refuses it: {}", refusal.message),
                    Some(refusal),
                ));
            }
        }
        if let Some(send_schema) = &wants.send_schema {
            let mut diffs = Vec::new();
            compare::request(
                send_schema,
                entry.get("request_schema").unwrap_or(&Value::Bool(true)),
                "resource",
                &mut diffs,
            );
            for Difference {
                kind,
                field,
                detail,
            } in diffs
            {
                let code = match kind {
                    "field_required" => "missing_field",
                    "field_removed" => "unknown_field",
                    _ => "invalid_field",
                };
                findings.push(finding(
                    "send_schema",
                    field.clone(),
                    detail.clone(),
                    Some(Refusal {
                        code: code.to_owned(),
                        field,
                        message: detail,
                    }),
                ));
            }
        }
        let result_schema = entry.get("result_schema").unwrap_or(&Value::Bool(true));
        for read in &wants.reads {
            if let Some((kind, detail)) = read_finding(result_schema, read) {
                findings.push(finding(kind, read.pointer.clone(), detail, None));
            }
        }
    }
    Report {
        contract: contract.name.clone(),
        catalogue_sha256: catalogue
            .get("sha256")
            .and_then(Value::as_str)
            .map(str::to_owned),
        sends_checked_by: sends.name(),
        ok: findings.is_empty(),
        findings,
    }
}

/// What the result schema does not guarantee of one read, if anything.
fn read_finding(result_schema: &Value, read: &Read) -> Option<(&'static str, String)> {
    let mut schema = result_schema.clone();
    let mut may_be_absent = false;
    if !read.pointer.is_empty() && !read.pointer.starts_with('/') {
        return Some((
            "missing",
            "not a JSON pointer (it must start with `/`)".to_owned(),
        ));
    }
    for segment in read.pointer.split('/').skip(1) {
        let name = segment.replace("~1", "/").replace("~0", "~");
        may_be_absent |= compare::nullable(&schema);
        let next = if let Some(item) = items(&schema).filter(|_| name.parse::<usize>().is_ok()) {
            // An array may be shorter than the index read.
            may_be_absent = true;
            Some(item.clone())
        } else {
            let found = property(&schema, &name);
            if found.schemas.is_empty() {
                None
            } else {
                may_be_absent |= found.may_be_absent;
                Some(merged(&found.schemas))
            }
        };
        match next {
            Some(next) => schema = next,
            None => {
                let why = if open(&schema) {
                    "the result schema does not declare it (the object may hold others)"
                } else {
                    "the result schema has no such field"
                };
                return Some(("missing", why.to_owned()));
            }
        }
    }
    let wanted = read.types.set();
    let takes_null = read.optional || wanted.contains("null");
    if (may_be_absent || compare::nullable(&schema)) && !takes_null {
        return Some((
            "optional",
            "the node may leave it out or give null; the control plane requires it".to_owned(),
        ));
    }
    let given = non_null(types(&schema));
    if !types_within(&given, &Some(wanted.clone())) {
        return Some((
            "type",
            format!(
                "the node gives {}, the control plane reads {}",
                show(&given),
                show(&Some(wanted))
            ),
        ));
    }
    if read.values.is_some() {
        let given = non_null_values(enumerated(&schema));
        if !values_within(&given, &read.values) {
            return Some((
                "narrower_enum",
                format!(
                    "the node may give {}, the control plane handles {}",
                    show_values(&given),
                    show_values(&read.values)
                ),
            ));
        }
    }
    None
}
