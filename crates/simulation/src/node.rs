//! The node of one history, in this process: the API's side (its inbox and the inbox's
//! writer thread), the runner's (`runner::run_once` on a `RunnerConfig` whose provider is the
//! simulator's), the data directory and the simulated system root, all on the history's
//! clock; and its death at a crash point and its restart from what the disk kept.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use clock::Clock;
use inbox::{Inbox, Receipt};
use provider::{Platform, Provider, ProviderConfig};
use registry::{Hex32, Origin};
use runner::{PassReport, RunnerConfig};
use serde_json::Value;
use simulator::SimExecutor;
use state::StateDb;
use store::Layout;
use testkit::ManualClock;

use crate::storage;

/// How many crash points the armed countdown lets pass before the one it dies at; none when
/// it is `u32::MAX` (disarmed).
static COUNTDOWN: AtomicU32 = AtomicU32::new(u32::MAX);

/// How often each crash point was reached, armed or not, since the process started.
static REACHED: Mutex<BTreeMap<crash::Point, u64>> = Mutex::new(BTreeMap::new());

/// The crash points reached so far in this process, each with how many times.
pub fn reached() -> BTreeMap<crash::Point, u64> {
    REACHED.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The hook of every crash point of the process: counts the point and, when the countdown
/// reaches it, kills the machine ([`storage::kill`]) and unwinds with [`crash::Died`], which
/// the runner's containment lets through, up to [`Node::pass`]. A thread that reaches a
/// crash point after another one killed the machine dies there too: a dead machine runs
/// nothing more (without this, the main lane went on claiming, on a disk that kept none of
/// its writes, the same job again and again: seed 5691, whose long lane had died).
fn hook(point: crash::Point) {
    *REACHED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(point)
        .or_default() += 1;
    if storage::is_dead() {
        resume_unwind(Box::new(crash::Died(point)));
    }
    let left = COUNTDOWN.load(Ordering::SeqCst);
    if left == u32::MAX {
        return;
    }
    if left == 0 {
        COUNTDOWN.store(u32::MAX, Ordering::SeqCst);
        storage::kill();
        resume_unwind(Box::new(crash::Died(point)));
    }
    COUNTDOWN.store(left - 1, Ordering::SeqCst);
}

/// Installs the storage model and the crash hooks, once per process.
pub fn install() {
    storage::install();
    crash::install(hook);
}

/// The node's id, which node-scope requests name.
pub fn node_id() -> Hex32 {
    format!("{:032x}", 0xfeed)
        .parse()
        .expect("a 32-digit hex id")
}

/// What the API answers a submission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// 202, a new request.
    Received,
    /// 202, the job this request id already is.
    Duplicate,
    /// 409, the request id is another body's.
    Conflict,
    /// 503 or 429 with `Retry-After`: state.db was briefly unreadable (after a crash, until
    /// root's next pass), or the queue was at its cap, and nothing was written; the control
    /// plane sends it again later.
    Unavailable,
}

/// How one pass ended.
pub enum Pass {
    /// It ran to its end.
    Ran(PassReport),
    /// The machine died at this crash point; the node restarted, and the disk kept these
    /// sectors of the unsynced writes and lost those.
    Died {
        point: crash::Point,
        kept: usize,
        lost: usize,
    },
}

pub struct Node {
    pub root: PathBuf,
    pub layout: Layout,
    pub platform: Platform,
    pub clock: Arc<ManualClock>,
    pub config: RunnerConfig,
    inbox: Option<(Inbox, JoinHandle<()>)>,
}

impl Drop for Node {
    fn drop(&mut self) {
        self.close_inbox();
    }
}

impl Node {
    /// A new node in `root` (which must be empty) on `platform`, on `clock`.
    pub fn new(root: &Path, platform: Platform, clock: Arc<ManualClock>) -> anyhow::Result<Node> {
        let layout = Layout::new(root.join("data"));
        layout.prepare_api_side(None)?;
        layout.prepare_root_side(None)?;
        let provider = provider(root, &layout, platform, clock.clone());
        seed(&provider, platform)?;
        let shared: Arc<dyn Clock> = clock.clone();
        let mut node = Node {
            root: root.to_owned(),
            config: RunnerConfig {
                layout: layout.clone(),
                provider: Arc::new(provider),
                node_id: node_id(),
                budget: Duration::from_secs(3600),
                api: None,
                clock: shared,
                events_kept: runner::steps::EVENTS_KEPT,
            },
            layout,
            platform,
            clock,
            inbox: None,
        };
        node.open_inbox()?;
        // A node as installed: its first pass made state.db, which the API reads before it
        // admits (a missing state.db answers 503).
        runner::run_once(&node.config)?;
        Ok(node)
    }

    fn open_inbox(&mut self) -> anyhow::Result<()> {
        let shared: Arc<dyn Clock> = self.clock.clone();
        self.inbox = Some(Inbox::open_with_clock(&self.layout.inbox_db(), shared)?);
        Ok(())
    }

    /// Closes the API's inbox and waits for its writer to end.
    fn close_inbox(&mut self) {
        if let Some((inbox, writer)) = self.inbox.take() {
            drop(inbox);
            let _ = writer.join();
        }
    }

    fn inbox(&self) -> &Inbox {
        &self
            .inbox
            .as_ref()
            .expect("the inbox is open while the node lives")
            .0
    }

    /// Admits `body` as the API's route does (`crates/api/src/routes/jobs.rs`): validated;
    /// a request id root already admitted is that job (or a conflict, with another body);
    /// otherwise group-committed into the inbox, and state.db looked at again.
    pub fn submit(&self, body: &Value) -> anyhow::Result<Answer> {
        let job = declarations::registry()
            .validate(body.to_string().as_bytes(), &self.config.node_id)
            .map_err(|e| anyhow::anyhow!("{body}: {e}"))?;
        let (request_id, sha) = (job.request_id.to_string(), job.body_sha256.clone());
        let reader = store::read::StateReader::new(&self.layout.state_db());
        // `Err(None)`: state.db is briefly unreadable (a hot journal until root's next pass).
        let admitted = || -> Result<Option<Answer>, Option<anyhow::Error>> {
            match reader.job_body_sha(&request_id) {
                Ok(None) => Ok(None),
                Ok(Some(Some(existing))) if existing == sha => Ok(Some(Answer::Duplicate)),
                Ok(Some(_)) => Ok(Some(Answer::Conflict)),
                Err(store::read::ReadError::Unavailable { .. }) => Err(None),
                Err(e) => Err(Some(e.into())),
            }
        };
        match admitted() {
            Ok(Some(answer)) => return Ok(answer),
            Ok(None) => {}
            Err(None) => return Ok(Answer::Unavailable),
            Err(Some(e)) => return Err(e),
        }
        let (received, answer) = match self.inbox().admit_blocking(job, Origin::Api)? {
            Receipt::Conflict => return Ok(Answer::Conflict),
            Receipt::QueueFull { .. } => return Ok(Answer::Unavailable),
            Receipt::Received { .. } => (true, Answer::Received),
            Receipt::Duplicate { .. } => (false, Answer::Duplicate),
        };
        // The request is durable now: a state.db briefly unreadable answers the received view.
        Ok(match admitted() {
            Ok(Some(Answer::Conflict)) => Answer::Conflict,
            Ok(Some(_)) if received => Answer::Duplicate,
            Ok(_) | Err(None) => answer,
            Err(Some(e)) => return Err(e),
        })
    }

    /// Asks the inbox's writer to prune what root has admitted, as the API does.
    pub fn prune(&self) -> anyhow::Result<()> {
        let watermark = self.state()?.watermark()?;
        self.inbox().prune(watermark);
        Ok(())
    }

    /// state.db, opened as root opens it, on the history's clock.
    pub fn state(&self) -> anyhow::Result<StateDb> {
        Ok(StateDb::open_with_clock(
            &self.layout.state_db(),
            self.clock.clone(),
        )?)
    }

    /// A handler context on the node's state.db and system root: what the drift check runs
    /// with.
    pub fn ctx(&self) -> anyhow::Result<ops::Ctx> {
        Ok(ops::Ctx::new(self.config.provider.clone(), self.state()?)
            .with_layout(self.layout.clone()))
    }

    /// One `--once` run of the runner code. `die_after`: the machine dies at the crash point
    /// reached after that many others in this run (if the run reaches so many); `keep`: for
    /// each sector of an unsynced write, whether the disk kept it.
    pub fn pass(
        &mut self,
        die_after: Option<u32>,
        keep: impl FnMut() -> bool,
    ) -> anyhow::Result<Pass> {
        COUNTDOWN.store(die_after.unwrap_or(u32::MAX), Ordering::SeqCst);
        let ran = catch_unwind(AssertUnwindSafe(|| runner::run_once(&self.config)));
        COUNTDOWN.store(u32::MAX, Ordering::SeqCst);
        match ran {
            Ok(report) => Ok(Pass::Ran(report?)),
            Err(payload) => {
                let Some(&crash::Died(point)) = payload.downcast_ref::<crash::Died>() else {
                    resume_unwind(payload);
                };
                let (kept, lost) = self.restart(keep)?;
                Ok(Pass::Died { point, kept, lost })
            }
        }
    }

    /// The machine came back after [`storage::kill`]: every handle of the dead one closed
    /// (the runner's went as it unwound; the inbox's and the provider's go now), the disk as
    /// the storage model says it kept, and a new API and provider, as new processes would
    /// be.
    fn restart(&mut self, keep: impl FnMut() -> bool) -> anyhow::Result<(usize, usize)> {
        self.close_inbox();
        let provider = provider(&self.root, &self.layout, self.platform, self.clock.clone());
        self.config.provider = Arc::new(provider);
        let kept = storage::restart(keep)?;
        self.open_inbox()?;
        Ok(kept)
    }
}

/// The simulator's provider for the node in `root`, as the runner is given one: tenant work
/// in this process, whoever runs it, on the history's clock.
fn provider(root: &Path, layout: &Layout, platform: Platform, clock: Arc<ManualClock>) -> Provider {
    let sim = SimExecutor::new(vec![]).acting_as_root(false);
    let machine = Arc::new(sim.machine());
    Provider::new(ProviderConfig {
        platform,
        root: root.join("sysroot"),
        executor: Arc::new(sim),
        machine,
        audit_dir: layout.root().join("log"),
    })
    .with_clock(clock)
}

/// What the system root holds before the node's first pass: the account databases, PHP 8.2,
/// the vhost directory, the kernel files `observe_runtime` reads, the local administrators a
/// sudo allowlist names, the example fleet's identity and every module's programs (so the
/// example assignment applies and leaves every module ready), and on CloudLinux MySQL
/// Governor.
fn seed(provider: &Provider, platform: Platform) -> anyhow::Result<()> {
    testkit::seed_accounts(provider)?;
    testkit::seed_php(provider, provider::PhpVersion::V8_2, &["opcache", "intl"])?;
    provider.ensure_dir(
        &provider.sysconf(provider.apache_layout().vhosts_dir),
        0o755,
    )?;
    if platform == Platform::CloudLinux {
        testkit::seed_mysql_governor(provider)?;
    }
    let proc_dir = provider.sysconf("/proc");
    std::fs::create_dir_all(&proc_dir)?;
    std::fs::write(proc_dir.join("loadavg"), "0.10 0.20 0.30 1/100 4242\n")?;
    std::fs::write(
        proc_dir.join("meminfo"),
        "MemTotal: 2048000 kB\nMemAvailable: 1024000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
    )?;
    let append = |path: &str, text: &str| -> std::io::Result<()> {
        let file = provider.sysconf(path);
        let mut content = std::fs::read_to_string(&file)?;
        content.push_str(text);
        std::fs::write(&file, content)
    };
    append(
        "/etc/passwd",
        "alice:x:1001:1001::/home/alice:/bin/bash\n\
         bob:x:1002:27::/home/bob:/bin/bash\n\
         svc:x:999:999::/nonexistent:/usr/sbin/nologin\n",
    )?;
    append(
        "/etc/group",
        "sudo:x:27:alice,svc\nalice:x:1001:\nsvc:x:999:\n",
    )?;
    std::fs::write(
        provider.sysconf("/etc/login.defs"),
        "# shadow-utils\nUID_MIN\t\t\t 1000\nUID_MAX\t\t\t60000\n",
    )?;
    testkit::fleet::seed_example_fleet(provider)?;
    testkit::fleet::seed_module_programs(provider)?;
    Ok(())
}
