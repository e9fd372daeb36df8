//! The job lifecycle end to end, through the real runner binary: crashes at every point,
//! seeded random histories, supersession and idempotency, hostile inbox rows, purge, tenant
//! symlinks, tested and reverted vhosts, coalesced reloads, and the idle pass.
//!
//! The crash matrix, the seeded histories and the purge test find every operation in the
//! declarations (`declarations::registry()`): its kind, its prerequisites and its examples
//! give each its history, so a new family with examples is covered without a line here.

use crate::common;
use crate::common::node_admin;

use std::collections::BTreeSet;

use common::*;
use inbox::Receipt;
use registry::{Hex32, JobState, Kind, OperationEntry, Registry, Scope};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------
// Requests from the declarations.

fn registry() -> &'static Registry {
    declarations::registry()
}

fn operation(name: &str) -> &'static dyn OperationEntry {
    registry()
        .operation(name)
        .unwrap_or_else(|| panic!("{name} is not declared"))
}

/// The operation a request body is for.
fn operation_of(body: &Value) -> &'static dyn OperationEntry {
    operation(
        body["operation"]
            .as_str()
            .or(body["action"].as_str())
            .expect("a request names its operation"),
    )
}

/// The id the harness gives every node (`Node::new`): node-scope requests name it.
fn node_id() -> Hex32 {
    id(0xfeed).parse().unwrap()
}

/// Request `request_id` of `op` for `resource`, in its scope's envelope.
fn envelope(op: &dyn OperationEntry, request_id: u64, resource: Value) -> Value {
    match op.scope() {
        Scope::Tenant => json!({"request_id": id(request_id), "operation": op.name(),
                                "resource": resource}),
        Scope::Node => json!({"request_id": id(request_id), "action": op.name(),
                              "node_id": node_id(), "resource": resource}),
    }
}

/// The family every tenant resource belongs to: the one whose declaring operation follows
/// nothing (the account).
fn root_family() -> &'static str {
    registry()
        .operations()
        .find(|op| {
            op.scope() == Scope::Tenant
                && op.kind().declares()
                && registry().prerequisites(op.name()).is_empty()
        })
        .expect("a tenant family declares its resources from nothing")
        .family()
}

/// The root family's removal and rebuild act on everything the account owns.
fn acts_on_everything(op: &dyn OperationEntry) -> bool {
    op.family() == root_family() && matches!(op.kind(), Kind::Remove | Kind::Action)
}

/// The families whose declaration follows `family`'s (a redirect, a PHP version, a
/// certificate build on a web domain).
fn built_on(family: &str) -> Vec<&'static str> {
    let Some(base) = registry().declaring(family) else {
        return Vec::new();
    };
    registry()
        .families()
        .iter()
        .filter(|g| g.name != family)
        .filter(|g| {
            registry().declaring(g.name).is_some_and(|d| {
                registry()
                    .prerequisites(d.name())
                    .iter()
                    .any(|p| p.name() == base.name())
            })
        })
        .map(|g| g.name)
        .collect()
}

/// Every tenant operation of `kinds`, each after its prerequisites, each once: with the
/// declaring kinds, one of everything an account can own. Snapshots come last, so that they
/// hold the rest. `skip`: operations the platform refuses, left out with what follows them.
fn every_family(kinds: &[Kind], skip: &BTreeSet<&str>) -> Vec<&'static dyn OperationEntry> {
    let mut out: Vec<&'static dyn OperationEntry> = Vec::new();
    let wanted = registry()
        .operations()
        .filter(|op| op.scope() == Scope::Tenant && kinds.contains(&op.kind()));
    let (snapshots, rest): (Vec<_>, Vec<_>) = wanted.partition(|op| op.kind() == Kind::Snapshot);
    for op in rest.into_iter().chain(snapshots) {
        let mut chain = registry().prerequisites(op.name());
        chain.push(op);
        if chain.iter().any(|o| skip.contains(o.name())) {
            continue;
        }
        for o in chain {
            if !out.iter().any(|x| x.name() == o.name()) {
                out.push(o);
            }
        }
    }
    out
}

/// Requests 1, 2, ... of these operations, for these resources.
fn examples_of(ops: &[(&dyn OperationEntry, Value)]) -> Vec<Value> {
    ops.iter()
        .enumerate()
        .map(|(i, (op, resource))| envelope(*op, 1 + i as u64, resource.clone()))
        .collect()
}

/// A request that names a blob names one the node has: a restore (its family's declaring
/// operation is a snapshot), the archive the setup's snapshot made, put into blobs/in as the
/// API would; any other (a certificate bundle), the bundle every node of this test is given.
fn with_blob(node: &Node, setup: &[Value], mut body: Value) -> Value {
    if body["resource"].get("blob").is_none() {
        return body;
    }
    let op = operation_of(&body);
    let snapshot = registry()
        .declaring(op.family())
        .filter(|d| d.kind() == Kind::Snapshot && d.name() != op.name());
    let blob = match snapshot {
        Some(snapshot) => {
            let made = setup
                .iter()
                .find(|b| operation_of(b).name() == snapshot.name())
                .unwrap_or_else(|| panic!("{} follows no {}", op.name(), snapshot.name()));
            let job = node
                .state()
                .job(made["request_id"].as_str().unwrap())
                .unwrap()
                .expect("the setup's snapshot ran");
            let blob = job.result.expect("a snapshot's result")["blob"]
                .as_str()
                .expect("a snapshot's result names its blob")
                .to_owned();
            let bytes = std::fs::read(node.layout.blobs_out().join(&blob)).unwrap();
            assert_eq!(node.put_blob(&bytes), blob);
            blob
        }
        None => shared_bundle().1.clone(),
    };
    body["resource"]["blob"] = json!(blob);
    body
}

/// A node for the crash matrix and the seeded histories, of the profile asked for: Debian, or
/// CloudLinux with MySQL Governor (the example limits include the database's); with the
/// certificate bundle in blobs/in, the local administrators a sudo allowlist names, and the
/// example fleet's identity with what every module needs, so that the example assignment
/// applies and leaves every module ready.
fn matrix_node(cloudlinux: bool) -> Node {
    let node = if cloudlinux {
        let node = Node::cloudlinux();
        testkit::seed_mysql_governor(&node.provider).unwrap();
        node
    } else {
        Node::new()
    };
    node.upload_blob(shared_bundle().0.as_bytes());
    node_admin::seed_admins(&node);
    testkit::fleet::seed_example_fleet(&node.provider).unwrap();
    testkit::fleet::seed_module_programs(&node.provider).unwrap();
    node
}

/// The Sim has no tables to measure: every database there is given 2 GiB, more than the
/// example quota, so that the quota's scenarios are over it.
fn fill_sim_databases(node: &Node) {
    let contents = testkit::sim_mariadb_contents(&node.provider).unwrap();
    for db in contents.databases {
        testkit::sim_set_mariadb_size(&node.provider, &db, 2 << 30).unwrap();
    }
}

/// Splits a setup into passes: a request goes into the first pass after every earlier request
/// for its resource (one pass takes no two requests for one job key: the same request twice
/// would supersede the first), and never before a request it follows (within a pass, an account's jobs run
/// in admission order, each seeing the earlier ones recorded).
fn passes(setup: &[Value]) -> Vec<Vec<&Value>> {
    let key = |body: &Value| (operation_of(body).family(), body["resource"]["id"].clone());
    let mut pass_of: Vec<usize> = Vec::new();
    for (i, body) in setup.iter().enumerate() {
        let follows = registry().prerequisites(operation_of(body).name());
        let mut pass = 0;
        for (j, earlier) in setup[..i].iter().enumerate() {
            if key(earlier) == key(body) {
                pass = pass.max(pass_of[j] + 1);
            }
            if follows
                .iter()
                .any(|o| o.name() == operation_of(earlier).name())
            {
                pass = pass.max(pass_of[j]);
            }
        }
        pass_of.push(pass);
    }
    let count = pass_of.iter().max().map_or(0, |m| m + 1);
    (0..count)
        .map(|p| {
            setup
                .iter()
                .zip(&pass_of)
                .filter(|(_, q)| **q == p)
                .map(|(b, _)| b)
                .collect()
        })
        .collect()
}

/// Whether the node's platform refused the job: an operation only another profile offers.
fn refused_by_platform(job: &registry::JobView) -> bool {
    job.error
        .as_ref()
        .is_some_and(|e| e.code == "unsupported_on_platform")
}

/// Admits requests exactly as the API does (validated, then group-committed), through an
/// inbox whose writer is gone when this returns: its SQLite connection, the last on the
/// write-ahead log, removes the log's files by name when it closes, and the crash matrix
/// replaces the node's files between runs.
fn admit(node: &Node, bodies: &[Value]) {
    let (inbox, writer) = inbox::Inbox::open(&node.layout.inbox_db()).unwrap();
    for body in bodies {
        let job = registry()
            .validate(body.to_string().as_bytes(), &node.node_id)
            .expect("a valid request");
        let admission = inbox.admit_blocking(job, registry::Origin::Api).unwrap();
        assert!(
            matches!(admission, Receipt::Received { .. }),
            "{body}: {admission:?}"
        );
    }
    drop(inbox);
    writer.join().expect("the inbox writer ends");
}

/// Applies a setup in as few passes as can hold it; every request must succeed. `Err(op)`:
/// the node's platform refuses `op` (`unsupported_on_platform`).
fn apply_setup(node: &Node, setup: &[Value]) -> Result<(), &'static str> {
    for pass in passes(setup) {
        let bodies: Vec<Value> = pass
            .iter()
            .map(|body| with_blob(node, setup, (*body).clone()))
            .collect();
        admit(node, &bodies);
        node.pass();
        let state = node.state();
        for body in pass {
            let job = state
                .job(body["request_id"].as_str().unwrap())
                .unwrap()
                .expect("a setup request became a job");
            match job.state {
                JobState::Succeeded => {}
                JobState::Failed if refused_by_platform(&job) => {
                    return Err(operation_of(body).name());
                }
                _ => panic!("the setup request {body} ended as {job:?}"),
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The crash matrix.

/// A history the crash matrix replays: what must exist first, then the request under test,
/// and the crash points that request can pass.
struct Scenario {
    name: String,
    setup: Vec<Value>,
    target: Value,
    points: Vec<crash::Point>,
    cloudlinux: bool,
}

impl Scenario {
    /// `op` for `resource` after `before`: the target is request 0x100, after the setup's.
    fn new(
        name: String,
        before: &[(&dyn OperationEntry, Value)],
        op: &dyn OperationEntry,
        resource: Value,
    ) -> Scenario {
        Scenario {
            name,
            setup: examples_of(before),
            target: envelope(op, 0x100, resource),
            points: ops::crash_points()
                .into_iter()
                .filter(|p| can_reach(op, p.name()))
                .collect(),
            cloudlinux: false,
        }
    }
}

/// One scenario for each operation's example, after the examples of its prerequisites, and
/// one for each of its other examples, applied over the example. The operations that act on
/// everything an account owns are [`whole_account_scenarios`].
fn operation_scenarios() -> Vec<Scenario> {
    let mut out = Vec::new();
    for op in registry()
        .operations()
        .filter(|op| !acts_on_everything(*op))
    {
        let before: Vec<(&dyn OperationEntry, Value)> = registry()
            .prerequisites(op.name())
            .into_iter()
            .map(|p| (p, p.example()))
            .collect();
        out.push(Scenario::new(
            op.name().to_owned(),
            &before,
            op,
            op.example(),
        ));
        for (i, other) in op.other_examples().into_iter().enumerate() {
            let mut over = before.clone();
            over.push((op, op.example()));
            out.push(Scenario::new(
                format!("{} (example {})", op.name(), i + 2),
                &over,
                op,
                other,
            ));
        }
    }
    out
}

/// The account's removal and rebuild over one of everything an account owns, every setting
/// made: on Debian without what it refuses (`refused`), and on CloudLinux with MySQL Governor
/// with all of it.
fn whole_account_scenarios(refused: &BTreeSet<&str>) -> Vec<Scenario> {
    let kinds = [Kind::Declare, Kind::Set, Kind::Snapshot];
    let mut out = Vec::new();
    for op in registry().operations().filter(|op| acts_on_everything(*op)) {
        let mut platforms = vec![(false, refused.clone())];
        if !refused.is_empty() {
            platforms.push((true, BTreeSet::new()));
        }
        for (cloudlinux, skip) in platforms {
            let before: Vec<(&dyn OperationEntry, Value)> = every_family(&kinds, &skip)
                .into_iter()
                .map(|o| (o, o.example()))
                .collect();
            let mut scenario = Scenario::new(
                format!(
                    "{} (every family{})",
                    op.name(),
                    if cloudlinux { ", cloudlinux" } else { "" }
                ),
                &before,
                op,
                op.example(),
            );
            scenario.cloudlinux = cloudlinux;
            out.push(scenario);
        }
    }
    out
}

/// Whether `op` can pass `point`: the runner's own points, always; otherwise a point of its
/// family or its family's module (the families of one module share points: `mysql.`,
/// `mail.`, `php.`), or of a family that builds on its family (a web domain's vhost carries
/// its PHP handler, redirects, access rules and certificate). The account's removal and
/// rebuild act on every family. Skipping the others keeps the matrix to runs that can crash
/// somewhere new.
fn can_reach(op: &dyn OperationEntry, point: &str) -> bool {
    let runner = ["ingest.", "claim.", "apply.", "batch.", "complete."];
    if runner.iter().any(|p| point.starts_with(p)) || acts_on_everything(op) {
        return true;
    }
    let prefix = point.split('.').next().unwrap_or_default();
    let mut families = vec![op.family()];
    // Every tenant family builds on the account: only its removal and rebuild reach theirs.
    if op.family() != root_family() {
        families.extend(built_on(op.family()));
    }
    registry()
        .families()
        .iter()
        .filter(|f| families.contains(&f.name))
        .any(|f| f.name == prefix || f.module.as_str() == prefix)
}

/// A node as a scenario's setup left it, and a copy of its whole directory (sysroot and data
/// directory, with owners and modes), so that every crash run of the scenario starts from
/// exactly that without applying the setup again. The copy goes back to the same path: the
/// node's files name their own paths.
struct SetUp {
    node: Node,
    copy: tempfile::TempDir,
}

impl SetUp {
    /// Applies `scenario`'s setup on a new node. `Err(op)`: a Debian node refuses `op`.
    fn new(scenario: &Scenario, cloudlinux: bool) -> Result<SetUp, &'static str> {
        let node = matrix_node(cloudlinux);
        match apply_setup(&node, &scenario.setup) {
            Err(op) if !cloudlinux => return Err(op),
            Err(op) => panic!(
                "{}: the setup's {op} is refused on both platforms",
                scenario.name
            ),
            Ok(()) => {}
        }
        fill_sim_databases(&node);
        let copy = tempfile::tempdir().unwrap();
        copy_tree(node.dir.path(), copy.path());
        Ok(SetUp { node, copy })
    }

    /// The node, holding exactly what the setup left.
    fn node(&mut self) -> &mut Node {
        for entry in std::fs::read_dir(self.node.dir.path()).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.is_symlink() {
                std::fs::remove_dir_all(&path).unwrap();
            } else {
                std::fs::remove_file(&path).unwrap();
            }
        }
        copy_tree(self.copy.path(), self.node.dir.path());
        &mut self.node
    }

    fn cloudlinux(&self) -> bool {
        self.node.platform == provider::Platform::CloudLinux
    }
}

/// Copies the contents of `from` into `to`: directories, files and symlinks, with their
/// modes and owners (the tenant's files are the tenant's).
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let meta = std::fs::symlink_metadata(&source).unwrap();
        if meta.file_type().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&source).unwrap(), &target).unwrap();
            std::os::unix::fs::lchown(&target, Some(meta.uid()), Some(meta.gid())).unwrap();
            continue;
        }
        if meta.is_dir() {
            std::fs::create_dir(&target).unwrap();
            copy_tree(&source, &target);
        } else {
            std::fs::copy(&source, &target).unwrap();
        }
        std::os::unix::fs::chown(&target, Some(meta.uid()), Some(meta.gid())).unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(meta.mode())).unwrap();
    }
}

/// One crash run: from the scenario's setup, the request under test with the runner killed
/// at `point`, then a normal pass, after which the request must have succeeded and the node
/// converged. `Ok(crashed)`; `Err(op)` when a Debian node refuses `op` as
/// `unsupported_on_platform`.
fn crash_run(
    scenario: &Scenario,
    setup: &mut SetUp,
    point: crash::Point,
) -> Result<bool, &'static str> {
    let cloudlinux = setup.cloudlinux();
    let node = setup.node();
    let name = &scenario.name;
    let on = if cloudlinux { " (cloudlinux)" } else { "" };
    let target = with_blob(node, &scenario.setup, scenario.target.clone());
    admit(node, std::slice::from_ref(&target));
    // The crash leaves at most a hot journal: root's next open rolls it back.
    let crashed = !node.run(Some(point)).success();
    node.pass();
    let rid = target["request_id"].as_str().unwrap();
    let job = node
        .state()
        .job(rid)
        .unwrap()
        .unwrap_or_else(|| panic!("{name}{on} at {point}: the job was lost"));
    if refused_by_platform(&job) && !cloudlinux {
        return Err(operation_of(&target).name());
    }
    assert_eq!(
        job.state,
        JobState::Succeeded,
        "{name}{on} at {point}: {job:?}"
    );
    node.check_converged();
    node_admin::check_sudo_converged(node);
    Ok(crashed)
}

/// What the matrix has run and reached so far.
#[derive(Default)]
struct Matrix {
    reached: BTreeSet<crash::Point>,
    runs: usize,
    expected_runs: usize,
    /// Operations a Debian node refused: their scenarios ran on CloudLinux.
    refused_on_debian: BTreeSet<&'static str>,
}

impl Matrix {
    /// Crashes `scenario` at each of its points, each run from the one setup. A Debian node
    /// refusing one of its requests shows in the setup or on the first run: the scenario then
    /// runs on CloudLinux.
    fn crash(&mut self, scenario: &Scenario) {
        self.expected_runs += scenario.points.len();
        let mut cloudlinux = scenario.cloudlinux;
        'platform: loop {
            let mut setup = match SetUp::new(scenario, cloudlinux) {
                Ok(setup) => setup,
                Err(op) => {
                    self.refused_on_debian.insert(op);
                    cloudlinux = true;
                    continue;
                }
            };
            for (done, point) in scenario.points.iter().enumerate() {
                match crash_run(scenario, &mut setup, *point) {
                    Ok(crashed) => {
                        if crashed {
                            self.reached.insert(*point);
                        }
                        self.runs += 1;
                    }
                    Err(op) => {
                        assert_eq!(done, 0, "{}: {op} refused after {done} runs", scenario.name);
                        self.refused_on_debian.insert(op);
                        cloudlinux = true;
                        continue 'platform;
                    }
                }
            }
            return;
        }
    }
}

#[test]
fn crash_matrix_converges_at_every_point() {
    let mut matrix = Matrix::default();
    for scenario in operation_scenarios() {
        matrix.crash(&scenario);
    }
    for scenario in whole_account_scenarios(&matrix.refused_on_debian.clone()) {
        matrix.crash(&scenario);
    }
    let missed: Vec<_> = ops::crash_points()
        .into_iter()
        .filter(|p| !matrix.reached.contains(p))
        .collect();
    assert!(
        missed.is_empty(),
        "crash points no scenario reaches: {missed:?}"
    );
    assert_eq!(matrix.runs, matrix.expected_runs);
}

// ---------------------------------------------------------------------------------------
// The seeded histories.

/// A small deterministic generator, so a failing history can be replayed from its seed.
struct SplitMix(u64);
impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What the histories draw from: every example of every operation, a declaring operation's
/// twice (resources must exist for the others to act on).
fn draws() -> Vec<(&'static dyn OperationEntry, Value)> {
    let mut out = Vec::new();
    for op in registry().operations() {
        let examples: Vec<Value> = std::iter::once(op.example())
            .chain(op.other_examples())
            .collect();
        for _ in 0..if op.kind().declares() { 2 } else { 1 } {
            out.extend(examples.iter().map(|e| (op, e.clone())));
        }
    }
    out
}

/// One drawn request: a tenant operation's for one of two accounts and one of two resources
/// of its family (`declarations::example::another`), a node-scope operation's for the node's
/// own resource. A certificate bundle is the one the history's node has; a restore names an
/// archive never uploaded, and fails without changing anything.
fn random_request(rng: &mut SplitMix, draws: &[(&dyn OperationEntry, Value)], req: u64) -> Value {
    let (op, example) = &draws[rng.below(draws.len() as u64) as usize];
    let resource = match op.scope() {
        Scope::Tenant => {
            let account = rng.below(2) as u8;
            declarations::example::another(example, account, rng.below(2) as u8)
        }
        Scope::Node => example.clone(),
    };
    let mut body = envelope(*op, req, resource);
    let restore = registry()
        .declaring(op.family())
        .is_some_and(|d| d.kind() == Kind::Snapshot);
    if body["resource"].get("blob").is_some() && !restore {
        body["resource"]["blob"] = json!(shared_bundle().1);
    }
    body
}

/// The crash matrix and the seeded histories are only as good as the operations they draw:
/// every operation of the catalogue, tenant and node scope, must be in both. Both are derived
/// from the declarations; this holds the derivation to the catalogue.
#[test]
fn every_operation_is_in_the_crash_matrix_and_the_random_simulation() {
    let name = |body: &Value| operation_of(body).name().to_owned();
    let in_matrix: BTreeSet<String> = operation_scenarios()
        .into_iter()
        .chain(whole_account_scenarios(&BTreeSet::new()))
        .map(|s| name(&s.target))
        .collect();
    let draws = draws();
    let mut rng = SplitMix(7);
    let in_random: BTreeSet<String> = (0..20_000)
        .map(|req| name(&random_request(&mut rng, &draws, req)))
        .collect();
    let missing: Vec<String> = registry()
        .operations()
        .map(|op| op.name().to_owned())
        .filter(|op| !in_matrix.contains(op) || !in_random.contains(op))
        .map(|op| {
            format!(
                "{op} (matrix: {}, random: {})",
                in_matrix.contains(&op),
                in_random.contains(&op)
            )
        })
        .collect();
    assert!(missing.is_empty(), "{missing:#?}");
}

fn run_history(seed: u64) {
    let mut rng = SplitMix(seed);
    let points = ops::crash_points();
    let draws = draws();
    // Odd seeds run on the cloudlinux profile (with MySQL Governor), where limits and CageFS
    // exist; on debian they fail unsupported_on_platform and must leave nothing behind. The
    // node has the certificate bundle and the administrators an allowlist names.
    let mut node = matrix_node(seed % 2 == 1);
    let mut submitted: Vec<Value> = Vec::new();
    let mut next_req = 1000;
    for _step in 0..16 {
        match rng.below(6) {
            // A burst of requests, some for the same resource (the same request twice in a
            // row: supersession).
            0..=2 => {
                for _ in 0..1 + rng.below(4) {
                    let body = random_request(&mut rng, &draws, next_req);
                    next_req += 1;
                    assert!(matches!(node.submit(&body), Receipt::Received { .. }));
                    submitted.push(body);
                }
            }
            // A duplicate: the same request again is the same job.
            3 if !submitted.is_empty() => {
                let body = submitted[rng.below(submitted.len() as u64) as usize].clone();
                assert!(
                    matches!(node.submit(&body), Receipt::Duplicate { .. }),
                    "seed {seed}: a duplicate was not recognised"
                );
            }
            // A crash somewhere, then whatever the next step does.
            4 => {
                let point = points[rng.below(points.len() as u64) as usize];
                node.run(Some(point));
                assert_eq!(
                    node.state().integrity_check().unwrap(),
                    "ok",
                    "seed {seed}: integrity after a crash at {point}"
                );
            }
            _ => {
                // Sizes the Sim cannot measure: some database grows past the example quota
                // (1 GiB) or shrinks back.
                let databases = testkit::sim_mariadb_contents(&node.provider)
                    .unwrap()
                    .databases;
                let pick = rng.below(databases.len() as u64 + 1) as usize;
                let size = rng.below(3) << 30;
                if let Some(db) = databases.get(pick) {
                    testkit::sim_set_mariadb_size(&node.provider, db, size).unwrap();
                }
                node.pass();
                node.check_converged();
                node_admin::check_sudo_converged(&node);
            }
        }
    }
    node.pass();
    node.check_converged();
    node_admin::check_sudo_converged(&node);
    // Nothing lost, nothing duplicated: every submitted request is exactly one terminal job.
    let state = node.state();
    for body in &submitted {
        let rid = body["request_id"].as_str().unwrap();
        let job = state
            .job(rid)
            .unwrap()
            .unwrap_or_else(|| panic!("seed {seed}: request {rid} was lost"));
        assert!(
            job.state.is_terminal(),
            "seed {seed}: {rid} is {:?}",
            job.state
        );
    }
}

#[test]
fn seeded_histories_keep_the_invariants() {
    let base: u64 = std::env::var("LAYERONE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_261_129);
    for seed in base..base + 40 {
        let outcome = std::panic::catch_unwind(|| run_history(seed));
        if let Err(panic) = outcome {
            eprintln!("history failed; replay it with LAYERONE_SEED={seed}");
            std::panic::resume_unwind(panic);
        }
    }
}

#[test]
fn supersession_and_idempotency() {
    let mut node = Node::new();
    // The same declaration sent again: the first one is redundant. Another content is not
    // (`changed`): it runs after the one it follows.
    let first = ensure_account(1, 10, "shop1");
    let second = ensure_account(2, 10, "shop1");
    let mut changed = ensure_account(5, 10, "shop1");
    changed["resource"]["shell"] = json!("sh");
    assert!(matches!(node.submit(&first), Receipt::Received { .. }));
    assert!(matches!(node.submit(&second), Receipt::Received { .. }));
    assert!(
        matches!(node.submit(&second), Receipt::Duplicate { .. }),
        "same id and body: same job"
    );
    let mut conflicting = second.clone();
    conflicting["resource"]["shell"] = json!("sh");
    assert_eq!(
        node.submit(&conflicting),
        Receipt::Conflict,
        "same id, other body: a conflict"
    );
    assert!(matches!(node.submit(&changed), Receipt::Received { .. }));
    node.pass();
    let state = node.state();
    let old = state.job(&id(1)).unwrap().unwrap();
    assert_eq!(old.state, JobState::Superseded);
    assert_eq!(old.superseded_by.as_deref(), Some(id(2).as_str()));
    let again = state.job(&id(2)).unwrap().unwrap();
    assert_eq!(again.state, JobState::Succeeded);
    assert_eq!(again.generation, Some(2));
    assert_eq!(again.result.unwrap()["shell"], "/bin/bash");
    let new = state.job(&id(5)).unwrap().unwrap();
    assert_eq!(new.state, JobState::Succeeded, "{new:?}");
    assert_eq!(new.generation, Some(3));
    assert_eq!(new.result.unwrap()["shell"], "/bin/sh");
    // A running job is never interrupted: a newer request waits for it, then runs.
    node.submit(&ensure_account(3, 10, "shop1"));
    node.run(Some(crash::runner::APPLY_BEFORE_HANDLER));
    node.submit(&account_op(4, "suspend_account", 10));
    node.pass();
    assert_eq!(node.job_state(&id(3)), Some(JobState::Succeeded));
    assert_eq!(node.job_state(&id(4)), Some(JobState::Succeeded));
    node.check_converged();
}

/// The same declaration sent again does not make the first one redundant when another job
/// is queued between them, of any account: here another account's `ensure_account` of the
/// same name, which must fail as it does when the first one runs before it.
#[test]
fn a_job_queued_between_two_same_requests_keeps_the_first_one() {
    let mut node = Node::new();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.submit(&ensure_account(2, 11, "shop1"));
    node.submit(&ensure_account(3, 10, "shop1"));
    node.pass();
    let state = node.state();
    let job = |n| state.job(&id(n)).unwrap().unwrap();
    assert_eq!(job(1).state, JobState::Succeeded, "{:?}", job(1));
    assert_eq!(job(2).state, JobState::Failed, "{:?}", job(2));
    assert_eq!(job(3).state, JobState::Succeeded, "{:?}", job(3));
    node.check_converged();
}

// ---------------------------------------------------------------------------------------
// One owner per stored field.

/// Every resource row `account` owns, by (family, resource id): its stored fields.
fn rows_of(node: &Node, account: &str) -> std::collections::BTreeMap<(String, String), Value> {
    node.state()
        .all_resources()
        .unwrap()
        .into_iter()
        .filter(|r| r.owner == registry::Owner::Tenant(account.parse().unwrap()))
        .map(|r| ((r.family, r.resource_id.to_string()), r.data))
        .collect()
}

/// The operations that own `field` of `family`'s rows: those its row lists
/// (`store::StoredRow::FIELD_OWNERS`), else the family's declaring operation alone.
fn owners_of(family: &str, field: &str) -> Vec<&'static str> {
    match ops::field_owners(family).iter().find(|(f, _)| *f == field) {
        Some((_, owners)) => owners.to_vec(),
        None => registry()
            .declaring(family)
            .map(|d| d.name())
            .into_iter()
            .collect(),
    }
}

/// The fields of two versions of one row (absent: the row did not exist) that differ.
fn changed_fields(before: Option<&Value>, after: Option<&Value>) -> BTreeSet<String> {
    let fields = |row: Option<&Value>| -> BTreeSet<String> {
        row.and_then(Value::as_object)
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    };
    fields(before)
        .union(&fields(after))
        .filter(|f| before.and_then(|r| r.get(f.as_str())) != after.and_then(|r| r.get(f.as_str())))
        .cloned()
        .collect()
}

/// One owner per stored field (docs/design.md section 5): every tenant operation but a removal
/// runs on an account whose rows hold, in every field another operation owns, a value that
/// operation set (each set and suspension of the family applied first, and checked to have
/// changed what it owns), and may change only the fields it owns itself, in any of the
/// account's rows. On CloudLinux, where the account's limits and isolation apply.
#[test]
fn every_operation_changes_only_the_fields_it_owns() {
    for (family, owners) in registry()
        .families()
        .iter()
        .map(|f| (f.name, ops::field_owners(f.name)))
    {
        for (field, names) in owners {
            for name in *names {
                assert_eq!(
                    operation(name).family(),
                    family,
                    "{family}.{field} names {name}, an operation of another family"
                );
            }
        }
    }
    let cases: Vec<&'static dyn OperationEntry> = registry()
        .operations()
        .filter(|op| op.scope() == Scope::Tenant && op.kind() != Kind::Remove)
        .collect();
    let mut request = 50_000u64;
    let mut checked_fields = 0usize;
    for chunk in cases.chunks(declarations::example::INSTANCES as usize) {
        let node = matrix_node(true);
        fill_sim_databases(&node);
        for (account, target) in chunk.iter().enumerate() {
            let account = account as u8;
            let mut envelopes = |ops: &[&'static dyn OperationEntry]| -> Vec<Value> {
                ops.iter()
                    .map(|op| {
                        request += 1;
                        let resource = declarations::example::another(&op.example(), account, 0);
                        envelope(*op, request, resource)
                    })
                    .collect()
            };
            let family = target.family();
            let declaring = registry().declaring(family);
            let mut created: Vec<&'static dyn OperationEntry> = Vec::new();
            for op in declaring.iter().flat_map(|d| {
                let mut chain = registry().prerequisites(d.name());
                chain.push(*d);
                chain
            }) {
                if !created.iter().any(|o| o.name() == op.name()) {
                    created.push(op);
                }
            }
            // Every other operation that owns a field of the family: its sets, then its
            // suspension, each after what it needs.
            let mut others: Vec<&'static dyn OperationEntry> = Vec::new();
            let mut owning: Vec<&'static dyn OperationEntry> = registry()
                .operations()
                .filter(|op| op.family() == family && op.name() != target.name())
                .filter(|op| matches!(op.kind(), Kind::Set | Kind::Suspend))
                .collect();
            owning.sort_by_key(|op| op.kind() == Kind::Suspend);
            for op in
                registry()
                    .prerequisites(target.name())
                    .into_iter()
                    .chain(owning.iter().flat_map(|o| {
                        let mut chain = registry().prerequisites(o.name());
                        chain.push(*o);
                        chain
                    }))
            {
                let done = created.iter().chain(&others).any(|o| o.name() == op.name());
                if !done && op.name() != target.name() {
                    others.push(op);
                }
            }
            let first = envelopes(&created);
            apply_setup(&node, &first)
                .unwrap_or_else(|op| panic!("{}: CloudLinux refused {op}", target.name()));
            let account_id = declarations::example::another(
                &json!({"id": declarations::example::account().to_string()}),
                account,
                0,
            )["id"]
                .as_str()
                .unwrap()
                .to_owned();
            let at_creation = rows_of(&node, &account_id);
            let second = envelopes(&others);
            for body in passes(&second) {
                let bodies: Vec<Value> = body
                    .iter()
                    .map(|b| with_blob(&node, &second, (*b).clone()))
                    .collect();
                admit(&node, &bodies);
                node.pass();
                for body in &bodies {
                    let id = body["request_id"].as_str().unwrap();
                    let job = node
                        .state()
                        .job(id)
                        .unwrap()
                        .expect("the request became a job");
                    assert_eq!(
                        job.state,
                        JobState::Succeeded,
                        "{}: the setup's {}: {job:?}",
                        target.name(),
                        body["operation"]
                    );
                }
            }
            let before = rows_of(&node, &account_id);
            // The fields that neither the operation under test nor creation sets now hold
            // what their owners set, not what creation left.
            for (field, names) in ops::field_owners(family) {
                if names.contains(&target.name())
                    || declaring.is_some_and(|d| names.contains(&d.name()))
                {
                    continue;
                }
                let set = before.iter().any(|((f, id), row)| {
                    f == family
                        && changed_fields(at_creation.get(&(f.clone(), id.clone())), Some(row))
                            .contains(*field)
                });
                assert!(
                    set,
                    "{}: none of {names:?} set {family}.{field} before the check: {before:#?}",
                    target.name(),
                );
            }
            let setup: Vec<Value> = first.iter().chain(&second).cloned().collect();
            let body = with_blob(&node, &setup, envelopes(&[*target]).remove(0));
            admit(&node, std::slice::from_ref(&body));
            node.pass();
            let job = node
                .state()
                .job(body["request_id"].as_str().unwrap())
                .unwrap()
                .expect("the request became a job");
            // It ran: a request that failed would change nothing and show nothing.
            assert_eq!(job.state, JobState::Succeeded, "{}: {job:?}", target.name());
            let after = rows_of(&node, &account_id);
            let keys: BTreeSet<&(String, String)> = before.keys().chain(after.keys()).collect();
            for key in keys {
                for field in changed_fields(before.get(key), after.get(key)) {
                    checked_fields += 1;
                    assert!(
                        owners_of(&key.0, &field).contains(&target.name()),
                        "{} ({:?}) changed {}.{field}, which {:?} own(s): {:?} -> {:?}",
                        target.name(),
                        job.state,
                        key.0,
                        owners_of(&key.0, &field),
                        before.get(key).and_then(|r| r.get(&field)),
                        after.get(key).and_then(|r| r.get(&field)),
                    );
                }
            }
        }
    }
    assert!(checked_fields > 0, "no operation changed any field");
}

#[test]
fn hostile_inbox_rows_become_failed_jobs_and_change_nothing() {
    let mut node = Node::new();
    let passwd_before = std::fs::read(node.path("/etc/passwd")).unwrap();
    let valid = ensure_account(7, 10, "shop1").to_string();
    let cases: Vec<(String, &str, Vec<u8>, &str)> = vec![
        (id(1), "ensure_account", b"{not json".to_vec(), "invalid_json"),
        (id(2), "drop_tables", br#"{"request_id":"00000000000000000000000000000002","operation":"drop_tables","resource":{}}"#.to_vec(), "unknown_operation"),
        (id(3), "ensure_account", valid.replace(&id(7), &id(3)).replace("shop1", "root").into_bytes(), "invalid_field"),
        (id(4), "ensure_account", vec![b' '; 70 * 1024], "body_too_large"),
        (id(5), "ensure_account", valid.clone().into_bytes(), "inbox_mismatch"),
        ("../../etc".into(), "ensure_account", valid.replace(&id(7), "../../etc").into_bytes(), "invalid_field"),
        (id(6), "ensure_account", valid.replace(&id(7), &id(6)).replace("\"shell\":\"bash\"", "\"shell\":\"bash\",\"uid\":0").into_bytes(), "unknown_field"),
    ];
    for (rid, op, body, _) in &cases {
        node.submit_raw(rid, op, body);
    }
    node.pass();
    let state = node.state();
    for (i, (rid, _, _, code)) in cases.iter().enumerate() {
        let name = if rid.len() == 32 {
            rid.clone()
        } else {
            format!("inbox-{}", i + 1)
        };
        let job = state
            .job(&name)
            .unwrap()
            .unwrap_or_else(|| panic!("row {i} left no failed job"));
        assert_eq!(job.state, JobState::Failed, "row {i}");
        assert_eq!(
            job.error.as_ref().unwrap().code,
            *code,
            "row {i}: {:?}",
            job.error
        );
        assert!(
            job.operation == "ensure_account" || job.operation == "unknown",
            "row {i}: hostile text echoed: {}",
            job.operation
        );
    }
    assert!(state.all_resources().unwrap().is_empty());
    assert_eq!(
        std::fs::read(node.path("/etc/passwd")).unwrap(),
        passwd_before,
        "a hostile row changed the system"
    );
    assert_eq!(node.audit_count(), 0, "a hostile row started a program");
}

#[test]
fn purge_leaves_nothing_for_every_family() {
    let mut node = Node::new();
    // One of everything an account can own: every tenant family's declaring operation, with
    // what it follows, from the examples.
    let before: Vec<(&dyn OperationEntry, Value)> =
        every_family(&[Kind::Declare, Kind::Snapshot], &BTreeSet::new())
            .into_iter()
            .map(|op| (op, op.example()))
            .collect();
    apply_setup(&node, &examples_of(&before)).expect("Debian declares every family");
    node.check_converged();
    let account = registry()
        .declaring(root_family())
        .expect("the account family declares accounts")
        .example();
    let (account_id, username) = (
        account["id"].as_str().unwrap(),
        account["username"].as_str().unwrap(),
    );
    let example_of = |family: &str| {
        registry()
            .declaring(family)
            .unwrap_or_else(|| panic!("{family} has a declaring operation"))
            .example()
    };
    let mailbox = example_of(declarations::mail::MAILBOX);
    let mail_domain = example_of(declarations::mail::MAIL_DOMAIN)["domain"]
        .as_str()
        .unwrap()
        .to_owned();
    let dkim_key = example_of(declarations::mail::DKIM_KEY)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let spool = node
        .path(provider::crontab_spool(node.provider.platform()))
        .join(username);
    assert!(spool.exists(), "the crontab was not installed");
    let pool = node.pool_file(account_id);
    assert!(pool.exists(), "the pool was not written");
    let state = node.state();
    let families: BTreeSet<String> = state
        .all_resources()
        .unwrap()
        .into_iter()
        .map(|r| r.family)
        .collect();
    // Tenant families: those with a tenant-scope operation. Node-scope families own nothing of
    // a tenant (their purge hooks are no-ops by design); `node_scope.rs` covers their removal.
    let declared: BTreeSet<String> = registry()
        .operations()
        .filter(|op| op.scope() == Scope::Tenant)
        .map(|op| op.family().to_owned())
        .collect();
    assert_eq!(
        families, declared,
        "the test must create one resource of every tenant family"
    );
    let remove = registry()
        .operations_of_kind(Kind::Remove)
        .find(|op| op.family() == root_family())
        .expect("accounts are removed");
    let removal = envelope(remove, 0x100, remove.example());
    node.submit(&removal);
    node.pass();
    assert_eq!(
        node.job_state(removal["request_id"].as_str().unwrap()),
        Some(JobState::Succeeded)
    );
    let state = node.state();
    assert!(
        state.all_resources().unwrap().is_empty(),
        "state.db still tracks resources"
    );
    let passwd = std::fs::read_to_string(node.path("/etc/passwd")).unwrap();
    let group = std::fs::read_to_string(node.path("/etc/group")).unwrap();
    let shadow = std::fs::read_to_string(node.path("/etc/shadow")).unwrap();
    for (file, text) in [("passwd", &passwd), ("group", &group), ("shadow", &shadow)] {
        assert!(!text.contains(username), "{file} still names the account");
    }
    assert!(
        !node.path(&format!("/home/{username}")).exists(),
        "the home is still there"
    );
    assert!(node.vhosts().is_empty(), "a vhost is still there");
    let cert_dir = node.path(ops::certificate::CERTIFICATE_DIR);
    assert_eq!(
        std::fs::read_dir(&cert_dir).unwrap().count(),
        0,
        "a certificate file is still there"
    );
    assert_eq!(
        testkit::sim_mariadb_contents(&node.provider).unwrap(),
        Default::default(),
        "MariaDB still holds something of the account"
    );
    assert!(!pool.exists(), "the FPM pool is still there");
    assert!(!spool.exists(), "the crontab is still there");
    // Nothing of the account's mail is left in the mail configuration.
    for map in provider::PostfixMap::ALL {
        let text = std::fs::read_to_string(node.provider.postfix_map_path(*map)).unwrap();
        assert!(
            !text.contains(&mail_domain),
            "{map:?} still names the domain: {text}"
        );
    }
    let passwd = std::fs::read_to_string(node.provider.dovecot_passwd_path()).unwrap();
    assert!(
        passwd.is_empty(),
        "Dovecot's passwd-file still has a mailbox: {passwd}"
    );
    let dkim = node.path("/etc/opendkim/layerone");
    for table in ["KeyTable", "SigningTable"] {
        let text = std::fs::read_to_string(dkim.join(table)).unwrap();
        assert!(
            !text.contains(&mail_domain),
            "{table} still names the domain"
        );
    }
    assert!(
        !dkim.join("keys").join(&dkim_key).exists(),
        "the DKIM key is still there"
    );
    let maildir = format!(
        "/var/vmail/{}/{}",
        mailbox["domain"].as_str().unwrap(),
        mailbox["local_part"].as_str().unwrap()
    );
    assert!(!node.path(&maildir).exists(), "the mail is still there");
    assert_eq!(
        std::fs::read_dir(node.provider.sieve_dir())
            .unwrap()
            .count(),
        0,
        "a Sieve script is left"
    );
    let auth_dir = node.path(node.provider.apache_layout().auth_dir);
    assert_eq!(
        std::fs::read_dir(&auth_dir).unwrap().count(),
        0,
        "an AuthUserFile is left"
    );
    let ftp = std::fs::read_to_string(node.path(provider::FTP_LAYOUT.passwd)).unwrap();
    assert!(ftp.is_empty(), "pure-ftpd's passwd still holds {ftp:?}");
    let archives = std::fs::read_dir(node.layout.blobs_out()).unwrap().count();
    assert_eq!(archives, 0, "a backup's archive is still in blobs/out");
    let pdb = std::fs::read_to_string(node.path(provider::FTP_LAYOUT.pdb)).unwrap();
    assert!(!pdb.contains(username), "the PureDB still holds the login");
    node.check_converged();
}

#[test]
fn ssh_key_through_a_symlink_fails_only_that_job() {
    let mut node = Node::new();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.pass();
    let outside = node.dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, node.path("/home/shop1/.ssh")).unwrap();
    node.submit(&ensure_key(2, 20, 10));
    node.submit(&ensure_domain(3, 30, 10, "shop.example.com"));
    node.pass();
    let state = node.state();
    let key = state.job(&id(2)).unwrap().unwrap();
    assert_eq!(key.state, JobState::Failed);
    assert_eq!(key.error.unwrap().code, "tenant_path_unsafe");
    assert_eq!(
        node.job_state(&id(3)),
        Some(JobState::Succeeded),
        "the tenant's symlink affected another job"
    );
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "root wrote through the tenant's symlink"
    );
}

#[test]
fn reloads_are_coalesced_per_batch() {
    let mut node = Node::new();
    for i in 0..5 {
        node.submit(&ensure_account(1 + i, 10 + i, &format!("shop{i}")));
    }
    node.pass();
    let before = testkit::sim_apache_reloads(&node.provider).unwrap();
    assert_eq!(before, 0);
    for i in 0..5 {
        node.submit(&ensure_domain(
            10 + i,
            30 + i,
            10 + i,
            &format!("site{i}.example.com"),
        ));
    }
    node.pass();
    for i in 0..5 {
        let job = node.state().job(&id(10 + i)).unwrap().unwrap();
        assert_eq!(job.state, JobState::Succeeded, "{job:?}");
    }
    assert_eq!(
        testkit::sim_apache_reloads(&node.provider).unwrap(),
        1,
        "five vhosts, one reload"
    );
    node.check_converged();
}

#[test]
fn a_vhost_failing_the_config_test_is_reverted() {
    let mut node = Node::with_real_apache();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.submit(&ensure_domain(2, 30, 10, "shop.example.com"));
    node.pass();
    assert_eq!(
        node.job_state(&id(2)),
        Some(JobState::Succeeded),
        "the real apache2ctl -t rejected the node's vhost"
    );
    let vhosts = node.path(node.provider.apache_layout().vhosts_dir);
    let good = std::fs::read_to_string(vhosts.join(format!("{}.conf", id(30)))).unwrap();
    // Someone else's broken file makes every configuration test fail from now on.
    std::fs::write(
        vhosts.join("zz-foreign.conf"),
        "<VirtualHost *:80>\nNoSuchDirective on\n",
    )
    .unwrap();
    node.submit(&ensure_domain(3, 30, 10, "renamed.example.com"));
    node.pass();
    let state = node.state();
    let job = state.job(&id(3)).unwrap().unwrap();
    assert_eq!(job.state, JobState::Failed);
    assert_eq!(job.error.unwrap().code, "config_test_failed");
    let now = std::fs::read_to_string(vhosts.join(format!("{}.conf", id(30)))).unwrap();
    assert_eq!(now, good, "the failed vhost was not reverted");
}

#[test]
fn idle_pass_starts_no_program_and_commits_nothing() {
    let node = Node::new();
    node.pass();
    let db = node.layout.state_db();
    let before = std::fs::read(&db).unwrap();
    let audit = node.audit_count();
    for _ in 0..3 {
        node.pass();
    }
    assert_eq!(node.audit_count(), audit, "an idle pass started a program");
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "an idle pass changed state.db"
    );
}
