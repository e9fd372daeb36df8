//! `setquota` and `repquota` (the `quota` package, quota-tools 4.06 on Debian 12): a
//! tenant's user quota on the file system of the homes, where that file system has user
//! quotas on (ext4 or xfs mounted `usrquota`, `usrjquota=` or `quota`).
//!
//! The forms the node runs:
//!
//! - `setquota -u UID BSOFT BHARD ISOFT IHARD MOUNT`: the user's block limits in 1 KiB
//!   blocks and its inode limits (0: none), soft equal to hard, so the limit is a hard stop
//!   without a grace period. The uid is passed as a number (quota-tools takes an all-digit
//!   user as an id), the node knowing its tenants by uid;
//! - `repquota -u -n -p -O csv MOUNT`: a header line, then one line per user the quota file
//!   holds, `#UID,BlockStatus,FileStatus,BlockUsed,BlockSoftLimit,BlockHardLimit,
//!   BlockGrace,FileUsed,FileSoftLimit,FileHardLimit,FileGrace` (`-n`: ids, not names; blocks
//!   in KiB; `-p`: grace as seconds since the epoch).
//!
//! This machine's kernel lacks the quota format these tools need (QFMT_V2), so the forms are
//! held by the unit tests below and by the simulator's model, which parses the same argv.

use std::path::Path;

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::program::Program;
use crate::provider::Provider;

/// One user's line of `repquota -u -n -p -O csv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserQuotaShown {
    pub uid: u32,
    /// Blocks used, in KiB.
    pub used_kib: u64,
    /// The hard block limit in KiB, 0 for none.
    pub hard_kib: u64,
    pub used_inodes: u64,
    /// The hard inode limit, 0 for none.
    pub hard_inodes: u64,
}

pub(crate) fn setquota_argv(uid: u32, kib: u64, inodes: u64, mount: &Path) -> Argv {
    let mut argv = Argv::new();
    argv.arg("-u")
        .arg(uid.to_string())
        .arg(kib.to_string())
        .arg(kib.to_string())
        .arg(inodes.to_string())
        .arg(inodes.to_string())
        .arg(mount);
    argv
}

pub(crate) fn repquota_argv(mount: &Path) -> Argv {
    let mut argv = Argv::new();
    argv.arg("-u")
        .arg("-n")
        .arg("-p")
        .arg("-O")
        .arg("csv")
        .arg(mount);
    argv
}

/// The user lines of `repquota -u -n -p -O csv`. A line of eleven fields naming `#UID` is a
/// user's; the header and anything else is skipped, a user line whose numbers do not parse
/// is an error.
pub fn parse_repquota_csv(text: &str) -> Result<Vec<UserQuotaShown>, String> {
    let mut users = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != 11 || !f[0].starts_with('#') {
            continue;
        }
        let n = |i: usize| {
            f[i].trim()
                .parse::<u64>()
                .map_err(|_| format!("repquota: field {i} of {line:?} is not a number"))
        };
        let uid = f[0][1..]
            .parse::<u32>()
            .map_err(|_| format!("repquota: {:?} is not a uid", f[0]))?;
        users.push(UserQuotaShown {
            uid,
            used_kib: n(3)?,
            hard_kib: n(5)?,
            used_inodes: n(7)?,
            hard_inodes: n(9)?,
        });
    }
    Ok(users)
}

impl Provider {
    /// `setquota -u UID KIB KIB INODES INODES MOUNT` (0: no limit). `mount` is the mount
    /// point as `findmnt` printed it.
    pub fn setquota(
        &self,
        uid: u32,
        kib: u64,
        inodes: u64,
        mount: &Path,
    ) -> Result<(), ProviderError> {
        let argv = setquota_argv(uid, kib, inodes, mount);
        self.execute(
            Program::Setquota,
            &argv,
            None,
            Program::Setquota.default_timeout(),
        )
        .map(drop)
    }

    /// The line of `uid` in `repquota -u -n -p -O csv MOUNT`; a user the quota file does not
    /// hold uses nothing and has no limit.
    pub fn repquota_user(&self, uid: u32, mount: &Path) -> Result<UserQuotaShown, ProviderError> {
        let argv = repquota_argv(mount);
        let out = self.execute(
            Program::Repquota,
            &argv,
            None,
            Program::Repquota.default_timeout(),
        )?;
        let users =
            parse_repquota_csv(&String::from_utf8_lossy(&out.stdout)).map_err(|stderr| {
                ProviderError::Failed {
                    program: Program::Repquota,
                    status: 0,
                    stderr,
                }
            })?;
        Ok(users
            .into_iter()
            .find(|u| u.uid == uid)
            .unwrap_or(UserQuotaShown {
                uid,
                used_kib: 0,
                hard_kib: 0,
                used_inodes: 0,
                hard_inodes: 0,
            }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_argv_forms_are_the_documented_ones() {
        assert_eq!(
            setquota_argv(2_000_001, 20 * 1024, 5000, Path::new("/home")).for_audit(),
            ["-u", "2000001", "20480", "20480", "5000", "5000", "/home"]
        );
        assert_eq!(
            setquota_argv(1001, 0, 0, Path::new("/")).for_audit(),
            ["-u", "1001", "0", "0", "0", "0", "/"]
        );
        assert_eq!(
            repquota_argv(Path::new("/home")).for_audit(),
            ["-u", "-n", "-p", "-O", "csv", "/home"]
        );
    }

    #[test]
    fn repquota_csv_is_read_by_uid() {
        let text = "User,BlockStatus,FileStatus,BlockUsed,BlockSoftLimit,BlockHardLimit,BlockGrace,FileUsed,FileSoftLimit,FileHardLimit,FileGrace\n\
                    #0,ok,ok,1024,0,0,0,12,0,0,0\n\
                    #2000001,hard,ok,20480,20480,20480,0,31,5000,5000,0\n";
        let users = parse_repquota_csv(text).unwrap();
        assert_eq!(users.len(), 2);
        assert_eq!(
            users[1],
            UserQuotaShown {
                uid: 2_000_001,
                used_kib: 20480,
                hard_kib: 20480,
                used_inodes: 31,
                hard_inodes: 5000
            }
        );
        assert!(parse_repquota_csv("#12,ok,ok,x,0,0,0,1,0,0,0\n").is_err());
        assert!(parse_repquota_csv("#bob,ok,ok,1,0,0,0,1,0,0,0\n").is_err());
        assert_eq!(parse_repquota_csv("repquota: nothing\n"), Ok(vec![]));
    }
}
