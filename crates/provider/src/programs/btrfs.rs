//! `btrfs` (btrfs-progs): a tenant's home as a subvolume with a qgroup limit on its bytes.
//!
//! The forms the node runs, as btrfs-progs 6.2 (Debian 12) takes and prints them:
//!
//! - `btrfs subvolume create PATH`: the home, created before `useradd` finds it there;
//! - `btrfs subvolume show PATH`: exit 0 for a subvolume, 1 ("Not a Btrfs subvolume") for a
//!   plain directory; only the status is read;
//! - `btrfs subvolume delete PATH`: the home and everything in it, on the account's removal;
//! - `btrfs quota enable PATH`: quota groups on the file system holding `PATH` (a no-op when
//!   they are on already);
//! - `btrfs qgroup limit BYTES|none PATH`: the maximum referenced bytes of the subvolume's
//!   own qgroup (`0/<subvolume id>`);
//! - `btrfs qgroup show -reF --raw PATH`: a header, a dashed line, then one row per qgroup
//!   that limits `PATH` (`-F`), `Qgroupid Referenced Exclusive Max-referenced Max-exclusive
//!   Path`, sizes in bytes (`--raw`), an absent limit printed `none`.
//!
//! btrfs limits bytes, never inodes: the caller refuses an inode quota on a btrfs home.

use std::path::Path;

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::program::Program;
use crate::provider::Provider;

/// The row of `btrfs qgroup show -reF --raw` for a subvolume's own qgroup (`0/<id>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QgroupShown {
    /// Bytes referenced by the subvolume (what its files hold).
    pub referenced: u64,
    /// The limit on the referenced bytes, `None` when it is `none`.
    pub max_referenced: Option<u64>,
}

pub(crate) fn subvolume_argv(verb: &str, path: &Path) -> Argv {
    let mut argv = Argv::new();
    argv.arg("subvolume").arg(verb).arg(path);
    argv
}

pub(crate) fn quota_enable_argv(path: &Path) -> Argv {
    let mut argv = Argv::new();
    argv.arg("quota").arg("enable").arg(path);
    argv
}

pub(crate) fn qgroup_limit_argv(bytes: Option<u64>, path: &Path) -> Argv {
    let mut argv = Argv::new();
    argv.arg("qgroup")
        .arg("limit")
        .arg(bytes.map_or_else(|| "none".to_owned(), |b| b.to_string()))
        .arg(path);
    argv
}

pub(crate) fn qgroup_show_argv(path: &Path) -> Argv {
    let mut argv = Argv::new();
    argv.arg("qgroup")
        .arg("show")
        .arg("-reF")
        .arg("--raw")
        .arg(path);
    argv
}

/// The first level-0 qgroup row of `btrfs qgroup show -reF --raw` (the subvolume's own), or
/// `None` when the text holds none.
pub fn parse_qgroup_show(text: &str) -> Option<QgroupShown> {
    let size = |s: &str| -> Option<Option<u64>> {
        if s == "none" {
            Some(None)
        } else {
            s.parse().ok().map(Some)
        }
    };
    text.lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() >= 5 && f[0].starts_with("0/"))
        .and_then(|f| {
            Some(QgroupShown {
                referenced: f[1].parse().ok()?,
                max_referenced: size(f[3])?,
            })
        })
}

impl Provider {
    fn btrfs(&self, argv: &Argv) -> Result<crate::executor::Output, ProviderError> {
        self.execute(Program::Btrfs, argv, None, Program::Btrfs.default_timeout())
    }

    /// `btrfs subvolume create HOME` (the system path `home` mapped under the root).
    pub fn btrfs_subvolume_create(&self, home: &Path) -> Result<(), ProviderError> {
        self.btrfs(&subvolume_argv("create", &self.sysconf(home)))
            .map(drop)
    }

    /// `btrfs subvolume delete HOME`.
    pub fn btrfs_subvolume_delete(&self, home: &Path) -> Result<(), ProviderError> {
        self.btrfs(&subvolume_argv("delete", &self.sysconf(home)))
            .map(drop)
    }

    /// Whether `home` is a subvolume (`btrfs subvolume show` exits 0), not a plain directory
    /// (exit 1). A missing path is not one.
    pub fn btrfs_is_subvolume(&self, home: &Path) -> Result<bool, ProviderError> {
        match self.btrfs(&subvolume_argv("show", &self.sysconf(home))) {
            Ok(_) => Ok(true),
            Err(e) if e.exit_status() == Some(1) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// `btrfs quota enable HOME` then `btrfs qgroup limit BYTES|none HOME`.
    pub fn btrfs_limit(&self, home: &Path, bytes: Option<u64>) -> Result<(), ProviderError> {
        let path = self.sysconf(home);
        self.btrfs(&quota_enable_argv(&path))?;
        self.btrfs(&qgroup_limit_argv(bytes, &path)).map(drop)
    }

    /// `btrfs qgroup show -reF --raw HOME`, its subvolume's own row.
    pub fn btrfs_qgroup(&self, home: &Path) -> Result<QgroupShown, ProviderError> {
        let out = self.btrfs(&qgroup_show_argv(&self.sysconf(home)))?;
        let text = String::from_utf8_lossy(&out.stdout);
        // Exit 0 with output the node cannot read: a failure, as `dbctl list` does.
        parse_qgroup_show(&text).ok_or_else(|| ProviderError::Failed {
            program: Program::Btrfs,
            status: 0,
            stderr: format!("btrfs qgroup show: no level-0 qgroup row in {text:?}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn btrfs_argv_forms_are_the_documented_ones() {
        let home = Path::new("/home/shop1");
        assert_eq!(
            subvolume_argv("create", home).for_audit(),
            ["subvolume", "create", "/home/shop1"]
        );
        assert_eq!(
            quota_enable_argv(home).for_audit(),
            ["quota", "enable", "/home/shop1"]
        );
        assert_eq!(
            qgroup_limit_argv(Some(20 * 1024 * 1024), home).for_audit(),
            ["qgroup", "limit", "20971520", "/home/shop1"]
        );
        assert_eq!(
            qgroup_limit_argv(None, home).for_audit(),
            ["qgroup", "limit", "none", "/home/shop1"]
        );
        assert_eq!(
            qgroup_show_argv(home).for_audit(),
            ["qgroup", "show", "-reF", "--raw", "/home/shop1"]
        );
    }

    #[test]
    fn qgroup_show_is_read_from_the_subvolumes_own_row() {
        // As btrfs-progs 6.2 prints it on Debian 12.
        let text = "Qgroupid    Referenced    Exclusive  Max referenced  Max exclusive   Path \n\
                    --------    ----------    ---------  --------------  -------------   ---- \n\
                    0/256         20955136     20955136        20971520           none   u1\n";
        assert_eq!(
            parse_qgroup_show(text),
            Some(QgroupShown {
                referenced: 20_955_136,
                max_referenced: Some(20_971_520)
            })
        );
        let unlimited = text.replace("20971520", "none");
        assert_eq!(
            parse_qgroup_show(&unlimited).map(|q| q.max_referenced),
            Some(None)
        );
        assert_eq!(parse_qgroup_show("ERROR: can't list qgroups\n"), None);
        assert_eq!(parse_qgroup_show("0/256 many 1 2 none x\n"), None);
    }
}
