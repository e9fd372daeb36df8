//! A home's quota on a real btrfs: a loop-mounted btrfs image is the sysroot's `/home`, the
//! real executor runs the real `findmnt`, `btrfs` and shadow-utils (`--prefix`) against it,
//! and the kernel stops a write past the tenant qgroup's limit with `EDQUOT`, in the home and
//! in the subvolumes the tenant made in it once the scan has enclosed them.
//!
//! User quotas (ext4, xfs) cannot be shown here: this machine's kernel lacks the quota
//! format quota-tools need. Their argv and output forms are the unit tests of
//! `programs/quota_tools.rs`, and the Sim's model (`crates/simulator/src/quota.rs`) parses
//! the same argv.

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use provider::{
    Platform, Program, Provider, ProviderConfig, QuotaMechanism, RealExecutor, UserAdd,
};

use crate::common::{is_root, mode_of};

const MIB: u64 = 1024 * 1024;

/// Runs a setup program of the test (not one the node runs), failing the test when it fails.
#[allow(clippy::disallowed_methods)] // The test's own loop device and mount, not the node's.
fn run(program: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A btrfs image attached to a loop device and mounted; unmounted and detached when dropped,
/// whatever the test did.
struct LoopBtrfs {
    device: String,
    mount: PathBuf,
}

impl LoopBtrfs {
    fn new(image: &Path, mount: &Path) -> LoopBtrfs {
        std::fs::File::create(image)
            .and_then(|f| f.set_len(300 * MIB))
            .expect("create the image");
        run("mkfs.btrfs", &["-q", &image.display().to_string()]);
        let device = run(
            "losetup",
            &["--find", "--show", &image.display().to_string()],
        );
        let guard = LoopBtrfs {
            device,
            mount: mount.to_owned(),
        };
        std::fs::create_dir_all(mount).unwrap();
        run("mount", &[&guard.device, &mount.display().to_string()]);
        guard
    }
}

impl Drop for LoopBtrfs {
    #[allow(clippy::disallowed_methods)] // Cleanup of the test's own mount; errors ignored.
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(&self.mount)
            .status();
        let _ = std::process::Command::new("losetup")
            .args(["-d", &self.device])
            .status();
    }
}

#[test]
fn a_btrfs_home_is_a_subvolume_whose_qgroup_limit_stops_writes_with_edquot() {
    assert!(
        is_root(),
        "this test mounts a loop btrfs and runs the real btrfs and shadow-utils: it needs root, as CI has"
    );
    for program in [Program::Btrfs, Program::Findmnt, Program::Useradd] {
        let path = program.path(Platform::Debian).unwrap();
        assert!(
            Path::new(path).exists(),
            "{path} is missing: scripts/test installs btrfs-progs"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let _mounted = LoopBtrfs::new(&dir.path().join("homes.img"), &root.join("home"));
    let provider = Provider::new(ProviderConfig {
        platform: Platform::Debian,
        root: root.clone(),
        executor: Arc::new(RealExecutor),
        machine: Arc::new(provider::RealMachine),
        audit_dir: dir.path().join("audit"),
    });
    testkit::seed_accounts(&provider).unwrap();

    let fs = provider.homes_fs().unwrap();
    assert_eq!(fs.mechanism, QuotaMechanism::BtrfsQgroup, "{fs:?}");
    assert_eq!(fs.mount, root.join("home"));

    let home = Path::new("/home/shop1");
    assert!(
        provider.prepare_home(&fs, home).unwrap(),
        "a new home is made a subvolume"
    );
    // A retry after a crash between the subvolume and the user finds it and goes on.
    assert!(!provider.prepare_home(&fs, home).unwrap());
    assert!(provider.btrfs_is_subvolume(home).unwrap());
    provider.groupadd("shop1").unwrap();
    provider
        .useradd(&UserAdd {
            name: "shop1",
            group: "shop1",
            home,
            shell: "/bin/bash",
            comment: "layerone-0123456789abcdef0123456789abcdef",
            password_hash: None,
        })
        .unwrap();
    let user = provider.lookup_user("shop1").unwrap().unwrap();
    let meta = std::fs::metadata(provider.sysconf(home)).unwrap();
    assert_eq!(meta.uid(), user.uid, "the subvolume is the tenant's");
    assert_eq!(meta.gid(), provider.home_group(user.gid).unwrap());
    assert_eq!(mode_of(&provider.sysconf(home)), 0o750);

    // A plain directory on the same btrfs cannot be limited on its own.
    std::fs::create_dir(root.join("home/plain")).unwrap();
    assert!(
        !provider
            .home_is_limitable(&fs, Path::new("/home/plain"))
            .unwrap()
    );
    assert!(provider.home_is_limitable(&fs, home).unwrap());

    provider
        .set_home_quota(&fs, home, user.uid, 20 * MIB, 0)
        .unwrap();
    let set = provider.home_quota(&fs, home, user.uid).unwrap().unwrap();
    assert_eq!(set.limit_bytes, Some(20 * MIB));
    assert_eq!((set.limit_inodes, set.used_inodes), (None, None));

    // Root's writes count too: the qgroup limits the subvolume, whoever writes.
    let mut file = std::fs::File::create(provider.sysconf(home).join("fill")).unwrap();
    let chunk = vec![0x5a_u8; MIB as usize];
    let mut written = 0u64;
    let err = loop {
        match file.write_all(&chunk).and_then(|()| file.sync_data()) {
            Ok(()) => written += MIB,
            Err(e) => break e,
        }
        assert!(written <= 30 * MIB, "30 MiB written past a 20 MiB limit");
    };
    assert_eq!(err.raw_os_error(), Some(libc_edquot()), "{err}");
    assert!(written <= 20 * MIB, "{written} bytes written");
    drop(file);
    rustix::fs::sync();

    let used = provider.home_quota(&fs, home, user.uid).unwrap().unwrap();
    assert_eq!(used.limit_bytes, Some(20 * MIB));
    assert!(
        used.used_bytes >= 18 * MIB && used.used_bytes <= 20 * MIB,
        "used {} bytes",
        used.used_bytes
    );

    // The tenant makes subvolumes of its own, unprivileged: one nested two directories down
    // (and one inside that), and a snapshot of its home. Each starts outside the tenant's
    // qgroup, so until the scan a write into one escapes the quota.
    std::fs::remove_file(provider.sysconf(home).join("fill")).unwrap();
    rustix::fs::sync();
    as_uid(
        &user,
        &[
            "mkdir",
            "-p",
            &provider.sysconf(home).join("a/b").display().to_string(),
        ],
    );
    let nested = provider.sysconf(home).join("a/b/nested");
    let inner = nested.join("inner");
    let snapshot = provider.sysconf(home).join("snap");
    as_uid(
        &user,
        &[
            "btrfs",
            "subvolume",
            "create",
            &nested.display().to_string(),
        ],
    );
    as_uid(
        &user,
        &["btrfs", "subvolume", "create", &inner.display().to_string()],
    );
    as_uid(
        &user,
        &[
            "btrfs",
            "subvolume",
            "snapshot",
            &provider.sysconf(home).display().to_string(),
            &snapshot.display().to_string(),
        ],
    );
    assert_eq!(
        fill(&user, &inner.join("escape"), 30),
        (30 * MIB, None),
        "before the scan a new subvolume is outside the quota"
    );
    std::fs::remove_file(inner.join("escape")).unwrap();
    rustix::fs::sync();

    let enclosed = provider.enclose_subvolumes(&fs).unwrap();
    assert_eq!(enclosed.len(), 3, "{enclosed:?}");
    assert!(
        enclosed
            .iter()
            .all(|(_, g)| g == &format!("1/{}", user.uid))
    );
    assert!(
        provider.enclose_subvolumes(&fs).unwrap().is_empty(),
        "a second scan finds nothing new"
    );
    for (dir, name) in [(&inner, "inner"), (&snapshot, "snapshot")] {
        let (written, err) = fill(&user, &dir.join("fill"), 30);
        assert_eq!(err, Some(libc_edquot()), "{name}: {written} bytes written");
        assert!(written <= 20 * MIB, "{name}: {written} bytes written");
        rustix::fs::sync();
        let used = provider.home_quota(&fs, home, user.uid).unwrap().unwrap();
        assert!(
            used.used_bytes >= 15 * MIB && used.used_bytes <= 20 * MIB + MIB,
            "{name}: the tenant's qgroup counts it: {} bytes",
            used.used_bytes
        );
        std::fs::remove_file(dir.join("fill")).unwrap();
        rustix::fs::sync();
    }

    // Unlimited again, then the removal deletes the subvolume with what it holds.
    provider.set_home_quota(&fs, home, user.uid, 0, 0).unwrap();
    assert_eq!(
        provider
            .home_quota(&fs, home, user.uid)
            .unwrap()
            .unwrap()
            .limit_bytes,
        None
    );
    // Filled to the limit again first: a subvolume at its limit cannot be deleted until
    // the limit is lifted.
    provider
        .set_home_quota(&fs, home, user.uid, 20 * MIB, 0)
        .unwrap();
    let (_, err) = fill(&user, &nested.join("fill"), 30);
    assert_eq!(err, Some(libc_edquot()));
    provider.release_home_quota(&fs, home, user.uid).unwrap();
    assert!(!provider.sysconf(home).exists(), "the subvolume is gone");
    let left = provider.btrfs_subvolumes(Path::new("/home")).unwrap();
    assert!(left.is_empty(), "subvolumes left: {left:?}");
    let groups = provider.btrfs_qgroups(Path::new("/home")).unwrap();
    assert!(
        !groups.iter().any(|q| q.qgroup == format!("1/{}", user.uid)),
        "the tenant's qgroup is gone: {groups:?}"
    );
    provider.release_home_quota(&fs, home, user.uid).unwrap();
    provider.userdel("shop1", false).unwrap();
    assert!(provider.lookup_user("shop1").unwrap().is_none());

    // With quotas turned off on the file system (by hand), a home and what it holds still go.
    let home2 = Path::new("/home/shop2");
    assert!(provider.prepare_home(&fs, home2).unwrap());
    provider
        .btrfs_subvolume_create(&home2.join("inner"))
        .unwrap();
    run(
        "btrfs",
        &["quota", "disable", &root.join("home").display().to_string()],
    );
    provider.release_home_quota(&fs, home2, 4242).unwrap();
    assert!(!provider.sysconf(home2).exists());
    assert!(
        provider
            .btrfs_subvolumes(Path::new("/home"))
            .unwrap()
            .is_empty()
    );
}

/// Runs `argv` as the tenant's uid and gid (the test's own setup, as the tenant would).
fn as_uid(user: &provider::PasswdEntry, argv: &[&str]) -> String {
    let uid = format!("--reuid={}", user.uid);
    let gid = format!("--regid={}", user.gid);
    let mut args = vec![uid.as_str(), gid.as_str(), "--clear-groups"];
    args.extend_from_slice(argv);
    run("setpriv", &args)
}

/// Writes up to `mib` MiB of data to `path` as the tenant, a MiB and a sync at a time;
/// returns how many bytes were written and the errno that stopped it, if one did.
fn fill(user: &provider::PasswdEntry, path: &Path, mib: u64) -> (u64, Option<i32>) {
    #[allow(clippy::disallowed_methods)] // The tenant's own write, as the tenant would.
    let out = std::process::Command::new("setpriv")
        .arg(format!("--reuid={}", user.uid))
        .arg(format!("--regid={}", user.gid))
        .arg("--clear-groups")
        .arg("dd")
        .arg("if=/dev/zero")
        .arg(format!("of={}", path.display()))
        .arg("bs=1M")
        .arg(format!("count={mib}"))
        .arg("oflag=dsync")
        .output()
        .unwrap();
    let written = std::fs::metadata(path).map_or(0, |m| m.len());
    let err = (!out.status.success()).then(|| {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("Disk quota exceeded"), "dd: {stderr}");
        libc_edquot()
    });
    (written, err)
}

/// `EDQUOT` on Linux.
fn libc_edquot() -> i32 {
    rustix::io::Errno::DQUOT.raw_os_error()
}
