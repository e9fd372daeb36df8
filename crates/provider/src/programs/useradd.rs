//! `useradd`: creates a tenant's system user with its home.
//!
//! Exit codes callers rely on: 9 = the user already exists, 6 = the group does not exist,
//! 4 = the uid given with `--uid` is not unique, 3 = an invalid argument (shadow-utils rejects a GECOS comment containing `:` or a
//! newline, so an ownership marker stored there must not use `:`), 12 = the home could not
//! be created.

use std::path::Path;

use rustix::fs::{Mode, OFlags};

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::program::Program;
use crate::provider::Provider;

/// The mode of a tenant home: the owner and its group (the web server reaches it through the
/// group), nobody else. Set by the provider after `useradd`, because the mode `useradd`
/// gives depends on login.defs (HOME_MODE exists only in newer shadow-utils, UMASK differs
/// per distribution).
pub const HOME_MODE: u32 = 0o750;

/// The arguments of one `useradd`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserAdd<'a> {
    pub name: &'a str,
    /// The primary group, which must already exist (`Provider::groupadd`).
    pub group: &'a str,
    /// The absolute system path of the home (mapped under the root by `--prefix` in tests).
    pub home: &'a Path,
    pub shell: &'a str,
    /// Stored verbatim in the GECOS field. Must not contain `:` or a newline (useradd exits
    /// 3).
    pub comment: &'a str,
    /// A crypt(3) hash (SHA-512 `$6$...`); `None` leaves the password locked (`!`).
    pub password_hash: Option<&'a str>,
}

impl UserAdd<'_> {
    pub(crate) fn push_args(&self, uid: Option<u32>, argv: &mut Argv) {
        if let Some(uid) = uid {
            argv.arg("--uid").arg(uid.to_string());
        }
        argv.arg("--gid")
            .arg(self.group)
            .arg("--home-dir")
            .arg(self.home)
            .arg("--create-home")
            .arg("--shell")
            .arg(self.shell)
            .arg("--comment")
            .arg(self.comment);
        if let Some(hash) = self.password_hash {
            argv.arg("--password").secret(hash);
        }
        argv.arg("--").arg(self.name);
    }
}

impl Provider {
    /// `useradd [--prefix ROOT] --gid G --home-dir H --create-home --shell S --comment C
    /// [--password HASH] -- NAME`, then sets the home to [`HOME_MODE`].
    ///
    /// # Panics
    /// If `user.home` is not absolute (a programmer error: homes are built from constants).
    pub fn useradd(&self, user: &UserAdd<'_>) -> Result<(), ProviderError> {
        self.useradd_inner(user, None)
    }

    /// `useradd [--prefix ROOT] --uid UID --gid G ... -- NAME`: the same with the uid the
    /// node chose (a tenant's account: `ops::account` allocates it so that no id once an
    /// administrator's, or in use on the system, is ever given). Exit 4 if `uid` is taken.
    ///
    /// # Panics
    /// If `user.home` is not absolute.
    pub fn useradd_with_uid(&self, user: &UserAdd<'_>, uid: u32) -> Result<(), ProviderError> {
        self.useradd_inner(user, Some(uid))
    }

    fn useradd_inner(&self, user: &UserAdd<'_>, uid: Option<u32>) -> Result<(), ProviderError> {
        assert!(
            user.home.is_absolute(),
            "UserAdd.home must be absolute, got {}",
            user.home.display()
        );
        let argv = self.useradd_argv(user, uid);
        self.execute(
            Program::Useradd,
            &argv,
            None,
            Program::Useradd.default_timeout(),
        )?;
        let owner = self.lookup_user(user.name)?.map(|u| (u.uid, u.gid));
        self.set_home_mode(user.home, owner)
    }

    pub(crate) fn useradd_argv(&self, user: &UserAdd<'_>, uid: Option<u32>) -> Argv {
        let mut argv = self.shadow_argv();
        user.push_args(uid, &mut argv);
        argv
    }

    /// Sets the home to [`HOME_MODE`] in the web server's group (see [`Provider::home_group`]),
    /// owned by `owner` when the provider gives files owners ([`Provider::is_root`]): a home
    /// useradd found already there (a btrfs subvolume made for it, `home_quota.rs`) is still
    /// root's. `O_NOFOLLOW` so that a symlink planted at the home path (a pre-existing home
    /// the tenant controls) is refused rather than followed to chmod something else.
    fn set_home_mode(&self, home: &Path, owner: Option<(u32, u32)>) -> Result<(), ProviderError> {
        let path = self.sysconf(home);
        let fd = rustix::fs::open(
            &path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| ProviderError::io("open home", &path, e.into()))?;
        let stat =
            rustix::fs::fstat(&fd).map_err(|e| ProviderError::io("stat home", &path, e.into()))?;
        let (uid, owner_gid) = match owner {
            Some((uid, gid)) if self.is_root() && uid != stat.st_uid => {
                (Some(rustix::fs::Uid::from_raw(uid)), gid)
            }
            _ => (None, stat.st_gid),
        };
        let gid = self.home_group(owner_gid)?;
        if gid != stat.st_gid || uid.is_some() {
            rustix::fs::fchown(&fd, uid, Some(rustix::fs::Gid::from_raw(gid)))
                .map_err(|e| ProviderError::io("chown home", &path, e.into()))?;
        }
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(HOME_MODE))
            .map_err(|e| ProviderError::io("chmod home", &path, e.into()))
    }

    /// The group a tenant's home belongs to: the web server's (`www-data`, `apache` on
    /// CloudLinux), so that Apache can pass through the home to the document roots while
    /// other tenants, in neither the owner nor the group, cannot enter it (the home is 0750).
    /// On a node without the web server's group, the tenant's own group `tenant_gid`.
    pub fn home_group(&self, tenant_gid: u32) -> Result<u32, ProviderError> {
        Ok(self
            .lookup_group(self.apache_layout().group)?
            .map_or(tenant_gid, |g| g.gid))
    }
}

/// The arguments of a `useradd --system` for one of the node's own service users: no home is
/// created (the home is the node's data directory, which the installer lays out itself), no
/// password, no login shell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SystemUserAdd<'a> {
    pub name: &'a str,
    /// The primary group, which must already exist (`Provider::groupadd_system`).
    pub group: &'a str,
    pub home: &'a Path,
    pub shell: &'a str,
    pub comment: &'a str,
}

impl Provider {
    /// `useradd [--prefix ROOT] --system --gid G --home-dir H --no-create-home --shell S
    /// --comment C -- NAME`.
    pub fn useradd_system(&self, user: &SystemUserAdd<'_>) -> Result<(), ProviderError> {
        let mut argv = self.shadow_argv();
        argv.arg("--system")
            .arg("--gid")
            .arg(user.group)
            .arg("--home-dir")
            .arg(user.home)
            .arg("--no-create-home")
            .arg("--shell")
            .arg(user.shell)
            .arg("--comment")
            .arg(user.comment)
            .arg("--")
            .arg(user.name);
        self.execute(
            Program::Useradd,
            &argv,
            None,
            Program::Useradd.default_timeout(),
        )?;
        Ok(())
    }
}
