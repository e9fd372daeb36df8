//! What a control plane reads back: a job, its lifecycle state, and the events feed. One
//! definition, shared by the store that produces it, the API that serves it and the client
//! that reads it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::OpError;

/// `received` (in inbox.db) → `queued` (admitted into state.db) → `running` → `succeeded` |
/// `failed`; or `superseded` by a newer request for the same resource while still queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    Received,
    Queued,
    Running,
    Succeeded,
    Failed,
    Superseded,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Received => "received",
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Succeeded => "succeeded",
            JobState::Failed => "failed",
            JobState::Superseded => "superseded",
        }
    }

    pub fn parse(s: &str) -> Option<JobState> {
        Some(match s {
            "received" => JobState::Received,
            "queued" => JobState::Queued,
            "running" => JobState::Running,
            "succeeded" => JobState::Succeeded,
            "failed" => JobState::Failed,
            "superseded" => JobState::Superseded,
            _ => return None,
        })
    }

    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            JobState::Succeeded | JobState::Failed | JobState::Superseded
        )
    }
}

/// Milliseconds since the Unix epoch at each step a job has reached.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Timings {
    pub received_at_ms: Option<i64>,
    pub queued_at_ms: Option<i64>,
    pub started_at_ms: Option<i64>,
    pub finished_at_ms: Option<i64>,
}

/// A job as `GET /v1/jobs/{request_id}` returns it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JobView {
    pub request_id: String,
    pub operation: String,
    pub state: JobState,
    /// Stamped by the store from the validated request; absent while only received.
    pub resource_id: Option<String>,
    /// The resource's generation this job was admitted as.
    pub generation: Option<i64>,
    pub result: Option<Value>,
    pub error: Option<OpError>,
    /// The request id of the newer job that superseded this one.
    pub superseded_by: Option<String>,
    pub attempts: i64,
    pub timings: Timings,
}

/// One change of a job's state, in the order state.db recorded it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Event {
    /// Pass it as `after` to read the events that follow this one.
    pub cursor: i64,
    pub request_id: String,
    pub operation: String,
    pub state: JobState,
    pub at_ms: i64,
}

/// A page of the events feed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EventPage {
    pub events: Vec<Event>,
    /// The cursor to ask from next; equal to `after` when nothing happened.
    pub next: i64,
}
