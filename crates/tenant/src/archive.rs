//! Archives of a home, made and restored as the tenant.
//!
//! [`write_archive`] walks the home beneath its descriptor (never following a symlink, never
//! entering another file system mounted in it; a btrfs subvolume the tenant created in it is
//! the tenant's and archived) and writes a tar of it: directories, regular files, and symlinks as
//! symlinks. [`extract_archive`] restores such a tar beneath the home. The tar it reads is
//! hostile (it came from a blob anyone with the API key could upload), so every entry is
//! checked by [`check_entry`] before anything is written, and then written with `openat2`
//! and `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, as the tenant: a `..`, an absolute path, a
//! symlink escaping the home, a hard link, a device, a FIFO, a name with a control character
//! is refused, and a directory of the home replaced by a symlink (to `/etc`, to another home)
//! fails the restore at that entry with nothing written through it. Root runs the same
//! [`check_entry`] on the whole archive before it starts the worker (crates/ops, `backup.rs`),
//! so a refused archive normally writes nothing at all.
//!
//! # Sparse files
//!
//! A file with holes costs what it holds, not its apparent size. [`write_archive`] asks the
//! kernel where the data is (`SEEK_DATA` / `SEEK_HOLE`) and stores only those regions, in
//! GNU tar's sparse format 0.1: PAX records `GNU.sparse.size` (the apparent size),
//! `GNU.sparse.numblocks` and `GNU.sparse.map` (`offset,length,...`) before a regular entry
//! whose content is the regions one after the other (`tar -xzf` restores it as a sparse file
//! too). A file with more than [`MAX_EXTENTS`] regions has its smallest holes stored as zeros
//! until it fits. [`check_entry`] accepts exactly that form and nothing looser: regions in
//! order, not overlapping, none empty, within the apparent size, adding up to the entry's
//! content, at most [`MAX_EXTENTS`], the apparent size within [`MAX_FILE_BYTES`]; any other
//! `GNU.sparse.*` record, and the old GNU sparse entry type, are refused. The bounds on
//! content ([`MAX_TOTAL_BYTES`]) count stored bytes. [`extract_archive`] writes each region at
//! its offset and sets the size, so the holes come back as holes.
//!
//! # What the walk cannot read
//!
//! A directory or file the tenant itself cannot read (mode 000, a directory without `x`, or
//! one made so while the walk is inside it) is left out and counted in
//! [`ArchiveCounts::unreadable`]; an archive with any is not the whole home, and the backup's
//! result says so. Nothing is skipped silently: an entry that cannot even be looked at is
//! counted too, and only an entry removed since it was listed is passed over.

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::FileExt;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Timespec, Timestamps};
use rustix::io::Errno;

use crate::beneath::open_beneath;
use crate::protocol::{ArchiveCounts, ErrorCode, TenantError};
use crate::work::{Home, io, is_other_file_system, path_error, temp_name};

/// Most entries one archive may hold.
pub const MAX_ENTRIES: u64 = 100_000;
/// The largest file a restore writes (and the worker's `RLIMIT_FSIZE`).
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024 * 1024;
/// Most bytes of file content one archive may hold (stored bytes: holes are not content).
pub const MAX_TOTAL_BYTES: u64 = 32 * 1024 * 1024 * 1024;
/// Deepest directory level; each level holds a descriptor while the walk is below it.
pub const MAX_DEPTH: usize = 64;
/// Longest path and longest symlink target.
pub const MAX_PATH_BYTES: usize = 4096;
pub const MAX_NAME_BYTES: usize = 255;
/// Most data regions one sparse entry lists (its map then stays under 24 KiB, inside root's
/// budget for one header's records).
pub const MAX_EXTENTS: usize = 1024;

/// The PAX records of a sparse entry (GNU tar's sparse format 0.1).
pub const SPARSE_SIZE: &str = "GNU.sparse.size";
pub const SPARSE_NUMBLOCKS: &str = "GNU.sparse.numblocks";
pub const SPARSE_MAP: &str = "GNU.sparse.map";
const SPARSE_PREFIX: &str = "GNU.sparse.";

/// One data region of a sparse file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub offset: u64,
    pub len: u64,
}

/// What an entry is, once checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryKind {
    Dir,
    /// A regular file of `size` bytes. Its content in the archive is all of it, or, when
    /// `extents` is set (a sparse file), its data regions one after the other; the rest of
    /// the file is holes.
    File {
        size: u64,
        extents: Option<Vec<Extent>>,
    },
    Symlink {
        target: String,
    },
}

impl EntryKind {
    /// Bytes of content the entry carries in the archive.
    pub fn stored(&self) -> u64 {
        match self {
            EntryKind::File {
                extents: Some(extents),
                ..
            } => extents.iter().map(|e| e.len).sum(),
            EntryKind::File { size, .. } => *size,
            EntryKind::Dir | EntryKind::Symlink { .. } => 0,
        }
    }
}

/// The PAX records that describe a sparse file of `size` bytes with these data regions. As
/// GNU tar writes them, the map ends with an empty region at the end of the file (GNU tar
/// refuses an empty map, and needs it to set the size).
pub fn sparse_records(size: u64, extents: &[Extent]) -> [(&'static str, Vec<u8>); 3] {
    let map = extents
        .iter()
        .chain(std::iter::once(&Extent {
            offset: size,
            len: 0,
        }))
        .map(|e| format!("{},{}", e.offset, e.len))
        .collect::<Vec<_>>()
        .join(",");
    [
        (SPARSE_SIZE, size.to_string().into_bytes()),
        (
            SPARSE_NUMBLOCKS,
            (extents.len() + 1).to_string().into_bytes(),
        ),
        (SPARSE_MAP, map.into_bytes()),
    ]
}

/// Appends a file entry: the sparse records first when it has regions, then its header
/// (`header`'s size is set here to the stored bytes) and `data`, which must yield exactly
/// the stored bytes.
pub fn append_file<W: Write>(
    builder: &mut tar::Builder<W>,
    header: &mut tar::Header,
    path: &str,
    size: u64,
    extents: Option<&[Extent]>,
    data: impl Read,
) -> io::Result<()> {
    header.set_entry_type(tar::EntryType::Regular);
    match extents {
        Some(extents) => {
            // GNU tar honours sparse records before a POSIX header only, not a GNU one.
            let mut posix = tar::Header::new_ustar();
            posix.set_entry_type(tar::EntryType::Regular);
            posix.set_mode(header.mode()?);
            posix.set_mtime(header.mtime()?);
            *header = posix;
            let records = sparse_records(size, extents);
            builder.append_pax_extensions(records.iter().map(|(k, v)| (*k, &v[..])))?;
            header.set_size(extents.iter().map(|e| e.len).sum());
        }
        None => header.set_size(size),
    }
    builder.append_data(header, path, data)
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

/// A decimal number as the sparse records write it: digits only, no sign, no space.
fn number(text: &str) -> Option<u64> {
    if text.is_empty() || text.len() > 20 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// The sparse records of an entry, if it has any: (apparent size, data regions), checked.
fn sparse_map<R: Read>(
    entry: &mut tar::Entry<'_, R>,
    raw: &[u8],
) -> Result<Option<(u64, Vec<Extent>)>, TenantError> {
    let bad = |why: &str| invalid(format!("entry {:?}: {why}", shown(raw)));
    let Some(records) = entry
        .pax_extensions()
        .map_err(|_| bad("unreadable PAX records"))?
    else {
        return Ok(None);
    };
    let (mut size, mut count, mut map) = (None, None, None);
    for record in records {
        let record = record.map_err(|_| bad("a malformed PAX record"))?;
        let key = record
            .key()
            .map_err(|_| bad("a PAX key that is not UTF-8"))?;
        if !key.starts_with(SPARSE_PREFIX) {
            continue;
        }
        let value = record
            .value()
            .map_err(|_| bad("a sparse record that is not UTF-8"))?;
        let slot = match key {
            SPARSE_SIZE => &mut size,
            SPARSE_NUMBLOCKS => &mut count,
            SPARSE_MAP => &mut map,
            _ => {
                return Err(bad(
                    "a sparse record of another form than GNU sparse 0.1 (size, numblocks, map)",
                ));
            }
        };
        if slot.replace(value.to_owned()).is_some() {
            return Err(bad("a sparse record twice"));
        }
    }
    let (size, count, map) = match (size, count, map) {
        (None, None, None) => return Ok(None),
        (Some(size), Some(count), Some(map)) => (size, count, map),
        _ => return Err(bad("incomplete sparse records")),
    };
    let size = number(&size).ok_or_else(|| bad("a sparse size that is not a number"))?;
    if size > MAX_FILE_BYTES {
        return Err(too_large(format!(
            "entry {:?}: declares {size} bytes, more than {MAX_FILE_BYTES}",
            shown(raw)
        )));
    }
    // The regions, then the empty one that marks the end.
    let count = number(&count)
        .filter(|&n| (1..=MAX_EXTENTS as u64 + 1).contains(&n))
        .ok_or_else(|| bad("a sparse map with no end or too many regions"))?
        as usize;
    let fields: Vec<&str> = map.split(',').collect();
    if fields.len() != 2 * count {
        return Err(bad("a sparse map that does not list numblocks regions"));
    }
    let numbers = fields
        .iter()
        .map(|field| number(field))
        .collect::<Option<Vec<u64>>>()
        .ok_or_else(|| bad("a sparse map entry that is not a number"))?;
    let pairs: Vec<(u64, u64)> = numbers.chunks_exact(2).map(|p| (p[0], p[1])).collect();
    let (&last, regions) = pairs.split_last().expect("count is at least 1");
    if last != (size, 0) {
        return Err(bad("a sparse map that does not end with the size"));
    }
    let mut extents = Vec::with_capacity(regions.len());
    let mut end = 0u64;
    for &(offset, len) in regions {
        end = offset
            .checked_add(len)
            .filter(|&region_end| len > 0 && offset >= end && region_end <= size)
            .ok_or_else(|| {
                bad("sparse regions empty, out of order, overlapping or past the size")
            })?;
        extents.push(Extent { offset, len });
    }
    Ok(Some((size, extents)))
}

/// Checks one entry of a hostile archive: its path (`raw`, the entry's path or, for root,
/// the part of it below `home/`), its type, its size, its sparse map and its link.
pub fn check_entry<R: Read>(
    entry: &mut tar::Entry<'_, R>,
    raw: &[u8],
) -> Result<CheckedEntry, TenantError> {
    let components = check_path(raw)?;
    let sparse = sparse_map(entry, raw)?;
    let header = entry.header();
    let mode = header.mode().map_err(|_| invalid("unreadable mode"))? & 0o777;
    let mtime = header.mtime().unwrap_or(0);
    if sparse.is_some() && header.entry_type() != tar::EntryType::Regular {
        return Err(invalid(format!(
            "entry {:?}: sparse records on an entry that is not a regular file",
            shown(raw)
        )));
    }
    let kind = match header.entry_type() {
        tar::EntryType::Directory => EntryKind::Dir,
        tar::EntryType::Regular | tar::EntryType::Continuous => match sparse {
            Some((size, extents)) => {
                let kind = EntryKind::File {
                    size,
                    extents: Some(extents),
                };
                if kind.stored() != entry.size() {
                    return Err(invalid(format!(
                        "entry {:?}: its sparse regions hold {} bytes, its content {}",
                        shown(raw),
                        kind.stored(),
                        entry.size()
                    )));
                }
                kind
            }
            None => {
                let size = entry.size();
                if size > MAX_FILE_BYTES {
                    return Err(too_large(format!(
                        "entry {:?}: declares {size} bytes, more than {MAX_FILE_BYTES}",
                        shown(raw)
                    )));
                }
                EntryKind::File {
                    size,
                    extents: None,
                }
            }
        },
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
        let checked = check_entry(&mut entry, &raw)?;
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
            EntryKind::File { size, extents } => {
                counts.bytes += checked.kind.stored();
                if counts.bytes > MAX_TOTAL_BYTES {
                    return Err(too_large(format!(
                        "more than {MAX_TOTAL_BYTES} bytes of files"
                    )));
                }
                counts.apparent_bytes += size;
                counts.sparse_files += u64::from(extents.is_some());
                let parent = home.mkdir_components(parents, &path)?;
                write_entry_file(parent.as_fd(), name, &path, &mut entry, &checked)?;
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

/// Writes a checked file's content from `data` (all of it, or each sparse region at its
/// offset and then the size, so the holes stay holes) under a temporary name and renames it
/// over `name`, so whatever was at `name` (a symlink, a hard link) is replaced, never
/// written through.
fn write_entry_file(
    parent: BorrowedFd<'_>,
    name: &str,
    path: &str,
    data: &mut impl Read,
    checked: &CheckedEntry,
) -> Result<(), TenantError> {
    let EntryKind::File { size, extents } = &checked.kind else {
        unreachable!("write_entry_file is called for files only");
    };
    let whole = [Extent {
        offset: 0,
        len: *size,
    }];
    let regions = extents.as_deref().unwrap_or(&whole);
    let tmp = temp_name();
    let fd = open_beneath(
        parent,
        tmp.as_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL,
    )
    .map_err(|e| path_error("create", path, e))?;
    let write_error = |e: io::Error| {
        if e.raw_os_error() == Some(libc::EFBIG) {
            TenantError::new(ErrorCode::FileTooLarge, format!("{path}: file too large"))
        } else {
            TenantError::new(ErrorCode::Io, format!("write {path}: {e}"))
        }
    };
    let written = (|| {
        let mut file = File::from(fd);
        for region in regions {
            file.seek(io::SeekFrom::Start(region.offset))
                .map_err(write_error)?;
            let copied =
                io::copy(&mut (&mut *data).take(region.len), &mut file).map_err(write_error)?;
            if copied != region.len {
                return Err(invalid(format!(
                    "entry {path:?}: the archive ends inside its content"
                )));
            }
        }
        // The holes after the last region (a no-op for a file written whole).
        file.set_len(*size).map_err(write_error)?;
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

/// The data regions of the first `size` bytes of `file`, as the kernel reports them
/// (`SEEK_DATA`, `SEEK_HOLE`), at most [`MAX_EXTENTS`] (the smallest holes filled in). A file
/// system that cannot say, or a file that changes under the questions, gives the whole file.
pub fn data_extents(file: BorrowedFd<'_>, size: u64) -> Vec<Extent> {
    use rustix::fs::SeekFrom;
    let whole = vec![Extent {
        offset: 0,
        len: size,
    }];
    let mut extents = Vec::new();
    let mut pos = 0;
    while pos < size {
        let start = match rustix::fs::seek(file, SeekFrom::Data(pos)) {
            Ok(start) => start,
            // No data after `pos`: the rest is a hole.
            Err(Errno::NXIO) => break,
            Err(_) => return whole,
        };
        if start >= size {
            break;
        }
        let end = match rustix::fs::seek(file, SeekFrom::Hole(start)) {
            Ok(end) if end > start => end.min(size),
            _ => return whole,
        };
        extents.push(Extent {
            offset: start,
            len: end - start,
        });
        pos = end;
    }
    coalesce(extents, MAX_EXTENTS)
}

/// At most `max` regions: the smallest holes between them (the first of equal ones) are
/// filled in, stored as zeros, until `max` are left.
fn coalesce(extents: Vec<Extent>, max: usize) -> Vec<Extent> {
    if extents.len() <= max || max == 0 {
        return extents;
    }
    let gap = |a: &Extent, b: &Extent| b.offset - (a.offset + a.len);
    let gaps: Vec<u64> = extents.windows(2).map(|w| gap(&w[0], &w[1])).collect();
    let mut order: Vec<usize> = (0..gaps.len()).collect();
    order.sort_unstable_by_key(|&i| (gaps[i], i));
    let mut fill = vec![false; gaps.len()];
    for &i in &order[..extents.len() - max] {
        fill[i] = true;
    }
    let mut out: Vec<Extent> = Vec::with_capacity(max);
    for (i, extent) in extents.into_iter().enumerate() {
        match out.last_mut() {
            Some(last) if fill[i - 1] => last.len = extent.offset + extent.len - last.offset,
            _ => out.push(extent),
        }
    }
    out
}

/// The stored content of a file: each region read at its offset, exactly its length (cut
/// if the file grew, zeros if it shrank meanwhile), one after the other.
struct Regions {
    file: File,
    regions: Vec<Extent>,
    index: usize,
    /// Bytes of the current region already given.
    done: u64,
}

impl Read for Regions {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(region) = self.regions.get(self.index) else {
                return Ok(0);
            };
            let left = region.len - self.done;
            if left == 0 {
                self.index += 1;
                self.done = 0;
                continue;
            }
            let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            let n = match self
                .file
                .read_at(&mut buf[..want], region.offset + self.done)?
            {
                // Shrunk since it was measured: the rest of the region is zeros.
                0 => {
                    buf[..want].fill(0);
                    want
                }
                n => n,
            };
            self.done += n as u64;
            return Ok(n);
        }
    }
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
        // Listing reopens the directory: a chmod since it was opened shows here.
        let listing = match rustix::fs::Dir::read_from(&dir) {
            Ok(listing) => listing,
            Err(Errno::ACCESS | Errno::PERM) => {
                self.counts.unreadable += 1;
                return Ok(());
            }
            Err(e) => return Err(path_error("list", &shown, e)),
        };
        for entry in listing {
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
        let stat = match rustix::fs::statat(parent, name.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            // Removed since it was listed.
            Err(Errno::NOENT) => return Ok(()),
            // Listed but not searchable (a directory with `r` but no `x`, or made so since
            // it was listed): left out, and counted.
            Err(_) => {
                self.counts.unreadable += 1;
                return Ok(());
            }
        };
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::Directory => {
                if is_other_file_system(parent, name.as_str(), &stat, self.dev) {
                    self.counts.skipped += 1;
                    return Ok(());
                }
                if path.len() > MAX_DEPTH {
                    return Err(too_large(format!("{rel}: deeper than {MAX_DEPTH} levels")));
                }
                let child = match open_beneath(
                    parent,
                    name.as_str(),
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NONBLOCK,
                ) {
                    Ok(child) => child,
                    Err(Errno::NOENT) => return Ok(()),
                    Err(Errno::ACCESS | Errno::PERM) => {
                        self.counts.unreadable += 1;
                        return Ok(());
                    }
                    Err(e) => return Err(path_error("open directory", &rel, e)),
                };
                let mut header = Self::header(tar::EntryType::Directory, &stat, 0);
                self.builder
                    .append_data(&mut header, format!("{rel}/"), io::empty())
                    .map_err(Self::write_error)?;
                self.counts.dirs += 1;
                self.dir(child, path)
            }
            FileType::RegularFile => {
                let file =
                    match open_beneath(parent, name.as_str(), OFlags::RDONLY | OFlags::NONBLOCK) {
                        Ok(file) => file,
                        Err(Errno::NOENT) => return Ok(()),
                        Err(Errno::ACCESS | Errno::PERM) => {
                            self.counts.unreadable += 1;
                            return Ok(());
                        }
                        Err(e) => return Err(path_error("open", &rel, e)),
                    };
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
                let regions = data_extents(file.as_fd(), size);
                let whole = size == 0
                    || regions
                        == [Extent {
                            offset: 0,
                            len: size,
                        }];
                let extents = (!whole).then_some(&regions[..]);
                let stored: u64 = regions.iter().map(|e| e.len).sum();
                self.counts.bytes += stored;
                if self.counts.bytes > MAX_TOTAL_BYTES {
                    return Err(too_large(format!(
                        "the home holds more than {MAX_TOTAL_BYTES} bytes of files"
                    )));
                }
                self.counts.apparent_bytes += size;
                self.counts.sparse_files += u64::from(!whole);
                let mut header = Self::header(tar::EntryType::Regular, &opened, size);
                let data = Regions {
                    file: File::from(file),
                    regions: regions.clone(),
                    index: 0,
                    done: 0,
                };
                append_file(&mut self.builder, &mut header, &rel, size, extents, data)
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

    /// One regular entry of `stored` bytes of content after these PAX records, checked.
    fn check_with_records(
        kind: tar::EntryType,
        records: &[(&str, &str)],
        stored: usize,
    ) -> Result<CheckedEntry, TenantError> {
        let mut builder = tar::Builder::new(Vec::new());
        builder
            .append_pax_extensions(records.iter().map(|(k, v)| (*k, v.as_bytes())))
            .unwrap();
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(kind);
        header.set_mode(0o644);
        header.set_size(stored as u64);
        if kind == tar::EntryType::Symlink {
            header.set_link_name("x").unwrap();
        }
        builder
            .append_data(&mut header, "f", &vec![1u8; stored][..])
            .unwrap();
        let bytes = builder.into_inner().unwrap();
        let mut archive = tar::Archive::new(&bytes[..]);
        let mut entry = archive
            .entries()
            .unwrap()
            .next()
            .unwrap()
            .map_err(|e| invalid(format!("the tar reader refused it: {e}")))?;
        check_entry(&mut entry, b"f")
    }

    fn sparse(size: &str, count: &str, map: &str) -> [(&'static str, String); 3] {
        [
            (SPARSE_SIZE, size.to_owned()),
            (SPARSE_NUMBLOCKS, count.to_owned()),
            (SPARSE_MAP, map.to_owned()),
        ]
    }

    fn records<'a>(r: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
        r.iter().map(|(k, v)| (*k, v.as_str())).collect()
    }

    #[test]
    fn sparse_entries_are_accepted_only_in_the_form_the_node_writes() {
        let good = check_with_records(
            tar::EntryType::Regular,
            &records(&sparse("1048576", "3", "0,10,1048000,6,1048576,0")),
            16,
        )
        .unwrap();
        assert_eq!(
            good.kind,
            EntryKind::File {
                size: 1_048_576,
                extents: Some(vec![
                    Extent { offset: 0, len: 10 },
                    Extent {
                        offset: 1_048_000,
                        len: 6
                    }
                ]),
            }
        );
        assert_eq!(good.kind.stored(), 16);
        // All holes: no region at all.
        let empty = check_with_records(
            tar::EntryType::Regular,
            &records(&sparse("4096", "1", "4096,0")),
            0,
        )
        .unwrap();
        assert_eq!(empty.kind.stored(), 0);
        // Other PAX records alone make no sparse file.
        let plain =
            check_with_records(tar::EntryType::Regular, &[("mtime", "1700000000")], 3).unwrap();
        assert_eq!(
            plain.kind,
            EntryKind::File {
                size: 3,
                extents: None
            }
        );

        let too_many = (0..=MAX_EXTENTS)
            .map(|i| format!("{},1", i * 2))
            .collect::<Vec<_>>()
            .join(",")
            + ",1000000,0";
        let big = (MAX_FILE_BYTES + 1).to_string();
        let end = |r: &[(&'static str, String)], extra: (&'static str, &str)| {
            [r.to_vec(), vec![(extra.0, extra.1.to_owned())]].concat()
        };
        let marker_only = sparse("100", "1", "100,0");
        use ErrorCode::{ArchiveInvalid as Invalid, ArchiveTooLarge as TooLarge};
        type Case<'a> = (&'a str, Vec<(&'static str, String)>, usize, ErrorCode);
        let hostile: Vec<Case<'_>> = vec![
            (
                "overlapping",
                sparse("100", "3", "0,10,5,10,100,0").to_vec(),
                20,
                Invalid,
            ),
            (
                "out of order",
                sparse("100", "3", "50,10,0,10,100,0").to_vec(),
                20,
                Invalid,
            ),
            (
                "past the size",
                sparse("100", "2", "95,10,100,0").to_vec(),
                10,
                Invalid,
            ),
            (
                "an empty region",
                sparse("100", "2", "10,0,100,0").to_vec(),
                0,
                Invalid,
            ),
            (
                "content not the regions' sum",
                sparse("100", "2", "0,10,100,0").to_vec(),
                11,
                Invalid,
            ),
            (
                "numblocks not the map's",
                sparse("100", "3", "0,10,100,0").to_vec(),
                10,
                Invalid,
            ),
            (
                "no end marker",
                sparse("100", "1", "0,10").to_vec(),
                10,
                Invalid,
            ),
            (
                "an end marker short of the size",
                sparse("100", "2", "0,10,50,0").to_vec(),
                10,
                Invalid,
            ),
            ("an empty map", sparse("100", "0", "").to_vec(), 0, Invalid),
            (
                "a signed number",
                sparse("100", "2", "+0,10,100,0").to_vec(),
                10,
                Invalid,
            ),
            (
                "a spaced number",
                sparse("100", "2", "0, 10,100,0").to_vec(),
                10,
                Invalid,
            ),
            (
                "a hex size",
                sparse("0x64", "1", "100,0").to_vec(),
                0,
                Invalid,
            ),
            (
                "an offset overflowing",
                sparse("100", "2", "18446744073709551615,1,100,0").to_vec(),
                1,
                Invalid,
            ),
            (
                "a trailing comma",
                sparse("100", "2", "0,10,100,0,").to_vec(),
                10,
                Invalid,
            ),
            (
                "more regions than allowed",
                sparse("1000000", &(MAX_EXTENTS + 2).to_string(), &too_many).to_vec(),
                MAX_EXTENTS + 1,
                Invalid,
            ),
            (
                "an apparent size past the file limit",
                sparse(&big, "1", &format!("{big},0")).to_vec(),
                0,
                TooLarge,
            ),
            (
                "incomplete records",
                vec![(SPARSE_SIZE, "100".to_owned())],
                0,
                Invalid,
            ),
            (
                "another sparse form (1.0)",
                end(&marker_only, ("GNU.sparse.major", "1")),
                0,
                Invalid,
            ),
            (
                "a renamed sparse file",
                end(&marker_only, ("GNU.sparse.name", "/etc/shadow")),
                0,
                Invalid,
            ),
            (
                "a record twice",
                end(&marker_only, (SPARSE_SIZE, "200")),
                0,
                Invalid,
            ),
        ];
        for (name, r, stored, code) in &hostile {
            let err =
                check_with_records(tar::EntryType::Regular, &records(r), *stored).expect_err(name);
            assert_eq!(err.code, *code, "{name}: {}", err.message);
        }
        // A sparse map on anything but a regular file.
        for kind in [tar::EntryType::Symlink, tar::EntryType::Directory] {
            let err = check_with_records(kind, &records(&marker_only), 0).unwrap_err();
            assert_eq!(err.code, ErrorCode::ArchiveInvalid, "{kind:?}");
        }
        // The old GNU sparse entry type stays refused.
        let err = check_with_records(tar::EntryType::GNUSparse, &[], 0).unwrap_err();
        assert_eq!(err.code, ErrorCode::ArchiveInvalid);
    }

    #[test]
    fn a_file_with_too_many_regions_is_stored_with_its_smallest_holes_filled() {
        let regions: Vec<Extent> = (0..10u64)
            .map(|i| Extent {
                offset: i * 100 + if i >= 5 { 1000 } else { 0 },
                len: 10,
            })
            .collect();
        assert_eq!(coalesce(regions.clone(), 10), regions);
        // The four 90-byte holes of each half are filled first; the 1090-byte one stays.
        assert_eq!(
            coalesce(regions.clone(), 2),
            vec![
                Extent {
                    offset: 0,
                    len: 410
                },
                Extent {
                    offset: 1500,
                    len: 410
                }
            ]
        );
        let one = coalesce(regions, 1);
        assert_eq!(
            one,
            vec![Extent {
                offset: 0,
                len: 1910
            }]
        );
        // Equal holes: exactly as many are filled as needed, the first ones.
        let even: Vec<Extent> = (0..5u64)
            .map(|i| Extent {
                offset: i * 100,
                len: 10,
            })
            .collect();
        assert_eq!(
            coalesce(even, 3),
            vec![
                Extent {
                    offset: 0,
                    len: 210
                },
                Extent {
                    offset: 300,
                    len: 10
                },
                Extent {
                    offset: 400,
                    len: 10
                }
            ]
        );
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
