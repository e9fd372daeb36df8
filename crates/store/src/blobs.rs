//! Content-addressed blobs (DESIGN.md section 9): `blobs/in` holds what the API received,
//! `blobs/out` what root produced, each file named by the SHA-256 of its content.
//!
//! An incoming blob was written by the unprivileged API from a client's bytes, so root
//! treats it as hostile: opened without following a symlink, refused unless it is a regular
//! file, and read through [`VerifyingReader`], which hashes while it reads and fails at the
//! end if the content is not the one its name promises or is longer than the caller allows.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::PathBuf;

use registry::types::BlobId;
use rustix::fs::{FileType, Mode, OFlags};
use sha2::{Digest, Sha256};

use crate::Layout;

/// Errors of the blob directories.
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    /// No blob of that id.
    #[error("blob {0} does not exist")]
    Missing(String),
    /// Something other than a regular file has the blob's name.
    #[error("blob {0} is not a regular file")]
    NotAFile(String),
    #[error("blob i/o at {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl BlobError {
    /// A stable code for results and logs.
    pub fn code(&self) -> &'static str {
        match self {
            BlobError::Missing(_) => "blob_missing",
            BlobError::NotAFile(_) => "blob_invalid",
            BlobError::Io { .. } => "blob_io_error",
        }
    }
}

fn io_error(path: PathBuf) -> impl FnOnce(io::Error) -> BlobError {
    move |source| BlobError::Io { path, source }
}

/// Opens `blobs/in/<id>` for reading: never through a symlink, only a regular file.
pub fn open_incoming(layout: &Layout, id: &BlobId) -> Result<File, BlobError> {
    let path = layout.blobs_in().join(id.as_str());
    let fd = rustix::fs::open(
        &path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| match errno {
        rustix::io::Errno::NOENT => BlobError::Missing(id.to_string()),
        rustix::io::Errno::LOOP => BlobError::NotAFile(id.to_string()),
        other => BlobError::Io {
            path: path.clone(),
            source: other.into(),
        },
    })?;
    let stat = rustix::fs::fstat(fd.as_fd()).map_err(|e| BlobError::Io {
        path: path.clone(),
        source: e.into(),
    })?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(BlobError::NotAFile(id.to_string()));
    }
    Ok(File::from(fd))
}

/// Streams `src` into `blobs/out`: a temporary file, hashed while written, synced, mode
/// 0640, then renamed to its SHA-256. Returns the id and the size.
pub fn write_outgoing(layout: &Layout, src: &mut dyn Read) -> Result<(BlobId, u64), BlobError> {
    let dir = layout.blobs_out();
    std::fs::create_dir_all(&dir).map_err(io_error(dir.clone()))?;
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let tmp = dir.join(format!(
        ".tmp-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o640)
            .custom_flags(libc_nofollow())
            .open(&tmp)
            .map_err(io_error(tmp.clone()))?;
        let mut hasher = Sha256::new();
        let mut size = 0u64;
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            let n = match src.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io_error(tmp.clone())(e)),
            };
            hasher.update(&chunk[..n]);
            file.write_all(&chunk[..n]).map_err(io_error(tmp.clone()))?;
            size += n as u64;
        }
        file.set_permissions(std::fs::Permissions::from_mode(0o640))
            .map_err(io_error(tmp.clone()))?;
        file.sync_all().map_err(io_error(tmp.clone()))?;
        let id: BlobId = hex::encode(hasher.finalize())
            .parse()
            .expect("a SHA-256 in hex is a BlobId");
        let path = dir.join(id.as_str());
        std::fs::rename(&tmp, &path).map_err(io_error(path.clone()))?;
        File::open(&dir)
            .and_then(|d| d.sync_all())
            .map_err(io_error(dir.clone()))?;
        Ok((id, size))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn libc_nofollow() -> i32 {
    OFlags::NOFOLLOW.bits() as i32
}

/// Removes `blobs/out/<id>`; `false` if it was not there.
pub fn remove_outgoing(layout: &Layout, id: &BlobId) -> Result<bool, BlobError> {
    let path = layout.blobs_out().join(id.as_str());
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_error(path)(e)),
    }
}

/// Reads a blob while hashing it; at the end of the input it fails (`InvalidData`) if the
/// SHA-256 is not the expected one, and as soon as more than `max_bytes` were read.
pub struct VerifyingReader<R> {
    inner: R,
    expected: BlobId,
    hasher: Sha256,
    read: u64,
    max_bytes: u64,
    verified: bool,
}

impl<R> std::fmt::Debug for VerifyingReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifyingReader")
            .field("expected", &self.expected)
            .field("read", &self.read)
            .finish()
    }
}

impl<R: Read> VerifyingReader<R> {
    pub fn new(inner: R, expected: &BlobId, max_bytes: u64) -> VerifyingReader<R> {
        VerifyingReader {
            inner,
            expected: expected.clone(),
            hasher: Sha256::new(),
            read: 0,
            max_bytes,
            verified: false,
        }
    }

    /// How many bytes were read so far.
    pub fn bytes_read(&self) -> u64 {
        self.read
    }
}

impl<R: Read> Read for VerifyingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        if n == 0 {
            if !self.verified {
                let got = hex::encode(self.hasher.clone().finalize());
                if got != self.expected.as_str() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("blob content does not match its SHA-256 {}", self.expected),
                    ));
                }
                self.verified = true;
            }
            return Ok(0);
        }
        self.read += n as u64;
        if self.read > self.max_bytes {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("blob is larger than {} bytes", self.max_bytes),
            ));
        }
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outgoing_is_named_by_its_sha256_and_incoming_is_verified_while_read() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path());
        let (id, size) = write_outgoing(&layout, &mut &b"hello"[..]).unwrap();
        assert_eq!(
            id.as_str(),
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert_eq!(size, 5);
        let meta = std::fs::metadata(layout.blobs_out().join(id.as_str())).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o640);

        std::fs::create_dir_all(layout.blobs_in()).unwrap();
        std::fs::write(layout.blobs_in().join(id.as_str()), b"hello").unwrap();
        let mut out = Vec::new();
        VerifyingReader::new(open_incoming(&layout, &id).unwrap(), &id, 5)
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, b"hello");
        // Too long for the bound, or not the promised content: an error, never Ok.
        assert!(
            VerifyingReader::new(open_incoming(&layout, &id).unwrap(), &id, 4)
                .read_to_end(&mut Vec::new())
                .is_err()
        );
        std::fs::write(layout.blobs_in().join(id.as_str()), b"hellO").unwrap();
        assert!(
            VerifyingReader::new(open_incoming(&layout, &id).unwrap(), &id, 5)
                .read_to_end(&mut Vec::new())
                .is_err()
        );
        // A symlink is not followed; an absent blob is Missing.
        let other: BlobId = "0".repeat(64).parse().unwrap();
        std::os::unix::fs::symlink("/etc/passwd", layout.blobs_in().join(other.as_str())).unwrap();
        assert_eq!(
            open_incoming(&layout, &other).unwrap_err().code(),
            "blob_invalid"
        );
        std::fs::remove_file(layout.blobs_in().join(other.as_str())).unwrap();
        assert_eq!(
            open_incoming(&layout, &other).unwrap_err().code(),
            "blob_missing"
        );

        assert!(remove_outgoing(&layout, &id).unwrap());
        assert!(!remove_outgoing(&layout, &id).unwrap());
    }
}
