//! The simulated executor as the provider uses it: which programs it starts for real, tenant
//! work done in-process when the process is not root (one-shot requests and archives), and
//! the uids a real kill may reach. Run as root or not: each test picks the path it proves
//! with `SimExecutor::acting_as_root`.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;

use provider::{
    AuditRecord, Executor, Platform, Program, Provider, ProviderConfig, ProviderError,
    RealExecutor, TenantIsolation, read_audit_log,
};
use simulator::SimExecutor;
use tenant::{DirMode, Identity, Request, TenantResult, Terminated};

/// A Debian provider on `executor` and its machine whose sysroot is `<dir>/root`.
fn provider_on(dir: &Path, executor: SimExecutor) -> Provider {
    let machine = Arc::new(executor.machine());
    Provider::new(ProviderConfig {
        platform: Platform::Debian,
        root: dir.join("root"),
        executor: Arc::new(executor),
        machine,
        audit_dir: dir.join("audit"),
    })
}

fn audit_records(provider: &Provider) -> Result<Vec<AuditRecord>, ProviderError> {
    read_audit_log(provider.audit_dir())
}

#[test]
fn sim_runs_only_listed_programs_for_real() {
    let sim = SimExecutor::new(vec![Program::ApacheCtl]);
    assert!(sim.runs_real(Program::ApacheCtl));
    assert!(!sim.runs_real(Program::Useradd));
    assert!(RealExecutor.runs_real(Program::Useradd));
}

/// Under the simulation without root the request code runs in-process, without any drop, and says
/// so; the same request and reply types cross the same `execute`.
#[test]
fn sim_without_root_runs_the_request_code_in_process() {
    let dir = tempfile::tempdir().unwrap();
    let provider = provider_on(dir.path(), SimExecutor::new(vec![]).acting_as_root(false));
    assert_eq!(provider.tenant_isolation(), TenantIsolation::InProcess);

    let me = rustix::process::geteuid().as_raw();
    let my_gid = rustix::process::getegid().as_raw();
    // The home belongs to this process's user, which is who does the work here. Root
    // runs these tests too: uid 0 is then refused as a tenant, so use a stand-in
    // identity and a home owned by the current user.
    std::fs::create_dir_all(provider.sysconf("/home/acme")).unwrap();
    let who = Identity::new(
        if me == 0 { 64_200 } else { me },
        if my_gid == 0 { 64_200 } else { my_gid },
        vec![],
        "/home/acme".into(),
    )
    .unwrap();
    let request = Request::EnsureDirs {
        dirs: vec!["web/public_html".parse().unwrap()],
        mode: DirMode::Public,
    };
    let result = provider.as_tenant(&who, &request).unwrap();
    assert_eq!(
        result,
        TenantResult::EnsureDirs {
            created: 1,
            existing: 0
        }
    );
    let created = provider.sysconf("/home/acme/web/public_html");
    assert!(created.is_dir());
    // No drop happened: the directory belongs to this process's user.
    assert_eq!(std::fs::metadata(&created).unwrap().uid(), me);

    let records = audit_records(&provider).unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].program, "layerone-tenant");
    assert_eq!(records[0].backend, "sim");

    // A symlinked docroot fails the same way in-process.
    std::os::unix::fs::symlink("/etc", provider.sysconf("/home/acme/evil")).unwrap();
    let err = provider
        .as_tenant(
            &who,
            &Request::EnsureDirs {
                dirs: vec!["evil/x".parse().unwrap()],
                mode: DirMode::Public,
            },
        )
        .unwrap_err();
    assert_eq!(err.code(), "tenant_path_unsafe");
}

/// The streaming requests take the same in-process path (the dev node without root):
/// an archive of the home out, and back in.
#[test]
fn sim_without_root_archives_and_extracts_in_process() {
    let dir = tempfile::tempdir().unwrap();
    let provider = provider_on(dir.path(), SimExecutor::new(vec![]).acting_as_root(false));
    let me = rustix::process::geteuid().as_raw();
    let my_gid = rustix::process::getegid().as_raw();
    let home = provider.sysconf("/home/acme");
    std::fs::create_dir_all(home.join("web")).unwrap();
    std::fs::write(home.join("web/index.html"), b"hello").unwrap();
    let who = Identity::new(
        if me == 0 { 64_200 } else { me },
        if my_gid == 0 { 64_200 } else { my_gid },
        vec![],
        "/home/acme".into(),
    )
    .unwrap();
    let mut archive = Vec::new();
    let counts = provider.archive_home(&who, &mut archive).unwrap();
    assert_eq!((counts.files, counts.dirs, counts.bytes), (1, 1, 5));
    std::fs::remove_dir_all(home.join("web")).unwrap();
    let written = provider.extract_home(&who, &mut &archive[..]).unwrap();
    assert_eq!(written.files, 1);
    assert_eq!(
        std::fs::read(home.join("web/index.html")).unwrap(),
        b"hello"
    );
    let records = audit_records(&provider).unwrap();
    assert_eq!(records.len(), 2);
    assert!(
        records
            .iter()
            .all(|r| r.backend == "sim" && r.status == Some(0))
    );
    // A hostile archive fails the same way in-process.
    let mut builder = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Link);
    header.as_old_mut().name[..6].copy_from_slice(b"shadow");
    header.as_old_mut().linkname[..11].copy_from_slice(b"/etc/shadow");
    header.set_cksum();
    builder.append(&header, &[][..]).unwrap();
    let hostile = builder.into_inner().unwrap();
    let err = provider.extract_home(&who, &mut &hostile[..]).unwrap_err();
    assert_eq!(err.code(), "tenant_archive_invalid");
}

/// A simulation whose provider does not act as root removes no file, not even one the uid it
/// is asked about owns. Run as root, the file is first given to a tenant's uid (root's files
/// are never a tenant's); run as another user, the file is already that user's.
#[test]
fn a_sim_without_root_removes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let provider = provider_on(dir.path(), SimExecutor::new(vec![]).acting_as_root(false));
    let tmp = provider.sysconf("/tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mine = tmp.join("mine");
    std::fs::write(&mine, b"x").unwrap();
    let me = rustix::process::geteuid().as_raw();
    let owner = if me == 0 { 2_000_000_111 } else { me };
    std::os::unix::fs::lchown(&mine, Some(owner), None).unwrap();
    assert_eq!(std::fs::metadata(&mine).unwrap().uid(), owner);
    let done = provider.remove_files_of_uid(owner).unwrap();
    assert_eq!((done.removed, done.visited, done.complete), (0, 0, true));
    assert!(mine.exists());
}

/// A simulated tenant outside the band, or a provider that is not root, never starts a worker
/// that could signal this machine's processes.
#[test]
fn sim_signals_only_uids_of_the_band_unknown_to_this_machine() {
    let dir = tempfile::tempdir().unwrap();
    let acting_as_root = |root: bool| {
        provider_on(dir.path(), SimExecutor::new(vec![]).acting_as_root(root))
            .with_tenant_worker("/nonexistent/layerone-tenant")
    };
    let provider = acting_as_root(true);
    let who = |uid| Identity::new(uid, uid, vec![], "/home/acme".into()).unwrap();
    for uid in [1000, 65_533, 1_999_999_999, 2_100_000_000] {
        assert_eq!(
            provider.terminate_tenant_processes(&who(uid)).unwrap(),
            Terminated::default()
        );
    }
    assert!(audit_records(&provider).unwrap().is_empty());
    let provider = acting_as_root(false);
    assert_eq!(
        provider
            .terminate_tenant_processes(&who(2_000_000_000))
            .unwrap(),
        Terminated::default()
    );
    // Root, in the band: the worker is started (here a missing one, which fails).
    let provider = acting_as_root(true);
    let err = provider
        .terminate_tenant_processes(&who(2_000_000_001))
        .unwrap_err();
    assert_eq!(err.code(), "program_spawn_failed", "{err:?}");
    assert_eq!(audit_records(&provider).unwrap().len(), 1);
}
