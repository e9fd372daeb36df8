//! Content-addressed blobs (DESIGN.md sections 2 and 9): files too large or too secret for a
//! request body travel beside it, named by their SHA-256.
//!
//! - `blobs/in/<sha256>`: uploads, written only by the API ([`Upload`]). To root they are
//!   hostile input: [`open_incoming`] refuses anything but a regular file and
//!   [`VerifyingReader`] re-hashes while reading, so a file swapped or grown after the upload
//!   fails the job that reads it.
//! - `blobs/out/<sha256>`: what root produces for the control plane to download
//!   ([`write_outgoing`]), readable by the API's group and nobody else.
//!
//! A blob is written to a temporary name, synced and renamed, so a reader sees a whole blob or
//! none.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

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
    let dir = layout.blobs_out();
    let group = std::fs::metadata(&dir).map_err(io_at(&dir))?.gid();
    let mut temp = TempBlob::create(&dir, 0o640)?;
    rustix::fs::fchown(&temp.file, None, Some(rustix::fs::Gid::from_raw(group)))
        .map_err(|e| io_at(&temp.path)(e.into()))?;
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match src.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_at(&temp.path)(e)),
        };
        hasher.update(&buf[..n]);
        temp.file.write_all(&buf[..n]).map_err(io_at(&temp.path))?;
        size += n as u64;
    }
    let id: BlobId = hex::encode(hasher.finalize())
        .parse()
        .expect("a SHA-256 in hex is a blob id");
    temp.commit(&dir.join(id.as_str()))?;
    Ok((id, size))
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

/// Removes uploads older than `max_age` from `blobs/in`, and parts an interrupted upload
/// left. Returns how many it removed.
pub fn collect_incoming(layout: &Layout, max_age: Duration) -> Result<usize, BlobError> {
    remove_older_than(&layout.blobs_in(), max_age, |_| true)
}

/// Removes only the parts an interrupted writer left in `blobs/out`: a produced blob belongs
/// to the resource that records it (a backup) and goes with that resource, never by age.
pub fn collect_outgoing_parts(layout: &Layout, max_age: Duration) -> Result<usize, BlobError> {
    remove_older_than(&layout.blobs_out(), max_age, |name| name.starts_with(PART))
}

fn remove_older_than(
    dir: &Path,
    max_age: Duration,
    eligible: impl Fn(&str) -> bool,
) -> Result<usize, BlobError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(io_at(dir)(e)),
    };
    let now = std::time::SystemTime::now();
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
                crate::now_ms()
            );
            let path = dir.join(name);
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
                    return Ok(TempBlob {
                        file,
                        path,
                        committed: false,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io_at(&path)(e)),
            }
        }
        Err(io_at(dir)(io::Error::other("no free temporary name")))
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
    fn old_uploads_and_abandoned_parts_are_collected_but_never_a_produced_blob() {
        let (_dir, layout) = layout();
        let age = |path: &Path| {
            let old = std::time::SystemTime::now() - Duration::from_secs(7200);
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
        assert_eq!(collect_outgoing_parts(&layout, hour).unwrap(), 1);
        assert_eq!(collect_incoming(&layout, hour).unwrap(), 1);
        assert!(!part.exists() && !old_upload.exists());
        assert!(new_upload.exists());
        assert!(layout.blobs_out().join(produced.as_str()).exists());
    }
}
