//! The real `layerone-tenant`, started as root through the provider's audited `execute`,
//! dropping to real uids in a temporary sysroot.
//!
//! These tests need root (the drop is the thing under test); the test script runs the suite
//! as root. They fail, never skip, without it.
#![allow(clippy::disallowed_methods)] // A few tests start the worker binary directly with hostile stdin.

use std::collections::{BTreeSet, HashSet};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use provider::{Platform, Provider, ProviderError, TenantIsolation};
use tenant::protocol::{MAX_REQUEST_BYTES, MAX_WRITE_BYTES, limits};
use tenant::wire::decode_reply;
use tenant::{
    Bound, DirMode, ErrorCode, FileContent, FileMode, Identity, Reply, Request, TenantResult,
};
use testkit::{audit_records, sim_provider};

const WORKER: &str = env!("CARGO_BIN_EXE_layerone-tenant");
const ALICE: u32 = 64_101;
const BOB: u32 = 64_102;
const EXTRA_GROUP: u32 = 64_150;

struct Fixture {
    dir: tempfile::TempDir,
    provider: Provider,
    alice: Identity,
    bob: Identity,
}

fn require_root() {
    assert!(
        rustix::process::geteuid().is_root(),
        "the tenant worker tests drop privileges and must run as root (scripts/test runs them as root)"
    );
}

fn fixture(platform: Platform) -> Fixture {
    require_root();
    let dir = tempfile::tempdir().unwrap();
    // Traversable by the tenants, like /home is.
    chmod(dir.path(), 0o755);
    let provider = sim_provider(platform, dir.path(), vec![]).with_tenant_worker(WORKER);
    for (name, uid) in [("alice", ALICE), ("bob", BOB)] {
        let home = provider.sysconf(format!("/home/{name}"));
        std::fs::create_dir_all(&home).unwrap();
        chmod(&dir.path().join("root"), 0o755);
        chmod(&dir.path().join("root/home"), 0o755);
        std::os::unix::fs::chown(&home, Some(uid), Some(uid)).unwrap();
        chmod(&home, 0o750);
    }
    let alice = Identity::new(
        ALICE,
        ALICE,
        vec![ALICE, EXTRA_GROUP],
        PathBuf::from("/home/alice"),
    )
    .unwrap();
    let bob = Identity::new(BOB, BOB, vec![], PathBuf::from("/home/bob")).unwrap();
    Fixture {
        dir,
        provider,
        alice,
        bob,
    }
}

impl Fixture {
    fn home(&self, who: &Identity) -> PathBuf {
        self.provider.sysconf(&who.home)
    }

    /// A world-writable directory outside every home: if anything followed a symlink to
    /// it, the write would succeed, so its staying empty proves the symlink was refused.
    fn decoy(&self) -> PathBuf {
        let path = self.dir.path().join("decoy");
        std::fs::create_dir_all(&path).unwrap();
        chmod(&path, 0o777);
        path
    }
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn ensure_dirs(dirs: &[&str], mode: DirMode) -> Request {
    Request::EnsureDirs {
        dirs: dirs.iter().map(|d| d.parse().unwrap()).collect(),
        mode,
    }
}

fn write_file(path: &str, content: &[u8], mode: FileMode) -> Request {
    Request::WriteFile {
        path: path.parse().unwrap(),
        content: FileContent::new(content.to_vec()).unwrap(),
        mode,
    }
}

fn whoami(f: &Fixture, who: &Identity) -> tenant::Whoami {
    match f.provider.as_tenant(who, &Request::Whoami {}).unwrap() {
        TenantResult::Whoami(report) => report,
        other => panic!("{other:?}"),
    }
}

fn code(result: Result<TenantResult, ProviderError>) -> &'static str {
    result.expect_err("the operation must fail").code()
}

fn tree(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    fn walk(base: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            out.insert(path.strip_prefix(base).unwrap().display().to_string());
            if entry.file_type().unwrap().is_dir() {
                walk(base, &path, out);
            }
        }
    }
    walk(dir, dir, &mut out);
    out
}

#[test]
fn worker_runs_as_exactly_the_tenant_with_a_clean_process() {
    let f = fixture(Platform::Debian);
    assert_eq!(
        f.provider.tenant_isolation(),
        TenantIsolation::Worker {
            path: PathBuf::from(WORKER)
        }
    );
    // A descriptor without close-on-exec, which the worker inherits: it must close it.
    let leaked = rustix::io::dup(std::io::stdin()).unwrap();
    let leaked_fd = std::os::fd::AsRawFd::as_raw_fd(&leaked);
    assert!(leaked_fd > 2);
    assert!(
        std::env::vars_os().count() > 0,
        "the test needs an inherited environment"
    );

    let me = whoami(&f, &f.alice);
    drop(leaked);
    assert_eq!(me.uid, [ALICE; 3], "real, effective and saved uid");
    assert_eq!(me.gid, [ALICE; 3], "real, effective and saved gid");
    assert_eq!(me.groups, vec![ALICE, EXTRA_GROUP]);
    assert_eq!(me.no_new_privs, 1);
    assert_eq!(me.dumpable, 0);
    assert_eq!((me.cap_effective, me.cap_permitted), (0, 0));
    assert!(me.regain_root_refused, "setuid(0) must fail");
    assert_eq!(me.env_count, 0);
    assert_eq!(me.cwd, "/");
    assert_eq!(me.open_fds, vec![0, 1, 2], "no descriptor above 2");
    let rlimits: Vec<(String, u64, u64)> = [
        ("nofile", limits::NOFILE),
        ("fsize", limits::FSIZE),
        ("nproc", limits::NPROC),
        ("cpu", limits::CPU),
        ("as", limits::AS),
        ("core", limits::CORE),
    ]
    .iter()
    .map(|&(name, value)| (name.to_owned(), value, value))
    .collect();
    assert_eq!(me.rlimits, rlimits);

    let bob = whoami(&f, &f.bob);
    assert_eq!((bob.uid, bob.gid), ([BOB; 3], [BOB; 3]));
    assert!(bob.groups.is_empty());

    // Through the one audited execute, for real.
    let records = audit_records(&f.provider).unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0].program, "layerone-tenant");
    assert_eq!(records[0].path, WORKER);
    assert_eq!(records[0].backend, "real");
    assert_eq!(records[0].status, Some(0));
    let home = f.home(&f.alice).display().to_string();
    let groups = format!("{ALICE},{EXTRA_GROUP}");
    let alice = ALICE.to_string();
    assert_eq!(
        records[0].args,
        [
            "--uid", &alice, "--gid", &alice, "--groups", &groups, "--home", &home
        ]
    );
}

#[test]
fn work_is_done_as_the_tenant_beneath_its_home() {
    let f = fixture(Platform::Debian);
    let result = f
        .provider
        .as_tenant(
            &f.alice,
            &ensure_dirs(
                &["web/shop.example.com/public_html", "logs"],
                DirMode::Public,
            ),
        )
        .unwrap();
    assert_eq!(
        result,
        TenantResult::EnsureDirs {
            created: 2,
            existing: 0
        }
    );
    let home = f.home(&f.alice);
    for dir in [
        "web",
        "web/shop.example.com",
        "web/shop.example.com/public_html",
        "logs",
    ] {
        let meta = std::fs::metadata(home.join(dir)).unwrap();
        assert_eq!((meta.uid(), meta.gid()), (ALICE, ALICE), "{dir}");
        assert_eq!(meta.mode() & 0o7777, 0o755, "{dir}");
    }
    // Idempotent.
    let again = f
        .provider
        .as_tenant(&f.alice, &ensure_dirs(&["logs"], DirMode::Private))
        .unwrap();
    assert_eq!(
        again,
        TenantResult::EnsureDirs {
            created: 0,
            existing: 1
        }
    );

    let content = vec![7u8; MAX_WRITE_BYTES];
    let result = f
        .provider
        .as_tenant(
            &f.alice,
            &write_file("web/big.bin", &content, FileMode::Private),
        )
        .unwrap();
    assert_eq!(
        result,
        TenantResult::WriteFile {
            bytes: MAX_WRITE_BYTES as u64
        }
    );
    let meta = std::fs::metadata(home.join("web/big.bin")).unwrap();
    assert_eq!(
        (meta.uid(), meta.gid(), meta.mode() & 0o7777),
        (ALICE, ALICE, 0o600)
    );
    assert_eq!(std::fs::read(home.join("web/big.bin")).unwrap(), content);
    // No temporary file is left behind.
    assert!(
        tree(&home).iter().all(|p| !p.contains(".layerone-tmp")),
        "{:?}",
        tree(&home)
    );
}

#[test]
fn worker_cannot_write_root_owned_files_or_directories_in_the_home() {
    let f = fixture(Platform::Debian);
    let home = f.home(&f.alice);
    let sys = home.join("sys");
    std::fs::create_dir(&sys).unwrap();
    chmod(&sys, 0o755);
    std::fs::write(sys.join("config"), b"root's\n").unwrap();
    chmod(&sys.join("config"), 0o644);

    let before = tree(&sys);
    assert_eq!(
        code(f.provider.as_tenant(
            &f.alice,
            &write_file("sys/config", b"mine", FileMode::Public)
        )),
        "tenant_permission_denied"
    );
    assert_eq!(
        code(
            f.provider
                .as_tenant(&f.alice, &ensure_dirs(&["sys/new"], DirMode::Public))
        ),
        "tenant_permission_denied"
    );
    assert_eq!(std::fs::read(sys.join("config")).unwrap(), b"root's\n");
    assert_eq!(tree(&sys), before);
    assert_eq!(std::fs::metadata(sys.join("config")).unwrap().uid(), 0);
}

#[test]
fn symlinks_to_etc_or_another_tenant_are_refused_and_nothing_is_written_outside() {
    let f = fixture(Platform::Debian);
    let home = f.home(&f.alice);
    let bob_home = f.home(&f.bob);
    let decoy = f.decoy();
    let marker = format!("layerone-tenant-test-{}", std::process::id());
    let bob_before = tree(&bob_home);

    for target in [Path::new("/etc"), bob_home.as_path(), decoy.as_path()] {
        let link = home.join("web");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(target, &link).unwrap();
        std::os::unix::fs::lchown(&link, Some(ALICE), Some(ALICE)).unwrap();

        let dirs = ensure_dirs(&[&format!("web/{marker}/public_html")], DirMode::Public);
        assert_eq!(
            code(f.provider.as_tenant(&f.alice, &dirs)),
            "tenant_path_unsafe",
            "{}",
            target.display()
        );
        let file = write_file(&format!("web/{marker}"), b"pwned", FileMode::Public);
        assert_eq!(
            code(f.provider.as_tenant(&f.alice, &file)),
            "tenant_path_unsafe",
            "{}",
            target.display()
        );
        // A symlink deeper in the path, too.
        std::fs::create_dir_all(home.join("deep/er")).unwrap();
        let deep_link = home.join("deep/er/link");
        let _ = std::fs::remove_file(&deep_link);
        std::os::unix::fs::symlink(target, &deep_link).unwrap();
        let deep = ensure_dirs(&[&format!("deep/er/link/{marker}")], DirMode::Public);
        assert_eq!(
            code(f.provider.as_tenant(&f.alice, &deep)),
            "tenant_path_unsafe"
        );
        // A symlink in the middle of a parent path, resolved in one openat2 call.
        if target == decoy.as_path() {
            std::fs::create_dir_all(decoy.join("sub")).unwrap();
            chmod(&decoy.join("sub"), 0o777);
        }
        let middle = write_file(
            &format!("deep/er/link/sub/{marker}"),
            b"pwned",
            FileMode::Public,
        );
        assert_eq!(
            code(f.provider.as_tenant(&f.alice, &middle)),
            "tenant_path_unsafe"
        );
        if target == decoy.as_path() {
            assert!(tree(&decoy.join("sub")).is_empty());
            std::fs::remove_dir(decoy.join("sub")).unwrap();
        }

        assert!(!target.join(&marker).exists(), "{}", target.display());
    }
    assert!(tree(&decoy).is_empty(), "{:?}", tree(&decoy));
    assert_eq!(tree(&bob_home), bob_before);

    // A symlink at the final name is replaced by the new file, never written through.
    let victim = decoy.join("victim");
    std::fs::write(&victim, b"victim\n").unwrap();
    chmod(&victim, 0o666);
    let link = home.join("index.html");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    f.provider
        .as_tenant(
            &f.alice,
            &write_file("index.html", b"<h1>alice</h1>\n", FileMode::Public),
        )
        .unwrap();
    assert_eq!(std::fs::read(&victim).unwrap(), b"victim\n");
    let meta = std::fs::symlink_metadata(&link).unwrap();
    assert!(meta.file_type().is_file());
    assert_eq!(meta.uid(), ALICE);
    assert_eq!(std::fs::read(&link).unwrap(), b"<h1>alice</h1>\n");

    // The next operation for another tenant is unaffected.
    f.provider
        .as_tenant(
            &f.bob,
            &ensure_dirs(&["web/b.example/public_html"], DirMode::Public),
        )
        .unwrap();
    assert!(bob_home.join("web/b.example/public_html").is_dir());
}

#[test]
fn a_home_that_is_a_symlink_or_not_the_tenants_is_refused() {
    let f = fixture(Platform::Debian);
    // Bob's identity pointed at Alice's home: the worker runs as Bob and refuses a home it
    // does not own (and could not enter anyway).
    let confused = Identity::new(BOB, BOB, vec![], PathBuf::from("/home/alice")).unwrap();
    assert_eq!(
        code(
            f.provider
                .as_tenant(&confused, &ensure_dirs(&["x"], DirMode::Public))
        ),
        "tenant_home_invalid"
    );
    // A home replaced by a symlink to /etc.
    let carol_home = f.provider.sysconf("/home/carol");
    std::os::unix::fs::symlink("/etc", &carol_home).unwrap();
    let carol = Identity::new(64_103, 64_103, vec![], PathBuf::from("/home/carol")).unwrap();
    assert_eq!(
        code(
            f.provider
                .as_tenant(&carol, &ensure_dirs(&["x"], DirMode::Public))
        ),
        "tenant_home_invalid"
    );
    assert!(!Path::new("/etc/x").exists());
}

#[test]
fn root_or_a_malformed_home_is_never_a_tenant() {
    let f = fixture(Platform::Debian);
    for (uid, gid, groups) in [
        (0, ALICE, vec![]),
        (ALICE, 0, vec![]),
        (ALICE, ALICE, vec![0]),
    ] {
        // The fields are public, so the provider checks again whatever the caller built.
        let root = Identity {
            uid,
            gid,
            groups,
            home: PathBuf::from("/home/alice"),
        };
        assert_eq!(
            code(f.provider.as_tenant(&root, &Request::Whoami {})),
            "tenant_identity_invalid"
        );
    }
    for home in ["home/alice", "/home/../etc", "/"] {
        let odd = Identity {
            uid: ALICE,
            gid: ALICE,
            groups: vec![],
            home: PathBuf::from(home),
        };
        assert_eq!(
            code(f.provider.as_tenant(&odd, &Request::Whoami {})),
            "tenant_identity_invalid",
            "{home}"
        );
    }
    assert!(
        audit_records(&f.provider).unwrap().is_empty(),
        "nothing was started"
    );
}

/// Runs the worker binary directly, as root, with `stdin`; returns its reply and stderr.
fn run_worker(args: &[&str], stdin: Vec<u8>, as_uid: Option<u32>) -> (Reply, String) {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(WORKER);
    cmd.args(args)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(uid) = as_uid {
        cmd.uid(uid).gid(uid);
    }
    let mut child = cmd.spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    // The worker stops reading at its bound; a broken pipe is expected then.
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&stdin);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "exit {:?}", out.status);
    let reply = decode_reply(&out.stdout).expect("one valid reply");
    (reply, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn hostile_stdin_is_a_typed_error_never_a_panic() {
    let f = fixture(Platform::Debian);
    let home = f.home(&f.alice).display().to_string();
    let groups = ALICE.to_string();
    let alice = ALICE.to_string();
    let args = [
        "--uid", &alice, "--gid", &alice, "--groups", &groups, "--home", &home,
    ];
    let cases: Vec<(&str, Vec<u8>, ErrorCode)> = vec![
        (
            "oversized",
            vec![b' '; MAX_REQUEST_BYTES + 4096],
            ErrorCode::RequestTooLarge,
        ),
        ("empty", Vec::new(), ErrorCode::RequestInvalid),
        ("nul bytes", vec![0; 64], ErrorCode::RequestInvalid),
        (
            "not utf-8",
            vec![0xff, 0xfe, 0xfd],
            ErrorCode::RequestInvalid,
        ),
        (
            "deep nesting",
            "[".repeat(200_000).into_bytes(),
            ErrorCode::RequestInvalid,
        ),
        (
            "unknown op",
            br#"{"op":"rm_rf"}"#.to_vec(),
            ErrorCode::RequestInvalid,
        ),
        (
            "unknown field",
            br#"{"op":"whoami","as":"root"}"#.to_vec(),
            ErrorCode::RequestInvalid,
        ),
        (
            "dot-dot",
            br#"{"op":"ensure_dirs","dirs":["../bob"],"mode":"public"}"#.to_vec(),
            ErrorCode::RequestInvalid,
        ),
        (
            "absolute",
            br#"{"op":"ensure_dirs","dirs":["/etc/x"],"mode":"public"}"#.to_vec(),
            ErrorCode::RequestInvalid,
        ),
        (
            "newline",
            br#"{"op":"write_file","path":"a\nb","content":"","mode":"public"}"#.to_vec(),
            ErrorCode::RequestInvalid,
        ),
        (
            "numeric mode",
            br#"{"op":"ensure_dirs","dirs":["a"],"mode":4095}"#.to_vec(),
            ErrorCode::RequestInvalid,
        ),
        (
            "bad base64",
            br#"{"op":"write_file","path":"a","content":"$$$","mode":"public"}"#.to_vec(),
            ErrorCode::RequestInvalid,
        ),
        (
            "two documents",
            br#"{"op":"whoami"} {"op":"whoami"}"#.to_vec(),
            ErrorCode::RequestInvalid,
        ),
    ];
    for (name, stdin, expected) in cases {
        let (reply, stderr) = run_worker(&args, stdin, None);
        let Reply::Error(error) = reply else {
            panic!("{name}: {reply:?}")
        };
        assert_eq!(error.code, expected, "{name}: {}", error.message);
        assert!(stderr.is_empty(), "{name}: {stderr}");
    }
    assert!(tree(&f.home(&f.alice)).is_empty(), "nothing was created");

    // Hostile arguments, and a worker not started as root (it cannot drop, so it refuses).
    let (reply, _) = run_worker(&[], b"{\"op\":\"whoami\"}".to_vec(), None);
    assert!(matches!(reply, Reply::Error(e) if e.code == ErrorCode::IdentityInvalid));
    let (reply, _) = run_worker(&args, b"{\"op\":\"whoami\"}".to_vec(), Some(65_534));
    assert!(
        matches!(&reply, Reply::Error(e) if e.code == ErrorCode::DropFailed),
        "{reply:?}"
    );
}

/// Unmounts on drop, so a failing assertion leaves no mount behind.
struct Mount(PathBuf);

impl Mount {
    fn tmpfs(at: &Path) -> Mount {
        let target = std::ffi::CString::new(at.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: valid NUL-terminated strings for the duration of the call.
        let rc = unsafe {
            libc::mount(
                c"tmpfs".as_ptr(),
                target.as_ptr(),
                c"tmpfs".as_ptr(),
                0,
                c"size=1m".as_ptr().cast(),
            )
        };
        assert_eq!(rc, 0, "mount tmpfs: {}", std::io::Error::last_os_error());
        Mount(at.to_owned())
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let target = std::ffi::CString::new(self.0.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
    }
}

/// What `DiskUsage` must report, computed independently with std: every entry beneath
/// `home` on its device, symlinks not followed, hard links once.
fn expected_usage(home: &Path) -> (u64, u64, u64) {
    let dev = std::fs::metadata(home).unwrap().dev();
    let mut seen = HashSet::new();
    let (mut inodes, mut apparent, mut allocated) = (0, 0, 0);
    let mut stack = vec![home.to_owned()];
    while let Some(path) = stack.pop() {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.dev() != dev {
            continue;
        }
        if seen.insert((meta.dev(), meta.ino())) {
            inodes += 1;
            apparent += meta.size();
            allocated += meta.blocks() * 512;
        }
        if meta.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap().flatten() {
                stack.push(entry.path());
            }
        }
    }
    (inodes, apparent, allocated)
}

fn disk_usage(f: &Fixture, who: &Identity, budget_ms: Option<u32>) -> tenant::DiskUsage {
    match f
        .provider
        .as_tenant(who, &Request::DiskUsage { budget_ms })
        .unwrap()
    {
        TenantResult::DiskUsage(usage) => usage,
        other => panic!("{other:?}"),
    }
}

#[test]
fn disk_usage_counts_the_home_without_following_symlinks_or_crossing_devices() {
    let f = fixture(Platform::Debian);
    let home = f.home(&f.alice);
    f.provider
        .as_tenant(&f.alice, &ensure_dirs(&["d/e", "mnt"], DirMode::Group))
        .unwrap();
    f.provider
        .as_tenant(&f.alice, &write_file("a", &[1; 1000], FileMode::Private))
        .unwrap();
    f.provider
        .as_tenant(
            &f.alice,
            &write_file("d/e/b", &[2; 5000], FileMode::Private),
        )
        .unwrap();
    std::fs::hard_link(home.join("d/e/b"), home.join("d/b-again")).unwrap();
    std::os::unix::fs::symlink("/etc", home.join("etc")).unwrap();
    std::os::unix::fs::symlink(f.home(&f.bob), home.join("bob")).unwrap();
    let mount = Mount::tmpfs(&home.join("mnt"));
    std::fs::write(home.join("mnt/elsewhere"), vec![3; 100_000]).unwrap();

    let usage = disk_usage(&f, &f.alice, None);
    let (inodes, apparent, allocated) = expected_usage(&home);
    assert_eq!(usage.inodes, inodes);
    assert_eq!(usage.apparent_bytes, apparent);
    assert_eq!(usage.bytes, allocated);
    // home, d, d/e; a and b (its second name counted once); two symlinks; the mount point is
    // on another device and not entered.
    assert_eq!((usage.dirs, usage.files, usage.symlinks), (3, 2, 2));
    assert_eq!(usage.other_device, 1);
    assert!(usage.complete);
    assert_eq!(usage.stopped_by, None);
    drop(mount);
}

#[test]
fn disk_usage_stops_at_its_bounds_and_says_so() {
    let f = fixture(Platform::Debian);
    let home = f.home(&f.alice);
    // Deeper than the walk descends.
    let mut deep = home.join("deep");
    for _ in 0..tenant::protocol::DU_MAX_DEPTH + 2 {
        deep.push("d");
    }
    std::fs::create_dir_all(&deep).unwrap();
    let usage = disk_usage(&f, &f.alice, None);
    assert!(!usage.complete);
    assert_eq!(usage.stopped_by, Some(Bound::Depth));

    // A budget that is already spent when the walk checks its clock (every 1024 entries).
    std::fs::remove_dir_all(home.join("deep")).unwrap();
    let many = home.join("many");
    std::fs::create_dir(&many).unwrap();
    for i in 0..1100 {
        std::fs::write(many.join(i.to_string()), b"").unwrap();
    }
    let usage = disk_usage(&f, &f.alice, Some(0));
    assert!(!usage.complete);
    assert_eq!(usage.stopped_by, Some(Bound::Time));
    let usage = disk_usage(&f, &f.alice, None);
    assert!(usage.complete);
    assert_eq!(usage.files, 1100);
}

#[test]
fn cloudlinux_starts_the_worker_inside_lve_suwrapper() {
    let f = fixture(Platform::CloudLinux);
    let me = whoami(&f, &f.alice);
    assert_eq!(me.uid, [ALICE; 3]);
    assert_eq!(me.no_new_privs, 1);
    let records = audit_records(&f.provider).unwrap();
    assert_eq!(records.len(), 1);
    let record = &records[0];
    assert_eq!(record.program, "lve_suwrapper");
    assert_eq!(record.path, "/bin/lve_suwrapper");
    assert_eq!(record.backend, "sim");
    let home = f.home(&f.alice).display().to_string();
    let groups = format!("{ALICE},{EXTRA_GROUP}");
    let alice = ALICE.to_string();
    assert_eq!(
        record.args,
        [
            &alice, WORKER, "--uid", &alice, "--gid", &alice, "--groups", &groups, "--home", &home
        ]
    );
}

#[test]
fn a_debian_node_running_systemd_starts_the_worker_in_a_scope_of_the_tenants_slice() {
    let f = fixture(Platform::Debian);
    std::fs::create_dir_all(f.provider.sysconf("/run/systemd/system")).unwrap();
    assert!(f.provider.booted_with_systemd());
    let me = whoami(&f, &f.alice);
    assert_eq!(me.uid, [ALICE; 3]);
    let records = audit_records(&f.provider).unwrap();
    assert_eq!(records.len(), 1);
    let record = &records[0];
    assert_eq!(record.program, "systemd-run");
    assert_eq!(record.path, "/usr/bin/systemd-run");
    let home = f.home(&f.alice).display().to_string();
    let groups = format!("{ALICE},{EXTRA_GROUP}");
    let alice = ALICE.to_string();
    let slice = format!("--slice=user-{ALICE}.slice");
    assert_eq!(
        record.args,
        [
            "--scope",
            "--quiet",
            "--collect",
            &slice,
            "--",
            WORKER,
            "--uid",
            &alice,
            "--gid",
            &alice,
            "--groups",
            &groups,
            "--home",
            &home
        ]
    );
    // A streamed request takes the same wrapper: the archive of the home, made as alice.
    std::fs::write(f.home(&f.alice).join("page.html"), "hello").unwrap();
    let mut tar = Vec::new();
    let counts = f.provider.archive_home(&f.alice, &mut tar).unwrap();
    assert_eq!(counts.files, 1);
    let records = audit_records(&f.provider).unwrap();
    assert_eq!(records.last().unwrap().program, "systemd-run");
}

#[test]
fn a_reply_that_is_not_a_reply_fails_the_operation() {
    let f = fixture(Platform::Debian);
    // A worker that exits non-zero (`cat` refuses the identity options).
    let provider =
        sim_provider(Platform::Debian, f.dir.path(), vec![]).with_tenant_worker("/bin/cat");
    let err = provider
        .as_tenant(&f.alice, &ensure_dirs(&["x"], DirMode::Public))
        .unwrap_err();
    assert_eq!(err.code(), "program_failed");
    // `echo` prints its arguments: not JSON at all.
    let provider =
        sim_provider(Platform::Debian, f.dir.path(), vec![]).with_tenant_worker("/bin/echo");
    let err = provider
        .as_tenant(&f.alice, &Request::Whoami {})
        .unwrap_err();
    assert_eq!(err.code(), "tenant_reply_invalid");
    assert!(!f.home(&f.alice).join("x").exists());
}

/// A tar header with exactly these bytes as its name and link: the tar crate's own setters
/// refuse the hostile ones.
fn raw_header(kind: tar::EntryType, name: &[u8], size: u64, link: Option<&[u8]>) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(kind);
    header.set_mode(0o644);
    header.set_size(size);
    header.as_old_mut().name[..name.len()].copy_from_slice(name);
    if let Some(link) = link {
        header.as_old_mut().linkname[..link.len()].copy_from_slice(link);
    }
    header.set_cksum();
    header
}

/// One raw entry: type, name, content, link.
type RawEntry<'a> = (tar::EntryType, &'a [u8], &'a [u8], Option<&'a [u8]>);

fn tar_of(entries: &[RawEntry<'_>]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (kind, name, content, link) in entries {
        let header = raw_header(*kind, name, content.len() as u64, *link);
        builder.append(&header, *content).unwrap();
    }
    builder.into_inner().unwrap()
}

#[test]
fn a_home_archived_and_extracted_by_the_worker_round_trips_without_following_symlinks() {
    let f = fixture(Platform::Debian);
    let home = f.home(&f.alice);
    let decoy = f.decoy();
    std::fs::write(decoy.join("outside.txt"), b"not the tenant's").unwrap();
    std::fs::create_dir_all(home.join("web/sub")).unwrap();
    std::fs::write(home.join("web/index.html"), b"hello\n").unwrap();
    std::fs::write(home.join("web/sub/big.bin"), vec![3u8; 3 * MAX_WRITE_BYTES]).unwrap();
    std::os::unix::fs::symlink("index.html", home.join("web/alias.html")).unwrap();
    std::os::unix::fs::symlink(&decoy, home.join("web/out")).unwrap();
    for path in ["web", "web/sub", "web/index.html", "web/sub/big.bin"] {
        std::os::unix::fs::chown(home.join(path), Some(ALICE), Some(ALICE)).unwrap();
    }
    for path in ["web/alias.html", "web/out"] {
        std::os::unix::fs::lchown(home.join(path), Some(ALICE), Some(ALICE)).unwrap();
    }
    let mut archive = Vec::new();
    let counts = f.provider.archive_home(&f.alice, &mut archive).unwrap();
    assert_eq!((counts.files, counts.dirs, counts.symlinks), (2, 2, 1));
    assert_eq!(counts.skipped, 1, "the link out of the home is left out");
    assert_eq!(counts.bytes, 6 + 3 * MAX_WRITE_BYTES as u64);
    let names: BTreeSet<String> = tar::Archive::new(&archive[..])
        .entries()
        .unwrap()
        .map(|e| String::from_utf8_lossy(&e.unwrap().path_bytes()).into_owned())
        .collect();
    assert!(names.contains("web/alias.html") && !names.contains("web/out"));
    assert!(!names.iter().any(|n| n.contains("outside")), "{names:?}");

    std::fs::remove_dir_all(home.join("web/sub")).unwrap();
    std::fs::write(home.join("web/index.html"), b"changed\n").unwrap();
    let written = f
        .provider
        .extract_home(&f.alice, &mut &archive[..])
        .unwrap();
    assert_eq!(written.files, 2);
    assert_eq!(
        std::fs::read(home.join("web/sub/big.bin")).unwrap(),
        vec![3u8; 3 * MAX_WRITE_BYTES],
        "a restored file may be larger than a WriteFile"
    );
    assert_eq!(
        std::fs::read(home.join("web/index.html")).unwrap(),
        b"hello\n"
    );
    let meta = std::fs::metadata(home.join("web/sub/big.bin")).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (ALICE, ALICE));
    assert_eq!(tree(&decoy), BTreeSet::from(["outside.txt".to_owned()]));
}

#[test]
fn the_worker_refuses_hostile_archives_by_itself_and_writes_nothing_outside_the_home() {
    let f = fixture(Platform::Debian);
    let home = f.home(&f.alice);
    let decoy = f.decoy();
    let bob_home = f.home(&f.bob);
    std::fs::write(bob_home.join("bob.txt"), b"bob's").unwrap();
    let bob_before = tree(&bob_home);
    let decoy_abs = decoy.as_os_str().as_encoded_bytes().to_vec();
    let through = [decoy_abs.clone(), b"/x".to_vec()].concat();
    use tar::EntryType as T;
    // Each archive goes straight to the worker, past root's own checks.
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "traversal",
            tar_of(&[(T::Regular, b"../../decoy/x", b"x", None)]),
            "tenant_archive_invalid",
        ),
        (
            "absolute",
            tar_of(&[(T::Regular, &through, b"x", None)]),
            "tenant_archive_invalid",
        ),
        (
            "symlink out, then a file through it",
            tar_of(&[
                (T::Symlink, b"l", b"", Some(&decoy_abs)),
                (T::Regular, b"l/x", b"x", None),
            ]),
            "tenant_archive_invalid",
        ),
        (
            "escaping relative symlink",
            tar_of(&[(T::Symlink, b"a/l", b"", Some(b"../../bob"))]),
            "tenant_archive_invalid",
        ),
        (
            "hard link",
            tar_of(&[(T::Link, b"h", b"", Some(b"/etc/shadow"))]),
            "tenant_archive_invalid",
        ),
        (
            "fifo",
            tar_of(&[(T::Fifo, b"p", b"", None)]),
            "tenant_archive_invalid",
        ),
        (
            "device",
            tar_of(&[(T::Block, b"sda", b"", None)]),
            "tenant_archive_invalid",
        ),
        (
            "a content cut short",
            {
                let mut bytes = tar_of(&[(T::Regular, b"cut", &[7u8; 4096], None)]);
                bytes.truncate(512 + 1000);
                bytes
            },
            "tenant_archive_invalid",
        ),
    ];
    for (name, bytes, expected) in cases {
        let err = f
            .provider
            .extract_home(&f.alice, &mut &bytes[..])
            .unwrap_err();
        assert_eq!(err.code(), expected, "{name}: {err}");
    }
    // A directory of the home replaced by a symlink: to the decoy, to another home.
    let archive = tar_of(&[
        (T::Directory, b"web/", b"", None),
        (T::Regular, b"web/index.html", b"x", None),
    ]);
    for target in [decoy.clone(), bob_home.clone()] {
        let web = home.join("web");
        let _ = std::fs::remove_file(&web);
        std::os::unix::fs::symlink(&target, &web).unwrap();
        let err = f
            .provider
            .extract_home(&f.alice, &mut &archive[..])
            .unwrap_err();
        assert_eq!(err.code(), "tenant_path_unsafe", "{}", target.display());
    }
    assert!(tree(&decoy).is_empty(), "{:?}", tree(&decoy));
    assert_eq!(tree(&bob_home), bob_before);
    assert!(!home.join("cut").exists() && !home.join("l").exists());
}

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

/// A file of `size` bytes owned by `uid`: holes, except `data` at each offset.
fn sparse_file(path: &Path, size: u64, data: &[(u64, Vec<u8>)], uid: u32) {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::create(path).unwrap();
    file.set_len(size).unwrap();
    for (offset, bytes) in data {
        file.write_all_at(bytes, *offset).unwrap();
    }
    std::os::unix::fs::chown(path, Some(uid), Some(uid)).unwrap();
}

/// Allocated bytes of a file.
fn allocated(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().blocks() * 512
}

fn read_at(path: &Path, offset: u64, len: usize) -> Vec<u8> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; len];
    std::fs::File::open(path)
        .unwrap()
        .read_exact_at(&mut buf, offset)
        .unwrap();
    buf
}

/// Each entry of a tar: its path, the bytes it stores, and its sparse map if it has one.
fn entries_of(archive: &[u8]) -> Vec<(String, u64, Option<String>)> {
    let mut out = Vec::new();
    let mut tar = tar::Archive::new(archive);
    for entry in tar.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let size = entry.size();
        let map = entry.pax_extensions().unwrap().and_then(|records| {
            records
                .map(|r| r.unwrap())
                .find(|r| r.key() == Ok(tenant::archive::SPARSE_MAP))
                .map(|r| r.value().unwrap().to_owned())
        });
        out.push((path, size, map));
    }
    out
}

/// Issue 12, point 6, at the worker: a home of sparse files is archived as its data (holes
/// kept as holes: an all-hole 2 GiB file, data at the very end, more regions than a map
/// lists), and restored by the worker as the same files, holes included.
#[test]
fn sparse_files_are_archived_as_their_data_and_restored_with_their_holes() {
    let f = fixture(Platform::Debian);
    let home = f.home(&f.alice);
    let tail = b"the end of a sparse file".to_vec();
    sparse_file(&home.join("hole.img"), 2 * GIB, &[], ALICE);
    sparse_file(
        &home.join("tail.img"),
        GIB + tail.len() as u64,
        &[(GIB, tail.clone())],
        ALICE,
    );
    // Twice as many regions as a map lists, the holes between them of two sizes.
    let regions = 2 * tenant::archive::MAX_EXTENTS as u64;
    let marks: Vec<(u64, Vec<u8>)> = (0..regions)
        .map(|i| {
            let offset = i * 64 * 1024 + if i % 2 == 0 { 0 } else { 32 * 1024 };
            (offset, format!("region {i}").into_bytes())
        })
        .collect();
    sparse_file(&home.join("many.img"), regions * 64 * 1024, &marks, ALICE);
    std::fs::write(home.join("dense.bin"), vec![7u8; 100_000]).unwrap();
    std::os::unix::fs::chown(home.join("dense.bin"), Some(ALICE), Some(ALICE)).unwrap();

    let mut archive = Vec::new();
    let counts = f.provider.archive_home(&f.alice, &mut archive).unwrap();
    assert_eq!((counts.files, counts.sparse_files), (4, 3), "{counts:?}");
    assert_eq!(
        counts.apparent_bytes,
        2 * GIB + GIB + tail.len() as u64 + regions * 64 * 1024 + 100_000
    );
    assert!(counts.bytes < 64 * MIB, "{counts:?}");
    assert!(archive.len() < 64 * MIB as usize, "{} bytes", archive.len());
    let entries = entries_of(&archive);
    let entry = |name: &str| entries.iter().find(|e| e.0 == name).unwrap().clone();
    // Regions, then GNU tar's end marker: the size and nothing.
    let hole = Some(format!("{},0", 2 * GIB));
    assert_eq!(entry("hole.img"), ("hole.img".to_owned(), 0, hole));
    let (_, stored, map) = entry("tail.img");
    let size = GIB + tail.len() as u64;
    assert_eq!(map.as_deref(), Some(&*format!("{GIB},{stored},{size},0")));
    assert!(stored >= tail.len() as u64 && stored <= 64 * 1024);
    let (_, _, map) = entry("many.img");
    let listed = map.unwrap().split(',').count() / 2 - 1;
    assert_eq!(
        listed,
        tenant::archive::MAX_EXTENTS,
        "the smallest holes are filled"
    );
    assert_eq!(entry("dense.bin"), ("dense.bin".to_owned(), 100_000, None));

    for name in ["hole.img", "tail.img", "many.img", "dense.bin"] {
        std::fs::remove_file(home.join(name)).unwrap();
    }
    let written = f
        .provider
        .extract_home(&f.alice, &mut &archive[..])
        .unwrap();
    assert_eq!((written.files, written.sparse_files), (4, 3));
    assert_eq!(written.apparent_bytes, counts.apparent_bytes);
    assert_eq!(
        std::fs::metadata(home.join("hole.img")).unwrap().len(),
        2 * GIB
    );
    assert!(allocated(&home.join("hole.img")) < MIB);
    assert_eq!(
        std::fs::metadata(home.join("tail.img")).unwrap().len(),
        GIB + tail.len() as u64
    );
    assert_eq!(read_at(&home.join("tail.img"), GIB, tail.len()), tail);
    assert!(allocated(&home.join("tail.img")) < MIB);
    let many = std::fs::read(home.join("many.img")).unwrap();
    assert_eq!(many.len() as u64, regions * 64 * 1024);
    let mut expected = vec![0u8; many.len()];
    for (offset, bytes) in &marks {
        expected[*offset as usize..*offset as usize + bytes.len()].copy_from_slice(bytes);
    }
    assert!(many == expected, "many.img differs after the restore");
    assert_eq!(
        std::fs::read(home.join("dense.bin")).unwrap(),
        vec![7u8; 100_000]
    );
    let meta = std::fs::metadata(home.join("hole.img")).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (ALICE, ALICE));
}

/// The sparse entries a restore accepts are the exact form the worker writes; anything else
/// sent straight to the worker (past root's checks) fails with nothing written.
#[test]
fn the_worker_refuses_malformed_sparse_entries_by_itself() {
    let f = fixture(Platform::Debian);
    let home = f.home(&f.alice);
    let sparse = |size: &str, count: &str, map: &str, stored: usize| {
        let mut builder = tar::Builder::new(Vec::new());
        builder
            .append_pax_extensions([
                ("GNU.sparse.size", size.as_bytes()),
                ("GNU.sparse.numblocks", count.as_bytes()),
                ("GNU.sparse.map", map.as_bytes()),
            ])
            .unwrap();
        let header = raw_header(tar::EntryType::Regular, b"evil.img", stored as u64, None);
        builder.append(&header, &vec![b'x'; stored][..]).unwrap();
        builder.into_inner().unwrap()
    };
    let five_gib = (5 * GIB).to_string();
    for (name, archive, code) in [
        (
            "overlapping regions",
            sparse("100", "3", "0,10,5,10,100,0", 20),
            "tenant_archive_invalid",
        ),
        (
            "a region past the size",
            sparse("100", "2", "95,10,100,0", 10),
            "tenant_archive_invalid",
        ),
        (
            "content not the regions'",
            sparse("100", "2", "0,10,100,0", 30),
            "tenant_archive_invalid",
        ),
        (
            "no end at the size",
            sparse("100", "1", "0,10", 10),
            "tenant_archive_invalid",
        ),
        (
            "larger than a restore writes",
            sparse(&five_gib, "2", &format!("0,1,{five_gib},0"), 1),
            "tenant_archive_too_large",
        ),
    ] {
        let err = f
            .provider
            .extract_home(&f.alice, &mut &archive[..])
            .unwrap_err();
        assert_eq!(err.code(), code, "{name}: {err}");
        assert!(!home.join("evil.img").exists(), "{name}");
    }
    assert_eq!(tree(&home), BTreeSet::new(), "nothing was written");
}

/// Issue 12, point 7, at the worker: a directory of mode 000 hid its content from the usage
/// report while it said `complete: true`. Now what the tenant cannot read is counted: usage
/// is incomplete, and an archive says how much it left out. A directory with `r` but no `x`
/// is the state a chmod during the walk leaves (listed, not searchable).
#[test]
fn what_the_tenant_cannot_read_is_counted_never_hidden() {
    let f = fixture(Platform::Debian);
    let home = f.home(&f.alice);
    for dir in ["locked", "listable", "open"] {
        std::fs::create_dir(home.join(dir)).unwrap();
    }
    std::fs::write(home.join("locked/big"), vec![1u8; 4 * MIB as usize]).unwrap();
    for i in 0..3 {
        std::fs::write(home.join(format!("listable/{i}")), vec![2u8; 100_000]).unwrap();
    }
    std::fs::write(home.join("open/secret.bin"), vec![3u8; 64 * 1024]).unwrap();
    std::fs::write(home.join("open/plain.txt"), b"plain").unwrap();
    for path in [
        "locked",
        "locked/big",
        "listable",
        "listable/0",
        "listable/1",
        "listable/2",
        "open",
        "open/secret.bin",
        "open/plain.txt",
    ] {
        std::os::unix::fs::chown(home.join(path), Some(ALICE), Some(ALICE)).unwrap();
    }
    let full = disk_usage(&f, &f.alice, None);
    assert!(full.complete);

    chmod(&home.join("locked"), 0o000);
    chmod(&home.join("listable"), 0o600);
    chmod(&home.join("open/secret.bin"), 0o000);
    let usage = disk_usage(&f, &f.alice, None);
    assert!(!usage.complete, "{usage:?}");
    assert_eq!(usage.stopped_by, None);
    assert_eq!((usage.unreadable_dirs, usage.unreadable_entries), (1, 3));
    assert!(usage.bytes < full.bytes - 4 * MIB, "{usage:?}");
    let mut archive = Vec::new();
    let counts = f.provider.archive_home(&f.alice, &mut archive).unwrap();
    // locked; listable (listing it needs search permission), whose own entry is kept;
    // secret.bin.
    assert_eq!(counts.unreadable, 3, "{counts:?}");
    let names: BTreeSet<String> = entries_of(&archive).into_iter().map(|e| e.0).collect();
    assert_eq!(
        names,
        BTreeSet::from(["listable/", "open/", "open/plain.txt"].map(str::to_owned))
    );

    // A file of mode 000 hides nothing from the usage walk (a stat needs no read
    // permission), but it is not in the archive, which says so.
    chmod(&home.join("locked"), 0o755);
    chmod(&home.join("listable"), 0o755);
    let usage = disk_usage(&f, &f.alice, None);
    assert!(usage.complete, "{usage:?}");
    assert_eq!((usage.bytes, usage.inodes), (full.bytes, full.inodes));
    let counts = f.provider.archive_home(&f.alice, &mut Vec::new()).unwrap();
    assert_eq!(counts.unreadable, 1);
    assert_eq!(counts.files, 5);
}

/// The tenant flips a directory between 000 and 755 while usage is measured and the home
/// archived: every report is either complete and whole, or says what it could not read.
#[test]
fn a_directory_made_unreadable_during_the_walk_never_gives_a_short_complete_report() {
    let f = fixture(Platform::Debian);
    let home = f.home(&f.alice);
    let dir = home.join("flip");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    for i in 0..300 {
        std::fs::write(dir.join(format!("{i}")), vec![1u8; 8192]).unwrap();
        std::fs::write(dir.join(format!("sub/{i}")), vec![2u8; 8192]).unwrap();
    }
    std::os::unix::fs::chown(&dir, Some(ALICE), Some(ALICE)).unwrap();
    std::os::unix::fs::chown(dir.join("sub"), Some(ALICE), Some(ALICE)).unwrap();
    let full = disk_usage(&f, &f.alice, None);
    let whole = f.provider.archive_home(&f.alice, &mut Vec::new()).unwrap();
    assert!(full.complete && whole.unreadable == 0);

    let stop = std::sync::atomic::AtomicBool::new(false);
    let (mut short, mut total) = (0, 0);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for (path, mode) in [(&dir, 0o000), (&dir, 0o755), (&dir.join("sub"), 0o000)] {
                    chmod(path, mode);
                }
                chmod(&dir.join("sub"), 0o755);
                // Readable for a while too, so some walks meet it whole.
                std::thread::sleep(std::time::Duration::from_millis(3));
            }
        });
        for _ in 0..15 {
            let usage = disk_usage(&f, &f.alice, None);
            if usage.complete {
                assert_eq!((usage.bytes, usage.inodes), (full.bytes, full.inodes));
            } else {
                assert!(
                    usage.unreadable_dirs + usage.unreadable_entries > 0,
                    "{usage:?}"
                );
                short += 1;
            }
            let counts = f.provider.archive_home(&f.alice, &mut Vec::new()).unwrap();
            if counts.unreadable == 0 {
                assert_eq!((counts.files, counts.bytes), (whole.files, whole.bytes));
            } else {
                short += 1;
            }
            total += 2;
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    eprintln!("{short} of {total} reports met the flipping directory and said so");
}

/// A file appended to while the home is archived is stored as it was measured: exactly its
/// size at the stat, its bytes as written, and the archive stays well-formed.
#[test]
fn a_file_growing_during_the_archive_is_stored_at_its_measured_size() {
    let f = fixture(Platform::Debian);
    let home = f.home(&f.alice);
    let path = home.join("grow.log");
    let pattern = |at: u64, len: usize| {
        (at..at + len as u64)
            .map(|k| (k % 251) as u8)
            .collect::<Vec<_>>()
    };
    std::fs::write(&path, pattern(0, MIB as usize)).unwrap();
    std::os::unix::fs::chown(&path, Some(ALICE), Some(ALICE)).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut file = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap();
            let mut at = MIB;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && at < 256 * MIB {
                file.write_all(&pattern(at, 64 * 1024)).unwrap();
                at += 64 * 1024;
            }
        });
        for _ in 0..5 {
            let mut archive = Vec::new();
            f.provider.archive_home(&f.alice, &mut archive).unwrap();
            let mut tar = tar::Archive::new(&archive[..]);
            let mut entry = tar
                .entries()
                .unwrap()
                .map(|e| e.unwrap())
                .find(|e| &*e.path_bytes() == b"grow.log")
                .unwrap();
            let mut content = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut content).unwrap();
            assert!(content.len() as u64 >= MIB);
            assert!(
                content == pattern(0, content.len()),
                "the content is not what was written"
            );
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
}
