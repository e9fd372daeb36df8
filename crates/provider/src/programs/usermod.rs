//! `usermod`: suspends, unsuspends and changes a tenant's system user; adds a service's user
//! to one of the node's system groups.
//!
//! shadow-utils treats `--lock`, `--unlock` and `--password` as mutually exclusive (exit 2),
//! so the builder never combines them: a new hash with `lock: Some(true)` is passed as
//! `--password !HASH`, which is exactly what `--lock` would have produced. Exit codes callers
//! rely on: 6 = no such user (or no such group for `--gid`).
//!
//! `--gid` changes the primary group; like the real usermod, files in the home that had the
//! old group get the new one.

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::program::Program;
use crate::provider::Provider;

/// The account expiry (shadow field 8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expire {
    /// No expiry: the field is emptied (`--expiredate ''`).
    Never,
    /// Expired since 1970-01-02 (`--expiredate 1`), which also stops key-based logins that a
    /// password lock alone does not stop.
    Expired,
}

/// The changes of one `usermod`; `None` leaves a property as it is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UserMod<'a> {
    pub name: &'a str,
    /// `Some(true)` locks the password (prefix `!`), `Some(false)` unlocks it.
    pub lock: Option<bool>,
    pub expire: Option<Expire>,
    pub shell: Option<&'a str>,
    /// A new crypt(3) hash.
    pub password_hash: Option<&'a str>,
    /// A new primary group, by gid (it must exist).
    pub gid: Option<u32>,
}

impl UserMod<'_> {
    /// Whether there is anything to change; `usermod` with no option is a usage error.
    pub fn is_noop(&self) -> bool {
        self.lock.is_none()
            && self.expire.is_none()
            && self.shell.is_none()
            && self.password_hash.is_none()
            && self.gid.is_none()
    }

    pub(crate) fn push_args(&self, argv: &mut Argv) {
        match (self.password_hash, self.lock) {
            (Some(hash), Some(true)) if !hash.starts_with('!') => {
                argv.arg("--password").secret(format!("!{hash}"));
            }
            (Some(hash), _) => {
                argv.arg("--password").secret(hash);
            }
            (None, Some(true)) => {
                argv.arg("--lock");
            }
            (None, Some(false)) => {
                argv.arg("--unlock");
            }
            (None, None) => {}
        }
        match self.expire {
            Some(Expire::Never) => {
                argv.arg("--expiredate").arg("");
            }
            Some(Expire::Expired) => {
                argv.arg("--expiredate").arg("1");
            }
            None => {}
        }
        if let Some(shell) = self.shell {
            argv.arg("--shell").arg(shell);
        }
        if let Some(gid) = self.gid {
            argv.arg("--gid").arg(gid.to_string());
        }
        argv.arg("--").arg(self.name);
    }
}

impl Provider {
    /// `usermod [--prefix ROOT] [--lock|--unlock|--password HASH] [--expiredate 1|''] [--shell
    /// S] [--gid G] -- NAME`. A change with nothing to do starts no program.
    pub fn usermod(&self, change: &UserMod<'_>) -> Result<(), ProviderError> {
        if change.is_noop() {
            return Ok(());
        }
        self.run_usermod(&self.usermod_argv(change))
    }

    fn run_usermod(&self, argv: &Argv) -> Result<(), ProviderError> {
        self.execute(
            Program::Usermod,
            argv,
            None,
            Program::Usermod.default_timeout(),
        )
        .map(drop)
    }

    pub(crate) fn usermod_argv(&self, change: &UserMod<'_>) -> Argv {
        let mut argv = self.shadow_argv();
        change.push_args(&mut argv);
        argv
    }

    /// `usermod [--prefix ROOT] --append --groups GROUP -- NAME`: a service's user made a
    /// member of one of the node's system groups, its other groups kept (the installer's
    /// exemption of polkitd from `/proc`'s `hidepid=`, `programs/mount.rs`).
    pub fn usermod_append_group(&self, name: &str, group: &str) -> Result<(), ProviderError> {
        let mut argv = self.shadow_argv();
        argv.arg("--append")
            .arg("--groups")
            .arg(group)
            .arg("--")
            .arg(name);
        self.run_usermod(&argv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(change: &UserMod<'_>) -> Vec<String> {
        let mut argv = Argv::new();
        change.push_args(&mut argv);
        argv.args()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn lock_and_password_are_never_combined() {
        let both = UserMod {
            name: "acme",
            lock: Some(true),
            password_hash: Some("$6$s$h"),
            ..UserMod::default()
        };
        assert_eq!(args(&both), ["--password", "!$6$s$h", "--", "acme"]);
        let unlock_and_password = UserMod {
            lock: Some(false),
            ..both
        };
        assert_eq!(
            args(&unlock_and_password),
            ["--password", "$6$s$h", "--", "acme"]
        );
    }

    #[test]
    fn suspend_argv_locks_and_expires() {
        let suspend = UserMod {
            name: "acme",
            lock: Some(true),
            expire: Some(Expire::Expired),
            ..UserMod::default()
        };
        assert_eq!(
            args(&suspend),
            ["--lock", "--expiredate", "1", "--", "acme"]
        );
        let unsuspend = UserMod {
            name: "acme",
            lock: Some(false),
            expire: Some(Expire::Never),
            ..UserMod::default()
        };
        assert_eq!(
            args(&unsuspend),
            ["--unlock", "--expiredate", "", "--", "acme"]
        );
    }
}
