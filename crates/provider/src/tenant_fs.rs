//! Root's file operations inside a tenant's home, which never follow a tenant's symlink
//! (ARCHITECTURE.md invariant 7).
//!
//! A tenant controls everything under its home and can race root: a path string checked
//! and then used is a hole. So the home is opened once (`O_PATH|O_NOFOLLOW`, refusing a
//! symlinked home) and every later operation resolves relative to that descriptor with
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`, through the one helper the tenant worker
//! uses too (`tenant::beneath`): the kernel refuses any symlink on the way and any escape from
//! the home, at the moment of use. A refusal is a typed
//! `ProviderError::TenantPath`, which fails the operation that needed the path and nothing
//! else. New files are written through a temporary name and renamed, so a symlink at the
//! final name is replaced, never written through.

use std::ffi::{CStr, CString, OsStr};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Gid, Mode, OFlags, Uid};
use rustix::io::Errno;

use crate::error::ProviderError;
use crate::files::temp_name;
use crate::provider::Provider;

/// The largest tenant file root will read into memory. Tenant files read by root are small
/// (authorized_keys, a crontab); a bigger one is refused rather than allowed to exhaust the
/// runner's memory.
pub const MAX_TENANT_READ: u64 = 16 * 1024 * 1024;

/// How deep `remove_dir_all` descends. Each level holds a descriptor; a hostile tree deeper
/// than this fails the operation instead of exhausting descriptors or the stack.
const MAX_REMOVE_DEPTH: usize = 256;

/// A tenant's home, opened safely; every operation is relative to it.
#[derive(Debug)]
pub struct TenantDir {
    home: OwnedFd,
    /// For messages only; never used to reach a file.
    home_path: PathBuf,
    /// Set when running as root: new files and directories are given to the tenant.
    owner: Option<(Uid, Gid)>,
}

impl Provider {
    /// Opens the home `home` (a system path, mapped with `sysconf`) of the tenant `uid:gid`.
    /// A home that is a symlink, missing, or not a directory is refused.
    pub fn tenant_dir(&self, home: &Path, uid: u32, gid: u32) -> Result<TenantDir, ProviderError> {
        let path = self.sysconf(home);
        let fd = rustix::fs::open(
            &path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|errno| match errno {
            Errno::NOENT => tenant_path(&path, "the home does not exist"),
            Errno::LOOP | Errno::NOTDIR => {
                tenant_path(&path, "the home is a symlink or not a directory")
            }
            other => ProviderError::io("open home", &path, other.into()),
        })?;
        Ok(TenantDir {
            home: fd,
            home_path: path,
            owner: self
                .is_root
                .then(|| (Uid::from_raw(uid), Gid::from_raw(gid))),
        })
    }
}

fn tenant_path(path: &Path, reason: impl Into<String>) -> ProviderError {
    ProviderError::TenantPath {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

impl TenantDir {
    /// The mapped path of the home, for messages.
    pub fn path(&self) -> &Path {
        &self.home_path
    }

    /// Creates `rel` and any missing parent with `mode`, owned by the tenant. Existing
    /// directories are left as they are.
    pub fn mkdir_all(&self, rel: &Path, mode: u32) -> Result<(), ProviderError> {
        let parts = self.check_rel(rel, true)?;
        let mut current: Option<OwnedFd> = None;
        let mut walked = PathBuf::new();
        for part in parts {
            walked.push(part);
            let dir = current.as_ref().map_or(self.home.as_fd(), |fd| fd.as_fd());
            let next = match self.open_at(dir, part, OFlags::PATH | OFlags::DIRECTORY) {
                Ok(fd) => fd,
                Err(Errno::NOENT) => {
                    match rustix::fs::mkdirat(dir, part, Mode::from_raw_mode(mode)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(self.error("create directory", &walked, e)),
                    }
                    let fd = self
                        .open_at(dir, part, OFlags::RDONLY | OFlags::DIRECTORY)
                        .map_err(|e| self.error("open directory", &walked, e))?;
                    // Exactly `mode` whatever the umask, and the tenant's, like its other
                    // files.
                    rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode))
                        .map_err(|e| self.error("chmod", &walked, e))?;
                    self.chown(&fd, &walked)?;
                    fd
                }
                Err(e) => return Err(self.error("open directory", &walked, e)),
            };
            current = Some(next);
        }
        Ok(())
    }

    /// Atomically replaces `rel` with `bytes` (mode `mode`, owned by the tenant). The parent
    /// must exist. A symlink at `rel` is replaced by the new file, not followed.
    pub fn write_file_atomic(
        &self,
        rel: &Path,
        bytes: &[u8],
        mode: u32,
    ) -> Result<(), ProviderError> {
        let (parent_rel, name) = self.split(rel)?;
        let parent = self.open_dir(parent_rel, OFlags::RDONLY)?;
        let tmp = temp_name(name);
        let create = || {
            self.open_at(
                parent.as_fd(),
                &tmp,
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL,
            )
        };
        let fd = match create() {
            Err(Errno::EXIST) => {
                // A leftover from a crash, or something the tenant planted; unlinking
                // removes the entry itself, never a symlink's target.
                rustix::fs::unlinkat(parent.as_fd(), &tmp, AtFlags::empty())
                    .map_err(|e| self.error("remove stale", &parent_rel.join(&tmp), e))?;
                create()
            }
            other => other,
        }
        .map_err(|e| self.error("create", &parent_rel.join(&tmp), e))?;

        let result = (|| {
            let mut file = File::from(fd);
            file.write_all(bytes)
                .map_err(|e| ProviderError::io("write", self.home_path.join(rel), e))?;
            rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))
                .map_err(|e| self.error("chmod", rel, e))?;
            self.chown(&file, rel)?;
            rustix::fs::fsync(&file).map_err(|e| self.error("fsync", rel, e))?;
            rustix::fs::renameat(parent.as_fd(), &tmp, parent.as_fd(), name)
                .map_err(|e| self.error("rename into", rel, e))
        })();
        if result.is_err() {
            let _ = rustix::fs::unlinkat(parent.as_fd(), &tmp, AtFlags::empty());
        }
        result?;
        rustix::fs::fsync(&parent).map_err(|e| self.error("fsync directory", parent_rel, e))
    }

    /// The contents of `rel`, or `None` if it does not exist. Refuses anything but a regular
    /// file (a FIFO would block root forever) and files over [`MAX_TENANT_READ`].
    pub fn read_file(&self, rel: &Path) -> Result<Option<Vec<u8>>, ProviderError> {
        self.check_rel(rel, false)?;
        let fd = match self.open_at(self.home.as_fd(), rel, OFlags::RDONLY | OFlags::NONBLOCK) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(self.error("open", rel, e)),
        };
        let stat = rustix::fs::fstat(&fd).map_err(|e| self.error("stat", rel, e))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(tenant_path(&self.home_path.join(rel), "not a regular file"));
        }
        let mut bytes = Vec::new();
        File::from(fd)
            .take(MAX_TENANT_READ + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| ProviderError::io("read", self.home_path.join(rel), e))?;
        if bytes.len() as u64 > MAX_TENANT_READ {
            return Err(tenant_path(
                &self.home_path.join(rel),
                format!("larger than {MAX_TENANT_READ} bytes"),
            ));
        }
        Ok(Some(bytes))
    }

    /// Removes the file (or symlink, which is not followed) at `rel`; absent is success.
    pub fn remove_file(&self, rel: &Path) -> Result<(), ProviderError> {
        let (parent_rel, name) = self.split(rel)?;
        let parent = match self.open_dir(parent_rel, OFlags::PATH) {
            Ok(fd) => fd,
            Err(e) if is_absent(&e) => return Ok(()),
            Err(e) => return Err(e),
        };
        match rustix::fs::unlinkat(parent.as_fd(), name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(self.error("remove", rel, e)),
        }
    }

    /// Removes `rel` and everything below it without following any symlink (symlinks are
    /// unlinked, real directories are descended through descriptors); absent is success.
    pub fn remove_dir_all(&self, rel: &Path) -> Result<(), ProviderError> {
        let (parent_rel, name) = self.split(rel)?;
        let parent = match self.open_dir(parent_rel, OFlags::PATH) {
            Ok(fd) => fd,
            Err(e) if is_absent(&e) => return Ok(()),
            Err(e) => return Err(e),
        };
        self.remove_tree(parent.as_fd(), name, rel, 0)
    }

    /// Whether `rel` exists. A symlink anywhere on the way, including at `rel` itself, is a
    /// `TenantPath` error rather than a yes or no.
    pub fn exists(&self, rel: &Path) -> Result<bool, ProviderError> {
        self.check_rel(rel, false)?;
        match self.open_at(self.home.as_fd(), rel, OFlags::PATH) {
            Ok(_) => Ok(true),
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(self.error("look up", rel, e)),
        }
    }

    fn remove_tree(
        &self,
        dir: BorrowedFd<'_>,
        name: &OsStr,
        rel: &Path,
        depth: usize,
    ) -> Result<(), ProviderError> {
        let fd = match self.open_at(
            dir,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NONBLOCK,
        ) {
            Ok(fd) => fd,
            // A symlink (ELOOP) or anything that is not a directory: unlink the entry itself.
            Err(Errno::LOOP) | Err(Errno::NOTDIR) => {
                return match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
                    Ok(()) | Err(Errno::NOENT) => Ok(()),
                    Err(e) => Err(self.error("remove", rel, e)),
                };
            }
            Err(Errno::NOENT) => return Ok(()),
            Err(e) => return Err(self.error("open directory", rel, e)),
        };
        if depth >= MAX_REMOVE_DEPTH {
            return Err(tenant_path(
                &self.home_path.join(rel),
                format!("directory tree deeper than {MAX_REMOVE_DEPTH} levels"),
            ));
        }
        for child in list_dir(&fd).map_err(|e| self.error("list directory", rel, e))? {
            let child = OsStr::from_bytes(child.as_bytes()).to_owned();
            self.remove_tree(fd.as_fd(), &child, &rel.join(&child), depth + 1)?;
        }
        drop(fd);
        match rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(self.error("remove directory", rel, e)),
        }
    }

    /// `rel` split into its parent (possibly empty) and final name.
    fn split<'r>(&self, rel: &'r Path) -> Result<(&'r Path, &'r OsStr), ProviderError> {
        self.check_rel(rel, false)?;
        let name = rel
            .file_name()
            .expect("check_rel accepted only normal components");
        Ok((rel.parent().unwrap_or(Path::new("")), name))
    }

    /// Opens the directory `rel` (the home itself when empty) beneath the home.
    fn open_dir(&self, rel: &Path, kind: OFlags) -> Result<OwnedFd, ProviderError> {
        let target: &Path = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        self.open_at(self.home.as_fd(), target, kind | OFlags::DIRECTORY)
            .map_err(|e| self.error("open directory", rel, e))
    }

    /// Opens `path` beneath `dir` through the one helper the tenant worker uses too
    /// ([`tenant::beneath::open_beneath`]).
    fn open_at(
        &self,
        dir: BorrowedFd<'_>,
        path: &(impl AsRef<Path> + ?Sized),
        flags: OFlags,
    ) -> Result<OwnedFd, Errno> {
        tenant::beneath::open_beneath(dir, path.as_ref(), flags)
    }

    /// Only plain relative names: no `/` prefix, no `.` or `..`. `openat2` would catch an
    /// escape, but a `..` that stays inside is still not something root should resolve on a
    /// tenant's behalf.
    fn check_rel<'r>(
        &self,
        rel: &'r Path,
        allow_empty: bool,
    ) -> Result<Vec<&'r OsStr>, ProviderError> {
        let mut parts = Vec::new();
        for component in rel.components() {
            match component {
                Component::Normal(part) => parts.push(part),
                Component::RootDir | Component::Prefix(_) => {
                    return Err(tenant_path(rel, "must be relative to the home"));
                }
                Component::CurDir | Component::ParentDir => {
                    return Err(tenant_path(rel, "must not contain '.' or '..'"));
                }
            }
        }
        if parts.is_empty() && !allow_empty {
            return Err(tenant_path(rel, "empty path"));
        }
        Ok(parts)
    }

    fn chown(&self, fd: impl AsFd, rel: &Path) -> Result<(), ProviderError> {
        match self.owner {
            Some((uid, gid)) => rustix::fs::fchown(fd, Some(uid), Some(gid))
                .map_err(|e| self.error("chown", rel, e)),
            None => Ok(()),
        }
    }

    /// Maps a kernel refusal to the typed tenant error, anything else to `Io`.
    fn error(&self, op: &'static str, rel: &Path, errno: Errno) -> ProviderError {
        let path = self.home_path.join(rel);
        match errno {
            Errno::LOOP => tenant_path(&path, "a symlink is in the way"),
            Errno::XDEV => tenant_path(&path, "resolves outside the home"),
            Errno::NOTDIR => tenant_path(&path, "a path component is not a directory"),
            other => ProviderError::io(op, path, other.into()),
        }
    }
}

fn is_absent(err: &ProviderError) -> bool {
    matches!(err, ProviderError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
}

/// The names in a directory, without `.` and `..`, collected first so no directory stream
/// is open while the tree below is being changed.
fn list_dir(fd: &OwnedFd) -> Result<Vec<CString>, Errno> {
    let mut names = Vec::new();
    for entry in rustix::fs::Dir::read_from(fd)? {
        let entry = entry?;
        let name: &CStr = entry.file_name();
        if name.to_bytes() != b"." && name.to_bytes() != b".." {
            names.push(name.to_owned());
        }
    }
    Ok(names)
}
