//! Arming a crash point from the environment: what the crash-point runner
//! (`layerone-crash-runner`, `crates/devnode`) adds to the simulated runner.
//!
//! [`arm_from_env`] reads [`ENV`] once, first thing, before the runner clears its
//! environment, and when it names a point ([`crash::Point::name`]) installs the hook of
//! `crates/crash` that aborts the process at that point, at once, as `kill -9` would: no
//! destructors, no flush, no unwinding. A name that is no point's is refused, so a test cannot
//! believe it crashed somewhere the code has no point. Nothing here is in the packaged runner,
//! which links neither this crate nor any other hook.

use std::sync::OnceLock;

use crash::Point;

/// The environment variable that names the one crash point to abort at.
pub const ENV: &str = "LAYERONE_CRASH_AT";

static ARMED: OnceLock<Point> = OnceLock::new();

/// Arms the crash point named by `LAYERONE_CRASH_AT`, if any, of the `known` ones
/// (`ops::crash_points`); later calls change nothing. Exits with status 2 when the variable
/// names no known crash point.
pub fn arm_from_env(known: &[Point]) {
    let Some(name) = std::env::var(ENV).ok().filter(|name| !name.is_empty()) else {
        return;
    };
    let Some(point) = known.iter().copied().find(|point| point.name() == name) else {
        eprintln!("{ENV}={name} names no crash point (ops::crash_points lists them)");
        std::process::exit(2);
    };
    if ARMED.set(point).is_ok() {
        crash::install(abort_if_armed);
    }
}

/// Aborts the process if `point` is the armed one.
fn abort_if_armed(point: Point) {
    if ARMED.get() == Some(&point) {
        eprintln!("crash point {point} reached: aborting");
        std::process::abort();
    }
}
