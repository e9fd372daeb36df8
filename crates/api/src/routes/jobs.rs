//! `POST /v1/jobs` and `GET /v1/jobs/{request_id}`.
//!
//! Admission is the `admission` crate's, the same for the fleet daemon's broker consumer:
//! idempotent by request id (the same id with the same body is the same job, 202 with its
//! current view; with another body a 409), the 202 sent only after the inbox's COMMIT
//! returned. This module reads the body and maps a refusal to its status ([`ApiError`]).

use axum::Extension;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::Response;
use registry::envelope::MAX_BODY;
use registry::{Hex32, JobView, Origin};

use super::{AppState, blocking, json_response};
use crate::error::ApiError;
use crate::limits::read_body;

/// `application/json`, with or without parameters such as `charset=utf-8`.
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

pub(crate) async fn submit(
    State(app): AppState,
    origin: Option<Extension<Origin>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    // Both doors' guards record it; a route reached some other way is not let in.
    let Some(Extension(origin)) = origin else {
        return Err(ApiError::Unauthorized);
    };
    if !is_json(&headers) {
        return Err(ApiError::ContentType);
    }
    let body = read_body(&headers, body, MAX_BODY, app.limits.body_read_timeout).await?;
    let view = app
        .admission
        .admit(&body, origin)
        .await
        .map_err(ApiError::Refused)?;
    Ok(accepted(&view))
}

fn accepted(view: &JobView) -> Response {
    json_response(StatusCode::ACCEPTED, view)
}

pub(crate) async fn get(State(app): AppState, uri: Uri) -> Result<Response, ApiError> {
    // The router matched `/v1/jobs/{request_id}`; the raw segment is parsed here so a bad one
    // gets this API's error, not the framework's.
    let raw = uri.path().strip_prefix("/v1/jobs/").unwrap_or_default();
    let request_id: Hex32 = raw.parse().map_err(|_| ApiError::RequestId)?;
    let view = blocking(&app, move |app| {
        if let Some(view) = app.admission.reader().job(request_id.as_str())? {
            return Ok(view);
        }
        match app.admission.inbox().received(request_id.as_str()) {
            Ok(Some((view, _sha))) => Ok(view),
            // Root may have admitted it and the inbox row been pruned between the two looks.
            Ok(None) => app
                .admission
                .reader()
                .job(request_id.as_str())?
                .ok_or(ApiError::JobNotFound),
            Err(e) => {
                tracing::error!(error = ?e, "reading the inbox failed");
                Err(ApiError::InboxUnavailable)
            }
        }
    })
    .await?;
    Ok(json_response(StatusCode::OK, &app.admission.stamp(view)))
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    #[test]
    fn json_content_types_are_recognised_with_parameters() {
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::CONTENT_TYPE, HeaderValue::from_str(v).unwrap());
            is_json(&h)
        };
        assert!(with("application/json"));
        assert!(with("Application/JSON; charset=utf-8"));
        assert!(!with("text/plain"));
        assert!(!with("application/jsonx"));
        assert!(!is_json(&HeaderMap::new()));
    }
}
