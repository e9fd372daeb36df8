//! The compatibility gate: the released catalogue against the current one.
//!
//! [`breaking_changes`] lists what the current catalogue breaks of the released one; [`gate`]
//! passes it if it breaks nothing, or if its version is raised and the CHANGELOG's section
//! for that version lists every breaking change.

use serde::Serialize;
use serde_json::Value;

use crate::compare::{self, Difference};

/// A change from one catalogue to the next that can break a control plane written against
/// the first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BreakingChange {
    pub operation: String,
    /// `operation_removed`, `scope_changed`, `request_field_required`,
    /// `request_field_removed`, `request_type_changed`, `request_enum_narrowed`,
    /// `result_field_removed`, `result_made_optional`, `result_type_changed`,
    /// `result_enum_widened`.
    pub kind: String,
    /// `resource.a.b` for a request field, a JSON pointer such as `/a/b` for a result field;
    /// empty for the operation itself.
    pub field: String,
    pub detail: String,
}

/// The operations of a catalogue as `/v1/catalogue` and `layerone catalogue --json` give it.
pub fn operations(catalogue: &Value) -> &[Value] {
    catalogue
        .get("operations")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

pub(crate) fn find<'a>(catalogue: &'a Value, name: &str) -> Option<&'a Value> {
    operations(catalogue)
        .iter()
        .find(|op| op.get("operation").and_then(Value::as_str) == Some(name))
}

/// Every change from `released` to `current` that can break a control plane written against
/// `released`. Additions (operations, optional request fields, result fields, request enum
/// values) are not breaking.
pub fn breaking_changes(released: &Value, current: &Value) -> Vec<BreakingChange> {
    let mut changes = Vec::new();
    for old in operations(released) {
        let name = old
            .get("operation")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let change = |kind: &str, field: String, detail: String| BreakingChange {
            operation: name.to_owned(),
            kind: kind.to_owned(),
            field,
            detail,
        };
        let Some(new) = find(current, name) else {
            changes.push(change(
                "operation_removed",
                String::new(),
                "no operation of this name in the current catalogue".to_owned(),
            ));
            continue;
        };
        if old.get("scope") != new.get("scope") {
            changes.push(change(
                "scope_changed",
                String::new(),
                format!(
                    "scope was {}, now {}",
                    old.get("scope").unwrap_or(&Value::Null),
                    new.get("scope").unwrap_or(&Value::Null)
                ),
            ));
        }
        let mut diffs: Vec<Difference> = Vec::new();
        compare::request(
            schema(old, "request_schema"),
            schema(new, "request_schema"),
            "resource",
            &mut diffs,
        );
        changes.extend(
            diffs
                .drain(..)
                .map(|d| change(&format!("request_{}", d.kind), d.field, d.detail)),
        );
        compare::result(
            schema(old, "result_schema"),
            schema(new, "result_schema"),
            "",
            &mut diffs,
        );
        changes.extend(
            diffs
                .drain(..)
                .map(|d| change(&format!("result_{}", d.kind), d.field, d.detail)),
        );
    }
    changes
}

fn schema<'a>(op: &'a Value, which: &str) -> &'a Value {
    static ANY: Value = Value::Bool(true);
    op.get(which).unwrap_or(&ANY)
}

/// Why the gate refuses the current catalogue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GateRefusal {
    /// Breaking changes while the catalogue's version is still the released one.
    VersionNotRaised {
        version: u64,
        changes: Vec<BreakingChange>,
    },
    /// The version is raised, and these breaking changes are not listed in the CHANGELOG's
    /// section for it.
    NotInChangelog {
        version: u64,
        changes: Vec<BreakingChange>,
    },
    /// The current version is below the released one.
    VersionLowered { released: u64, current: u64 },
}

/// The gate: `current` (at version `current_version`) may follow `released` (at
/// `released_version`) if it breaks nothing, or if its version is raised and the CHANGELOG
/// has a section `## Catalogue version N` with a line naming each breaking change's
/// operation and kind (such as ``- `ensure_account` `result_field_removed`: ...``).
pub fn gate(
    released: &Value,
    released_version: u64,
    current: &Value,
    current_version: u64,
    changelog: &str,
) -> Result<(), GateRefusal> {
    if current_version < released_version {
        return Err(GateRefusal::VersionLowered {
            released: released_version,
            current: current_version,
        });
    }
    let changes = breaking_changes(released, current);
    if changes.is_empty() {
        return Ok(());
    }
    if current_version == released_version {
        return Err(GateRefusal::VersionNotRaised {
            version: current_version,
            changes,
        });
    }
    let section = changelog_section(changelog, current_version);
    let unlisted: Vec<BreakingChange> = changes
        .into_iter()
        .filter(|c| {
            !section.iter().any(|line| {
                line.contains(&format!("`{}`", c.operation))
                    && line.contains(&format!("`{}`", c.kind))
            })
        })
        .collect();
    if unlisted.is_empty() {
        Ok(())
    } else {
        Err(GateRefusal::NotInChangelog {
            version: current_version,
            changes: unlisted,
        })
    }
}

/// The lines of the CHANGELOG's `## Catalogue version N` section.
fn changelog_section(changelog: &str, version: u64) -> Vec<&str> {
    let heading = format!("## Catalogue version {version}");
    changelog
        .lines()
        .skip_while(|l| l.trim() != heading)
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .collect()
}
