//! Archives of a home, made and restored as the tenant.
//!
//! [`write_archive`] walks the home beneath its descriptor (never following a symlink, never
//! leaving its device) and writes a tar of it: directories, regular files, and symlinks as
//! symlinks. [`extract_archive`] restores such a tar beneath the home. The tar it reads is
//! hostile (it came from a blob anyone with the API key could upload), so every entry is
//! checked by [`check_entry`] before anything is written, and then written with `openat2`
//! and `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, as the tenant: a `..`, an absolute path, a
//! symlink escaping the home, a hard link, a device, a FIFO, a name with a control character
//! is refused, and a directory of the home replaced by a symlink (to `/etc`, to another home)
//! fails the restore at that entry with nothing written through it. Root runs the same
//! [`check_entry`] on the whole archive before it starts the worker (crates/ops, `backup.rs`),
//! so a refused archive normally writes nothing at all.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Timespec, Timestamps};
use rustix::io::Errno;

use crate::protocol::{ArchiveCounts, ErrorCode, TenantError};
use crate::work::{Home, io, open_beneath, path_error, temp_name};

/// Most entries one archive may hold.
pub const MAX_ENTRIES: u64 = 100_000;
/// The largest file a restore writes (and the worker's `RLIMIT_FSIZE`).
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024 * 1024;
/// Most bytes of file content one archive may hold.
pub const MAX_TOTAL_BYTES: u64 = 32 * 1024 * 1024 * 1024;
/// Deepest directory level; each level holds a descriptor while the walk is below it.
pub const MAX_DEPTH: usize = 64;
/// Longest path and longest symlink target.
pub const MAX_PATH_BYTES: usize = 4096;
pub const MAX_NAME_BYTES: usize = 255;

/// What an entry is, once checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryKind {
    Dir,
    File { size: u64 },
    Symlink { target: String },
}

/// An entry that passed [`check_entry`]: plain components beneath the home.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedEntry {
    pub components: Vec<String>,
    pub kind: EntryKind,
    /// Permission bits only (no setuid, setgid or sticky bit).
    pub mode: u32,
    pub mtime: u64,
}

impl CheckedEntry {
    pub fn path(&self) -> String {
        self.components.join("/")
    }
}

fn invalid(message: impl Into<String>) -> TenantError {
    TenantError::new(ErrorCode::ArchiveInvalid, message)
}

fn too_large(message: impl Into<String>) -> TenantError {
    TenantError::new(ErrorCode::ArchiveTooLarge, message)
}

fn shown(bytes: &[u8]) -> String {
    crate::protocol::truncate(&String::from_utf8_lossy(bytes), 80)
}

/// The plain components of an archive path: UTF-8, relative, no `.` or `..`, no empty
/// component but a trailing `/`, no control character, bounded.
pub fn check_path(raw: &[u8]) -> Result<Vec<String>, TenantError> {
    let bad = |why: &str| invalid(format!("entry {:?}: {why}", shown(raw)));
    if raw.is_empty() {
        return Err(bad("empty path"));
    }
    if raw.len() > MAX_PATH_BYTES {
        return Err(bad("path too long"));
    }
    let text = std::str::from_utf8(raw).map_err(|_| bad("path is not UTF-8"))?;
    if text.chars().any(char::is_control) {
        return Err(bad("control character in the path"));
    }
    if text.starts_with('/') {
        return Err(bad("absolute path"));
    }
    let text = text.strip_suffix('/').unwrap_or(text);
    let mut components = Vec::new();
    for part in text.split('/') {
        match part {
            "" => return Err(bad("empty path component")),
            "." | ".." => return Err(bad("'.' or '..' component")),
            _ if part.len() > MAX_NAME_BYTES => return Err(bad("component too long")),
            _ => components.push(part.to_owned()),
        }
    }
    if components.len() > MAX_DEPTH {
        return Err(too_large(format!(
            "entry {:?}: deeper than {MAX_DEPTH} levels",
            shown(raw)
        )));
    }
    Ok(components)
}

/// A symlink target that stays beneath the home when resolved from the link's directory:
/// relative, and never more `..` than the levels above it at any point.
pub fn check_link(components: &[String], target: &[u8]) -> Result<String, TenantError> {
    let bad = |why: &str| {
        invalid(format!(
            "symlink {:?} -> {:?}: {why}",
            components.join("/"),
            shown(target)
        ))
    };
    if target.is_empty() || target.len() > MAX_PATH_BYTES {
        return Err(bad("empty or too long target"));
    }
    let text = std::str::from_utf8(target).map_err(|_| bad("target is not UTF-8"))?;
    if text.chars().any(char::is_control) {
        return Err(bad("control character in the target"));
    }
    if text.starts_with('/') {
        return Err(bad("absolute target"));
    }
    // The link lives in the directory of its last component.
    let mut depth = components.len().saturating_sub(1);
    for part in text.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| bad("target escapes the home"))?;
            }
            _ => depth += 1,
        }
    }
    Ok(text.to_owned())
}

/// Checks one entry of a hostile archive: its path (`raw`, the entry's path or, for root,
/// the part of it below `home/`), its type, its size and its link.
pub fn check_entry<R: Read>(
    entry: &tar::Entry<'_, R>,
    raw: &[u8],
) -> Result<CheckedEntry, TenantError> {
    let components = check_path(raw)?;
    let header = entry.header();
    let mode = header.mode().map_err(|_| invalid("unreadable mode"))? & 0o777;
    let mtime = header.mtime().unwrap_or(0);
    let kind = match header.entry_type() {
        tar::EntryType::Directory => EntryKind::Dir,
        tar::EntryType::Regular | tar::EntryType::Continuous => {
            let size = entry.size();
            if size > MAX_FILE_BYTES {
                return Err(too_large(format!(
                    "entry {:?}: declares {size} bytes, more than {MAX_FILE_BYTES}",
                    shown(raw)
                )));
            }
            EntryKind::File { size }
        }
        tar::EntryType::Symlink => {
            let target = entry
                .link_name_bytes()
                .ok_or_else(|| invalid(format!("symlink {:?} without a target", shown(raw))))?;
            EntryKind::Symlink {
                target: check_link(&components, &target)?,
            }
        }
        tar::EntryType::Link => {
            return Err(invalid(format!(
                "entry {:?}: hard links are not restored",
                shown(raw)
            )));
        }
        other => {
            return Err(invalid(format!(
                "entry {:?}: type {other:?} is not restored (only files, directories and symlinks)",
                shown(raw)
            )));
        }
    };
    if !matches!(kind, EntryKind::File { .. }) && entry.size() != 0 {
        return Err(invalid(format!(
            "entry {:?}: a directory or symlink with content",
            shown(raw)
        )));
    }
    Ok(CheckedEntry {
        components,
        kind,
        mode,
        mtime,
    })
}

/// Restores the tar read from `input` beneath `home`, entry by entry; stops at the first
/// refused entry.
pub(crate) fn extract_archive(home: &Home, input: impl Read) -> Result<ArchiveCounts, TenantError> {
    let mut archive = tar::Archive::new(input);
    let mut counts = ArchiveCounts::default();
    let mut entries_seen = 0u64;
    let entries = archive
        .entries()
        .map_err(|e| invalid(format!("not a tar archive: {e}")))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| invalid(format!("unreadable entry: {e}")))?;
        entries_seen += 1;
        if entries_seen > MAX_ENTRIES {
            return Err(too_large(format!("more than {MAX_ENTRIES} entries")));
        }
        let raw = entry.path_bytes().into_owned();
        let checked = check_entry(&entry, &raw)?;
        let path = checked.path();
        let (parents, name) = checked
            .components
            .split_last()
            .map(|(name, parents)| (parents, name.as_str()))
            .expect("check_path returns at least one component");
        match &checked.kind {
            EntryKind::Dir => {
                let dir = home.mkdir_components(&checked.components, &path)?;
                rustix::fs::fchmod(&dir, Mode::from_raw_mode(checked.mode | 0o700))
                    .map_err(|e| path_error("chmod", &path, e))?;
                counts.dirs += 1;
            }
            EntryKind::File { size } => {
                counts.bytes += size;
                if counts.bytes > MAX_TOTAL_BYTES {
                    return Err(too_large(format!(
                        "more than {MAX_TOTAL_BYTES} bytes of files"
                    )));
                }
                let parent = home.mkdir_components(parents, &path)?;
                write_entry_file(parent.as_fd(), name, &path, &mut entry, *size, &checked)?;
                counts.files += 1;
            }
            EntryKind::Symlink { target } => {
                let parent = home.mkdir_components(parents, &path)?;
                let tmp = temp_name();
                rustix::fs::symlinkat(target.as_str(), parent.as_fd(), &tmp)
                    .map_err(|e| path_error("create symlink", &path, e))?;
                rustix::fs::renameat(parent.as_fd(), &tmp, parent.as_fd(), name).map_err(|e| {
                    let _ = rustix::fs::unlinkat(parent.as_fd(), &tmp, AtFlags::empty());
                    path_error("rename symlink into", &path, e)
                })?;
                counts.symlinks += 1;
            }
        }
    }
    Ok(counts)
}

/// Writes exactly `size` bytes of `data` under a temporary name and renames it over `name`,
/// so whatever was at `name` (a symlink, a hard link) is replaced, never written through.
fn write_entry_file(
    parent: BorrowedFd<'_>,
    name: &str,
    path: &str,
    data: &mut impl Read,
    size: u64,
    checked: &CheckedEntry,
) -> Result<(), TenantError> {
    let tmp = temp_name();
    let fd = open_beneath(
        parent,
        tmp.as_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL,
    )
    .map_err(|e| path_error("create", path, e))?;
    let written = (|| {
        let mut file = File::from(fd);
        let copied = io::copy(&mut data.take(size), &mut file).map_err(|e| {
            if e.raw_os_error() == Some(libc::EFBIG) {
                TenantError::new(ErrorCode::FileTooLarge, format!("{path}: file too large"))
            } else {
                TenantError::new(ErrorCode::Io, format!("write {path}: {e}"))
            }
        })?;
        if copied != size {
            return Err(invalid(format!(
                "entry {path:?}: the archive ends inside its content"
            )));
        }
        rustix::fs::fchmod(&file, Mode::from_raw_mode(checked.mode | 0o600))
            .map_err(|e| path_error("chmod", path, e))?;
        let mtime = Timespec {
            tv_sec: checked.mtime.min(i64::MAX as u64) as i64,
            tv_nsec: 0,
        };
        let _ = rustix::fs::futimens(
            &file,
            &Timestamps {
                last_access: mtime,
                last_modification: mtime,
            },
        );
        rustix::fs::renameat(parent, tmp.as_str(), parent, name)
            .map_err(|e| path_error("rename into", path, e))
    })();
    if written.is_err() {
        let _ = rustix::fs::unlinkat(parent, tmp.as_str(), AtFlags::empty());
    }
    written
}

impl Home {
    /// Opens (creating what is missing, mode 0755) the directory of `components` beneath the
    /// home; the home itself when empty. A symlink anywhere on the way is refused.
    pub(crate) fn mkdir_components(
        &self,
        components: &[String],
        shown_as: &str,
    ) -> Result<OwnedFd, TenantError> {
        let mut current = open_beneath(self.fd.as_fd(), ".", OFlags::RDONLY | OFlags::DIRECTORY)
            .map_err(|e| path_error("open the home", shown_as, e))?;
        for part in components {
            let next = match open_beneath(
                current.as_fd(),
                part.as_str(),
                OFlags::RDONLY | OFlags::DIRECTORY,
            ) {
                Ok(fd) => fd,
                Err(Errno::NOENT) => {
                    match rustix::fs::mkdirat(
                        current.as_fd(),
                        part.as_str(),
                        Mode::from_raw_mode(0o755),
                    ) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(path_error("create directory", shown_as, e)),
                    }
                    open_beneath(
                        current.as_fd(),
                        part.as_str(),
                        OFlags::RDONLY | OFlags::DIRECTORY,
                    )
                    .map_err(|e| path_error("open directory", shown_as, e))?
                }
                Err(e) => return Err(path_error("open directory", shown_as, e)),
            };
            current = next;
        }
        Ok(current)
    }
}

/// Writes a tar of the home to `out`: a depth-first walk beneath its descriptor, sorted by
/// name so the same home gives the same archive.
pub(crate) fn write_archive(
    home: &Home,
    out: &mut dyn Write,
) -> Result<ArchiveCounts, TenantError> {
    let root = open_beneath(
        home.fd.as_fd(),
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NONBLOCK,
    )
    .map_err(|e| io("open the home", e))?;
    let mut walk = ArchiveWalk {
        builder: tar::Builder::new(out),
        dev: home.dev,
        counts: ArchiveCounts::default(),
        entries: 0,
    };
    walk.dir(root, &mut Vec::new())?;
    walk.builder
        .finish()
        .map_err(|e| TenantError::new(ErrorCode::Io, format!("write the archive: {e}")))?;
    Ok(walk.counts)
}

struct ArchiveWalk<'o> {
    builder: tar::Builder<&'o mut dyn Write>,
    dev: u64,
    counts: ArchiveCounts,
    entries: u64,
}

impl ArchiveWalk<'_> {
    fn write_error(e: io::Error) -> TenantError {
        TenantError::new(ErrorCode::Io, format!("write the archive: {e}"))
    }

    fn header(kind: tar::EntryType, stat: &rustix::fs::Stat, size: u64) -> tar::Header {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(kind);
        header.set_mode(stat.st_mode & 0o777);
        header.set_mtime(stat.st_mtime.max(0) as u64);
        header.set_size(size);
        header
    }

    /// Archives what is inside `dir`, whose path below the home is `path`.
    fn dir(&mut self, dir: OwnedFd, path: &mut Vec<String>) -> Result<(), TenantError> {
        let shown = path.join("/");
        let mut names = Vec::new();
        for entry in rustix::fs::Dir::read_from(&dir).map_err(|e| path_error("list", &shown, e))? {
            let entry = entry.map_err(|e| path_error("list", &shown, e))?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push(name.to_vec());
            }
        }
        names.sort();
        for name in names {
            self.entries += 1;
            if self.entries > MAX_ENTRIES {
                return Err(too_large(format!(
                    "the home has more than {MAX_ENTRIES} entries"
                )));
            }
            let name = String::from_utf8(name).map_err(|e| {
                invalid(format!(
                    "{shown}/{}: a name that is not UTF-8 cannot be archived",
                    shown_bytes(e.as_bytes())
                ))
            })?;
            if name.chars().any(char::is_control) {
                return Err(invalid(format!(
                    "{shown}/{name:?}: a name with a control character cannot be archived"
                )));
            }
            path.push(name);
            let result = self.entry(dir.as_fd(), path);
            path.pop();
            result?;
        }
        Ok(())
    }

    fn entry(&mut self, parent: BorrowedFd<'_>, path: &mut Vec<String>) -> Result<(), TenantError> {
        let name = path
            .last()
            .expect("entry is called with a name pushed")
            .clone();
        let rel = path.join("/");
        let Ok(stat) = rustix::fs::statat(parent, name.as_str(), AtFlags::SYMLINK_NOFOLLOW) else {
            // Removed since it was listed.
            return Ok(());
        };
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::Directory => {
                if stat.st_dev != self.dev {
                    self.counts.skipped += 1;
                    return Ok(());
                }
                if path.len() > MAX_DEPTH {
                    return Err(too_large(format!("{rel}: deeper than {MAX_DEPTH} levels")));
                }
                let child = open_beneath(
                    parent,
                    name.as_str(),
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NONBLOCK,
                )
                .map_err(|e| path_error("open directory", &rel, e))?;
                let mut header = Self::header(tar::EntryType::Directory, &stat, 0);
                self.builder
                    .append_data(&mut header, format!("{rel}/"), io::empty())
                    .map_err(Self::write_error)?;
                self.counts.dirs += 1;
                self.dir(child, path)
            }
            FileType::RegularFile => {
                let file = open_beneath(parent, name.as_str(), OFlags::RDONLY | OFlags::NONBLOCK)
                    .map_err(|e| path_error("open", &rel, e))?;
                let opened = rustix::fs::fstat(&file).map_err(|e| path_error("stat", &rel, e))?;
                if FileType::from_raw_mode(opened.st_mode) != FileType::RegularFile {
                    return Err(path_error("open", &rel, Errno::LOOP));
                }
                let size = opened.st_size.max(0) as u64;
                if size > MAX_FILE_BYTES {
                    return Err(too_large(format!(
                        "{rel}: larger than {MAX_FILE_BYTES} bytes"
                    )));
                }
                self.counts.bytes += size;
                if self.counts.bytes > MAX_TOTAL_BYTES {
                    return Err(too_large(format!(
                        "the home holds more than {MAX_TOTAL_BYTES} bytes of files"
                    )));
                }
                let mut header = Self::header(tar::EntryType::Regular, &opened, size);
                // Exactly `size` bytes whatever happens to the file meanwhile: cut if it
                // grew, padded with zeros if it shrank.
                let data = File::from(file).take(size).chain(io::repeat(0)).take(size);
                self.builder
                    .append_data(&mut header, &rel, data)
                    .map_err(Self::write_error)?;
                self.counts.files += 1;
                Ok(())
            }
            FileType::Symlink => {
                let target = rustix::fs::readlinkat(parent, name.as_str(), Vec::new())
                    .map_err(|e| path_error("read symlink", &rel, e))?;
                // A link a restore would refuse (absolute, or leaving the home) is left out
                // and counted, rather than making the whole home impossible to restore.
                if check_link(path, target.to_bytes()).is_err() {
                    self.counts.skipped += 1;
                    return Ok(());
                }
                let mut header = Self::header(tar::EntryType::Symlink, &stat, 0);
                self.builder
                    .append_link(
                        &mut header,
                        &rel,
                        <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(
                            target.to_bytes(),
                        ),
                    )
                    .map_err(Self::write_error)?;
                self.counts.symlinks += 1;
                Ok(())
            }
            // Sockets, FIFOs, devices: not content a restore could bring back safely.
            _ => {
                self.counts.skipped += 1;
                Ok(())
            }
        }
    }
}

fn shown_bytes(bytes: &[u8]) -> String {
    shown(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(path: &str) -> Vec<String> {
        path.split('/').map(str::to_owned).collect()
    }

    #[test]
    fn link_targets_may_not_leave_the_home_at_any_point() {
        assert!(check_link(&at("a/b/l"), b"../x").is_ok());
        assert!(check_link(&at("a/b/l"), b"../../x").is_ok());
        assert!(check_link(&at("a/b/l"), b"./x/../y").is_ok());
        for bad in [&b"../../../x"[..], b"/etc", b"a\nb", b"", &[0xff, 0xfe]] {
            assert!(check_link(&at("a/b/l"), bad).is_err(), "{bad:?}");
        }
        // Up and back down still passes outside the home on the way.
        assert!(check_link(&at("l"), b"../home/user/x").is_err());
        assert!(check_link(&at("l"), b"x/../../y").is_err());
    }

    #[test]
    fn archive_paths_are_plain_components() {
        assert_eq!(check_path(b"a/b/").unwrap(), at("a/b"));
        assert_eq!(check_path(b".htaccess").unwrap(), at(".htaccess"));
        let deep = vec!["d"; MAX_DEPTH + 1].join("/");
        for bad in [
            &b""[..],
            b"/a",
            b"a//b",
            b"./a",
            b"a/..",
            b"a\0b",
            b"a\rb",
            &[b'a', 0xff],
            deep.as_bytes(),
        ] {
            assert!(
                check_path(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
