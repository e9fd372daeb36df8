//! Shared setup: a temporary directory holding a sysroot and an audit directory.

use std::path::{Path, PathBuf};

use provider::{Platform, Program, Provider};
use testkit::{seed_accounts, sim_provider};

pub struct Env {
    pub dir: tempfile::TempDir,
    pub provider: Provider,
}

impl Env {
    /// A Sim provider on a seeded sysroot.
    pub fn sim(platform: Platform) -> Env {
        Env::with_real(platform, vec![])
    }

    pub fn with_real(platform: Platform, real: Vec<Program>) -> Env {
        let dir = tempfile::tempdir().expect("create temp dir");
        let provider = sim_provider(platform, dir.path(), real);
        seed_accounts(&provider).expect("seed accounts");
        Env { dir, provider }
    }

    pub fn read(&self, system_path: &str) -> String {
        std::fs::read_to_string(self.provider.sysconf(system_path)).unwrap_or_default()
    }

    /// A directory outside the sysroot, for symlink targets that must stay untouched.
    pub fn outside(&self) -> PathBuf {
        let path = self.dir.path().join("outside");
        std::fs::create_dir_all(&path).unwrap();
        path
    }
}

pub fn mode_of(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Every file under `dir`, relative, sorted: to prove nothing was written there.
pub fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            out.push(path.strip_prefix(base).unwrap().display().to_string());
            if entry.file_type().unwrap().is_dir() {
                walk(base, &path, out);
            }
        }
    }
    walk(dir, dir, &mut out);
    out.sort();
    out
}
