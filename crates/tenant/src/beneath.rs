//! Opening a path beneath a directory and never outside it: the one `openat2` of the node for
//! work in a tenant's home, used by the tenant worker (`work`, `archive`) and by root's
//! provider (`crates/provider/src/tenant_fs.rs`) alike.
//!
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`: the kernel refuses any symlink on the way
//! (`ELOOP`), an absolute path or a `..` that leaves the directory (`EXDEV`), whatever the
//! tenant planted or renames while the lookup runs. The last component is not followed either
//! (`O_NOFOLLOW`), and a file this creates is 0600 until its caller sets the mode.

use std::os::fd::{BorrowedFd, OwnedFd};

use rustix::fs::{Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// How every lookup beneath a home resolves.
pub const RESOLVE: ResolveFlags = ResolveFlags::BENEATH.union(ResolveFlags::NO_SYMLINKS);

/// How many times a lookup is tried again when the kernel asks (`EAGAIN`: a rename raced it).
const RETRIES: u32 = 64;

/// Opens `path` beneath `dir` with `flags` (`O_CLOEXEC | O_NOFOLLOW` added), never leaving
/// `dir` and never following a symlink.
pub fn open_beneath(
    dir: BorrowedFd<'_>,
    path: impl rustix::path::Arg + Copy,
    flags: OFlags,
) -> Result<OwnedFd, Errno> {
    let flags = flags | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    // openat2 refuses a mode without O_CREAT; with it, 0600 until the caller sets the mode.
    let mode = if flags.contains(OFlags::CREATE) {
        Mode::from_raw_mode(0o600)
    } else {
        Mode::empty()
    };
    let mut tries = 0;
    loop {
        match rustix::fs::openat2(dir, path, flags, mode, RESOLVE) {
            Err(Errno::AGAIN) if tries < RETRIES => tries += 1,
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsFd;
    use std::os::unix::fs::{PermissionsExt, symlink};

    use super::*;

    fn home() -> (tempfile::TempDir, OwnedFd) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("home")).unwrap();
        std::fs::write(dir.path().join("outside"), b"root's").unwrap();
        std::fs::create_dir(dir.path().join("home/sub")).unwrap();
        std::fs::write(dir.path().join("home/sub/file"), b"tenant's").unwrap();
        let fd = rustix::fs::open(
            dir.path().join("home"),
            OFlags::RDONLY | OFlags::DIRECTORY,
            Mode::empty(),
        )
        .unwrap();
        (dir, fd)
    }

    /// What is beneath is opened; a symlink anywhere on the way, last component included, an
    /// absolute path and a `..` that leaves are refused by the kernel, whatever they point at.
    #[test]
    fn only_what_is_beneath_opens_and_no_symlink_is_followed() {
        let (dir, home) = home();
        let home = home.as_fd();
        let fd = open_beneath(home, "sub/file", OFlags::RDONLY).unwrap();
        assert_eq!(
            std::fs::read_to_string(format!("/proc/self/fd/{}", {
                use std::os::fd::AsRawFd;
                fd.as_raw_fd()
            }))
            .unwrap(),
            "tenant's"
        );
        symlink(dir.path().join("outside"), dir.path().join("home/link")).unwrap();
        symlink("sub", dir.path().join("home/dirlink")).unwrap();
        assert_eq!(
            open_beneath(home, "link", OFlags::RDONLY).unwrap_err(),
            Errno::LOOP
        );
        assert_eq!(
            open_beneath(home, "dirlink/file", OFlags::RDONLY).unwrap_err(),
            Errno::LOOP,
            "a symlink to a directory beneath is refused too"
        );
        assert_eq!(
            open_beneath(home, "../outside", OFlags::RDONLY).unwrap_err(),
            Errno::XDEV
        );
        let outside = dir.path().join("outside");
        assert_eq!(
            open_beneath(home, outside.as_path(), OFlags::RDONLY).unwrap_err(),
            Errno::XDEV
        );
        // A `..` that stays beneath is the kernel's to allow.
        assert!(open_beneath(home, "sub/../sub/file", OFlags::RDONLY).is_ok());
    }

    /// A file it creates is 0600 whatever the umask, until its caller sets the mode; an
    /// existing name under `O_EXCL` is refused, never written through.
    #[test]
    fn a_created_file_is_private_and_an_existing_one_is_not_reused() {
        let (dir, home) = home();
        let home = home.as_fd();
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL;
        drop(open_beneath(home, "sub/new", flags).unwrap());
        let mode = std::fs::metadata(dir.path().join("home/sub/new"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o600);
        assert_eq!(
            open_beneath(home, "sub/file", flags).unwrap_err(),
            Errno::EXIST
        );
        symlink(dir.path().join("outside"), dir.path().join("home/planted")).unwrap();
        assert_eq!(
            open_beneath(home, "planted", flags).unwrap_err(),
            Errno::EXIST,
            "a planted symlink at the name is not followed to create its target"
        );
        assert_eq!(
            std::fs::read(dir.path().join("outside")).unwrap(),
            b"root's"
        );
    }
}
