//! `layerone-tenant`: work inside a tenant's home, done as the tenant (docs/design.md section 8).
//!
//! [`Provider::as_tenant`] starts the worker through the one audited `execute` (the deadline
//! of its kind of work, `TenantWork` in `program.rs`; killed at once if it stops; output
//! cap, audit line) with the tenant's identity as arguments, feeds it one typed
//! request on stdin and parses its one typed reply from stdout. The identity comes from the
//! system's passwd and group files ([`Provider::tenant_identity`]); the worker's path is the
//! `layerone-tenant` beside the running executable, or the one configured with
//! [`Provider::with_tenant_worker`]; nothing of either comes from a request. The reply was
//! written by a process running as the tenant, so it is parsed as hostile input: bounded,
//! strictly typed, and checked to answer the request that was sent.
//!
//! # How the worker is started
//!
//! The provider's executor starts it (`executor/`), through the same audited `execute`:
//!
//! - **real executor**: started for real; it drops to the tenant itself (`crates/tenant`,
//!   `sandbox.rs`).
//! - **simulator, provider running as root**: started for real too. The drop is real and
//!   testable as root, and the sysroot's homes are chowned to their tenants.
//! - **simulator, provider not root**: it could not drop to a tenant, so the same request
//!   code runs in-process, as the provider's own user, without the drop. The audit line
//!   says `sim` instead of `real`; [`Provider::tenant_isolation`] says which applies.
//!
//! # In the tenant's slice
//!
//! On a Debian node that runs systemd, the worker runs in a transient scope of the tenant's
//! slice, where its PHP masters, cron jobs and SSH sessions run, under the same limits
//! (`set_account_limits`): a walk of a large home or an archive counts against the tenant,
//! not the node.
//!
//! ```text
//! /usr/bin/systemd-run --scope --quiet --collect --slice=user-<uid>.slice -- <worker> --uid <uid> ...
//! ```
//!
//! `--scope` has systemd put the calling process in a new scope and then executes the
//! worker in it: the same process, so its stdin, stdout, deadline and process-group kill are
//! the worker's own. The worker still starts as root and drops itself. Without systemd (a
//! sandbox root, a container without an init) it is started directly, and so is the kill of
//! the tenant's processes (`TerminateProcesses`): the node acting against a tenant, perhaps
//! one at its limits, is not held to them. A worker in a scope is no longer in the runner's
//! cgroup: its deadline still kills it (the same process group), a stop of the runner's unit
//! does not.
//!
//! # CloudLinux
//!
//! On the `cloudlinux` profile the worker is started inside the tenant's LVE and CageFS:
//!
//! ```text
//! /bin/lve_suwrapper <uid> <worker> --uid <uid> --gid <gid> --groups <g,...> --home <home>
//! ```
//!
//! `lve_suwrapper LVE_ID COMMAND [ARGS...]` is CloudLinux's tool (package `lve-wrappers`)
//! for root to run a command inside the LVE `LVE_ID`; an account's LVE id is its uid. It
//! keeps the caller's credentials, so the worker still starts as root and drops itself,
//! and its arguments stay a list (no shell). Without `-n` ("without namespace") it also
//! enters the LVE's namespace, where CageFS mounts the user's cage on LVE kernels.
//! The alternatives were considered and not used:
//! - `cagefs_enter_user USER COMMAND` (`/sbin/cagefs_enter_user`, lve-wrappers 0.6+) switches
//!   to the user itself, before the worker could set its own groups, limits and
//!   `no_new_privs`, and is documented with the command as one string;
//! - `cagefs_enter` / `cagefs_enter.proxied` are run by the user, not root.
//!
//! Neither form could be run here (no CloudLinux host): the simulator checks the argv has
//! the documented shape and records it in the audit log. Confirming on a CloudLinux host
//! that the worker then sees the cage (for example that `/etc/passwd` is the cage's) is left
//! to an integration test there.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use tenant::protocol::{ErrorCode, MAX_REPLY_BYTES};
use tenant::wire::decode_reply;
use tenant::{ArchiveCounts, Identity, Reply, Request, TenantError, TenantResult};

use crate::error::ProviderError;
use crate::executor::{Argv, Invocation};
use crate::platform::Platform;
use crate::program::{Program, TenantWork};
use crate::programs::slice_limits::slice_unit;
use crate::provider::Provider;

/// The worker's file name, looked for beside the running executable.
pub const TENANT_WORKER_NAME: &str = "layerone-tenant";

/// The kind of work `request` is, which names its deadline ([`TenantWork::deadline`]).
pub(crate) fn work_of(request: &Request) -> TenantWork {
    match request {
        Request::DiskUsage { .. } => TenantWork::UsageWalk,
        Request::ArchiveHome {} | Request::ExtractHome {} => TenantWork::Archive,
        // Every other request is one short piece of work (a directory, a file, the worker's
        // own state): a request added later gets the short deadline until it is placed here.
        _ => TenantWork::Request,
    }
}

/// How long the worker may take for `request` before it is killed with its process group.
/// (The worker's own CPU limit, `tenant::protocol::limits::CPU`, applies as well.)
fn deadline_of(request: &Request) -> Duration {
    #[cfg(test)]
    if let Some(deadline) = tests::DEADLINE.with(std::cell::Cell::get) {
        return deadline;
    }
    work_of(request).deadline()
}

/// A reply read from a worker: kept up to [`MAX_REPLY_BYTES`], the rest dropped and noted.
#[derive(Debug, Default)]
struct CappedBuffer {
    bytes: Vec<u8>,
    truncated: bool,
}

impl Write for CappedBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = MAX_REPLY_BYTES.saturating_sub(self.bytes.len());
        self.bytes.extend_from_slice(&buf[..buf.len().min(room)]);
        self.truncated |= buf.len() > room;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// How tenant work is isolated under the current configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TenantIsolation {
    /// A real `layerone-tenant` process that drops to the tenant.
    Worker { path: PathBuf },
    /// The request code runs in this process without any drop (Sim, not root).
    InProcess,
}

impl Provider {
    /// Uses the worker at `path` instead of the one beside the running executable.
    ///
    /// # Panics
    /// If `path` is not absolute (programs are never looked up in a search path).
    pub fn with_tenant_worker(mut self, path: impl Into<PathBuf>) -> Provider {
        let path = path.into();
        assert!(
            path.is_absolute(),
            "the tenant worker path must be absolute, got {}",
            path.display()
        );
        self.tenant_worker = Some(path);
        self
    }

    /// How [`Provider::as_tenant`] will run.
    pub fn tenant_isolation(&self) -> TenantIsolation {
        match self.program_path(Program::TenantWorker) {
            // On CloudLinux the Sim's lve_suwrapper runs the worker under the same rule.
            Some(path) if self.runs_real(Program::TenantWorker) => TenantIsolation::Worker { path },
            _ => TenantIsolation::InProcess,
        }
    }

    /// The tenant `username` as the worker should become it: uid, primary gid, the groups
    /// whose member list names it, and its home; `None` if there is no such user.
    pub fn tenant_identity(&self, username: &str) -> Result<Option<Identity>, ProviderError> {
        let Some(user) = self.lookup_user(username)? else {
            return Ok(None);
        };
        let groups = self.supplementary_groups(username)?;
        Identity::new(user.uid, user.gid, groups, user.home)
            .map(Some)
            .map_err(tenant_error)
    }

    /// Runs `request` as the tenant `who` (whose `home` is a system path, mapped here under
    /// the provider's root) and returns its result.
    pub fn as_tenant(
        &self,
        who: &Identity,
        request: &Request,
    ) -> Result<TenantResult, ProviderError> {
        // Checked before the home is mapped: the fields are public, and `sysconf` treats a
        // relative or `..` path as a programmer error.
        let who = Identity::new(who.uid, who.gid, who.groups.clone(), who.home.clone())
            .map_err(tenant_error)?;
        let mapped = Identity::new(who.uid, who.gid, who.groups, self.sysconf(&who.home))
            .map_err(tenant_error)?;
        let stdin = serde_json::to_vec(request).expect("a request always serializes");
        let (program, argv) = self.tenant_argv(&mapped, request)?;
        let output = self.execute(program, &argv, Some(&stdin), deadline_of(request))?;
        if output.stdout_truncated {
            return Err(reply_invalid("the reply was cut at the output cap"));
        }
        interpret_reply(&output.stdout, request, mapped.home)
    }

    /// Streams a tar of the tenant's home, made by the worker as the tenant, into `output`
    /// (see `tenant::archive`); returns what it holds.
    pub fn archive_home(
        &self,
        who: &Identity,
        output: &mut (dyn Write + Send),
    ) -> Result<ArchiveCounts, ProviderError> {
        match self.as_tenant_stream(who, &Request::ArchiveHome {}, &mut std::io::empty(), output)? {
            TenantResult::ArchiveHome(counts) => Ok(counts),
            other => Err(reply_invalid(format!(
                "a {} result answered archive_home",
                other.name()
            ))),
        }
    }

    /// Restores the tar read from `input` beneath the tenant's home, done by the worker as
    /// the tenant, which refuses any entry that could reach outside the home.
    pub fn extract_home(
        &self,
        who: &Identity,
        input: &mut (dyn Read + Send),
    ) -> Result<ArchiveCounts, ProviderError> {
        match self.as_tenant_stream(who, &Request::ExtractHome {}, input, &mut std::io::sink())? {
            TenantResult::ExtractHome(counts) => Ok(counts),
            other => Err(reply_invalid(format!(
                "a {} result answered extract_home",
                other.name()
            ))),
        }
    }

    /// Runs a streaming request: the request line then `input` on the worker's stdin, its
    /// stdout into `output` when the request writes a stream. Its reply is then the last
    /// line of stderr; otherwise it is stdout, read into a bounded buffer.
    fn as_tenant_stream(
        &self,
        who: &Identity,
        request: &Request,
        input: &mut (dyn Read + Send),
        output: &mut (dyn Write + Send),
    ) -> Result<TenantResult, ProviderError> {
        let who = Identity::new(who.uid, who.gid, who.groups.clone(), who.home.clone())
            .map_err(tenant_error)?;
        let mapped = Identity::new(who.uid, who.gid, who.groups, self.sysconf(&who.home))
            .map_err(tenant_error)?;
        let mut head = serde_json::to_vec(request).expect("a request always serializes");
        head.push(b'\n');
        let mut stdin = (&head[..]).chain(input);
        let (program, argv) = self.tenant_argv(&mapped, request)?;
        // Audited as the worker runs: under a simulation as root, lve_suwrapper's model
        // starts the real worker, and the line says so.
        let real = self.runs_real(Program::TenantWorker);
        let path = self
            .program_path(program)
            .ok_or(ProviderError::Unsupported {
                program,
                platform: self.platform,
            })?;
        // The reply of a request that reads a stream is all of stdout.
        let mut reply_out = CappedBuffer::default();
        let sink: &mut (dyn Write + Send) = if request.writes_stream() {
            output
        } else {
            &mut reply_out
        };
        let call = Invocation {
            program,
            path: &path,
            argv: &argv,
            timeout: deadline_of(request),
        };
        let out = self.audited(program, &path, &argv, real, || {
            self.executor.run_streaming(self, &call, &mut stdin, sink)
        })?;
        let reply_bytes = if request.writes_stream() {
            // The last line of stderr: a panic message may come before it.
            let text = &out.stderr;
            let start = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            text[start..].to_vec()
        } else {
            if reply_out.truncated {
                return Err(reply_invalid("the reply was cut at the output cap"));
            }
            reply_out.bytes
        };
        interpret_reply(&reply_bytes, request, mapped.home)
    }

    /// The program to start for `request` and its argv: the worker itself; on a Debian node
    /// that runs systemd, the worker in a transient scope of the tenant's slice, except for
    /// the kill of the tenant's processes (the node acting against the tenant is not held to
    /// the tenant's limits); on CloudLinux the worker wrapped by `lve_suwrapper` (see the
    /// module documentation).
    pub(crate) fn tenant_argv(
        &self,
        who: &Identity,
        request: &Request,
    ) -> Result<(Program, Argv), ProviderError> {
        let mut argv = Argv::new();
        let program = match self.platform {
            Platform::Debian
                if self.booted_with_systemd()
                    && !matches!(request, Request::TerminateProcesses { .. }) =>
            {
                argv.arg("--scope")
                    .arg("--quiet")
                    .arg("--collect")
                    .arg(format!("--slice={}", slice_unit(who.uid)))
                    .arg("--")
                    .arg(self.worker_path()?);
                Program::SystemdRun
            }
            Platform::Debian => Program::TenantWorker,
            Platform::CloudLinux => {
                argv.arg(who.uid.to_string()).arg(self.worker_path()?);
                Program::LveSuwrapper
            }
        };
        for arg in who.to_args() {
            argv.arg(arg);
        }
        Ok((program, argv))
    }

    /// The tenant worker's path ([`Provider::program_path`]), or `unsupported` without one.
    fn worker_path(&self) -> Result<PathBuf, ProviderError> {
        self.program_path(Program::TenantWorker)
            .ok_or(ProviderError::Unsupported {
                program: Program::TenantWorker,
                platform: self.platform,
            })
    }

    /// The absolute path the provider runs `program` from: `Program::path` for its platform,
    /// except that the tenant worker is the configured one or the one beside the running
    /// executable. `None` if the program does not exist on the platform (or the running
    /// executable cannot be determined).
    pub fn program_path(&self, program: Program) -> Option<PathBuf> {
        match program {
            Program::TenantWorker => self.tenant_worker.clone().or_else(|| {
                let exe = std::env::current_exe().ok()?;
                Some(exe.parent()?.join(TENANT_WORKER_NAME))
            }),
            other => other.path(self.platform).map(PathBuf::from),
        }
    }

    /// Whether the executor starts `program` as a process ([`Executor::runs_real`]).
    ///
    /// [`Executor::runs_real`]: crate::Executor::runs_real
    pub(crate) fn runs_real(&self, program: Program) -> bool {
        self.executor.runs_real(program)
    }

    /// Whether systemd is this node's init (`sd_booted(3)`'s test: `/run/systemd/system`
    /// exists): then each tenant has a slice of its own to run in.
    pub fn booted_with_systemd(&self) -> bool {
        self.sysconf("/run/systemd/system").is_dir()
    }
}

/// The worker's reply to `request`: its result, or its error as the provider's (a path the
/// worker refused beneath `home` is a `TenantPath`).
fn interpret_reply(
    bytes: &[u8],
    request: &Request,
    home: PathBuf,
) -> Result<TenantResult, ProviderError> {
    match decode_reply(bytes) {
        Ok(Reply::Ok(result)) if result.name() == request.name() => Ok(result),
        Ok(Reply::Ok(result)) => Err(reply_invalid(format!(
            "a {} result answered a {} request",
            result.name(),
            request.name()
        ))),
        Ok(Reply::Error(e)) if e.code == ErrorCode::PathUnsafe => Err(ProviderError::TenantPath {
            path: home,
            reason: e.message,
        }),
        Ok(Reply::Error(e)) => Err(tenant_error(e)),
        Err(why) => Err(reply_invalid(why)),
    }
}

pub(crate) fn tenant_error(e: TenantError) -> ProviderError {
    ProviderError::Tenant {
        code: e.code,
        message: e.message,
    }
}

fn reply_invalid(why: impl Into<String>) -> ProviderError {
    ProviderError::TenantReply { reason: why.into() }
}

#[cfg(test)]
mod tests {
    use tenant::Request;

    use super::*;
    use crate::audit::read_audit_log;
    use crate::provider::test_provider;

    fn audit_records(provider: &Provider) -> Result<Vec<crate::AuditRecord>, ProviderError> {
        read_audit_log(provider.audit_dir())
    }

    thread_local! {
        /// A deadline for every request made on this thread, instead of its kind's: the
        /// tests of the deadline cannot wait for the real ones.
        pub(super) static DEADLINE: std::cell::Cell<Option<Duration>> =
            const { std::cell::Cell::new(None) };
    }

    /// The real worker, built beside the test binary's directory (`target/debug`).
    fn real_worker() -> PathBuf {
        assert!(
            rustix::process::geteuid().is_root(),
            "the worker drops to a tenant only when root starts it (CI runs the suite as root)"
        );
        let exe = std::env::current_exe().unwrap();
        let worker = exe
            .parent()
            .and_then(|deps| deps.parent())
            .unwrap()
            .join(TENANT_WORKER_NAME);
        assert!(
            worker.exists(),
            "{} is missing: build it with `cargo build -p tenant` (the workspace test run does)",
            worker.display()
        );
        worker
    }

    const TENANT_UID: u32 = 64_231;

    /// A provider that starts the real worker, and a tenant whose home it may enter.
    fn real_worker_fixture() -> (tempfile::TempDir, Provider, Identity) {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let provider =
            test_provider(Platform::Debian, dir.path()).with_tenant_worker(real_worker());
        let home = provider.sysconf("/home/acme");
        std::fs::create_dir_all(&home).unwrap();
        // Every directory above the home is traversable by the tenant, as on a real system.
        let mut above = home.parent();
        while let Some(path) = above {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
            if path == dir.path() {
                break;
            }
            above = path.parent();
        }
        std::os::unix::fs::chown(&home, Some(TENANT_UID), Some(TENANT_UID)).unwrap();
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o750)).unwrap();
        let who = Identity::new(TENANT_UID, TENANT_UID, vec![], "/home/acme".into()).unwrap();
        (dir, provider, who)
    }

    /// An archive that arrives one byte every 20 ms: a worker restoring it waits on its
    /// stdin, neither stopped nor done, for as long as the test needs. Once the worker is
    /// gone the next byte meets EPIPE and the copy ends.
    struct Trickle;
    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            std::thread::sleep(Duration::from_millis(20));
            buf[0] = b'a';
            Ok(1)
        }
    }

    /// The pid of this process's child `layerone-tenant` once it runs as the tenant.
    fn worker_running_as_the_tenant() -> rustix::process::Pid {
        let me = std::process::id().to_string();
        for _ in 0..10_000 {
            for entry in std::fs::read_dir("/proc").unwrap().flatten() {
                let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
                    continue;
                };
                let field = |name: &str| {
                    status
                        .lines()
                        .find_map(|l| l.strip_prefix(name))
                        .map(|v| v.split_whitespace().next().unwrap_or("").to_owned())
                };
                if field("Name:").as_deref() == Some(TENANT_WORKER_NAME)
                    && field("PPid:").as_deref() == Some(me.as_str())
                    && field("Uid:") == Some(TENANT_UID.to_string())
                {
                    let pid: i32 = entry.file_name().to_str().unwrap().parse().unwrap();
                    return rustix::process::Pid::from_raw(pid).unwrap();
                }
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        panic!("the worker never ran as the tenant");
    }

    fn is_gone(pid: rustix::process::Pid) -> bool {
        !std::path::Path::new(&format!("/proc/{}", pid.as_raw_nonzero())).exists()
    }

    /// The tenant can signal its own worker. Stopping it, stopping and continuing it, or
    /// stopping its process group is noticed at once: the worker is killed and the request
    /// fails `program_stopped`, long before the deadline (set to ten minutes here).
    #[test]
    fn a_stopped_tenant_worker_is_killed_at_once_and_fails_program_stopped() {
        use rustix::process::{Signal, kill_process, kill_process_group};
        type Attack = fn(rustix::process::Pid);
        let attacks: [(&str, Attack); 3] = [
            ("SIGSTOP", |pid| kill_process(pid, Signal::STOP).unwrap()),
            ("SIGSTOP then SIGCONT", |pid| {
                kill_process(pid, Signal::STOP).unwrap();
                // A SIGCONT that overtakes the stop before the worker handled it means the
                // worker never stopped: wait for the stop to happen, then continue it.
                let stat = format!("/proc/{}/stat", pid.as_raw_nonzero());
                while std::fs::read_to_string(&stat).is_ok_and(|text| {
                    !matches!(
                        text.rsplit_once(')')
                            .and_then(|(_, r)| r.split_whitespace().next()),
                        Some("T" | "Z" | "X")
                    )
                }) {
                    std::thread::yield_now();
                }
                let _ = kill_process(pid, Signal::CONT);
            }),
            ("SIGSTOP to the process group", |pid| {
                kill_process_group(pid, Signal::STOP).unwrap()
            }),
        ];
        for (name, attack) in attacks {
            let (_dir, provider, who) = real_worker_fixture();
            let (result, pid, noticed) = std::thread::scope(|scope| {
                let call = scope.spawn(|| {
                    DEADLINE.with(|d| d.set(Some(Duration::from_secs(600))));
                    provider.extract_home(&who, &mut Trickle)
                });
                let pid = worker_running_as_the_tenant();
                let attacked = std::time::Instant::now();
                attack(pid);
                let result = call.join().unwrap();
                (result, pid, attacked.elapsed())
            });
            let err = result.unwrap_err();
            assert_eq!(err.code(), "program_stopped", "{name}: {err}");
            assert!(is_gone(pid), "{name}: the stopped worker is still there");
            eprintln!("{name}: noticed and killed in {noticed:?}");
            let records = audit_records(&provider).unwrap();
            assert_eq!(
                records.last().unwrap().error.as_deref(),
                Some("program_stopped")
            );
        }
    }

    /// A worker that is neither stopped nor done (here it waits for an archive that trickles
    /// in) is killed at its deadline with its process group.
    #[test]
    fn a_hung_tenant_worker_is_killed_at_its_deadline() {
        let (_dir, provider, who) = real_worker_fixture();
        DEADLINE.with(|d| d.set(Some(Duration::from_millis(500))));
        let err = provider.extract_home(&who, &mut Trickle).unwrap_err();
        assert_eq!(err.code(), "program_timeout", "{err}");
        let me = std::process::id().to_string();
        let workers_left = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read_to_string(e.path().join("status")).ok())
            .filter(|status| {
                status
                    .lines()
                    .any(|l| l.trim_end() == format!("Name:\t{TENANT_WORKER_NAME}"))
                    && status
                        .lines()
                        .any(|l| l.split_whitespace().eq(["PPid:", me.as_str()]))
            })
            .count();
        assert_eq!(workers_left, 0, "the hung worker outlived its deadline");
    }

    #[test]
    fn every_kind_of_tenant_work_has_its_deadline() {
        assert_eq!(work_of(&Request::Whoami {}), TenantWork::Request);
        assert_eq!(
            work_of(&Request::DiskUsage { budget_ms: None }),
            TenantWork::UsageWalk
        );
        assert_eq!(work_of(&Request::ArchiveHome {}), TenantWork::Archive);
        assert_eq!(work_of(&Request::ExtractHome {}), TenantWork::Archive);
        // A usage walk ends itself at its budget, well before it would be killed.
        let budget = Duration::from_millis(u64::from(tenant::protocol::DU_MAX_BUDGET_MS));
        assert!(TenantWork::UsageWalk.deadline() > budget * 2);
        assert!(TenantWork::Request.deadline() < TenantWork::UsageWalk.deadline());
        assert!(TenantWork::UsageWalk.deadline() < TenantWork::Archive.deadline());
    }

    #[test]
    fn the_worker_is_found_beside_the_running_executable_unless_configured() {
        let dir = tempfile::tempdir().unwrap();
        let provider = test_provider(Platform::Debian, dir.path());
        let exe = std::env::current_exe().unwrap();
        assert_eq!(
            provider.program_path(Program::TenantWorker),
            Some(exe.parent().unwrap().join(TENANT_WORKER_NAME))
        );
        let provider = provider.with_tenant_worker("/opt/layerone/bin/layerone-tenant");
        assert_eq!(
            provider.program_path(Program::TenantWorker),
            Some(PathBuf::from("/opt/layerone/bin/layerone-tenant"))
        );
    }

    #[test]
    fn cloudlinux_wraps_the_worker_in_lve_suwrapper_with_the_tenants_uid() {
        let dir = tempfile::tempdir().unwrap();
        let provider = test_provider(Platform::CloudLinux, dir.path())
            .with_tenant_worker("/usr/libexec/layerone-tenant");
        let who = Identity::new(1234, 1235, vec![33], "/home/acme".into()).unwrap();
        let (program, argv) = provider.tenant_argv(&who, &Request::Whoami {}).unwrap();
        assert_eq!(program, Program::LveSuwrapper);
        assert_eq!(
            argv.for_audit(),
            [
                "1234",
                "/usr/libexec/layerone-tenant",
                "--uid",
                "1234",
                "--gid",
                "1235",
                "--groups",
                "33",
                "--home",
                "/home/acme"
            ]
        );
        let debian = test_provider(Platform::Debian, dir.path());
        let (program, argv) = debian.tenant_argv(&who, &Request::Whoami {}).unwrap();
        assert_eq!(program, Program::TenantWorker);
        assert_eq!(argv.for_audit()[0], "--uid");
    }

    #[test]
    fn under_systemd_the_worker_runs_in_the_tenants_slice_but_not_the_kill_of_its_processes() {
        let dir = tempfile::tempdir().unwrap();
        let debian = test_provider(Platform::Debian, dir.path())
            .with_tenant_worker("/usr/libexec/layerone-tenant");
        std::fs::create_dir_all(debian.sysconf("/run/systemd/system")).unwrap();
        let who = Identity::new(1234, 1235, vec![], "/home/acme".into()).unwrap();
        let (program, argv) = debian.tenant_argv(&who, &Request::Whoami {}).unwrap();
        assert_eq!(program, Program::SystemdRun);
        assert_eq!(
            argv.for_audit()[..6],
            [
                "--scope",
                "--quiet",
                "--collect",
                "--slice=user-1234.slice",
                "--",
                "/usr/libexec/layerone-tenant"
            ]
        );
        let kill = Request::TerminateProcesses { uid: 1234 };
        let (program, argv) = debian.tenant_argv(&who, &kill).unwrap();
        assert_eq!(program, Program::TenantWorker);
        assert_eq!(argv.for_audit()[0], "--uid");
    }
}
