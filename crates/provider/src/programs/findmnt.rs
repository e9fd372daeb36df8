//! `findmnt` (util-linux): the mount that holds a path, with its type and options, read from
//! the kernel's mount table.
//!
//! The node runs two forms. `findmnt --noheadings --raw --output TARGET,FSTYPE,OPTIONS
//! --target PATH`: one line, three fields separated by a space, each with a space, a
//! backslash or a non-printable byte written `\xHH` (`--raw`). It tells which quota mechanism
//! the homes' file system offers (`crate::home_quota`). The same with `--mountpoint PATH`
//! instead of `--target`: a line for each mount stacked on that mount point, the one on top
//! (the one processes see) last; it tells whether `/proc` hides processes (`programs/mount.rs`).

use std::path::{Path, PathBuf};

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::program::Program;
use crate::provider::Provider;

/// The mount holding a path, as `findmnt --target` prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MountShown {
    /// The mount point, as this machine sees it.
    pub target: PathBuf,
    /// The file system type (`btrfs`, `ext4`, `xfs`...).
    pub fstype: String,
    /// The mount options, in the kernel's order.
    pub options: Vec<String>,
}

pub(crate) fn findmnt_argv(path: &Path) -> Argv {
    let mut argv = Argv::new();
    argv.arg("--noheadings")
        .arg("--raw")
        .arg("--output")
        .arg("TARGET,FSTYPE,OPTIONS")
        .arg("--target")
        .arg(path);
    argv
}

pub(crate) fn findmnt_mountpoint_argv(path: &Path) -> Argv {
    let mut argv = Argv::new();
    argv.arg("--noheadings")
        .arg("--raw")
        .arg("--output")
        .arg("TARGET,FSTYPE,OPTIONS")
        .arg("--mountpoint")
        .arg(path);
    argv
}

/// `\xHH` escapes of `--raw` output undone.
fn unescape(field: &str) -> Option<String> {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            let hex = field.get(i + 2..i + 4)?;
            if bytes.get(i + 1) != Some(&b'x') {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The first line of `findmnt --noheadings --raw --output TARGET,FSTYPE,OPTIONS`.
pub fn parse_findmnt(text: &str) -> Option<MountShown> {
    let line = text.lines().next()?;
    let mut fields = line.split(' ');
    let target = unescape(fields.next()?)?;
    let fstype = unescape(fields.next()?)?;
    let options = unescape(fields.next()?)?;
    if fields.next().is_some() || !target.starts_with('/') || fstype.is_empty() {
        return None;
    }
    Some(MountShown {
        target: PathBuf::from(target),
        fstype,
        options: options.split(',').map(str::to_owned).collect(),
    })
}

impl Provider {
    /// The mount holding the system path `path` (mapped under the root).
    pub fn mount_of(&self, path: &Path) -> Result<MountShown, ProviderError> {
        let argv = findmnt_argv(&self.sysconf(path));
        let out = self.execute(
            Program::Findmnt,
            &argv,
            None,
            Program::Findmnt.default_timeout(),
        )?;
        let text = String::from_utf8_lossy(&out.stdout);
        parse_findmnt(&text).ok_or_else(|| ProviderError::Failed {
            program: Program::Findmnt,
            status: 0,
            stderr: format!("findmnt: unexpected output {text:?}"),
        })
    }

    /// The mount on top of the mount point `path` (a system path, mapped under the root), the
    /// one processes see there; `None` when nothing is mounted there (findmnt exits 1).
    pub fn mount_at(&self, path: &Path) -> Result<Option<MountShown>, ProviderError> {
        let argv = findmnt_mountpoint_argv(&self.sysconf(path));
        let out = match self.execute(
            Program::Findmnt,
            &argv,
            None,
            Program::Findmnt.default_timeout(),
        ) {
            Ok(out) => out,
            Err(ProviderError::Failed { status: 1, .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines()
            .last()
            .and_then(parse_findmnt)
            .map(Some)
            .ok_or_else(|| ProviderError::Failed {
                program: Program::Findmnt,
                status: 0,
                stderr: format!("findmnt: unexpected output {text:?}"),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findmnt_argv_is_the_documented_form() {
        assert_eq!(
            findmnt_argv(Path::new("/home")).for_audit(),
            [
                "--noheadings",
                "--raw",
                "--output",
                "TARGET,FSTYPE,OPTIONS",
                "--target",
                "/home"
            ]
        );
    }

    #[test]
    fn findmnt_mountpoint_argv_is_the_documented_form() {
        assert_eq!(
            findmnt_mountpoint_argv(Path::new("/proc")).for_audit(),
            [
                "--noheadings",
                "--raw",
                "--output",
                "TARGET,FSTYPE,OPTIONS",
                "--mountpoint",
                "/proc"
            ]
        );
    }

    #[test]
    fn findmnt_raw_lines_are_read_with_their_escapes() {
        assert_eq!(
            parse_findmnt(
                "/srv/my\\x20homes btrfs rw,relatime,space_cache=v2,subvolid=5,subvol=/\n"
            ),
            Some(MountShown {
                target: PathBuf::from("/srv/my homes"),
                fstype: "btrfs".into(),
                options: ["rw", "relatime", "space_cache=v2", "subvolid=5", "subvol=/"]
                    .map(String::from)
                    .to_vec(),
            })
        );
        assert_eq!(
            parse_findmnt("/ ext4 rw,relatime,usrjquota=aquota.user,jqfmt=vfsv1\n")
                .map(|m| m.options.len()),
            Some(4)
        );
        assert_eq!(parse_findmnt(""), None);
        assert_eq!(parse_findmnt("relative ext4 rw\n"), None);
        assert_eq!(parse_findmnt("/ ext4 rw extra\n"), None);
        assert_eq!(parse_findmnt("/bad\\q1 ext4 rw\n"), None);
    }
}
