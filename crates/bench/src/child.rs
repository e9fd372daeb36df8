//! Starting the programs the benchmark measures: the node's own release binaries, `strace`
//! to count syncs, the fleet's broker (`nats-server`), and `curl` as a site's visitor. Like the end-to-end tests, the
//! benchmark starts the real binaries it measures; this module is the one place in it that
//! does (the architecture test names it).
//!
//! Peak RSS of a short-lived child comes from `wait4`'s `ru_maxrss`. Linux carries the parent's
//! RSS high-water mark into a child that `exec`s out of a `vfork`/`fork` of it, so a large
//! parent would inflate the figure. The benchmark therefore measures through a fresh copy of
//! itself (`--measure-child`), whose own RSS is a few MiB when it spawns the child; that floor
//! is reported beside the figure.

#![allow(clippy::disallowed_methods)] // The benchmark starts the real binaries it measures.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// Starts a long-running node process; its stderr goes to `log`.
pub fn start(program: &Path, args: &[&OsStr], log: &Path) -> anyhow::Result<Child> {
    let log = std::fs::File::create(log).with_context(|| format!("create {}", log.display()))?;
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .with_context(|| format!("start {}", program.display()))
}

/// Asks a child to stop (SIGTERM) and waits for it, at most `grace`, then kills it.
pub fn stop(child: &mut Child, grace: Duration) {
    // SAFETY: kill(2) on the pid of a child this process has not reaped yet.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Runs a program to completion and returns its standard output whatever its exit status
/// (curl reports each transfer on stdout, and exits non-zero when the last one failed).
pub fn stdout_of(program: &str, args: &[String]) -> anyhow::Result<Vec<u8>> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .with_context(|| format!("run {program}"))?;
    Ok(out.stdout)
}

/// Runs this benchmark again with `args` in a mount namespace of its own (util-linux's
/// `unshare`, mounts made private), its output on this one's; fails if it does not succeed.
/// What it mounts there (a hosts file of its own) never reaches the machine.
pub fn in_own_mount_namespace(me: &Path, args: &[&OsStr]) -> anyhow::Result<()> {
    let status = Command::new("/usr/bin/unshare")
        .args(["--mount", "--propagation", "private", "--"])
        .arg(me)
        .args(args)
        .stdin(Stdio::null())
        .status()
        .context("start unshare")?;
    if !status.success() {
        bail!(
            "{} {args:?} in its own mount namespace failed ({status})",
            me.display()
        );
    }
    Ok(())
}

/// Runs a program to completion; fails if it does not succeed.
pub fn run(program: &Path, args: &[&OsStr], log: &Path) -> anyhow::Result<()> {
    let mut child = start(program, args, log)?;
    let status = child.wait()?;
    if !status.success() {
        bail!(
            "{} {args:?} failed ({status}); see {}",
            program.display(),
            log.display()
        );
    }
    Ok(())
}

/// Runs a program to completion and returns its standard output; fails if it does not
/// succeed. Its stderr goes to `log`.
pub fn output(program: &Path, args: &[&OsStr], log: &Path) -> anyhow::Result<String> {
    let log_file =
        std::fs::File::create(log).with_context(|| format!("create {}", log.display()))?;
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stderr(log_file)
        .output()
        .with_context(|| format!("start {}", program.display()))?;
    if !out.status.success() {
        bail!(
            "{} {args:?} failed ({}); see {}",
            program.display(),
            out.status,
            log.display()
        );
    }
    Ok(String::from_utf8(out.stdout)?)
}

/// What one measured run of a child cost.
#[derive(Clone, Copy, Debug, Default)]
pub struct Usage {
    pub wall: Duration,
    pub cpu: Duration,
    pub max_rss_kib: u64,
    /// The measuring process's own RSS high-water mark when it spawned the child: a child's
    /// `ru_maxrss` cannot be below it.
    pub floor_kib: u64,
}

/// Runs `program` to completion through a fresh copy of this binary and returns its wall
/// time, CPU time and peak RSS.
pub fn measure(program: &Path, args: &[&OsStr]) -> anyhow::Result<Usage> {
    let me = std::env::current_exe().context("find the benchmark's own executable")?;
    let out = Command::new(me)
        .arg("--measure-child")
        .arg(program)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .context("start the measuring copy")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let fields: Vec<u64> = text
        .split_whitespace()
        .map(|f| f.parse())
        .collect::<Result<_, _>>()
        .with_context(|| format!("the measuring copy printed {text:?}"))?;
    let [wall_ns, cpu_ns, rss, floor, status] = fields[..] else {
        bail!("the measuring copy printed {text:?}");
    };
    if status != 0 {
        bail!("{} {args:?} exited with status {status}", program.display());
    }
    Ok(Usage {
        wall: Duration::from_nanos(wall_ns),
        cpu: Duration::from_nanos(cpu_ns),
        max_rss_kib: rss,
        floor_kib: floor,
    })
}

/// `layerone-bench --measure-child PROGRAM ARGS...`: spawns the program, reaps it with `wait4`
/// and prints `wall_ns cpu_ns maxrss_kib floor_kib exit_status`.
pub fn measure_child_main(args: &[String]) -> ExitCode {
    let Some((program, rest)) = args.split_first() else {
        eprintln!("--measure-child needs a program");
        return ExitCode::FAILURE;
    };
    let floor = crate::sys::status_kib(std::process::id(), "VmHWM:").unwrap_or(0);
    let started = Instant::now();
    let child = match Command::new(program)
        .args(rest)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            eprintln!("start {program}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut status = 0;
    // SAFETY: rusage is plain data; zeroed is a valid value for wait4 to overwrite.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child by pid with valid pointers; std's handle is not used
    // again, so the pid is reaped exactly once.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    let wall = started.elapsed();
    if pid < 0 {
        eprintln!("wait4: {}", std::io::Error::last_os_error());
        return ExitCode::FAILURE;
    }
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    let exit = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status) as u64
    } else {
        128 + libc::WTERMSIG(status) as u64
    };
    println!(
        "{} {} {} {} {}",
        wall.as_nanos(),
        tv(usage.ru_utime) + tv(usage.ru_stime),
        usage.ru_maxrss,
        floor,
        exit
    );
    ExitCode::SUCCESS
}

/// Runs `program` under `strace -f -c` restricted to the sync calls and returns how many
/// `fsync` and `fdatasync` calls it made, or `None` when strace is not installed.
pub fn count_syncs(program: &Path, args: &[&OsStr], dir: &Path) -> anyhow::Result<Option<u64>> {
    let Some(strace) = ["/usr/bin/strace", "/bin/strace"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
    else {
        return Ok(None);
    };
    let summary = dir.join("strace.txt");
    let status = Command::new(strace)
        .args([
            "-f",
            "-c",
            "-e",
            "trace=fsync,fdatasync,sync_file_range",
            "-o",
        ])
        .arg(&summary)
        .arg(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .context("run strace")?;
    if !status.success() {
        bail!("strace of {} failed: {status}", program.display());
    }
    let text = std::fs::read_to_string(&summary)?;
    // Summary rows: "% time seconds usecs/call calls [errors] syscall".
    let calls = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let name = *f.last()?;
            matches!(name, "fsync" | "fdatasync" | "sync_file_range")
                .then(|| f.get(3)?.parse::<u64>().ok())
                .flatten()
        })
        .sum();
    Ok(Some(calls))
}
