//! The declarations machinery of the node.
//!
//! Every operation is declared once, as a type implementing [`Operation`], and every family
//! once, as a type implementing [`Family`]. A [`Registry`] lists the operations; from it, and
//! from nothing else, the node derives request validation, result validation, job identity,
//! supersession keys, scope, module, JSON Schemas, the OpenAPI document and the catalogue.
//! The handlers implement [`Apply`] for each operation, and [`Purge`] and [`Derive`] (what the
//! family derives, for the drift check) for each family, in their own context; a
//! [`Handlers`] table dispatches to them, and takes no operation whose family lacks either
//! hook, so such a family does not compile into a node.
//!
//! This crate does no I/O: it knows nothing of SQLite, HTTP or the operating system.

pub mod audit;
pub mod declare;
pub mod derive;
pub mod envelope;
pub mod error;
pub mod handlers;
pub mod job;
pub mod openapi;
pub mod registry;
pub mod types;

pub use audit::{AuditDetail, AuditEntry, AuditPage, NodeRequestStage, Origin, RequestStage};
pub use declare::{
    Apply, Family, FieldOwners, Kind, Lane, Module, Operation, Owner, Purge, Resource, RowType,
    Scope,
};
pub use derive::{
    Aspects, Content, Derive, Derived, DerivedPath, DerivedSetting, DerivedTable, DriftCheck, Of,
};
pub use envelope::{Envelope, ValidatedJob, stored_resource};
pub use error::{FieldError, OpError};
pub use handlers::{FamilyHandler, Handlers, HandlersBuilder, OperationHandler};
pub use job::{
    DeclaredAspect, DiskCondition, Drift, DriftAspect, EVENTS_PAGE_RESULT_BYTES, Event, EventKind,
    EventPage, FileSystem, JobState, JobView, Timings,
};
pub use registry::{CatalogueEntry, FamilyEntry, OperationEntry, Parsed, Registry, RegistryError};
pub use types::{BlobId, Hex32};

/// What the exported macros (`string_type!`) name, so that a crate using them needs neither
/// serde nor schemars of its own.
#[doc(hidden)]
pub mod __private {
    pub use schemars;
    pub use serde;
}
