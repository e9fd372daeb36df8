//! The work itself, done as whoever runs it (the tenant, in the worker).
//!
//! The home is opened once with `O_PATH | O_DIRECTORY | O_NOFOLLOW` and must belong to the
//! user doing the work; everything beneath it is reached relative to that descriptor with
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`, so a symlink the tenant planted anywhere
//! on the way is refused by the kernel at the moment of use (`tenant_path_unsafe`), never
//! followed. Running as the tenant adds the second wall: even a path that did escape would
//! meet the kernel's permission checks for the tenant, not for root.

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;

use crate::beneath::open_beneath;
use crate::protocol::{
    Bound, DU_MAX_BUDGET_MS, DU_MAX_DEPTH, DU_MAX_ENTRIES, DirMode, DiskUsage, ErrorCode,
    FileContent, FileMode, RelPath, Request, TenantError, TenantResult, Whoami,
};
use crate::sandbox;

/// Runs one request against the home at `home`. `input` is what follows the request on
/// stdin, `output` where an archive goes (stdout); only the archive requests use them.
pub fn handle_stream(
    home: &Path,
    request: &Request,
    input: &mut dyn std::io::Read,
    output: &mut dyn Write,
) -> Result<TenantResult, TenantError> {
    match request {
        Request::ArchiveHome {} => {
            let home = Home::open(home)?;
            Ok(TenantResult::ArchiveHome(crate::archive::write_archive(
                &home, output,
            )?))
        }
        Request::ExtractHome {} => {
            let home = Home::open(home)?;
            Ok(TenantResult::ExtractHome(crate::archive::extract_archive(
                &home, input,
            )?))
        }
        other => handle(home, other),
    }
}

/// Runs one request that needs no stream against the home at `home`.
pub fn handle(home: &Path, request: &Request) -> Result<TenantResult, TenantError> {
    request.check()?;
    match request {
        Request::ArchiveHome {} | Request::ExtractHome {} => Err(TenantError::new(
            ErrorCode::RequestInvalid,
            format!("{} needs a stream", request.name()),
        )),
        Request::Whoami {} => Ok(TenantResult::Whoami(whoami())),
        Request::EnsureDirs { dirs, mode } => {
            let home = Home::open(home)?;
            let (mut created, mut existing) = (0, 0);
            for dir in dirs {
                if home.mkdir_all(dir, *mode)? {
                    created += 1;
                } else {
                    existing += 1;
                }
            }
            Ok(TenantResult::EnsureDirs { created, existing })
        }
        Request::WriteFile {
            path,
            content,
            mode,
        } => {
            let home = Home::open(home)?;
            home.write_file(path, content, *mode)?;
            Ok(TenantResult::WriteFile {
                bytes: content.bytes().len() as u64,
            })
        }
        Request::DiskUsage { budget_ms } => {
            let home = Home::open(home)?;
            let budget = budget_ms.unwrap_or(DU_MAX_BUDGET_MS).min(DU_MAX_BUDGET_MS);
            Ok(TenantResult::DiskUsage(
                home.disk_usage(Duration::from_millis(budget.into()))?,
            ))
        }
        Request::TerminateProcesses { uid } => Ok(TenantResult::TerminateProcesses(
            crate::terminate::terminate_processes(*uid)?,
        )),
    }
}

/// The process's own view of itself.
pub fn whoami() -> Whoami {
    let (uid, gid) = sandbox::res_ids();
    // SAFETY: prctl with integer arguments only.
    let no_new_privs = unsafe { libc::prctl(libc::PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) };
    // SAFETY: as above.
    let dumpable = unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) };
    let (cap_effective, cap_permitted) = sandbox::capabilities();
    let rlimits = sandbox::RLIMITS
        .iter()
        .map(|&(name, _)| {
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            let resource = sandbox::resource(name).expect("RLIMITS names only known resources");
            // SAFETY: `limit` is a valid out-pointer for the call.
            unsafe { libc::getrlimit(resource, &mut limit) };
            (name.to_owned(), limit.rlim_cur, limit.rlim_max)
        })
        .collect();
    Whoami {
        uid,
        gid,
        groups: sandbox::current_groups(),
        no_new_privs: no_new_privs.max(0) as u32,
        dumpable: dumpable.max(0) as u32,
        cap_effective,
        cap_permitted,
        regain_root_refused: sandbox::root_refused(),
        env_count: std::env::vars_os().count() as u32,
        cwd: std::env::current_dir()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        open_fds: open_fds(),
        rlimits,
    }
}

/// Every open descriptor, probed with `F_GETFD` up to the descriptor limit (no `/proc`,
/// which a non-dumpable process cannot list for itself).
fn open_fds() -> Vec<i32> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid out-pointer.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    let top = limit.rlim_cur.min(65_536) as i32;
    // SAFETY: F_GETFD only reads descriptor flags.
    (0..top)
        .filter(|&fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1)
        .collect()
}

/// A home opened safely.
pub(crate) struct Home {
    pub(crate) fd: OwnedFd,
    pub(crate) dev: u64,
}

impl Home {
    pub(crate) fn open(path: &Path) -> Result<Home, TenantError> {
        let fd = rustix::fs::open(
            path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| {
            let why = match e {
                Errno::NOENT => "does not exist".to_owned(),
                Errno::LOOP | Errno::NOTDIR => "is a symlink or not a directory".to_owned(),
                Errno::ACCESS => "cannot be reached by the tenant".to_owned(),
                other => other.to_string(),
            };
            TenantError::new(
                ErrorCode::HomeInvalid,
                format!("home {}: {why}", path.display()),
            )
        })?;
        let stat = rustix::fs::fstat(&fd).map_err(|e| io("stat the home", e))?;
        let me = rustix::process::geteuid().as_raw();
        if stat.st_uid != me {
            return Err(TenantError::new(
                ErrorCode::HomeInvalid,
                format!(
                    "home {} belongs to uid {}, not to the worker's uid {me}",
                    path.display(),
                    stat.st_uid
                ),
            ));
        }
        Ok(Home {
            fd,
            dev: stat.st_dev,
        })
    }

    /// Creates `rel` and missing parents; true if the last component was created.
    fn mkdir_all(&self, rel: &RelPath, mode: DirMode) -> Result<bool, TenantError> {
        let mut current: Option<OwnedFd> = None;
        let mut created = false;
        for part in rel.components() {
            let dir = current.as_ref().map_or(self.fd.as_fd(), |fd| fd.as_fd());
            created = false;
            let next = match open_beneath(dir, part, OFlags::PATH | OFlags::DIRECTORY) {
                Ok(fd) => fd,
                Err(Errno::NOENT) => {
                    match rustix::fs::mkdirat(dir, part, Mode::from_raw_mode(mode.bits())) {
                        Ok(()) => created = true,
                        Err(Errno::EXIST) => {}
                        Err(e) => return Err(path_error("create directory", rel, e)),
                    }
                    let fd = open_beneath(dir, part, OFlags::RDONLY | OFlags::DIRECTORY)
                        .map_err(|e| path_error("open directory", rel, e))?;
                    if created {
                        // Exactly the mode asked for, whatever the umask.
                        rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode.bits()))
                            .map_err(|e| path_error("chmod", rel, e))?;
                    }
                    fd
                }
                Err(e) => return Err(path_error("open directory", rel, e)),
            };
            current = Some(next);
        }
        Ok(created)
    }

    /// Writes through a temporary name in the same directory and renames over `rel`, so a
    /// symlink or hard link at `rel` is replaced, never written through.
    fn write_file(
        &self,
        rel: &RelPath,
        content: &FileContent,
        mode: FileMode,
    ) -> Result<(), TenantError> {
        let (parent, name) = match rel.as_str().rsplit_once('/') {
            Some((parent, name)) => (Some(parent), name),
            None => (None, rel.as_str()),
        };
        let dir = match parent {
            Some(parent) => {
                open_beneath(self.fd.as_fd(), parent, OFlags::RDONLY | OFlags::DIRECTORY)
                    .map_err(|e| path_error("open directory", rel, e))?
            }
            None => open_beneath(self.fd.as_fd(), ".", OFlags::RDONLY | OFlags::DIRECTORY)
                .map_err(|e| path_error("open directory", rel, e))?,
        };
        let tmp = temp_name();
        let create = || {
            open_beneath(
                dir.as_fd(),
                &tmp,
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL,
            )
        };
        let fd = match create() {
            Err(Errno::EXIST) => {
                // Something the tenant placed at our temporary name: unlinking removes the
                // entry itself, never a symlink's target.
                rustix::fs::unlinkat(dir.as_fd(), &tmp, AtFlags::empty())
                    .map_err(|e| path_error("remove stale temporary", rel, e))?;
                create()
            }
            other => other,
        }
        .map_err(|e| path_error("create", rel, e))?;
        let written = (|| {
            let mut file = File::from(fd);
            file.write_all(content.bytes()).map_err(|e| {
                if e.raw_os_error() == Some(libc::EFBIG) {
                    TenantError::new(ErrorCode::FileTooLarge, format!("{rel}: file too large"))
                } else {
                    TenantError::new(ErrorCode::Io, format!("write {rel}: {e}"))
                }
            })?;
            rustix::fs::fchmod(&file, Mode::from_raw_mode(mode.bits()))
                .map_err(|e| path_error("chmod", rel, e))?;
            rustix::fs::fsync(&file).map_err(|e| path_error("fsync", rel, e))?;
            rustix::fs::renameat(dir.as_fd(), &tmp, dir.as_fd(), name)
                .map_err(|e| path_error("rename into", rel, e))
        })();
        if written.is_err() {
            let _ = rustix::fs::unlinkat(dir.as_fd(), &tmp, AtFlags::empty());
        }
        written?;
        rustix::fs::fsync(&dir).map_err(|e| path_error("fsync directory", rel, e))
    }

    fn disk_usage(&self, budget: Duration) -> Result<DiskUsage, TenantError> {
        let root = open_beneath(
            self.fd.as_fd(),
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NONBLOCK,
        )
        .map_err(|e| io("open the home", e))?;
        let stat = rustix::fs::fstat(&root).map_err(|e| io("stat the home", e))?;
        let mut walk = Walk {
            dev: self.dev,
            deadline: Instant::now() + budget,
            seen_links: std::collections::HashSet::new(),
            usage: DiskUsage {
                complete: true,
                ..DiskUsage::default()
            },
            entries: 0,
        };
        walk.count(&stat);
        walk.dir(root, 0);
        let mut usage = walk.usage;
        // What could not be read is usage the figures do not hold: never a complete report.
        usage.complete &= usage.unreadable_dirs == 0 && usage.unreadable_entries == 0;
        Ok(usage)
    }
}

struct Walk {
    dev: u64,
    deadline: Instant,
    /// (dev, inode) of files with more than one link, so each is counted once.
    seen_links: std::collections::HashSet<(u64, u64)>,
    usage: DiskUsage,
    entries: u64,
}

impl Walk {
    fn stop(&mut self, bound: Bound) {
        self.usage.complete = false;
        self.usage.stopped_by.get_or_insert(bound);
    }

    fn count(&mut self, stat: &Stat) {
        let kind = FileType::from_raw_mode(stat.st_mode);
        if kind != FileType::Directory
            && stat.st_nlink > 1
            && !self.seen_links.insert((stat.st_dev, stat.st_ino))
        {
            return;
        }
        self.usage.inodes += 1;
        self.usage.bytes += (stat.st_blocks as u64).saturating_mul(512);
        self.usage.apparent_bytes += stat.st_size.max(0) as u64;
        match kind {
            FileType::Directory => self.usage.dirs += 1,
            FileType::Symlink => self.usage.symlinks += 1,
            _ => self.usage.files += 1,
        }
    }

    /// Counts what is inside `dir` (already counted itself), descending into subvolumes of
    /// the home's file system, never into another one mounted inside.
    fn dir(&mut self, dir: OwnedFd, depth: usize) {
        let Ok(mut entries) = rustix::fs::Dir::new(dir) else {
            self.usage.unreadable_dirs += 1;
            return;
        };
        while let Some(entry) = entries.read() {
            if !self.usage.complete {
                return;
            }
            let Ok(entry) = entry else {
                self.usage.unreadable_dirs += 1;
                return;
            };
            let name = entry.file_name();
            if name.to_bytes() == b"." || name.to_bytes() == b".." {
                continue;
            }
            self.entries += 1;
            if self.entries > DU_MAX_ENTRIES {
                self.stop(Bound::Entries);
                return;
            }
            if self.entries.is_multiple_of(1024) && Instant::now() >= self.deadline {
                self.stop(Bound::Time);
                return;
            }
            let Ok(parent) = entries.fd() else {
                self.usage.unreadable_dirs += 1;
                return;
            };
            let stat = match rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(stat) => stat,
                // Removed since it was listed.
                Err(Errno::NOENT) => continue,
                // The directory stopped being searchable (chmod during the walk, or a mode
                // with `r` but no `x`): listed, but not measurable.
                Err(_) => {
                    self.usage.unreadable_entries += 1;
                    continue;
                }
            };
            if FileType::from_raw_mode(stat.st_mode) != FileType::Directory {
                self.count(&stat);
                continue;
            }
            if is_other_file_system(parent, name, &stat, self.dev) {
                self.usage.other_device += 1;
                continue;
            }
            if depth + 1 >= DU_MAX_DEPTH {
                self.count(&stat);
                self.stop(Bound::Depth);
                return;
            }
            match open_beneath(
                parent,
                name,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NONBLOCK,
            ) {
                Ok(child) => {
                    // Count what was actually opened, in case the entry changed since.
                    let Ok(opened) = rustix::fs::fstat(&child) else {
                        self.count(&stat);
                        self.usage.unreadable_dirs += 1;
                        continue;
                    };
                    // Replaced since the stat: by what the check above would have refused.
                    if (opened.st_dev, opened.st_ino) != (stat.st_dev, stat.st_ino) {
                        self.count(&stat);
                        continue;
                    }
                    self.count(&opened);
                    self.dir(child, depth + 1);
                }
                // Removed, or replaced by a symlink or a file since the stat: count it as it
                // was (the new entry is the tenant's to explain, not usage hidden from us).
                Err(Errno::NOENT | Errno::LOOP | Errno::NOTDIR | Errno::XDEV) => self.count(&stat),
                // Mode 000, or anything else that keeps the tenant out: its content is not
                // counted, and the report says so.
                Err(_) => {
                    self.count(&stat);
                    self.usage.unreadable_dirs += 1;
                }
            }
        }
    }
}

/// Whether the directory `name` in `parent` (`stat` its `lstat`) is another file system
/// mounted there, which a walk of the home does not enter. A btrfs subvolume the tenant
/// created in its home (or a snapshot of it) has a device number of its own but is no mount:
/// it is the tenant's, counted in its quota, so it is entered. Where the kernel does not say
/// which directories are mount roots (`STATX_ATTR_MOUNT_ROOT`, Linux 5.8), another device
/// is taken for another file system.
pub(crate) fn is_other_file_system(
    parent: BorrowedFd<'_>,
    name: impl rustix::path::Arg,
    stat: &Stat,
    home_dev: u64,
) -> bool {
    use rustix::fs::{StatxAttributes, StatxFlags};
    match rustix::fs::statx(parent, name, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::empty()) {
        Ok(x) if x.stx_attributes_mask.contains(StatxAttributes::MOUNT_ROOT) => {
            x.stx_attributes.contains(StatxAttributes::MOUNT_ROOT)
        }
        _ => stat.st_dev != home_dev,
    }
}

/// A temporary name no other writer of ours uses at the same time.
pub(crate) fn temp_name() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    format!(
        ".layerone-tmp-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// The kernel's refusals mapped to typed errors.
pub(crate) fn path_error(op: &str, rel: impl std::fmt::Display, errno: Errno) -> TenantError {
    match errno {
        Errno::LOOP => TenantError::new(
            ErrorCode::PathUnsafe,
            format!("{op} {rel}: a symlink is in the way"),
        ),
        Errno::XDEV => TenantError::new(
            ErrorCode::PathUnsafe,
            format!("{op} {rel}: resolves outside the home"),
        ),
        Errno::NOTDIR => TenantError::new(
            ErrorCode::PathUnsafe,
            format!("{op} {rel}: a path component is not a directory"),
        ),
        Errno::ACCESS | Errno::PERM | Errno::ROFS => TenantError::new(
            ErrorCode::PermissionDenied,
            format!("{op} {rel}: permission denied"),
        ),
        Errno::FBIG => TenantError::new(ErrorCode::FileTooLarge, format!("{op} {rel}: too large")),
        other => TenantError::new(ErrorCode::Io, format!("{op} {rel}: {other}")),
    }
}

pub(crate) fn io(op: &str, errno: Errno) -> TenantError {
    TenantError::new(ErrorCode::Io, format!("{op}: {errno}"))
}
