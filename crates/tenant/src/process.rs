//! The worker's process: what `layerone-tenant` runs, and what `layerone` runs when it is
//! started under that name (the dev node's multi-call form).

use std::io::Write;
use std::process::ExitCode;

use crate::protocol::{ErrorCode, Reply, TenantError};
use crate::{Identity, sandbox, wire};

/// The reply, and whether stdout carried an archive (the reply then goes to stderr).
fn run() -> (Reply, bool) {
    // SAFETY: first thing in main, single-threaded, nothing of ours holds a descriptor.
    if let Err(e) = unsafe { sandbox::start_clean() } {
        return (Reply::Error(e), false);
    }
    let identity = match Identity::from_args(std::env::args_os().skip(1)) {
        Ok(identity) => identity,
        Err(e) => return (Reply::Error(e), false),
    };
    if let Err(e) = sandbox::drop_to(&identity) {
        return (Reply::Error(e), false);
    }
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let (reply, streamed) = wire::serve(std::io::stdin().lock(), &mut out, &identity.home);
    if out.flush().is_err() {
        return (
            Reply::Error(TenantError::new(
                ErrorCode::Io,
                "write the archive to stdout",
            )),
            streamed,
        );
    }
    (reply, streamed)
}

/// The whole worker. Call it first thing in `main`, before any thread or descriptor exists.
pub fn worker_main() -> ExitCode {
    let (reply, streamed) = std::panic::catch_unwind(|| {
        let (reply, streamed) = run();
        (reply, Some(streamed))
    })
    .unwrap_or_else(|_| {
        (
            Reply::Error(TenantError::new(
                ErrorCode::Internal,
                "the worker panicked; see its standard error",
            )),
            // Which request panicked is unknown here: the reply goes to both places.
            None,
        )
    });
    let bytes = wire::encode_reply(&reply);
    let to_stderr = || {
        // Root looks for the reply of an archive request on stderr: the last line.
        let mut err = std::io::stderr().lock();
        err.write_all(b"\n")
            .and_then(|()| err.write_all(&bytes))
            .and_then(|()| err.flush())
    };
    let to_stdout = || {
        let mut out = std::io::stdout().lock();
        out.write_all(&bytes).and_then(|()| out.flush())
    };
    let written = match streamed {
        Some(true) => to_stderr(),
        Some(false) => to_stdout(),
        None => to_stderr().and(to_stdout()),
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}
