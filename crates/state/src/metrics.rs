//! The metrics' reads of state.db (`store::metrics`), checked on the schema root migrates.

use crate::StateDb;

/// The queue's read goes through the `jobs_pending` partial index, never the whole jobs
/// table (which keeps every job ever admitted), and counts what is queued and running by
/// operation with the earliest time one of them was queued.
#[test]
fn the_queue_is_read_from_the_pending_jobs_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let state = StateDb::open(&path).unwrap();
    let plan: Vec<String> = state
        .conn
        .prepare(&format!(
            "EXPLAIN QUERY PLAN {}",
            store::metrics::PENDING_JOBS
        ))
        .unwrap()
        .query_map([], |r| r.get::<_, String>(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(
        plan.iter().all(|step| !step.starts_with("SCAN jobs")),
        "{plan:?}"
    );
    assert!(
        plan.iter()
            .any(|step| step.starts_with("SEARCH jobs") && step.contains("jobs_pending")),
        "{plan:?}"
    );

    for (n, (operation, job_state, queued_at)) in [
        ("ensure_account", "queued", 3_000),
        ("ensure_account", "queued", 2_000),
        ("ensure_account", "running", 1_000),
        ("ensure_account", "succeeded", 500),
        ("observe_account_usage", "queued", 4_000),
    ]
    .into_iter()
    .enumerate()
    {
        state
            .conn
            .execute(
                "INSERT INTO jobs(request_id, operation, state, queued_at) VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params![format!("r{n}"), operation, job_state, queued_at],
            )
            .unwrap();
    }
    let mut pending = store::StateReader::new(&path).metrics().unwrap().pending;
    pending.sort();
    let row = |op: &str, s: &str, n: u64, at: i64| (op.to_owned(), s.to_owned(), n, at);
    assert_eq!(
        pending,
        [
            row("ensure_account", "queued", 2, 2_000),
            row("ensure_account", "running", 1, 1_000),
            row("observe_account_usage", "queued", 1, 4_000),
        ]
    );
}
