//! Serial equivalence (docs/design.md section 5): whatever a history did (requests in bursts,
//! reordered, many in one pass, supersession, crashes and lost writes), the node ends as a
//! node that applies every accepted request alone, one pass each, in the order the node ran
//! them, an order in which each account's requests keep their admission order.
//!
//! The node's order is its claims': each job's last `running` event on the events feed (a
//! crash makes a job run again; its last start is the one that ended it). A job that never
//! ran (superseded) takes the place of its account's next job that ran. The main lane takes
//! accounts in turn, so two accounts' jobs may run in another order than they were admitted;
//! each account's may not, and [`admitted`] refuses a history where one did.
//!
//! The reference is a fresh simulated node of the same platform on a clock of the same seed:
//! each job of the history's state.db, in the node's order, is submitted with its stored
//! body and runs in a pass of its own, so no request is ever queued beside another and
//! nothing is superseded. Its end state must be the node's ([`EndState`]):
//!
//! - how every job both ran ended (its state and error code);
//! - every row of the `resources` table (family, id, owner, data) and every live identity
//!   (`identities`, `removed_at` null);
//! - every file of the simulated system root, its path, mode and content;
//!
//! compared once allocated numbers are renamed (and the system root's own path, which differs
//! between the two, written `<root>`): each live identity's uid and gid become the name of
//! its owner, wherever they appear, and a row's generation and update time are left out
//! (admission counters and clock readings, not what the resource is). The reference runs each
//! job at the time the node last started it (its wall clock set to the job's `started_at`),
//! so what an operation records of the time is the same. Left out: what the simulator draws at
//! random (an ACME certificate and its key from the simulated CA, as PEM blocks, and the
//! fingerprint recorded of it), and what records the time the work was first done, which a
//! crash makes the time of an attempt that died (a certificate's recorded end of validity, a
//! DKIM key's public half, drawn from the clock, a shadow entry's day of last change). The
//! simulator's reload logs, which count what happened rather than what is, are not compared.
//!
//! When the node reported jobs `superseded`, a second reference replays the same jobs
//! without those: it must end as the first, or a superseded request was not redundant.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use provider::Platform;
use serde_json::Value;
use testkit::ManualClock;

use crate::node::{Answer, Node, Pass};

/// How many passes one job of the reference may take to end (one, unless a step retried).
const PASSES_PER_JOB: usize = 3;

/// Files of the simulated system that count what happened (each reload), not what is: a node
/// that applies requests in fewer passes reloads less.
const NOT_COMPARED: &[&str] = &[
    simulator::SIM_RELOADS_FILE,
    simulator::SIM_POSTFIX_RELOADS_FILE,
    simulator::SIM_DOVECOT_RELOADS_FILE,
    simulator::SIM_SERVICE_RELOADS_FILE,
];

/// How many differences a failure shows.
const SHOWN: usize = 12;

/// One job of a history, as the node admitted it.
pub struct Admitted {
    pub request_id: String,
    pub body: Value,
    pub superseded: bool,
    /// When the node last started it (ms on the history's clock), if it ran.
    pub started_at: Option<i64>,
}

/// The jobs of `node`'s state.db that came from a request (a body), in the order the node ran
/// them (see the module documentation); an error if an account's jobs ran out of their
/// admission order.
pub fn admitted(node: &Node) -> anyhow::Result<Vec<Admitted>> {
    let conn = rusqlite::Connection::open(node.layout.state_db())?;
    let mut stmt = conn.prepare(
        "SELECT j.request_id, j.body, j.state, j.started_at, j.owner, r.ran
         FROM jobs j LEFT JOIN (SELECT request_id, max(cursor) AS ran FROM events
                                WHERE kind = 'job' AND state = 'running'
                                GROUP BY request_id) r ON r.request_id = j.request_id
         WHERE j.body IS NOT NULL
         ORDER BY j.seq",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, Option<i64>>(3)?,
            r.get::<_, String>(4)?,
            r.get::<_, Option<i64>>(5)?,
        ))
    })?;
    // In admission order: each job, its owner and the cursor of its last start.
    let mut jobs = Vec::new();
    for row in rows {
        let (request_id, body, state, started_at, owner, ran) = row?;
        jobs.push((
            Admitted {
                request_id,
                body: serde_json::from_str(&body)?,
                superseded: state == "superseded",
                started_at,
            },
            owner,
            ran,
        ));
    }
    // Each job's place: its last start, or for one that never ran, its account's next start.
    let mut place = vec![i64::MAX; jobs.len()];
    let mut next_of_owner: BTreeMap<&str, i64> = BTreeMap::new();
    for (i, (job, owner, ran)) in jobs.iter().enumerate().rev() {
        let next = next_of_owner.get(owner.as_str()).copied();
        if let (Some(ran), Some(next)) = (ran, next) {
            anyhow::ensure!(
                *ran < next,
                "account order: job {} of {owner} ran after a job its account sent later",
                job.request_id
            );
        }
        place[i] = ran.or(next).unwrap_or(i64::MAX);
        next_of_owner.insert(owner, place[i]);
    }
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    // Stable: jobs of one place (a superseded one and its successor) stay in admission order.
    order.sort_by_key(|&i| place[i]);
    let mut jobs: Vec<Option<Admitted>> = jobs.into_iter().map(|(job, _, _)| Some(job)).collect();
    Ok(order
        .into_iter()
        .map(|i| jobs[i].take().expect("each job is placed once"))
        .collect())
}

/// What a node ends as, with allocated numbers renamed (see the module documentation).
#[derive(Debug, PartialEq, Eq)]
pub struct EndState {
    /// How each job ended: its state and error code, by request id.
    outcomes: BTreeMap<String, (String, Option<String>)>,
    rows: BTreeMap<(String, String), (String, String)>,
    identities: BTreeSet<(String, String, String)>,
    files: BTreeMap<String, (u32, String)>,
}

impl EndState {
    /// `node`'s end state.
    pub fn of(node: &Node) -> anyhow::Result<EndState> {
        let conn = rusqlite::Connection::open(node.layout.state_db())?;
        let mut names: Vec<(u64, String)> = Vec::new();
        let mut identities = BTreeSet::new();
        {
            let mut stmt = conn.prepare(
                "SELECT kind, owner, name, uid, gid FROM identities WHERE removed_at IS NULL",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, u64>(3)?,
                    r.get::<_, Option<u64>>(4)?,
                ))
            })?;
            for row in rows {
                let (kind, owner, name, uid, gid) = row?;
                names.push((uid, format!("uid({owner}/{name})")));
                if let Some(gid) = gid {
                    names.push((gid, format!("gid({owner}/{name})")));
                }
                identities.insert((kind, owner, name));
            }
        }
        let sysroot = node.config.provider.root();
        let root_path = sysroot.display().to_string();
        let rename = |text: &str| -> String {
            let mut out = text.replace(&root_path, "<root>");
            for (number, name) in &names {
                out = testkit::replace_number(&out, *number, name);
            }
            without_generated_keys(&out)
        };
        let mut rows = BTreeMap::new();
        {
            let mut stmt =
                conn.prepare("SELECT family, resource_id, owner, data FROM resources")?;
            let found = stmt.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })?;
            for row in found {
                let (family, id, owner, data) = row?;
                rows.insert((family, id), (owner, rename(&data)));
            }
        }
        let mut files = BTreeMap::new();
        let mut stack = vec![sysroot.to_owned()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir)? {
                let path = entry?.path();
                let meta = std::fs::symlink_metadata(&path)?;
                let rel = path.strip_prefix(sysroot)?.display().to_string();
                if NOT_COMPARED
                    .iter()
                    .any(|n| n.trim_start_matches('/') == rel)
                {
                    continue;
                }
                let content = if meta.is_dir() {
                    stack.push(path.clone());
                    String::new()
                } else if meta.file_type().is_symlink() {
                    std::fs::read_link(&path)?.display().to_string()
                } else {
                    let text = rename(&String::from_utf8_lossy(&std::fs::read(&path)?));
                    if rel == "etc/shadow" {
                        without_change_days(&text)
                    } else {
                        text
                    }
                };
                use std::os::unix::fs::PermissionsExt as _;
                files.insert(rename(&rel), (meta.permissions().mode(), content));
            }
        }
        let mut outcomes = BTreeMap::new();
        {
            let mut stmt = conn.prepare(
                "SELECT request_id, state, json_extract(error, '$.code') FROM jobs
                 WHERE body IS NOT NULL",
            )?;
            let found = stmt.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                ))
            })?;
            for row in found {
                let (id, state, code) = row?;
                outcomes.insert(id, (state, code));
            }
        }
        Ok(EndState {
            outcomes,
            rows,
            identities,
            files,
        })
    }

    /// What differs between `self` (the node's) and `other` (a reference's), one line each,
    /// the first [`SHOWN`] of them.
    pub fn differences(&self, other: &EndState) -> Vec<String> {
        let mut out = Vec::new();
        // Every job both ran (a superseded one did not run on the node, a left-out one not on
        // the second reference) ended the same way.
        for (id, outcome) in &self.outcomes {
            match other.outcomes.get(id) {
                Some(theirs) if outcome.0 != "superseded" && theirs != outcome => {
                    out.push(format!("job {id}: node {outcome:?}, reference {theirs:?}"))
                }
                _ => {}
            }
        }
        diff(&mut out, "row", &self.rows, &other.rows);
        let ids = |set: &BTreeSet<(String, String, String)>| -> BTreeMap<_, ()> {
            set.iter().map(|i| (i.clone(), ())).collect()
        };
        diff(
            &mut out,
            "identity",
            &ids(&self.identities),
            &ids(&other.identities),
        );
        diff(&mut out, "file", &self.files, &other.files);
        let more = out.len().saturating_sub(SHOWN);
        out.truncate(SHOWN);
        if more > 0 {
            out.push(format!("and {more} more"));
        }
        out
    }
}

fn diff<K: Ord + std::fmt::Debug, V: PartialEq + std::fmt::Debug>(
    out: &mut Vec<String>,
    what: &str,
    node: &BTreeMap<K, V>,
    reference: &BTreeMap<K, V>,
) {
    for (key, value) in node {
        match reference.get(key) {
            None => out.push(format!("{what} {key:?}: only on the node: {value:?}")),
            Some(r) if r != value => {
                out.push(format!("{what} {key:?}: node {value:?}, reference {r:?}"))
            }
            Some(_) => {}
        }
    }
    for (key, value) in reference {
        if !node.contains_key(key) {
            out.push(format!("{what} {key:?}: only on the reference: {value:?}"));
        }
    }
}

/// `text` with what the simulated system draws at random replaced (every PEM block: an ACME
/// certificate and its key from the simulated CA; the fingerprint recorded of a certificate),
/// and what it draws from the time the work was first done, which a crash makes the time of
/// the attempt that died rather than of the one the node recorded (a certificate's recorded
/// end of validity, a DKIM key's public half, which the simulated `opendkim-genkey` draws
/// from the clock, a shadow entry's day of last change).
fn without_generated_keys(text: &str) -> String {
    let text = replace_between(text, "-----BEGIN ", "-----END ", "PEM");
    let text = replace_between(&text, "\"p=", " )", "\"p=KEY\"");
    let text = replace_between(&text, "\"not_after\":", ",", "\"not_after\":TIME");
    replace_between(
        &text,
        "\"fingerprint_sha256\":\"",
        "\"",
        "\"fingerprint_sha256\":\"FP",
    )
}

/// `/etc/shadow` with each entry's day of last change (its third field) replaced.
fn without_change_days(text: &str) -> String {
    text.lines()
        .map(|line| {
            let mut fields: Vec<&str> = line.split(':').collect();
            if let Some(day) = fields.get_mut(2) {
                *day = "DAY";
            }
            fields.join(":") + "\n"
        })
        .collect()
}

/// `text` with each span from `start` up to (not including) the next `end` replaced by
/// `with`; a `start` with no `end` after it is kept.
fn replace_between(text: &str, start: &str, end: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(p) = rest.find(start) {
        out.push_str(&rest[..p]);
        match rest[p + start.len()..].find(end) {
            Some(e) => {
                out.push_str(with);
                rest = &rest[p + start.len() + e..];
            }
            None => {
                out.push_str(&rest[p..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// A reference node in `root` (created empty) that applies `jobs` one pass each, in their
/// order; its end state.
pub fn reference(
    root: &Path,
    platform: Platform,
    seed: u64,
    jobs: &[&Admitted],
) -> anyhow::Result<EndState> {
    std::fs::create_dir_all(root)?;
    let clock = ManualClock::from_seed(seed);
    let mut node = Node::new(root, platform, clock.clone())?;
    crate::upload(&node, crate::bundle())?;
    for job in jobs {
        // At the time the node last started it, if it ran: what an operation records of the
        // time (a shadow entry's day, a certificate's validity, the key the simulated
        // `opendkim-genkey` draws from it) is the same. The node may have started a job of
        // a later admission earlier (before a crash, or in the long lane), so the wall time
        // may step back; the monotonic time does not move.
        if let Some(at) = job.started_at {
            clock.set_wall_ms(at);
        }
        match node.submit(&job.body)? {
            Answer::Received => {}
            other => anyhow::bail!(
                "the reference: request {} answered {other:?}",
                job.request_id
            ),
        }
        let mut ended = false;
        for _ in 0..PASSES_PER_JOB {
            let Pass::Ran(_) = node.pass(None, || true)? else {
                anyhow::bail!("the reference died with no crash armed");
            };
            let state = node.state()?.job(&job.request_id)?;
            if state.is_some_and(|j| j.state.is_terminal()) {
                ended = true;
                break;
            }
        }
        anyhow::ensure!(
            ended,
            "the reference: request {} did not end in {PASSES_PER_JOB} passes",
            job.request_id
        );
    }
    EndState::of(&node)
}

/// Checks that `node` ends as its serial reference, and that what it superseded was
/// redundant (see the module documentation). The references live beside the node's root.
pub fn check(node: &Node, seed: u64) -> anyhow::Result<()> {
    let jobs = admitted(node)?;
    let all: Vec<&Admitted> = jobs.iter().collect();
    let end = EndState::of(node)?;
    let serial = reference(&node.root.join("serial"), node.platform, seed, &all)?;
    let differences = end.differences(&serial);
    anyhow::ensure!(
        differences.is_empty(),
        "serial equivalence: the node ends otherwise than applying its {} requests one by one \
         in the order it ran them:\n{}",
        all.len(),
        differences.join("\n")
    );
    let kept: Vec<&Admitted> = jobs.iter().filter(|j| !j.superseded).collect();
    if kept.len() < all.len() {
        let without = reference(
            &node.root.join("serial-without-superseded"),
            node.platform,
            seed,
            &kept,
        )?;
        let differences = serial.differences(&without);
        let superseded: Vec<&str> = jobs
            .iter()
            .filter(|j| j.superseded)
            .map(|j| j.request_id.as_str())
            .collect();
        anyhow::ensure!(
            differences.is_empty(),
            "supersession: leaving out the superseded requests {superseded:?} changes what \
             the serial node ends as:\n{}",
            differences.join("\n")
        );
    }
    Ok(())
}
