//! The root runner (docs/design.md section 7).
//!
//! [`run_once`] is one pass: a fixed list of steps, each run through [`steps::contain`], the one
//! place that catches an error or a panic, logs it, records the step's failure in state.db and
//! moves on. A failing step never stops the others, and a failing job never stops a step
//! (ARCHITECTURE.md invariant 5). [`watch::watch`] runs passes on an inotify watch of the inbox plus
//! the 15 s tick, and the next pass at once after one that stopped at its budget with jobs
//! left.
//!
//! A pass with nothing to do runs every 15 s forever: it reads a few rows, starts no program
//! and commits nothing. What reads the whole node (`quick_check`, the orphan sweep, the drift
//! check) runs every [`steps::PERIODIC_EVERY`], so an idle pass costs the same at any size.
//!
//! Jobs run in two lanes: the main lane inside the pass ([`apply`]), and the long lane
//! ([`long_lane`]) in a thread beside the passes, for work whose length a tenant decides
//! (archives, restores, usage walks). [`run_once`] therefore returns only when its long lane
//! is idle: until then it goes on running passes, as `--watch` does, so the jobs the long
//! lane held back and the requests that arrive meanwhile are served, and a oneshot runner
//! exits with nothing left running.
//!
//! Time comes from [`RunnerConfig::clock`]: the pass's budget, when a periodic step is due,
//! and, through the store it opens with it (`StateDb::open_with_clock`) and the handlers'
//! context, every time state.db records. The packaged runner gives the system clock; a
//! simulation gives its own and drives passes itself ([`run_once`], [`pass`]), one process
//! holding the runner, the store and the simulated system. What waits on the kernel stays on
//! real time: the `--watch` loop's `poll(2)` ([`watch`]) and the long lane's patience while
//! state.db is busy. The files a pass touches are the caller's too: the data directory
//! ([`RunnerConfig::layout`]) and, through the provider, the system root; the runner reads
//! nothing else but this machine's own `/etc/passwd`, for the API user's uid
//! (`--api-user`), which owns files of the real data directory.
//!
//! Every runner binary runs [`binary::main_on`]: the packaged `layerone-runner` through
//! [`binary::main`], with the real executor on the real machine and no way to arm a crash
//! point, the simulated and crash-point runners of `crates/devnode` with the simulator's
//! executor and machine (and, for the latter, crash points armed from the environment).

pub mod apply;
pub mod binary;
pub mod long_lane;
pub mod steps;
pub mod watch;

use std::fs::File;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub use long_lane::LongLane;

use clock::Clock;
use provider::Provider;
use registry::Hex32;
use state::StateDb;
use store::{ApiIdentity, Layout};

/// Everything a pass needs.
#[derive(Clone)]
pub struct RunnerConfig {
    pub layout: Layout,
    pub provider: Arc<Provider>,
    pub node_id: Hex32,
    /// How long the apply step may keep claiming jobs in one pass.
    pub budget: Duration,
    /// The API's user and group, so state.db's directory and file get the owners and modes of
    /// docs/design.md section 6. `None` on a dev node run by an ordinary user.
    pub api: Option<ApiIdentity>,
    /// Where the pass's time comes from: its budget, its periodic steps, and every time the
    /// store and the handlers record. The provider reads the same one
    /// (`Provider::with_clock`). The system clock in production.
    pub clock: Arc<dyn Clock>,
    /// How many events the feed keeps ([`steps::EVENTS_KEPT`] on a node; a dev node may keep
    /// fewer, so a client that falls behind the trim can be tried in seconds).
    pub events_kept: i64,
}

/// What one pass did.
#[derive(Clone, Debug, Default)]
pub struct PassReport {
    /// False when another runner held the lock and this pass did nothing.
    pub ran: bool,
    pub admitted: usize,
    pub rejected: usize,
    pub applied: usize,
    /// The main lane stopped at the pass's budget with jobs perhaps still claimable
    /// ([`apply::Applied::stopped_at_budget`]): the next pass follows at once.
    pub stopped_at_budget: bool,
    pub failed_steps: Vec<&'static str>,
    pub elapsed: Duration,
}

impl PassReport {
    /// Adds what a later pass of the same run did.
    pub fn absorb(&mut self, later: &PassReport) {
        self.ran |= later.ran;
        self.admitted += later.admitted;
        self.rejected += later.rejected;
        self.applied += later.applied;
        self.stopped_at_budget = later.stopped_at_budget;
        self.failed_steps.extend(&later.failed_steps);
        self.elapsed += later.elapsed;
    }
}

/// Holds the runner lock for the length of a pass: two runners never run a pass at once.
/// The lock file also holds when the last pass started and finished, for `layerone status`:
/// written there rather than in state.db, so that an idle pass commits nothing.
pub struct PassLock {
    file: File,
}

impl PassLock {
    /// Writes the pass's times and the durations of every pass so far into the lock file
    /// ([`store::metrics::pass_record`]; no fsync: it is informational). The new text is
    /// written over the old before the file is cut to its length, so a reader never finds
    /// it empty.
    pub fn record(&self, started_ms: i64, finished_ms: i64) -> std::io::Result<()> {
        use std::io::Read;
        use std::os::unix::fs::FileExt;
        let mut previous = String::new();
        // The lock file holds a few dozen bytes; one that does not read as text starts over.
        let _ = (&self.file).take(4096).read_to_string(&mut previous);
        let text = store::metrics::pass_record(&previous, started_ms, finished_ms);
        self.file.write_all_at(text.as_bytes(), 0)?;
        self.file.set_len(text.len() as u64)
    }
}

impl PassLock {
    /// Takes the lock, or returns `None` if another runner holds it.
    pub fn try_take(layout: &Layout) -> anyhow::Result<Option<PassLock>> {
        Ok(try_lock(&layout.runner_lock())?.map(|file| PassLock { file }))
    }
}

/// Takes the exclusive `flock` on `path` (created if missing), or `None` if another holder
/// has it. The kernel releases it when the holder dies.
pub(crate) fn try_lock(path: &Path) -> anyhow::Result<Option<File>> {
    let file = File::options()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)?;
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Some(file)),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
        Err(e) => Err(anyhow::anyhow!("lock {}: {e}", path.display())),
    }
}

/// How many more passes `--once` runs in a row after one that found new requests or stopped
/// at its budget with jobs left.
pub(crate) const ONCE_MORE_PASSES: usize = 32;

/// One pass of the runner and, when it started long work, the passes that follow until the
/// long lane is idle (see the crate documentation): what `--once` runs.
pub fn run_once(config: &RunnerConfig) -> anyhow::Result<PassReport> {
    let mut lane = LongLane::new();
    let mut report = pass(config, &mut lane)?;
    // Requests committed while the pass ran started no new pass (systemd does not start a
    // unit that is still running): look again while passes find new requests, a bounded
    // number of times. What is committed after the last look waits for the next wake.
    // So may the jobs a pass left at its budget.
    let mut found = report.admitted + report.rejected > 0 || report.stopped_at_budget;
    for _ in 0..ONCE_MORE_PASSES {
        if !found {
            break;
        }
        let again = pass(config, &mut lane)?;
        found = again.admitted + again.rejected > 0 || again.stopped_at_budget;
        report.absorb(&again);
    }
    // A long job that ended already may have held back its account's next jobs: they get
    // their pass too.
    if lane.busy() || lane.completed() > 0 {
        let later = watch::serve(
            config,
            &mut lane,
            &AtomicBool::new(false),
            watch::Until::LaneIdle,
        );
        report.absorb(&later);
    }
    lane.join();
    Ok(report)
}

/// One pass of the runner; `lane` is this process's long lane, which the pass starts when
/// long work is due.
pub fn pass(config: &RunnerConfig, lane: &mut LongLane) -> anyhow::Result<PassReport> {
    let started = config.clock.monotonic();
    config.layout.prepare_root_side(config.api)?;
    let Some(lock) = PassLock::try_take(&config.layout)? else {
        tracing::info!("another runner is running a pass; skipping this one");
        return Ok(PassReport::default());
    };
    let registry = declarations::registry();
    registry.check_structure()?;
    ops::handlers().check(registry)?;
    // A journal beside state.db means a commit was interrupted: opening rolls it back.
    let recovering =
        std::fs::exists(config.layout.state_dir().join("state.db-journal")).unwrap_or(true);
    let state = StateDb::open_with_clock(&config.layout.state_db(), config.clock.clone())?;
    // The file may have just been created: give it the owner and mode the API reads it with.
    config.layout.prepare_root_side(config.api)?;
    // quick_check reads every page of state.db: it runs after an interrupted commit, and
    // otherwise every few minutes rather than on every pass.
    if recovering || steps::due(&config.layout, &*config.clock, steps::CHECKED) {
        state.quick_check()?;
        steps::mark(&config.layout, &*config.clock, steps::CHECKED)?;
    }
    let mut ctx = ops::Ctx::new(config.provider.clone(), state).with_layout(config.layout.clone());
    let mut report = PassReport {
        ran: true,
        ..PassReport::default()
    };
    let started_ms = config.clock.now_ms();
    steps::run_all(config, &mut ctx, &mut report, lane);
    if let Err(e) = lock.record(started_ms, config.clock.now_ms()) {
        tracing::warn!(error = %e, "could not record the pass for `layerone status`");
    }
    report.elapsed = config.clock.monotonic().saturating_sub(started);
    Ok(report)
}
