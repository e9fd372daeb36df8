//! The audit trail as a control plane reads it (`GET /v1/audit`): every program the node ran
//! and every node-scope request, in the order state.db recorded them. One definition, shared
//! by the store that writes it, the API that serves it and the client that reads it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What one audit entry records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AuditDetail {
    /// A program the provider ran (or, on a Sim node, simulated).
    Invocation {
        /// The program's symbolic name (`useradd`, `visudo`...).
        program: String,
        /// The absolute path executed.
        path: String,
        /// The argument list; secrets (password hashes) are `<redacted>`.
        args: Vec<String>,
        /// The exit status; absent when it timed out or could not start.
        status: Option<i32>,
        /// Wall time in milliseconds.
        ms: u64,
        /// `real` or `sim`.
        backend: String,
        /// The error code when there was no exit status.
        error: Option<String>,
    },
    /// A node-scope request: once when root admits or rejects it, once when it ends.
    NodeRequest {
        /// The registered action name, or `unknown`.
        action: String,
        stage: NodeRequestStage,
        /// The error code of a rejection or a failure.
        code: Option<String>,
    },
}

/// Where a node-scope request was when it was recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NodeRequestStage {
    Admitted,
    Rejected,
    Succeeded,
    Failed,
}

impl AuditDetail {
    /// The stored `kind` column.
    pub fn kind(&self) -> &'static str {
        match self {
            AuditDetail::Invocation { .. } => "invocation",
            AuditDetail::NodeRequest { .. } => "node_request",
        }
    }
}

/// One entry of the audit trail.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AuditEntry {
    /// Pass it as `after` to read the entries that follow this one.
    pub seq: i64,
    /// Milliseconds since the Unix epoch when it happened (an invocation: when it started).
    pub at_ms: i64,
    /// The job it belongs to, when it belongs to one.
    pub request_id: Option<String>,
    pub detail: AuditDetail,
}

/// A page of the audit trail.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AuditPage {
    pub entries: Vec<AuditEntry>,
    /// The cursor to ask from next; equal to `after` when there is nothing newer.
    pub next: i64,
}
