//! The `backup` family's declarations: an account's home and databases archived into
//! `blobs/out`, restored from an uploaded blob, and removed.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::backup`.

use registry::types::{BlobId, Hex32, Presence};
use registry::{Family, Module, Operation, Owner, Resource, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub struct Backup;

impl Family for Backup {
    const NAME: &'static str = "backup";
    const MODULE: Module = Module::Backup;
}

// --- create --------------------------------------------------------------------------------

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateAccountBackupRequest {
    /// The backup's id; creating it again replaces its archive.
    pub id: Hex32,
    pub account: Hex32,
}

impl Resource for CreateAccountBackupRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackupResult {
    pub state: Presence,
    /// The archive's SHA-256: its name in `blobs/out`, downloadable as `/v1/blobs/{blob}`.
    pub blob: Option<BlobId>,
    /// Its size in bytes (gzip-compressed tar).
    pub size: u64,
    pub files: u64,
    pub dirs: u64,
    pub symlinks: u64,
    /// Bytes of file content stored in the home's part (holes excluded: what it costs).
    pub bytes: u64,
    /// The files' sizes added up, holes included (what a restore brings back).
    #[serde(default)]
    pub apparent_bytes: u64,
    /// Files stored as their data regions, their holes kept as holes.
    #[serde(default)]
    pub sparse_files: u64,
    /// Entries of the home left out: sockets, FIFOs, devices, mount points, and symlinks
    /// pointing outside the home (absolute or escaping), which a restore would refuse.
    pub skipped: u64,
    /// Directories and files the tenant itself could not read (mode 000, or made so while
    /// the home was read), left out of the archive.
    #[serde(default)]
    pub unreadable: u64,
    /// True only for an archive that holds every directory and file of the home it was
    /// meant to (`unreadable` is 0); false when something was left out, and for a removal.
    #[serde(default)]
    pub complete: bool,
    /// The databases dumped into it (full names).
    pub databases: Vec<String>,
    pub created_at_ms: Option<i64>,
}

pub struct CreateAccountBackup;

impl Operation for CreateAccountBackup {
    const NAME: &'static str = "create_account_backup";
    const SCOPE: Scope = Scope::Tenant;
    const LANE: registry::Lane = registry::Lane::Long;
    const SUMMARY: &'static str =
        "Archive the account's home and databases into a compressed blob in blobs/out";
    type Family = Backup;
    type Request = CreateAccountBackupRequest;
    type Result = BackupResult;

    fn example() -> CreateAccountBackupRequest {
        CreateAccountBackupRequest {
            id: "b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4"
                .parse()
                .expect("valid example"),
            account: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
                .parse()
                .expect("valid example"),
        }
    }
}

// --- remove --------------------------------------------------------------------------------

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveAccountBackupRequest {
    pub id: Hex32,
    pub account: Hex32,
}

impl Resource for RemoveAccountBackupRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

pub struct RemoveAccountBackup;

impl Operation for RemoveAccountBackup {
    const NAME: &'static str = "remove_account_backup";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Delete a backup's archive from blobs/out";
    type Family = Backup;
    type Request = RemoveAccountBackupRequest;
    type Result = BackupResult;

    fn example() -> RemoveAccountBackupRequest {
        RemoveAccountBackupRequest {
            id: "b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4"
                .parse()
                .expect("valid example"),
            account: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
                .parse()
                .expect("valid example"),
        }
    }
}

// --- restore -------------------------------------------------------------------------------

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestoreAccountBackupRequest {
    /// The restore's id (a job key; nothing is recorded under it).
    pub id: Hex32,
    pub account: Hex32,
    /// The archive's SHA-256, uploaded to `blobs/in` (`PUT /v1/blobs/{sha256}`).
    pub blob: BlobId,
}

impl Resource for RestoreAccountBackupRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestoreResult {
    /// The archive restored.
    pub blob: BlobId,
    pub files: u64,
    pub dirs: u64,
    pub symlinks: u64,
    /// Bytes of file content written (holes excluded).
    pub bytes: u64,
    /// The files' sizes, holes included.
    #[serde(default)]
    pub apparent_bytes: u64,
    /// Files restored with their holes as holes.
    #[serde(default)]
    pub sparse_files: u64,
    /// The databases whose dumps were imported.
    pub databases: Vec<String>,
    /// Statements run across those imports.
    pub statements: u64,
}

pub struct RestoreAccountBackup;

impl Operation for RestoreAccountBackup {
    const NAME: &'static str = "restore_account_backup";
    const SCOPE: Scope = Scope::Tenant;
    const LANE: registry::Lane = registry::Lane::Long;
    const SUMMARY: &'static str =
        "Restore an uploaded backup archive into the account's home and databases, as the tenant";
    type Family = Backup;
    type Request = RestoreAccountBackupRequest;
    type Result = RestoreResult;

    fn example() -> RestoreAccountBackupRequest {
        RestoreAccountBackupRequest {
            id: "c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5"
                .parse()
                .expect("valid example"),
            account: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
                .parse()
                .expect("valid example"),
            blob: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
                .parse()
                .expect("valid example"),
        }
    }
}
