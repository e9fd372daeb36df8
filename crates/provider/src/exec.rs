//! The one audited way the provider runs a program (ARCHITECTURE.md invariant 4).
//!
//! `execute` resolves a [`Program`] to its absolute path for the platform and hands the
//! invocation to the provider's executor (`executor/`): the real one starts it
//! (`executor/real.rs`), a simulated one models it on the sysroot. Either way the invocation
//! is written to the audit log here, before and whatever the executor did, and a non-zero exit
//! becomes `ProviderError::Failed`, so every executor is audited and checked alike.

use std::path::Path;
use std::time::Duration;

use crate::audit::{AuditLog, AuditRecord};
use crate::error::ProviderError;
use crate::executor::{Argv, Invocation, Output};
use crate::program::Program;
use crate::provider::Provider;

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
        // `program_path` is `Program::path`, except for the tenant worker, whose path is
        // resolved at run time (programs/tenant_worker.rs).
        let Some(path) = self.program_path(program) else {
            return Err(ProviderError::Unsupported {
                program,
                platform: self.platform,
            });
        };
        let call = Invocation {
            program,
            path: &path,
            argv,
            timeout,
        };
        let real = self.runs_real(program);
        self.audited(program, &path, argv, real, || {
            self.executor.run(self, &call, stdin)
        })
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
        use crate::executor::{Executor, RealExecutor};
        let call = Invocation {
            program: label,
            path,
            argv,
            timeout,
        };
        self.audited(label, path, argv, true, || {
            RealExecutor.run(self, &call, stdin)
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
        // The provider's clock, not the system's: a simulation replays these exactly. The
        // executor's own deadline for a real child is on real time (`executor/real.rs`).
        let at = self.clock.now_ms().max(0) as u64;
        let started = self.clock.monotonic();
        let result = run();
        let ms = self.clock.monotonic().saturating_sub(started).as_millis() as u64;
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

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::io::Read;
    use std::path::PathBuf;
    use std::thread;
    use std::time::Instant;

    use rustix::process::{Pid, Signal};

    use super::*;
    use crate::audit::read_audit_log;
    use crate::executor::real::{CHILD_PATH, OUTPUT_CAP, run_process_streaming};
    use crate::platform::Platform;
    use crate::provider::ProviderConfig;

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
            executor: std::sync::Arc::new(crate::executor::RealExecutor),
            machine: std::sync::Arc::new(crate::machine::RealMachine),
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
