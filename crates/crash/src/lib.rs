//! Named crash points.
//!
//! The crash tests (docs/design.md section 11) kill the real runner code at a named point between
//! two steps of the job lifecycle, or inside a multi-step handler, and then check that the next
//! normal pass converges. A point is a [`Point`], a constant declared with [`points!`],
//! reached by a call to [`point`] with it. It does nothing unless a hook was installed with [`install`], in which
//! case the hook decides: the crash-point runner (`layerone-crash-runner`, `crates/devnode`)
//! installs one (`testkit::crash_points`) that aborts the process at once, as `kill -9` would,
//! at the point its environment names. This crate holds no way to arm a point: the packaged
//! runner, which installs no hook, cannot be made to crash at one, and its points cost one
//! atomic load.
//!
//! Each point has a stable name ([`Point::name`], `web_domain.after_docroot`): what
//! `LAYERONE_CRASH_AT` says and the tests print. The points of the job lifecycle's runner
//! steps are declared here ([`RUNNER`]); each family module of the handlers declares its own
//! with [`points!`], beside the code that reaches them, and the handlers list every one
//! (`ops::crash_points`), so a new family's points are in the family's own file.
//! `every_crash_point_has_a_call_site_in_the_code` (cli `architecture.rs`) holds every call
//! site to a constant of its own module (or of [`runner`]) and every declared point to a call
//! site there, and
//! `crash_matrix_converges_at_every_point` (cli `lifecycle.rs`) that the crash matrix reaches
//! every one.
//!
//! The `state` crate calls the points of its own transactions directly. The deterministic
//! simulation installs a hook of its own (`crates/simulation/src/node.rs`) that unwinds with
//! [`Died`] instead of aborting; the runner's containment (`steps::contain`, each job's
//! handler) lets that one panic through ([`is_death`]).

use std::sync::OnceLock;

/// A place where the crash tests can kill the runner, known by its stable name
/// (`scope.step`: the family or runner step it belongs to, then where in it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Point(&'static str);

impl Point {
    /// The point named `name` (`scope.step`): for [`points!`] only, which declares each as a
    /// constant the call sites name.
    #[doc(hidden)]
    pub const fn new(name: &'static str) -> Point {
        Point(name)
    }

    /// The point's stable name (`family.after_step`).
    pub const fn name(self) -> &'static str {
        self.0
    }

    /// What the point belongs to: the family, the family module or the runner step before
    /// the first dot (`web_domain`, `account`, `claim`).
    pub fn scope(self) -> &'static str {
        self.0.split('.').next().unwrap_or_default()
    }
}

/// Declares crash points as constants of the module it is called in, and `CRASH_POINTS`,
/// each point with the name of its constant (which its call sites name), in the order listed:
///
/// ```
/// crash::points! {
///     /// After the vhost was written, before the reload.
///     AFTER_VHOST = "https_policy.after_vhost",
/// }
/// assert_eq!(CRASH_POINTS, &[("AFTER_VHOST", AFTER_VHOST)]);
/// ```
#[macro_export]
macro_rules! points {
    ($($(#[$doc:meta])* $constant:ident = $name:literal,)*) => {
        $($(#[$doc])* pub const $constant: $crate::Point = $crate::Point::new($name);)*

        /// The crash points of this module, each with the name of its constant.
        pub const CRASH_POINTS: &[(&str, $crate::Point)] = &[$((stringify!($constant), $constant),)*];
    };
}

/// The points of the job lifecycle's runner steps, which every request passes.
pub mod runner {
    points! {
        INGEST_BEFORE_COMMIT = "ingest.before_commit",
        INGEST_AFTER_COMMIT = "ingest.after_commit",
        CLAIM_AFTER_COMMIT = "claim.after_commit",
        APPLY_BEFORE_HANDLER = "apply.before_handler",
        BATCH_BEFORE_RELOAD = "batch.before_reload",
        BATCH_AFTER_RELOAD = "batch.after_reload",
        COMPLETE_BEFORE_COMMIT = "complete.before_commit",
        COMPLETE_AFTER_COMMIT = "complete.after_commit",
    }
}

pub use runner::CRASH_POINTS as RUNNER;

impl std::fmt::Display for Point {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a hook unwinds with when the run must die where it stands inside this process (the
/// deterministic simulation, `crates/simulation`), instead of aborting it: the places that
/// contain a failure (the runner's steps, each job's handler) let it through ([`is_death`]),
/// so the unwinding ends only where the simulation caught it, as a kill would end the
/// process. Nothing in the packaged runner raises it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Died(pub Point);

/// Whether a caught panic is a [`Died`], which must be resumed (`std::panic::resume_unwind`)
/// rather than contained as a failure.
pub fn is_death(payload: &(dyn std::any::Any + Send)) -> bool {
    payload.is::<Died>()
}

/// The message a caught panic carries, if it carries one (`panic!` with a literal or a
/// formatted string).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> Option<String> {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
}

static HOOK: OnceLock<fn(Point)> = OnceLock::new();

/// Makes every crash point call `hook` with itself. Only the first call counts; the
/// crash-point runner makes it first thing, before any point can be reached.
pub fn install(hook: fn(Point)) {
    let _ = HOOK.set(hook);
}

/// Reached between two steps: calls the installed hook, if any; otherwise costs one atomic
/// load.
pub fn point(point: Point) {
    if let Some(hook) = HOOK.get() {
        hook(point);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_is_its_name_and_belongs_to_what_precedes_the_first_dot() {
        assert_eq!(runner::CLAIM_AFTER_COMMIT.name(), "claim.after_commit");
        assert_eq!(runner::CLAIM_AFTER_COMMIT.scope(), "claim");
        assert_eq!(Point::new("account.purge.after_family").scope(), "account");
        assert_eq!(RUNNER.len(), 8);
        assert_eq!(
            RUNNER[0],
            ("INGEST_BEFORE_COMMIT", runner::INGEST_BEFORE_COMMIT)
        );
    }
}
