//! The worker's process: what `layerone-tenant` runs, and what `layerone` runs when it is
//! started under that name (the dev node's multi-call form).

use std::io::Write;
use std::process::ExitCode;

use crate::protocol::{ErrorCode, Reply, TenantError};
use crate::{Identity, sandbox, wire};

fn run() -> Reply {
    // SAFETY: first thing in main, single-threaded, nothing of ours holds a descriptor.
    if let Err(e) = unsafe { sandbox::start_clean() } {
        return Reply::Error(e);
    }
    let identity = match Identity::from_args(std::env::args_os().skip(1)) {
        Ok(identity) => identity,
        Err(e) => return Reply::Error(e),
    };
    if let Err(e) = sandbox::drop_to(&identity) {
        return Reply::Error(e);
    }
    wire::serve(std::io::stdin().lock(), &identity.home)
}

/// The whole worker. Call it first thing in `main`, before any thread or descriptor exists.
pub fn worker_main() -> ExitCode {
    let reply = std::panic::catch_unwind(run).unwrap_or_else(|_| {
        Reply::Error(TenantError::new(
            ErrorCode::Internal,
            "the worker panicked; see its standard error",
        ))
    });
    let bytes = wire::encode_reply(&reply);
    let mut out = std::io::stdout().lock();
    match out.write_all(&bytes).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}
