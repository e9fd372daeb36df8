//! `/proc` mounted so that a tenant sees its own processes and nobody else's
//! (`docs/security.md`, "A tenant sees only its own processes"): `hidepid=invisible`, with the
//! group [`PROC_GROUP`] exempted (`provider::ProcHiding`).
//!
//! In order:
//! - the system group `layerone-proc`;
//! - the services that read other users' processes without the capability that exempts root
//!   put in it: systemd-logind (root without `CAP_SYS_PTRACE`) by a drop-in with
//!   `SupplementaryGroups=`, and polkit by the same drop-in and by the membership of its user
//!   `polkitd`, because polkitd starts as root and resets its groups to its user's own
//!   (`initgroups`), dropping what the unit gave it. Each is restarted if it runs and its
//!   drop-in or membership changed. The node's own reader of other processes, the worker that
//!   stops a removed tenant's processes, gets the group from the provider for that one request
//!   (`provider::terminate_tenant_processes`); the runner is root;
//! - the `/etc/fstab` line, which `systemd-remount-fs.service` applies at every boot (systemd
//!   mounts `/proc` itself, then remounts each API file system fstab names with its options;
//!   systemd's fstab generator makes no mount unit for it). Every other line is kept, another
//!   `/proc` line replaced;
//! - the mounted `/proc`, remounted with the same options when it lacks them (not on a sysroot,
//!   whose `/proc` is the machine's).
//!
//! `--check` names each of these that differs, the mounted `/proc` included.

use std::os::unix::fs::PermissionsExt;

use provider::{GroupEntry, PROC_GROUP, ProcHiding};
use store::LayoutOwner;

use crate::InstallError;
use crate::converge::{Change, Engine};

/// The file systems table.
pub const FSTAB: &str = "/etc/fstab";

/// polkit's own user, which polkitd becomes with that user's groups.
pub const POLKIT_USER: &str = "polkitd";

/// The units given the exempted group by a drop-in, and the drop-in of each.
pub const DROP_INS: &[(&str, &str)] = &[
    (
        "systemd-logind.service",
        "/etc/systemd/system/systemd-logind.service.d/layerone-proc.conf",
    ),
    (
        "polkit.service",
        "/etc/systemd/system/polkit.service.d/layerone-proc.conf",
    ),
];

/// The drop-in putting a service in the exempted group.
pub fn drop_in() -> String {
    format!(
        "# Derived by `layerone install`; edits here are moved to /etc/layerone/override/ by\n\
         # the next install. /proc hides other users' processes (hidepid=invisible) except from\n\
         # the group {PROC_GROUP}; this service reads them.\n\
         [Service]\n\
         SupplementaryGroups={PROC_GROUP}\n"
    )
}

/// `current` with `line` as its one entry for `/proc`: in place of the first one found (the
/// others dropped), or appended. Comments, blank lines and every other entry are kept as they
/// are. Also returns the `/proc` entries found.
pub fn with_proc_line(current: &str, line: &str) -> (String, Vec<String>) {
    let mut out = String::with_capacity(current.len() + line.len() + 1);
    let mut found = Vec::new();
    for l in current.lines() {
        if mounts_proc(l) {
            if found.is_empty() {
                out.push_str(line);
                out.push('\n');
            }
            found.push(l.trim().to_owned());
        } else {
            out.push_str(l);
            out.push('\n');
        }
    }
    if found.is_empty() {
        out.push_str(line);
        out.push('\n');
    }
    (out, found)
}

/// Whether an fstab line is an entry whose mount point is `/proc`.
fn mounts_proc(line: &str) -> bool {
    let line = line.trim_start();
    !line.starts_with('#')
        && line
            .split_whitespace()
            .nth(1)
            .is_some_and(|target| target == "/proc" || target == "/proc/")
}

/// Converges everything above; see the module documentation.
pub fn converge(e: &mut Engine, notes: &mut Vec<String>) -> Result<(), InstallError> {
    let group = exempted_group(e)?;

    let mut restart: Vec<&str> = Vec::new();
    let mut drop_ins_written = false;
    for &(unit, path) in DROP_INS {
        if e.derived(path, drop_in().as_bytes(), 0o644, LayoutOwner::Root)? {
            drop_ins_written = true;
            restart.push(unit);
        }
    }
    let polkit_member = group
        .as_ref()
        .is_some_and(|g| g.members.iter().any(|m| m == POLKIT_USER));
    if !polkit_member && e.provider.lookup_user(POLKIT_USER)?.is_some() {
        e.record(Change::AddToGroup {
            user: POLKIT_USER.into(),
            group: PROC_GROUP.into(),
        });
        if !e.check {
            e.provider.usermod_append_group(POLKIT_USER, PROC_GROUP)?;
            if !restart.contains(&"polkit.service") {
                restart.push("polkit.service");
            }
        }
    }
    if !e.check {
        if drop_ins_written {
            e.provider.systemd_daemon_reload()?;
        }
        // Before the remount, so that they can read what they need once it is made. Skipped
        // on a sysroot.
        for unit in restart {
            if let Err(err) = e.provider.systemd_restart(unit, false) {
                notes.push(format!("restarting {unit} failed: {err}"));
            }
        }
    }

    let Some(group) = group else {
        // Only under --check, before the group exists: its gid is not known yet.
        let remount = if e.provider.root_is_slash() {
            " and remount /proc"
        } else {
            ""
        };
        e.record(Change::Other(format!(
            "write the /proc line of {FSTAB}{remount} with hidepid=invisible, the group \
             {PROC_GROUP} exempted"
        )));
        return Ok(());
    };
    let hiding = ProcHiding { gid: group.gid };
    fstab(e, &hiding, notes)?;

    if let Some(options) = e.provider.proc_mount_options()?
        && !hiding.is_met_by(&options)
    {
        e.record(Change::Remount {
            path: provider::PROC.into(),
            found: options.join(","),
            want: hiding.options(),
        });
        if !e.check {
            e.provider.remount_proc(&hiding)?;
        }
    }
    Ok(())
}

/// The group exempted from `hidepid=`, created if missing; `None` only under `--check`
/// before it exists.
fn exempted_group(e: &mut Engine) -> Result<Option<GroupEntry>, InstallError> {
    if let Some(group) = e.provider.lookup_group(PROC_GROUP)? {
        return Ok(Some(group));
    }
    e.record(Change::CreateGroup(PROC_GROUP.into()));
    if e.check {
        return Ok(None);
    }
    e.provider.groupadd_system(PROC_GROUP)?;
    let group = e.provider.lookup_group(PROC_GROUP)?;
    group.map(Some).ok_or_else(|| InstallError::Refused {
        path: e.map("/etc/group"),
        reason: format!("groupadd succeeded but {PROC_GROUP} is not in it"),
    })
}

/// The fstab line, every other line kept. A file that is not a regular one (a symlink) is
/// left alone with a note.
fn fstab(e: &mut Engine, hiding: &ProcHiding, notes: &mut Vec<String>) -> Result<(), InstallError> {
    let path = e.map(FSTAB);
    let (current, mode) = match std::fs::symlink_metadata(&path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => (String::new(), 0o644),
        Err(source) => return Err(InstallError::Io { path, source }),
        Ok(meta) if !meta.file_type().is_file() => {
            notes.push(format!(
                "{FSTAB} is not a regular file: add `{}` to the file it stands for, or /proc \
                 shows every process again after a reboot",
                hiding.fstab_line()
            ));
            return Ok(());
        }
        Ok(meta) => {
            let bytes = e.read_regular(FSTAB)?.unwrap_or_default();
            let text = String::from_utf8(bytes).map_err(|_| InstallError::Refused {
                path: path.clone(),
                reason: "is not UTF-8; the installer edits only its /proc line".into(),
            })?;
            (text, meta.permissions().mode() & 0o7777)
        }
    };
    let want = hiding.fstab_line();
    let (text, found) = with_proc_line(&current, &want);
    if text == current {
        return Ok(());
    }
    e.record(Change::FstabEntry {
        found,
        want: want.clone(),
    });
    if !e.check {
        e.provider
            .write_owned_atomic(&path, text.as_bytes(), mode, (0, 0))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "proc /proc proc nosuid,nodev,noexec,hidepid=invisible,gid=995 0 0";

    #[test]
    fn the_proc_line_is_appended_once_and_every_other_line_kept() {
        let debian = "# /etc/fstab: static file system information.\n\
                      UUID=1234 / ext4 errors=remount-ro 0 1\n\
                      \n\
                      # swap was on /dev/vda5\n\
                      /swapfile none swap sw 0 0";
        let (text, found) = with_proc_line(debian, LINE);
        assert_eq!(found, Vec::<String>::new());
        assert_eq!(text, format!("{debian}\n{LINE}\n"));
        // Converged: the same text again, nothing found to replace but the node's own line.
        let (again, found) = with_proc_line(&text, LINE);
        assert_eq!(again, text);
        assert_eq!(found, vec![LINE.to_owned()]);
        assert_eq!(with_proc_line("", LINE).0, format!("{LINE}\n"));
    }

    #[test]
    fn another_proc_line_is_replaced_in_place_and_a_second_one_dropped() {
        let fstab = "UUID=1 / ext4 defaults 0 1\n\
                     proc /proc proc defaults,hidepid=2,gid=monitor 0 0\n\
                     /dev/vdb /srv xfs defaults 0 2\n\
                     \tproc\t/proc/\tproc\tdefaults\t0\t0\n\
                     # proc /proc proc defaults 0 0\n\
                     /dev/vdc /procs ext4 defaults 0 2\n";
        let (text, found) = with_proc_line(fstab, LINE);
        assert_eq!(
            found,
            vec![
                "proc /proc proc defaults,hidepid=2,gid=monitor 0 0".to_owned(),
                "proc\t/proc/\tproc\tdefaults\t0\t0".to_owned(),
            ]
        );
        assert_eq!(
            text,
            format!(
                "UUID=1 / ext4 defaults 0 1\n{LINE}\n/dev/vdb /srv xfs defaults 0 2\n\
                 # proc /proc proc defaults 0 0\n/dev/vdc /procs ext4 defaults 0 2\n"
            )
        );
    }
}
