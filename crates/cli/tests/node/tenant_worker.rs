//! Tenant work end to end: the real runner (as root, Sim backend) starts the real
//! `layerone-tenant` beside it, which creates a web domain's document root as the tenant.
//!
//! The worker binary is built by `cargo nextest run --workspace` (the test script); run on
//! its own, `cargo build -p tenant` first.

use crate::common;

use std::os::unix::fs::MetadataExt;

use common::*;
use registry::JobState;

fn require_worker_beside_the_runner() {
    assert!(
        rustix::process::geteuid().is_root(),
        "the runner starts the real worker only as root (CI runs the suite as root)"
    );
    let worker = RUNNER.with_file_name(provider::TENANT_WORKER_NAME);
    assert!(
        worker.exists(),
        "{} is missing: build it with `cargo build -p tenant` (the workspace test run does)",
        worker.display()
    );
}

#[test]
fn docroots_are_created_by_the_tenant_worker_as_the_tenant() {
    require_worker_beside_the_runner();
    let mut node = Node::new();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.submit(&ensure_account(2, 11, "shop2"));
    node.pass();
    let uid = node.provider.lookup_user("shop1").unwrap().unwrap().uid;

    node.submit(&ensure_domain(3, 30, 10, "shop.example.com"));
    node.pass();
    assert_eq!(node.job_state(&id(3)), Some(JobState::Succeeded));
    let home = node.path("/home/shop1");
    for dir in [
        "web",
        "web/shop.example.com",
        "web/shop.example.com/public_html",
    ] {
        let meta = std::fs::metadata(home.join(dir)).unwrap();
        assert_eq!(meta.uid(), uid, "{dir} is not the tenant's");
        assert_eq!(meta.mode() & 0o7777, 0o755, "{dir}");
    }
    // The runner's audit log (its provider's audit directory is `<data>/log`).
    let records = provider::read_audit_log(&node.layout.root().join("log")).unwrap();
    let worker: Vec<_> = records
        .iter()
        .filter(|r| r.program == "layerone-tenant")
        .collect();
    assert_eq!(worker.len(), 1, "{records:?}");
    assert_eq!(worker[0].backend, "real");
    assert_eq!(worker[0].status, Some(0));
    assert_eq!(worker[0].args[..2], ["--uid".to_owned(), uid.to_string()]);

    // A docroot path through a symlink the tenant planted fails that job only; nothing is
    // created where it points, and the other tenant's next domain is served.
    let outside = node.dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::set_permissions(
        &outside,
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    std::fs::remove_dir_all(home.join("web")).unwrap();
    std::os::unix::fs::symlink(&outside, home.join("web")).unwrap();
    node.submit(&ensure_domain(4, 31, 10, "other.example.com"));
    node.submit(&ensure_domain(5, 32, 11, "shop2.example.com"));
    node.pass();
    let job = node.state().job(&id(4)).unwrap().unwrap();
    assert_eq!(job.state, JobState::Failed);
    assert_eq!(job.error.unwrap().code, "tenant_path_unsafe");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    assert_eq!(node.job_state(&id(5)), Some(JobState::Succeeded));
    assert!(
        node.path("/home/shop2/web/shop2.example.com/public_html")
            .is_dir()
    );
}

#[test]
fn account_usage_is_measured_by_the_worker_as_the_tenant() {
    require_worker_beside_the_runner();
    let mut node = Node::new();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.submit(&ensure_domain(2, 30, 10, "shop.example.com"));
    node.pass();
    let user = node.provider.lookup_user("shop1").unwrap().unwrap();
    let docroot = node.path("/home/shop1/web/shop.example.com/public_html");
    std::fs::write(docroot.join("index.html"), vec![b'x'; 12_345]).unwrap();
    std::os::unix::fs::chown(docroot.join("index.html"), Some(user.uid), Some(user.gid)).unwrap();
    // Outside the home, behind a symlink the tenant planted: never counted.
    let outside = node.dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("big"), vec![0u8; 1_000_000]).unwrap();
    std::os::unix::fs::symlink(&outside, node.path("/home/shop1/link")).unwrap();

    let worker = RUNNER.with_file_name(provider::TENANT_WORKER_NAME);
    let provider = testkit::sim_provider(provider::Platform::Debian, node.dir.path(), vec![])
        .with_tenant_worker(worker);
    let ctx = ops::Ctx::new(std::sync::Arc::new(provider), node.state());
    let usage = ops::account::account_usage(&ctx, &id(10).parse().unwrap()).unwrap();
    assert!(usage.complete);
    // The home, web, the domain directory, public_html; index.html and the symlink.
    assert_eq!((usage.dirs, usage.files, usage.symlinks), (4, 1, 1));
    assert!(usage.apparent_bytes >= 12_345 && usage.apparent_bytes < 1_000_000);
    let records = testkit::audit_records(&ctx.provider).unwrap();
    assert_eq!(records.last().unwrap().program, "layerone-tenant");
    assert_eq!(records.last().unwrap().backend, "real");
    // An account that does not exist is the operation's error, not a panic.
    let err = ops::account::account_usage(&ctx, &id(99).parse().unwrap()).unwrap_err();
    assert_eq!(err.code, "account_missing");
}
