//! `mount` (util-linux): `/proc` remounted so that a tenant sees its own processes and nobody
//! else's (`docs/security.md`, "A tenant sees only its own processes").
//!
//! The kernel hides every process a reader could not `ptrace` (in read mode) from `/proc`
//! when it is mounted with `hidepid=invisible` (kernel 5.8 and later; `hidepid=2` before),
//! except from the members of the group named by `gid=`: [`PROC_GROUP`]. Root is exempt by
//! its capabilities; the group is for the node's own processes and the system's services that
//! read other users' processes without being root or without `CAP_SYS_PTRACE`.
//!
//! The node runs one form, `mount -o remount,OPTIONS /proc`, and only on the machine's own
//! root: a sysroot's `/proc` is the machine's, so there nothing is run and only the persistent
//! configuration, the `/etc/fstab` line ([`ProcHiding::fstab_line`]), is written. Since 5.8 the
//! options belong to that one mount of proc (every `mount -t proc` is a new instance), so a
//! container's or a unit's own `/proc` (`ProtectProc=`) is not affected by it.
//!
//! At boot, `systemd-remount-fs.service` remounts each API file system listed in `/etc/fstab`
//! with `mount PATH -o remount`, which takes the line's options. The options repeat
//! `nosuid,nodev,noexec`, which systemd mounts `/proc` with: a remount is made with the
//! options of the fstab line merged in, and a line that leaves them out (`defaults,...`)
//! clears them (seen with util-linux 2.38).

use std::path::Path;

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::program::Program;
use crate::programs::systemctl::Managed;
use crate::provider::Provider;

/// The group exempted from `hidepid=`: its members see every process in `/proc`.
pub const PROC_GROUP: &str = "layerone-proc";

/// The mount point the node remounts.
pub const PROC: &str = "/proc";

/// `/proc` as the node needs it: other users' processes invisible except to `gid` (the gid of
/// [`PROC_GROUP`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcHiding {
    pub gid: u32,
}

impl ProcHiding {
    /// The mount options, as given to `mount -o` and in the fstab line.
    pub fn options(&self) -> String {
        format!("nosuid,nodev,noexec,hidepid=invisible,gid={}", self.gid)
    }

    /// The `/etc/fstab` line that applies them at every boot.
    pub fn fstab_line(&self) -> String {
        format!("proc {PROC} proc {} 0 0", self.options())
    }

    /// Whether a mount with `options` (as the kernel reports them) hides processes as
    /// needed: `hidepid=invisible` (which the kernel also reports for `hidepid=2`) and this
    /// group exempted.
    pub fn is_met_by(&self, options: &[String]) -> bool {
        let gid = format!("gid={}", self.gid);
        options.iter().any(|o| o == "hidepid=invisible") && options.contains(&gid)
    }
}

pub(crate) fn remount_argv(hiding: &ProcHiding) -> Argv {
    let mut argv = Argv::new();
    argv.arg("-o")
        .arg(format!("remount,{}", hiding.options()))
        .arg(PROC);
    argv
}

impl Provider {
    /// `mount -o remount,nosuid,nodev,noexec,hidepid=invisible,gid=GID /proc`. Skipped on a
    /// sysroot, whose `/proc` is the machine's.
    pub fn remount_proc(&self, hiding: &ProcHiding) -> Result<Managed, ProviderError> {
        if !self.root_is_slash() {
            return Ok(Managed::SkippedOnSysroot);
        }
        self.execute(
            Program::Mount,
            &remount_argv(hiding),
            None,
            Program::Mount.default_timeout(),
        )?;
        Ok(Managed::Done)
    }

    /// The options of the `/proc` this machine's processes see; `None` on a sysroot (its
    /// `/proc` is the machine's) and when nothing is mounted there.
    pub fn proc_mount_options(&self) -> Result<Option<Vec<String>>, ProviderError> {
        if !self.root_is_slash() {
            return Ok(None);
        }
        Ok(self.mount_at(Path::new(PROC))?.map(|m| m.options))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remount_and_the_fstab_line_carry_the_same_options() {
        let hiding = ProcHiding { gid: 995 };
        assert_eq!(
            remount_argv(&hiding).for_audit(),
            [
                "-o",
                "remount,nosuid,nodev,noexec,hidepid=invisible,gid=995",
                "/proc"
            ]
        );
        assert_eq!(
            hiding.fstab_line(),
            "proc /proc proc nosuid,nodev,noexec,hidepid=invisible,gid=995 0 0"
        );
    }

    #[test]
    fn only_hidepid_invisible_with_the_groups_gid_meets_it() {
        let hiding = ProcHiding { gid: 995 };
        let opts = |s: &str| s.split(',').map(str::to_owned).collect::<Vec<_>>();
        assert!(hiding.is_met_by(&opts(
            "rw,nosuid,nodev,noexec,relatime,gid=995,hidepid=invisible"
        )));
        for other in [
            "rw,nosuid,nodev,noexec,relatime",
            "rw,relatime,hidepid=invisible",
            "rw,relatime,gid=995",
            "rw,relatime,gid=9950,hidepid=invisible",
            "rw,relatime,gid=996,hidepid=invisible",
            "rw,relatime,gid=995,hidepid=noaccess",
            "rw,relatime,gid=995,hidepid=ptraceable",
        ] {
            assert!(!hiding.is_met_by(&opts(other)), "{other}");
        }
    }
}
