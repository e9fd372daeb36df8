//! `simulation`: the deterministic simulation of the node, in one process, from one seed.
//!
//! In the style of TigerBeetle's VOPR and FoundationDB's simulation: the API's inbox writer,
//! the runner (`runner::run_once`, the packaged runner's code), the store and the provider's
//! simulated system run in this process, on a clock the history moves itself
//! (`testkit::ManualClock`: nothing on the path reads the system's time, SQLite's included,
//! [`storage`]), driven by one seeded generator ([`Rng`]). A history ([`history`]) submits,
//! reorders, duplicates and supersedes requests drawn from the declarations, runs passes,
//! removes and rebuilds accounts, edits derived files behind the node's back, moves the
//! clock, and kills the machine at crash points: the crash hook unwinds the runner where it
//! stands ([`crash::Died`]), every handle of the dead node is dropped, and the node comes
//! back from what the storage model says the disk kept ([`storage`]: what was synced, and a
//! seeded subset of what was not). After each history the invariants of docs/design.md section 3
//! are checked: integrity, nothing lost, nothing doubled, nothing half-applied, the disk
//! converged ([`history`]).
//!
//! A history is a function of its seed: [`run`] returns a hash of its trace, which the same
//! seed gives again ([`Outcome::trace_hash`]), and a failure names its seed, which `--seed`
//! replays (`layerone-bench simulate --seed S`). The real-process histories and crash matrix
//! (`crates/cli/tests/node/lifecycle.rs`) prove the real binary; this adds breadth.
//!
//! Test support only: no packaged binary links this crate
//! (`the_packaged_binaries_link_neither_the_simulator_nor_the_test_support`). Its storage model
//! is the default VFS of any process that runs a history.

pub mod history;
pub mod node;
pub mod serial;
pub mod storage;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use provider::Platform;
use sha2::Digest as _;
use testkit::ManualClock;

/// xorshift64*: the simulation owns its randomness, so a seed replays exactly.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (which must not be 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Shuffles `items` (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i as u64 + 1) as usize);
        }
    }
}

/// What one history did.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub seed: u64,
    /// SHA-256 of the history's trace: the same seed gives the same hash.
    pub trace_hash: String,
    pub platform: Platform,
    pub submitted: usize,
    pub accepted: usize,
    pub passes: usize,
    pub crashes: usize,
    pub drift_edits: usize,
    pub sectors_kept: usize,
    pub sectors_lost: usize,
    /// How many times SQL read the time itself during the history (`'now'`,
    /// `unixepoch()`): answered from the history's clock, and counted because every time
    /// the node records should be given by its caller.
    pub sql_clock_readings: u64,
}

/// A history that broke an invariant (or could not run): its seed and what broke.
#[derive(Debug)]
pub struct Failure {
    pub seed: u64,
    pub message: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "history {} failed: {}\nreplay it with `layerone-bench simulate --seed {}`",
            self.seed, self.message, self.seed
        )
    }
}

/// One history at a time per process: the storage model and the crash hook are the
/// process's.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Holds the process's storage model and crash hook for the caller alone (what [`run`]
/// takes for each history), for a test of the model itself.
pub fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// The certificate bundle (chain and key) the histories' certificate requests name: one
/// self-signed chain for `*.example.com`, made once per process (its key is random, which
/// changes no outcome).
fn bundle() -> &'static [u8] {
    static BUNDLE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BUNDLE.get_or_init(|| {
        let made = rcgen::generate_simple_self_signed(vec![
            "*.example.com".to_owned(),
            "example.com".to_owned(),
        ])
        .expect("a self-signed certificate");
        format!("{}{}", made.cert.pem(), made.signing_key.serialize_pem()).into_bytes()
    })
}

/// Puts `bytes` into the node's `blobs/in` as the API's upload does, stamped with the
/// history's clock; returns the blob's name.
fn upload(node: &node::Node, bytes: &[u8]) -> anyhow::Result<String> {
    let name = hex::encode(sha2::Sha256::digest(bytes));
    let path = node.layout.blobs_in().join(&name);
    std::fs::write(&path, bytes)?;
    std::fs::File::options()
        .write(true)
        .open(&path)?
        .set_modified(clock::Clock::system_time(&*node.clock))?;
    Ok(name)
}

/// Runs the history of `seed` in `dir` (created empty, and removed after), and checks it.
pub fn run(seed: u64, dir: &Path) -> Result<Outcome, Failure> {
    let _one = exclusive();
    node::install();
    let fail = |message: String| Failure { seed, message };
    let root = dir.join(format!("history-{seed}"));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).map_err(|e| fail(format!("{}: {e}", root.display())))?;
    storage::forget();
    let platform = if seed % 2 == 1 {
        Platform::CloudLinux
    } else {
        Platform::Debian
    };
    let clock = ManualClock::from_seed(seed);
    storage::set_clock(clock.clone());
    let readings = storage::clock_readings();
    let ran = catch_unwind(AssertUnwindSafe(|| -> anyhow::Result<history::Record> {
        let mut node = node::Node::new(&root, platform, clock)?;
        let blob = upload(&node, bundle())?;
        history::run(seed, &mut node, &blob)
    }));
    storage::forget();
    let _ = std::fs::remove_dir_all(&root);
    let record = match ran {
        Ok(Ok(record)) => record,
        Ok(Err(e)) => return Err(fail(format!("{e:#}"))),
        Err(panic) => {
            let what =
                crash::panic_message(&*panic).unwrap_or_else(|| "a panic without a message".into());
            return Err(fail(format!("panicked: {what}")));
        }
    };
    let mut hash = sha2::Sha256::new();
    hash.update(format!("{platform:?}\n"));
    for line in &record.trace {
        hash.update(line.as_bytes());
        hash.update(b"\n");
    }
    Ok(Outcome {
        seed,
        trace_hash: hex::encode(hash.finalize()),
        platform,
        submitted: record.submitted,
        accepted: record.accepted.len(),
        passes: record.passes,
        crashes: record.crashes,
        drift_edits: record.drift_edits,
        sectors_kept: record.sectors_kept,
        sectors_lost: record.sectors_lost,
        sql_clock_readings: storage::clock_readings() - readings,
    })
}

/// What a run of many histories did.
#[derive(Debug, Default)]
pub struct Summary {
    /// The run's first seed.
    pub first: u64,
    pub histories: usize,
    pub crashes: usize,
    pub passes: usize,
    pub accepted: usize,
    pub sectors_lost: usize,
    pub sql_clock_readings: u64,
    pub elapsed: Duration,
    /// The first history that failed, if one did (the run stops there).
    pub failure: Option<Failure>,
}

impl std::fmt::Display for Summary {
    /// The run's figures, and the crash points this process reached and did not.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let reached = node::reached();
        let every = ops::crash_points();
        let unreached: Vec<&str> = every
            .iter()
            .filter(|p| !reached.contains_key(p))
            .map(|p| p.name())
            .collect();
        write!(
            f,
            "simulation: {} histories from seed {} in {:.1} s ({:.0} per minute): {} passes, \
             {} crashes, {} requests accepted, {} unsynced sectors lost, {} times read by SQL; \
             crash points reached: {} of {} (not: {unreached:?})",
            self.histories,
            self.first,
            self.elapsed.as_secs_f64(),
            self.per_minute(),
            self.passes,
            self.crashes,
            self.accepted,
            self.sectors_lost,
            self.sql_clock_readings,
            reached.len(),
            every.len(),
        )
    }
}

impl Summary {
    /// Histories per minute of the run.
    pub fn per_minute(&self) -> f64 {
        self.histories as f64 * 60.0 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Runs the histories of seeds `first`, `first + 1`, ... in `dir`, at most `count` of them
/// and until `budget` has passed (both bound the run), stopping at the first failure.
/// `progress` is called after each history.
pub fn run_many(
    first: u64,
    count: u64,
    budget: Duration,
    dir: &Path,
    mut progress: impl FnMut(&Outcome),
) -> Summary {
    let started = Instant::now();
    let mut summary = Summary {
        first,
        ..Summary::default()
    };
    for seed in first..first.saturating_add(count) {
        if started.elapsed() >= budget {
            break;
        }
        match run(seed, dir) {
            Ok(outcome) => {
                summary.histories += 1;
                summary.crashes += outcome.crashes;
                summary.passes += outcome.passes;
                summary.accepted += outcome.accepted;
                summary.sectors_lost += outcome.sectors_lost;
                summary.sql_clock_readings += outcome.sql_clock_readings;
                progress(&outcome);
            }
            Err(failure) => {
                summary.failure = Some(failure);
                break;
            }
        }
    }
    summary.elapsed = started.elapsed();
    summary
}
