//! What a control plane depends on in a node's catalogue, checked two ways with one schema
//! walk: [`check`], a control plane's contract (what it sends, what it reads) against a
//! catalogue, for `layerone contract check`; and [`gate`], the released catalogue against
//! the current one, for the compatibility test. Values only: catalogues are JSON as
//! `/v1/catalogue` serves them. See docs/contract.md.

mod check;
mod compare;
mod gate;
mod schema;

pub use check::{
    Contract, Finding, OneOrMany, OperationContract, Read, Refusal, Report, RequestSchema, Sends,
    check,
};
pub use gate::{BreakingChange, GateRefusal, breaking_changes, gate, operations};
