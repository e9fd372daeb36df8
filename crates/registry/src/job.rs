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

/// One entry of the events feed, in the order state.db recorded it: a job's state change
/// (`kind: job`), or the runner's drift check finding that the OS no longer shows what
/// state.db records (`drift`) or showing it again (`drift_resolved`). Job events carry
/// `request_id`, `operation` and `state`; drift events carry `drift`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Event {
    /// Pass it as `after` to read the events that follow this one.
    pub cursor: i64,
    pub kind: EventKind,
    pub request_id: Option<String>,
    pub operation: Option<String>,
    pub state: Option<JobState>,
    pub drift: Option<Drift>,
    pub at_ms: i64,
}

/// What an entry of the events feed reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    Job,
    Drift,
    DriftResolved,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Job => "job",
            EventKind::Drift => "drift",
            EventKind::DriftResolved => "drift_resolved",
        }
    }

    pub fn parse(s: &str) -> Option<EventKind> {
        Some(match s {
            "job" => EventKind::Job,
            "drift" => EventKind::Drift,
            "drift_resolved" => EventKind::DriftResolved,
            _ => return None,
        })
    }
}

/// A resource recorded in state.db that the OS no longer shows as recorded. Reported once
/// when found, once when it is gone; never repaired by the check (`rebuild_account` repairs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Drift {
    /// The family of the resource that drifted.
    pub family: String,
    pub resource_id: String,
    /// The account id, or `node:` for the node's own resources.
    pub owner: String,
    pub aspect: DriftAspect,
    /// One line for an operator.
    pub message: String,
}

/// What about a resource drifted.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum DriftAspect {
    /// The account's user is not in passwd (or no longer carries the node's marker).
    UserMissing,
    /// The account's home is gone.
    HomeMissing,
    /// The web domain's vhost file is gone.
    VhostMissing,
    /// The vhost file is not what state.db derives.
    VhostDiffers,
    /// The account has SSH keys recorded and no `authorized_keys`.
    AuthorizedKeysMissing,
    /// `authorized_keys` is not what state.db derives.
    AuthorizedKeysDiffers,
    /// The sudo allowlist is recorded as installed and its drop-in is gone.
    SudoDropinMissing,
    /// pure-ftpd's passwd file does not hold the FTP account's line as recorded.
    FtpLoginMissing,
}

impl DriftAspect {
    pub fn as_str(self) -> &'static str {
        match self {
            DriftAspect::UserMissing => "user_missing",
            DriftAspect::HomeMissing => "home_missing",
            DriftAspect::VhostMissing => "vhost_missing",
            DriftAspect::VhostDiffers => "vhost_differs",
            DriftAspect::AuthorizedKeysMissing => "authorized_keys_missing",
            DriftAspect::AuthorizedKeysDiffers => "authorized_keys_differs",
            DriftAspect::SudoDropinMissing => "sudo_dropin_missing",
            DriftAspect::FtpLoginMissing => "ftp_login_missing",
        }
    }
}

/// A page of the events feed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EventPage {
    pub events: Vec<Event>,
    /// The cursor to ask from next; equal to `after` when nothing happened.
    pub next: i64,
}
