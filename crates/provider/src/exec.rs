//! The one place in the workspace that starts a program (DESIGN.md invariant 4).
//!
//! `execute` resolves a [`Program`] to its absolute path for the platform, then either starts
//! it (Real, or Sim with the program listed as real) or hands the very same argument list to
//! the simulation. Either way the invocation is written to the audit log and a non-zero exit
//! becomes `ProviderError::Failed`. A started program gets a cleared environment (fixed
//! `PATH`, `LC_ALL=C`), cwd `/`, a null or fed stdin, capped stdout/stderr, its own process
//! group, and a deadline after which the whole group is killed and the child reaped. There is
//! no shell: the argument list goes to `execve` as a list.
//!
//! # A stopped child is killed at once
//!
//! The tenant worker runs with the tenant's uid, so the tenant may signal it: `SIGSTOP` (or
//! `SIGTSTP`, or a stop of its process group) would freeze it, and the lane waiting for it,
//! until its deadline. The child is therefore watched with `waitid(WEXITED | WSTOPPED |
//! WCONTINUED | WNOWAIT)`, which the kernel wakes on a stop, on a continue after a stop and on
//! the exit: the first stop or continue seen kills the process group at once and the call
//! fails `program_stopped`. A stop followed at once by `SIGCONT` is still seen: until a wait
//! without `WNOWAIT` consumes it, the kernel keeps either the stop or the continue to report.
//! Nothing else the node runs ever stops, so this holds for every program. What the worker
//! cannot be is traced: it is not dumpable and has `no_new_privs`, so the tenant cannot
//! `ptrace` it (a traced stop would be reported to the tracer, not here); and it cannot fork
//! (`RLIMIT_NPROC` 0), so its group is itself. A child that is merely slow, or blocked, is
//! killed at its deadline (`program.rs`: `TenantWork` for the worker's kinds of work).

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rustix::process::{Pid, Signal, WaitId, WaitIdOptions};

use crate::audit::{AuditLog, AuditRecord};
use crate::error::ProviderError;
use crate::program::Program;
use crate::provider::Provider;

/// The only `PATH` a program sees: programs that run helpers (apache2ctl is a shell script)
/// find the system ones, never something from an inherited environment.
pub const CHILD_PATH: &str = "/usr/sbin:/usr/bin:/sbin:/bin";

/// How much of stdout and of stderr is kept. Past this the output is still drained (so the
/// child never blocks on a full pipe) but dropped, and the `*_truncated` flag is set.
pub const OUTPUT_CAP: usize = 64 * 1024;

/// How long to wait for a killed child to disappear, and for the output pipes to close after
/// the child is gone. A pipe can outlive the child only if a grandchild escaped the process
/// group; its output is then cut rather than waited for forever.
const AFTER_EXIT_GRACE: Duration = Duration::from_secs(5);

/// An argument list, with the positions that must not be written to the audit log.
///
/// Builders in `programs/` produce one; the simulation reads the same list, so what is tested
/// is the argv production would run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Argv {
    args: Vec<OsString>,
    secret: Vec<bool>,
}

impl Argv {
    pub fn new() -> Argv {
        Argv::default()
    }

    /// Appends an ordinary argument.
    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Argv {
        self.args.push(arg.as_ref().to_owned());
        self.secret.push(false);
        self
    }

    /// Appends an argument that is logged as `<redacted>` (a password hash).
    pub fn secret(&mut self, arg: impl AsRef<OsStr>) -> &mut Argv {
        self.args.push(arg.as_ref().to_owned());
        self.secret.push(true);
        self
    }

    pub fn args(&self) -> &[OsString] {
        &self.args
    }

    /// The list as written to the audit log.
    pub fn for_audit(&self) -> Vec<String> {
        self.args
            .iter()
            .zip(&self.secret)
            .map(|(arg, &secret)| {
                if secret {
                    "<redacted>".to_owned()
                } else {
                    arg.to_string_lossy().into_owned()
                }
            })
            .collect()
    }
}

/// What a program that exited 0 printed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Output {
    pub status: i32,
    pub stdout: Vec<u8>,
    pub stdout_truncated: bool,
    pub stderr: Vec<u8>,
    pub stderr_truncated: bool,
}

impl Provider {
    /// Runs `program` with `argv` (or simulates it), audits it, and checks its exit status.
    ///
    /// Only the typed wrappers in `programs/` call this, so that every argv the node can
    /// produce is built by a reviewed builder.
    pub(crate) fn execute(
        &self,
        program: Program,
        argv: &Argv,
        stdin: Option<&[u8]>,
        timeout: Duration,
    ) -> Result<Output, ProviderError> {
        // `program_path` and `runs_real` are `Program::path` and `Backend::runs_real`, except
        // for the tenant worker, whose path is resolved at run time (programs/tenant_worker.rs).
        let Some(path) = self.program_path(program) else {
            return Err(ProviderError::Unsupported {
                program,
                platform: self.platform,
            });
        };
        let real = self.runs_real(program);
        self.run_audited(program, &path, argv, stdin, timeout, real)
    }

    /// Test hook: runs an arbitrary absolute path for real, labelled as `label` in errors and
    /// the audit log, so `execute`'s process handling can be tested with harmless programs.
    #[cfg(test)]
    pub(crate) fn execute_path_for_test(
        &self,
        label: Program,
        path: &Path,
        argv: &Argv,
        stdin: Option<&[u8]>,
        timeout: Duration,
    ) -> Result<Output, ProviderError> {
        self.run_audited(label, path, argv, stdin, timeout, true)
    }

    fn run_audited(
        &self,
        program: Program,
        path: &Path,
        argv: &Argv,
        stdin: Option<&[u8]>,
        timeout: Duration,
        real: bool,
    ) -> Result<Output, ProviderError> {
        self.audited(program, path, argv, real, || {
            if real {
                run_process(program, path, argv.args(), stdin, timeout)
            } else {
                Ok(crate::sim::run(self, program, argv.args(), stdin))
            }
        })
    }

    /// Runs `run` (the invocation of `program` at `path` with `argv`, for real or not) and
    /// writes its audit line; a non-zero exit becomes `ProviderError::Failed`.
    pub(crate) fn audited(
        &self,
        program: Program,
        path: &Path,
        argv: &Argv,
        real: bool,
        run: impl FnOnce() -> Result<Output, ProviderError>,
    ) -> Result<Output, ProviderError> {
        // Opened first: an invocation that cannot be audited does not happen.
        let mut audit = AuditLog::open(&self.audit_dir)?;
        let at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let started = Instant::now();
        let result = run();
        let ms = started.elapsed().as_millis() as u64;
        let backend = if real { "real" } else { "sim" };
        let record = AuditRecord {
            at,
            program: program.name().to_owned(),
            path: path.to_string_lossy().into_owned(),
            args: argv.for_audit(),
            status: result.as_ref().ok().map(|o| o.status),
            ms,
            backend: backend.to_owned(),
            error: result.as_ref().err().map(|e| e.code().to_owned()),
        };
        if let Err(error) = audit.append(&record) {
            // The program has already run; failing the call now would misreport what
            // happened to the OS. Say so loudly instead.
            tracing::error!(
                target: "audit",
                path = %audit.path().display(),
                %error,
                "could not append to the audit log"
            );
        }
        tracing::info!(
            target: "audit",
            program = program.name(),
            path = %path.display(),
            args = ?record.args,
            status = ?record.status,
            ms,
            backend,
            error = record.error.as_deref(),
            "program invoked"
        );
        self.keep_audit_record(record);
        let output = result?;
        if output.status != 0 {
            return Err(ProviderError::Failed {
                program,
                status: output.status,
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            });
        }
        Ok(output)
    }
}

/// Starts the process. This is the only `Command::new` in the workspace.
#[allow(clippy::disallowed_methods)] // DESIGN.md invariant 4: the provider is the one crate allowed to start programs, and this is its one spawn.
fn spawn(path: &Path, args: &[OsString], feed_stdin: bool) -> std::io::Result<Child> {
    Command::new(path)
        .args(args)
        .env_clear()
        .env("PATH", CHILD_PATH)
        .env("LC_ALL", "C")
        .current_dir("/")
        .stdin(if feed_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so a timeout kills the helpers a wrapper script started too.
        .process_group(0)
        .spawn()
}

pub(crate) fn run_process(
    program: Program,
    path: &Path,
    args: &[OsString],
    stdin: Option<&[u8]>,
    timeout: Duration,
) -> Result<Output, ProviderError> {
    let deadline = Instant::now() + timeout;
    let mut child = spawn(path, args, stdin.is_some()).map_err(|source| ProviderError::Spawn {
        program,
        path: path.to_owned(),
        source,
    })?;
    let pid = Pid::from_child(&child);

    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let bytes = bytes.to_vec();
        // A writer thread, because a child that writes while we feed it (cat) would otherwise
        // deadlock on two full pipes. EPIPE (the child stopped reading) is not our error: the
        // exit status says what happened.
        thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
    }
    let stdout = Capture::start(child.stdout.take().expect("stdout was piped at spawn"));
    let stderr = Capture::start(child.stderr.take().expect("stderr was piped at spawn"));

    let events = watch_child(pid);
    let (ending, gone) = wait_or_kill(program, pid, &events, deadline);
    if !gone {
        // Unkillable (stuck in the kernel). Reap it in the background whenever it dies,
        // rather than block this pass or leave a zombie for the runner's lifetime.
        thread::spawn(move || {
            let _ = child.wait();
        });
        return Err(ending
            .error(program, timeout)
            .expect("only a killed child can linger"));
    }
    let status = child
        .wait()
        .map_err(|e| ProviderError::io("wait for", path, e))?;
    let grace = Instant::now() + AFTER_EXIT_GRACE;
    let (stdout, stdout_truncated) = stdout.finish(grace);
    let (stderr, stderr_truncated) = stderr.finish(grace);
    if let Some(error) = ending.error(program, timeout) {
        return Err(error);
    }
    Ok(Output {
        status: status_code(status),
        stdout,
        stdout_truncated,
        stderr,
        stderr_truncated,
    })
}

/// Like [`run_process`], but stdin is streamed from `input` and stdout into `output` as the
/// program runs (an archive in either direction), instead of fed from and captured into
/// memory. Stderr is captured as usual. A failure of `output` closes the pipe, so the program
/// meets `EPIPE` and ends; the deadline kills its group as in `run_process`.
pub(crate) fn run_process_streaming(
    program: Program,
    path: &Path,
    args: &[OsString],
    input: &mut (dyn Read + Send),
    output: &mut (dyn Write + Send),
    timeout: Duration,
) -> Result<Output, ProviderError> {
    let deadline = Instant::now() + timeout;
    let mut child = spawn(path, args, true).map_err(|source| ProviderError::Spawn {
        program,
        path: path.to_owned(),
        source,
    })?;
    let pid = Pid::from_child(&child);
    let mut stdin = child.stdin.take().expect("stdin was piped at spawn");
    let mut stdout = child.stdout.take().expect("stdout was piped at spawn");
    let stderr = Capture::start(child.stderr.take().expect("stderr was piped at spawn"));
    let events = watch_child(pid);
    let (ending, output_error) = thread::scope(|scope| {
        scope.spawn(move || {
            // EPIPE (the program stopped reading) is not our error: its reply says why.
            let _ = std::io::copy(input, &mut stdin);
        });
        let drain = scope.spawn(move || std::io::copy(&mut stdout, output).err());
        // A killed group closes the pipes; the scope then joins both threads.
        let (ending, _) = wait_or_kill(program, pid, &events, deadline);
        (ending, drain.join().ok().flatten())
    });
    let status = child
        .wait()
        .map_err(|e| ProviderError::io("wait for", path, e))?;
    let (stderr, stderr_truncated) = stderr.finish(Instant::now() + AFTER_EXIT_GRACE);
    if let Some(error) = ending.error(program, timeout) {
        return Err(error);
    }
    if let Some(e) = output_error {
        return Err(ProviderError::io("stream the output of", path, e));
    }
    Ok(Output {
        status: status_code(status),
        stderr,
        stderr_truncated,
        ..Output::default()
    })
}

/// What the watcher of a child saw first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ChildEvent {
    /// It is gone (exited or killed), not yet reaped.
    Exited,
    /// It stopped (the signal, when it was still stopped when seen) or had stopped and was
    /// continued (`None`).
    Stopped(Option<i32>),
}

/// Watches `pid` in a helper thread with `waitid(WNOWAIT)`, which leaves the child unreaped:
/// the pid stays its own (a zombie) until the caller reaps it, so a kill can never hit a
/// recycled pid. The first stop or continue is sent, then the exit; nothing else.
fn watch_child(pid: Pid) -> mpsc::Receiver<ChildEvent> {
    let (events_tx, events_rx) = mpsc::channel();
    thread::spawn(move || {
        let mut options = WaitIdOptions::EXITED
            | WaitIdOptions::STOPPED
            | WaitIdOptions::CONTINUED
            | WaitIdOptions::NOWAIT;
        loop {
            match rustix::process::waitid(WaitId::Pid(pid), options) {
                Err(rustix::io::Errno::INTR) | Ok(None) => {}
                Ok(Some(status)) if status.stopped() || status.continued() => {
                    let _ = events_tx.send(ChildEvent::Stopped(status.stopping_signal()));
                    // WNOWAIT leaves the stop to be reported again: from now on, the exit
                    // only (the caller is killing the group).
                    options = WaitIdOptions::EXITED | WaitIdOptions::NOWAIT;
                }
                Ok(Some(_)) | Err(_) => {
                    let _ = events_tx.send(ChildEvent::Exited);
                    return;
                }
            }
        }
    });
    events_rx
}

/// How the wait for a child ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ending {
    Exited,
    /// Stopped, and killed at once.
    Stopped(Option<i32>),
    /// Still running at its deadline, and killed.
    TimedOut,
}

impl Ending {
    /// The error this ending is, if the program did not end by itself.
    fn error(self, program: Program, timeout: Duration) -> Option<ProviderError> {
        match self {
            Ending::Exited => None,
            Ending::Stopped(signal) => Some(ProviderError::Stopped { program, signal }),
            Ending::TimedOut => Some(ProviderError::Timeout { program, timeout }),
        }
    }
}

/// Waits until the child `pid` exits, or stops, or `deadline` passes; in the last two cases
/// kills its process group at once and waits a little for it to disappear. Returns how the
/// wait ended and whether the child is gone (false: it outlived SIGKILL by
/// [`AFTER_EXIT_GRACE`], stuck in the kernel).
fn wait_or_kill(
    program: Program,
    pid: Pid,
    events: &mpsc::Receiver<ChildEvent>,
    deadline: Instant,
) -> (Ending, bool) {
    let remaining = deadline.saturating_duration_since(Instant::now());
    let ending = match events.recv_timeout(remaining) {
        // The watcher sends before it ends: a closed channel means it saw the exit.
        Ok(ChildEvent::Exited) | Err(RecvTimeoutError::Disconnected) => {
            return (Ending::Exited, true);
        }
        Ok(ChildEvent::Stopped(signal)) => Ending::Stopped(signal),
        Err(RecvTimeoutError::Timeout) => Ending::TimedOut,
    };
    // The group id is the child's pid (process_group(0)); the child is still unreaped, so
    // the id cannot have been reused. SIGKILL ends a stopped process too.
    let _ = rustix::process::kill_process_group(pid, Signal::KILL);
    tracing::warn!(
        program = program.name(),
        pid = pid.as_raw_nonzero().get(),
        ending = ?ending,
        "killed the program's process group"
    );
    let gone = loop {
        match events.recv_timeout(AFTER_EXIT_GRACE) {
            Ok(ChildEvent::Exited) | Err(RecvTimeoutError::Disconnected) => break true,
            // A stop seen after the deadline: the kill is already on its way.
            Ok(ChildEvent::Stopped(_)) => {}
            Err(RecvTimeoutError::Timeout) => {
                tracing::error!(
                    program = program.name(),
                    pid = pid.as_raw_nonzero().get(),
                    "killed program did not die after SIGKILL"
                );
                break false;
            }
        }
    };
    (ending, gone)
}

/// The exit code, or 128 + signal (the shell convention) when a signal ended the process.
fn status_code(status: ExitStatus) -> i32 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => -1,
    }
}

/// Drains one output pipe in a thread, keeping the first `OUTPUT_CAP` bytes.
struct Capture {
    buf: Arc<Mutex<(Vec<u8>, bool)>>,
    done: mpsc::Receiver<()>,
}

impl Capture {
    fn start(mut pipe: impl Read + Send + 'static) -> Capture {
        let buf = Arc::new(Mutex::new((Vec::new(), false)));
        let (done_tx, done) = mpsc::channel();
        let shared = Arc::clone(&buf);
        thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => {
                        let mut guard = shared.lock().unwrap_or_else(|p| p.into_inner());
                        let (kept, truncated) = &mut *guard;
                        let room = OUTPUT_CAP.saturating_sub(kept.len());
                        kept.extend_from_slice(&chunk[..n.min(room)]);
                        if n > room {
                            *truncated = true;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = done_tx.send(());
        });
        Capture { buf, done }
    }

    /// What was captured, once the pipe closed or `until` passed (then marked truncated).
    fn finish(self, until: Instant) -> (Vec<u8>, bool) {
        let closed = self
            .done
            .recv_timeout(until.saturating_duration_since(Instant::now()))
            .is_ok();
        let mut guard = self.buf.lock().unwrap_or_else(|p| p.into_inner());
        let (kept, truncated) = &mut *guard;
        (std::mem::take(kept), *truncated || !closed)
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::audit::read_audit_log;
    use crate::platform::Platform;
    use crate::provider::{Backend, ProviderConfig};

    struct Fixture {
        _dir: tempfile::TempDir,
        provider: Provider,
        audit_dir: PathBuf,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let audit_dir = dir.path().join("audit");
        let provider = Provider::new(ProviderConfig {
            platform: Platform::Debian,
            root: dir.path().join("root"),
            backend: Backend::Real,
            audit_dir: audit_dir.clone(),
        });
        Fixture {
            _dir: dir,
            provider,
            audit_dir,
        }
    }

    fn run(
        f: &Fixture,
        path: &str,
        args: &[&str],
        stdin: Option<&[u8]>,
        timeout: Duration,
    ) -> Result<Output, ProviderError> {
        let mut argv = Argv::new();
        for a in args {
            argv.arg(a);
        }
        f.provider
            .execute_path_for_test(Program::Openssl, Path::new(path), &argv, stdin, timeout)
    }

    #[test]
    fn true_succeeds_and_is_audited() {
        let f = fixture();
        let out = run(&f, "/bin/true", &[], None, Duration::from_secs(10)).unwrap();
        assert_eq!(out.status, 0);
        let log = read_audit_log(&f.audit_dir).unwrap();
        assert_eq!(log.len(), 1);
        assert_eq!(log[0].path, "/bin/true");
        assert_eq!(log[0].status, Some(0));
        assert_eq!(log[0].backend, "real");
    }

    #[test]
    fn nonzero_exit_is_failed_with_status_and_stderr() {
        let f = fixture();
        let err = run(&f, "/bin/false", &[], None, Duration::from_secs(10)).unwrap_err();
        assert!(
            matches!(err, ProviderError::Failed { status: 1, .. }),
            "{err:?}"
        );
        assert_eq!(err.code(), "program_failed");

        let err = run(
            &f,
            "/bin/ls",
            &["/definitely/not/here"],
            None,
            Duration::from_secs(10),
        )
        .unwrap_err();
        let ProviderError::Failed { stderr, .. } = &err else {
            panic!("{err:?}")
        };
        assert!(stderr.contains("/definitely/not/here"), "{stderr}");
        // Failures are audited too.
        let log = read_audit_log(&f.audit_dir).unwrap();
        assert_eq!(log.len(), 2);
        assert!(log.iter().all(|r| r.status.is_some_and(|s| s != 0)));
    }

    /// The pids of this process's children (zombies included) whose command line contains
    /// `arg`; read from /proc so it works however the test harness shares the process.
    fn children_running(arg: &str) -> Vec<String> {
        let me = std::process::id().to_string();
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let pid = entry.file_name().to_string_lossy().into_owned();
            if !pid.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // Field 4 (ppid) follows the parenthesised command name.
            let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
            let ppid = after.split_whitespace().nth(1).unwrap_or("");
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            // A zombie has no command line left; its name still says what it was.
            let zombie_sleep =
                after.split_whitespace().next() == Some("Z") && stat.contains("(sleep)");
            if ppid == me && (zombie_sleep || String::from_utf8_lossy(&cmdline).contains(arg)) {
                found.push(pid);
            }
        }
        found
    }

    #[test]
    fn timeout_kills_and_reaps_the_child() {
        let f = fixture();
        let started = Instant::now();
        let err = run(
            &f,
            "/bin/sleep",
            &["7.31"],
            None,
            Duration::from_millis(200),
        )
        .unwrap_err();
        assert!(matches!(err, ProviderError::Timeout { .. }), "{err:?}");
        assert_eq!(err.code(), "program_timeout");
        assert!(started.elapsed() < Duration::from_secs(4));
        // Killed and reaped: no process of ours, live or zombie, still runs `sleep 7.31`.
        assert_eq!(children_running("7.31"), Vec::<String>::new());
        let log = read_audit_log(&f.audit_dir).unwrap();
        assert_eq!(log[0].status, None);
        assert_eq!(log[0].error.as_deref(), Some("program_timeout"));
    }

    /// The pid of this process's child running `arg`, once it exists.
    fn child_running(arg: &str) -> Pid {
        for _ in 0..5_000 {
            if let Some(pid) = children_running(arg).first() {
                return Pid::from_raw(pid.parse().unwrap()).unwrap();
            }
            thread::sleep(Duration::from_millis(2));
        }
        panic!("no child runs {arg}");
    }

    /// Returns once `pid` is stopped (a stop signal that a `SIGCONT` overtakes before the
    /// process handled it never stops it: there is nothing to notice then) or gone.
    fn wait_until_stopped_or_gone(pid: Pid) {
        let stat = format!("/proc/{}/stat", pid.as_raw_nonzero());
        loop {
            let Ok(text) = std::fs::read_to_string(&stat) else {
                return;
            };
            let state = text
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next());
            if matches!(state, Some("T" | "Z" | "X") | None) {
                return;
            }
            thread::yield_now();
        }
    }

    /// A stopped child would hold its caller until the deadline (ten minutes here): it is
    /// killed at once instead, however it was stopped, and the call fails `program_stopped`.
    #[test]
    fn a_stopped_program_is_killed_at_once_however_it_was_stopped() {
        use rustix::process::{kill_process, kill_process_group};
        type Attack = fn(Pid);
        let attacks: [(&str, &str, Attack); 4] = [
            ("SIGSTOP", "601.1", |pid| {
                kill_process(pid, Signal::STOP).unwrap()
            }),
            ("SIGTSTP", "601.2", |pid| {
                kill_process(pid, Signal::TSTP).unwrap()
            }),
            ("SIGSTOP then SIGCONT", "601.3", |pid| {
                kill_process(pid, Signal::STOP).unwrap();
                wait_until_stopped_or_gone(pid);
                // Too late or not, the stop was seen: the continue changes nothing.
                let _ = kill_process(pid, Signal::CONT);
            }),
            ("its process group stopped", "601.4", |pid| {
                kill_process_group(pid, Signal::STOP).unwrap()
            }),
        ];
        for (name, arg, attack) in attacks {
            let f = fixture();
            let (err, noticed) = thread::scope(|scope| {
                let call =
                    scope.spawn(|| run(&f, "/bin/sleep", &[arg], None, Duration::from_secs(600)));
                let pid = child_running(arg);
                let attacked = Instant::now();
                attack(pid);
                (call.join().unwrap().unwrap_err(), attacked.elapsed())
            });
            eprintln!("{name}: killed and reaped {noticed:?} after the signal");
            assert_eq!(err.code(), "program_stopped", "{name}: {err:?}");
            assert_eq!(
                children_running(arg),
                Vec::<String>::new(),
                "{name}: not reaped"
            );
            let log = read_audit_log(&f.audit_dir).unwrap();
            assert_eq!(log[0].error.as_deref(), Some("program_stopped"), "{name}");
        }
    }

    /// Stopping and continuing, over and over, is seen as a stop: the first one kills it.
    #[test]
    fn a_program_stopped_and_continued_repeatedly_is_killed_at_the_first_stop() {
        let f = fixture();
        let err = thread::scope(|scope| {
            let call =
                scope.spawn(|| run(&f, "/bin/sleep", &["602.1"], None, Duration::from_secs(600)));
            let pid = child_running("602.1");
            for _ in 0..50 {
                if rustix::process::kill_process(pid, Signal::STOP).is_err() {
                    break;
                }
                wait_until_stopped_or_gone(pid);
                let _ = rustix::process::kill_process(pid, Signal::CONT);
            }
            call.join().unwrap().unwrap_err()
        });
        assert_eq!(err.code(), "program_stopped", "{err:?}");
        assert_eq!(children_running("602.1"), Vec::<String>::new());
    }

    /// The streaming path (archives) watches its child the same way.
    #[test]
    fn a_stopped_streaming_program_is_killed_at_once() {
        struct Slow;
        impl Read for Slow {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                thread::sleep(Duration::from_millis(20));
                buf[0] = b'x';
                Ok(1)
            }
        }
        let err = thread::scope(|scope| {
            let call = scope.spawn(|| {
                let args = [OsString::from("603.1")];
                run_process_streaming(
                    Program::TenantWorker,
                    Path::new("/bin/sleep"),
                    &args,
                    &mut Slow,
                    &mut std::io::sink(),
                    Duration::from_secs(600),
                )
            });
            rustix::process::kill_process(child_running("603.1"), Signal::STOP).unwrap();
            call.join().unwrap().unwrap_err()
        });
        assert_eq!(err.code(), "program_stopped", "{err:?}");
        assert_eq!(children_running("603.1"), Vec::<String>::new());
    }

    #[test]
    fn timeout_kills_grandchildren_holding_the_pipes() {
        let f = fixture();
        // sh starts a background sleep that inherits stdout; without the group kill the
        // capture would wait for it.
        let started = Instant::now();
        let err = run(
            &f,
            "/bin/sh",
            &["-c", "/bin/sleep 30 & /bin/sleep 30"],
            None,
            Duration::from_millis(200),
        )
        .unwrap_err();
        assert!(matches!(err, ProviderError::Timeout { .. }), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(4));
    }

    #[test]
    fn stdin_is_fed_and_output_is_capped() {
        let f = fixture();
        let input: Vec<u8> = (0..1024 * 1024).map(|i| (i % 251) as u8).collect();
        let out = run(&f, "/bin/cat", &[], Some(&input), Duration::from_secs(30)).unwrap();
        assert_eq!(out.stdout.len(), OUTPUT_CAP);
        assert!(out.stdout_truncated);
        assert_eq!(&out.stdout[..], &input[..OUTPUT_CAP]);
        assert!(!out.stderr_truncated);

        let out = run(&f, "/bin/cat", &[], Some(b"hello"), Duration::from_secs(10)).unwrap();
        assert_eq!(out.stdout, b"hello");
        assert!(!out.stdout_truncated);
    }

    #[test]
    fn stdin_is_null_when_not_fed() {
        let f = fixture();
        // cat of a null stdin ends at once instead of waiting for input.
        let out = run(&f, "/bin/cat", &[], None, Duration::from_secs(10)).unwrap();
        assert!(out.stdout.is_empty());
    }

    #[test]
    fn environment_is_cleared_to_path_and_locale() {
        // The test runner's own environment is never just two variables, so this proves
        // something was cleared without calling the (unsafe in edition 2024) set_var.
        assert!(
            std::env::vars_os().count() > 2,
            "the test needs an inherited environment"
        );
        let f = fixture();
        let out = run(&f, "/usr/bin/env", &[], None, Duration::from_secs(10)).unwrap();
        let mut lines: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        lines.sort();
        assert_eq!(
            lines,
            vec![format!("LC_ALL=C"), format!("PATH={CHILD_PATH}")]
        );
    }

    #[test]
    fn cwd_is_root() {
        let f = fixture();
        let out = run(&f, "/bin/pwd", &[], None, Duration::from_secs(10)).unwrap();
        assert_eq!(out.stdout, b"/\n");
    }

    #[test]
    fn arguments_are_a_list_not_a_shell_line() {
        let f = fixture();
        let out = run(
            &f,
            "/bin/echo",
            &["a b", "$(id)", "; true"],
            None,
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(out.stdout, b"a b $(id) ; true\n");
    }

    #[test]
    fn missing_executable_is_spawn_failed_and_audited() {
        let f = fixture();
        let err = run(&f, "/nonexistent/prog", &[], None, Duration::from_secs(10)).unwrap_err();
        assert_eq!(err.code(), "program_spawn_failed");
        let log = read_audit_log(&f.audit_dir).unwrap();
        assert_eq!(log[0].error.as_deref(), Some("program_spawn_failed"));
    }

    #[test]
    fn secrets_are_redacted_in_the_audit_log() {
        let f = fixture();
        let mut argv = Argv::new();
        argv.arg("--password").secret("$6$salt$hash");
        f.provider
            .execute_path_for_test(
                Program::Usermod,
                Path::new("/bin/true"),
                &argv,
                None,
                Duration::from_secs(10),
            )
            .unwrap();
        let text = std::fs::read_to_string(f.audit_dir.join("audit.log")).unwrap();
        assert!(!text.contains("$6$salt$hash"), "{text}");
        assert!(text.contains("<redacted>"), "{text}");
        // The records handed to state.db are the same, redacted ones; taking them empties the
        // sink.
        let kept = f.provider.take_audit_records();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].args, ["--password", "<redacted>"]);
        assert!(f.provider.take_audit_records().is_empty());
    }

    #[test]
    fn audit_log_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let f = fixture();
        run(&f, "/bin/true", &[], None, Duration::from_secs(10)).unwrap();
        let mode = std::fs::metadata(f.audit_dir.join("audit.log"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn unsupported_program_starts_nothing() {
        let f = fixture();
        let err = f
            .provider
            .execute(
                Program::Cagefsctl,
                &Argv::new(),
                None,
                Duration::from_secs(1),
            )
            .unwrap_err();
        assert_eq!(err.code(), "unsupported_on_platform");
        assert!(read_audit_log(&f.audit_dir).unwrap().is_empty());
    }
}
