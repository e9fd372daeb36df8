//! What a removed tenant left outside its home (ARCHITECTURE.md invariant 15): its files in the
//! shared temporary directories and the spools. `userdel --remove` takes the home and the
//! spool named after the user, nothing else; a file the tenant left in `/tmp`, `/var/tmp` or
//! `/dev/shm`, a crontab or an at job, a PHP session, would otherwise pass to whoever gets its
//! uid next.
//!
//! Root walks each directory of [`TENANT_LEFTOVER_DIRS`] (through `sysconf`, so a sysroot
//! works) and removes every entry owned by the uid, a directory with everything in it. It
//! never follows a symlink: every step is `openat`/`fstatat`/`unlinkat` relative to a
//! directory descriptor already held, with `O_NOFOLLOW` and `AT_SYMLINK_NOFOLLOW` on a single
//! name (a name from `readdir` has no `/`), so a symlink the tenant planted is removed as a
//! link, never resolved. It does not cross into another filesystem mounted below a
//! directory. A directory owned by someone else is searched (a service's `PrivateTmp`
//! directory holds tenants' files) to a bounded depth; a tree deeper than the descriptors
//! root keeps open is moved up beside the walk's root and finished from there, so no depth
//! makes the removal impossible. The tenant's processes are gone before this runs (the
//! account purge stops them first), so nothing of the tenant's races it.

use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;

use crate::error::ProviderError;
use crate::provider::Provider;

/// The directories outside the homes where a tenant can leave files: the shared temporary
/// directories, the cron and at spools (both platforms' layouts), the mail spool (either name
/// may be the real one; the other is a symlink and is skipped), PHP's session directory.
pub const TENANT_LEFTOVER_DIRS: &[&str] = &[
    "/tmp",
    "/var/tmp",
    "/dev/shm",
    "/var/spool/cron",
    "/var/mail",
    "/var/spool/mail",
    "/var/lib/php/sessions",
];

/// The most entries one call visits. A tenant that left more is removed over several calls,
/// each making progress; the result says it is not `complete`.
pub const MAX_LEFTOVER_ENTRIES: u64 = 1_000_000;

/// How deep a directory that is not the tenant's is searched for the tenant's files.
const SEARCH_DEPTH: usize = 32;

/// How deep a tenant's own tree is removed in place; deeper parts are moved up first.
const REMOVE_DEPTH: usize = 64;

/// What one removal did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeftoversRemoved {
    /// Entries removed (files, links, directories, whatever was inside them).
    pub removed: u64,
    /// Entries looked at.
    pub visited: u64,
    /// Directories of someone else's deeper than the search goes, or on another filesystem,
    /// left unsearched: whatever of the tenant's is inside them stays.
    pub unsearched: u64,
    /// False when [`MAX_LEFTOVER_ENTRIES`] stopped the call: call again.
    pub complete: bool,
}

impl Provider {
    /// Removes every file, link and directory owned by `uid` under [`TENANT_LEFTOVER_DIRS`].
    ///
    /// On a machine that does not have the provider act as root ([`Machine::acts_as_root`]:
    /// a simulation whose tenant work runs in-process), every file of the sysroot belongs to
    /// this process's own user, whatever uid a simulated tenant has, so nothing there is a
    /// tenant's: nothing is done.
    ///
    /// [`Machine::acts_as_root`]: crate::Machine::acts_as_root
    pub fn remove_files_of_uid(&self, uid: u32) -> Result<LeftoversRemoved, ProviderError> {
        let mut done = LeftoversRemoved {
            complete: true,
            ..LeftoversRemoved::default()
        };
        if !self.machine.acts_as_root() {
            return Ok(done);
        }
        assert!(uid != 0, "root's files are never a tenant's leftovers");
        for dir in TENANT_LEFTOVER_DIRS {
            let path = self.sysconf(dir);
            let root = match rustix::fs::open(
                &path,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => fd,
                // Absent, or a symlink to the real one (/var/spool/mail -> ../mail).
                Err(Errno::NOENT) | Err(Errno::LOOP) | Err(Errno::NOTDIR) => continue,
                Err(e) => return Err(ProviderError::io("open", &path, e.into())),
            };
            let dev = rustix::fs::fstat(&root)
                .map_err(|e| ProviderError::io("stat", &path, e.into()))?
                .st_dev;
            let mut walk = Walk {
                uid,
                dev,
                root: root.as_fd(),
                done: &mut done,
                moved: Vec::new(),
                next_name: 0,
            };
            let walked = walk
                .search(root.as_fd(), 0)
                .and_then(|()| walk.finish_moved());
            match walked {
                Ok(()) => {}
                Err(Stop::Bound) => {
                    done.complete = false;
                    return Ok(done);
                }
                Err(Stop::Errno(what, e)) => return Err(ProviderError::io(what, &path, e.into())),
            }
        }
        Ok(done)
    }
}

/// Why a walk stopped early.
enum Stop {
    /// [`MAX_LEFTOVER_ENTRIES`] were visited.
    Bound,
    Errno(&'static str, Errno),
}

struct Walk<'a> {
    uid: u32,
    dev: u64,
    root: BorrowedFd<'a>,
    done: &'a mut LeftoversRemoved,
    /// Too-deep parts of the tenant's trees, moved up beside the root under these names.
    moved: Vec<CString>,
    next_name: u64,
}

fn is_dir(st: &Stat) -> bool {
    FileType::from_raw_mode(st.st_mode) == FileType::Directory
}

impl Walk<'_> {
    fn visit(&mut self) -> Result<(), Stop> {
        if self.done.visited >= MAX_LEFTOVER_ENTRIES {
            return Err(Stop::Bound);
        }
        self.done.visited += 1;
        Ok(())
    }

    /// Looks through `dir` (not the tenant's) for the tenant's entries.
    fn search(&mut self, dir: BorrowedFd<'_>, depth: usize) -> Result<(), Stop> {
        for name in list_dir(dir).map_err(|e| Stop::Errno("list", e))? {
            self.visit()?;
            let Some(st) = stat_at(dir, &name)? else {
                continue;
            };
            if st.st_dev != self.dev {
                self.done.unsearched += 1;
                continue;
            }
            if st.st_uid == self.uid {
                self.remove(dir, &name, &st, depth)?;
            } else if is_dir(&st) {
                if depth >= SEARCH_DEPTH {
                    self.done.unsearched += 1;
                    continue;
                }
                match open_dir_at(dir, &name) {
                    Ok(child) => self.search(child.as_fd(), depth + 1)?,
                    // Gone, or replaced by something else since the stat.
                    Err(Errno::NOENT) | Err(Errno::LOOP) | Err(Errno::NOTDIR) => {}
                    Err(e) => return Err(Stop::Errno("open", e)),
                }
            }
        }
        Ok(())
    }

    /// Removes the entry `name` of `dir` and, for a directory, everything in it.
    fn remove(
        &mut self,
        dir: BorrowedFd<'_>,
        name: &CStr,
        st: &Stat,
        depth: usize,
    ) -> Result<(), Stop> {
        if !is_dir(st) {
            return self.unlink(dir, name, AtFlags::empty());
        }
        if depth >= REMOVE_DEPTH {
            let new = CString::new(format!(
                ".layerone-leftover-{}-{}-{}",
                self.uid,
                std::process::id(),
                self.next_name
            ))
            .expect("no NUL in a formatted name");
            self.next_name += 1;
            return match rustix::fs::renameat(dir, name, self.root, new.as_c_str()) {
                Ok(()) => {
                    self.moved.push(new);
                    Ok(())
                }
                Err(Errno::NOENT) => Ok(()),
                Err(e) => Err(Stop::Errno("move up", e)),
            };
        }
        let fd = match open_dir_at(dir, name) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(()),
            // No longer a directory: remove whatever it is now.
            Err(Errno::LOOP) | Err(Errno::NOTDIR) => {
                return self.unlink(dir, name, AtFlags::empty());
            }
            Err(e) => return Err(Stop::Errno("open", e)),
        };
        for child in list_dir(fd.as_fd()).map_err(|e| Stop::Errno("list", e))? {
            self.visit()?;
            let Some(child_st) = stat_at(fd.as_fd(), &child)? else {
                continue;
            };
            if child_st.st_dev != self.dev {
                self.done.unsearched += 1;
                continue;
            }
            self.remove(fd.as_fd(), &child, &child_st, depth + 1)?;
        }
        drop(fd);
        self.unlink(dir, name, AtFlags::REMOVEDIR)
    }

    fn unlink(&mut self, dir: BorrowedFd<'_>, name: &CStr, flags: AtFlags) -> Result<(), Stop> {
        match rustix::fs::unlinkat(dir, name, flags) {
            Ok(()) => {
                self.done.removed += 1;
                Ok(())
            }
            Err(Errno::NOENT) => Ok(()),
            // A mount point below it kept a directory from emptying.
            Err(Errno::NOTEMPTY) | Err(Errno::BUSY) => {
                self.done.unsearched += 1;
                Ok(())
            }
            Err(e) => Err(Stop::Errno("remove", e)),
        }
    }

    /// Removes the trees moved up beside the root, which may move further parts up.
    fn finish_moved(&mut self) -> Result<(), Stop> {
        while let Some(name) = self.moved.pop() {
            let root = self.root;
            if let Some(st) = stat_at(root, &name)? {
                self.remove(root, &name, &st, 1)?;
            }
        }
        Ok(())
    }
}

fn stat_at(dir: BorrowedFd<'_>, name: &CStr) -> Result<Option<Stat>, Stop> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(st)),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(Stop::Errno("stat", e)),
    }
}

fn open_dir_at(dir: BorrowedFd<'_>, name: &CStr) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// The names in a directory, without `.` and `..`, collected before anything in it changes.
fn list_dir(fd: BorrowedFd<'_>) -> Result<Vec<CString>, Errno> {
    let mut names = Vec::new();
    for entry in rustix::fs::Dir::read_from(fd)? {
        let entry = entry?;
        let name = entry.file_name();
        if name.to_bytes() != b"." && name.to_bytes() != b".." {
            names.push(name.to_owned());
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;
    use crate::platform::Platform;
    use crate::provider::test_provider;

    fn require_root() {
        assert!(
            rustix::process::geteuid().is_root(),
            "files of another uid cannot be made without root: run this test as root, as CI does"
        );
    }

    #[test]
    fn only_the_uids_entries_go_and_no_symlink_is_followed() {
        require_root();
        let dir = tempfile::tempdir().unwrap();
        let provider = test_provider(Platform::Debian, dir.path());
        let uid = 2_000_000_111;
        let other = 2_000_000_112;
        let tmp = provider.sysconf("/tmp");
        let shm = provider.sysconf("/dev/shm");
        let private = tmp.join("systemd-private-x/tmp");
        std::fs::create_dir_all(&private).unwrap();
        std::fs::create_dir_all(&shm).unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep"), b"root's").unwrap();
        let chown =
            |p: &std::path::Path, u: u32| std::os::unix::fs::lchown(p, Some(u), Some(u)).unwrap();
        // The tenant's: a file, a symlink to a directory outside, a deep tree, a file in
        // a service's private tmp.
        std::fs::write(tmp.join("mine"), b"x").unwrap();
        chown(&tmp.join("mine"), uid);
        std::os::unix::fs::symlink(&outside, tmp.join("link")).unwrap();
        chown(&tmp.join("link"), uid);
        let mut deep = shm.join("deep");
        std::fs::create_dir(&deep).unwrap();
        chown(&deep, uid);
        for i in 0..(REMOVE_DEPTH + 10) {
            deep = deep.join(format!("d{i}"));
            std::fs::create_dir(&deep).unwrap();
            chown(&deep, uid);
        }
        std::fs::write(deep.join("bottom"), b"x").unwrap();
        std::fs::write(private.join("sess"), b"x").unwrap();
        chown(&private.join("sess"), uid);
        // Someone else's, and root's.
        std::fs::write(tmp.join("theirs"), b"x").unwrap();
        chown(&tmp.join("theirs"), other);
        std::fs::write(tmp.join("roots"), b"x").unwrap();

        let done = provider.remove_files_of_uid(uid).unwrap();
        assert!(done.removed >= 4 + REMOVE_DEPTH as u64, "{done:?}");
        assert_eq!(done.unsearched, 0);
        for gone in ["mine", "link"] {
            assert!(std::fs::symlink_metadata(tmp.join(gone)).is_err(), "{gone}");
        }
        assert!(!shm.join("deep").exists());
        assert!(!private.join("sess").exists());
        assert_eq!(std::fs::read(outside.join("keep")).unwrap(), b"root's");
        assert_eq!(std::fs::metadata(tmp.join("theirs")).unwrap().uid(), other);
        assert!(tmp.join("roots").exists());
        assert!(private.is_dir());
        // Nothing left over from moving the deep tree up.
        let names: Vec<_> = std::fs::read_dir(&shm).unwrap().collect();
        assert!(names.is_empty(), "{names:?}");
        // A second call finds nothing.
        assert_eq!(provider.remove_files_of_uid(uid).unwrap().removed, 0);
    }
}
