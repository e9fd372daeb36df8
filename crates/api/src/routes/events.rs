//! `GET /v1/events?after=&wait=&limit=`: the feed of job state changes, each final one with
//! the job's result or error, so a control plane follows every job with one long-poll instead
//! of polling job by job. A page holds at most `limit` events and
//! [`registry::EVENTS_PAGE_RESULT_BYTES`] of results (the store's query cuts it).
//!
//! A waiter reads; if nothing is there and it may wait, it sleeps until the state directory
//! watch reports a change (or one second passes, a safety net for a missed notification, or
//! the deadline comes), then reads again. It marks the notification seen *before* each read,
//! so a change that lands during the read wakes it at once instead of being lost.
//!
//! The feed keeps the newest events only (root trims the oldest). A read whose cursor is
//! behind the trim, so that events just after it are gone, is answered 410 `events_lost` with
//! `first_cursor`, the oldest event left ([`store::queries::trimmed_after`]): a client that
//! waits for jobs reads each of them once (`GET /v1/jobs/{request_id}`), since their ends may be
//! among what it missed, then resumes from `first_cursor - 1`. Never a page that silently
//! skips ahead.

use std::time::Duration;

use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use registry::EventPage;
use tokio::time::Instant;

use super::{AppState, blocking, json_response, query};
use crate::error::ApiError;

pub const MAX_WAIT_SECS: u64 = 60;
pub(crate) const MAX_LIMIT: u32 = 1000;
const DEFAULT_LIMIT: u32 = 100;
/// The longest a waiter sleeps without reading, whatever the watch says.
const SAFETY: Duration = Duration::from_secs(1);

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct EventsQuery {
    pub after: i64,
    pub wait_secs: u64,
    pub limit: u32,
}

/// Parses the query by hand: every problem is a 400 naming the parameter.
pub(crate) fn parse_query(query: Option<&str>) -> Result<EventsQuery, ApiError> {
    let [after, wait, limit] = query::numeric(query, ["after", "wait", "limit"])?;
    let wait_secs = match wait {
        Some(n) if n > MAX_WAIT_SECS => {
            return Err(query::bad(
                "wait",
                format!("at most {MAX_WAIT_SECS} seconds"),
            ));
        }
        n => n.unwrap_or(0),
    };
    Ok(EventsQuery {
        after: query::cursor("after", after)?,
        wait_secs,
        limit: query::limit("limit", limit, DEFAULT_LIMIT, MAX_LIMIT)?,
    })
}

/// Resolves when the receiver's value changes; never, if its sender is gone (so a select on it
/// cannot spin).
async fn changed<T>(rx: &mut tokio::sync::watch::Receiver<T>) {
    if rx.changed().await.is_err() {
        std::future::pending::<()>().await;
    }
}

pub(crate) async fn list(State(app): AppState, uri: Uri) -> Result<Response, ApiError> {
    let q = parse_query(uri.query())?;
    let deadline = Instant::now() + Duration::from_secs(q.wait_secs);
    let mut changes = app.changes.clone();
    let mut stopping = app.stopping.subscribe();
    let mut first = true;
    let page = loop {
        changes.borrow_and_update();
        let (after, limit) = (q.after, q.limit);
        let read: Result<EventPage, ApiError> = blocking(&app, move |app| {
            Ok(app.admission.reader().events(after, limit)?)
        })
        .await;
        let page = match read {
            Ok(page) => page,
            // Woken by root's commit while it still holds the lock: wait for the next change
            // rather than failing a long-poll that has time left.
            Err(ApiError::StateUnavailable { .. }) if !first && Instant::now() < deadline => {
                EventPage {
                    events: Vec::new(),
                    next: q.after,
                    truncated: false,
                }
            }
            Err(e) => return Err(e),
        };
        first = false;
        if let Some(first_cursor) = store::queries::trimmed_after(q.after, &page) {
            return Err(ApiError::EventsLost { first_cursor });
        }
        let now = Instant::now();
        if !page.events.is_empty() || now >= deadline || *stopping.borrow_and_update() {
            break page;
        }
        let step = (deadline - now).min(SAFETY);
        tokio::select! {
            () = changed(&mut changes) => {}
            () = changed(&mut stopping) => {}
            () = tokio::time::sleep(step) => {}
        }
    };
    Ok(json_response(StatusCode::OK, &page))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_of(query: &str) -> String {
        match parse_query(Some(query)) {
            Err(ApiError::Query { field, .. }) => field,
            other => panic!("{query}: {other:?}"),
        }
    }

    #[test]
    fn queries_parse_with_defaults_and_bounds() {
        assert_eq!(
            parse_query(None).unwrap(),
            EventsQuery {
                after: 0,
                wait_secs: 0,
                limit: 100
            }
        );
        assert_eq!(
            parse_query(Some("after=42&wait=60&limit=1000&")).unwrap(),
            EventsQuery {
                after: 42,
                wait_secs: 60,
                limit: 1000
            }
        );
        assert_eq!(field_of("after=abc"), "after");
        assert_eq!(field_of("after=-1"), "after");
        assert_eq!(field_of("wait=9999"), "wait");
        assert_eq!(field_of("wait=61"), "wait");
        assert_eq!(field_of("limit=0"), "limit");
        assert_eq!(field_of("limit=1001"), "limit");
        assert_eq!(field_of("after=1&after=2"), "after");
        assert_eq!(field_of("bogus=1"), "bogus");
        assert_eq!(field_of("after"), "after");
        assert_eq!(field_of("after=99999999999999999999"), "after");
    }
}
