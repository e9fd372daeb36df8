//! Model of the homes' file system as far as quotas go: `findmnt` for the mount holding the
//! homes, quota-tools' `setquota` and `repquota` for user quotas (`programs/findmnt.rs`,
//! `programs/quota_tools.rs`), in exactly the forms the provider runs.
//!
//! A sandbox says what its homes' file system offers in [`SIM_HOMES_QUOTA_FILE`]
//! ([`sim_set_homes_quota`]): `user_quota` (the default, when the file is absent: an ext4
//! mounted with journalled user quotas, so the dev node and the seeded histories enforce the
//! quotas their examples ask for) or `none` (an ext4 without quotas). The mount is the
//! sysroot itself. Limits are kept as `UID BSOFT BHARD ISOFT IHARD` lines in
//! [`SIM_USER_QUOTA_FILE`]; `repquota` reports them with the blocks and inodes of the homes
//! the uid has in the sysroot's passwd, walked without following symlinks. Nothing is refused
//! for being over a limit: the kernel's enforcement is proven on a real file system
//! (`crates/provider/tests/it/quota.rs`), not modelled.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use provider::{Provider, ProviderError};

use super::Outcome;
use super::cloudlinux::{load, save};

/// What the sandbox's homes' file system offers: `user_quota` or `none`.
pub const SIM_HOMES_QUOTA_FILE: &str = "/var/lib/layerone-sim/homes-quota";

/// The user quotas `setquota` set.
pub const SIM_USER_QUOTA_FILE: &str = "/var/lib/layerone-sim/user-quota";

const WITH_QUOTA: &str = "rw,relatime,usrjquota=aquota.user,jqfmt=vfsv1";
const WITHOUT_QUOTA: &str = "rw,relatime";

/// What a sandbox's homes' file system offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimHomesQuota {
    /// ext4 with user quotas on (the default).
    UserQuota,
    /// ext4 without quotas.
    None,
}

/// Makes the sandbox's homes' file system offer `what`.
pub fn sim_set_homes_quota(provider: &Provider, what: SimHomesQuota) -> Result<(), ProviderError> {
    let path = provider.sysconf(SIM_HOMES_QUOTA_FILE);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| ProviderError::io("create", parent, e))?;
    }
    let text = match what {
        SimHomesQuota::UserQuota => "user_quota\n",
        SimHomesQuota::None => "none\n",
    };
    provider::write_atomic(&path, text.as_bytes(), 0o600, None)
}

fn offered(provider: &Provider) -> Result<SimHomesQuota, Outcome> {
    let (_, lines) = load(provider, SIM_HOMES_QUOTA_FILE)?;
    match lines.first().map(String::as_str) {
        None | Some("user_quota") => Ok(SimHomesQuota::UserQuota),
        Some("none") => Ok(SimHomesQuota::None),
        Some(other) => Err(Outcome::fail(
            1,
            format!("layerone sim: {SIM_HOMES_QUOTA_FILE} holds {other:?}\n"),
        )),
    }
}

fn printed(text: String) -> Outcome {
    Outcome {
        status: 0,
        stdout: text,
        stderr: String::new(),
    }
}

/// The sysroot as `findmnt --raw` prints a mount point.
fn mount_point(provider: &Provider) -> String {
    let mut out = String::new();
    for c in provider.root().display().to_string().chars() {
        if c == ' ' || c == '\\' || c.is_control() {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// `findmnt --noheadings --raw --output TARGET,FSTYPE,OPTIONS --target PATH`, PATH in the
/// sysroot.
pub(crate) fn findmnt(provider: &Provider, args: &[String]) -> Outcome {
    let form = [
        "--noheadings",
        "--raw",
        "--output",
        "TARGET,FSTYPE,OPTIONS",
        "--target",
    ];
    let (Some(path), true) = (
        args.get(5),
        args.len() == 6 && args[..5].iter().zip(form).all(|(a, f)| a == f),
    ) else {
        return Outcome::fail(
            1,
            format!("layerone sim: findmnt {args:?} is not modelled\n"),
        );
    };
    if !Path::new(path).starts_with(provider.root()) || !Path::new(path).exists() {
        return Outcome::fail(1, "");
    }
    let options = match offered(provider) {
        Ok(SimHomesQuota::UserQuota) => WITH_QUOTA,
        Ok(SimHomesQuota::None) => WITHOUT_QUOTA,
        Err(outcome) => return outcome,
    };
    printed(format!("{} ext4 {options}\n", mount_point(provider)))
}

fn no_quota(program: &str, mount: &str) -> Outcome {
    Outcome::fail(
        1,
        format!("{program}: Mountpoint (or device) {mount} not found or has no quota enabled.\n"),
    )
}

fn quota_mount<'a>(provider: &Provider, program: &str, mount: &'a str) -> Result<&'a str, Outcome> {
    if Path::new(mount) != provider.root() || offered(provider)? != SimHomesQuota::UserQuota {
        return Err(no_quota(program, mount));
    }
    Ok(mount)
}

fn number(program: &str, s: &str) -> Result<u64, Outcome> {
    s.parse()
        .map_err(|_| Outcome::fail(1, format!("{program}: Bad number: {s}\n")))
}

/// `setquota -u UID BSOFT BHARD ISOFT IHARD MOUNT`.
pub(crate) fn setquota(provider: &Provider, args: &[String]) -> Outcome {
    match run_setquota(provider, args) {
        Ok(outcome) | Err(outcome) => outcome,
    }
}

fn run_setquota(provider: &Provider, args: &[String]) -> Result<Outcome, Outcome> {
    let [u, uid, limits @ .., mount] = args else {
        return Err(Outcome::fail(1, "setquota: Bad number of arguments.\n"));
    };
    if u != "-u" || limits.len() != 4 {
        return Err(Outcome::fail(
            1,
            format!("layerone sim: setquota {args:?} is not modelled\n"),
        ));
    }
    let uid: u32 = uid.parse().map_err(|_| {
        Outcome::fail(
            1,
            format!("layerone sim: setquota by name ({uid}) is not modelled\n"),
        )
    })?;
    quota_mount(provider, "setquota", mount)?;
    let mut values = [0u64; 4];
    for (slot, s) in values.iter_mut().zip(limits) {
        *slot = number("setquota", s)?;
    }
    let (path, mut lines) = load(provider, SIM_USER_QUOTA_FILE)?;
    lines.retain(|l| l.split(' ').next() != Some(uid.to_string().as_str()));
    if values.iter().any(|&v| v != 0) {
        lines.push(format!(
            "{uid} {} {} {} {}",
            values[0], values[1], values[2], values[3]
        ));
        lines.sort();
    }
    save(&path, &lines)?;
    Ok(Outcome::ok())
}

/// KiB allocated and inodes under `dir`, symlinks not followed, other devices not entered.
fn walk(dir: &Path, kib: &mut u64, inodes: &mut u64) {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return;
    };
    *kib += meta.blocks() / 2;
    *inodes += 1;
    if !meta.is_dir() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        walk(&entry.path(), kib, inodes);
    }
}

/// `repquota -u -n -p -O csv MOUNT`.
pub(crate) fn repquota(provider: &Provider, args: &[String]) -> Outcome {
    match run_repquota(provider, args) {
        Ok(outcome) | Err(outcome) => outcome,
    }
}

fn run_repquota(provider: &Provider, args: &[String]) -> Result<Outcome, Outcome> {
    let form = ["-u", "-n", "-p", "-O", "csv"];
    if args.len() != 6 || args[..5].iter().zip(form).any(|(a, f)| a != f) {
        return Err(Outcome::fail(
            1,
            format!("layerone sim: repquota {args:?} is not modelled\n"),
        ));
    }
    quota_mount(provider, "repquota", &args[5])?;
    let (_, lines) = load(provider, SIM_USER_QUOTA_FILE)?;
    let users = provider
        .passwd_entries()
        .map_err(|e| Outcome::fail(1, format!("layerone sim: {e}\n")))?;
    let mut out = String::from(
        "User,BlockStatus,FileStatus,BlockUsed,BlockSoftLimit,BlockHardLimit,BlockGrace,FileUsed,FileSoftLimit,FileHardLimit,FileGrace\n",
    );
    for line in &lines {
        let f: Vec<&str> = line.split(' ').collect();
        let [uid, bsoft, bhard, isoft, ihard] = f[..] else {
            return Err(Outcome::fail(
                1,
                format!("layerone sim: {SIM_USER_QUOTA_FILE}: bad line {line:?}\n"),
            ));
        };
        let (mut kib, mut inodes) = (0, 0);
        for user in users.iter().filter(|u| u.uid.to_string() == uid) {
            if user.home.is_absolute() && user.home != Path::new("/") {
                walk(&provider.sysconf(&user.home), &mut kib, &mut inodes);
            }
        }
        let status = |used: u64, hard: &str| {
            let hard: u64 = hard.parse().unwrap_or(0);
            if hard != 0 && used >= hard {
                "hard"
            } else {
                "ok"
            }
        };
        out.push_str(&format!(
            "#{uid},{},{},{kib},{bsoft},{bhard},0,{inodes},{isoft},{ihard},0\n",
            status(kib, bhard),
            status(inodes, ihard)
        ));
    }
    Ok(printed(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn setquota_then_repquota_reads_back_what_was_set_and_none_offers_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = crate::test_provider(provider::Platform::Debian, dir.path());
        std::fs::create_dir_all(p.sysconf("/home")).unwrap();
        let root = p.root().display().to_string();
        let shown = findmnt(
            &p,
            &args(&[
                "--noheadings",
                "--raw",
                "--output",
                "TARGET,FSTYPE,OPTIONS",
                "--target",
                &p.sysconf("/home").display().to_string(),
            ]),
        );
        assert_eq!(shown.status, 0, "{}", shown.stderr);
        let mount = provider::parse_findmnt(&shown.stdout).unwrap();
        assert_eq!(mount.target, p.root());
        assert_eq!(
            provider::mechanism_of_mount(&mount),
            provider::QuotaMechanism::UserQuota
        );
        let set = setquota(
            &p,
            &args(&["-u", "2000001", "20480", "20480", "100", "100", &root]),
        );
        assert_eq!(set.status, 0, "{}", set.stderr);
        let report = repquota(&p, &args(&["-u", "-n", "-p", "-O", "csv", &root]));
        let users = provider::parse_repquota_csv(&report.stdout).unwrap();
        assert_eq!(users.len(), 1);
        assert_eq!(
            (users[0].uid, users[0].hard_kib, users[0].hard_inodes),
            (2_000_001, 20480, 100)
        );
        let cleared = setquota(&p, &args(&["-u", "2000001", "0", "0", "0", "0", &root]));
        assert_eq!(cleared.status, 0);
        let report = repquota(&p, &args(&["-u", "-n", "-p", "-O", "csv", &root]));
        assert_eq!(provider::parse_repquota_csv(&report.stdout), Ok(vec![]));
        assert_eq!(
            setquota(&p, &args(&["-u", "1", "1", "1", "1", "1", "/elsewhere"])).status,
            1
        );

        sim_set_homes_quota(&p, SimHomesQuota::None).unwrap();
        let set = setquota(&p, &args(&["-u", "2000001", "1", "1", "0", "0", &root]));
        assert_eq!(set.status, 1);
        assert!(
            set.stderr.contains("has no quota enabled"),
            "{}",
            set.stderr
        );
    }
}
