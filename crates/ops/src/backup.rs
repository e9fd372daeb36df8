//! The `backup` family: an account's home and databases in one compressed archive in
//! `blobs/out`, and the restore of such an archive from `blobs/in`.
//!
//! **Create.** The tenant worker reads the home as the tenant and streams a tar of it to
//! root (`Provider::archive_home`; symlinks recorded, never followed; sockets, FIFOs and
//! devices skipped; a sparse file as its data regions, its holes kept as holes; what the
//! tenant itself cannot read left out and counted). Root reads that stream through a pipe as
//! it comes, checks it entry by entry as it would a hostile one (the tenant's process wrote
//! it), and writes the archive straight into one partial file in `blobs/out`, gzip-compressed
//! on the way (`store::blobs::OutgoingBlob`): `home/...`, `databases/<db>.sql` for each
//! `mysql_database` of the account (dumped through the provider into a compressed spool), and
//! `manifest.json`. Nothing of the home is spooled uncompressed, and no copy is made: the
//! partial file is renamed to the archive's SHA-256 when it is whole.
//!
//! **What a backup may cost.** Every byte root spools is capped while it is written, not
//! only estimated before: the archive and any dump spool together stay within the smaller of
//! [`MAX_BACKUP_BYTES`] (what a restore reads, so the node can restore whatever it made) and
//! the free space of `blobs/out` less a reserve ([`blobs_reserve`]); and the home's stored
//! content within the account's recorded disk quota, checked at each file's header before its
//! content is read. Past either, the job fails `backup_too_large` at once, the partial file is
//! removed and the spools (unnamed files) vanish with their descriptors: nothing is left in
//! `blobs/out` and the partition never fills. A restore's spools (the checked home, the
//! dumps) are compressed and capped the same way.
//!
//! The backup is a resource of the account; `remove_account_backup` and the purge delete its
//! blob.
//! A create notes the archive it wrote in `state/backup-pending/<id>` before its completion
//! commits, so a create killed in between leaves nothing behind once it is retried (or the
//! backup removed): the noted archive is deleted unless a backup records it.
//!
//! **Restore.** The blob (named by its SHA-256) is hostile. Root reads it once through
//! `VerifyingReader` (the hash is checked before anything is written), decompresses it with
//! a bound on every entry's metadata, checks every entry (`tenant::archive::check_entry`: no
//! `..`, no absolute path, no symlink that leaves the home, no hard link, device or FIFO, no
//! control character, at most `MAX_ENTRIES` entries and `MAX_TOTAL_BYTES` bytes), and accepts
//! database dumps only for databases that are this account's resources. Only then is the
//! home's part handed to the tenant worker, which checks it again and writes it as the
//! tenant, beneath the home with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`: a
//! directory of the home replaced by a symlink (to `/etc`, to another home) fails the job at
//! that entry, with nothing written through it. Each dump is then imported by a throw-away
//! MariaDB account that may touch only its database (`Mariadb::import_database`).
//!
//! A restore overlays: what the archive holds is written back, files created since are kept.

pub use declarations::backup::*;

use std::cell::Cell;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, Write};
use std::rc::Rc;

use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use registry::types::{BlobId, Hex32, Presence};
use registry::{Apply, Aspects, Derive, Derived, Family, Of, OpError, Purge, RowType};
use serde::{Deserialize, Serialize};
use store::blobs::{self, BlobError, OutgoingBlob, VerifyingReader};
use state::Stored;
use store::{Layout, StoredRow};
use tenant::archive::{self, CheckedEntry, EntryKind, MAX_ENTRIES, MAX_TOTAL_BYTES};

use crate::account::{AccountRow, account_info, tenant_of};
use crate::context::{Ctx, provider_error, store_error};
use crate::mysql_database::MysqlDatabaseRow;

crash::points! {
    AFTER_ARCHIVE_HOME = "backup.after_archive_home",
    AFTER_WRITE_BLOB = "backup.after_write_blob",
    AFTER_REMOVE_BLOB = "backup.after_remove_blob",
    AFTER_UNPACK = "backup.after_unpack",
    AFTER_EXTRACT_HOME = "backup.after_extract_home",
}

/// One backup as stored: the archive in `blobs/out` (by its digest) and what it holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackupRow {
    pub blob: BlobId,
    /// The archive's size in bytes.
    pub size: u64,
    pub files: u64,
    pub databases: Vec<String>,
    pub created_at_ms: i64,
}

impl StoredRow for BackupRow {
    const FAMILY: &'static str = Backup::NAME;
}

/// The largest archive a restore reads (compressed).
pub const MAX_BLOB_BYTES: u64 = 16 * 1024 * 1024 * 1024;
/// The node-wide ceiling on what one backup spools (the archive and its dump spools
/// together): what a restore reads, so every archive this node makes it can restore.
pub const MAX_BACKUP_BYTES: u64 = MAX_BLOB_BYTES;
/// The least part of the blobs partition a backup or a restore leaves free.
pub const MIN_RESERVE_BYTES: u64 = 64 * 1024 * 1024;
/// The largest dump of one database in an archive.
pub const MAX_DUMP_BYTES: u64 = 4 * 1024 * 1024 * 1024;
/// The largest manifest.
const MAX_MANIFEST_BYTES: u64 = 64 * 1024;
/// How much of the decompressed stream the tar reader may consume between two entries'
/// contents: headers, long names and PAX records. Bounds its memory on a hostile archive
/// (the tar crate reads a long name or a PAX record whole).
const HEADER_BUDGET: u64 = 64 * 1024;
/// How much may follow the tar's end marker inside the compressed stream (record padding).
const MAX_TRAILER_BYTES: u64 = 1024 * 1024;
/// The archive format this node writes when the home has no sparse file; it reads both.
const FORMAT: u32 = 1;
/// The format of an archive with sparse entries: a node that knows only format 1 would
/// restore such a file as its regions run together, so it must refuse the archive instead.
const FORMAT_SPARSE: u32 = 2;

const MANIFEST: &str = "manifest.json";
const HOME_PREFIX: &str = "home/";
const DB_PREFIX: &str = "databases/";
const DB_SUFFIX: &str = ".sql";

impl Purge<Ctx> for Backup {
    const ROW: Option<RowType> = Some(store::row_type::<BackupRow>());

    fn purge(ctx: &mut Ctx, account: &Hex32) -> Result<(), OpError> {
        let rows = ctx
            .view()
            .of_account::<BackupRow>(account)
            .map_err(store_error)?;
        let layout = layout(ctx)?;
        for stored in rows {
            settle_pending(ctx, &layout, &stored.id)?;
            release_blob(ctx, &stored.row.blob, &stored.id)?;
        }
        ctx.forget_rows_of::<BackupRow>(account)
    }
}

const ARCHIVE: Aspects = Aspects::new(BACKUP_MISSING, BACKUP_DIFFERS);

impl Derive<Ctx> for Backup {
    /// Each backup's archive in `blobs/out`, of the size recorded (its digest is not computed
    /// again: an archive is up to 16 GiB). An archive is made once, never re-derived: a lost
    /// one is not put back by `rebuild_account`; removing the backup resolves the drift.
    fn derive(ctx: &Ctx) -> Result<Vec<Derived>, OpError> {
        let rows = all_backups(ctx)?;
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let layout = layout(ctx)?;
        let mut items = Vec::new();
        for stored in rows {
            let actual = match blobs::open_outgoing(&layout, &stored.row.blob) {
                Ok(file) => Some(match file.metadata() {
                    Ok(meta) => format!("{} bytes", meta.len()),
                    Err(e) => format!("unreadable ({e})"),
                }),
                Err(BlobError::Missing(_)) => None,
                Err(e) => Some(e.to_string()),
            };
            items.push(Derived::setting(
                Of::new(&stored.id, &stored.owner),
                format!(
                    "the archive {}",
                    layout.blobs_out().join(stored.row.blob.as_str()).display()
                ),
                format!("{} bytes", stored.row.size),
                actual,
                ARCHIVE,
            ));
        }
        Ok(items)
    }
}

/// The node's layout, from where state.db is (`<root>/state/state.db`).
fn layout(ctx: &Ctx) -> Result<Layout, OpError> {
    ctx.state
        .path()
        .parent()
        .and_then(|state| state.parent())
        .map(Layout::new)
        .ok_or_else(|| OpError::permanent("backup_io_error", "state.db has no data directory"))
}

/// Every backup of the node, whoever owns it: an archive's digest may be another's too.
fn all_backups(ctx: &Ctx) -> Result<Vec<Stored<BackupRow>>, OpError> {
    ctx.view().all::<BackupRow>().map_err(store_error)
}

/// Where a create notes the archive it wrote before its completion commits: a create killed
/// in between leaves an archive nothing records, which its retry (or the backup's removal)
/// finds here and deletes.
fn pending_path(layout: &Layout, id: &Hex32) -> std::path::PathBuf {
    layout.state_dir().join("backup-pending").join(id.as_str())
}

fn note_pending(layout: &Layout, id: &Hex32, blob: &BlobId) -> Result<(), OpError> {
    let path = pending_path(layout, id);
    let dir = path.parent().expect("the pending path has a directory");
    std::fs::create_dir_all(dir).map_err(io_error("create the pending directory"))?;
    let tmp = dir.join(format!(".{id}.tmp"));
    let mut file = File::create(&tmp).map_err(io_error("note the pending archive"))?;
    file.write_all(blob.as_str().as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(io_error("note the pending archive"))?;
    std::fs::rename(&tmp, &path).map_err(io_error("note the pending archive"))
}

/// Deletes the archive a killed create of `id` left behind, unless a backup records it.
fn settle_pending(ctx: &Ctx, layout: &Layout, id: &Hex32) -> Result<(), OpError> {
    let path = pending_path(layout, id);
    let noted = match std::fs::read_to_string(&path) {
        Ok(text) => text.trim().parse::<BlobId>().ok(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_error("read the pending archive")(e)),
    };
    if let Some(blob) = noted {
        let recorded = all_backups(ctx)?
            .iter()
            .any(|stored| stored.row.blob == blob);
        if !recorded {
            blobs::remove_outgoing(layout, &blob).map_err(blob_error)?;
        }
    }
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_error("remove the pending note")(e)),
    }
}

/// Removes `blob` from `blobs/out` unless another backup (identical content) still uses it.
fn release_blob(ctx: &Ctx, blob: &BlobId, except: &Hex32) -> Result<(), OpError> {
    let shared = all_backups(ctx)?
        .iter()
        .any(|stored| &stored.id != except && &stored.row.blob == blob);
    if !shared {
        blobs::remove_outgoing(&layout(ctx)?, blob).map_err(blob_error)?;
        crash::point(AFTER_REMOVE_BLOB);
    }
    Ok(())
}

fn blob_error(e: BlobError) -> OpError {
    match e {
        BlobError::Missing(_) => OpError::permanent("blob_missing", e.to_string()),
        BlobError::NotRegular(_) | BlobError::Mismatch { .. } | BlobError::TooLarge { .. } => {
            OpError::permanent("blob_invalid", e.to_string())
        }
        BlobError::Io { .. } => OpError::retryable("backup_io_error", e.to_string()),
    }
}

fn io_error(what: &str) -> impl FnOnce(io::Error) -> OpError + '_ {
    move |e| OpError::retryable("backup_io_error", format!("{what}: {e}"))
}

fn archive_invalid(message: impl Into<String>) -> OpError {
    OpError::permanent("backup_archive_invalid", message)
}

fn tenant_error(e: tenant::TenantError) -> OpError {
    OpError::permanent(e.code.code(), e.message)
}

fn too_large(message: impl Into<String>) -> OpError {
    OpError::permanent("backup_too_large", message)
}

const MIB: u64 = 1024 * 1024;

/// The part of a partition of `total` bytes a backup or a restore never takes: a twentieth,
/// at least [`MIN_RESERVE_BYTES`], so the node's other writers (state.db, the logs, uploads)
/// keep room whatever a tenant's home holds.
pub fn blobs_reserve(total: u64) -> u64 {
    (total / 20).max(MIN_RESERVE_BYTES)
}

/// How many bytes one job may spool on the blobs partition, and which bound that is.
struct SpoolCap {
    bytes: u64,
    bound: String,
}

impl SpoolCap {
    /// The smaller of the node's ceiling and the free space of `blobs/out` less the reserve,
    /// measured now; the writers enforce it as they write.
    fn of(layout: &Layout) -> Result<SpoolCap, OpError> {
        let space = blobs::outgoing_space(layout).map_err(blob_error)?;
        let reserve = blobs_reserve(space.total);
        let free = space.available.saturating_sub(reserve);
        Ok(if free < MAX_BACKUP_BYTES {
            SpoolCap {
                bytes: free,
                bound: format!(
                    "the free space of blobs/out: {} MiB free, {} MiB of it kept in reserve",
                    space.available / MIB,
                    reserve / MIB
                ),
            }
        } else {
            SpoolCap {
                bytes: MAX_BACKUP_BYTES,
                bound: format!("the node's ceiling of {} MiB", MAX_BACKUP_BYTES / MIB),
            }
        })
    }

    fn exceeded(&self) -> OpError {
        too_large(format!(
            "more than {} bytes would be spooled in blobs/out ({}); nothing was kept",
            self.bytes, self.bound
        ))
    }
}

/// Whether `e` is, or wraps at any depth, a writer refusing to go past its limit.
fn over_limit(e: &io::Error) -> bool {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = current {
        if matches!(
            err.downcast_ref::<BlobError>(),
            Some(BlobError::TooLarge { .. })
        ) {
            return true;
        }
        current = match err.downcast_ref::<io::Error>().and_then(|io| io.get_ref()) {
            Some(inner) => Some(inner),
            None => err.source(),
        };
    }
    false
}

/// The account's recorded disk quota in bytes, `None` when unlimited (0) or not recorded.
fn disk_quota_bytes(ctx: &Ctx, account: &Hex32) -> Result<Option<u64>, OpError> {
    let row = ctx.view().get::<AccountRow>(account).map_err(store_error)?;
    Ok(row
        .map(|stored| stored.row.disk_quota_mib)
        .filter(|&mib| mib > 0)
        .map(|mib| mib.saturating_mul(MIB)))
}

/// What an archive's `manifest.json` says.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub format: u32,
    pub account: Hex32,
    pub username: String,
    pub created_at_ms: i64,
    pub files: u64,
    pub dirs: u64,
    pub symlinks: u64,
    /// Bytes of file content stored (holes excluded).
    pub bytes: u64,
    pub databases: Vec<String>,
}

/// The account's databases: full names, sorted.
fn account_databases(ctx: &Ctx, account: &Hex32) -> Result<Vec<String>, OpError> {
    let mut names: Vec<String> = ctx
        .view()
        .of_account::<MysqlDatabaseRow>(account)
        .map_err(store_error)?
        .into_iter()
        .filter_map(|stored| match stored.row {
            MysqlDatabaseRow::Database { name, .. } => Some(name),
            MysqlDatabaseRow::Quota { .. } => None,
        })
        .collect();
    names.sort();
    Ok(names)
}

fn db_name(name: &str) -> Result<provider::DbName, OpError> {
    provider::DbName::new(name).map_err(provider_error)
}

/// A writer into a private unnamed file beside the blobs (only this process reaches it, and
/// it vanishes with its descriptor, crash or not) that draws on a budget of bytes shared by
/// every spool of one job: the write that would overdraw it fails whole.
struct Capped {
    file: File,
    left: Rc<Cell<u64>>,
    limit: u64,
    written: u64,
    over: bool,
}

impl Write for Capped {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = buf.len() as u64;
        if n > self.left.get() {
            self.over = true;
            return Err(io::Error::new(
                io::ErrorKind::FileTooLarge,
                BlobError::TooLarge { limit: self.limit },
            ));
        }
        self.file.write_all(buf)?;
        self.left.set(self.left.get() - n);
        self.written += n;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// A stream spooled on the blobs partition, gzip-compressed as it is written (so it costs
/// what it compresses to) into a [`Capped`] file.
struct Spool {
    gz: GzEncoder<BufWriter<Capped>>,
    raw: u64,
}

/// A finished spool: `raw` bytes of content, `disk` bytes on the partition.
struct Spooled {
    file: File,
    raw: u64,
    disk: u64,
}

impl Spool {
    /// `left` is the budget shared by the job's spools; `limit` the cap it came from, for
    /// the error.
    fn create(layout: &Layout, left: &Rc<Cell<u64>>, limit: u64) -> Result<Spool, OpError> {
        let file = tempfile::tempfile_in(layout.blobs_out())
            .map_err(io_error("create a temporary file"))?;
        let capped = Capped {
            file,
            left: Rc::clone(left),
            limit,
            written: 0,
            over: false,
        };
        Ok(Spool {
            gz: GzEncoder::new(BufWriter::new(capped), Compression::fast()),
            raw: 0,
        })
    }

    fn over_limit(&self) -> bool {
        self.gz.get_ref().get_ref().over
    }

    fn finish(self) -> io::Result<Spooled> {
        let buffered = self.gz.finish()?;
        let mut capped = buffered.into_inner().map_err(|e| e.into_error())?;
        capped.file.rewind()?;
        Ok(Spooled {
            file: capped.file,
            raw: self.raw,
            disk: capped.written,
        })
    }
}

impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.gz.write(buf)?;
        self.raw += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.gz.flush()
    }
}

impl Spooled {
    /// The content, decompressed as it is read.
    fn reader(self) -> BufReader<GzDecoder<BufReader<File>>> {
        BufReader::new(GzDecoder::new(BufReader::new(self.file)))
    }
}

/// A reader that fails once more than its budget was read; the budget is set between
/// reads by whoever holds the other handle.
struct Budget<R> {
    inner: R,
    left: Rc<Cell<u64>>,
}

impl<R: Read> Read for Budget<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.left.get();
        if left == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "an archive header, long name or extension record is too large",
            ));
        }
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left.set(left - n as u64);
        Ok(n)
    }
}

/// A tar header for a checked entry, with nothing of the original but what was checked.
fn header_for(entry: &CheckedEntry) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    let kind = match &entry.kind {
        EntryKind::Dir => tar::EntryType::Directory,
        EntryKind::File { .. } => tar::EntryType::Regular,
        EntryKind::Symlink { .. } => tar::EntryType::Symlink,
    };
    header.set_entry_type(kind);
    header.set_mode(entry.mode);
    header.set_mtime(entry.mtime);
    header.set_size(0);
    header
}

/// Appends a checked entry, its content read from `data`, under `prefix`; a sparse file with
/// its checked map, and nothing else of the original records.
fn append_checked<W: Write>(
    builder: &mut tar::Builder<W>,
    prefix: &str,
    entry: &CheckedEntry,
    data: impl Read,
) -> io::Result<()> {
    let mut header = header_for(entry);
    let path = format!("{prefix}{}", entry.path());
    match &entry.kind {
        EntryKind::Dir => builder.append_data(&mut header, format!("{path}/"), io::empty()),
        EntryKind::File { size, extents } => archive::append_file(
            builder,
            &mut header,
            &path,
            *size,
            extents.as_deref(),
            data.take(entry.kind.stored()),
        ),
        EntryKind::Symlink { target } => builder.append_link(&mut header, &path, target),
    }
}

/// Appends a file of `size` bytes read from `data`, dated `at_ms` (the backup's time).
fn append_bytes<W: Write>(
    builder: &mut tar::Builder<W>,
    path: &str,
    (size, at_ms): (u64, i64),
    data: impl Read,
) -> io::Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_mode(0o600);
    header.set_mtime((at_ms / 1000).max(0) as u64);
    header.set_size(size);
    builder.append_data(&mut header, path, data)
}

impl Apply<Ctx> for CreateAccountBackup {
    fn apply(ctx: &mut Ctx, req: &CreateAccountBackupRequest) -> Result<BackupResult, OpError> {
        let info = account_info(ctx, &req.account)?;
        let who = tenant_of(ctx, &info)?;
        let layout = layout(ctx)?;
        let previous = ctx
            .view()
            .get::<BackupRow>(&req.id)
            .map_err(store_error)?
            .map(|stored| stored.row.blob);
        settle_pending(ctx, &layout, &req.id)?;
        let quota = disk_quota_bytes(ctx, &req.account)?;
        let databases = account_databases(ctx, &req.account)?;
        std::fs::create_dir_all(layout.blobs_out()).map_err(io_error("create blobs/out"))?;
        let cap = SpoolCap::of(&layout)?;
        // Named after the backup: a create killed while writing it leaves a partial file
        // that its retry replaces (and the runner collects, should no retry come).
        let blob = OutgoingBlob::create_for(&layout, &format!("backup-{}", req.id), cap.bytes)
            .map_err(blob_error)?;
        let builder = tar::Builder::new(GzEncoder::new(
            BufWriter::with_capacity(64 * 1024, blob),
            Compression::default(),
        ));

        // 1. The home, as the tenant's worker reads it, checked and compressed as it comes.
        let (reader, mut writer) = io::pipe().map_err(io_error("create a pipe"))?;
        let (packed, produced) = std::thread::scope(|scope| {
            let packer = scope.spawn(move || pack_home(reader, builder, quota));
            let produced = ctx.provider.archive_home(&who, &mut writer);
            // The end of the stream, for a packer still reading.
            drop(writer);
            let packed = packer
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (packed, produced)
        });
        let (mut builder, home, read) = match (packed, produced) {
            (Err(Packing::Refused(e)), _) => return Err(e),
            (Err(Packing::OverLimit), _) => return Err(cap.exceeded()),
            (_, Err(e)) => return Err(provider_error(e)),
            (Err(Packing::Stream(e)), Ok(_)) => {
                return Err(archive_invalid(format!("the home's archive: {e}")));
            }
            (Ok((builder, home)), Ok(read)) => (builder, home, read),
        };
        crash::point(AFTER_ARCHIVE_HOME);
        let written = |e: io::Error| {
            if over_limit(&e) {
                cap.exceeded()
            } else {
                io_error("write the archive")(e)
            }
        };

        // 2. The dumps, each spooled compressed, then the manifest.
        let created_at_ms = ctx.clock().now_ms();
        let manifest = Manifest {
            format: if home.sparse_files > 0 {
                FORMAT_SPARSE
            } else {
                FORMAT
            },
            account: req.account.clone(),
            username: info.username.clone(),
            created_at_ms,
            files: home.files,
            dirs: home.dirs,
            symlinks: home.symlinks,
            bytes: home.bytes,
            databases,
        };
        if !manifest.databases.is_empty() {
            let mut db = ctx.provider.mariadb().map_err(provider_error)?;
            for name in &manifest.databases {
                let blob = archive_blob(&mut builder);
                // What the archive and this spool hold together stays within the cap.
                let left = Rc::new(Cell::new(cap.bytes.saturating_sub(blob.written())));
                let mut spool = Spool::create(&layout, &left, cap.bytes)?;
                let dumped = db.dump_database(&db_name(name)?, &mut spool);
                if spool.over_limit() {
                    return Err(cap.exceeded());
                }
                dumped.map_err(provider_error)?;
                let spooled = spool.finish().map_err(written)?;
                let (size, disk) = (spooled.raw, spooled.disk);
                if size > MAX_DUMP_BYTES {
                    return Err(too_large(format!(
                        "the dump of {name} is larger than the {MAX_DUMP_BYTES} bytes a restore reads"
                    )));
                }
                let blob = archive_blob(&mut builder);
                blob.set_limit(cap.bytes.saturating_sub(disk));
                append_bytes(
                    &mut builder,
                    &format!("{DB_PREFIX}{name}{DB_SUFFIX}"),
                    (size, created_at_ms),
                    spooled.reader(),
                )
                .map_err(written)?;
                archive_blob(&mut builder).set_limit(cap.bytes);
            }
        }
        let manifest_bytes =
            serde_json::to_vec_pretty(&manifest).expect("a manifest always serializes");
        append_bytes(
            &mut builder,
            MANIFEST,
            (manifest_bytes.len() as u64, created_at_ms),
            &manifest_bytes[..],
        )
        .map_err(written)?;
        let gz = builder.into_inner().map_err(written)?;
        let buffered = gz.finish().map_err(written)?;
        let blob = buffered.into_inner().map_err(|e| written(e.into_error()))?;

        // 3. Published in blobs/out under its SHA-256.
        let (blob, size) = blob.finish().map_err(blob_error)?;
        note_pending(&layout, &req.id, &blob)?;
        crash::point(AFTER_WRITE_BLOB);
        if let Some(previous) = previous.filter(|p| p != &blob) {
            release_blob(ctx, &previous, &req.id)?;
        }
        let result = BackupResult {
            state: Presence::Present,
            blob: Some(blob.clone()),
            size,
            files: manifest.files,
            dirs: manifest.dirs,
            symlinks: manifest.symlinks,
            bytes: manifest.bytes,
            apparent_bytes: home.apparent_bytes,
            sparse_files: home.sparse_files,
            skipped: read.skipped,
            unreadable: read.unreadable,
            complete: read.unreadable == 0,
            databases: manifest.databases.clone(),
            created_at_ms: Some(manifest.created_at_ms),
        };
        ctx.set_row(&BackupRow {
            blob,
            size,
            files: manifest.files,
            databases: manifest.databases,
            created_at_ms: manifest.created_at_ms,
        });
        Ok(result)
    }
}

/// The archive being written: a tar, compressed as it goes, into its partial blob.
type ArchiveWriter = tar::Builder<GzEncoder<BufWriter<OutgoingBlob>>>;

/// The archive's file beneath its tar and gzip layers.
fn archive_blob(builder: &mut ArchiveWriter) -> &mut OutgoingBlob {
    builder.get_mut().get_mut().get_mut()
}

/// Why packing the home stopped.
enum Packing {
    /// Reading the worker's stream failed: the worker's own result says why, if it failed.
    Stream(io::Error),
    /// The archive reached its cap.
    OverLimit,
    /// Root refused what it read, or could not write.
    Refused(OpError),
}

/// Reads the worker's tar of the home from `input` as it comes, checks every entry as
/// hostile, and appends it under `home/` to `builder`; returns the builder and what it holds.
/// A file past the account's disk `quota` (stored bytes) is refused at its header, before its
/// content is read.
fn pack_home(
    input: impl Read,
    mut builder: ArchiveWriter,
    quota: Option<u64>,
) -> Result<(ArchiveWriter, tenant::ArchiveCounts), Packing> {
    let left = Rc::new(Cell::new(HEADER_BUDGET));
    let reader = Budget {
        inner: BufReader::with_capacity(64 * 1024, input),
        left: Rc::clone(&left),
    };
    let mut archive = tar::Archive::new(reader);
    let mut counts = tenant::ArchiveCounts::default();
    let entries = archive.entries().map_err(Packing::Stream)?;
    for entry in entries {
        let mut entry = entry.map_err(Packing::Stream)?;
        left.set(entry.size().saturating_add(1));
        let raw_path = entry.path_bytes().into_owned();
        let checked = archive::check_entry(&mut entry, &raw_path)
            .map_err(|e| Packing::Refused(tenant_error(e)))?;
        match &checked.kind {
            EntryKind::Dir => counts.dirs += 1,
            EntryKind::File { size, extents } => {
                counts.files += 1;
                counts.bytes += checked.kind.stored();
                counts.apparent_bytes += size;
                counts.sparse_files += u64::from(extents.is_some());
                if let Some(quota) = quota.filter(|&q| counts.bytes > q) {
                    return Err(Packing::Refused(too_large(format!(
                        "the home holds more than the account's disk quota of {} MiB (at {}); nothing was kept",
                        quota / MIB,
                        checked.path()
                    ))));
                }
            }
            EntryKind::Symlink { .. } => counts.symlinks += 1,
        }
        if counts.dirs + counts.files + counts.symlinks > MAX_ENTRIES {
            return Err(Packing::Refused(OpError::permanent(
                "tenant_archive_too_large",
                format!("more than {MAX_ENTRIES} entries"),
            )));
        }
        let size = entry.size();
        let mut counted = CountingReader {
            inner: &mut entry,
            read: 0,
        };
        if let Err(e) = append_checked(&mut builder, HOME_PREFIX, &checked, &mut counted) {
            let blob = archive_blob(&mut builder);
            return Err(if blob.over_limit() {
                Packing::OverLimit
            } else if blob.failed() {
                Packing::Refused(io_error("write the archive")(e))
            } else {
                Packing::Stream(e)
            });
        }
        if counted.read != size {
            return Err(Packing::Stream(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the stream ends inside a file",
            )));
        }
        left.set(HEADER_BUDGET);
    }
    // The end of the stream (the tar's padding) so the worker finishes writing.
    left.set(MAX_TRAILER_BYTES);
    io::copy(&mut archive.into_inner(), &mut io::sink()).map_err(Packing::Stream)?;
    Ok((builder, counts))
}

impl Apply<Ctx> for RemoveAccountBackup {
    fn apply(ctx: &mut Ctx, req: &RemoveAccountBackupRequest) -> Result<BackupResult, OpError> {
        if let Some(row) = ctx
            .view()
            .get_owned::<BackupRow>(&req.account, &req.id)
            .map_err(store_error)?
        {
            release_blob(ctx, &row.blob, &req.id)?;
        }
        settle_pending(ctx, &layout(ctx)?, &req.id)?;
        ctx.forget_row();
        Ok(BackupResult {
            state: Presence::Absent,
            blob: None,
            size: 0,
            files: 0,
            dirs: 0,
            symlinks: 0,
            bytes: 0,
            apparent_bytes: 0,
            sparse_files: 0,
            skipped: 0,
            unreadable: 0,
            complete: false,
            databases: Vec::new(),
            created_at_ms: None,
        })
    }
}

/// What a checked archive holds, ready to restore: spooled compressed.
struct Unpacked {
    /// The home's part, re-written from checked entries only, paths relative to the home.
    home: Spooled,
    /// (database, its dump).
    dumps: Vec<(String, Spooled)>,
}

/// Reads and checks the whole hostile archive `blob` before anything is restored. What it
/// keeps for the restore is spooled compressed, within the free space of `blobs/out` less
/// the reserve, checked as it is written.
fn unpack(ctx: &Ctx, layout: &Layout, account: &Hex32, blob: &BlobId) -> Result<Unpacked, OpError> {
    let file = blobs::open_incoming(layout, blob).map_err(blob_error)?;
    let verifying = VerifyingReader::new(BufReader::new(file), blob, MAX_BLOB_BYTES);
    let left = Rc::new(Cell::new(HEADER_BUDGET));
    let reader = Budget {
        inner: GzDecoder::new(verifying),
        left: Rc::clone(&left),
    };
    let owned = account_databases(ctx, account)?;
    std::fs::create_dir_all(layout.blobs_out()).map_err(io_error("create blobs/out"))?;
    let cap = SpoolCap::of(layout)?;
    let budget = Rc::new(Cell::new(cap.bytes));
    let spooled = |e: io::Error| {
        if over_limit(&e) {
            cap.exceeded()
        } else {
            io_error("spool the restore")(e)
        }
    };
    let mut counts = tenant::ArchiveCounts::default();
    let mut dumps: Vec<(String, Spooled)> = Vec::new();
    let mut manifest: Option<Manifest> = None;
    let bad = |e: io::Error| archive_invalid(format!("unreadable archive: {e}"));
    let mut archive = tar::Archive::new(reader);
    let mut builder = tar::Builder::new(Spool::create(layout, &budget, cap.bytes)?);
    let mut seen = 0u64;
    for entry in archive.entries().map_err(bad)? {
        let mut entry = entry.map_err(bad)?;
        seen += 1;
        if seen > MAX_ENTRIES + 64 {
            return Err(archive_invalid(format!("more than {MAX_ENTRIES} entries")));
        }
        // The entry's content may be read now; the next header gets a fresh budget.
        left.set(entry.size().saturating_add(1));
        let path = entry.path_bytes().into_owned();
        if path == MANIFEST.as_bytes() {
            if entry.header().entry_type() != tar::EntryType::Regular
                || entry.size() > MAX_MANIFEST_BYTES
                || manifest.is_some()
            {
                return Err(archive_invalid("a second or malformed manifest"));
            }
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).map_err(bad)?;
            let parsed: Manifest = serde_json::from_slice(&bytes)
                .map_err(|e| archive_invalid(format!("manifest: {e}")))?;
            if parsed.format != FORMAT && parsed.format != FORMAT_SPARSE {
                return Err(archive_invalid(format!(
                    "manifest: format {} is not {FORMAT} or {FORMAT_SPARSE}",
                    parsed.format
                )));
            }
            manifest = Some(parsed);
        } else if let Some(rest) = path.strip_prefix(DB_PREFIX.as_bytes()) {
            let name = std::str::from_utf8(rest)
                .ok()
                .and_then(|r| r.strip_suffix(DB_SUFFIX))
                .ok_or_else(|| archive_invalid("a database entry not named <db>.sql"))?;
            if entry.header().entry_type() != tar::EntryType::Regular
                || entry.pax_extensions().map_err(bad)?.is_some()
            {
                return Err(archive_invalid("a database entry that is not a plain file"));
            }
            if entry.size() > MAX_DUMP_BYTES {
                return Err(archive_invalid(format!(
                    "the dump of {name:?} is larger than {MAX_DUMP_BYTES} bytes"
                )));
            }
            if !owned.iter().any(|db| db == name) {
                return Err(OpError::permanent(
                    "backup_database_not_owned",
                    format!(
                        "the archive holds database {name:?}, which is not one of this account's databases"
                    ),
                ));
            }
            if dumps.iter().any(|(db, _)| db == name) {
                return Err(archive_invalid(format!("database {name:?} twice")));
            }
            let mut dump = Spool::create(layout, &budget, cap.bytes)?;
            let size = entry.size();
            let copied = io::copy(&mut (&mut entry).take(size), &mut dump);
            if dump.over_limit() {
                return Err(cap.exceeded());
            }
            if copied.map_err(bad)? != size {
                return Err(archive_invalid("the archive ends inside a dump"));
            }
            dumps.push((name.to_owned(), dump.finish().map_err(spooled)?));
        } else if let Some(rest) = path.strip_prefix(HOME_PREFIX.as_bytes()) {
            if rest.is_empty() && entry.header().entry_type() == tar::EntryType::Directory {
                left.set(HEADER_BUDGET);
                continue;
            }
            let checked = archive::check_entry(&mut entry, rest).map_err(tenant_error)?;
            match &checked.kind {
                EntryKind::Dir => counts.dirs += 1,
                EntryKind::File { .. } => {
                    counts.files += 1;
                    counts.bytes += checked.kind.stored();
                    if counts.bytes > MAX_TOTAL_BYTES {
                        return Err(OpError::permanent(
                            "tenant_archive_too_large",
                            format!("more than {MAX_TOTAL_BYTES} bytes of files"),
                        ));
                    }
                }
                EntryKind::Symlink { .. } => counts.symlinks += 1,
            }
            if counts.dirs + counts.files + counts.symlinks > MAX_ENTRIES {
                return Err(OpError::permanent(
                    "tenant_archive_too_large",
                    format!("more than {MAX_ENTRIES} entries"),
                ));
            }
            let size = entry.size();
            let mut counted = CountingReader {
                inner: &mut entry,
                read: 0,
            };
            let appended = append_checked(&mut builder, "", &checked, &mut counted);
            if builder.get_ref().over_limit() {
                return Err(cap.exceeded());
            }
            appended.map_err(bad)?;
            if counted.read != size {
                return Err(archive_invalid("the archive ends inside a file"));
            }
        } else {
            return Err(archive_invalid(format!(
                "unexpected entry {:?} (only home/, databases/ and the manifest)",
                String::from_utf8_lossy(&path[..path.len().min(80)])
            )));
        }
        left.set(HEADER_BUDGET);
    }
    let home = builder
        .into_inner()
        .and_then(Spool::finish)
        .map_err(spooled)?;
    // The rest of the compressed stream (the tar's padding), then the rest of the blob, so
    // the hash is checked before anything is restored.
    left.set(MAX_TRAILER_BYTES);
    let mut reader = archive.into_inner();
    io::copy(&mut reader, &mut io::sink()).map_err(bad)?;
    let mut verifying = reader.inner.into_inner();
    io::copy(&mut verifying, &mut io::sink()).map_err(|e| {
        OpError::permanent(
            "blob_invalid",
            format!("the blob is not what its name says: {e}"),
        )
    })?;
    if !verifying.verified() {
        return Err(OpError::permanent(
            "blob_invalid",
            "the blob was not read to its end",
        ));
    }
    if manifest.is_none() {
        return Err(archive_invalid("no manifest: not an archive of this node"));
    }
    Ok(Unpacked { home, dumps })
}

/// Counts what was read through it (tar pads a short read with nothing: it fails instead).
struct CountingReader<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

/// The throw-away MariaDB account of one restore: derived from its id, so a retry after a
/// crash drops the same one before it starts. It starts with a digit, which no tenant's
/// account can (theirs are `<username>_<name>`, and a username starts with a letter), and is
/// 25 characters, within MySQL's 32 as well as MariaDB's 80.
fn importer(id: &Hex32) -> Result<provider::DbUser, OpError> {
    provider::DbUser::new(&format!("0restore_{}", &id.as_str()[..16])).map_err(provider_error)
}

impl Apply<Ctx> for RestoreAccountBackup {
    fn apply(ctx: &mut Ctx, req: &RestoreAccountBackupRequest) -> Result<RestoreResult, OpError> {
        let info = account_info(ctx, &req.account)?;
        let who = tenant_of(ctx, &info)?;
        let layout = layout(ctx)?;
        let unpacked = unpack(ctx, &layout, &req.account, &req.blob)?;
        crash::point(AFTER_UNPACK);
        let written = ctx
            .provider
            .extract_home(&who, &mut unpacked.home.reader())
            .map_err(provider_error)?;
        crash::point(AFTER_EXTRACT_HOME);
        let mut databases = Vec::new();
        let mut statements = 0;
        if !unpacked.dumps.is_empty() {
            let importer = importer(&req.id)?;
            let mut db = ctx.provider.mariadb().map_err(provider_error)?;
            for (name, dump) in unpacked.dumps {
                statements += db
                    .import_database(&db_name(&name)?, &importer, &mut dump.reader())
                    .map_err(provider_error)?;
                databases.push(name);
            }
        }
        ctx.discard_row_change();
        Ok(RestoreResult {
            blob: req.blob.clone(),
            files: written.files,
            dirs: written.dirs,
            symlinks: written.symlinks,
            bytes: written.bytes,
            apparent_bytes: written.apparent_bytes,
            sparse_files: written.sparse_files,
            databases,
            statements,
        })
    }
}
