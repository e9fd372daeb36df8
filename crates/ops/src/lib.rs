//! The handlers of the operation families, one module each. The operations and families are
//! declared in the `declarations` crate (each module here re-exports its family's
//! declarations); each module implements `registry::Apply` for its operations, and
//! `registry::Purge` and `registry::Derive` (what it derives, for the [`drift`] check) for
//! its families, with [`Ctx`] as the context. [`handlers()`] is the dispatch table, built from
//! the one list (`declarations::operations!`), so a declared operation without a handler, or
//! a family without a purge or a derive hook, does not compile.
//!
//! Handlers read resource rows through one typed view ([`Ctx::view`]) that includes this
//! job's and this batch's uncommitted rows; each family defines its stored row (a
//! `store::StoredRow` with `deny_unknown_fields`). A file several families contribute to has
//! one owner that renders it from the view alone: [`vhost`] (a web domain's vhost and its
//! `AuthUserFile`s), [`php::pool`] (the account's FPM pools) and [`mail`] (the Postfix,
//! Dovecot and OpenDKIM tables); the families record their rows and call the owner.

// One module per family module of the declarations, of the same name; each declares its
// crash points (`crash::points!`), which `CRASH_POINTS_BY_MODULE` lists.
macro_rules! family_modules {
    ($($module:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// Where each crash point is declared: `runner` for the job lifecycle's
        /// ([`crash::RUNNER`]), then each family module's, in the order of the modules, each
        /// point with the name of its constant.
        pub const CRASH_POINTS_BY_MODULE: &[(&str, &[(&str, crash::Point)])] =
            &[("runner", crash::RUNNER), $((stringify!($module), $module::CRASH_POINTS),)*];
    };
}
declarations::family_modules!(family_modules);

/// Every crash point of the node: the job lifecycle's, then each family module's, as they
/// declare them. What the crash matrix walks and the crash-point runner can arm.
pub fn crash_points() -> Vec<crash::Point> {
    CRASH_POINTS_BY_MODULE
        .iter()
        .flat_map(|(_, points)| points.iter().map(|(_, point)| *point))
        .collect()
}

pub mod context;
pub mod drift;
pub mod mail_clients;
pub mod mail_hosts;
pub mod mail_records;
mod row_fields;
pub mod vhost;
pub mod web_isolation;

use std::sync::OnceLock;

pub use context::{Ctx, Service};
use registry::Handlers;

macro_rules! handlers_of {
    ($($op:path),* $(,)?) => {
        Handlers::builder()$(.op::<$op>())*.build()
    };
}

/// The node's handlers: one for every declared operation, and the purge and derive hooks of
/// every declared family, in the declarations' order. Checked against `declarations::registry()` by
/// the runner's start and the unit tests ([`Handlers::check`]).
pub fn handlers() -> &'static Handlers<Ctx> {
    static HANDLERS: OnceLock<Handlers<Ctx>> = OnceLock::new();
    HANDLERS.get_or_init(|| declarations::operations!(handlers_of))
}

/// The families that keep rows, each named by its purge hook's row type
/// ([`registry::Purge::ROW`]).
pub fn stored_families() -> impl Iterator<Item = &'static str> {
    handlers().stored_rows().map(|(family, _)| family)
}

/// Which operations own each field of `family`'s stored rows besides its declaring
/// operation ([`store::StoredRow::FIELD_OWNERS`]); empty for a family whose every field is the
/// declaring operation's, or that stores no row.
pub fn field_owners(family: &str) -> registry::FieldOwners {
    handlers().field_owners(family)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each point is named once, `scope.step`, and a family module's points belong to a
    /// declared family or module: what the crash matrix reads to know which requests can
    /// reach them.
    #[test]
    fn every_crash_point_is_named_once_after_a_declared_family_or_module() {
        let registry = declarations::registry();
        let mut names = std::collections::BTreeSet::new();
        for &(module, points) in CRASH_POINTS_BY_MODULE {
            for (_, point) in points {
                assert!(names.insert(point.name()), "{point} is declared twice");
                let (scope, step) = point.name().split_once('.').unwrap_or_default();
                assert!(!scope.is_empty() && !step.is_empty(), "{point}");
                if module != "runner" {
                    assert!(
                        registry
                            .families()
                            .iter()
                            .any(|f| f.name == scope || f.module.as_str() == scope),
                        "{point} of module {module} names no declared family or module"
                    );
                }
            }
        }
        assert_eq!(names.len(), crash_points().len());
        assert!(names.len() > crash::RUNNER.len());
    }
}
