//! The schema walk both the contract check and the gate use: what a JSON Schema of the
//! catalogue (draft 2020-12 as the registry writes it: `type`, `enum`, `const`,
//! `properties`, `required`, `additionalProperties`, `items`, `oneOf`/`anyOf`/`allOf`, no
//! `$ref`) says a value may be.

use std::collections::BTreeSet;

use serde_json::Value;

/// The JSON types a schema admits (`integer` is also a `number`); `None`: any.
pub(crate) fn types(schema: &Value) -> Option<BTreeSet<String>> {
    if let Some(branches) = branches(schema) {
        let mut all = BTreeSet::new();
        for branch in branches {
            all.extend(types(branch)?);
        }
        return Some(all);
    }
    if let Some(values) = enumerated(schema) {
        return Some(values.iter().map(type_of).collect());
    }
    match schema.get("type") {
        Some(Value::String(t)) => Some(BTreeSet::from([t.clone()])),
        Some(Value::Array(ts)) => Some(
            ts.iter()
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect(),
        ),
        _ if schema.get("properties").is_some() => Some(BTreeSet::from(["object".to_owned()])),
        _ => None,
    }
}

/// The values a schema admits when it lists them (`enum`, `const`, or branches that all do).
pub(crate) fn enumerated(schema: &Value) -> Option<Vec<Value>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Some(values.clone());
    }
    if let Some(value) = schema.get("const") {
        return Some(vec![value.clone()]);
    }
    let mut all = Vec::new();
    for branch in branches(schema)? {
        all.extend(enumerated(branch)?);
    }
    Some(all)
}

/// The branches of a `oneOf`/`anyOf` (or a one-branch `allOf`), if the schema is one.
pub(crate) fn branches(schema: &Value) -> Option<&Vec<Value>> {
    ["oneOf", "anyOf"]
        .iter()
        .find_map(|k| schema.get(*k).and_then(Value::as_array))
        .or_else(|| {
            schema
                .get("allOf")
                .and_then(Value::as_array)
                .filter(|a| a.len() == 1)
        })
}

pub(crate) fn type_of(value: &Value) -> String {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
    .to_owned()
}

/// Whether every type in `narrow` is one of `wide` (an `integer` is a `number`; `None`: any).
pub(crate) fn types_within(
    narrow: &Option<BTreeSet<String>>,
    wide: &Option<BTreeSet<String>>,
) -> bool {
    match (narrow, wide) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some(narrow), Some(wide)) => narrow
            .iter()
            .all(|t| wide.contains(t) || (t == "integer" && wide.contains("number"))),
    }
}

/// Whether every value `narrow` admits is one `wide` admits (`None`: unlisted, any).
pub(crate) fn values_within(narrow: &Option<Vec<Value>>, wide: &Option<Vec<Value>>) -> bool {
    match (narrow, wide) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some(narrow), Some(wide)) => narrow.iter().all(|v| wide.contains(v)),
    }
}

/// What a schema says of one property of an object value: its schema in each branch the
/// value may take, and whether it may be absent (not required, or missing from a branch).
pub(crate) struct Property<'a> {
    /// The property's schema in each branch that declares it; empty: no branch does.
    pub schemas: Vec<&'a Value>,
    pub may_be_absent: bool,
}

/// The object branches of a schema: itself, or each of its `oneOf`/`anyOf` branches.
fn object_branches(schema: &Value) -> Vec<&Value> {
    match branches(schema) {
        Some(bs) => bs.iter().flat_map(object_branches).collect(),
        None => vec![schema],
    }
}

pub(crate) fn property<'a>(schema: &'a Value, name: &str) -> Property<'a> {
    let mut found = Property {
        schemas: Vec::new(),
        may_be_absent: false,
    };
    for branch in object_branches(schema) {
        match branch.get("properties").and_then(|p| p.get(name)) {
            Some(s) => {
                found.schemas.push(s);
                if !required(branch).contains(name) {
                    found.may_be_absent = true;
                }
            }
            None => found.may_be_absent = true,
        }
    }
    found
}

pub(crate) fn required(schema: &Value) -> BTreeSet<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Every property name any object branch of the schema declares.
pub(crate) fn property_names(schema: &Value) -> BTreeSet<&str> {
    object_branches(schema)
        .into_iter()
        .filter_map(|b| b.get("properties").and_then(Value::as_object))
        .flat_map(|p| p.keys().map(String::as_str))
        .collect()
}

/// Whether an object value may carry properties the schema does not declare.
pub(crate) fn open(schema: &Value) -> bool {
    object_branches(schema)
        .iter()
        .any(|b| b.get("additionalProperties") != Some(&Value::Bool(false)))
}

/// A property's schemas merged into one (`anyOf` of them) for the type and value checks.
pub(crate) fn merged(schemas: &[&Value]) -> Value {
    match schemas {
        [one] => (*one).clone(),
        many => serde_json::json!({ "anyOf": many }),
    }
}

/// The schema of an array's items, if it declares one.
pub(crate) fn items(schema: &Value) -> Option<&Value> {
    schema.get("items").filter(|i| i.is_object())
}
