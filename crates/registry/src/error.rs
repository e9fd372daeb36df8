//! The two error shapes that cross the node's boundary: a [`FieldError`] for a request that
//! fails validation (the API answers 4xx with it, root records it as a failed job), and an
//! [`OpError`] for an operation that failed while being applied. Both carry a stable code.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A request that did not validate: which field, why, under a stable code.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, thiserror::Error)]
#[error("{code} at {field}: {message}")]
pub struct FieldError {
    /// `invalid_json`, `invalid_envelope`, `unknown_operation`, `unknown_field`,
    /// `missing_field`, `invalid_field`, `body_too_large`, `wrong_node`.
    pub code: Cow<'static, str>,
    /// The JSON path of the offending field, such as `resource.domain`; empty for the body.
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(code: &'static str, field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError {
            code: Cow::Borrowed(code),
            field: field.into(),
            message: message.into(),
        }
    }
}

/// An operation that failed: the stable code a control plane can branch on, a message safe to
/// show, and whether the same request may succeed later without change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, thiserror::Error)]
#[error("{code}: {message}")]
pub struct OpError {
    pub code: Cow<'static, str>,
    pub message: String,
    pub retryable: bool,
}

impl OpError {
    /// A failure that the same request will meet again: bad state, conflict, unsupported.
    pub fn permanent(code: &'static str, message: impl Into<String>) -> Self {
        OpError {
            code: Cow::Borrowed(code),
            message: message.into(),
            retryable: false,
        }
    }

    /// A failure that may clear by itself: a busy service, a reload that failed.
    pub fn retryable(code: &'static str, message: impl Into<String>) -> Self {
        OpError {
            code: Cow::Borrowed(code),
            message: message.into(),
            retryable: true,
        }
    }
}

impl From<FieldError> for OpError {
    fn from(e: FieldError) -> Self {
        OpError {
            code: e.code,
            message: format!("{}: {}", e.field, e.message),
            retryable: false,
        }
    }
}
