//! An account's disk and inode quotas, enforced by what the file system of `/home` offers
//! (`provider::HomesFs`): a btrfs qgroup limit on the tenant's qgroup, which holds the home's
//! subvolume and every subvolume under it (bytes only; [`enclose_subvolumes`] keeps the
//! ones a tenant creates in it), or the uid's hard user quota where `/home` has user quotas
//! on.
//!
//! A quota of 0 is unlimited and is accepted everywhere, so a node whose `/home` enforces
//! nothing still creates accounts; any other quota is refused there with
//! `quota_unsupported`, naming the field and the file system, before anything is created, as
//! is an inode quota on btrfs. What results report is what the kernel holds after the change
//! ([`status`]), never the request echoed: `enforced` is true only when a limit was read back.

use std::path::Path;

use provider::HomesFs;
use registry::OpError;

use super::{EnsureAccountRequest, QuotaMechanism, QuotaStatus};
use crate::context::{Ctx, provider_error};

fn unsupported(field: &str, why: String) -> OpError {
    OpError::permanent("quota_unsupported", format!("resource.{field}: {why}"))
}

/// Refuses a quota the homes' file system cannot enforce (see the module documentation).
pub(super) fn check_offered(fs: &HomesFs, req: &EnsureAccountRequest) -> Result<(), OpError> {
    let (bytes, inodes) = (req.disk_quota_mib.get(), req.inode_quota.get());
    match fs.mechanism {
        QuotaMechanism::None if bytes != 0 => Err(unsupported(
            "disk_quota_mib",
            format!("{}: nothing can enforce a disk quota (0 is unlimited)", fs.describe()),
        )),
        QuotaMechanism::None if inodes != 0 => Err(unsupported(
            "inode_quota",
            format!("{}: nothing can enforce an inode quota (0 is unlimited)", fs.describe()),
        )),
        QuotaMechanism::BtrfsQgroup if inodes != 0 => Err(unsupported(
            "inode_quota",
            format!(
                "{}: btrfs qgroups limit bytes, not inodes (0 is unlimited)",
                fs.describe()
            ),
        )),
        _ => Ok(()),
    }
}

/// Sets the home's quota from the request and reads it back; a limit the kernel does not
/// hold as asked fails `quota_not_applied` (retried).
pub(super) fn apply(
    ctx: &Ctx,
    fs: &HomesFs,
    home: &Path,
    uid: u32,
    req: &EnsureAccountRequest,
) -> Result<QuotaStatus, OpError> {
    let bytes = req.disk_quota_mib.get().saturating_mul(1024 * 1024);
    let inodes = req.inode_quota.get();
    let limitable = ctx
        .provider
        .home_is_limitable(fs, home)
        .map_err(provider_error)?;
    if !limitable && bytes == 0 && inodes == 0 {
        // Nothing to set, and on btrfs a limit given for a plain directory would be its
        // parent subvolume's.
        return status(ctx, fs, home, uid);
    }
    if !limitable {
        return Err(unsupported(
            "disk_quota_mib",
            format!(
                "{}, but {} is not a subvolume (a home made before its file system was), so its bytes cannot be limited on their own",
                fs.describe(),
                home.display()
            ),
        ));
    }
    ctx.provider
        .set_home_quota(fs, home, uid, bytes, inodes)
        .map_err(provider_error)?;
    let got = status(ctx, fs, home, uid)?;
    let want = |n: u64| (n != 0).then_some(n);
    if fs.mechanism != QuotaMechanism::None
        && (got.limit_bytes != want(bytes) || got.limit_inodes != want(inodes))
    {
        return Err(OpError::retryable(
            "quota_not_applied",
            format!(
                "the quota of {} reads back as {:?} bytes and {:?} inodes, not the {:?} and {:?} set",
                home.display(),
                got.limit_bytes,
                got.limit_inodes,
                want(bytes),
                want(inodes)
            ),
        ));
    }
    Ok(got)
}

/// The home's quota as the kernel reports it now.
pub(super) fn status(ctx: &Ctx, fs: &HomesFs, home: &Path, uid: u32) -> Result<QuotaStatus, OpError> {
    let mechanism = fs.mechanism;
    let read = ctx
        .provider
        .home_quota(fs, home, uid)
        .map_err(provider_error)?;
    Ok(match read {
        Some(q) => QuotaStatus {
            mechanism,
            enforced: q.limit_bytes.is_some() || q.limit_inodes.is_some(),
            limit_bytes: q.limit_bytes,
            limit_inodes: q.limit_inodes,
            used_bytes: Some(q.used_bytes),
            used_inodes: q.used_inodes,
        },
        None => QuotaStatus {
            mechanism,
            enforced: false,
            limit_bytes: None,
            limit_inodes: None,
            used_bytes: None,
            used_inodes: None,
        },
    })
}

/// The homes' file system as the provider reads it.
pub(super) fn homes_fs(ctx: &Ctx) -> Result<HomesFs, OpError> {
    ctx.provider.homes_fs().map_err(provider_error)
}

/// Whether any account has a disk quota: what makes a subvolume a tenant creates worth
/// enclosing. `account`: only that account's (before one of its jobs), or any.
pub fn has_disk_quota(ctx: &Ctx, account: Option<&registry::types::Hex32>) -> Result<bool, OpError> {
    let view = ctx.view();
    let any = match account {
        Some(id) => view
            .get::<super::AccountRow>(id)
            .map_err(crate::context::store_error)?
            .is_some_and(|a| a.row.disk_quota_mib != 0),
        None => view
            .all::<super::AccountRow>()
            .map_err(crate::context::store_error)?
            .iter()
            .any(|a| a.row.disk_quota_mib != 0),
    };
    Ok(any)
}

/// Where `/home` is btrfs: every subvolume a tenant created under its home, or a snapshot
/// of it, made a member of the tenant's qgroup, so that it counts against the tenant's
/// limit (`provider::Provider::enclose_subvolumes`). A tenant can write past its quota into
/// a subvolume it created only until the next scan: the runner scans at least every minute
/// and before every job of an account with a quota. Returns how many it enclosed.
pub fn enclose_subvolumes(ctx: &Ctx) -> Result<usize, OpError> {
    let fs = homes_fs(ctx)?;
    let added = ctx
        .provider
        .enclose_subvolumes(&fs)
        .map_err(provider_error)?;
    for (id, group) in &added {
        tracing::warn!(subvolume = id, qgroup = %group, "a subvolume under a tenant's home now counts against its quota");
    }
    Ok(added.len())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn request(mib: u64, inodes: u64) -> EnsureAccountRequest {
        serde_json::from_value(serde_json::json!({
            "id": "0123456789abcdef0123456789abcdef", "username": "shop1",
            "disk_quota_mib": mib, "inode_quota": inodes
        }))
        .unwrap()
    }

    fn fs(mechanism: QuotaMechanism, fstype: &str) -> HomesFs {
        HomesFs {
            mechanism,
            mount: PathBuf::from("/home"),
            fstype: fstype.into(),
        }
    }

    #[test]
    fn only_what_the_file_system_enforces_is_offered_and_unlimited_always_is() {
        use QuotaMechanism::{BtrfsQgroup, None, UserQuota};
        let refused = |f: &HomesFs, mib, inodes| {
            let e = check_offered(f, &request(mib, inodes)).unwrap_err();
            assert_eq!(e.code, "quota_unsupported");
            e.message
        };
        let ext4 = fs(None, "ext4");
        assert!(refused(&ext4, 20, 0).starts_with(
            "resource.disk_quota_mib: the file system of /home is ext4 without user quotas"
        ));
        assert!(refused(&ext4, 0, 10).starts_with("resource.inode_quota: "));
        let btrfs = fs(BtrfsQgroup, "btrfs");
        assert!(refused(&btrfs, 20, 10).contains("btrfs qgroups limit bytes, not inodes"));
        assert!(refused(&btrfs, 20, 10).starts_with("resource.inode_quota: "));
        for f in [&ext4, &btrfs, &fs(UserQuota, "xfs")] {
            assert!(check_offered(f, &request(0, 0)).is_ok(), "{f:?}");
        }
        assert!(check_offered(&btrfs, &request(20, 0)).is_ok());
        assert!(check_offered(&fs(UserQuota, "ext4"), &request(20, 10)).is_ok());
    }
}
