//! `GET /v1/audit?after=&limit=`: the audit trail (every program root ran, every node-scope
//! request), read from state.db. The API only reads it: root writes the trail, in the same
//! transactions that complete the jobs it belongs to.

use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use registry::AuditPage;

use super::{AppState, blocking, json_response, query};
use crate::error::ApiError;

pub(crate) const MAX_LIMIT: u32 = 1000;
const DEFAULT_LIMIT: u32 = 100;

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct AuditQuery {
    pub after: i64,
    pub limit: u32,
}

/// Parses the query by hand: every problem is a 400 naming the parameter.
pub(crate) fn parse_query(query: Option<&str>) -> Result<AuditQuery, ApiError> {
    let [after, limit] = query::numeric(query, ["after", "limit"])?;
    Ok(AuditQuery {
        after: query::cursor("after", after)?,
        limit: query::limit("limit", limit, DEFAULT_LIMIT, MAX_LIMIT)?,
    })
}

pub(crate) async fn list(State(app): AppState, uri: Uri) -> Result<Response, ApiError> {
    let q = parse_query(uri.query())?;
    let (after, limit) = (q.after, q.limit);
    let entries = blocking(&app, move |app| {
        Ok(app.admission.reader().audit(after, limit)?)
    })
    .await?;
    let next = entries.last().map_or(q.after, |e| e.seq);
    Ok(json_response(StatusCode::OK, &AuditPage { entries, next }))
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
    fn audit_queries_parse_with_defaults_and_bounds() {
        assert_eq!(
            parse_query(None).unwrap(),
            AuditQuery {
                after: 0,
                limit: 100
            }
        );
        assert_eq!(
            parse_query(Some("after=7&limit=1000")).unwrap(),
            AuditQuery {
                after: 7,
                limit: 1000
            }
        );
        assert_eq!(field_of("after=-1"), "after");
        assert_eq!(field_of("limit=0"), "limit");
        assert_eq!(field_of("limit=1001"), "limit");
        assert_eq!(field_of("wait=1"), "wait");
        assert_eq!(field_of("after=1&after=1"), "after");
        assert_eq!(field_of("after=99999999999999999999"), "after");
    }
}
