//! `POST /v1/jobs` and `GET /v1/jobs/{request_id}`.
//!
//! Admission is idempotent by request id: the same id with the same body is the same job (202
//! with its current view), with another body a 409. State.db is asked first, because root may
//! have admitted the request and the API pruned it from the inbox since; otherwise the request
//! goes through the inbox's group commit, and the 202 is sent only after that COMMIT returned.

use std::sync::Arc;

use axum::Extension;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::Response;
use registry::envelope::MAX_BODY;
use registry::{Hex32, JobView, Origin};
use store::Admission;
use tokio::sync::oneshot;

use super::{App, AppState, blocking, json_response};
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
    Ok(accepted(&admit(&app, &body, origin).await?))
}

/// Admission, whatever the door: validate, answer from state.db a request root already has,
/// else hand it to the inbox's group commit and answer after COMMIT. The HTTPS route and the
/// broker's consumer ([`crate::Gate::submit`]) both come here.
pub(crate) async fn admit(
    app: &Arc<App>,
    body: &[u8],
    origin: Origin,
) -> Result<JobView, ApiError> {
    admit_unstamped(app, body, origin)
        .await
        .map(|view| app.stamp(view))
}

async fn admit_unstamped(app: &Arc<App>, body: &[u8], origin: Origin) -> Result<JobView, ApiError> {
    let job = app.registry.validate(body, &app.node_id).inspect_err(|e| {
        // The API cannot write the audit trail (state.db is root's): a node-scope request
        // refused here is logged instead. Root records every one that reaches the inbox.
        if e.code == "wrong_node" {
            tracing::warn!(target: "audit", code = %e.code, "refused a node-scope request for another node");
        }
    })?;
    let request_id = job.request_id.to_string();
    let sha = job.body_sha256.clone();
    let operation = job.operation;
    refused_by_assignment(app, job.module).await?;

    if let Some(view) = admitted(app, &request_id, &sha).await? {
        return Ok(view);
    }

    let (tx, rx) = oneshot::channel();
    app.inbox.admit(job, origin, move |result| {
        // The handler may be gone (client disconnected); the request is durable all the same.
        let _ = tx.send(result);
    });
    let admission = match rx.await {
        Ok(Ok(admission)) => admission,
        Ok(Err(store::StoreError::DiskFull {
            filesystem,
            context,
        })) => {
            tracing::warn!(request_id, %filesystem, "refused on a full disk: {context}");
            return Err(ApiError::DiskFull { filesystem });
        }
        Ok(Err(e)) => {
            tracing::error!(error = ?e, request_id, "the inbox did not take a request");
            return Err(ApiError::InboxUnavailable);
        }
        Err(_) => {
            tracing::error!(
                request_id,
                "the inbox writer dropped a request without answering"
            );
            return Err(ApiError::InboxUnavailable);
        }
    };
    match admission {
        Admission::Conflict => Err(ApiError::Conflict),
        Admission::Received { received_at, .. } | Admission::Duplicate { received_at, .. } => {
            // Look again: root may have admitted this request id between the first look and
            // the commit (a duplicate of one received long ago, or a prune in between). The
            // request is durable now, so a state.db that is briefly unreadable only means the
            // received view is answered.
            match admitted(app, &request_id, &sha).await {
                Ok(Some(view)) => Ok(view),
                Err(ApiError::Conflict) => Err(ApiError::Conflict),
                Ok(None) | Err(_) => Ok(JobView::received(&request_id, operation, received_at)),
            }
        }
    }
}

/// The node's fleet assignment, as root recorded it, refuses an operation of a module it does
/// not assign, or of one that cannot run here: the same decision root takes
/// (`store::assignment::admits`), said at once. A state.db that cannot be read now lets the
/// request through: root decides again before any handler runs.
async fn refused_by_assignment(app: &Arc<App>, module: registry::Module) -> Result<(), ApiError> {
    if module == registry::Module::Core {
        return Ok(());
    }
    let assigned = blocking(app, |app| Ok(app.reader.assigned_modules()?)).await;
    match assigned {
        Ok(assigned) => {
            store::assignment::admits(assigned.as_deref(), module).map_err(ApiError::Module)
        }
        Err(_) => Ok(()),
    }
}

/// State.db's view of a request root has admitted: `Ok(None)` if it has not, a conflict if it
/// was admitted with another body (or is a rejected inbox row, which has none).
async fn admitted(
    app: &Arc<App>,
    request_id: &str,
    sha: &str,
) -> Result<Option<JobView>, ApiError> {
    let (request_id, sha) = (request_id.to_owned(), sha.to_owned());
    blocking(app, move |app| {
        match app.reader.job_body_sha(&request_id)? {
            None => Ok(None),
            Some(Some(existing)) if existing == sha => Ok(app.reader.job(&request_id)?),
            Some(_) => Err(ApiError::Conflict),
        }
    })
    .await
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
        if let Some(view) = app.reader.job(request_id.as_str())? {
            return Ok(view);
        }
        match app.inbox.received(request_id.as_str()) {
            Ok(Some((view, _sha))) => Ok(view),
            // Root may have admitted it and the inbox row been pruned between the two looks.
            Ok(None) => app
                .reader
                .job(request_id.as_str())?
                .ok_or(ApiError::JobNotFound),
            Err(e) => {
                tracing::error!(error = ?e, "reading the inbox failed");
                Err(ApiError::InboxUnavailable)
            }
        }
    })
    .await?;
    Ok(json_response(StatusCode::OK, &app.stamp(view)))
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
