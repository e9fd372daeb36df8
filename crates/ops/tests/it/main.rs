//! Integration tests of the handlers: one binary, one link for all of them; nextest still runs
//! each test in a process of its own.

mod handlers;
mod hosting;
mod https_vhost;
mod stored_rows;
