//! Integration tests of the dev node and the packaged runner: one binary, one link for all of
//! them; nextest still runs each test in a process of its own.

mod dev_worker;
mod packaged_runner;
