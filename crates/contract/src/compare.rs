//! Schema against schema: what one side sends against what the other accepts (requests), and
//! what one side guaranteed against what the other guarantees (results).

use std::collections::BTreeSet;

use serde_json::Value;

use crate::schema::{
    enumerated, items, merged, open, property, property_names, types, types_within, values_within,
};

/// One difference between two schemas that can break a caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Difference {
    /// `field_removed`, `field_required`, `type_changed`, `enum_narrowed` (requests);
    /// `field_removed`, `made_optional`, `type_changed`, `enum_widened` (results).
    pub kind: &'static str,
    /// Where, as the node names fields: `resource.a.b` for a request, `/a/b` for a result.
    pub field: String,
    pub detail: String,
}

/// What `sent` may hold that `accepting` refuses: a field `accepting` requires that `sent` may
/// leave out, a field it does not know (when it takes no others), a type or value it does not
/// take. `sent` is the older request schema (or a control plane's schema of its sends).
pub(crate) fn request(sent: &Value, accepting: &Value, field: &str, out: &mut Vec<Difference>) {
    let (sent_types, accepted_types) = (types(sent), types(accepting));
    if !types_within(&sent_types, &accepted_types) {
        out.push(Difference {
            kind: "type_changed",
            field: field.to_owned(),
            detail: format!(
                "sent as {}, taken as {}",
                show(&sent_types),
                show(&accepted_types)
            ),
        });
        return;
    }
    if !values_within(&enumerated(sent), &enumerated(accepting)) {
        out.push(Difference {
            kind: "enum_narrowed",
            field: field.to_owned(),
            detail: format!(
                "sent values {}, taken values {}",
                show_values(&enumerated(sent)),
                show_values(&enumerated(accepting))
            ),
        });
        return;
    }
    for name in property_names(accepting) {
        let (was, is) = (property(sent, name), property(accepting, name));
        if !is.may_be_absent && was.may_be_absent {
            out.push(Difference {
                kind: "field_required",
                field: join_dotted(field, name),
                detail: "required, and may be left out by the sender".to_owned(),
            });
        }
    }
    for name in property_names(sent) {
        let (was, is) = (property(sent, name), property(accepting, name));
        if is.schemas.is_empty() {
            if !open(accepting) {
                out.push(Difference {
                    kind: "field_removed",
                    field: join_dotted(field, name),
                    detail: "sent, and not a field the receiver takes".to_owned(),
                });
            }
            continue;
        }
        request(
            &merged(&was.schemas),
            &merged(&is.schemas),
            &join_dotted(field, name),
            out,
        );
    }
    if let (Some(sent), Some(accepting)) = (items(sent), items(accepting)) {
        request(sent, accepting, &format!("{field}[]"), out);
    }
}

/// What `giving` does not guarantee that `guaranteed` did: a field gone, a field that may now
/// be absent or `null`, a type or a value outside what was given before.
pub(crate) fn result(guaranteed: &Value, giving: &Value, pointer: &str, out: &mut Vec<Difference>) {
    let (old, new) = (non_null(types(guaranteed)), non_null(types(giving)));
    if !types_within(&new, &old) {
        out.push(Difference {
            kind: "type_changed",
            field: or_root(pointer),
            detail: format!("was {}, now {}", show(&old), show(&new)),
        });
        return;
    }
    let (old_values, new_values) = (
        non_null_values(enumerated(guaranteed)),
        non_null_values(enumerated(giving)),
    );
    if !values_within(&new_values, &old_values) {
        out.push(Difference {
            kind: "enum_widened",
            field: or_root(pointer),
            detail: format!(
                "was one of {}, now one of {}",
                show_values(&old_values),
                show_values(&new_values)
            ),
        });
        return;
    }
    for name in property_names(guaranteed) {
        let (was, is) = (property(guaranteed, name), property(giving, name));
        let here = format!("{pointer}/{}", escape(name));
        if is.schemas.is_empty() {
            out.push(Difference {
                kind: "field_removed",
                field: here,
                detail: "no longer in the result".to_owned(),
            });
            continue;
        }
        let (was_schema, is_schema) = (merged(&was.schemas), merged(&is.schemas));
        let was_present = !was.may_be_absent && !nullable(&was_schema);
        if was_present && (is.may_be_absent || nullable(&is_schema)) {
            out.push(Difference {
                kind: "made_optional",
                field: here.clone(),
                detail: "was always present, now may be absent or null".to_owned(),
            });
        }
        result(&was_schema, &is_schema, &here, out);
    }
    if let (Some(was), Some(is)) = (items(guaranteed), items(giving)) {
        result(was, is, &format!("{pointer}/0"), out);
    }
}

pub(crate) fn nullable(schema: &Value) -> bool {
    types(schema).is_some_and(|t| t.contains("null"))
}

pub(crate) fn non_null(types: Option<BTreeSet<String>>) -> Option<BTreeSet<String>> {
    types.map(|mut t| {
        t.remove("null");
        t
    })
}

pub(crate) fn non_null_values(values: Option<Vec<Value>>) -> Option<Vec<Value>> {
    values.map(|v| v.into_iter().filter(|v| !v.is_null()).collect())
}

pub(crate) fn show(types: &Option<BTreeSet<String>>) -> String {
    match types {
        None => "any type".to_owned(),
        Some(t) => t.iter().cloned().collect::<Vec<_>>().join("|"),
    }
}

pub(crate) fn show_values(values: &Option<Vec<Value>>) -> String {
    match values {
        None => "any value".to_owned(),
        Some(v) => Value::Array(v.clone()).to_string(),
    }
}

fn join_dotted(field: &str, name: &str) -> String {
    format!("{field}.{name}")
}

fn or_root(pointer: &str) -> String {
    if pointer.is_empty() {
        "/".to_owned()
    } else {
        pointer.to_owned()
    }
}

/// A property name as a JSON pointer segment (RFC 6901).
pub(crate) fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}
