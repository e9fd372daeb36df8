//! The one error type of the client. A caller branches on the variant: a connection that could
//! not be made, a TLS failure (a pin mismatch above all, which must never be retried against
//! the same address without a human looking), a response that is not HTTP, an answer of the
//! API with its stable code, or a timeout.

use std::path::PathBuf;

/// Everything a request through [`crate::NodeClient`] can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The URL, the pin, a header or the path given to the client is unusable.
    #[error("invalid client configuration: {0}")]
    Config(String),
    /// No TCP connection could be made.
    #[error("cannot connect to {addr}")]
    Connect {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// An established connection failed while a request was written or its answer read.
    #[error("the connection failed during a request")]
    Io(#[source] std::io::Error),
    /// The server's answer is not well-formed HTTP/1.1.
    #[error("malformed HTTP response: {0}")]
    Http(String),
    /// The API answered with an error: its status, stable code, message and the field at fault
    /// (empty when the error is not about one field).
    #[error("the API answered {status} {code}: {message}")]
    Api {
        status: u16,
        code: String,
        message: String,
        field: String,
        /// The `Retry-After` of a 429 or 503, in seconds.
        retry_after_secs: Option<u64>,
        /// On 410 `events_lost`: the oldest cursor the events feed still holds (resume from
        /// the one before it; [`ClientError::events_lost`]).
        first_cursor: Option<i64>,
    },
    /// No answer in time (a socket timeout, or [`crate::NodeClient::wait`]'s deadline).
    #[error("timed out: {0}")]
    Timeout(String),
    /// A typed call named an operation of the other scope (a node administrator operation
    /// through `submit_op`, or a tenant one through `submit_node_op`). Nothing was sent.
    #[error("{operation} is a {scope}-scope operation")]
    Scope {
        operation: &'static str,
        scope: &'static str,
    },
    /// A job read through a typed call is not what the operation documents (another
    /// operation, a result that is not the operation's result type, not yet terminal).
    #[error("unexpected job: {0}")]
    Unexpected(String),
    /// `dev.json` could not be read or parsed.
    #[error("cannot load {path}")]
    DevInfo {
        path: PathBuf,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Why a TLS session could not be established.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The server's certificate is not the pinned one. Checked during the handshake, so
    /// nothing of the request has been sent.
    #[error("the server certificate (pin {presented}) does not match the pin {expected}")]
    PinMismatch { expected: String, presented: String },
    /// Any other handshake failure: a bad signature (a peer without the private key), no
    /// common protocol version, an alert from the server.
    #[error("the TLS handshake failed")]
    Handshake(#[source] std::io::Error),
}

impl ClientError {
    /// The stable API code, when the API answered with an error.
    pub fn api_code(&self) -> Option<&str> {
        match self {
            ClientError::Api { code, .. } => Some(code),
            _ => None,
        }
    }

    /// On 410 `events_lost` (the events feed was trimmed past the cursor read from, so events
    /// just after it are gone): the oldest cursor the feed still holds. Read the jobs being
    /// waited for directly, then resume the feed from the cursor before this one.
    pub fn events_lost(&self) -> Option<i64> {
        match self {
            ClientError::Api {
                code, first_cursor, ..
            } if code == "events_lost" => *first_cursor,
            _ => None,
        }
    }

    /// The HTTP status, when the API answered with an error.
    pub fn status(&self) -> Option<u16> {
        match self {
            ClientError::Api { status, .. } => Some(*status),
            _ => None,
        }
    }
}
