//! Content-addressed blobs (docs/design.md sections 2 and 9): files too large or too secret for a
//! request body travel beside it, named by their SHA-256.
//!
//! - `blobs/in/<sha256>`: uploads, written only by the API ([`Upload`]). To root they are
//!   hostile input: [`open_incoming`] refuses anything but a regular file and
//!   [`VerifyingReader`] re-hashes while reading, so a file swapped or grown after the upload
//!   fails the job that reads it.
//! - `blobs/out/<sha256>`: what root produces for the control plane to download
//!   ([`write_outgoing`], or [`OutgoingBlob`] while it is produced), readable by the API's
//!   group and nobody else. [`OutgoingBlob`] is capped while it streams: the write that would
//!   pass its limit fails and the partial file goes, so a producer that would not fit stops
//!   there instead of filling the partition ([`outgoing_space`] says what there is).
//!
//! A blob is written to a temporary name, synced and renamed, so a reader sees a whole blob or
//! none.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use registry::BlobId;
use sha2::{Digest, Sha256};

use crate::Layout;

/// What can go wrong with a blob. `Missing` and `Mismatch` are the caller's input; the rest
/// is the machine's.
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    #[error("no blob {0} has been uploaded")]
    Missing(BlobId),
    #[error("blob {0} is not a regular file")]
    NotRegular(BlobId),
    #[error("the content's SHA-256 is {actual}, not the blob's name")]
    Mismatch { actual: String },
    #[error("the blob is larger than {limit} bytes")]
    TooLarge { limit: u64 },
    #[error("blob storage failed at {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> BlobError + '_ {
    move |source| BlobError::Io {
        path: path.to_owned(),
        source,
    }
}

fn nofollow() -> i32 {
    rustix::fs::OFlags::NOFOLLOW.bits() as i32
}

/// Opens an uploaded blob for root, without following a symlink and refusing anything but a
/// regular file. Read it through a [`VerifyingReader`].
pub fn open_incoming(layout: &Layout, id: &BlobId) -> Result<File, BlobError> {
    open_regular(&layout.blobs_in().join(id.as_str()), id)
}

/// Opens a produced blob (the API's download).
pub fn open_outgoing(layout: &Layout, id: &BlobId) -> Result<File, BlobError> {
    open_regular(&layout.blobs_out().join(id.as_str()), id)
}

fn open_regular(path: &Path, id: &BlobId) -> Result<File, BlobError> {
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(nofollow() | rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(BlobError::Missing(id.clone()));
        }
        // ELOOP: the name is a symlink.
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            return Err(BlobError::NotRegular(id.clone()));
        }
        Err(e) => return Err(io_at(path)(e)),
    };
    let meta = file.metadata().map_err(io_at(path))?;
    if !meta.file_type().is_file() {
        return Err(BlobError::NotRegular(id.clone()));
    }
    Ok(file)
}

/// Reads a blob while hashing it, and fails the read that reaches its end if the content is
/// not what its name says, or as soon as more than `limit` bytes came.
pub struct VerifyingReader<R> {
    inner: R,
    hasher: Sha256,
    expected: BlobId,
    read: u64,
    limit: u64,
    verified: bool,
}

impl<R: Read> VerifyingReader<R> {
    pub fn new(inner: R, expected: &BlobId, limit: u64) -> Self {
        VerifyingReader {
            inner,
            hasher: Sha256::new(),
            expected: expected.clone(),
            read: 0,
            limit,
            verified: false,
        }
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.read
    }

    /// Whether the end was reached and the content matched its name.
    pub fn verified(&self) -> bool {
        self.verified
    }
}

impl<R: Read> Read for VerifyingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 {
            if !self.verified {
                let actual = hex::encode(self.hasher.clone().finalize());
                if actual != self.expected.as_str() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        BlobError::Mismatch { actual },
                    ));
                }
                self.verified = true;
            }
            return Ok(0);
        }
        self.read += n as u64;
        if self.read > self.limit {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                BlobError::TooLarge { limit: self.limit },
            ));
        }
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

/// Streams `src` into `blobs/out` under its SHA-256 and returns the name and size. The file is
/// 0640, in the directory's group (the API's), synced before the rename.
pub fn write_outgoing(layout: &Layout, src: &mut dyn Read) -> Result<(BlobId, u64), BlobError> {
    let mut blob = OutgoingBlob::create(layout, u64::MAX)?;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match src.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_at(&blob.temp.path)(e)),
        };
        blob.write_all(&buf[..n])
            .map_err(|e| io_at(&blob.temp.path)(e))?;
    }
    blob.finish()
}

/// A blob being written into `blobs/out` as it is produced: hashed as it goes, 0640 in the
/// directory's group, and capped: a write that would take it past its limit fails whole
/// (`BlobError::TooLarge` inside the `io::Error`, and [`OutgoingBlob::over_limit`]), so
/// nothing past the limit ever reaches the disk. [`OutgoingBlob::finish`] syncs it and
/// publishes it under its SHA-256; dropped unfinished (a failure, the limit), it removes its
/// partial file.
pub struct OutgoingBlob {
    temp: TempBlob,
    hasher: Sha256,
    size: u64,
    limit: u64,
    over: bool,
    failed: bool,
}

impl OutgoingBlob {
    pub fn create(layout: &Layout, limit: u64) -> Result<OutgoingBlob, BlobError> {
        let dir = layout.blobs_out();
        let temp = TempBlob::create(&dir, 0o640)?;
        OutgoingBlob::with(&dir, temp, limit)
    }

    /// Like [`OutgoingBlob::create`], with a partial file named after `owner` (plain
    /// characters only): whatever a killed writer for the same owner left under that name is
    /// replaced, so a retry never leaves two. One writer per owner at a time.
    pub fn create_for(layout: &Layout, owner: &str, limit: u64) -> Result<OutgoingBlob, BlobError> {
        assert!(
            !owner.is_empty()
                && owner
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "a partial blob's owner is a plain name, got {owner:?}"
        );
        let dir = layout.blobs_out();
        let path = dir.join(format!("{PART}{owner}"));
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_at(&path)(e)),
        }
        let temp = TempBlob::create_at(path, 0o640)?.ok_or_else(|| {
            io_at(&dir)(io::Error::other("another writer holds the partial blob"))
        })?;
        OutgoingBlob::with(&dir, temp, limit)
    }

    fn with(dir: &Path, temp: TempBlob, limit: u64) -> Result<OutgoingBlob, BlobError> {
        let group = std::fs::metadata(dir).map_err(io_at(dir))?.gid();
        rustix::fs::fchown(&temp.file, None, Some(rustix::fs::Gid::from_raw(group)))
            .map_err(|e| io_at(&temp.path)(e.into()))?;
        Ok(OutgoingBlob {
            temp,
            hasher: Sha256::new(),
            size: 0,
            limit,
            over: false,
            failed: false,
        })
    }

    /// Bytes written so far (all of them on disk: nothing is buffered here).
    pub fn written(&self) -> u64 {
        self.size
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Changes the limit for the writes to come (a producer lowers it while it holds other
    /// bytes on the same partition).
    pub fn set_limit(&mut self, limit: u64) {
        self.limit = limit;
    }

    /// Whether a write was refused for going past the limit.
    pub fn over_limit(&self) -> bool {
        self.over
    }

    /// Whether any write failed: refused at the limit, or by the file system.
    pub fn failed(&self) -> bool {
        self.failed || self.over
    }

    /// Syncs the blob and publishes it under its SHA-256; returns the name and size.
    pub fn finish(self) -> Result<(BlobId, u64), BlobError> {
        let id: BlobId = hex::encode(self.hasher.finalize())
            .parse()
            .expect("a SHA-256 in hex is a blob id");
        let to = self.temp.path.with_file_name(id.as_str());
        self.temp.commit(&to)?;
        Ok((id, self.size))
    }
}

impl Write for OutgoingBlob {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.size.saturating_add(buf.len() as u64) > self.limit {
            self.over = true;
            return Err(io::Error::new(
                io::ErrorKind::FileTooLarge,
                BlobError::TooLarge { limit: self.limit },
            ));
        }
        let n = self
            .temp
            .file
            .write(buf)
            .inspect_err(|_| self.failed = true)?;
        self.hasher.update(&buf[..n]);
        self.size += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.temp.file.flush()
    }
}

/// The size of the file system holding `blobs/out` and what an unprivileged writer may still
/// take of it (`statvfs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Space {
    pub total: u64,
    pub available: u64,
}

pub fn outgoing_space(layout: &Layout) -> Result<Space, BlobError> {
    let dir = layout.blobs_out();
    let st = rustix::fs::statvfs(&dir).map_err(|e| io_at(&dir)(e.into()))?;
    Ok(Space {
        total: st.f_blocks.saturating_mul(st.f_frsize),
        available: st.f_bavail.saturating_mul(st.f_frsize),
    })
}

/// Removes a produced blob; false if there was none.
pub fn remove_outgoing(layout: &Layout, id: &BlobId) -> Result<bool, BlobError> {
    let path = layout.blobs_out().join(id.as_str());
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_at(&path)(e)),
    }
}

/// An upload into `blobs/in`, the API's side: written in chunks, hashed as it goes, renamed to
/// its name only if the content matches it. Dropped unfinished, it leaves nothing.
pub struct Upload {
    temp: TempBlob,
    hasher: Sha256,
    size: u64,
    limit: u64,
}

impl Upload {
    pub fn begin(layout: &Layout, limit: u64) -> Result<Upload, BlobError> {
        Ok(Upload {
            temp: TempBlob::create(&layout.blobs_in(), 0o600)?,
            hasher: Sha256::new(),
            size: 0,
            limit,
        })
    }

    pub fn write(&mut self, chunk: &[u8]) -> Result<(), BlobError> {
        self.size += chunk.len() as u64;
        if self.size > self.limit {
            return Err(BlobError::TooLarge { limit: self.limit });
        }
        self.hasher.update(chunk);
        self.temp
            .file
            .write_all(chunk)
            .map_err(io_at(&self.temp.path))
    }

    /// Checks the content against `id`, syncs and publishes it. Uploading a blob that exists
    /// already is not an error: the content is the same by its name.
    pub fn finish(self, layout: &Layout, id: &BlobId) -> Result<u64, BlobError> {
        let actual = hex::encode(self.hasher.finalize());
        if actual != id.as_str() {
            return Err(BlobError::Mismatch { actual });
        }
        self.temp.commit(&layout.blobs_in().join(id.as_str()))?;
        Ok(self.size)
    }
}

/// Removes uploads older than `max_age` at `now` (the caller's clock) from `blobs/in`, and
/// parts an interrupted upload left. A blob's age is its file's modification time: the
/// kernel's when the API wrote it, a simulation's own when it stamps its uploads. Returns how
/// many it removed.
pub fn collect_incoming(
    layout: &Layout,
    max_age: Duration,
    now: SystemTime,
) -> Result<usize, BlobError> {
    remove_older_than(&layout.blobs_in(), max_age, now, |_| true)
}

/// Removes only the parts an interrupted writer left in `blobs/out`, older than `max_age` at
/// `now`: a produced blob belongs to the resource that records it (a backup) and goes with
/// that resource, never by age.
pub fn collect_outgoing_parts(
    layout: &Layout,
    max_age: Duration,
    now: SystemTime,
) -> Result<usize, BlobError> {
    remove_older_than(&layout.blobs_out(), max_age, now, |name| {
        name.starts_with(PART)
    })
}

fn remove_older_than(
    dir: &Path,
    max_age: Duration,
    now: SystemTime,
    eligible: impl Fn(&str) -> bool,
) -> Result<usize, BlobError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(io_at(dir)(e)),
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry.map_err(io_at(dir))?;
        if !entry.file_name().to_str().is_some_and(&eligible) {
            continue;
        }
        let path = entry.path();
        // symlink_metadata: a link planted here is judged by its own age, never followed.
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let old = meta
            .modified()
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > max_age);
        if old && !meta.is_dir() {
            match std::fs::remove_file(&path) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_at(&path)(e)),
            }
        }
    }
    Ok(removed)
}

/// The prefix of a blob being written.
const PART: &str = ".part-";

/// A file being written under a temporary name in the blob's directory.
struct TempBlob {
    file: File,
    path: PathBuf,
    committed: bool,
}

impl TempBlob {
    fn create(dir: &Path, mode: u32) -> Result<TempBlob, BlobError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        for _ in 0..16 {
            let name = format!(
                "{PART}{}-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed),
                // Only to make the name unlikely to be a dead writer's leftover (a taken
                // name is skipped anyway): recorded nowhere, so the system's time will do.
                clock::Clock::now_ms(&clock::SystemClock)
            );
            if let Some(temp) = TempBlob::create_at(dir.join(name), mode)? {
                return Ok(temp);
            }
        }
        Err(io_at(dir)(io::Error::other("no free temporary name")))
    }

    /// A new file at `path`; `None` if something is there already.
    fn create_at(path: PathBuf, mode: u32) -> Result<Option<TempBlob>, BlobError> {
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(nofollow())
            .open(&path)
        {
            Ok(file) => {
                // The umask may have narrowed the mode; the group bit is needed for the API.
                file.set_permissions(std::fs::Permissions::from_mode(mode))
                    .map_err(io_at(&path))?;
                Ok(Some(TempBlob {
                    file,
                    path,
                    committed: false,
                }))
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(None),
            Err(e) => Err(io_at(&path)(e)),
        }
    }

    fn commit(mut self, to: &Path) -> Result<(), BlobError> {
        self.file.sync_all().map_err(io_at(&self.path))?;
        std::fs::rename(&self.path, to).map_err(io_at(to))?;
        self.committed = true;
        if let Some(dir) = to.parent() {
            File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(io_at(dir))?;
        }
        Ok(())
    }
}

impl Drop for TempBlob {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> (tempfile::TempDir, Layout) {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path());
        std::fs::create_dir_all(layout.blobs_in()).unwrap();
        std::fs::create_dir_all(layout.blobs_out()).unwrap();
        (dir, layout)
    }

    fn id_of(bytes: &[u8]) -> BlobId {
        hex::encode(Sha256::digest(bytes)).parse().unwrap()
    }

    #[test]
    fn an_upload_is_published_under_its_hash_and_read_back_verified() {
        let (_dir, layout) = layout();
        let content = b"a certificate bundle".repeat(1000);
        let id = id_of(&content);
        let mut upload = Upload::begin(&layout, 1 << 20).unwrap();
        for chunk in content.chunks(777) {
            upload.write(chunk).unwrap();
        }
        assert_eq!(upload.finish(&layout, &id).unwrap(), content.len() as u64);
        let mut reader = VerifyingReader::new(open_incoming(&layout, &id).unwrap(), &id, 1 << 20);
        let mut back = Vec::new();
        reader.read_to_end(&mut back).unwrap();
        assert_eq!(back, content);
        assert!(reader.verified());
        let names: Vec<_> = std::fs::read_dir(layout.blobs_in())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, vec![id.to_string()], "no temporary file is left");
    }

    #[test]
    fn an_upload_under_another_name_or_too_large_leaves_nothing() {
        let (_dir, layout) = layout();
        let wrong = id_of(b"something else");
        let mut upload = Upload::begin(&layout, 100).unwrap();
        upload.write(b"the real content").unwrap();
        assert!(matches!(
            upload.finish(&layout, &wrong),
            Err(BlobError::Mismatch { .. })
        ));
        let mut upload = Upload::begin(&layout, 10).unwrap();
        assert!(matches!(
            upload.write(b"more than ten bytes"),
            Err(BlobError::TooLarge { limit: 10 })
        ));
        drop(upload);
        assert_eq!(std::fs::read_dir(layout.blobs_in()).unwrap().count(), 0);
    }

    #[test]
    fn root_refuses_a_swapped_a_grown_a_linked_or_a_missing_blob() {
        let (dir, layout) = layout();
        let id = id_of(b"original");
        let path = layout.blobs_in().join(id.as_str());
        // Swapped after upload: the read that reaches the end fails.
        std::fs::write(&path, b"swapped!").unwrap();
        let mut reader = VerifyingReader::new(open_incoming(&layout, &id).unwrap(), &id, 100);
        let err = reader.read_to_end(&mut Vec::new()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(!reader.verified());
        // Grown beyond the reader's limit.
        std::fs::write(&path, vec![b'x'; 1000]).unwrap();
        let mut reader = VerifyingReader::new(open_incoming(&layout, &id).unwrap(), &id, 100);
        assert!(reader.read_to_end(&mut Vec::new()).is_err());
        // A symlink to a root-only file, and a directory, are not blobs.
        std::fs::remove_file(&path).unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, b"root only").unwrap();
        std::os::unix::fs::symlink(&secret, &path).unwrap();
        assert!(matches!(
            open_incoming(&layout, &id),
            Err(BlobError::NotRegular(_))
        ));
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert!(matches!(
            open_incoming(&layout, &id),
            Err(BlobError::NotRegular(_))
        ));
        std::fs::remove_dir(&path).unwrap();
        assert!(matches!(
            open_incoming(&layout, &id),
            Err(BlobError::Missing(_))
        ));
    }

    #[test]
    fn a_produced_blob_is_named_by_its_content_group_readable_and_removable() {
        let (_dir, layout) = layout();
        let content = b"an account's archive".repeat(5000);
        let (id, size) = write_outgoing(&layout, &mut &content[..]).unwrap();
        assert_eq!(id, id_of(&content));
        assert_eq!(size, content.len() as u64);
        let path = layout.blobs_out().join(id.as_str());
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o640);
        assert_eq!(
            meta.gid(),
            std::fs::metadata(layout.blobs_out()).unwrap().gid()
        );
        assert_eq!(std::fs::read(&path).unwrap(), content);
        assert!(remove_outgoing(&layout, &id).unwrap());
        assert!(!remove_outgoing(&layout, &id).unwrap());
    }

    #[test]
    fn an_outgoing_blob_refuses_the_write_past_its_limit_and_leaves_no_file() {
        let (_dir, layout) = layout();
        let mut blob = OutgoingBlob::create(&layout, 1000).unwrap();
        blob.write_all(&[7u8; 600]).unwrap();
        let err = blob.write_all(&[7u8; 600]).unwrap_err();
        assert!(matches!(
            err.get_ref().and_then(|e| e.downcast_ref::<BlobError>()),
            Some(BlobError::TooLarge { limit: 1000 })
        ));
        assert!(blob.over_limit() && blob.failed());
        assert_eq!(blob.written(), 600, "nothing of the refused write was kept");
        let part_size = std::fs::read_dir(layout.blobs_out())
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum::<u64>();
        assert_eq!(part_size, 600);
        drop(blob);
        assert_eq!(std::fs::read_dir(layout.blobs_out()).unwrap().count(), 0);

        // A killed writer's part under the same owner is replaced, not kept beside.
        let left_by_a_crash = layout.blobs_out().join(".part-backup-1");
        std::fs::write(&left_by_a_crash, vec![0u8; 5000]).unwrap();
        let mut blob = OutgoingBlob::create_for(&layout, "backup-1", 10).unwrap();
        assert_eq!(std::fs::metadata(&left_by_a_crash).unwrap().len(), 0);
        // Within its limit (raised after a lower one), it is published like write_outgoing's.
        blob.set_limit(1000);
        blob.write_all(b"an archive").unwrap();
        let (id, size) = blob.finish().unwrap();
        assert_eq!((id.clone(), size), (id_of(b"an archive"), 10));
        let meta = std::fs::metadata(layout.blobs_out().join(id.as_str())).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o640);
        let space = outgoing_space(&layout).unwrap();
        assert!(space.total >= space.available && space.total > 0);
    }

    #[test]
    fn old_uploads_and_abandoned_parts_are_collected_but_never_a_produced_blob() {
        let (_dir, layout) = layout();
        let age = |path: &Path| {
            let old = SystemTime::now() - Duration::from_secs(7200);
            File::options()
                .write(true)
                .open(path)
                .unwrap()
                .set_modified(old)
                .unwrap();
        };
        let (produced, _) = write_outgoing(&layout, &mut &b"an archive"[..]).unwrap();
        age(&layout.blobs_out().join(produced.as_str()));
        let part = layout.blobs_out().join(".part-1-2-3");
        std::fs::write(&part, b"abandoned").unwrap();
        age(&part);
        let old_upload = layout.blobs_in().join(id_of(b"old").as_str());
        std::fs::write(&old_upload, b"old").unwrap();
        age(&old_upload);
        let new_upload = layout.blobs_in().join(id_of(b"new").as_str());
        std::fs::write(&new_upload, b"new").unwrap();

        let hour = Duration::from_secs(3600);
        // Ages are judged at the caller's time: two hours ago, nothing was old yet.
        let now = SystemTime::now();
        let earlier = now - 2 * hour;
        assert_eq!(collect_outgoing_parts(&layout, hour, earlier).unwrap(), 0);
        assert_eq!(collect_incoming(&layout, hour, earlier).unwrap(), 0);
        assert_eq!(collect_outgoing_parts(&layout, hour, now).unwrap(), 1);
        assert_eq!(collect_incoming(&layout, hour, now).unwrap(), 1);
        assert!(!part.exists() && !old_upload.exists());
        assert!(new_upload.exists());
        assert!(layout.blobs_out().join(produced.as_str()).exists());
    }
}
