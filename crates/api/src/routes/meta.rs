//! `GET /v1/catalogue`, `GET /v1/openapi.json` (both derived from the registry, computed on
//! the first request and kept: an API nobody asks for them does not hold them) and `GET /v1/health`, the one endpoint that needs no key: a load balancer or a
//! monitor asks it whether the API is up and root's state readable.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::json;

use super::{AppState, blocking, json_bytes, json_response};

pub(crate) async fn catalogue(State(app): AppState) -> Response {
    let body = app.catalogue.get_or_init(|| {
        serialized(&json!({
            "version": declarations::CATALOGUE_VERSION,
            "sha256": app.admission.registry().catalogue_sha256(),
            "operations": app.admission.registry().catalogue(),
        }))
    });
    json_bytes(StatusCode::OK, body.clone())
}

pub(crate) async fn openapi(State(app): AppState) -> Response {
    let body = app.openapi.get_or_init(|| {
        serialized(&registry::openapi::document(
            app.admission.registry(),
            env!("CARGO_PKG_VERSION"),
        ))
    });
    json_bytes(StatusCode::OK, body.clone())
}

/// A JSON value's bytes. A `serde_json::Value` always serializes (its keys are strings).
fn serialized(value: &serde_json::Value) -> Bytes {
    Bytes::from(serde_json::to_vec(value).unwrap_or_default())
}

pub(crate) async fn health(State(app): AppState) -> Response {
    let readable = blocking(&app, |app| Ok(app.admission.reader().last_cursor()?))
        .await
        .is_ok();
    let body = json!({
        "status": if readable { "ok" } else { "degraded" },
        "state_readable": readable,
        "node_id": app.admission.node_id(),
        "version": env!("CARGO_PKG_VERSION"),
        "catalogue_version": declarations::CATALOGUE_VERSION,
        "catalogue_sha256": app.catalogue_sha256(),
    });
    if readable {
        json_response(StatusCode::OK, &body)
    } else {
        let mut response = json_response(StatusCode::SERVICE_UNAVAILABLE, &body);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        response
    }
}
