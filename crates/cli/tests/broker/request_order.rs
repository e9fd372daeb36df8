//! Serial equivalence and supersession against a dev node (`layerone-dev`) over HTTPS, generated
//! from the declarations (docs/design.md section 5; ARCHITECTURE.md invariant 16).
//!
//! The cases come from `declarations::registry()`: every ordered pair (A, B) of tenant
//! operations whose requests share a job key (the same family and resource id, as their
//! examples name them: `ensure_account` then `observe_account_usage`, `remove_web_domain` then
//! `ensure_web_domain`, an operation then itself), and every declaring operation (kind
//! `declare`) three times over. Each case runs on two fresh accounts of its own, both first
//! given the prerequisites of its operations (`Registry::prerequisites`; the case's first
//! operation left out unless another prerequisite needs it, so that it runs on a fresh
//! resource), each request being the operation's example relabelled for that account:
//!
//! - **batch**: the case's requests submitted together while the test holds the runner's pass
//!   lock (`runner.lock`), so that one pass admits every case at once: all of a case's
//!   requests are queued together, as a control plane's burst would be (the repeated
//!   declarations back to back from one connection, then the pairs side by side);
//! - **serial**: the same requests one at a time on the other account, each waited for before
//!   the next is sent: the serial node of docs/design.md section 5.
//!
//! It checks, for every case:
//!
//! - the batch account ends in the state the serial account ends in: its resource rows in
//!   state.db and the derived files of the simulated system that name it (whole files under a
//!   path naming it, and the lines naming it in shared files), compared once ids, names, uids
//!   and gids are mapped onto one another;
//! - every batch job not superseded ends as its serial twin did, the same state and the same
//!   error code, and no serial job ends `superseded`;
//! - a declaration sent three times back to back in one pass runs once, the last, the first
//!   two ending `superseded` each by the next: supersession is kept;
//! - every job of the node that ended `superseded`, setup included, was superseded by the
//!   same request again (the same operation, resource and content, of a kind
//!   `Registry::supersedes` allows) with nothing between the two that ran.
//!
//! Node-scope operations are left out: the node has one resource of each of their families,
//! so they cannot run as independent cases side by side on one node; the deterministic
//! simulation (`crates/simulation`) checks their histories against its serial model.
//!
//! The node runs the `cloudlinux` profile, where every tenant operation applies
//! (`set_account_isolation`, and `set_account_limits` with database limits, are refused on
//! `debian`).

use crate::common;
use crate::fleet_support;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use client::{ClientError, DevInfo, NodeClient};
use fleet_support::DevNode;
use registry::{JobState, Kind, OperationEntry, Registry, Scope};
use serde_json::{Value, json};

/// How long one phase (every account's next request, or the whole batch) may take to end.
const PHASE_BOUND: Duration = Duration::from_secs(180);
/// Concurrent HTTPS connections the test submits and reads over.
const CONNECTIONS: usize = 8;

fn registry() -> &'static Registry {
    declarations::registry()
}

// ---------------------------------------------------------------------------------------
// Accounts: the examples relabelled.

/// The test's account `n`: every id and unique name of an example made its own.
/// `example::another` tells only `example::INSTANCES` accounts apart and the cases need
/// hundreds, so this follows its rules with a wider label: an id keeps its first 28 digits
/// (the example's byte) and ends in `n` as four hex digits; a name's stem (`shop`, `app`:
/// `example::DISTINCT_STEMS`) is followed by `x` and `n` as four decimal digits.
type Account = u16;

fn stem_label(stem: &str, n: Account) -> String {
    format!("{stem}x{n:04}")
}

fn is_id(text: &str) -> bool {
    text.len() == 32 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

fn relabel(value: &Value, n: Account) -> Value {
    match value {
        Value::String(text) if is_id(text) => Value::String(format!("{}{n:04x}", &text[..28])),
        Value::String(text) => {
            let mut out = String::with_capacity(text.len() + 8);
            let mut rest = text.as_str();
            while let Some(c) = rest.chars().next() {
                match declarations::example::DISTINCT_STEMS
                    .iter()
                    .find(|stem| rest.starts_with(*stem))
                {
                    Some(stem) => {
                        out.push_str(&stem_label(stem, n));
                        rest = &rest[stem.len()..];
                    }
                    None => {
                        out.push(c);
                        rest = &rest[c.len_utf8()..];
                    }
                }
            }
            Value::String(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| relabel(v, n)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), relabel(v, n)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// What tells the accounts apart in any text: the first 28 digits of every id the tenant
/// examples name, and the stems.
struct Labels {
    id_prefixes: Vec<String>,
}

impl Labels {
    fn of_examples() -> Labels {
        fn ids(value: &Value, out: &mut BTreeSet<String>) {
            match value {
                Value::String(text) if is_id(text) => {
                    out.insert(text[..28].to_owned());
                }
                Value::Array(items) => items.iter().for_each(|v| ids(v, out)),
                Value::Object(map) => map.values().for_each(|v| ids(v, out)),
                _ => {}
            }
        }
        let mut prefixes = BTreeSet::new();
        for op in tenant_operations() {
            ids(&op.example(), &mut prefixes);
        }
        Labels {
            id_prefixes: prefixes.into_iter().collect(),
        }
    }

    /// The accounts `text` names.
    fn accounts_in(&self, text: &str) -> BTreeSet<Account> {
        let mut found = BTreeSet::new();
        for stem in declarations::example::DISTINCT_STEMS {
            let marker = format!("{stem}x");
            for (at, _) in text.match_indices(&marker) {
                let digits = text.get(at + marker.len()..at + marker.len() + 4);
                if let Some(n) = digits
                    .filter(|d| d.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|d| d.parse().ok())
                {
                    found.insert(n);
                }
            }
        }
        for prefix in &self.id_prefixes {
            for (at, _) in text.match_indices(prefix.as_str()) {
                let digits = text.get(at + 28..at + 32);
                if let Some(n) = digits
                    .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
                    .and_then(|d| Account::from_str_radix(d, 16).ok())
                {
                    found.insert(n);
                }
            }
        }
        found
    }

    /// `text` with account `n`'s labels, uid and gid replaced by placeholders, so that two
    /// accounts' texts compare equal when they say the same of each.
    fn unlabel(&self, text: &str, n: Account, ids: Option<(u64, u64)>) -> String {
        let mut out = text.to_owned();
        for stem in declarations::example::DISTINCT_STEMS {
            out = out.replace(&stem_label(stem, n), &format!("{stem}x####"));
        }
        for prefix in &self.id_prefixes {
            out = out.replace(&format!("{prefix}{n:04x}"), &format!("{prefix}####"));
        }
        if let Some((uid, gid)) = ids {
            out = testkit::replace_number(&out, uid, "UID");
            out = testkit::replace_number(&out, gid, "GID");
        }
        out
    }
}

// ---------------------------------------------------------------------------------------
// Cases, from the declarations.

fn tenant_operations() -> Vec<&'static dyn OperationEntry> {
    registry()
        .operations()
        .filter(|op| op.scope() == Scope::Tenant)
        .collect()
}

/// The family every tenant resource belongs to: the one whose declaring operation follows
/// nothing (the account).
fn account_family() -> &'static str {
    tenant_operations()
        .into_iter()
        .find(|op| op.kind().declares() && registry().prerequisites(op.name()).is_empty())
        .expect("a tenant family declares its resources from nothing")
        .family()
}

/// The job key of an operation's example: its family and resource id.
fn job_key(op: &dyn OperationEntry) -> (&'static str, String) {
    let parsed = op
        .parse_typed(op.example())
        .unwrap_or_else(|e| panic!("{}'s example does not parse: {e:?}", op.name()));
    (op.family(), parsed.resource_id.to_string())
}

/// Requests sent on one resource, after a setup, on a batch account and on a serial one.
struct Case {
    operations: Vec<&'static dyn OperationEntry>,
    setup: Vec<&'static dyn OperationEntry>,
    batch: Account,
    serial: Account,
}

impl Case {
    fn new(operations: Vec<&'static dyn OperationEntry>, index: usize) -> Case {
        let first = operations[0].name();
        let mut union: Vec<&'static dyn OperationEntry> = Vec::new();
        for op in &operations {
            for before in registry().prerequisites(op.name()) {
                if !union.iter().any(|u| u.name() == before.name()) {
                    union.push(before);
                }
            }
        }
        // The case's first operation acts on a fresh resource, unless the setup needs it for
        // another of its steps (a mailbox before a catch-all needs the mail domain).
        let needed = union.iter().any(|u| {
            registry()
                .prerequisites(u.name())
                .iter()
                .any(|p| p.name() == first)
        });
        let setup = union
            .into_iter()
            .filter(|u| needed || u.name() != first)
            .collect();
        let batch = Account::try_from(2 * index + 1).expect("fewer cases than accounts");
        Case {
            operations,
            setup,
            batch,
            serial: batch + 1,
        }
    }

    fn name(&self) -> String {
        let names: Vec<&str> = self.operations.iter().map(|o| o.name()).collect();
        names.join(" then ")
    }
}

fn cases() -> Vec<Case> {
    let ops = tenant_operations();
    let mut lists: Vec<Vec<&'static dyn OperationEntry>> = Vec::new();
    for a in &ops {
        for b in &ops {
            if job_key(*a) == job_key(*b) {
                lists.push(vec![*a, *b]);
            }
        }
    }
    for x in ops.iter().filter(|op| op.kind() == Kind::Declare) {
        lists.push(vec![*x, *x, *x]);
    }
    lists
        .into_iter()
        .enumerate()
        .map(|(i, ops)| Case::new(ops, i))
        .collect()
}

// ---------------------------------------------------------------------------------------
// The node, over HTTPS.

/// Request ids: unique on this node.
fn request_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("0ede{:028x}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A request of `op` on account `n`, with a fresh request id.
fn request(op: &dyn OperationEntry, n: Account) -> Value {
    json!({
        "request_id": request_id(),
        "operation": op.name(),
        "resource": relabel(&op.example(), n),
    })
}

/// Submits `body`, waiting out a 429 or 503 as the API asks; panics on any other refusal.
fn submit(client: &NodeClient, body: &Value, what: &str) {
    let deadline = Instant::now() + PHASE_BOUND;
    loop {
        match client.submit(body) {
            Ok(view) => {
                assert_eq!(
                    Some(view.request_id.as_str()),
                    body["request_id"].as_str(),
                    "{what}: the 202 names another job"
                );
                return;
            }
            Err(ClientError::Api {
                status: 429 | 503,
                retry_after_secs,
                ..
            }) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_secs(retry_after_secs.unwrap_or(1)));
            }
            Err(e) => panic!("{what}: submitting {body}: {e}"),
        }
    }
}

/// Runs `work` on every item, over [`CONNECTIONS`] threads; the results in the items' order.
fn parallel<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..CONNECTIONS {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = work(item);
                    out.lock().unwrap()[i] = Some(r);
                }
            });
        }
    });
    out.into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every item was worked on"))
        .collect()
}

/// Submits each script's requests in its order (one account's requests), scripts side by side.
fn submit_scripts(client: &NodeClient, scripts: &[(String, Vec<Value>)]) {
    parallel(scripts, |(what, bodies)| {
        for body in bodies {
            submit(client, body, what);
        }
    });
}

/// How a job ended, as the events feed reported it.
#[derive(Clone, Debug)]
struct Ended {
    state: JobState,
    error: Option<String>,
    result: Option<Value>,
}

/// The events feed, read from its start: how every job that ended so far ended.
#[derive(Default)]
struct Feed {
    cursor: i64,
    /// Every job the feed named.
    seen: HashSet<String>,
    ended: HashMap<String, Ended>,
}

impl Feed {
    /// Reads the feed until it has nothing more, waiting up to `wait_secs` for the first page.
    fn read(&mut self, client: &NodeClient, wait_secs: u32) {
        loop {
            let page = client
                .events(self.cursor, wait_secs, 1000)
                .unwrap_or_else(|e| panic!("reading the events feed: {e}"));
            let more = page.next > self.cursor;
            self.cursor = page.next.max(self.cursor);
            for event in page.events {
                let (Some(id), Some(state)) = (event.request_id, event.state) else {
                    continue;
                };
                self.seen.insert(id.clone());
                if state.is_terminal() {
                    self.ended.insert(
                        id,
                        Ended {
                            state,
                            error: event.error.map(|e| e.code.into_owned()),
                            result: event.result,
                        },
                    );
                }
            }
            if !more || wait_secs > 0 {
                return;
            }
        }
    }

    /// Follows the feed until every job of `ids` ended; panics after [`PHASE_BOUND`] naming
    /// what each pending job belongs to.
    fn wait(&mut self, client: &NodeClient, ids: &HashMap<String, String>, phase: &str) {
        let deadline = Instant::now() + PHASE_BOUND;
        loop {
            let pending: Vec<&String> = ids
                .keys()
                .filter(|id| !self.ended.contains_key(*id))
                .collect();
            if pending.is_empty() {
                return;
            }
            if Instant::now() > deadline {
                let mut named: Vec<&str> = pending.iter().map(|id| ids[*id].as_str()).collect();
                named.sort_unstable();
                named.dedup();
                panic!(
                    "{phase}: {} jobs did not end within {PHASE_BOUND:?}, of: {named:#?}",
                    pending.len()
                );
            }
            self.read(client, 5);
            self.read(client, 0);
        }
    }
}

/// A request that names a blob names one the node has: a restore, the archive its account's
/// setup made (downloaded from the node and uploaded back, as a control plane does); any
/// other (a certificate bundle), a bundle of the test's own.
fn with_blob(
    client: &NodeClient,
    feed: &Feed,
    setup: &[(String, Value)],
    mut body: Value,
) -> Value {
    if body["resource"].get("blob").is_none() {
        return body;
    }
    let op = registry()
        .operation(body["operation"].as_str().unwrap())
        .unwrap();
    let snapshot = registry()
        .declaring(op.family())
        .filter(|d| d.kind() == Kind::Snapshot && d.name() != op.name());
    let blob = match snapshot {
        Some(snapshot) => {
            let (id, _) = setup
                .iter()
                .find(|(_, b)| b["operation"] == snapshot.name())
                .unwrap_or_else(|| panic!("{} follows no {}", op.name(), snapshot.name()));
            let blob: registry::BlobId = feed.ended[id]
                .result
                .as_ref()
                .and_then(|r| r["blob"].as_str())
                .and_then(|b| b.parse().ok())
                .unwrap_or_else(|| panic!("{}'s result names no blob", snapshot.name()));
            let bytes = client.get_blob(&blob).unwrap();
            client.put_blob(&bytes).unwrap().to_string()
        }
        None => client
            .put_blob(common::shared_bundle().0.as_bytes())
            .unwrap()
            .to_string(),
    };
    body["resource"]["blob"] = json!(blob);
    body
}

/// Holds the runner's pass lock (`runner.lock`, `runner::PassLock`) while it lives: a pass
/// that finds it taken is skipped, so nothing the API receives meanwhile is admitted. The
/// long lane needs no holding: it runs only jobs a pass admitted.
struct PassLockHeld {
    _file: std::fs::File,
}

impl PassLockHeld {
    fn take(data: &Path) -> PassLockHeld {
        let path = store::Layout::new(data.to_owned()).runner_lock();
        let file = std::fs::File::options()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // Blocking: a pass under way ends first.
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive).unwrap();
        PassLockHeld { _file: file }
    }
}

// ---------------------------------------------------------------------------------------
// The end state.

/// Account `n`'s resource rows in state.db, unlabelled: family and resource id to data.
fn rows(
    state: &rusqlite::Connection,
    labels: &Labels,
    n: Account,
    ids: Option<(u64, u64)>,
) -> BTreeMap<String, Value> {
    let account_id = account_id(n);
    let mut stmt = state
        .prepare("SELECT family, resource_id, data FROM resources WHERE owner = ?1")
        .unwrap();
    let found: Vec<(String, String, String)> = stmt
        .query_map([account_id.as_str()], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    found
        .into_iter()
        .map(|(family, id, data)| {
            let data: Value = serde_json::from_str(&data).unwrap();
            let key = format!("{family} {}", labels.unlabel(&id, n, None));
            (key, normalise(&data, labels, n, ids))
        })
        .collect()
}

/// What two runs of the same requests record differently by construction, whatever their
/// order: when they ran (a backup's time, a certificate's validity), and what is made anew
/// each time (an archive and so its name and size, a certificate and its fingerprint).
const MADE_ANEW: &[&str] = &["created_at_ms", "not_after", "fingerprint_sha256", "blob"];

/// A stored row with account `n`'s labels, uid and gid replaced, and [`MADE_ANEW`] left out.
fn normalise(value: &Value, labels: &Labels, n: Account, ids: Option<(u64, u64)>) -> Value {
    match value {
        Value::String(text) => Value::String(labels.unlabel(text, n, ids)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| normalise(v, labels, n, ids)).collect())
        }
        Value::Object(map) => {
            // An archive's size follows its content, times included.
            let archive = map.contains_key("blob");
            Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let v = match k.as_str() {
                            "uid" | "gid" => json!("ID"),
                            "size" if archive => json!("SIZE"),
                            k if MADE_ANEW.contains(&k) => json!("ANEW"),
                            _ => normalise(v, labels, n, ids),
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

/// A file's text with what is made anew each time (keys and certificates: PEM blocks and a
/// DKIM record's `p=`) replaced by placeholders.
fn without_key_material(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(begin) = rest.find("-----BEGIN ") {
        out.push_str(&rest[..begin]);
        let after = &rest[begin..];
        match after.find("-----END ").and_then(|end| {
            after[end + 9..]
                .find("-----")
                .map(|close| end + 9 + close + 5)
        }) {
            Some(end) => {
                out.push_str("PEM");
                rest = &after[end..];
            }
            None => {
                out.push_str(after);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    match out.find("\"p=") {
        Some(p) => match out[p..].find(" )") {
            Some(end) => format!("{}p=KEY{}", &out[..p], &out[p + end..]),
            None => out,
        },
        None => out,
    }
}

/// A job as state.db holds it.
struct StoredJob {
    request_id: String,
    operation: String,
    family: Option<String>,
    resource_id: Option<String>,
    /// What its body asks for: the `resource` of the request.
    resource: Option<Value>,
    state: String,
    superseded_by: Option<String>,
}

/// Every job of the node, in admission order.
fn stored_jobs(state: &rusqlite::Connection) -> Vec<StoredJob> {
    let mut stmt = state
        .prepare(
            "SELECT request_id, operation, family, resource_id, body, state, superseded_by
             FROM jobs ORDER BY seq",
        )
        .unwrap();
    stmt.query_map([], |r| {
        let body: Option<String> = r.get(4)?;
        Ok(StoredJob {
            request_id: r.get(0)?,
            operation: r.get(1)?,
            family: r.get(2)?,
            resource_id: r.get(3)?,
            resource: body.as_deref().and_then(registry::stored_resource),
            state: r.get(5)?,
            superseded_by: r.get(6)?,
        })
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

fn account_id(n: Account) -> String {
    relabel(&json!(declarations::example::account().to_string()), n)
        .as_str()
        .expect("an id relabels to an id")
        .to_owned()
}

/// The uid and gid of account `n`'s user, from its row.
fn ids_of(state: &rusqlite::Connection, n: Account) -> Option<(u64, u64)> {
    let data: String = state
        .query_row(
            "SELECT data FROM resources WHERE family = ?1 AND resource_id = ?2",
            [account_family().to_owned(), account_id(n)],
            |r| r.get(0),
        )
        .ok()?;
    let data: Value = serde_json::from_str(&data).ok()?;
    Some((data["uid"].as_u64()?, data["gid"].as_u64()?))
}

/// What the simulated system holds of each account: every file under a path that names it
/// (its mode and content), and every line naming it alone in a file whose path names no
/// account; unlabelled, sorted.
fn files_by_account(
    sysroot: &Path,
    labels: &Labels,
    ids: &HashMap<Account, (u64, u64)>,
) -> HashMap<Account, Vec<String>> {
    let mut out: HashMap<Account, Vec<String>> = HashMap::new();
    let mut stack = vec![sysroot.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(sysroot).unwrap().display().to_string();
            let named = labels.accounts_in(&rel);
            if meta.is_dir() {
                stack.push(path.clone());
            }
            let content = if meta.is_file() {
                std::fs::read(&path).unwrap()
            } else if meta.file_type().is_symlink() {
                std::fs::read_link(&path)
                    .unwrap()
                    .display()
                    .to_string()
                    .into_bytes()
            } else {
                Vec::new()
            };
            let text = String::from_utf8_lossy(&content);
            match named.len() {
                0 if meta.is_file() => {
                    for line in text.lines() {
                        let named = labels.accounts_in(line);
                        if let [n] = named.into_iter().collect::<Vec<_>>()[..] {
                            let ids = ids.get(&n).copied();
                            // A line of a shared JSON file ends in a comma but for the last.
                            let line = without_key_material(line.trim_end_matches(','));
                            out.entry(n)
                                .or_default()
                                .push(format!("{rel}: {}", labels.unlabel(&line, n, ids)));
                        }
                    }
                }
                1 => {
                    let n = *named.first().unwrap();
                    let ids = ids.get(&n).copied();
                    let owner = |id: u32| match ids {
                        Some((uid, _)) if u64::from(id) == uid => "UID".to_owned(),
                        Some((_, gid)) if u64::from(id) == gid => "GID".to_owned(),
                        _ => id.to_string(),
                    };
                    out.entry(n).or_default().push(format!(
                        "{} {:o} {}:{}\n{}",
                        labels.unlabel(&rel, n, ids),
                        meta.mode(),
                        owner(meta.uid()),
                        owner(meta.gid()),
                        labels.unlabel(&without_key_material(&text), n, ids),
                    ));
                }
                _ => {}
            }
        }
    }
    for lines in out.values_mut() {
        lines.sort();
    }
    out
}

// ---------------------------------------------------------------------------------------
// The test.

/// A directory for a dev node: on a memory file system where there is one (the node's every
/// commit is synced, and thousands of them on a disk would be most of a test's time), and
/// passable by the tenants a root dev node works as, so that its simulated system stays inside
/// it (`layerone-dev` moves it to /var/tmp otherwise).
fn node_dir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

#[test]
fn a_batch_ends_as_the_serial_node_and_supersedes_only_what_the_rule_makes_redundant() {
    let started = Instant::now();
    let dir = node_dir();
    let node = DevNode::start_with(dir.path(), "node", &["--platform", "cloudlinux"]);
    let info = DevInfo::load(&node.root.join("dev.json")).unwrap();
    let client = info.client().unwrap();
    let labels = Labels::of_examples();
    let cases = cases();
    let mut feed = Feed::default();
    eprintln!(
        "{} cases ({} accounts), node up after {:?}",
        cases.len(),
        2 * cases.len(),
        started.elapsed()
    );

    // The account whose request starts the pass after the batch: that request is the inbox
    // change the watching runner wakes on, since a pass skipped for the lock is not tried
    // again before the next change or the 15 s tick (`runner::watch`).
    let nudge: Account = 0;
    let create_account = registry()
        .declaring(account_family())
        .expect("the account family declares its accounts");
    let observe_account = registry()
        .operations()
        .find(|op| op.family() == account_family() && op.kind() == Kind::Observe)
        .expect("an account can be observed");

    // The setup, one step of every account at a time: what an account's step needs ended
    // before it is sent, so no setup request is ever queued behind another.
    let mut setups: HashMap<Account, Vec<(String, Value)>> = HashMap::new();
    let mut whose: HashMap<String, String> = HashMap::new();
    let steps = cases.iter().map(|c| c.setup.len()).max().unwrap_or(0);
    for step in 0..steps.max(1) {
        let mut wanted: Vec<(Account, &dyn OperationEntry, String)> = Vec::new();
        if step == 0 {
            wanted.push((nudge, create_account, "the nudge account".into()));
        }
        for case in &cases {
            if let Some(op) = case.setup.get(step) {
                for n in [case.batch, case.serial] {
                    wanted.push((n, *op, format!("{}: setup {}", case.name(), op.name())));
                }
            }
        }
        let mut ids = HashMap::new();
        let mut scripts = Vec::new();
        for (n, op, what) in wanted {
            let earlier = setups.get(&n).map(Vec::as_slice).unwrap_or_default();
            let body = with_blob(&client, &feed, earlier, request(op, n));
            let id = body["request_id"].as_str().unwrap().to_owned();
            ids.insert(id.clone(), what.clone());
            setups.entry(n).or_default().push((id, body.clone()));
            scripts.push((what, vec![body]));
        }
        submit_scripts(&client, &scripts);
        feed.wait(&client, &ids, &format!("setup step {step}"));
        for (id, what) in &ids {
            let ended = &feed.ended[id];
            assert_eq!(
                ended.state,
                JobState::Succeeded,
                "{what} ended {ended:?}: a case's setup must succeed"
            );
        }
        whose.extend(ids);
    }
    eprintln!("setup done after {:?}", started.elapsed());

    // The requests of every case, for both accounts.
    let mut bodies: HashMap<Account, Vec<Value>> = HashMap::new();
    for case in &cases {
        for n in [case.batch, case.serial] {
            let setup = setups.get(&n).map(Vec::as_slice).unwrap_or_default();
            let requests = case
                .operations
                .iter()
                .map(|op| with_blob(&client, &feed, setup, request(*op, n)))
                .collect();
            bodies.insert(n, requests);
        }
    }
    let id_of = |n: Account, i: usize| bodies[&n][i]["request_id"].as_str().unwrap().to_owned();

    // The batch: every case's requests on its batch account while the pass lock is held, and
    // the serial accounts' first requests with them (one request each: nothing to batch).
    let data = node.root.join("data");
    let mut ids = HashMap::new();
    let mut scripts = Vec::new();
    for case in &cases {
        for i in 0..case.operations.len() {
            ids.insert(id_of(case.batch, i), format!("{}: batch", case.name()));
        }
        ids.insert(id_of(case.serial, 0), format!("{}: serial", case.name()));
        scripts.push((case.name(), bodies[&case.batch].clone()));
        scripts.push((case.name(), vec![bodies[&case.serial][0].clone()]));
    }
    let lock = PassLockHeld::take(&data);
    // The cases of one declaration sent again and again first, one after the other from one
    // connection, so that each one's requests are queued back to back: the later ones make
    // the earlier redundant. The pairs then, side by side.
    let (repeated, pairs): (Vec<_>, Vec<_>) = scripts
        .into_iter()
        .partition(|(_, bodies)| bodies.len() > 2);
    submit_scripts(
        &client,
        &[(
            "the repeated declarations".to_owned(),
            repeated
                .into_iter()
                .flat_map(|(_, bodies)| bodies)
                .collect(),
        )],
    );
    submit_scripts(&client, &pairs);
    // Nothing of it was admitted while the lock was held: the next pass admits it all.
    feed.read(&client, 0);
    let early: Vec<&String> = ids.keys().filter(|id| feed.seen.contains(*id)).collect();
    assert!(
        early.is_empty(),
        "jobs were admitted while the pass lock was held: {early:?}"
    );
    drop(lock);
    submit(&client, &request(observe_account, nudge), "the nudge");
    feed.wait(&client, &ids, "the batch");
    whose.extend(ids);
    eprintln!("batch done after {:?}", started.elapsed());

    // The serial run's next requests, one at a time on each serial account.
    let longest = cases.iter().map(|c| c.operations.len()).max().unwrap();
    for i in 1..longest {
        let mut ids = HashMap::new();
        let mut scripts = Vec::new();
        for case in &cases {
            let Some(body) = bodies[&case.serial].get(i) else {
                continue;
            };
            ids.insert(id_of(case.serial, i), format!("{}: serial", case.name()));
            scripts.push((case.name(), vec![body.clone()]));
        }
        submit_scripts(&client, &scripts);
        feed.wait(&client, &ids, &format!("serial request {i}"));
        whose.extend(ids);
    }
    eprintln!("serial done after {:?}", started.elapsed());

    // Each batch job as the API shows it.
    let batch_jobs: Vec<String> = cases
        .iter()
        .flat_map(|c| (0..c.operations.len()).map(move |i| (c.batch, i)))
        .map(|(n, i)| id_of(n, i))
        .collect();
    let views: HashMap<String, registry::JobView> = parallel(&batch_jobs, |id| {
        (
            id.clone(),
            client
                .job(id)
                .unwrap_or_else(|e| panic!("{}: {e}", whose[id])),
        )
    })
    .into_iter()
    .collect();

    let mut failures = Vec::new();
    let state = rusqlite::Connection::open_with_flags(
        data.join("state/state.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();

    // Every superseded job of the node, setup and serial runs included: superseded by the
    // same request again (the same operation, resource and content, of a kind the rule
    // allows), with nothing between the two that ran (only jobs superseded too).
    let jobs = stored_jobs(&state);
    let seq_of: HashMap<&str, usize> = jobs
        .iter()
        .enumerate()
        .map(|(at, j)| (j.request_id.as_str(), at))
        .collect();
    let mut superseded = 0;
    for (at, job) in jobs.iter().enumerate() {
        if job.state != "superseded" {
            continue;
        }
        superseded += 1;
        let what = whose.get(&job.request_id).map_or("a job", String::as_str);
        let Some(&by) = job.superseded_by.as_deref().and_then(|by| seq_of.get(by)) else {
            failures.push(format!(
                "{what}: {} ({}) was superseded by {:?}, which is no job",
                job.operation, job.request_id, job.superseded_by
            ));
            continue;
        };
        let newer = &jobs[by];
        let same_request = by > at
            && newer.operation == job.operation
            && (&newer.family, &newer.resource_id) == (&job.family, &job.resource_id)
            && newer.resource == job.resource
            && registry().supersedes(&newer.operation, &job.operation);
        let ran_between: Vec<&str> = jobs[at + 1..by.max(at + 1)]
            .iter()
            .filter(|j| j.state != "superseded")
            .map(|j| j.operation.as_str())
            .collect();
        if !same_request || !ran_between.is_empty() {
            failures.push(format!(
                "{what}: {} ({}) was superseded by {} ({}), which is not the same request                  just after it (the same request: {same_request}; ran between:                  {ran_between:?})",
                job.operation, job.request_id, newer.operation, newer.request_id
            ));
        }
    }

    // Each case: a job not superseded ends as its serial twin; a declaration sent three times
    // back to back runs once, the first two superseded each by the next.
    for case in &cases {
        let name = case.name();
        let repeated = case.operations.len() > 2;
        for (i, op) in case.operations.iter().enumerate() {
            let op = op.name();
            let view = &views[&id_of(case.batch, i)];
            let serial = &feed.ended[&id_of(case.serial, i)];
            if serial.state == JobState::Superseded {
                failures.push(format!(
                    "{name}: the serial {op} (request {i}) ended superseded"
                ));
            }
            if repeated && i + 1 < case.operations.len() {
                let next = id_of(case.batch, i + 1);
                if view.state != JobState::Superseded
                    || view.superseded_by.as_deref() != Some(next.as_str())
                {
                    failures.push(format!(
                        "{name}: the batch's request {i} should end superseded by request {},                          the same sent again just after it; it ended {} (superseded_by {:?})",
                        i + 1,
                        view.state.as_str(),
                        view.superseded_by,
                    ));
                }
                continue;
            }
            if view.state == JobState::Superseded {
                continue;
            }
            let code = view.error.as_ref().map(|e| e.code.to_string());
            if view.state != serial.state || code != serial.error {
                failures.push(format!(
                    "{name}: the batch's {op} (request {i}) ended {} {code:?}, the serial one                      {} {:?}",
                    view.state.as_str(),
                    serial.state.as_str(),
                    serial.error,
                ));
            }
        }
    }

    // The end states.
    let accounts: Vec<Account> = cases.iter().flat_map(|c| [c.batch, c.serial]).collect();
    let ids: HashMap<Account, (u64, u64)> = accounts
        .iter()
        .filter_map(|n| ids_of(&state, *n).map(|ids| (*n, ids)))
        .collect();
    let files = files_by_account(&node.root.join("sysroot"), &labels, &ids);
    for case in &cases {
        let name = case.name();
        let (batch, serial) = (
            rows(&state, &labels, case.batch, ids.get(&case.batch).copied()),
            rows(&state, &labels, case.serial, ids.get(&case.serial).copied()),
        );
        if batch != serial {
            failures.push(format!(
                "{name}: state.db differs\n  batch:  {batch:?}\n  serial: {serial:?}"
            ));
        }
        let none = Vec::new();
        let (batch, serial) = (
            files.get(&case.batch).unwrap_or(&none),
            files.get(&case.serial).unwrap_or(&none),
        );
        if batch != serial {
            let only_batch: Vec<&String> = batch.iter().filter(|l| !serial.contains(l)).collect();
            let only_serial: Vec<&String> = serial.iter().filter(|l| !batch.contains(l)).collect();
            failures.push(format!(
                "{name}: the files differ\n  batch only:  {only_batch:#?}\n  serial only: {only_serial:#?}"
            ));
        }
    }
    eprintln!(
        "{} cases, {} requests superseded, checked after {:?}",
        cases.len(),
        superseded,
        started.elapsed()
    );
    assert!(
        failures.is_empty(),
        "{} failures over {} cases:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Backpressure and fairness at the door, over HTTPS: with account A's 1,000 requests queued
/// (the per-account cap) and the runner held, A's next request is answered 429 `queue_full`
/// with the cap, the count and `Retry-After`, on the local socket too, and nothing of it is
/// stored; account B's request
/// is admitted, and once the runner goes on, B's job is claimed in the first batch: before it,
/// at most one of A's thousand (counted on the events feed, not timed).
#[test]
fn a_full_account_is_told_queue_full_and_another_account_is_served_in_the_first_batch() {
    let dir = node_dir();
    let node = DevNode::start(dir.path(), "node");
    let info = DevInfo::load(&node.root.join("dev.json")).unwrap();
    let client = info.client().unwrap();
    let (a, b, c) = (common::id(0xa), common::id(0xb), common::id(0xc));
    for (n, (id, name)) in [(&a, "alpha"), (&b, "bravo"), (&c, "charlie")]
        .into_iter()
        .enumerate()
    {
        let request = fleet_support::ensure_account(&common::id(0x100 + n as u64), id, name);
        let view = client.submit(&request).unwrap();
        let done = client
            .wait(&view.request_id, Duration::from_secs(60))
            .unwrap();
        assert_eq!(done.state, JobState::Succeeded, "{done:?}");
    }
    let key = |request: u64, key: u64, account: &str| {
        json!({"request_id": common::id(request), "operation": "ensure_ssh_key",
               "resource": {"id": common::id(key), "account": account, "key": common::KEY}})
    };

    let lock = PassLockHeld::take(&node.root.join("data"));
    let cursor = client
        .events(0, 0, 1000)
        .unwrap()
        .events
        .last()
        .map_or(0, |e| e.cursor);
    let a_requests: Vec<Value> = (0..1000u64)
        .map(|i| key(0x1_0000 + i, 0x2_0000 + i, &a))
        .collect();
    parallel(&a_requests, |body| {
        submit(&client, body, "account A's queue")
    });

    // A's 1,001st: refused at the door, with what the control plane needs to wait.
    let refused = key(0x1_1000, 0x2_1000, &a);
    let response = client
        .request(
            "POST",
            "/v1/jobs",
            Some(refused.to_string().as_bytes()),
            &[("content-type", "application/json")],
        )
        .unwrap();
    let body: Value = serde_json::from_slice(&response.body).unwrap();
    assert_eq!(response.status, 429, "{body}");
    assert_eq!(body["code"], "queue_full", "{body}");
    assert_eq!(
        (body["limit"].as_u64(), body["queued"].as_u64()),
        (Some(1000), Some(1000)),
        "{body}"
    );
    assert_eq!(response.header("retry-after"), Some("5"));
    assert_eq!(body["retry_after_s"], 5, "{body}");
    // The local socket's door answers the same.
    let local = info
        .local_client()
        .expect("the dev node serves its local socket");
    match local.submit(&refused) {
        Err(ClientError::Api {
            status: 429,
            code,
            retry_after_secs: Some(5),
            ..
        }) if code == "queue_full" => {}
        other => panic!("the local socket answered {other:?}"),
    }
    let metrics = client.request("GET", "/v1/metrics", None, &[]).unwrap();
    let metrics = String::from_utf8(metrics.body).unwrap();
    assert!(
        metrics
            .lines()
            .any(|l| l == "layerone_admission_refusals_total{code=\"queue_full\"} 2"),
        "{metrics}"
    );
    let unknown = client.job(refused["request_id"].as_str().unwrap());
    assert!(
        matches!(unknown, Err(ClientError::Api { status: 404, .. })),
        "a refused request is not stored: {unknown:?}"
    );

    // B's request is admitted while A is full; then the runner goes on (C's request is the
    // inbox change the watching runner wakes on).
    let b_request = key(0x1_2000, 0x2_2000, &b);
    submit(&client, &b_request, "account B's request");
    drop(lock);
    submit(&client, &key(0x1_3000, 0x2_3000, &c), "account C's request");

    // The claims in order: each job's `running` event on the feed.
    let b_id = b_request["request_id"].as_str().unwrap().to_owned();
    let a_ids: HashSet<String> = a_requests
        .iter()
        .map(|r| r["request_id"].as_str().unwrap().to_owned())
        .collect();
    let mut a_before_b = 0;
    let mut after = cursor;
    let deadline = Instant::now() + PHASE_BOUND;
    'feed: loop {
        assert!(Instant::now() < deadline, "B's job was never claimed");
        let page = client.events(after, 5, 1000).unwrap();
        for event in &page.events {
            after = event.cursor;
            if event.state != Some(JobState::Running) {
                continue;
            }
            match event.request_id.as_deref() {
                Some(id) if id == b_id => break 'feed,
                Some(id) if a_ids.contains(id) => a_before_b += 1,
                _ => {}
            }
        }
    }
    assert!(
        a_before_b <= 1,
        "{a_before_b} of account A's jobs were claimed before account B's one"
    );
}
