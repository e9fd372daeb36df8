//! `PUT /v1/blobs/{sha256}` and `GET /v1/blobs/{sha256}`: content-addressed uploads into
//! `blobs/in` (a certificate bundle, an archive to restore) and downloads from `blobs/out`
//! (an account's backup).
//!
//! An upload is streamed to a temporary file while it is hashed, bounded in size and time,
//! and published under its name only if the content matches it, so a job can never refer to a
//! blob that is half written or not what the control plane meant. The body never sits in
//! memory whole: a writer thread takes it chunk by chunk.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::Response;
use registry::BlobId;
use serde::Serialize;
use store::blobs::{self, BlobError, Upload};
use tokio::sync::mpsc;

use super::{AppState, json_response};
use crate::error::ApiError;
use crate::limits::{declared_length, drain, next_chunk};

/// The answer to an upload.
#[derive(Serialize)]
struct Uploaded {
    blob: BlobId,
    size: u64,
}

fn blob_id(uri: &Uri) -> Result<BlobId, ApiError> {
    // The router matched `/v1/blobs/{sha256}`; the raw segment is parsed here so a bad one
    // gets this API's error, not the framework's.
    let raw = uri.path().strip_prefix("/v1/blobs/").unwrap_or_default();
    raw.parse().map_err(|_| ApiError::BlobId)
}

fn storage_failed(e: BlobError) -> ApiError {
    match e {
        BlobError::Mismatch { actual } => ApiError::BlobMismatch { actual },
        BlobError::TooLarge { limit } => ApiError::BlobTooLarge { limit },
        BlobError::Missing(_) | BlobError::NotRegular(_) => ApiError::BlobNotFound,
        BlobError::Io { ref source, .. } if store::disk::is_out_of_space(source) => {
            tracing::warn!(error = ?e, "an upload found the blobs file system full");
            // The same refusal admission gives on a full inbox.
            ApiError::Refused(admission::Refusal::disk_full(registry::FileSystem::Blobs))
        }
        BlobError::Io { .. } => {
            // Not the client's doing: logged whole, answered as a retryable 503 without a path.
            tracing::error!(error = ?e, "blob storage failed");
            ApiError::BlobStorageUnavailable
        }
    }
}

pub(crate) async fn put(
    State(app): AppState,
    uri: Uri,
    headers: HeaderMap,
    mut body: Body,
) -> Result<Response, ApiError> {
    let id = blob_id(&uri)?;
    let limit = app.limits.max_blob_bytes;
    if declared_length(&headers).is_some_and(|n| n > limit) {
        drain(&mut body).await;
        return Err(ApiError::BlobTooLarge { limit });
    }

    // The writer thread owns the file; the channel is closed without `End` when the upload
    // is abandoned, and the thread then drops the part it wrote.
    enum Chunk {
        Data(Bytes),
        End,
    }
    let (tx, mut rx) = mpsc::channel::<Chunk>(8);
    let layout = app.layout.clone();
    let name = id.clone();
    let writer = tokio::task::spawn_blocking(move || -> Result<Option<u64>, BlobError> {
        let mut upload = Upload::begin(&layout, limit)?;
        while let Some(chunk) = rx.blocking_recv() {
            match chunk {
                Chunk::Data(data) => upload.write(&data)?,
                Chunk::End => return upload.finish(&layout, &name).map(Some),
            }
        }
        Ok(None)
    });

    // Owns the sender: when reading stops for any reason, the writer sees the channel close.
    let read = async move {
        while let Some(frame) = next_chunk(&mut body).await {
            match frame {
                Ok(Some(data)) => {
                    if tx.send(Chunk::Data(data)).await.is_err() {
                        // The writer stopped (too large, disk): its error is the answer.
                        return Ok(());
                    }
                }
                Ok(None) => {}
                Err(_) => return Err(ApiError::BodyUnreadable),
            }
        }
        let _ = tx.send(Chunk::End).await;
        Ok(())
    };
    let read = tokio::time::timeout(app.limits.blob_read_timeout, read).await;
    let stored = writer.await;
    match read {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(e),
        Err(_) => return Err(ApiError::BodyTimeout),
    }
    match stored {
        Ok(Ok(Some(size))) => Ok(json_response(
            StatusCode::CREATED,
            &Uploaded { blob: id, size },
        )),
        Ok(Ok(None)) => Err(ApiError::BodyUnreadable),
        Ok(Err(e)) => Err(storage_failed(e)),
        Err(e) => {
            tracing::error!(error = %e, "the blob writer did not finish");
            Err(ApiError::BlobStorageUnavailable)
        }
    }
}

pub(crate) async fn get(State(app): AppState, uri: Uri) -> Result<Response, ApiError> {
    let id = blob_id(&uri)?;
    let layout = app.layout.clone();
    let opened = tokio::task::spawn_blocking(move || {
        let file = blobs::open_outgoing(&layout, &id)?;
        let len = file
            .metadata()
            .map_err(|source| BlobError::Io {
                path: layout.blobs_out(),
                source,
            })?
            .len();
        Ok::<_, BlobError>((file, len))
    })
    .await;
    let (file, len) = match opened {
        Ok(opened) => opened.map_err(storage_failed)?,
        Err(_) => return Err(ApiError::BlobStorageUnavailable),
    };

    // A reader thread sends the file in chunks; the response streams them as they come.
    let (tx, rx) = mpsc::channel::<std::io::Result<Bytes>>(4);
    tokio::task::spawn_blocking(move || {
        use std::io::Read;
        let mut file = file;
        loop {
            let mut buf = vec![0u8; 64 * 1024];
            match file.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => {
                    buf.truncate(n);
                    if tx.blocking_send(Ok(Bytes::from(buf))).is_err() {
                        return; // the client went away
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = tx.blocking_send(Err(e));
                    return;
                }
            }
        }
    });
    let mut response = Response::new(Body::from_stream(ChunkStream(rx)));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    Ok(response)
}

/// The receiving end of the reader thread, as the stream a response body is built from.
struct ChunkStream(mpsc::Receiver<std::io::Result<Bytes>>);

impl futures_core::Stream for ChunkStream {
    type Item = std::io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx)
    }
}
