//! Every error the API answers, and the one place that maps each to a status.
//!
//! The body is always JSON `{code, message, field}`: `code` is stable (a control plane branches
//! on it), `message` is safe to show, `field` names the offending field or is empty. An answer
//! with `Retry-After` also says it in the body (`retry_after_s`); a 429 `queue_full` says the
//! cap it met and how many requests wait under it (`limit`, `queued`); a 410 `events_lost`
//! adds `first_cursor`, where the events feed can be resumed. Details that help an operator (a
//! SQLite error, a path) go to the log, never to the client. The only 5xx is 503 with
//! `Retry-After`: state briefly unreadable, the inbox writer unavailable, or a full file
//! system (`disk_full`, its message naming which by its stable name: `inbox`, `blobs`).

use std::borrow::Cow;

use admission::{Refusal, RefusalKind};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("the body is larger than {limit} bytes")]
    BodyTooLarge { limit: usize },
    #[error("the body must be application/json")]
    ContentType,
    #[error("the body could not be read")]
    BodyUnreadable,
    #[error("the body did not arrive in time")]
    BodyTimeout,
    #[error("bad query parameter {field}: {message}")]
    Query { field: String, message: String },
    #[error("not a request id")]
    RequestId,
    #[error("missing or wrong API key")]
    Unauthorized,
    #[error("no such endpoint")]
    NoRoute,
    #[error("method not allowed")]
    Method,
    #[error("no such job")]
    JobNotFound,
    /// The events feed was trimmed past the cursor asked from: the events just after it are
    /// gone. `first_cursor` is the oldest event still there.
    #[error(
        "the events after this cursor were trimmed from the feed, which now begins at cursor \
         {first_cursor}: read each job you wait for (GET /v1/jobs/{{request_id}}), then resume \
         from after={}", .first_cursor - 1
    )]
    EventsLost { first_cursor: i64 },
    /// Admission refused the request (the `admission` crate's [`Refusal`]): invalid, too
    /// large, a conflict, or state, inbox or disk unavailable.
    #[error("{}", .0.message)]
    Refused(Refusal),
    #[error("too many requests")]
    RateLimited { retry_after_secs: u32 },
    #[error("state is briefly unavailable")]
    StateUnavailable { retry_after_secs: u32 },
    #[error("the inbox is unavailable")]
    InboxUnavailable,
    #[error("not a blob id")]
    BlobId,
    #[error("the content's SHA-256 is {actual}, not the name it was uploaded under")]
    BlobMismatch { actual: String },
    #[error("the blob is larger than {limit} bytes")]
    BlobTooLarge { limit: u64 },
    #[error("no such blob")]
    BlobNotFound,
    #[error("blob storage is unavailable")]
    BlobStorageUnavailable,
}

impl From<store::ReadError> for ApiError {
    fn from(e: store::ReadError) -> Self {
        match e {
            store::ReadError::Unavailable { retry_after_secs } => {
                ApiError::StateUnavailable { retry_after_secs }
            }
            store::ReadError::Failed(e) => {
                // Not the client's doing, and not something it can fix: log it whole, answer
                // the same clean 503 as a busy database.
                tracing::error!(error = ?e, "reading state.db failed");
                ApiError::StateUnavailable {
                    retry_after_secs: 1,
                }
            }
        }
    }
}

#[derive(Serialize)]
struct Body<'a> {
    code: &'a str,
    message: &'a str,
    field: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_after_s: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    limit: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    queued: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    first_cursor: Option<i64>,
}

pub(crate) struct Parts {
    pub status: StatusCode,
    pub code: Cow<'static, str>,
    pub field: String,
    pub message: String,
    pub retry_after_secs: Option<u32>,
    pub queue: Option<admission::QueueFull>,
    /// `events_lost`'s oldest cursor still on the feed.
    pub first_cursor: Option<i64>,
}

impl ApiError {
    pub(crate) fn parts(self) -> Parts {
        let p = |status, code: &'static str, field: &str, message: String| Parts {
            status,
            code: Cow::Borrowed(code),
            field: field.to_owned(),
            message,
            retry_after_secs: None,
            queue: None,
            first_cursor: None,
        };
        let message = self.to_string();
        match self {
            ApiError::BodyTooLarge { .. } => {
                p(StatusCode::PAYLOAD_TOO_LARGE, "body_too_large", "", message)
            }
            ApiError::ContentType => p(
                StatusCode::BAD_REQUEST,
                "invalid_content_type",
                "content-type",
                message,
            ),
            ApiError::BodyUnreadable => p(StatusCode::BAD_REQUEST, "invalid_body", "", message),
            ApiError::BodyTimeout => p(StatusCode::REQUEST_TIMEOUT, "request_timeout", "", message),
            ApiError::Query { field, message } => {
                p(StatusCode::BAD_REQUEST, "invalid_query", &field, message)
            }
            ApiError::RequestId => p(
                StatusCode::BAD_REQUEST,
                "invalid_request_id",
                "request_id",
                "expected 32 lowercase hexadecimal digits".into(),
            ),
            ApiError::Unauthorized => p(StatusCode::UNAUTHORIZED, "unauthorized", "", message),
            ApiError::NoRoute => p(StatusCode::NOT_FOUND, "not_found", "", message),
            ApiError::Method => p(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "",
                message,
            ),
            ApiError::JobNotFound => p(
                StatusCode::NOT_FOUND,
                "job_not_found",
                "request_id",
                message,
            ),
            ApiError::EventsLost { first_cursor } => Parts {
                first_cursor: Some(first_cursor),
                ..p(StatusCode::GONE, "events_lost", "after", message)
            },
            ApiError::Refused(refusal) => Parts {
                status: match refusal.kind {
                    RefusalKind::Invalid => StatusCode::BAD_REQUEST,
                    RefusalKind::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
                    RefusalKind::Conflict => StatusCode::CONFLICT,
                    RefusalKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
                    RefusalKind::Backpressure => StatusCode::TOO_MANY_REQUESTS,
                },
                code: refusal.code,
                field: refusal.field,
                message: refusal.message,
                retry_after_secs: refusal.retry_after,
                queue: refusal.queue,
                first_cursor: None,
            },
            ApiError::RateLimited { retry_after_secs } => Parts {
                retry_after_secs: Some(retry_after_secs),
                ..p(StatusCode::TOO_MANY_REQUESTS, "rate_limited", "", message)
            },
            ApiError::StateUnavailable { retry_after_secs } => Parts {
                retry_after_secs: Some(retry_after_secs),
                ..p(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "state_unavailable",
                    "",
                    message,
                )
            },
            ApiError::BlobId => p(
                StatusCode::BAD_REQUEST,
                "invalid_blob_id",
                "blob",
                "expected a SHA-256 in 64 lowercase hexadecimal digits".into(),
            ),
            ApiError::BlobMismatch { .. } => {
                p(StatusCode::BAD_REQUEST, "blob_mismatch", "blob", message)
            }
            ApiError::BlobTooLarge { .. } => {
                p(StatusCode::PAYLOAD_TOO_LARGE, "body_too_large", "", message)
            }
            ApiError::BlobNotFound => p(StatusCode::NOT_FOUND, "blob_not_found", "blob", message),
            ApiError::BlobStorageUnavailable => Parts {
                retry_after_secs: Some(5),
                ..p(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "blob_storage_unavailable",
                    "",
                    message,
                )
            },
            ApiError::InboxUnavailable => Parts {
                retry_after_secs: Some(1),
                ..p(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "inbox_unavailable",
                    "",
                    message,
                )
            },
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let parts = self.parts();
        if parts.status.is_server_error() {
            tracing::warn!(code = %parts.code, "answering {}", parts.status);
        } else {
            tracing::debug!(code = %parts.code, field = %parts.field, "answering {}", parts.status);
        }
        let body = Body {
            code: &parts.code,
            message: &parts.message,
            field: &parts.field,
            retry_after_s: parts.retry_after_secs,
            limit: parts.queue.map(|q| q.limit),
            queued: parts.queue.map(|q| q.queued),
            first_cursor: parts.first_cursor,
        };
        let mut response = crate::routes::json_response(parts.status, &body);
        if let Some(secs) = parts.retry_after_secs {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if parts.status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}
