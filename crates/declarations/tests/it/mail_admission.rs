//! Hostile values in every string field of every mail operation are refused at admission
//! (the registry's validation, which the API and the runner both run) with the field named:
//! quotes, backticks, NUL, newline, CRLF, a Unicode look-alike, an overlong value.

use serde_json::{Value, json};

const MAIL_FAMILIES: &[&str] = &[
    "mail_domain",
    "mailbox",
    "mail_forwarder",
    "autoresponder",
    "dkim_key",
    "spam_filter",
];

/// Every string in `value` with its path (`resource.destinations[0]`).
fn strings(value: &Value, path: String, out: &mut Vec<(String, String)>) {
    match value {
        Value::String(s) => out.push((path, s.clone())),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                strings(item, format!("{path}[{i}]"), out);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                strings(v, format!("{path}.{k}"), out);
            }
        }
        _ => {}
    }
}

fn set(value: &mut Value, path: &str, new: &str) {
    let mut cursor = value;
    for part in path.trim_start_matches("resource.").split('.') {
        let (key, index) = match part.split_once('[') {
            Some((k, i)) => (k, Some(i.trim_end_matches(']').parse::<usize>().unwrap())),
            None => (part, None),
        };
        cursor = &mut cursor[key];
        if let Some(i) = index {
            cursor = &mut cursor[i];
        }
    }
    *cursor = json!(new);
}

/// The hostile variants of a valid `original`: each keeps the field's shape otherwise, so
/// the refusal is for the hostile part.
fn hostile(original: &str) -> Vec<(&'static str, String)> {
    let (head, tail) = match original.split_once('@') {
        Some((local, domain)) => (local.to_owned(), format!("@{domain}")),
        None => (original.to_owned(), String::new()),
    };
    let with = |insert: &str| format!("{head}{insert}{tail}");
    vec![
        ("double quote", with("\"")),
        ("single quote", with("'")),
        ("backtick", with("`")),
        ("NUL", with("\0")),
        ("newline", with("\n")),
        ("CRLF", with("\r\n")),
        // Cyrillic 'а' in place of the first character.
        ("Unicode look-alike", format!("а{}{tail}", &head[1..])),
        ("overlong", with(&"a".repeat(9000))),
    ]
}

/// Free text (the autoresponder's subject and body) may hold quotes and any script; only
/// control characters (the subject: all of them; the body: all but newline and tab) and
/// overlong values are refused. A domain name may be Unicode: it is stored as punycode.
fn allowed(field: &str, what: &str) -> bool {
    match field {
        "resource.subject" => !matches!(what, "NUL" | "newline" | "CRLF" | "overlong"),
        "resource.body" => !matches!(what, "NUL" | "CRLF" | "overlong"),
        "resource.domain" => what == "Unicode look-alike",
        _ => false,
    }
}

#[test]
fn hostile_values_in_every_mail_field_are_refused_naming_the_field() {
    let registry = declarations::registry();
    let node: registry::Hex32 = "0000000000000000000000000000feed".parse().unwrap();
    let mut checked = 0;
    for op in registry
        .operations()
        .filter(|op| MAIL_FAMILIES.contains(&op.family()))
    {
        let example = op.example();
        let mut fields = Vec::new();
        strings(&example, "resource".into(), &mut fields);
        assert!(!fields.is_empty(), "{} has no string field", op.name());
        for (field, original) in fields {
            for (what, value) in hostile(&original) {
                let mut resource = example.clone();
                set(&mut resource, &field, &value);
                let body = json!({"request_id": format!("{:032x}", checked + 1), "operation": op.name(), "resource": resource});
                let outcome = registry.validate(body.to_string().as_bytes(), &node);
                if allowed(&field, what) {
                    assert!(outcome.is_ok(), "{}: {what} at {field} refused", op.name());
                    continue;
                }
                let err = match outcome {
                    Ok(_) => panic!("{}: {what} at {field} was accepted: {value:?}", op.name()),
                    Err(err) => err,
                };
                assert_eq!(
                    err.code,
                    "invalid_field",
                    "{}: {what} at {field}",
                    op.name()
                );
                assert_eq!(err.field, field, "{}: {what} at {field}", op.name());
                checked += 1;
            }
        }
    }
    assert!(checked > 150, "only {checked} refusals checked");
}
