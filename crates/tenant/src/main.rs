//! `layerone-tenant`: does one piece of work inside a tenant's home, as the tenant.
//!
//! Started by the provider as root with `--uid U --gid G --groups A,B --home PATH` (built
//! from the system's passwd and group files, never from a request). In order: close
//! inherited descriptors and empty the environment; parse the identity; drop to it for good
//! and limit the process; read one request from stdin; do it; write one reply to stdout;
//! exit 0. Any failure, including a panic, is a typed error reply; the exit status is
//! non-zero only when the reply itself could not be written.

use std::io::Write;
use std::process::ExitCode;

use tenant::protocol::{ErrorCode, Reply, TenantError};
use tenant::{Identity, sandbox, wire};

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

fn main() -> ExitCode {
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
