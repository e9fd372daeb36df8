//! `layerone-tenant`: does one piece of work inside a tenant's home, as the tenant.
//!
//! Started by the provider as root with `--uid U --gid G --groups A,B --home PATH` (built
//! from the system's passwd and group files, never from a request). In order: close
//! inherited descriptors and empty the environment; parse the identity; drop to it for good
//! and limit the process; read one request from stdin; do it; write one reply to stdout;
//! exit 0. Any failure, including a panic, is a typed error reply; the exit status is
//! non-zero only when the reply itself could not be written.

fn main() -> std::process::ExitCode {
    tenant::process::worker_main()
}
