//! The `backup` family's declarations: an account's home and databases archived into
//! `blobs/out`, restored from an uploaded blob, and removed.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::backup`.

use registry::types::{BlobId, Hex32, Presence};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::account::EnsureAccount;
use crate::declare::{family, impl_resource, operation};
use crate::example;
use crate::resource::AccountResource;

family! {
    pub struct Backup {
        name: "backup",
        module: Backup,
        drift: {
            /// A backup's archive is gone from `blobs/out`.
            BACKUP_MISSING = "backup_missing",
            /// A backup's archive in `blobs/out` is not the size recorded.
            BACKUP_DIFFERS = "backup_differs",
        },
    }
}

// --- create --------------------------------------------------------------------------------

/// The backup's id (creating it again replaces its archive) and its account.
pub type CreateAccountBackupRequest = AccountResource;

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

/// The example backup's id byte.
const BACKUP: u8 = 0xb4;

operation! {
    pub struct CreateAccountBackup {
        name: "create_account_backup",
        kind: Snapshot,
        lane: Long,
        family: Backup,
        summary: "Archive the account's home and databases into a compressed blob in blobs/out",
        request: CreateAccountBackupRequest,
        result: BackupResult,
        needs: [EnsureAccount],
        example: AccountResource::example(BACKUP),
    }
}

// --- remove --------------------------------------------------------------------------------

pub type RemoveAccountBackupRequest = AccountResource;

operation! {
    pub struct RemoveAccountBackup {
        name: "remove_account_backup",
        kind: Remove,
        family: Backup,
        summary: "Delete a backup's archive from blobs/out",
        request: RemoveAccountBackupRequest,
        result: BackupResult,
        example: AccountResource::example(BACKUP),
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

impl_resource!(owner = account: RestoreAccountBackupRequest);

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

operation! {
    pub struct RestoreAccountBackup {
        name: "restore_account_backup",
        kind: Action,
        lane: Long,
        family: Backup,
        summary: "Restore an uploaded backup archive into the account's home and databases, as the tenant",
        request: RestoreAccountBackupRequest,
        result: RestoreResult,
        example: RestoreAccountBackupRequest {
            id: example::id(0xc5),
            account: example::account(),
            blob: example::parse("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
        },
    }
}
