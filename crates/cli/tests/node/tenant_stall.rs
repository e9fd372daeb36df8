//! A tenant cannot stall the node for the others (ARCHITECTURE.md invariant 15; issue 12, point 5).
//!
//! The tenant worker runs with the tenant's uid, so the tenant may signal it. These tests do
//! what a tenant can: stop its worker (`kill -STOP`, run as the tenant), stop and continue it
//! over and over, stop its process group. And what the tenant can make happen without a
//! signal, a worker that is slow for as long as it likes: here the test holds the worker
//! with `ptrace` (as root, `PTRACE_SEIZE` + `PTRACE_INTERRUPT`), which its parent cannot see
//! as a stop, the way a worker walking or archiving a huge home looks to the runner.
//!
//! Everything is real: the `layerone-runner` binary as a child process (`--once` or
//! `--watch`), the `layerone-tenant` worker it starts, state.db. As root (the worker drops
//! to the tenant only when root starts it); the worker beside the runner must be built
//! (`cargo build -p tenant`; the workspace test run does).

use crate::common;

use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use common::*;

/// A tenant's job the tests stall: long enough to be found in progress (the worker streams
/// this much of the home out), however fast the machine.
const HOME_BYTES: usize = 24 * 1024 * 1024;

/// How long a test waits for what must happen before it calls the runner stuck. A hang
/// guard, not a measurement: what is proven is the order of events.
const HANG_GUARD: Duration = Duration::from_secs(240);

fn require_root_and_worker() {
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Once,
    Watch,
}

/// Starts the real runner in the background, as the systemd units do (`--once` or `--watch`).
fn spawn_runner(node: &Node, mode: Mode) -> Child {
    #[allow(clippy::disallowed_methods)] // Tests start the real runner binary.
    let mut cmd = std::process::Command::new(&*RUNNER);
    cmd.arg(match mode {
        Mode::Once => "--once",
        Mode::Watch => "--watch",
    })
    .arg("--data-dir")
    .arg(node.layout.root())
    .arg("--root")
    .arg(node.provider.root())
    .args(["--platform", node.platform.as_str()])
    .args(["--node-id", node.node_id.as_str(), "--log", "warn"]);
    cmd.spawn().expect("the runner binary starts")
}

/// Two tenants with accounts, the first with a large home.
fn two_tenants() -> (Node, Tenant, Tenant) {
    require_root_and_worker();
    let mut node = Node::new();
    node.submit(&ensure_account(1, 10, "stall1"));
    node.submit(&ensure_account(2, 11, "calm1"));
    node.pass();
    let a = Tenant::of(&node, 10, "stall1");
    let b = Tenant::of(&node, 11, "calm1");
    // Incompressible and not sparse, so every byte crosses the pipe and the compressor.
    let mut block = vec![0u8; 1024 * 1024];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for chunk in block.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
    }
    let path = node.path("/home/stall1/big.bin");
    {
        use std::io::Write;
        let mut file = std::fs::File::create(&path).unwrap();
        for i in 0..HOME_BYTES / block.len() {
            block[0] = i as u8;
            file.write_all(&block).unwrap();
        }
    }
    std::os::unix::fs::chown(&path, Some(a.uid), Some(a.gid)).unwrap();
    (node, a, b)
}

struct Tenant {
    account: u64,
    uid: u32,
    gid: u32,
}

impl Tenant {
    fn of(node: &Node, account: u64, name: &str) -> Tenant {
        let user = node.provider.lookup_user(name).unwrap().unwrap();
        Tenant {
            account,
            uid: user.uid,
            gid: user.gid,
        }
    }

    /// Runs `kill ARGS` as this tenant: what the tenant itself may do to its processes.
    fn kill(&self, args: &[&str]) -> ExitStatus {
        #[allow(clippy::disallowed_methods)] // The test plays the tenant with the system's kill.
        std::process::Command::new("/bin/kill")
            .args(args)
            .uid(self.uid)
            .gid(self.gid)
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap()
    }
}

/// A job's state, its error code and its timings, read as the API reads state.db (read-only,
/// beside the running runner).
#[derive(Debug)]
struct Job {
    state: String,
    code: Option<String>,
    started_at: Option<i64>,
    finished_at: Option<i64>,
}

fn job(node: &Node, req: u64) -> Option<Job> {
    let conn = rusqlite::Connection::open_with_flags(
        node.layout.state_db(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .ok()?;
    conn.busy_timeout(Duration::from_secs(2)).unwrap();
    conn.query_row(
        "SELECT state, error, started_at, finished_at FROM jobs WHERE request_id = ?1",
        [id(req)],
        |r| {
            let error: Option<String> = r.get(1)?;
            Ok(Job {
                state: r.get(0)?,
                code: error.map(|e| {
                    serde_json::from_str::<serde_json::Value>(&e).unwrap()["code"]
                        .as_str()
                        .unwrap()
                        .to_owned()
                }),
                started_at: r.get(2)?,
                finished_at: r.get(3)?,
            })
        },
    )
    .ok()
}

fn state_of(node: &Node, req: u64) -> String {
    job(node, req).map_or_else(|| "absent".to_owned(), |j| j.state)
}

/// Waits until `done` holds, failing the test past [`HANG_GUARD`] with `what`.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let guard = Instant::now() + HANG_GUARD;
    while !done() {
        assert!(Instant::now() < guard, "stuck: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The runner's `layerone-tenant` child once it runs as `uid` (after its drop).
fn worker_of(runner: &mut Child, uid: u32) -> i32 {
    let parent = runner.id().to_string();
    let guard = Instant::now() + HANG_GUARD;
    loop {
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
                continue;
            };
            let field = |name: &str| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(name))
                    .and_then(|v| v.split_whitespace().next())
                    .unwrap_or("")
                    .to_owned()
            };
            if field("Name:") == provider::TENANT_WORKER_NAME
                && field("PPid:") == parent
                && field("Uid:") == uid.to_string()
            {
                return entry.file_name().to_str().unwrap().parse().unwrap();
            }
        }
        assert!(
            runner.try_wait().unwrap().is_none(),
            "the runner ended before its worker was seen"
        );
        assert!(Instant::now() < guard, "the worker never ran");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The process's state letter in /proc (`None` once it is gone).
fn proc_state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

fn is_gone(pid: i32) -> bool {
    !Path::new(&format!("/proc/{pid}")).exists()
}

fn wait_for_exit(runner: &mut Child) -> ExitStatus {
    let guard = Instant::now() + HANG_GUARD;
    loop {
        if let Some(status) = runner.try_wait().unwrap() {
            return status;
        }
        if Instant::now() >= guard {
            let _ = runner.kill();
            panic!("the runner did not finish: something held it");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// A worker held by the test through `ptrace`, as root: in a trace stop, which only the
/// tracer is told about. Its parent, the runner, sees a worker that simply takes its time.
/// Released (detached) on drop; every call comes from the thread that attached.
struct Held {
    pid: i32,
}

impl Held {
    fn hold(pid: i32) -> Held {
        // SAFETY: ptrace and waitpid on a pid the test found; no memory is passed.
        unsafe {
            assert_eq!(libc::ptrace(libc::PTRACE_SEIZE, pid, 0, 0), 0, "seize");
            assert_eq!(
                libc::ptrace(libc::PTRACE_INTERRUPT, pid, 0, 0),
                0,
                "interrupt"
            );
            let mut status = 0;
            assert_eq!(libc::waitpid(pid, &mut status, libc::__WALL), pid);
            assert!(libc::WIFSTOPPED(status), "held: {status:#x}");
        }
        Held { pid }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // SAFETY: as above; the tracee is in its trace stop.
        unsafe {
            libc::ptrace(libc::PTRACE_DETACH, self.pid, 0, 0);
        }
    }
}

/// The stopped-worker attack: the tenant stops its own worker in the middle of a backup.
/// The job fails at once with `program_stopped` (not at its 30-minute deadline), the worker
/// is gone, and the other tenant's jobs complete: its `ensure_ssh_key` in the main lane and
/// its usage walk, queued in the long lane behind the stopped backup.
#[test]
fn a_tenant_stopping_its_worker_fails_that_job_at_once_and_other_tenants_jobs_complete() {
    let (mut node, a, b) = two_tenants();
    node.submit(&create_backup(20, 40, a.account));
    node.submit(&ensure_key(21, 41, b.account));
    node.submit(&account_op(22, "observe_account_usage", b.account));
    let mut runner = spawn_runner(&node, Mode::Once);
    let worker = worker_of(&mut runner, a.uid);
    assert!(a.kill(&["-STOP", &worker.to_string()]).success());
    let stopped_at = now_ms();

    wait_until("the stopped backup fails", || {
        job(&node, 20).is_some_and(|j| j.state == "failed")
    });
    let failed = job(&node, 20).unwrap();
    assert_eq!(
        failed.code.as_deref(),
        Some("program_stopped"),
        "{failed:?}"
    );
    assert!(is_gone(worker), "the stopped worker is still there");
    eprintln!(
        "stop noticed and the job failed {} ms after the tenant's kill returned",
        failed.finished_at.unwrap() - stopped_at
    );

    assert!(wait_for_exit(&mut runner).success());
    assert_eq!(state_of(&node, 21), "succeeded");
    assert_eq!(state_of(&node, 22), "succeeded");
    // The account is still whole: the next backup, not stopped, succeeds.
    node.submit(&create_backup(23, 42, a.account));
    node.pass();
    assert_eq!(state_of(&node, 23), "succeeded");
}

/// Stopping and continuing the worker over and over (so that it is seldom seen stopped), or
/// stopping its whole process group, is noticed the same way.
#[test]
fn stopping_and_continuing_the_worker_or_stopping_its_group_is_noticed_too() {
    let (mut node, a, b) = two_tenants();
    // Stop and continue, again and again, each stop let take effect before the continue.
    node.submit(&create_backup(20, 40, a.account));
    node.submit(&ensure_key(21, 41, b.account));
    let mut runner = spawn_runner(&node, Mode::Once);
    let worker = worker_of(&mut runner, a.uid);
    let pid = worker.to_string();
    for _ in 0..100 {
        if !a.kill(&["-STOP", &pid]).success() {
            break;
        }
        while !matches!(proc_state(worker), Some('T' | 'Z' | 'X') | None) {
            std::thread::yield_now();
        }
        if !a.kill(&["-CONT", &pid]).success() {
            break;
        }
    }
    assert!(wait_for_exit(&mut runner).success());
    let failed = job(&node, 20).unwrap();
    assert_eq!(
        failed.code.as_deref(),
        Some("program_stopped"),
        "{failed:?}"
    );
    assert!(is_gone(worker));
    assert_eq!(state_of(&node, 21), "succeeded");

    // The process group: `kill -STOP -- -PGID`, the worker being its group's leader.
    node.submit(&create_backup(22, 42, a.account));
    node.submit(&ensure_key(23, 43, b.account));
    let mut runner = spawn_runner(&node, Mode::Once);
    let worker = worker_of(&mut runner, a.uid);
    assert!(a.kill(&["-STOP", "--", &format!("-{worker}")]).success());
    assert!(wait_for_exit(&mut runner).success());
    let failed = job(&node, 22).unwrap();
    assert_eq!(
        failed.code.as_deref(),
        Some("program_stopped"),
        "{failed:?}"
    );
    assert!(is_gone(worker));
    assert_eq!(state_of(&node, 23), "succeeded");
}

/// A long job does not hold other tenants' jobs: while one tenant's backup worker is held
/// (slow, not stopped: the runner cannot tell it from a huge home), another tenant's jobs
/// submitted meanwhile complete, under `--once` (which goes on serving while its long lane
/// works) and under `--watch`. Released, the backup completes too.
fn a_long_job_does_not_hold_another_tenants_jobs(mode: Mode) {
    let (mut node, a, b) = two_tenants();
    node.submit(&create_backup(20, 40, a.account));
    let mut runner = spawn_runner(&node, mode);
    let held = Held::hold(worker_of(&mut runner, a.uid));

    node.submit(&ensure_key(21, 41, b.account));
    node.submit(&ensure_domain(22, 42, b.account, "calm.example.com"));
    wait_until(
        "the other tenant's jobs complete beside the held backup",
        || state_of(&node, 21) == "succeeded" && state_of(&node, 22) == "succeeded",
    );
    assert_eq!(
        state_of(&node, 20),
        "running",
        "the held backup is still running"
    );
    assert_eq!(
        proc_state(held.pid),
        Some('t'),
        "the worker is held, not gone"
    );
    assert!(
        node.path("/home/calm1/.ssh/authorized_keys").exists(),
        "the key is on disk"
    );

    drop(held);
    wait_until("the released backup completes", || {
        state_of(&node, 20) == "succeeded"
    });
    match mode {
        Mode::Once => assert!(wait_for_exit(&mut runner).success()),
        Mode::Watch => {
            rustix::process::kill_process(
                rustix::process::Pid::from_child(&runner),
                rustix::process::Signal::TERM,
            )
            .unwrap();
            wait_for_exit(&mut runner);
        }
    }
    node.check_converged();
}

#[test]
fn a_long_job_does_not_hold_another_tenants_jobs_under_once() {
    a_long_job_does_not_hold_another_tenants_jobs(Mode::Once);
}

#[test]
fn a_long_job_does_not_hold_another_tenants_jobs_under_watch() {
    a_long_job_does_not_hold_another_tenants_jobs(Mode::Watch);
}

/// Per account, admission order holds across the lanes: the held tenant's own later jobs
/// wait for its backup and then run, in order, while another tenant's jobs, and a new
/// account's `ensure_account` then `ensure_web_domain`, run meanwhile.
#[test]
fn an_accounts_later_jobs_wait_for_its_long_job_and_then_run_in_order() {
    let (mut node, a, b) = two_tenants();
    node.submit(&create_backup(20, 40, a.account));
    node.submit(&ensure_domain(21, 41, a.account, "stall.example.com"));
    node.submit(&ensure_key(22, 42, a.account));
    node.submit(&ensure_key(23, 43, b.account));
    let mut runner = spawn_runner(&node, Mode::Once);
    let held = Held::hold(worker_of(&mut runner, a.uid));

    node.submit(&ensure_account(24, 12, "fresh1"));
    node.submit(&ensure_domain(25, 44, 12, "fresh.example.com"));
    wait_until("the other accounts' jobs complete", || {
        [23, 24, 25]
            .iter()
            .all(|&req| state_of(&node, req) == "succeeded")
    });
    // The held account's later jobs have not started: they wait for its backup.
    for req in [21, 22] {
        let later = job(&node, req).unwrap();
        assert_eq!(later.state, "queued", "job {req}: {later:?}");
    }
    assert!(!node.path("/home/stall1/web/stall.example.com").exists());
    assert!(
        node.path("/home/fresh1/web/fresh.example.com/public_html")
            .is_dir()
    );

    drop(held);
    assert!(wait_for_exit(&mut runner).success());
    let backup = job(&node, 20).unwrap();
    let domain = job(&node, 21).unwrap();
    let key = job(&node, 22).unwrap();
    for (req, j) in [(20, &backup), (21, &domain), (22, &key)] {
        assert_eq!(j.state, "succeeded", "job {req}: {j:?}");
    }
    assert!(domain.started_at.unwrap() >= backup.finished_at.unwrap());
    assert!(key.started_at.unwrap() >= domain.finished_at.unwrap());
    let docroot = node.path("/home/stall1/web/stall.example.com/public_html");
    assert_eq!(std::fs::metadata(docroot).unwrap().uid(), a.uid);
    node.check_converged();
}

/// A long job whose runner died (killed while the worker was held) is found `running` by the
/// next runner's long lane and run again; nothing else waited for it.
#[test]
fn a_long_job_of_a_killed_runner_is_run_again_by_the_next_one() {
    let (mut node, a, b) = two_tenants();
    node.submit(&create_backup(20, 40, a.account));
    let mut runner = spawn_runner(&node, Mode::Once);
    let worker = worker_of(&mut runner, a.uid);
    let held = Held::hold(worker);
    runner.kill().unwrap();
    runner.wait().unwrap();
    drop(held);
    assert_eq!(state_of(&node, 20), "running");
    // The orphaned worker finds its reader gone and ends; the next runner does not wait.
    node.submit(&ensure_key(21, 41, b.account));
    node.pass();
    assert_eq!(state_of(&node, 21), "succeeded");
    assert_eq!(state_of(&node, 20), "succeeded");
    assert!(job(&node, 20).unwrap().started_at.is_some());
}
