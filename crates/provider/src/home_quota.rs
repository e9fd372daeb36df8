//! Disk and inode quotas of tenants' homes, through what the homes' file system offers.
//!
//! Which mechanism applies is read from the mount holding `/home` (`findmnt`, the kernel's
//! mount table):
//!
//! - `btrfs`: each home is a subvolume (created before `useradd` finds it there), limited in
//!   bytes by its qgroup (`btrfs qgroup limit`). btrfs has no inode limit;
//! - any other file system mounted with user quotas on (`usrquota`, `usrjquota=...` or
//!   `quota` among its options: ext4, xfs): the tenant's uid gets hard block and inode limits
//!   (`setquota`), read back with `repquota`;
//! - anything else: nothing can enforce a quota ([`QuotaMechanism::None`]); only an
//!   unlimited quota can be had there, which the caller decides.
//!
//! Every figure reported is what the kernel says after the change (`btrfs qgroup show`,
//! `repquota`), never the request echoed.

use std::path::{Path, PathBuf};

use crate::error::ProviderError;
use crate::programs::findmnt::MountShown;
use crate::provider::Provider;

/// Where the tenants' homes are.
pub const HOMES: &str = "/home";

/// What can enforce a quota on the homes' file system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuotaMechanism {
    /// btrfs: each home a subvolume, limited in bytes by its qgroup.
    BtrfsQgroup,
    /// User quotas of the file system (ext4, xfs): blocks and inodes per uid.
    UserQuota,
    /// Nothing: the file system has no quota the node can set.
    None,
}

impl QuotaMechanism {
    /// The stable name results carry.
    pub fn name(self) -> &'static str {
        match self {
            QuotaMechanism::BtrfsQgroup => "btrfs_qgroup",
            QuotaMechanism::UserQuota => "user_quota",
            QuotaMechanism::None => "none",
        }
    }

    /// Whether it can limit inodes (btrfs cannot).
    pub fn limits_inodes(self) -> bool {
        self == QuotaMechanism::UserQuota
    }

    /// The mechanism a mount offers: btrfs by its type, user quotas by its options.
    pub fn of_mount(mount: &MountShown) -> QuotaMechanism {
        if mount.fstype == "btrfs" {
            return QuotaMechanism::BtrfsQgroup;
        }
        let user_quota = mount
            .options
            .iter()
            .any(|o| o == "usrquota" || o == "quota" || o.starts_with("usrjquota="));
        if user_quota {
            QuotaMechanism::UserQuota
        } else {
            QuotaMechanism::None
        }
    }
}

/// The homes' file system, as far as quotas go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HomesFs {
    pub mechanism: QuotaMechanism,
    /// The mount point, as `findmnt` printed it (what `setquota` and `repquota` are given).
    pub mount: PathBuf,
    pub fstype: String,
}

impl HomesFs {
    /// Why the file system offers what it offers, for an error: "the file system of /home is
    /// ext4 without user quotas".
    pub fn describe(&self) -> String {
        match self.mechanism {
            QuotaMechanism::BtrfsQgroup => format!("the file system of {HOMES} is btrfs"),
            QuotaMechanism::UserQuota => {
                format!(
                    "the file system of {HOMES} is {} with user quotas",
                    self.fstype
                )
            }
            QuotaMechanism::None => format!(
                "the file system of {HOMES} is {} without user quotas",
                self.fstype
            ),
        }
    }
}

/// A home's quota as the kernel reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HomeQuota {
    pub used_bytes: u64,
    /// `None` where the mechanism does not count inodes (btrfs).
    pub used_inodes: Option<u64>,
    /// The limit in bytes, `None` for none.
    pub limit_bytes: Option<u64>,
    /// The limit in inodes, `None` for none (always on btrfs).
    pub limit_inodes: Option<u64>,
}

fn nonzero(n: u64) -> Option<u64> {
    (n != 0).then_some(n)
}

impl Provider {
    /// The mechanism the homes' file system offers, from the mount holding `/home` (the
    /// root's mount when the root has no `/home`).
    pub fn homes_fs(&self) -> Result<HomesFs, ProviderError> {
        let target = if self.sysconf(HOMES).exists() {
            HOMES
        } else {
            "/"
        };
        let mount = self.mount_of(Path::new(target))?;
        Ok(HomesFs {
            mechanism: QuotaMechanism::of_mount(&mount),
            mount: mount.target,
            fstype: mount.fstype,
        })
    }

    /// Makes a home that does not exist yet a subvolume where the homes are on btrfs, so that
    /// its bytes can be limited; `useradd --create-home` then finds it there and copies no
    /// skeleton into it. Returns whether it created one; elsewhere, or when the home exists,
    /// it does nothing.
    pub fn prepare_home(&self, fs: &HomesFs, home: &Path) -> Result<bool, ProviderError> {
        if fs.mechanism != QuotaMechanism::BtrfsQgroup {
            return Ok(false);
        }
        match std::fs::symlink_metadata(self.sysconf(home)) {
            Ok(_) => Ok(false),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.btrfs_subvolume_create(home)?;
                Ok(true)
            }
            Err(e) => Err(ProviderError::io("stat home", self.sysconf(home), e)),
        }
    }

    /// Whether `home` can be limited on its own: on btrfs only a subvolume can (a plain
    /// directory's bytes count in the subvolume that holds it); user quotas limit the uid
    /// wherever its files are.
    pub fn home_is_limitable(&self, fs: &HomesFs, home: &Path) -> Result<bool, ProviderError> {
        match fs.mechanism {
            QuotaMechanism::BtrfsQgroup => self.btrfs_is_subvolume(home),
            QuotaMechanism::UserQuota => Ok(true),
            QuotaMechanism::None => Ok(false),
        }
    }

    /// Sets the home's limits (0: none): the qgroup limit of the subvolume (the inode limit
    /// must be 0 there: the caller refuses any other), or the uid's user quota. Nothing on a
    /// file system without quotas.
    pub fn set_home_quota(
        &self,
        fs: &HomesFs,
        home: &Path,
        uid: u32,
        bytes: u64,
        inodes: u64,
    ) -> Result<(), ProviderError> {
        match fs.mechanism {
            QuotaMechanism::BtrfsQgroup => self.btrfs_limit(home, nonzero(bytes)),
            QuotaMechanism::UserQuota => {
                self.setquota(uid, bytes.div_ceil(1024), inodes, &fs.mount)
            }
            QuotaMechanism::None => Ok(()),
        }
    }

    /// The home's use and limits as the kernel reports them; `None` on a file system without
    /// quotas (or a btrfs home that is no subvolume), where the kernel keeps no such figures.
    pub fn home_quota(
        &self,
        fs: &HomesFs,
        home: &Path,
        uid: u32,
    ) -> Result<Option<HomeQuota>, ProviderError> {
        match fs.mechanism {
            QuotaMechanism::BtrfsQgroup => {
                if !self.btrfs_is_subvolume(home)? {
                    return Ok(None);
                }
                let shown = self.btrfs_qgroup(home)?;
                Ok(Some(HomeQuota {
                    used_bytes: shown.referenced,
                    used_inodes: None,
                    limit_bytes: shown.max_referenced,
                    limit_inodes: None,
                }))
            }
            QuotaMechanism::UserQuota => {
                let shown = self.repquota_user(uid, &fs.mount)?;
                Ok(Some(HomeQuota {
                    used_bytes: shown.used_kib.saturating_mul(1024),
                    used_inodes: Some(shown.used_inodes),
                    limit_bytes: nonzero(shown.hard_kib.saturating_mul(1024)),
                    limit_inodes: nonzero(shown.hard_inodes),
                }))
            }
            QuotaMechanism::None => Ok(None),
        }
    }

    /// What a removed account leaves of its quota, undone before its user goes: the home's
    /// subvolume deleted with everything in it, or the uid's user quota cleared (a uid handed
    /// out again starts unlimited). Safe to repeat.
    pub fn release_home_quota(
        &self,
        fs: &HomesFs,
        home: &Path,
        uid: u32,
    ) -> Result<(), ProviderError> {
        match fs.mechanism {
            QuotaMechanism::BtrfsQgroup => {
                if self.btrfs_is_subvolume(home)? {
                    self.btrfs_subvolume_delete(home)?;
                }
                Ok(())
            }
            QuotaMechanism::UserQuota => self.setquota(uid, 0, 0, &fs.mount),
            QuotaMechanism::None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mount(fstype: &str, options: &str) -> MountShown {
        MountShown {
            target: PathBuf::from("/home"),
            fstype: fstype.into(),
            options: options.split(',').map(str::to_owned).collect(),
        }
    }

    #[test]
    fn the_mechanism_follows_the_file_system_type_and_its_quota_options() {
        let of = |t, o| QuotaMechanism::of_mount(&mount(t, o));
        assert_eq!(
            of("btrfs", "rw,relatime,subvolid=5,subvol=/"),
            QuotaMechanism::BtrfsQgroup
        );
        assert_eq!(
            of("ext4", "rw,relatime,usrquota"),
            QuotaMechanism::UserQuota
        );
        assert_eq!(
            of("ext4", "rw,usrjquota=aquota.user,jqfmt=vfsv1"),
            QuotaMechanism::UserQuota
        );
        assert_eq!(of("xfs", "rw,attr2,quota"), QuotaMechanism::UserQuota);
        assert_eq!(of("ext4", "rw,relatime,grpquota"), QuotaMechanism::None);
        assert_eq!(of("ext4", "rw,relatime"), QuotaMechanism::None);
        let none = HomesFs {
            mechanism: QuotaMechanism::None,
            mount: PathBuf::from("/"),
            fstype: "ext4".into(),
        };
        assert_eq!(
            none.describe(),
            "the file system of /home is ext4 without user quotas"
        );
        assert!(!QuotaMechanism::BtrfsQgroup.limits_inodes());
        assert!(QuotaMechanism::UserQuota.limits_inodes());
    }
}
