//! What a control plane reads back: a job, its lifecycle state, and the events feed. One
//! definition, shared by the store that produces it, the API that serves it and the client
//! that reads it.

use std::borrow::Cow;

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
    /// The version of the operation on the node that answers ([`crate::CatalogueEntry::sha256`]),
    /// so a control plane can tell which contract a result was made under. Absent in a view
    /// read without a catalogue at hand, and in views stored before it was added.
    #[serde(default)]
    pub operation_sha256: Option<String>,
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

impl JobView {
    /// A request the API holds in its inbox and root has not admitted yet: received at
    /// `received_at_ms`, nothing else known.
    pub fn received(request_id: &str, operation: &str, received_at_ms: i64) -> JobView {
        JobView {
            request_id: request_id.to_owned(),
            operation: operation.to_owned(),
            operation_sha256: None,
            state: JobState::Received,
            resource_id: None,
            generation: None,
            result: None,
            error: None,
            superseded_by: None,
            attempts: 0,
            timings: Timings {
                received_at_ms: Some(received_at_ms),
                ..Timings::default()
            },
        }
    }
}

/// The most bytes of results and errors (as stored JSON) one page of the events feed carries:
/// a page stops before the event that would pass it, and holds at least one event whatever
/// its size, so a page is at most this plus one result beside its `limit` events.
pub const EVENTS_PAGE_RESULT_BYTES: usize = 1 << 20;

/// One entry of the events feed, in the order state.db recorded it: a job's state change
/// (`kind: job`), the runner's drift check finding that the OS no longer shows what
/// state.db records (`drift`) or showing it again (`drift_resolved`), or one of the node's
/// file systems running out of space (`disk_full`) or having it again (`disk_ok`). Job events
/// carry `request_id`, `operation` and `state`, and a `succeeded` one its `result`, a `failed`
/// one its `error`, as the job's view shows them; drift events carry `drift`; disk events
/// carry `disk`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Event {
    /// Pass it as `after` to read the events that follow this one.
    pub cursor: i64,
    pub kind: EventKind,
    pub request_id: Option<String>,
    pub operation: Option<String>,
    pub state: Option<JobState>,
    /// The job's result, on a `succeeded` event only: the object `GET /v1/jobs/{request_id}`
    /// shows as `result` (typed there by the operation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    pub result: Option<Value>,
    /// The job's error, on a `failed` event only: the job view's `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<OpError>,
    pub drift: Option<Drift>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<DiskCondition>,
    pub at_ms: i64,
}

/// One of the node's file systems, by the stable name of what it holds: never a path.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FileSystem {
    /// Root's `state.db` (and its journal), the pass bookkeeping.
    State,
    /// The API's `inbox.db`: where admission writes.
    Inbox,
    /// Uploads (`blobs/in`) and what jobs produce (`blobs/out`).
    Blobs,
}

impl FileSystem {
    pub const ALL: [FileSystem; 3] = [FileSystem::State, FileSystem::Inbox, FileSystem::Blobs];

    pub fn as_str(self) -> &'static str {
        match self {
            FileSystem::State => "state",
            FileSystem::Inbox => "inbox",
            FileSystem::Blobs => "blobs",
        }
    }

    pub fn parse(s: &str) -> Option<FileSystem> {
        FileSystem::ALL.into_iter().find(|f| f.as_str() == s)
    }
}

impl std::fmt::Display for FileSystem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A file system found out of space by the runner (`disk_full`), or with space again
/// (`disk_ok`): reported once per change, not on every pass.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiskCondition {
    pub filesystem: FileSystem,
    /// The bytes an unprivileged writer could still use there when the runner looked.
    pub available_bytes: u64,
}

/// What an entry of the events feed reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    Job,
    Drift,
    DriftResolved,
    DiskFull,
    DiskOk,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Job => "job",
            EventKind::Drift => "drift",
            EventKind::DriftResolved => "drift_resolved",
            EventKind::DiskFull => "disk_full",
            EventKind::DiskOk => "disk_ok",
        }
    }

    pub fn parse(s: &str) -> Option<EventKind> {
        Some(match s {
            "job" => EventKind::Job,
            "drift" => EventKind::Drift,
            "drift_resolved" => EventKind::DriftResolved,
            "disk_full" => EventKind::DiskFull,
            "disk_ok" => EventKind::DiskOk,
            _ => return None,
        })
    }
}

/// A resource recorded in state.db that the OS no longer shows as recorded. Reported once
/// when found, once when it is gone; never repaired by the check (`rebuild_account` repairs).
///
/// What is compared is what each family declares it derives: the files it derives whole,
/// the lines it contributes to a table shared by many resources, and the settings it makes
/// outside files (MariaDB's users and grants).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Drift {
    /// The family whose derivation drifted.
    pub family: String,
    /// The resource that drifted; for what one account's rows derive together (its
    /// `authorized_keys`, FPM pools, crontab) the account's id; `node:` for a table many
    /// resources share that holds a line state.db does not derive (no one resource's).
    pub resource_id: String,
    /// The account id, or `node:` for the node's own resources and shared tables.
    pub owner: String,
    pub aspect: DriftAspect,
    /// One line for an operator.
    pub message: String,
}

/// What about a resource drifted, by its stable name (`vhost_missing`), which the events feed
/// carries. Each family declares the aspects its derivation can find, with what each means
/// (`family!` in the declarations: [`crate::Family::DRIFT_ASPECTS`]), so a new family's are in
/// its own file; the events feed's schema in the OpenAPI document lists the declared ones
/// ([`crate::Registry::drift_aspects`]). The Rust client reads any name; a client generated
/// from the OpenAPI document knows the aspects of its version.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DriftAspect(Cow<'static, str>);

impl DriftAspect {
    /// The aspect named `name`, as a family declares it.
    pub const fn declared(name: &'static str) -> DriftAspect {
        DriftAspect(Cow::Borrowed(name))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Its schema as this type knows it: a name.
    pub(crate) fn name_only_schema() -> Value {
        serde_json::json!({
            "type": "string",
            "description": "What drifted: one of the aspects the families declare."
        })
    }
}

impl std::fmt::Display for DriftAspect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl JsonSchema for DriftAspect {
    fn schema_name() -> Cow<'static, str> {
        "DriftAspect".into()
    }

    fn inline_schema() -> bool {
        true
    }

    /// A name; the OpenAPI document narrows it to the declared ones
    /// ([`crate::openapi::with_declared_aspects`]).
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::Schema::try_from(DriftAspect::name_only_schema()).expect("an object")
    }
}

/// A drift aspect as its family declares it: the aspect and what it means, for an operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeclaredAspect {
    pub aspect: DriftAspect,
    /// Its doc comment's lines, each as written (`family!`).
    pub lines: &'static str,
}

impl DeclaredAspect {
    /// What it means: its doc comment's lines, trimmed, one per line.
    pub fn description(&self) -> String {
        let lines: Vec<&str> = self.lines.lines().map(str::trim).collect();
        lines.join("\n").trim().to_owned()
    }
}

/// A page of the events feed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EventPage {
    pub events: Vec<Event>,
    /// The cursor to ask from next; equal to `after` when nothing happened.
    pub next: i64,
    /// The page stopped before `limit` events because the next one would have passed the
    /// page's budget of result bytes ([`EVENTS_PAGE_RESULT_BYTES`]): more events are there
    /// already, from `next`.
    #[serde(default)]
    pub truncated: bool,
}
