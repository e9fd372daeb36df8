//! The audit trail as a control plane reads it (`GET /v1/audit`): every request the node
//! admitted or rejected, with where it came from ([`Origin`]), and every program the node ran,
//! in the order state.db recorded them. One definition, shared by the store that writes it, the
//! API that serves it and the client that reads it.

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
    /// A tenant-scope request, when root admits or rejects it (its end is on the events feed).
    Request {
        /// The registered operation name, or `unknown`.
        operation: String,
        stage: RequestStage,
        /// The error code of a rejection.
        code: Option<String>,
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

/// Where a tenant-scope request was when it was recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RequestStage {
    Admitted,
    Rejected,
}

/// Where a request came in: which front door took it, and who was behind it as far as that
/// door can tell. The API writes it beside the request in its inbox; root validates it like the
/// rest of the row and records it on the job and on every audit entry of that job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "via", rename_all = "snake_case", deny_unknown_fields)]
pub enum Origin {
    /// The HTTPS API, with the control plane's bearer key.
    Api,
    /// The fleet's broker, where only the control plane may write what a node reads.
    Fleet {
        /// The stream the request was read from: `FLEET_REQ` (the node's queue) or
        /// `KV_fleet_assign` (its assignment).
        stream: String,
        /// The request's sequence number in that stream.
        sequence: u64,
    },
    /// The API's local socket: a session on the machine, by the uid its kernel credentials
    /// (`SO_PEERCRED`) gave.
    Local { uid: u32 },
    /// The node itself (the runner's certificate renewals).
    Node,
}

impl Origin {
    /// The longest stored form a valid origin has; root reads no more of an inbox row's.
    pub const MAX_STORED: usize = 64;

    /// The stored form (compact JSON).
    pub fn stored(&self) -> String {
        serde_json::to_string(self).expect("an origin always serializes")
    }

    /// Parses a stored form, refusing anything longer than [`Origin::MAX_STORED`] and a
    /// stream name other than letters, digits and `_`.
    pub fn parse_stored(text: &str) -> Option<Origin> {
        if text.len() > Origin::MAX_STORED {
            return None;
        }
        let origin: Origin = serde_json::from_str(text).ok()?;
        match &origin {
            Origin::Fleet { stream, .. }
                if stream.is_empty()
                    || !stream
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_') =>
            {
                None
            }
            _ => Some(origin),
        }
    }
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
            AuditDetail::Request { .. } => "request",
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
    /// Where that job's request came in; absent for an entry of no job, and for a job
    /// received before origins were recorded.
    pub origin: Option<Origin>,
    pub detail: AuditDetail,
}

/// A page of the audit trail.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AuditPage {
    pub entries: Vec<AuditEntry>,
    /// The cursor to ask from next; equal to `after` when there is nothing newer.
    pub next: i64,
}
