//! One history: what it draws, in what order, and the invariants checked after it.
//!
//! A history is a node on a platform the seed picks, then [`STEPS`] seeded steps, each one
//! of: a burst of new requests submitted in an order other than the one their ids were
//! drawn in (for two accounts and two resources of each family, so that requests supersede
//! one another); resubmissions of earlier requests (the control plane's retry, after a
//! crash as much as before) and, rarely, an earlier request id with another body; a runner
//! pass; a runner pass in which the machine dies at the n-th crash point reached
//! ([`crate::node::Node::pass`]) and comes back from what the storage model kept
//! ([`crate::storage`]); the clock moved, sometimes past the periodic steps' interval (drift
//! check, `quick_check`, sweeps); a derived file edited behind the node's back (drift); the
//! inbox pruned as the API does. Account removals (and the purges they run) and account
//! rebuilds are drawn like every other operation.
//!
//! Then the history's end: passes until nothing is pending, and the checks of docs/design.md
//! section 3 ([`check`]).

use std::collections::BTreeMap;
use std::time::Duration;

use registry::{Kind, Lane, OperationEntry, Registry, Scope};
use serde_json::{Value, json};

use crate::Rng;
use crate::node::{Answer, Node, Pass};

/// How many seeded steps a history takes.
pub const STEPS: usize = 24;

/// How many passes the end of a history may take to drain what is pending.
const DRAIN_PASSES: usize = 4;

fn registry() -> &'static Registry {
    declarations::registry()
}

/// What the histories draw from: every example of every operation of the main lane, a
/// declaring operation's twice (resources must exist for the others to act on). The long
/// lane's operations (backups, restores, usage walks) run in a thread beside the passes and
/// are left to the real-process histories and crash matrix (`crates/cli/tests/node/lifecycle.rs`).
pub fn draws() -> Vec<(&'static dyn OperationEntry, Value)> {
    let mut out = Vec::new();
    for op in registry().operations() {
        if op.lane() == Lane::Long {
            continue;
        }
        let examples: Vec<Value> = std::iter::once(op.example())
            .chain(op.other_examples())
            .collect();
        for _ in 0..if op.kind().declares() { 2 } else { 1 } {
            out.extend(examples.iter().map(|e| (op, e.clone())));
        }
    }
    out
}

fn id(n: u64) -> String {
    format!("{n:032x}")
}

/// Request `request_id` of `op` for `resource`, in its scope's envelope.
fn envelope(op: &dyn OperationEntry, request_id: u64, resource: Value) -> Value {
    match op.scope() {
        Scope::Tenant => json!({"request_id": id(request_id), "operation": op.name(),
                                "resource": resource}),
        Scope::Node => json!({"request_id": id(request_id), "action": op.name(),
                              "node_id": crate::node::node_id(), "resource": resource}),
    }
}

/// Drawn requests: a tenant operation's for one of two accounts and one of two resources of
/// its family, a node-scope operation's for the node's own resource; half the time after
/// what it needs first (its prerequisites' examples, for the same account and resource), so
/// that histories reach what only a resource that exists can reach. A blob a request names
/// is the history's certificate bundle. `next_request` gives the request ids.
fn random_requests(
    rng: &mut Rng,
    draws: &[(&'static dyn OperationEntry, Value)],
    next_request: &mut u64,
    bundle: &str,
) -> Vec<Value> {
    let (op, example) = &draws[rng.below(draws.len() as u64) as usize];
    let mut chain: Vec<(&dyn OperationEntry, Value)> = Vec::new();
    if rng.below(2) == 0 {
        chain.extend(
            registry()
                .prerequisites(op.name())
                .into_iter()
                .map(|p| (p, p.example())),
        );
    }
    chain.push((*op, example.clone()));
    let (account, instance) = (rng.below(2) as u8, rng.below(2) as u8);
    chain
        .into_iter()
        .map(|(op, example)| {
            let resource = match op.scope() {
                Scope::Tenant => declarations::example::another(&example, account, instance),
                Scope::Node => example,
            };
            *next_request += 1;
            let mut body = envelope(op, *next_request, resource);
            if body["resource"].get("blob").is_some() {
                body["resource"]["blob"] = json!(bundle);
            }
            body
        })
        .collect()
}

/// The declaring operation of the family every tenant resource belongs to (the account's),
/// and its rebuild: what the end of a history runs for both accounts.
fn rebuilds(request_id: u64) -> Vec<Value> {
    let account = registry()
        .operations()
        .find(|op| {
            op.scope() == Scope::Tenant
                && op.kind().declares()
                && registry().prerequisites(op.name()).is_empty()
        })
        .expect("a tenant family declares its resources from nothing");
    let rebuild = registry()
        .operations()
        .find(|op| op.family() == account.family() && op.kind() == Kind::Action)
        .expect("the account family has a rebuild");
    (0..2u8)
        .map(|a| {
            let resource = declarations::example::another(&account.example(), a, 0);
            envelope(
                rebuild,
                request_id + u64::from(a),
                json!({"id": resource["id"]}),
            )
        })
        .collect()
}

/// What one history did, for the trace and the figures.
#[derive(Default)]
pub struct Record {
    /// One line per thing that happened, in order: what the trace hash is taken over.
    pub trace: Vec<String>,
    /// Every request accepted (`Received`) with the hash of the body it was accepted with.
    pub accepted: BTreeMap<String, String>,
    pub submitted: usize,
    pub passes: usize,
    pub crashes: usize,
    pub drift_edits: usize,
    pub sectors_kept: usize,
    pub sectors_lost: usize,
}

/// The history of `seed` on `node`, its blob `bundle` already uploaded; then its end and
/// its checks. An error names the invariant that broke.
pub fn run(seed: u64, node: &mut Node, bundle: &str) -> anyhow::Result<Record> {
    let mut rng = Rng::new(seed);
    let draws = draws();
    let mut record = Record::default();
    let mut next_request = 1000u64;
    let mut bodies: Vec<Value> = Vec::new();
    let mut retry: Vec<Value> = Vec::new();
    for step in 0..STEPS {
        match rng.below(14) {
            0..=3 => {
                let mut burst: Vec<Vec<Value>> = (0..1 + rng.below(4))
                    .map(|_| random_requests(&mut rng, &draws, &mut next_request, bundle))
                    .collect();
                // Reordered: the burst's requests (each after what it needs) are submitted in
                // an order other than the one their ids were drawn in.
                rng.shuffle(&mut burst);
                // What the API answered 503 is sent again first.
                let burst: Vec<Value> = std::mem::take(&mut retry)
                    .into_iter()
                    .chain(burst.into_iter().flatten())
                    .collect();
                for body in burst {
                    if submitted(node, &mut record, &body, true)? {
                        bodies.push(body);
                    } else {
                        retry.push(body);
                    }
                }
            }
            4 if !bodies.is_empty() => {
                for _ in 0..1 + rng.below(3) {
                    let body = bodies[rng.below(bodies.len() as u64) as usize].clone();
                    submit(node, &mut record, &body, false)?;
                }
            }
            5 if bodies.len() > 1 && rng.below(2) == 0 => {
                // A known request id with another request's body: a conflict, never a job.
                let n = bodies.len() as u64;
                let (of, with) = (rng.below(n) as usize, rng.below(n) as usize);
                let mut body = bodies[with].clone();
                body["request_id"] = bodies[of]["request_id"].clone();
                if body != bodies[of] {
                    submit(node, &mut record, &body, false)?;
                }
            }
            5..=6 => pass(node, &mut rng, &mut record, None)?,
            7..=8 => {
                let after = rng.below(16) as u32;
                pass(node, &mut rng, &mut record, Some(after))?;
            }
            9 => {
                let by = if rng.below(3) == 0 {
                    runner::steps::PERIODIC_EVERY + Duration::from_secs(rng.below(3600))
                } else {
                    Duration::from_millis(1 + rng.below(120_000))
                };
                node.clock.advance(by);
                record.trace.push(format!("advance {}", by.as_millis()));
            }
            10..=11 => {
                if let Some(path) = edit_derived_file(node, &mut rng)? {
                    record.drift_edits += 1;
                    record.trace.push(format!("edit {path}"));
                }
            }
            _ => {
                node.prune()?;
                record.trace.push("prune".into());
            }
        }
        if crate::storage::is_dead() {
            anyhow::bail!("step {step}: the machine is still dead after the step");
        }
    }
    // The end: what is pending drains, and the checks.
    for _ in 0..DRAIN_PASSES {
        pass(node, &mut rng, &mut record, None)?;
        if !pending(node)? {
            break;
        }
    }
    check(node, &mut record, &mut next_request)?;
    crate::serial::check(node, seed)?;
    Ok(record)
}

/// Submits `body`. A new request must be received; a resubmission is a duplicate of the job
/// it was, whether the API still holds it or root admitted it and the API pruned it; and a
/// known id with another body is a conflict.
fn submit(node: &Node, record: &mut Record, body: &Value, new: bool) -> anyhow::Result<()> {
    submitted(node, record, body, new).map(|_| ())
}

/// [`submit`], returning whether the API answered at all (not 503).
fn submitted(node: &Node, record: &mut Record, body: &Value, new: bool) -> anyhow::Result<bool> {
    let rid = body["request_id"].as_str().unwrap_or_default().to_owned();
    let sha = registry()
        .validate(body.to_string().as_bytes(), &node.config.node_id)
        .map_err(|e| anyhow::anyhow!("{body}: {e}"))?
        .body_sha256;
    let admission = node.submit(body)?;
    record.submitted += 1;
    let known = record.accepted.get(&rid);
    let outcome = match (admission, known) {
        (Answer::Received, None) => {
            record.accepted.insert(rid.clone(), sha);
            "received"
        }
        (Answer::Duplicate, Some(first)) if *first == sha => "duplicate",
        (Answer::Conflict, Some(first)) if *first != sha => "conflict",
        (Answer::Unavailable, _) => "unavailable",
        _ => anyhow::bail!(
            "request {rid} ({}, body {sha}, first accepted as {known:?}): admitted as \
             {admission:?}: {body}",
            if new { "new" } else { "known" }
        ),
    };
    let op = body["operation"].as_str().or(body["action"].as_str());
    record
        .trace
        .push(format!("submit {rid} {} {outcome}", op.unwrap_or("?")));
    Ok(admission != Answer::Unavailable)
}

/// One pass, dying at the crash point `die_after` others later if given.
fn pass(
    node: &mut Node,
    rng: &mut Rng,
    record: &mut Record,
    die_after: Option<u32>,
) -> anyhow::Result<()> {
    record.passes += 1;
    let mut keep_rng = Rng::new(rng.next_u64());
    match node.pass(die_after, || keep_rng.below(2) == 0)? {
        Pass::Ran(report) => record.trace.push(format!(
            "pass admitted {} rejected {} applied {} failed steps {:?}",
            report.admitted, report.rejected, report.applied, report.failed_steps
        )),
        Pass::Died { point, kept, lost } => {
            record.crashes += 1;
            record.sectors_kept += kept;
            record.sectors_lost += lost;
            record
                .trace
                .push(format!("died at {point}, sectors kept {kept} lost {lost}"));
        }
    }
    Ok(())
}

/// Appends a line to one of the derived files the node wrote (a vhost or a PHP-FPM pool),
/// the seed's pick; returns its path beneath the system root, or `None` when there is none.
fn edit_derived_file(node: &Node, rng: &mut Rng) -> anyhow::Result<Option<String>> {
    let provider = &node.config.provider;
    let mut files = Vec::new();
    let vhosts = provider.sysconf(provider.apache_layout().vhosts_dir);
    let layout = provider.php_fpm_layout(provider::PhpVersion::V8_2);
    let pools = provider.sysconf(layout.tenant_dir.as_deref().unwrap_or(&layout.pool_dir));
    for dir in [vhosts, pools] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut names: Vec<_> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "conf"))
            .collect();
        names.sort();
        files.extend(names);
    }
    if files.is_empty() {
        return Ok(None);
    }
    let path = &files[rng.below(files.len() as u64) as usize];
    let mut text = std::fs::read_to_string(path)?;
    text.push_str("# edited by hand\n");
    std::fs::write(path, text)?;
    let shown = path
        .strip_prefix(provider.root())
        .unwrap_or(path)
        .display()
        .to_string();
    Ok(Some(shown))
}

/// Whether any job is still queued or running.
fn pending(node: &Node) -> anyhow::Result<bool> {
    Ok(node
        .state()?
        .job_counts()?
        .iter()
        .any(|(state, n)| *n > 0 && (state == "queued" || state == "running")))
}

/// The invariants of docs/design.md section 3, after the history's end:
/// - integrity: `integrity_check` is `ok` on state.db and inbox.db;
/// - nothing lost: every request the API accepted is a job of state.db, final (succeeded,
///   failed or superseded), with the body it was accepted with;
/// - nothing doubled: each request id is one job with exactly one final event on the feed,
///   and the feed speaks of no request that was not accepted;
/// - nothing half-applied and the disk converged: nothing queued or running, and the drift
///   check (`ops::drift::detect`, every family's derivations against the system root) finds
///   nothing and looks at every family: before any rebuild when the history edited no
///   derived file, after both accounts' rebuilds when it did (drift is reported, never
///   repaired silently).
fn check(node: &mut Node, record: &mut Record, next_request: &mut u64) -> anyhow::Result<()> {
    let state = node.state()?;
    let integrity = state.integrity_check()?;
    anyhow::ensure!(integrity == "ok", "state.db integrity_check: {integrity}");
    let inbox = rusqlite::Connection::open(node.layout.inbox_db())?;
    let integrity: String = inbox.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
    anyhow::ensure!(integrity == "ok", "inbox.db integrity_check: {integrity}");
    drop(inbox);
    let conn = rusqlite::Connection::open(node.layout.state_db())?;
    let mut finals: BTreeMap<String, i64> = BTreeMap::new();
    {
        let mut stmt = conn.prepare(
            "SELECT request_id, count(*) FROM events
             WHERE kind = 'job' AND state IN ('succeeded', 'failed', 'superseded')
             GROUP BY request_id",
        )?;
        for row in stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))? {
            let (rid, n) = row?;
            finals.insert(rid, n);
        }
    }
    for (rid, sha) in &record.accepted {
        let job = state.job(rid)?.ok_or_else(|| {
            anyhow::anyhow!("nothing lost: request {rid} was accepted, and is no job")
        })?;
        anyhow::ensure!(
            job.state.is_terminal(),
            "nothing half-applied: request {rid} is still {:?}",
            job.state
        );
        let stored: Option<String> = conn.query_row(
            "SELECT body_sha256 FROM jobs WHERE request_id = ?1",
            [rid],
            |r| r.get(0),
        )?;
        anyhow::ensure!(
            stored.as_ref() == Some(sha),
            "nothing lost: request {rid} is a job of another body ({stored:?}, accepted as \
             {sha}): {job:?}"
        );
        let n = finals.get(rid).copied().unwrap_or(0);
        anyhow::ensure!(
            n == 1,
            "nothing doubled: request {rid} has {n} final events"
        );
        let error = job.error.as_ref().map(|e| e.code.to_string());
        record
            .trace
            .push(format!("job {rid} {:?} {error:?}", job.state));
    }
    if let Some(rid) = finals
        .keys()
        .find(|rid| !record.accepted.contains_key(*rid))
    {
        anyhow::bail!("nothing invented: the feed has a final event for {rid}, never accepted");
    }
    drop(conn);
    drop(state);
    if record.drift_edits == 0 {
        converged(node, "after the history, before any rebuild")?;
    }
    for body in rebuilds(*next_request + 1) {
        *next_request += 2;
        submit(node, record, &body, true)?;
    }
    let mut rng = Rng::new(0);
    for _ in 0..DRAIN_PASSES {
        pass(node, &mut rng, record, None)?;
        if !pending(node)? {
            break;
        }
    }
    converged(node, "after both accounts' rebuilds")
}

/// Nothing pending, and the drift check finds nothing and looks at every family.
fn converged(node: &Node, when: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        !pending(node)?,
        "{when}: jobs still pending after the passes"
    );
    let ctx = node.ctx()?;
    let check = ops::drift::detect(&ctx);
    anyhow::ensure!(
        check.unchecked.is_empty(),
        "{when}: the drift check could not look at {:?}",
        check.unchecked
    );
    anyhow::ensure!(
        check.found.is_empty(),
        "the disk converged {when}: the drift check finds {:#?}",
        check.found
    );
    Ok(())
}
