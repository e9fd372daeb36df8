//! The long lane: work whose length a tenant decides (an archive of its home, a restore, a
//! walk of the home for its usage; operations declared `registry::Lane::Long`), applied one
//! job at a time in a thread beside the passes, so that it never holds another account's
//! jobs (docs/design.md section 5: per-account lanes, the same contract).
//!
//! - **Order.** A long job is claimed only when it is its account's oldest pending job, and
//!   while it is pending the main lane holds back that account's later jobs
//!   (`StateDb::claim_long`, `StateDb::claim_main`): per account, admission order holds
//!   across both lanes. `ensure_account` then `create_account_backup` then
//!   `ensure_web_domain` run in that order; another account's jobs do not wait for any of
//!   them.
//! - **One at a time, one runner.** The lane runs while it holds `runner-long.lock` beside
//!   the pass lock, so two runners never both run a long lane, and a job is claimed by one
//!   `UPDATE … RETURNING` from `queued`: it never runs twice at once.
//! - **Crashes.** Each lane puts back only its own interrupted jobs, under its own lock: the
//!   pass its main-lane jobs, the long lane its long ones before its first claim. A long job
//!   a live lane is running is never put back under it; one whose runner died is run again
//!   by the next lane that starts.
//! - **Its own audit sink, the runner's clock.** The lane's provider is a sibling of the pass's with its own sink
//!   (`Provider::for_another_lane`), so each job's invocations are committed with it; its
//!   state.db connection records the runner's clock ([`RunnerConfig::clock`]). Only its
//!   patience while state.db is busy is real time: it waits on another connection's lock.
//!
//! A pass starts the lane (`long_lane` step) when long work is pending and no lane runs, by
//! claiming its first job itself: a lane that starts always has a job, so a pass that finds
//! only held-back long work starts nothing. The thread claims the next job when one ends and
//! stops when none is claimable; the next pass starts it again. Each completion wakes the
//! passes (an eventfd `watch.rs` polls): the jobs it held back can run.

use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ops::Ctx;
use registry::Lane;
use state::LongOperations;
use state::{ClaimedJob, StateDb};
use store::{Layout, StoreError};

use crate::{RunnerConfig, apply, try_lock};

/// The long lane's lock, beside the pass lock in the state directory.
pub fn long_lane_lock(layout: &Layout) -> PathBuf {
    layout.runner_lock().with_file_name("runner-long.lock")
}

/// The long lane of one runner process: at most one thread at a time.
pub struct LongLane {
    thread: Option<JoinHandle<()>>,
    /// Set while the thread applies jobs; cleared by the thread before its last wake-up, so
    /// whoever it wakes sees it idle.
    running: Arc<AtomicBool>,
    /// Jobs the lane completed (failed ones included), for the passes to see progress.
    completed: Arc<AtomicU64>,
    /// Readable after each completion and when the thread ends. `None` if the kernel would
    /// not give one: the passes then see progress on their next look.
    wake: Option<Arc<OwnedFd>>,
}

impl Default for LongLane {
    fn default() -> Self {
        LongLane::new()
    }
}

impl LongLane {
    pub fn new() -> LongLane {
        let wake = rustix::event::eventfd(
            0,
            rustix::event::EventfdFlags::CLOEXEC | rustix::event::EventfdFlags::NONBLOCK,
        )
        .map_err(|e| {
            tracing::warn!(error = %e, "no eventfd: the passes see the long lane's progress later");
        })
        .ok()
        .map(Arc::new);
        LongLane {
            thread: None,
            running: Arc::new(AtomicBool::new(false)),
            completed: Arc::new(AtomicU64::new(0)),
            wake,
        }
    }

    /// Whether this process's lane is applying a job.
    pub fn busy(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }

    /// How many jobs this process's lane completed so far.
    pub fn completed(&self) -> u64 {
        self.completed.load(Ordering::Acquire)
    }

    /// The descriptor that becomes readable when the lane completes a job or ends.
    pub(crate) fn wake_fd(&self) -> Option<BorrowedFd<'_>> {
        self.wake.as_deref().map(AsFd::as_fd)
    }

    /// Empties the wake descriptor after a wake-up.
    pub(crate) fn clear_wake(&self) {
        if let Some(fd) = &self.wake {
            let mut count = [0u8; 8];
            let _ = rustix::io::read(fd, &mut count);
        }
    }

    /// Waits until the lane's thread has ended (its current job done). A machine that died
    /// in the lane's thread at a crash point (`crash::Died`, under test) dies here too, so
    /// that the death reaches whoever runs the passes.
    pub fn join(&mut self) {
        if let Some(thread) = self.thread.take()
            && let Err(panic) = thread.join()
            && crash::is_death(&*panic)
        {
            std::panic::resume_unwind(panic);
        }
    }

    /// Starts the lane if long work is pending and no lane runs, here or in another runner:
    /// takes the lane's lock, puts back the long jobs a dead runner left running, and claims
    /// the first job before the thread starts. Returns whether it started.
    pub fn start_if_due(
        &mut self,
        config: &RunnerConfig,
        state: &mut StateDb,
    ) -> anyhow::Result<bool> {
        if self.busy() {
            return Ok(false);
        }
        self.join();
        let long = LongOperations::of(declarations::registry());
        // On an idle node: one read that finds no pending job.
        if !state.long_work_pending(&long)? {
            return Ok(false);
        }
        let Some(lock) = try_lock(&long_lane_lock(&config.layout))? else {
            // Another runner's lane: it runs that work.
            return Ok(false);
        };
        let recovered = state.recover_running(Lane::Long, &long)?;
        if recovered > 0 {
            tracing::warn!(
                recovered,
                "long jobs of a runner that died are queued again"
            );
        }
        let Some(first) = state.claim_long(&long)? else {
            // Only held-back work: the jobs it waits for are the main lane's.
            return Ok(false);
        };
        let config = config.clone();
        let completed = self.completed.clone();
        let running = self.running.clone();
        let wake = self.wake.clone();
        self.running.store(true, Ordering::Release);
        let spawned = std::thread::Builder::new()
            .name("long-lane".into())
            .spawn(move || {
                let ran = catch_unwind(AssertUnwindSafe(|| {
                    run_lane(&config, lock, first, &completed, wake.as_deref())
                }));
                running.store(false, Ordering::Release);
                signal(wake.as_deref());
                // Only a death at a crash point gets here (`run_lane` contains the rest).
                if let Err(panic) = ran {
                    std::panic::resume_unwind(panic);
                }
            });
        match spawned {
            Ok(thread) => {
                self.thread = Some(thread);
                Ok(true)
            }
            Err(e) => {
                // The claimed job stays `running` with the lock released: the next pass's
                // lane runs it again.
                self.running.store(false, Ordering::Release);
                Err(e.into())
            }
        }
    }
}

/// The lane's thread: applies `first`, then claims and applies long jobs until none is
/// claimable. Holds `lock` throughout. Whatever fails is logged and recorded like a failed
/// step; the job it was applying is then still `running` and is run again by the next lane.
fn run_lane(
    config: &RunnerConfig,
    lock: File,
    first: ClaimedJob,
    completed: &AtomicU64,
    wake: Option<&OwnedFd>,
) {
    let provider = Arc::new(config.provider.for_another_lane());
    let outcome = StateDb::open_with_clock(&config.layout.state_db(), config.clock.clone())
        .map_err(anyhow::Error::from)
        .map(|state| Ctx::new(provider, state).with_layout(config.layout.clone()))
        .and_then(|mut ctx| {
            let drained = catch_unwind(AssertUnwindSafe(|| {
                drain(config, &mut ctx, first, completed, wake)
            }));
            let message = match drained {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(e)) => format!("{e:#}"),
                // The machine died at a crash point (under test): nothing is recorded, the
                // thread ends with it and `LongLane::join` passes the death on.
                Err(panic) if crash::is_death(&*panic) => std::panic::resume_unwind(panic),
                Err(panic) => format!(
                    "panicked: {}",
                    crash::panic_message(&*panic).unwrap_or_default()
                ),
            };
            if let Err(e) = ctx.state.record_step_failure("long_lane", &message) {
                tracing::error!(error = %e, "could not record the long lane's failure");
            }
            Err(anyhow::anyhow!(message))
        });
    if let Err(e) = outcome {
        tracing::error!(
            error = format!("{e:#}"),
            "the long lane stopped; the next pass starts it again"
        );
    }
    drop(lock);
}

fn drain(
    config: &RunnerConfig,
    ctx: &mut Ctx,
    first: ClaimedJob,
    completed: &AtomicU64,
    wake: Option<&OwnedFd>,
) -> anyhow::Result<()> {
    let registry = declarations::registry();
    let long = LongOperations::of(registry);
    let mut next = Some(first);
    while let Some(job) = next {
        let (outcome, services) =
            apply::apply_one(ctx, registry, ops::handlers(), &config.node_id, &job);
        let outcome = if services.is_empty() {
            outcome
        } else {
            // Shared services are the main lane's: a long operation that touches one is a
            // node bug. Its change still gets its reload, so the job's result is true.
            tracing::error!(
                request_id = job.request_id,
                operation = job.operation,
                "a long operation changed a shared service's configuration: a node bug"
            );
            let failed = ctx.finish_batch();
            apply::after_reloads(outcome, &services, &failed)
        };
        let invocations = ctx.take_invocations();
        complete(ctx, &job, &outcome, &invocations)?;
        completed.fetch_add(1, Ordering::AcqRel);
        signal(wake);
        next = ctx.state.claim_long(&long)?;
    }
    Ok(())
}

/// How long the lane keeps trying to record a job's end while state.db is busy (a pass's
/// `quick_check` reading every page, the API's readers): giving up would leave the job
/// `running`, and the next lane would do all of its long work again.
const COMPLETION_PATIENCE: Duration = Duration::from_secs(60);

/// [`StateDb::complete_audited`], retried while state.db is busy.
fn complete(
    ctx: &mut Ctx,
    job: &ClaimedJob,
    outcome: &state::Outcome,
    invocations: &[(i64, registry::AuditDetail)],
) -> Result<(), StoreError> {
    let give_up = Instant::now() + COMPLETION_PATIENCE;
    loop {
        match ctx.state.complete_audited(job, outcome, invocations) {
            Err(StoreError::Busy { context }) if Instant::now() < give_up => {
                tracing::warn!(
                    request_id = job.request_id,
                    context,
                    "state.db busy; completing again"
                );
                std::thread::sleep(Duration::from_millis(200));
            }
            done => return done,
        }
    }
}

/// Makes the wake descriptor readable.
fn signal(wake: Option<&OwnedFd>) {
    if let Some(fd) = wake {
        let _ = rustix::io::write(fd, &1u64.to_ne_bytes());
    }
}

#[cfg(test)]
mod tests {
    //! The two lanes' claims against a real state.db, interleaved by a seeded scheduler the
    //! way the pass and the long lane's thread interleave: admissions at pass starts, main
    //! batches, long jobs claimed and completed at any point in between.

    use std::collections::BTreeMap;

    use inbox::InboxRow;
    use registry::{Family, Hex32, Module, Operation, Owner, Registry, Resource, Scope};
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::json;
    use state::{Outcome, ResourceChange};

    use super::*;

    struct Sim;
    impl Family for Sim {
        const NAME: &'static str = "sim";
        const MODULE: Module = Module::Core;
    }

    #[derive(Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Req {
        id: Hex32,
        account: Hex32,
    }
    impl Resource for Req {
        fn resource_id(&self) -> &Hex32 {
            &self.id
        }
        fn owner(&self) -> Owner {
            Owner::Tenant(self.account.clone())
        }
    }

    #[derive(Serialize, Deserialize, JsonSchema)]
    struct Res {}

    macro_rules! op {
        ($ty:ident, $name:literal, $lane:expr) => {
            struct $ty;
            impl Operation for $ty {
                const NAME: &'static str = $name;
                const SCOPE: Scope = Scope::Tenant;
                const SUMMARY: &'static str = "test";
                const LANE: Lane = $lane;
                type Family = Sim;
                type Request = Req;
                type Result = Res;
                fn example() -> Req {
                    Req {
                        id: hex(0),
                        account: hex(1),
                    }
                }
            }
        };
    }
    op!(Quick, "quick", Lane::Main);
    op!(Slow, "slow", Lane::Long);

    fn hex(n: u64) -> Hex32 {
        format!("{n:032x}").parse().unwrap()
    }

    /// xorshift64*: the simulation owns its randomness, so a seed replays exactly.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
        }
    }

    /// What the invariant is about: every account's running job is its oldest pending job
    /// (so an account's jobs run one at a time, in admission order, across both lanes), and
    /// no resource has two jobs running.
    fn check(state: &StateDb, seed: u64, when: &str) {
        let pending = pending(state);
        let mut oldest: BTreeMap<&str, i64> = BTreeMap::new();
        for (seq, owner, _, _) in &pending {
            oldest.entry(owner.as_str()).or_insert(*seq);
        }
        let mut running_keys = std::collections::BTreeSet::new();
        for (seq, owner, state, key) in &pending {
            if state == "running" {
                assert_eq!(
                    Some(seq),
                    oldest.get(owner.as_str()),
                    "seed {seed}, {when}: job {seq} of {owner} runs before its account's older jobs: {pending:?}"
                );
                assert!(
                    running_keys.insert(key.clone()),
                    "seed {seed}, {when}: two jobs of {key} run at once"
                );
            }
        }
    }

    /// The owners of a batch's jobs: the accounts it served.
    fn served(batch: &[ClaimedJob]) -> Vec<String> {
        batch
            .iter()
            .map(|job| job.owner.as_str().to_owned())
            .collect()
    }

    /// The pending jobs in admission order: (seq, owner, state, key), read on a connection of
    /// its own, as the API reads state.db.
    fn pending(state: &StateDb) -> Vec<(i64, String, String, String)> {
        let conn = rusqlite::Connection::open(state.path()).unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT seq, owner, state, family || '/' || resource_id FROM jobs
                 WHERE state IN ('queued', 'running') ORDER BY seq",
            )
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    /// Quick requests of `accounts`, one after the other, as inbox rows from `first` on: each
    /// on a resource of its own.
    fn quick_rows(first: i64, accounts: &[u64]) -> Vec<InboxRow> {
        accounts
            .iter()
            .enumerate()
            .map(|(i, &account)| {
                let seq = first + i as i64;
                let body = json!({"request_id": hex(1_000_000 + seq as u64),
                    "operation": "quick",
                    "resource": {"id": hex(10_000 + seq as u64), "account": hex(account)}})
                .to_string()
                .into_bytes();
                InboxRow {
                    seq,
                    request_id: hex(1_000_000 + seq as u64).to_string(),
                    operation: "quick".into(),
                    body_len: body.len() as i64,
                    body,
                    received_at: Some(0),
                    origin: None,
                }
            })
            .collect()
    }

    /// One account's thousand queued jobs delay another account's one by a batch at most: a
    /// batch takes accounts in turn, each by its oldest job, even when each job is done as
    /// soon as it is claimed (a job that touches no shared service), and each account's own
    /// jobs stay in admission order.
    #[test]
    fn a_batch_takes_accounts_in_turn_by_their_oldest_job() {
        let registry = Registry::builder().op::<Quick>().op::<Slow>().build();
        let long = LongOperations::of(&registry);
        let dir = tempfile::tempdir().unwrap();
        let mut state = StateDb::open(&dir.path().join("state.db")).unwrap();
        // Account 1 queues 1,000, then accounts 2 and 3 one each.
        let mut accounts = vec![1; 1000];
        accounts.extend([2, 3]);
        let rows = quick_rows(1, &accounts);
        state.ingest(&registry, &hex(0xfeed), &rows).unwrap();
        let mut batches: Vec<Vec<String>> = Vec::new();
        loop {
            let mut served = Vec::new();
            while served.len() < 64
                && let Some(job) = state.claim_main(&long, &served).unwrap()
            {
                // Done at once, as a job that reloads nothing is.
                state
                    .complete(
                        &job,
                        &Outcome {
                            result: Ok(json!({})),
                            resource: ResourceChange::Keep,
                        },
                    )
                    .unwrap();
                served.push(job.owner.as_str().to_owned());
            }
            if served.is_empty() {
                break;
            }
            batches.push(served);
        }
        let name = |n: u64| hex(n).to_string();
        assert_eq!(batches[0], [name(1), name(2), name(3)], "the first batch");
        assert_eq!(batches.len(), 1000, "one batch per job of account 1");
        assert!(batches[1..].iter().all(|b| *b == [name(1)]));
        assert_eq!(pending(&state), Vec::new());
    }

    /// Past the claim's window of oldest queued jobs: with 5,000 of one account's jobs queued
    /// before another account's one, the batch that took the first account's oldest takes
    /// the other account's next.
    #[test]
    fn an_account_behind_more_than_the_claims_window_is_still_served_in_the_first_batch() {
        let registry = Registry::builder().op::<Quick>().op::<Slow>().build();
        let long = LongOperations::of(&registry);
        let dir = tempfile::tempdir().unwrap();
        let mut state = StateDb::open(&dir.path().join("state.db")).unwrap();
        let mut accounts = vec![1; 5000];
        accounts.push(2);
        state
            .ingest(&registry, &hex(0xfeed), &quick_rows(1, &accounts))
            .unwrap();
        let first = state.claim_main(&long, &[]).unwrap().unwrap();
        assert_eq!(first.owner.as_str(), hex(1).as_str());
        let served = [first.owner.as_str().to_owned()];
        let second = state.claim_main(&long, &served).unwrap().unwrap();
        assert_eq!(second.owner.as_str(), hex(2).as_str());
        let served = [served[0].clone(), second.owner.as_str().to_owned()];
        assert!(state.claim_main(&long, &served).unwrap().is_none());
    }

    #[test]
    fn seeded_interleavings_of_the_two_lanes_keep_each_accounts_order_and_drain() {
        let registry = Registry::builder().op::<Quick>().op::<Slow>().build();
        registry.check().unwrap();
        let long = LongOperations::of(&registry);
        let node = hex(0xfeed);
        for seed in 1..=40u64 {
            let dir = tempfile::tempdir().unwrap();
            let mut state = StateDb::open(&dir.path().join("state.db")).unwrap();
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
            let mut inbox_seq = 0;
            let mut batch: Vec<ClaimedJob> = Vec::new();
            let mut long_running: Option<ClaimedJob> = None;
            let done = |state: &mut StateDb, job: &ClaimedJob| {
                state
                    .complete(
                        job,
                        &Outcome {
                            result: Ok(json!({})),
                            resource: ResourceChange::Keep,
                        },
                    )
                    .unwrap();
            };
            for step in 0..400 {
                let admitting = step < 300;
                match rng.below(6) {
                    // A pass starts (no batch open): it admits, and takes its snapshot.
                    0 if batch.is_empty() && admitting => {
                        let rows: Vec<InboxRow> = (0..rng.below(6))
                            .map(|_| {
                                inbox_seq += 1;
                                let account = 1 + rng.below(4);
                                let op = if rng.below(4) == 0 { "slow" } else { "quick" };
                                let resource = account * 100 + rng.below(3);
                                let body = json!({"request_id": hex(1_000_000 + inbox_seq as u64),
                                    "operation": op,
                                    "resource": {"id": hex(resource), "account": hex(account)}})
                                .to_string()
                                .into_bytes();
                                InboxRow {
                                    seq: inbox_seq,
                                    request_id: hex(1_000_000 + inbox_seq as u64).to_string(),
                                    operation: op.into(),
                                    body_len: body.len() as i64,
                                    body,
                                    received_at: Some(0),
                                    origin: None,
                                }
                            })
                            .collect();
                        state.ingest(&registry, &node, &rows).unwrap();
                    }
                    // The main lane claims the next job of its batch.
                    1 | 2 => {
                        if batch.len() < 8
                            && let Some(job) = state.claim_main(&long, &served(&batch)).unwrap()
                        {
                            assert!(
                                !registry
                                    .operation(&job.operation)
                                    .is_some_and(|op| op.lane() == Lane::Long),
                                "seed {seed}: the main lane claimed long work"
                            );
                            batch.push(job);
                            check(&state, seed, "main claim");
                        }
                    }
                    // The batch ends: completed.
                    3 => {
                        for job in batch.drain(..) {
                            done(&mut state, &job);
                        }
                    }
                    // The long lane claims, or completes the job it runs.
                    _ => match long_running.take() {
                        Some(job) => done(&mut state, &job),
                        None => {
                            long_running = state.claim_long(&long).unwrap();
                            if let Some(job) = &long_running {
                                assert_eq!(job.operation, "slow", "seed {seed}");
                                check(&state, seed, "long claim");
                            }
                        }
                    },
                }
            }
            // Admissions stopped: the two lanes drain everything between them.
            for job in batch.drain(..) {
                done(&mut state, &job);
            }
            if let Some(job) = long_running.take() {
                done(&mut state, &job);
            }
            for _ in 0..10_000 {
                let mut progressed = false;
                while let Some(job) = state.claim_main(&long, &[]).unwrap() {
                    check(&state, seed, "drain");
                    done(&mut state, &job);
                    progressed = true;
                }
                if let Some(job) = state.claim_long(&long).unwrap() {
                    check(&state, seed, "drain");
                    done(&mut state, &job);
                    progressed = true;
                }
                if !progressed {
                    break;
                }
            }
            assert_eq!(
                pending(&state),
                Vec::new(),
                "seed {seed}: jobs left that no lane would claim"
            );
        }
    }
}
