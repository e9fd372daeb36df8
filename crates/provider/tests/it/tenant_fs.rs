//! Root inside a tenant's home never follows a symlink and never writes outside it.

use std::os::unix::fs::{MetadataExt, symlink};
use std::path::Path;

use provider::{Platform, ProviderError, TenantDir};

use crate::common::{Env, is_root, mode_of, tree};

const UID: u32 = 4242;
const GID: u32 = 4343;

struct Tenant {
    env: Env,
    dir: TenantDir,
}

fn tenant() -> Tenant {
    let env = Env::sim(Platform::Debian);
    let home = env.provider.sysconf("/home/acme");
    std::fs::create_dir_all(&home).unwrap();
    let dir = env
        .provider
        .tenant_dir(Path::new("/home/acme"), UID, GID)
        .unwrap();
    Tenant { env, dir }
}

impl Tenant {
    fn home(&self) -> std::path::PathBuf {
        self.env.provider.sysconf("/home/acme")
    }
}

fn assert_unsafe(result: Result<impl std::fmt::Debug, ProviderError>) {
    match result {
        Err(err @ ProviderError::TenantPath { .. }) => assert_eq!(err.code(), "tenant_path_unsafe"),
        other => panic!("expected a TenantPath error, got {other:?}"),
    }
}

#[test]
fn a_symlinked_home_is_refused() {
    let env = Env::sim(Platform::Debian);
    let outside = env.outside();
    std::fs::create_dir_all(env.provider.sysconf("/home")).unwrap();
    symlink(&outside, env.provider.sysconf("/home/evil")).unwrap();
    assert_unsafe(env.provider.tenant_dir(Path::new("/home/evil"), UID, GID));
    assert_unsafe(
        env.provider
            .tenant_dir(Path::new("/home/missing"), UID, GID),
    );
}

#[test]
fn writing_through_a_symlinked_ssh_dir_is_refused_and_writes_nothing_outside() {
    let t = tenant();
    let outside = t.env.outside();
    symlink(&outside, t.home().join(".ssh")).unwrap();
    assert_unsafe(t.dir.write_file_atomic(
        Path::new(".ssh/authorized_keys"),
        b"ssh-ed25519 AAAA",
        0o600,
    ));
    assert_unsafe(t.dir.mkdir_all(Path::new(".ssh/sub"), 0o700));
    assert_unsafe(t.dir.read_file(Path::new(".ssh/authorized_keys")));
    assert_eq!(tree(&outside), Vec::<String>::new());
}

#[test]
fn a_symlink_to_etc_is_never_followed() {
    let t = tenant();
    symlink("/etc", t.home().join(".ssh")).unwrap();
    assert_unsafe(
        t.dir
            .write_file_atomic(Path::new(".ssh/passwd"), b"x", 0o600),
    );
    assert_unsafe(t.dir.read_file(Path::new(".ssh/passwd")));
    assert_unsafe(t.dir.exists(Path::new(".ssh/passwd")));
    // Removing the tree unlinks the symlink itself and nothing behind it.
    t.dir.remove_dir_all(Path::new(".ssh")).unwrap();
    assert!(Path::new("/etc/passwd").exists());
    assert!(std::fs::symlink_metadata(t.home().join(".ssh")).is_err());
}

#[test]
fn a_symlink_at_the_final_name_is_replaced_not_followed() {
    let t = tenant();
    let outside = t.env.outside();
    let victim = outside.join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    t.dir.mkdir_all(Path::new(".ssh"), 0o700).unwrap();
    symlink(&victim, t.home().join(".ssh/authorized_keys")).unwrap();

    t.dir
        .write_file_atomic(
            Path::new(".ssh/authorized_keys"),
            b"ssh-ed25519 AAAA",
            0o600,
        )
        .unwrap();

    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    let written = t.home().join(".ssh/authorized_keys");
    assert!(
        std::fs::symlink_metadata(&written)
            .unwrap()
            .file_type()
            .is_file()
    );
    assert_eq!(
        t.dir
            .read_file(Path::new(".ssh/authorized_keys"))
            .unwrap()
            .unwrap(),
        b"ssh-ed25519 AAAA"
    );
    assert_eq!(mode_of(&written), 0o600);
    // No temporary file is left beside it.
    assert_eq!(tree(&t.home().join(".ssh")), ["authorized_keys"]);
}

#[test]
fn a_symlink_in_the_middle_of_a_path_is_refused_even_when_it_points_inside() {
    let t = tenant();
    t.dir.mkdir_all(Path::new("real/dir"), 0o755).unwrap();
    symlink("real", t.home().join("link")).unwrap();
    assert_unsafe(
        t.dir
            .write_file_atomic(Path::new("link/dir/file"), b"x", 0o644),
    );
    assert_unsafe(t.dir.mkdir_all(Path::new("link/dir/new"), 0o755));
    assert_unsafe(t.dir.read_file(Path::new("link/dir/file")));
    assert_unsafe(t.dir.remove_file(Path::new("link/dir/file")));
    assert!(!t.home().join("real/dir/new").exists());
    assert!(!t.home().join("real/dir/file").exists());
}

#[test]
fn dot_dot_and_absolute_paths_are_refused() {
    let t = tenant();
    for rel in ["../escape", "a/../../escape", "/etc/passwd", "./x", ""] {
        assert_unsafe(t.dir.write_file_atomic(Path::new(rel), b"x", 0o644));
        assert_unsafe(t.dir.read_file(Path::new(rel)));
        assert_unsafe(t.dir.remove_dir_all(Path::new(rel)));
    }
    assert_unsafe(t.dir.mkdir_all(Path::new("a/../b"), 0o755));
    assert!(!t.env.dir.path().join("root/home/escape").exists());
}

#[test]
fn read_file_refuses_fifos_instead_of_blocking() {
    let t = tenant();
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        t.home().join("pipe"),
        rustix::fs::Mode::from_raw_mode(0o644),
    )
    .unwrap();
    assert_unsafe(t.dir.read_file(Path::new("pipe")));
    assert_eq!(t.dir.read_file(Path::new("absent")).unwrap(), None);
}

#[test]
fn mkdir_all_creates_each_level_with_the_exact_mode_and_the_tenant_as_owner() {
    let t = tenant();
    t.dir.mkdir_all(Path::new("a/b/c"), 0o750).unwrap();
    t.dir.mkdir_all(Path::new("a/b/c"), 0o700).unwrap(); // existing: left alone
    for rel in ["a", "a/b", "a/b/c"] {
        let path = t.home().join(rel);
        assert_eq!(mode_of(&path), 0o750, "{rel}");
        if is_root() {
            let meta = std::fs::metadata(&path).unwrap();
            assert_eq!((meta.uid(), meta.gid()), (UID, GID), "{rel}");
        }
    }
    t.dir
        .write_file_atomic(Path::new("a/b/c/f"), b"x", 0o640)
        .unwrap();
    if is_root() {
        let meta = std::fs::metadata(t.home().join("a/b/c/f")).unwrap();
        assert_eq!((meta.uid(), meta.gid()), (UID, GID));
    }
    assert!(t.dir.exists(Path::new("a/b/c/f")).unwrap());
    assert!(!t.dir.exists(Path::new("a/b/c/g")).unwrap());
}

#[test]
fn a_file_in_the_way_of_mkdir_all_is_a_tenant_error() {
    let t = tenant();
    std::fs::write(t.home().join("file"), b"").unwrap();
    assert_unsafe(t.dir.mkdir_all(Path::new("file/sub"), 0o755));
}

#[test]
fn remove_dir_all_unlinks_symlinks_and_leaves_their_targets() {
    let t = tenant();
    let outside = t.env.outside();
    std::fs::create_dir_all(outside.join("data")).unwrap();
    std::fs::write(outside.join("data/keep"), b"keep").unwrap();
    t.dir.mkdir_all(Path::new("tree/deep/er"), 0o755).unwrap();
    t.dir
        .write_file_atomic(Path::new("tree/deep/er/f"), b"x", 0o644)
        .unwrap();
    symlink(outside.join("data"), t.home().join("tree/deep/to_dir")).unwrap();
    symlink(outside.join("data/keep"), t.home().join("tree/to_file")).unwrap();

    t.dir.remove_dir_all(Path::new("tree")).unwrap();

    assert!(!t.home().join("tree").exists());
    assert_eq!(tree(&outside), ["data", "data/keep"]);
    assert_eq!(std::fs::read(outside.join("data/keep")).unwrap(), b"keep");
}

#[test]
fn removing_absent_paths_is_ok() {
    let t = tenant();
    t.dir.remove_file(Path::new("nothing")).unwrap();
    t.dir.remove_file(Path::new("no/such/dir/file")).unwrap();
    t.dir.remove_dir_all(Path::new("nothing")).unwrap();
    t.dir.remove_dir_all(Path::new("no/such/dir")).unwrap();
}

#[test]
fn remove_file_unlinks_a_symlink_without_touching_its_target() {
    let t = tenant();
    let outside = t.env.outside();
    std::fs::write(outside.join("victim"), b"keep").unwrap();
    symlink(outside.join("victim"), t.home().join("link")).unwrap();
    t.dir.remove_file(Path::new("link")).unwrap();
    assert!(std::fs::symlink_metadata(t.home().join("link")).is_err());
    assert_eq!(std::fs::read(outside.join("victim")).unwrap(), b"keep");
}
