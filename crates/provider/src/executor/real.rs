//! The real executor: starts the program. This file holds the one `Command::new` of the
//! workspace (ARCHITECTURE.md invariant 4; `only_the_real_executor_starts_programs` holds it).
//!
//! A started program gets a cleared environment (fixed `PATH`, `LC_ALL=C`), cwd `/`, a null
//! or fed stdin, capped stdout/stderr, its own process group, and a deadline after which the
//! whole group is killed and the child reaped. There is no shell: the argument list goes to
//! `execve` as a list. The audit line and the exit-status check are the provider's
//! (`exec.rs`), around this.
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
//!
//! The deadline is on the system's monotonic time (`Instant`), whatever clock the provider
//! records its audit lines with (`Provider::with_clock`): it bounds a real process, and a
//! simulation's clock, which moves only when its test says, would let a hung child hang the
//! node.
//!
//! # Long-running children
//!
//! [`RealExecutor::spawn_service`] starts a program that keeps running (a server), for the
//! test support that needs one (the throw-away MariaDB server of `crates/testkit`). Nothing
//! of the node calls it: production never starts a service itself.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitId, WaitIdOptions};

use super::{Executor, Invocation, Output};
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

/// Starts every program for real: production's executor.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealExecutor;

impl Executor for RealExecutor {
    fn runs_real(&self, _program: Program) -> bool {
        true
    }

    fn run(
        &self,
        _provider: &Provider,
        call: &Invocation<'_>,
        stdin: Option<&[u8]>,
    ) -> Result<Output, ProviderError> {
        run_process(
            call.program,
            call.path,
            call.argv.args(),
            stdin,
            call.timeout,
        )
    }

    fn run_streaming(
        &self,
        _provider: &Provider,
        call: &Invocation<'_>,
        input: &mut (dyn Read + Send),
        output: &mut (dyn Write + Send),
    ) -> Result<Output, ProviderError> {
        run_process_streaming(
            call.program,
            call.path,
            call.argv.args(),
            input,
            output,
            call.timeout,
        )
    }
}

impl RealExecutor {
    /// Starts `path` with `args` and leaves it running: a cleared environment (fixed `PATH`,
    /// `LC_ALL=C`), cwd `/`, a null stdin, stdout and stderr appended to `log`. The caller
    /// owns the child (stops and reaps it). Not audited and not reachable from a
    /// [`Program`]: test support only (see the module documentation).
    pub fn spawn_service(
        &self,
        path: &Path,
        args: &[OsString],
        log: &File,
    ) -> std::io::Result<Child> {
        let out = log.try_clone()?;
        let err = log.try_clone()?;
        command(path, args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
    }
}

/// The command for `path` with `args`, its environment cleared to [`CHILD_PATH`] and
/// `LC_ALL=C`, in `/`. This is the only `Command::new` in the workspace.
#[allow(clippy::disallowed_methods)] // ARCHITECTURE.md invariant 4: the real executor is the one place allowed to start programs.
fn command(path: &Path, args: &[OsString]) -> Command {
    let mut command = Command::new(path);
    command
        .args(args)
        .env_clear()
        .env("PATH", CHILD_PATH)
        .env("LC_ALL", "C")
        .current_dir("/");
    command
}

/// Starts a program the provider waits for.
fn spawn(path: &Path, args: &[OsString], feed_stdin: bool) -> std::io::Result<Child> {
    command(path, args)
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
