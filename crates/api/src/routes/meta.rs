//! `GET /v1/catalogue`, `GET /v1/openapi.json` (both derived from the registry, computed once
//! at start) and `GET /v1/health`, the one endpoint that needs no key: a load balancer or a
//! monitor asks it whether the API is up and root's state readable.

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::json;

use super::{AppState, blocking, json_bytes, json_response};

pub(crate) async fn catalogue(State(app): AppState) -> Response {
    json_bytes(StatusCode::OK, app.catalogue.clone())
}

pub(crate) async fn openapi(State(app): AppState) -> Response {
    json_bytes(StatusCode::OK, app.openapi.clone())
}

pub(crate) async fn health(State(app): AppState) -> Response {
    let readable = blocking(&app, |app| Ok(app.reader.last_cursor()?))
        .await
        .is_ok();
    let body = json!({
        "status": if readable { "ok" } else { "degraded" },
        "state_readable": readable,
        "node_id": app.node_id,
        "version": env!("CARGO_PKG_VERSION"),
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
