//! Integration tests of the API: one binary, one link for all of them; nextest still runs each
//! test in a process of its own.

mod api;
mod blobs;
#[path = "../common/mod.rs"]
mod common;
mod front_door;
mod local_door;
mod soak;
