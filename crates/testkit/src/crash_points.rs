//! Arming a crash point from the environment: what the crash-point runner
//! (`layerone-crash-runner`, `crates/devnode`) adds to the simulated runner.
//!
//! [`arm_from_env`] reads [`ENV`] once, first thing, before the runner clears its
//! environment, and when it names a point installs the hook of `crates/crash` that aborts the
//! process at that point, at once, as `kill -9` would: no destructors, no flush, no unwinding.
//! Nothing here is in the packaged runner, which links neither this crate nor any other hook.

use std::sync::OnceLock;

/// The environment variable that names the one crash point to abort at.
pub const ENV: &str = "LAYERONE_CRASH_AT";

static ARMED: OnceLock<String> = OnceLock::new();

/// Arms the crash point named by `LAYERONE_CRASH_AT`, if any; later calls change nothing.
pub fn arm_from_env() {
    let Some(name) = std::env::var(ENV).ok().filter(|name| !name.is_empty()) else {
        return;
    };
    if ARMED.set(name).is_ok() {
        crash::install(abort_if_armed);
    }
}

/// Aborts the process if `name` is the armed point.
fn abort_if_armed(name: &'static str) {
    if ARMED.get().is_some_and(|armed| armed == name) {
        eprintln!("crash point {name} reached: aborting");
        std::process::abort();
    }
}
