//! The deterministic simulation's own tests: as many seeded histories as fit in the time
//! budget keep the invariants, a seed replays to the same trace, the storage model keeps what
//! was synced and loses what was not, and the bug the histories found stays fixed.

use std::time::Duration;

/// The environment variable that sets the histories' budget in seconds (`scripts/test`'s own
/// stage for them gives 160). Unless it is set, the first [`DEFAULT_HISTORIES`] seeds run,
/// however long they take on a loaded machine.
const BUDGET_ENV: &str = "LAYERONE_SIMULATION_SECONDS";
/// The environment variable that sets the first seed.
const SEED_ENV: &str = "LAYERONE_SIMULATION_SEED";
/// A bound on the count besides the time.
const MAX_HISTORIES: u64 = 1_000_000;
/// The histories run when no budget is set: from seed 1, enough to crash and to lose unsynced
/// writes, which the test asserts.
const DEFAULT_HISTORIES: u64 = 8;

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn seeded_histories_with_crashes_and_lost_writes_keep_the_invariants() {
    let (count, budget) = match std::env::var(BUDGET_ENV).ok().and_then(|v| v.parse().ok()) {
        Some(seconds) => (MAX_HISTORIES, Duration::from_secs(seconds)),
        None => (DEFAULT_HISTORIES, Duration::MAX),
    };
    let first = env_number(SEED_ENV, 1);
    let dir = tempfile::tempdir().unwrap();
    let summary = simulation::run_many(first, count, budget, dir.path(), |_| {});
    println!("{summary}");
    if let Some(failure) = summary.failure {
        panic!("{failure}");
    }
    assert!(summary.histories > 0, "no history ran in the budget");
    assert!(summary.crashes > 0, "the histories never crashed");
    assert!(
        summary.sectors_lost > 0,
        "no crash lost an unsynced write: the storage model was not exercised"
    );
    assert_eq!(
        summary.sql_clock_readings, 0,
        "SQL read the time itself: every time the node records is its caller's clock's"
    );
}

#[test]
fn the_same_seed_replays_to_the_same_trace_hash() {
    let dir = tempfile::tempdir().unwrap();
    // An even seed runs on Debian, an odd one on CloudLinux.
    let run = |seed| simulation::run(seed, dir.path()).unwrap_or_else(|f| panic!("{f}"));
    for seed in [20_261_202, 20_261_203] {
        let (first, again) = (run(seed), run(seed));
        assert_eq!(
            first.trace_hash, again.trace_hash,
            "seed {seed} replayed to another trace"
        );
        assert_ne!(
            first.trace_hash,
            run(seed + 2).trace_hash,
            "two seeds gave one trace"
        );
    }
}

#[test]
fn the_storage_model_keeps_what_was_synced_and_loses_what_was_not() {
    let _one = simulation::exclusive();
    simulation::storage::install();
    simulation::storage::forget();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.db");
    let rows = |path: &std::path::Path| -> Vec<String> {
        let conn = rusqlite::Connection::open(path).unwrap();
        let check: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok");
        let mut stmt = conn.prepare("SELECT v FROM t ORDER BY v").unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    for keep_all in [false, true] {
        let _ = std::fs::remove_file(&path);
        simulation::storage::forget();
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(None, "journal_mode", "DELETE").unwrap();
        conn.pragma_update(None, "synchronous", "FULL").unwrap();
        conn.execute_batch("CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('synced');")
            .unwrap();
        // Committed without a sync: a power loss may take it.
        conn.pragma_update(None, "synchronous", "OFF").unwrap();
        conn.execute("INSERT INTO t VALUES ('unsynced')", [])
            .unwrap();
        simulation::storage::kill();
        drop(conn);
        let (kept, lost) = simulation::storage::restart(|| keep_all).unwrap();
        if keep_all {
            assert_eq!(
                (rows(&path), lost),
                (vec!["synced".into(), "unsynced".into()], 0)
            );
        } else {
            assert_eq!((rows(&path), kept), (vec!["synced".to_owned()], 0));
        }
    }
    // A transaction the machine died inside, with its journal synced and the database's
    // pages half written: the journal is hot on restart and rolls it back.
    simulation::storage::forget();
    let _ = std::fs::remove_file(&path);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "journal_mode", "DELETE").unwrap();
    conn.pragma_update(None, "synchronous", "FULL").unwrap();
    conn.pragma_update(None, "cache_size", 1).unwrap();
    conn.execute_batch("CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('before');")
        .unwrap();
    conn.execute_batch("BEGIN; DELETE FROM t;").unwrap();
    for i in 0..400 {
        conn.execute(
            "INSERT INTO t VALUES (?1)",
            [format!("{}{i}", "x".repeat(200))],
        )
        .unwrap();
    }
    simulation::storage::kill();
    drop(conn);
    let mut flip = false;
    simulation::storage::restart(|| {
        flip = !flip;
        flip
    })
    .unwrap();
    assert!(
        dir.path().join("model.db-journal").exists(),
        "the dead transaction's journal stays, hot"
    );
    assert_eq!(rows(&path), vec!["before".to_owned()]);
}

/// A simulated node of `platform` on its own clock, holding the process's storage model and
/// crash hook (the guard) and its directory for as long as the caller keeps them.
fn one_node(
    platform: provider::Platform,
) -> (
    std::sync::MutexGuard<'static, ()>,
    tempfile::TempDir,
    simulation::node::Node,
) {
    let one = simulation::exclusive();
    simulation::node::install();
    simulation::storage::forget();
    let dir = tempfile::tempdir().unwrap();
    let clock = testkit::ManualClock::from_seed(1);
    simulation::storage::set_clock(clock.clone());
    let node = simulation::node::Node::new(dir.path(), platform, clock).unwrap();
    (one, dir, node)
}

/// Found by the histories (seed 1000122): a valid request root refused at admission
/// (`stale_generation`: a newer generation of its resource was queued) was recorded without
/// its body's hash, so the control plane's retry of that very request got 409, as if it were
/// another body's. It is its failed job; another body under its id stays a conflict.
#[test]
fn a_request_refused_as_stale_at_admission_is_its_failed_job_when_sent_again() {
    use simulation::node::{Answer, Pass, node_id};
    let (_one, _dir, mut node) = one_node(provider::Platform::Debian);
    let list = |request: u64, generation: u64, user: &str| {
        serde_json::json!({"request_id": format!("{request:032x}"), "action": "set_sudo_allowlist",
            "node_id": node_id(), "resource": {"id": format!("{:032x}", 0xc3),
            "generation": generation, "users": [user]}})
    };
    let (newer, stale) = (list(1, 2, "alice"), list(2, 1, "alice"));
    assert_eq!(node.submit(&newer).unwrap(), Answer::Received);
    assert_eq!(node.submit(&stale).unwrap(), Answer::Received);
    assert!(matches!(node.pass(None, || true).unwrap(), Pass::Ran(_)));
    let job = node.state().unwrap().job(&format!("{:032x}", 2)).unwrap();
    assert_eq!(job.unwrap().error.unwrap().code, "stale_generation");
    assert_eq!(node.submit(&stale).unwrap(), Answer::Duplicate);
    assert_eq!(node.submit(&list(2, 1, "bob")).unwrap(), Answer::Conflict);
}

/// Found by the histories (seed 5139): `ensure_account` rewrote the account's row without
/// the limits `set_account_limits` had recorded, and left the PHP pools as those limits had
/// made them: the drift check found every pool of a re-declared, once-limited account
/// differing from what state.db derives. `ensure_account` keeps the limits now (each stored
/// field has one owner), and the pools stay as they derive.
#[test]
fn an_account_declared_again_after_its_limits_keeps_them_and_its_pools() {
    use simulation::node::{Answer, Pass};
    let (_one, _dir, mut node) = one_node(provider::Platform::CloudLinux);
    let registry = declarations::registry();
    let ops = [
        "ensure_account",
        "ensure_web_domain",
        "set_php_version",
        "set_account_limits",
        "ensure_account",
    ];
    for (n, name) in ops.into_iter().enumerate() {
        let op = registry.operation(name).unwrap();
        let body = serde_json::json!({"request_id": format!("{:032x}", n + 1),
            "operation": name, "resource": op.example()});
        assert_eq!(node.submit(&body).unwrap(), Answer::Received, "{name}");
        // One pass each: every request runs after the one before it ended.
        assert!(matches!(node.pass(None, || true).unwrap(), Pass::Ran(_)));
    }
    let state = node.state().unwrap();
    for n in 1..=ops.len() {
        let job = state.job(&format!("{n:032x}")).unwrap().unwrap();
        assert_eq!(job.state, registry::JobState::Succeeded, "{job:?}");
    }
    let account: registry::Hex32 = registry.operation("ensure_account").unwrap().example()["id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let row = state.resource("account", &account).unwrap().unwrap();
    assert!(
        !row.data["limits"].is_null(),
        "the second ensure_account dropped the limits: {:?}",
        row.data
    );
    let check = ops::drift::detect(&node.ctx().unwrap());
    assert_eq!(check.found, [], "a re-declared account's pools drifted");
}
