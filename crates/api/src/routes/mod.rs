//! The HTTP surface: one module per endpoint group, the shared state they read, and the guard
//! every request passes first: on the HTTPS door the rate limit, then the key; on the local
//! door nothing more (its listener admitted the peer by its credentials). Either guard records
//! the request's [`Origin`] for admission.
//!
//! Handlers take only extractors that cannot fail (`State`, `HeaderMap`, `Uri`, `Body`) and
//! parse the rest themselves, so no axum rejection ever answers in plain text; unknown paths
//! and methods have JSON fallbacks.

pub(crate) mod audit;
pub(crate) mod blobs;
pub(crate) mod events;
pub(crate) mod jobs;
pub(crate) mod meta;
pub(crate) mod metrics;
mod query;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;

use admission::Admission;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use registry::Origin;
use serde::Serialize;
use store::Layout;
use tokio::sync::watch;

use crate::config::Limits;
use crate::error::ApiError;
use crate::limits::RateLimiter;

/// What every handler shares.
pub(crate) struct App {
    /// The node's admission, with the inbox it commits to and the read of state.db every
    /// route answers from.
    pub admission: Arc<Admission>,
    pub key_sha256: [u8; 32],
    /// Where `blobs/in` and `blobs/out` are.
    pub layout: Layout,
    /// Bumped by the state directory watch ([`crate::watch`]).
    pub changes: watch::Receiver<u64>,
    /// Set when the API is stopping, so long-polls answer at once instead of holding the
    /// graceful shutdown for up to a minute.
    pub stopping: watch::Sender<bool>,
    pub limiter: RateLimiter,
    pub limits: Limits,
    /// Computed on first use and kept: the registry cannot change while the process runs.
    pub openapi: std::sync::OnceLock<Bytes>,
    pub catalogue: std::sync::OnceLock<Bytes>,
    pub catalogue_sha256: std::sync::OnceLock<String>,
    /// When the certificate this API serves expires (Unix seconds), if it could be read.
    pub tls_not_after: Option<i64>,
}

impl App {
    /// The catalogue's version ([`Registry::catalogue_sha256`]), computed once.
    pub(crate) fn catalogue_sha256(&self) -> &str {
        self.catalogue_sha256
            .get_or_init(|| self.admission.registry().catalogue_sha256())
    }
}

pub(crate) type AppState = State<Arc<App>>;

/// The front door a router serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Door {
    /// TCP with TLS, for the control plane, with its bearer key.
    Https,
    /// The unix socket, for operators on the machine ([`crate::local`]).
    Local,
}

pub(crate) fn router(app: Arc<App>, door: Door) -> Router {
    let routes = Router::new()
        .route("/v1/jobs", post(jobs::submit))
        .route("/v1/jobs/{request_id}", get(jobs::get))
        .route("/v1/events", get(events::list))
        .route("/v1/audit", get(audit::list))
        .route("/v1/blobs/{sha256}", get(blobs::get).put(blobs::put))
        .route("/v1/catalogue", get(meta::catalogue))
        .route("/v1/openapi.json", get(meta::openapi))
        .route("/v1/health", get(meta::health))
        .route("/v1/metrics", get(metrics::metrics))
        .fallback(no_route)
        .method_not_allowed_fallback(wrong_method);
    match door {
        Door::Https => routes.layer(middleware::from_fn_with_state(app.clone(), guard)),
        Door::Local => routes.layer(middleware::from_fn(local_guard)),
    }
    .with_state(app)
}

/// The only endpoint a client may call without the key, and only with `GET`: any other method
/// on it, like every other path and method (known or not), answers 401 without the key.
const PUBLIC: &str = "/v1/health";

/// Rate limit first (so guessing keys costs tokens too), then the key.
async fn guard(State(app): AppState, mut request: Request, next: Next) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |c| c.0.ip());
    let response = if let Err(retry_after_secs) = app.limiter.check(peer, Instant::now()) {
        ApiError::RateLimited { retry_after_secs }.into_response()
    } else if !is_public(&request) && !crate::auth::authorized(request.headers(), &app.key_sha256) {
        ApiError::Unauthorized.into_response()
    } else {
        request.extensions_mut().insert(Origin::Api);
        next.run(request).await
    };
    no_store(response)
}

/// The local door's guard: the listener admitted the peer; its uid is the origin.
async fn local_guard(mut request: Request, next: Next) -> Response {
    let uid = request
        .extensions()
        .get::<ConnectInfo<crate::local::Peer>>()
        .map(|c| c.0.uid);
    let response = match uid {
        Some(uid) => {
            request.extensions_mut().insert(Origin::Local { uid });
            next.run(request).await
        }
        None => ApiError::Unauthorized.into_response(),
    };
    no_store(response)
}

/// Job views and keys' effects are never to be cached by anything in between.
fn no_store(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn is_public(request: &Request) -> bool {
    request.method() == Method::GET && request.uri().path() == PUBLIC
}

async fn no_route() -> ApiError {
    ApiError::NoRoute
}

async fn wrong_method() -> ApiError {
    ApiError::Method
}

/// A JSON response. Serializing the API's own types cannot fail; if it ever did, the client
/// still gets JSON.
pub(crate) fn json_response<T: Serialize>(status: StatusCode, value: &T) -> Response {
    let body = serde_json::to_vec(value).unwrap_or_else(|e| {
        tracing::error!(error = %e, "a response did not serialize");
        br#"{"code":"internal","message":"the response could not be serialized","field":""}"#
            .to_vec()
    });
    json_bytes(status, Bytes::from(body))
}

pub(crate) fn json_bytes(status: StatusCode, body: Bytes) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Runs a blocking store call (SQLite, with its short retry sleeps) off the async workers.
pub(crate) async fn blocking<T, F>(app: &Arc<App>, f: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce(&App) -> Result<T, ApiError> + Send + 'static,
{
    let app = app.clone();
    match tokio::task::spawn_blocking(move || f(&app)).await {
        Ok(result) => result,
        Err(e) => {
            tracing::error!(error = %e, "a blocking store call did not finish");
            Err(ApiError::StateUnavailable {
                retry_after_secs: 1,
            })
        }
    }
}
