//! Disk and inode quotas of tenants' homes, through what the homes' file system offers.
//!
//! Which mechanism applies is read from the mount holding `/home` (`findmnt`, the kernel's
//! mount table):
//!
//! - `btrfs`: each home is a subvolume (created before `useradd` finds it there), a member of
//!   the tenant's level-1 qgroup `1/<uid>`, which is limited in bytes (`btrfs qgroup
//!   limit`). A tenant can create subvolumes in its home and snapshot it, unprivileged; each
//!   new one starts outside every qgroup but its own, so [`Provider::enclose_subvolumes`]
//!   makes every subvolume under a member of a tenant's qgroup a member too (the runner
//!   calls it at least every minute and before every job of an account with a quota). The
//!   removal deletes them by id, deepest first. btrfs has no inode limit;
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
use crate::programs::btrfs::{QgroupShown, SubvolumeListed, nested_subvolumes, tenant_qgroup};
use crate::programs::findmnt::MountShown;
use crate::provider::Provider;

/// Where the tenants' homes are.
pub const HOMES: &str = "/home";

pub use registry::types::QuotaMechanism;

/// The quota mechanism a mount offers: btrfs by its type, user quotas by its options.
pub fn mechanism_of_mount(mount: &MountShown) -> QuotaMechanism {
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
            mechanism: mechanism_of_mount(&mount),
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

    /// Sets the home's limits (0: none): on btrfs the limit of the tenant's qgroup, which the
    /// home and every subvolume under it are made members of (the inode limit must be 0
    /// there: the caller refuses any other); or the uid's user quota. Nothing on a file
    /// system without quotas.
    pub fn set_home_quota(
        &self,
        fs: &HomesFs,
        home: &Path,
        uid: u32,
        bytes: u64,
        inodes: u64,
    ) -> Result<(), ProviderError> {
        match fs.mechanism {
            QuotaMechanism::BtrfsQgroup => {
                let id = self.btrfs_root_id(home)?;
                self.btrfs_quota_enable(home)?;
                let group = tenant_qgroup(uid);
                let own = format!("0/{id}");
                let qgroups = self.btrfs_qgroups(home)?;
                if !qgroups.iter().any(|q| q.qgroup == group) {
                    self.btrfs_qgroup_create(&group, home)?;
                }
                let member = qgroups
                    .iter()
                    .find(|q| q.qgroup == own)
                    .is_some_and(|q| q.parents.contains(&group));
                if !member {
                    self.btrfs_qgroup_assign(&own, &group, home)?;
                    self.btrfs_quota_rescan(home)?;
                }
                self.btrfs_qgroup_limit(nonzero(bytes), &group, home)?;
                // A home limited before the tenant's qgroup held the limit kept it on its own
                // qgroup: lifted, so one limit holds.
                if qgroups
                    .iter()
                    .any(|q| q.qgroup == own && q.max_referenced.is_some())
                {
                    self.btrfs_qgroup_limit(None, &own, home)?;
                }
                self.enclose_subvolumes(fs).map(drop)
            }
            QuotaMechanism::UserQuota => {
                self.setquota(uid, bytes.div_ceil(1024), inodes, &fs.mount)
            }
            QuotaMechanism::None => Ok(()),
        }
    }

    /// Makes every subvolume under a member of a tenant's qgroup a member of that qgroup too
    /// (a subvolume a tenant created in its home, or a snapshot of it), so that it counts
    /// against the tenant's limit. Two reads of the whole file system (`btrfs subvolume
    /// list`, `btrfs qgroup show`), and for the subvolumes found outside one `btrfs qgroup
    /// assign` each then one rescan, waited for (until it ends the qgroup counts nothing);
    /// nothing elsewhere than on btrfs. Returns the qgroup memberships it added.
    pub fn enclose_subvolumes(&self, fs: &HomesFs) -> Result<Vec<(u64, String)>, ProviderError> {
        if fs.mechanism != QuotaMechanism::BtrfsQgroup {
            return Ok(Vec::new());
        }
        let homes = Path::new(HOMES);
        let subvolumes = self.btrfs_subvolumes(homes)?;
        let qgroups = self.btrfs_qgroups(homes)?;
        let added = missing_memberships(&subvolumes, &qgroups);
        for (id, group) in &added {
            self.btrfs_qgroup_assign(&format!("0/{id}"), group, homes)?;
        }
        if !added.is_empty() {
            self.btrfs_quota_rescan(homes)?;
        }
        Ok(added)
    }

    /// The home's use and limits as the kernel reports them: on btrfs the tenant's qgroup's
    /// (the home's own where it is in none, as a release before the tenant qgroups left it);
    /// `None` on a file system without quotas (or a btrfs home that is no subvolume), where
    /// the kernel keeps no such figures.
    pub fn home_quota(
        &self,
        fs: &HomesFs,
        home: &Path,
        uid: u32,
    ) -> Result<Option<HomeQuota>, ProviderError> {
        match fs.mechanism {
            QuotaMechanism::BtrfsQgroup => {
                let Some(id) = self.btrfs_subvolume_id(home)? else {
                    return Ok(None);
                };
                let own = format!("0/{id}");
                let group = tenant_qgroup(uid);
                let qgroups = self.btrfs_qgroups(home)?;
                let in_group = qgroups
                    .iter()
                    .any(|q| q.qgroup == own && q.parents.contains(&group));
                let wanted = if in_group { &group } else { &own };
                let shown = qgroups
                    .iter()
                    .find(|q| &q.qgroup == wanted)
                    .ok_or_else(|| ProviderError::Failed {
                        program: crate::Program::Btrfs,
                        status: 0,
                        stderr: format!(
                            "btrfs qgroup show: no qgroup {wanted} for {}",
                            home.display()
                        ),
                    })?;
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

    /// What a removed account leaves of its quota, undone before its user goes. On btrfs:
    /// the tenant's limit lifted (a subvolume at its limit cannot even be deleted: the
    /// deletion needs room), every subvolume under the home deleted by id, deepest first (no
    /// path the tenant controls is resolved), then the home with what it holds, and the
    /// tenant's qgroup destroyed. Elsewhere the uid's user quota is cleared (a uid handed out
    /// again starts unlimited). Safe to repeat.
    pub fn release_home_quota(
        &self,
        fs: &HomesFs,
        home: &Path,
        uid: u32,
    ) -> Result<(), ProviderError> {
        match fs.mechanism {
            QuotaMechanism::BtrfsQgroup => {
                let homes = Path::new(HOMES);
                let group = tenant_qgroup(uid);
                let qgroups = match self.btrfs_qgroups(homes) {
                    Ok(qgroups) => qgroups,
                    // Quotas off on the file system (exit 1): no qgroup to lift or destroy,
                    // and the subvolumes still go.
                    Err(e) if e.exit_status() == Some(1) => Vec::new(),
                    Err(e) => return Err(e),
                };
                if qgroups.iter().any(|q| q.qgroup == group) {
                    self.btrfs_qgroup_limit(None, &group, homes)?;
                }
                if let Some(id) = self.btrfs_subvolume_id(home)? {
                    let all = self.btrfs_subvolumes(homes)?;
                    for (nested, _) in nested_subvolumes(&all, id) {
                        self.btrfs_subvolume_delete_id(nested.id, homes)?;
                    }
                    self.btrfs_subvolume_delete_id(id, homes)?;
                }
                // A qgroup with members cannot be destroyed; the members' own qgroups stay
                // (`<stale>`) until btrfs drops them.
                if qgroups.iter().any(|q| q.qgroup == group) {
                    for member in qgroups.iter().filter(|q| q.parents.contains(&group)) {
                        self.btrfs_qgroup_unassign(&member.qgroup, &group, homes)?;
                    }
                    self.btrfs_qgroup_destroy(&group, homes)?;
                }
                Ok(())
            }
            QuotaMechanism::UserQuota => self.setquota(uid, 0, 0, &fs.mount),
            QuotaMechanism::None => Ok(()),
        }
    }
}

/// The memberships `(subvolume id, tenant qgroup)` missing for every subvolume under a
/// member of a tenant qgroup (level 1) to be a member of it too.
fn missing_memberships(
    subvolumes: &[SubvolumeListed],
    qgroups: &[QgroupShown],
) -> Vec<(u64, String)> {
    let parents_of = |id: u64| -> &[String] {
        let own = format!("0/{id}");
        qgroups
            .iter()
            .find(|q| q.qgroup == own)
            .map_or(&[], |q| q.parents.as_slice())
    };
    let mut missing = Vec::new();
    for q in qgroups.iter().filter(|q| q.qgroup.starts_with("1/")) {
        let members = qgroups.iter().filter(|m| m.parents.contains(&q.qgroup));
        for member in members {
            let Some(id) = member
                .qgroup
                .strip_prefix("0/")
                .and_then(|i| i.parse::<u64>().ok())
            else {
                continue;
            };
            for (nested, _) in nested_subvolumes(subvolumes, id) {
                let entry = (nested.id, q.qgroup.clone());
                if !parents_of(nested.id).contains(&q.qgroup) && !missing.contains(&entry) {
                    missing.push(entry);
                }
            }
        }
    }
    missing
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
        let of = |t, o| mechanism_of_mount(&mount(t, o));
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
    }

    #[test]
    fn every_subvolume_under_a_tenant_qgroups_member_is_found_outside_it() {
        let list = crate::parse_subvolume_list(
            "ID 256 gen 9 top level 5 path shop1\n\
             ID 257 gen 9 top level 256 path shop1/x\n\
             ID 258 gen 9 top level 257 path shop1/x/z\n\
             ID 259 gen 9 top level 256 path shop1/snap\n\
             ID 260 gen 9 top level 5 path shop2\n\
             ID 261 gen 9 top level 260 path shop2/y\n\
             ID 262 gen 9 top level 5 path plain/w\n",
        )
        .unwrap();
        let row = |qgroup: &str, parents: &[&str]| QgroupShown {
            qgroup: qgroup.into(),
            referenced: 16384,
            max_referenced: None,
            parents: parents.iter().map(|p| p.to_string()).collect(),
        };
        let qgroups = [
            row("0/256", &["1/1001"]),
            row("0/257", &["1/1001"]),
            row("0/258", &[]),
            row("0/259", &[]),
            row("0/260", &["1/1002"]),
            row("0/261", &[]),
            row("0/262", &[]),
            row("1/1001", &[]),
            row("1/1002", &[]),
        ];
        assert_eq!(
            missing_memberships(&list, &qgroups),
            [
                (258, "1/1001".to_owned()),
                (259, "1/1001".to_owned()),
                (261, "1/1002".to_owned())
            ]
        );
        // Once assigned, nothing is missing.
        let mut done = qgroups.to_vec();
        for (id, group) in [(258, "1/1001"), (259, "1/1001"), (261, "1/1002")] {
            let own = format!("0/{id}");
            done.iter_mut()
                .find(|q| q.qgroup == own)
                .unwrap()
                .parents
                .push(group.into());
        }
        assert!(missing_memberships(&list, &done).is_empty());
    }
}
