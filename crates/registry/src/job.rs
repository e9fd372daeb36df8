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

/// Declares [`DriftAspect`] from one list: each variant with its description (which the
/// events feed's schema carries) and its name, which serde writes on the wire and `as_str`
/// returns; `ALL` from the same list.
macro_rules! drift_aspects {
    ($($(#[$doc:meta])* $variant:ident = $name:literal,)*) => {
        /// What about a resource drifted: a closed list, each with what it means. A new kind of
        /// derived file or setting adds its variants here, so the events feed's schema (and the
        /// OpenAPI document derived from it) lists it.
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
        )]
        pub enum DriftAspect {
            $($(#[$doc])* #[serde(rename = $name)] $variant,)*
        }

        impl DriftAspect {
            /// Every aspect, in declaration order.
            pub const ALL: &'static [DriftAspect] = &[$(DriftAspect::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(DriftAspect::$variant => $name,)*
                }
            }
        }
    };
}

drift_aspects! {
    /// The account's user is not in passwd (or no longer carries the node's marker).
    UserMissing = "user_missing",
    /// The account's home is gone.
    HomeMissing = "home_missing",
    /// The web domain's vhost file is gone.
    VhostMissing = "vhost_missing",
    /// The vhost file is not what state.db derives.
    VhostDiffers = "vhost_differs",
    /// The account has SSH keys recorded and no `authorized_keys`.
    AuthorizedKeysMissing = "authorized_keys_missing",
    /// `authorized_keys` is not what state.db derives.
    AuthorizedKeysDiffers = "authorized_keys_differs",
    /// The sudo allowlist is recorded as installed and its drop-in is gone.
    SudoDropinMissing = "sudo_dropin_missing",
    /// pure-ftpd's passwd file does not hold the FTP account's line as recorded.
    FtpLoginMissing = "ftp_login_missing",
    /// The sudo drop-in is not what state.db derives, or is there while the allowlist is recorded as removed.
    SudoDropinDiffers = "sudo_dropin_differs",
    /// pure-ftpd's passwd file holds a line no FTP account derives (a suspended login's among them).
    FtpPasswdDiffers = "ftp_passwd_differs",
    /// A protected directory's `AuthUserFile` is gone.
    AuthUserFileMissing = "auth_user_file_missing",
    /// A protected directory's `AuthUserFile` is not what state.db derives.
    AuthUserFileDiffers = "auth_user_file_differs",
    /// The account's FPM pool for a PHP version its domains use is gone.
    PhpPoolMissing = "php_pool_missing",
    /// An FPM pool of the account is not what state.db derives, or is there for a version none of its domains uses.
    PhpPoolDiffers = "php_pool_differs",
    /// The account has scheduled tasks recorded and no crontab in the cron spool.
    CrontabMissing = "crontab_missing",
    /// The account's crontab is not what state.db derives.
    CrontabDiffers = "crontab_differs",
    /// A certificate's chain file is gone.
    CertificateChainMissing = "certificate_chain_missing",
    /// A certificate's private key file is gone.
    CertificateKeyMissing = "certificate_key_missing",
    /// A certificate's chain and key in place are not a pair for its web domain (the key is another's, or the chain does not parse or name the domain).
    CertificateDiffers = "certificate_differs",
    /// A listener serving a certificate's name (Apache on 443, Dovecot on 993 and 995,
    /// Postfix on 587 for its mail host) presents another certificate than the one recorded.
    ListenerCertificateStale = "listener_certificate_stale",
    /// A Postfix table lacks a line the resource derives.
    PostfixEntryMissing = "postfix_entry_missing",
    /// A Postfix table holds a line state.db does not derive.
    PostfixTableDiffers = "postfix_table_differs",
    /// Dovecot's passwd-file lacks the mailbox's line as state.db derives it.
    DovecotEntryMissing = "dovecot_entry_missing",
    /// Dovecot's passwd-file holds a line state.db does not derive.
    DovecotPasswdDiffers = "dovecot_passwd_differs",
    /// OpenDKIM's KeyTable or SigningTable lacks the DKIM key's line.
    OpenDkimEntryMissing = "open_dkim_entry_missing",
    /// OpenDKIM's KeyTable or SigningTable holds a line state.db does not derive.
    OpenDkimTableDiffers = "open_dkim_table_differs",
    /// A DKIM key's private key file is gone.
    DkimKeyMissing = "dkim_key_missing",
    /// An autoresponder's Sieve script is gone.
    SieveScriptMissing = "sieve_script_missing",
    /// An autoresponder's Sieve script is not what state.db derives.
    SieveScriptDiffers = "sieve_script_differs",
    /// A mail domain's client settings (autoconfig, autodiscover) or their vhost are gone.
    MailClientSettingsMissing = "mail_client_settings_missing",
    /// A mail domain's client settings or their vhost are not what state.db derives.
    MailClientSettingsDiffers = "mail_client_settings_differs",
    /// A recorded database is not in MariaDB.
    MysqlDatabaseMissing = "mysql_database_missing",
    /// A database's character set or collation is not the one recorded.
    MysqlDatabaseDiffers = "mysql_database_differs",
    /// A recorded MariaDB user has no account at any host.
    MysqlUserMissing = "mysql_user_missing",
    /// A MariaDB user's hosts are not the ones recorded.
    MysqlUserDiffers = "mysql_user_differs",
    /// A recorded grant's user has no privilege on its database at one of its hosts.
    MysqlGrantMissing = "mysql_grant_missing",
    /// A grant's privileges in MariaDB are not the ones state.db derives (its set, less the write privileges while the account is over its quota).
    MysqlGrantDiffers = "mysql_grant_differs",
    /// A backup's archive is gone from `blobs/out`.
    BackupMissing = "backup_missing",
    /// A backup's archive in `blobs/out` is not the size recorded.
    BackupDiffers = "backup_differs",
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The aspects are a closed list the events feed's schema states: every one serializes
    /// as its `as_str`, `ALL` holds each once, and the schema (which the OpenAPI document's
    /// `EventPage` is) lists exactly those.
    #[test]
    fn every_drift_aspect_is_in_the_events_schema_under_its_name() {
        let names: Vec<&str> = DriftAspect::ALL.iter().map(|a| a.as_str()).collect();
        for aspect in DriftAspect::ALL {
            assert_eq!(
                serde_json::to_value(aspect).unwrap(),
                Value::from(aspect.as_str())
            );
        }
        let unique: std::collections::BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(unique.len(), names.len(), "an aspect is listed twice");
        let schema = crate::registry::schema_of::<EventPage>();
        let aspect =
            &schema["properties"]["events"]["items"]["properties"]["drift"]["properties"]["aspect"];
        let listed: std::collections::BTreeSet<&str> = aspect["oneOf"]
            .as_array()
            .unwrap_or_else(|| panic!("documented variants are a oneOf: {schema}"))
            .iter()
            .map(|variant| {
                assert!(
                    variant["description"]
                        .as_str()
                        .is_some_and(|d| !d.is_empty()),
                    "an aspect without a description: {variant}"
                );
                variant["const"].as_str().expect("a unit variant's name")
            })
            .collect();
        assert_eq!(listed, unique, "the schema and DriftAspect::ALL differ");
    }
}
