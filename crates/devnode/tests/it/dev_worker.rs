//! The dev node's multi-call worker: `layerone-dev` started under the tenant worker's name is
//! that worker, with the same privilege drop (`crates/devnode/src/dev.rs`).

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use provider::Platform;
use tenant::{Identity, Request, TenantResult};
use testkit::sim_provider;

const TENANT: u32 = 64_301;

#[test]
fn layerone_under_the_worker_name_drops_to_the_tenant() {
    assert!(
        rustix::process::geteuid().is_root(),
        "this test drops privileges and must run as root (scripts/test runs it as root)"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let link = dir.path().join(provider::TENANT_WORKER_NAME);
    std::fs::copy(env!("CARGO_BIN_EXE_layerone-dev"), &link).unwrap();
    let provider = sim_provider(Platform::Debian, dir.path(), vec![]).with_tenant_worker(&link);
    let home = provider.sysconf("/home/devtenant");
    std::fs::create_dir_all(&home).unwrap();
    for path in [dir.path().join("root"), dir.path().join("root/home")] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::os::unix::fs::chown(&home, Some(TENANT), Some(TENANT)).unwrap();
    let who = Identity::new(TENANT, TENANT, vec![], PathBuf::from("/home/devtenant")).unwrap();
    let TenantResult::Whoami(report) = provider.as_tenant(&who, &Request::Whoami {}).unwrap()
    else {
        panic!("a whoami request gets a whoami reply");
    };
    assert_eq!(report.uid, [TENANT; 3]);
    assert_eq!(report.gid, [TENANT; 3]);
    assert_eq!(report.no_new_privs, 1);
    assert!(report.regain_root_refused);
}
