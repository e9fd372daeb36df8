//! Integration tests of the installer: one binary, one link for all of them; nextest still runs
//! each test in a process of its own.

mod install;
mod services;
