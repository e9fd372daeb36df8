//! Root-owned configuration files (vhosts, pools, maps): atomic writes, reads, removal.
//!
//! A configuration file is never seen half-written by the service that reads it: the bytes
//! go to a temporary file in the same directory (created `O_EXCL|O_NOFOLLOW`, so a planted
//! file or symlink is never written through), are fsynced, renamed over the final name, and
//! the directory is fsynced so the rename survives a crash (ARCHITECTURE.md invariants 8 and 9).
//! Paths given here are already mapped with [`Provider::sysconf`].

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};

use crate::error::ProviderError;
use crate::provider::Provider;

/// The mode for files Apache, PHP-FPM and friends read as root or through their group.
pub const CONFIG_MODE: u32 = 0o644;

impl Provider {
    /// Atomically replaces `path` with `bytes`, mode `mode` exactly (the umask is overridden).
    ///
    /// # Panics
    /// If `path` is not under the configured root: it was not mapped with `sysconf`.
    pub fn write_config_atomic(
        &self,
        path: &Path,
        bytes: &[u8],
        mode: u32,
    ) -> Result<(), ProviderError> {
        self.assert_mapped(path);
        write_atomic(path, bytes, mode, None)
    }

    /// Like [`Provider::write_config_atomic`], with the owner set on the temporary file
    /// before the rename, so the final name never shows other owners or modes.
    pub fn write_owned_atomic(
        &self,
        path: &Path,
        bytes: &[u8],
        mode: u32,
        owner: (u32, u32),
    ) -> Result<(), ProviderError> {
        self.assert_mapped(path);
        write_atomic(path, bytes, mode, Some(owner))
    }

    /// Sets the owner and mode of an existing file or directory without following a symlink
    /// at `path` (a symlink is refused with an error).
    pub fn set_owner_mode(
        &self,
        path: &Path,
        mode: u32,
        owner: (u32, u32),
    ) -> Result<(), ProviderError> {
        self.assert_mapped(path);
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::empty(),
        )
        .map_err(|e| ProviderError::io("open", path, e.into()))?;
        rustix::fs::fchown(
            &fd,
            Some(rustix::fs::Uid::from_raw(owner.0)),
            Some(rustix::fs::Gid::from_raw(owner.1)),
        )
        .map_err(|e| ProviderError::io("chown", path, e.into()))?;
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode))
            .map_err(|e| ProviderError::io("chmod", path, e.into()))
    }

    /// Moves `from` (a file, a directory or a symlink itself, never its target) to `to`, on
    /// the same filesystem, and makes both directory entries durable.
    pub fn move_aside(&self, from: &Path, to: &Path) -> Result<(), ProviderError> {
        self.assert_mapped(from);
        self.assert_mapped(to);
        std::fs::rename(from, to).map_err(|e| ProviderError::io("move aside", from, e))?;
        sync_parent(from)?;
        sync_parent(to)
    }

    /// The contents of `path`, or `None` if it does not exist.
    pub fn read_config(&self, path: &Path) -> Result<Option<Vec<u8>>, ProviderError> {
        self.assert_mapped(path);
        match std::fs::read(path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(ProviderError::io("read", path, e)),
        }
    }

    /// Makes `link` a symlink to `target` (a relative path, as Debian's `a2enmod` makes
    /// them: `../mods-available/ssl.load`), through a temporary name renamed over `link`. The
    /// enabling links of a distribution that configures a service by links (Apache's
    /// `mods-enabled`, pure-ftpd's `auth/`) are the only symlinks the node makes.
    pub fn enable_link(&self, link: &Path, target: &Path) -> Result<(), ProviderError> {
        self.assert_mapped(link);
        let file_name = link
            .file_name()
            .ok_or_else(|| ProviderError::io("symlink", link, io::Error::other("no file name")))?;
        let tmp = link.with_file_name(temp_name(file_name));
        std::os::unix::fs::symlink(target, &tmp)
            .map_err(|e| ProviderError::io("symlink", &tmp, e))?;
        if let Err(e) = std::fs::rename(&tmp, link) {
            let _ = std::fs::remove_file(&tmp);
            return Err(ProviderError::io("rename", link, e));
        }
        sync_parent(link)
    }

    /// Removes `path`; already absent is success (remove operations are idempotent).
    pub fn remove_config(&self, path: &Path) -> Result<(), ProviderError> {
        self.assert_mapped(path);
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(ProviderError::io("remove", path, e)),
        }
        sync_parent(path)
    }

    /// Makes `path` a directory of mode `mode`, creating missing parents (with the default
    /// mode). An existing directory gets its mode corrected; a file or symlink in the way is
    /// an error, not something to replace.
    pub fn ensure_dir(&self, path: &Path, mode: u32) -> Result<(), ProviderError> {
        self.assert_mapped(path);
        ensure_dir(path, mode)
    }

    pub(crate) fn assert_mapped(&self, path: &Path) {
        assert!(
            path.is_absolute() && path.starts_with(&self.root),
            "{} is not under the provider root {}: map system paths with Provider::sysconf",
            path.display(),
            self.root.display()
        );
    }
}

/// Makes `path` a directory of mode `mode`, as [`Provider::ensure_dir`] does, for code that
/// models a program of the sysroot (the simulator's models); the provider's own calls go
/// through the method, which also checks the path is mapped.
pub fn ensure_dir(path: &Path, mode: u32) -> Result<(), ProviderError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Err(ProviderError::io(
                "ensure directory",
                path,
                io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "exists and is not a directory",
                ),
            ));
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| ProviderError::io("create directory", parent, e))?;
            }
            match std::fs::create_dir(path) {
                Ok(()) => {}
                // Someone else made it in between; the mode is set below either way.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(ProviderError::io("create directory", path, e)),
            }
        }
        Err(e) => return Err(ProviderError::io("stat", path, e)),
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| ProviderError::io("chmod", path, e))
}

/// The temporary name beside `path`: hidden, and recognisably ours if a crash leaves it.
pub(crate) fn temp_name(file_name: &std::ffi::OsStr) -> OsString {
    let mut name = OsString::from(".");
    name.push(file_name);
    name.push(".layerone-tmp");
    name
}

/// Atomically replaces `path` with `bytes`: written to a temporary file beside it (mode
/// exactly `mode`, owned by `owner` when given), fsynced, renamed over `path`, the directory
/// fsynced. The provider's own writes go through [`Provider::write_config_atomic`], which
/// also checks the path is mapped; this is for code that models a program writing a file of
/// the sysroot (the simulator's models).
pub fn write_atomic(
    path: &Path,
    bytes: &[u8],
    mode: u32,
    owner: Option<(u32, u32)>,
) -> Result<(), ProviderError> {
    let (Some(parent), Some(file_name)) = (path.parent(), path.file_name()) else {
        panic!("write_atomic needs a file path, got {}", path.display());
    };
    let tmp: PathBuf = parent.join(temp_name(file_name));
    write_exclusive(&tmp, bytes, mode, owner)?;
    if let Err(e) = std::fs::rename(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(ProviderError::io("rename into", path, e));
    }
    sync_parent(path)
}

/// Writes `bytes` to the temporary file `tmp` (created `O_EXCL|O_NOFOLLOW`, mode exactly
/// `mode`) and fsyncs it. A stale `tmp` left by a crash is unlinked first: unlinking removes a
/// planted symlink itself, never its target. On failure nothing is left at `tmp`.
pub(crate) fn write_exclusive(
    tmp: &Path,
    bytes: &[u8],
    mode: u32,
    owner: Option<(u32, u32)>,
) -> Result<(), ProviderError> {
    let fd = match create_exclusive(tmp, mode) {
        Err(rustix::io::Errno::EXIST) => {
            std::fs::remove_file(tmp).map_err(|e| ProviderError::io("remove stale", tmp, e))?;
            create_exclusive(tmp, mode)
        }
        other => other,
    }
    .map_err(|e| ProviderError::io("create", tmp, e.into()))?;
    let written = (|| {
        let mut file = File::from(fd);
        file.write_all(bytes)
            .map_err(|e| ProviderError::io("write", tmp, e))?;
        // Exactly `mode`, whatever the umask was at creation.
        if let Some((uid, gid)) = owner {
            rustix::fs::fchown(
                &file,
                Some(rustix::fs::Uid::from_raw(uid)),
                Some(rustix::fs::Gid::from_raw(gid)),
            )
            .map_err(|e| ProviderError::io("chown", tmp, e.into()))?;
        }
        rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))
            .map_err(|e| ProviderError::io("chmod", tmp, e.into()))?;
        file.sync_all()
            .map_err(|e| ProviderError::io("fsync", tmp, e))
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(tmp);
    }
    written
}

fn create_exclusive(path: &Path, mode: u32) -> rustix::io::Result<rustix::fd::OwnedFd> {
    rustix::fs::open(
        path,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode),
    )
}

/// Makes a rename or unlink in `path`'s directory durable.
pub(crate) fn sync_parent(path: &Path) -> Result<(), ProviderError> {
    let parent = path.parent().unwrap_or(Path::new("/"));
    let dir = rustix::fs::open(
        parent,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| ProviderError::io("open directory", parent, e.into()))?;
    rustix::fs::fsync(&dir).map_err(|e| ProviderError::io("fsync directory", parent, e.into()))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;
    use crate::platform::Platform;

    fn provider(dir: &Path) -> Provider {
        crate::provider::test_provider(Platform::Debian, dir)
    }

    #[test]
    fn write_config_atomic_replaces_content_with_exact_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = provider(dir.path());
        let vhosts = p.sysconf("/etc/apache2/layerone/vhosts");
        p.ensure_dir(&vhosts, 0o755).unwrap();
        let file = vhosts.join("a.conf");
        p.write_config_atomic(&file, b"one", CONFIG_MODE).unwrap();
        p.write_config_atomic(&file, b"two", 0o600).unwrap();
        assert_eq!(p.read_config(&file).unwrap().unwrap(), b"two");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(&vhosts)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![OsString::from("a.conf")]);
    }

    #[test]
    fn write_config_atomic_replaces_a_symlink_instead_of_following_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = provider(dir.path());
        let etc = p.sysconf("/etc");
        p.ensure_dir(&etc, 0o755).unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        symlink(&victim, etc.join("x.conf")).unwrap();
        // A stale temp that is a symlink too.
        symlink(&victim, etc.join(".x.conf.layerone-tmp")).unwrap();
        p.write_config_atomic(&etc.join("x.conf"), b"new", CONFIG_MODE)
            .unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(
            !std::fs::symlink_metadata(etc.join("x.conf"))
                .unwrap()
                .is_symlink()
        );
        assert_eq!(std::fs::read(etc.join("x.conf")).unwrap(), b"new");
    }

    #[test]
    fn remove_and_read_of_absent_config_are_ok() {
        let dir = tempfile::tempdir().unwrap();
        let p = provider(dir.path());
        let file = p.sysconf("/etc/nothing.conf");
        assert_eq!(p.read_config(&file).unwrap(), None);
        p.remove_config(&file).unwrap();
    }

    #[test]
    fn ensure_dir_refuses_a_file_in_the_way_and_fixes_modes() {
        let dir = tempfile::tempdir().unwrap();
        let p = provider(dir.path());
        let d = p.sysconf("/etc/layerone");
        p.ensure_dir(&d, 0o700).unwrap();
        p.ensure_dir(&d, 0o750).unwrap();
        assert_eq!(
            std::fs::metadata(&d).unwrap().permissions().mode() & 0o777,
            0o750
        );
        let f = p.sysconf("/etc/layerone/file");
        std::fs::write(&f, b"").unwrap();
        assert_eq!(p.ensure_dir(&f, 0o700).unwrap_err().code(), "io_error");
    }

    #[test]
    #[should_panic(expected = "map system paths with Provider::sysconf")]
    fn unmapped_path_is_a_programmer_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = provider(dir.path());
        let _ = p.read_config(Path::new("/etc/passwd"));
    }
}
