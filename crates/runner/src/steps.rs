//! The steps of a pass, and the one containment helper they all run through.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use clock::Clock;
use ops::Ctx;
use registry::{Family, FileSystem, Owner};
use store::Layout;

use crate::{LongLane, PassReport, RunnerConfig, apply};

/// How often, at most, the apply step admits what arrived since its pass's ingest step.
const INGEST_DURING_APPLY: Duration = Duration::from_millis(100);
/// How many inbox rows one ingest transaction takes.
const INGEST_BATCH: u32 = 1000;
/// How many events the feed keeps ([`RunnerConfig::events_kept`] on a node).
pub const EVENTS_KEPT: i64 = 100_000;
/// How many audit records state.db keeps, and for how long at most.
const AUDIT_KEPT: i64 = 100_000;
const AUDIT_RETENTION: Duration = Duration::from_secs(90 * 24 * 3600);
/// How often the steps that read the whole node run: the drift check (every tracked
/// resource's files), the orphan sweep (every resource row) and `quick_check` (every page of
/// state.db). A pass that runs every 15 s must cost the same on a node with 100,000
/// resources as on an empty one.
pub const PERIODIC_EVERY: Duration = Duration::from_secs(600);
/// The marker files, in the state directory, whose mtime says when each periodic step ran.
pub const CHECKED: &str = "checked";
const OBSERVED: &str = "observed";
const SWEPT: &str = "orphans-swept";
const BLOBS_COLLECTED: &str = "blobs-collected";
/// The certificate renewal check runs daily; a failed renewal is queued again the next day
/// (the certificate in place stays), within the 30 days before expiry.
/// How often the subvolumes tenants create under their homes are made to count against
/// their quotas (`ops::account::enclose_subvolumes`): with a pass at least every 15 s, a
/// subvolume waits at most a minute.
pub const SUBVOLUMES_EVERY: Duration = Duration::from_secs(45);
const SUBVOLUMES_ENCLOSED: &str = "subvolumes-enclosed";
pub const RENEWALS_EVERY: Duration = Duration::from_secs(24 * 3600);
pub const RENEWALS_CHECKED: &str = "certificates-checked";

/// Whether the periodic step tracked by `marker` is due. The marker's mtime is the last run,
/// so an idle pass commits nothing to know it.
pub fn due(layout: &Layout, clock: &dyn Clock, marker: &str) -> bool {
    due_every(layout, clock, marker, PERIODIC_EVERY)
}

/// Whether the periodic step tracked by `marker` last ran at least `period` ago (or never),
/// on the runner's clock.
pub fn due_every(layout: &Layout, clock: &dyn Clock, marker: &str, period: Duration) -> bool {
    let now = clock.system_time();
    std::fs::metadata(marker_path(layout, marker))
        .and_then(|m| m.modified())
        .map(|t| now.duration_since(t).unwrap_or_default() >= period)
        .unwrap_or(true)
}

/// Records that the periodic step tracked by `marker` ran now: the marker's mtime is the
/// runner's clock's time (the system's in production, as the kernel would have stamped it).
pub fn mark(layout: &Layout, clock: &dyn Clock, marker: &str) -> std::io::Result<()> {
    let file = std::fs::File::create(marker_path(layout, marker))?;
    file.set_modified(clock.system_time())
}

fn marker_path(layout: &Layout, marker: &str) -> std::path::PathBuf {
    layout.state_dir().join(marker)
}
/// How long an upload waits for the job that uses it.
const BLOB_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);
/// How old a part of a blob must be to be taken for abandoned.
const PART_RETENTION: Duration = Duration::from_secs(24 * 3600);

/// Why a step did not do its work, when the reason is the node's and not the step's own.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// The file system holding `0` is out of space: the step wrote nothing, or its write
    /// failed with `ENOSPC` / `SQLITE_FULL`. The message leads with `disk_full` and the file
    /// system's stable name, never a path.
    #[error("disk_full: the {0} file system is full")]
    DiskFull(FileSystem),
}

/// A step's error as recorded: one that ran out of space becomes [`StepError::DiskFull`],
/// naming the file system found full (the one with the least room when the error does not
/// say), followed by what failed.
fn describe(layout: Option<&Layout>, e: &anyhow::Error) -> String {
    if e.downcast_ref::<StepError>().is_some() {
        return format!("{e:#}");
    }
    let out_of_space = e.chain().any(store::disk::is_out_of_space);
    let Some(layout) = layout.filter(|_| out_of_space) else {
        return format!("{e:#}");
    };
    let named = e.chain().find_map(|cause| match cause.downcast_ref() {
        Some(store::StoreError::DiskFull { filesystem, .. }) => Some(*filesystem),
        _ => None,
    });
    let fullest = || {
        FileSystem::ALL
            .into_iter()
            .filter_map(|fs| {
                let available = store::disk::available(&store::disk::dir_of(layout, fs)).ok()?;
                Some((available, fs))
            })
            .min()
            .map(|(_, fs)| fs)
    };
    match named.or_else(fullest) {
        Some(fs) => format!("{}: {e:#}", StepError::DiskFull(fs)),
        None => format!("{e:#}"),
    }
}

/// Runs `step`, catching its error or panic: logged, recorded in state.db, and the pass moves
/// on. The only place a step's failure is handled.
pub fn contain(
    ctx: &mut Ctx,
    report: &mut PassReport,
    name: &'static str,
    step: impl FnOnce(&mut Ctx) -> anyhow::Result<()>,
) {
    let outcome = catch_unwind(AssertUnwindSafe(|| step(ctx)));
    let message = match outcome {
        Ok(Ok(())) => return,
        Ok(Err(e)) => describe(ctx.layout().ok(), &e),
        Err(panic) if crash::is_death(&*panic) => std::panic::resume_unwind(panic),
        Err(panic) => {
            let what =
                crash::panic_message(&*panic).unwrap_or_else(|| "a panic without a message".into());
            format!("panicked: {what}")
        }
    };
    tracing::error!(step = name, error = %message, "runner step failed; the pass goes on");
    report.failed_steps.push(name);
    if let Err(e) = ctx.state.record_step_failure(name, &message) {
        tracing::error!(step = name, error = %e, "could not record the step failure");
    }
}

/// The pass, in order. Each step is independent of the others' success.
pub fn run_all(config: &RunnerConfig, ctx: &mut Ctx, report: &mut PassReport, lane: &mut LongLane) {
    let mut full = Vec::new();
    contain(ctx, report, "disk", |ctx| {
        full = look_at_disks(config, ctx)?;
        Ok(())
    });
    // With no room for state.db's journal a job's completion cannot commit, and its handler
    // would fail for want of space rather than for its own reason: what was accepted waits in
    // the inbox until space is back.
    let state_full = full.contains(&FileSystem::State);
    let mut ingested = (0, 0);
    contain(ctx, report, "ingest", |ctx| {
        if state_full {
            return Err(StepError::DiskFull(FileSystem::State).into());
        }
        ingested = ingest(config, ctx)?;
        Ok(())
    });
    (report.admitted, report.rejected) = ingested;
    // Before apply, so a renewal it queues is applied in the same pass.
    contain(ctx, report, "renew_certificates", |ctx| {
        renew_certificates(config, ctx)
    });
    let mut applied = apply::Applied::default();
    contain(ctx, report, "apply", |ctx| {
        if state_full {
            return Err(StepError::DiskFull(FileSystem::State).into());
        }
        // What arrived since the ingest step is admitted between batches, at most every
        // INGEST_DURING_APPLY: the batches take accounts in turn, and a newcomer's request
        // joins them instead of waiting for the end of the pass.
        let mut last_ingest = config.clock.monotonic();
        applied = apply::apply_pending(
            ctx,
            declarations::registry(),
            ops::handlers(),
            &config.node_id,
            config.budget,
            |ctx| {
                let now = config.clock.monotonic();
                if now.saturating_sub(last_ingest) < INGEST_DURING_APPLY {
                    return;
                }
                last_ingest = now;
                match ingest(config, ctx) {
                    Ok((admitted, rejected)) => {
                        ingested.0 += admitted;
                        ingested.1 += rejected;
                    }
                    // The next pass's ingest step tries again, and records the failure.
                    Err(e) => {
                        tracing::warn!(error = %format!("{e:#}"), "ingesting between batches")
                    }
                }
            },
        )?;
        Ok(())
    });
    report.applied = applied.jobs;
    report.stopped_at_budget = applied.stopped_at_budget;
    (report.admitted, report.rejected) = ingested;
    // After the main lane, so a long job whose account's earlier jobs it just applied starts
    // in the same pass.
    contain(ctx, report, "long_lane", |ctx| {
        lane.start_if_due(config, &mut ctx.state)?;
        Ok(())
    });
    contain(ctx, report, "enclose_subvolumes", |ctx| {
        if !due_every(
            &config.layout,
            &*config.clock,
            SUBVOLUMES_ENCLOSED,
            SUBVOLUMES_EVERY,
        ) || !ops::account::has_disk_quota(ctx, None)?
        {
            return Ok(());
        }
        mark(&config.layout, &*config.clock, SUBVOLUMES_ENCLOSED)?;
        ops::account::enclose_subvolumes(ctx)?;
        Ok(())
    });
    contain(ctx, report, "purge_orphans", |ctx| {
        if !due(&config.layout, &*config.clock, SWEPT) {
            return Ok(());
        }
        mark(&config.layout, &*config.clock, SWEPT)?;
        purge_orphans(ctx)
    });
    contain(ctx, report, "observe", |ctx| observe(config, ctx));
    contain(ctx, report, "blob_gc", |_| blob_gc(config));
    contain(ctx, report, "trim_events", |ctx| {
        ctx.state.trim_events(config.events_kept)?;
        Ok(())
    });
    contain(ctx, report, "audit", record_invocations);
    contain(ctx, report, "trim_audit", |ctx| {
        ctx.state
            .trim_audit(AUDIT_KEPT, AUDIT_RETENTION.as_millis() as i64)?;
        Ok(())
    });
}

/// Looks at the space left on each of the node's file systems (one `statvfs` each) and records
/// each change on the events feed (`StateDb::record_disk`: `disk_full` once, `disk_ok` once).
/// Returns the file systems full now, whether or not the change could be recorded.
fn look_at_disks(config: &RunnerConfig, ctx: &mut Ctx) -> anyhow::Result<Vec<FileSystem>> {
    let mut looked = Vec::new();
    for fs in FileSystem::ALL {
        looked.push((
            fs,
            store::disk::available(&store::disk::dir_of(&config.layout, fs))?,
        ));
    }
    let recorded: Vec<FileSystem> = ctx
        .state
        .full_filesystems()?
        .into_iter()
        .map(|f| f.filesystem)
        .collect();
    let full: Vec<FileSystem> = looked
        .iter()
        .filter(|(fs, available)| store::disk::is_full(*fs, *available, recorded.contains(fs)))
        .map(|(fs, _)| *fs)
        .collect();
    match ctx.state.record_disk(&looked) {
        Ok(changes) => {
            for fs in &changes.full {
                tracing::error!(filesystem = %fs, "a file system of the node is full");
            }
            for fs in &changes.ok {
                tracing::warn!(filesystem = %fs, "a file system of the node has space again");
            }
            Ok(full)
        }
        // The file systems are known full all the same: the pass goes on without writing.
        Err(e) if !full.is_empty() => {
            tracing::error!(error = %e, "could not record the full file systems");
            Ok(full)
        }
        Err(e) => Err(e.into()),
    }
}

/// Commits the invocations no job claimed (a purge sweep's, a step's) to the audit trail.
/// Last but for the trim, so whatever a step ran is recorded in the pass that ran it; an
/// idle pass has nothing here and commits nothing.
fn record_invocations(ctx: &mut Ctx) -> anyhow::Result<()> {
    let records = ctx.take_invocations();
    ctx.state.append_audit(&records)?;
    Ok(())
}

/// Admits what the inbox holds beyond the watermark, in batches.
/// Returns how many rows were admitted and rejected.
fn ingest(config: &RunnerConfig, ctx: &mut Ctx) -> anyhow::Result<(usize, usize)> {
    let path = config.layout.inbox_db();
    let (mut admitted, mut rejected) = (0, 0);
    loop {
        let after = ctx.state.watermark()?;
        let rows = inbox::read_rows(&path, after, INGEST_BATCH)?;
        if rows.is_empty() {
            return Ok((admitted, rejected));
        }
        let got = rows.len();
        let done = ctx
            .state
            .ingest(declarations::registry(), &config.node_id, &rows)?;
        admitted += done.admitted;
        rejected += done.rejected;
        if done.admitted + done.rejected > 0 {
            tracing::info!(
                admitted = done.admitted,
                rejected = done.rejected,
                superseded = done.superseded,
                "ingested"
            );
        }
        if got < INGEST_BATCH as usize {
            return Ok((admitted, rejected));
        }
    }
}

/// A resource whose account no longer exists is an orphan (a node bug or a hand edit): its
/// family's purge hook runs for that owner, so nothing is left behind. Runs at most every
/// [`PERIODIC_EVERY`]: `remove_account` purges every family itself, so this is a safety net.
fn purge_orphans(ctx: &mut Ctx) -> anyhow::Result<()> {
    let orphans = ctx.state.orphan_owners(ops::account::Account::NAME)?;
    for (family, owner) in orphans {
        let Owner::Tenant(account) = owner else {
            continue;
        };
        let Some(entry) = ops::handlers().family(&family) else {
            anyhow::bail!("state.db tracks resources of an unknown family {family:?}");
        };
        tracing::warn!(family, %account, "purging resources whose account is gone");
        (entry.purge)(ctx, &account)
            .map_err(|e| anyhow::anyhow!("purge {family} of {account}: {e}"))?;
        let (_, services) = ctx.take_job_effects();
        if !services.is_empty() && !ctx.finish_batch().is_empty() {
            anyhow::bail!("a reload after purging {family} of {account} failed");
        }
    }
    Ok(())
}

/// Periodic drift check (`ops::drift::detect`): what every family declares it derives
/// (`registry::Derive`) that the OS no longer shows as derived (a user gone from passwd, a
/// vhost, pool, crontab or mail table missing or edited, a MariaDB grant changed). Each new
/// finding becomes one `drift` event on the events feed and each one gone a `drift_resolved`
/// event (`StateDb::record_drift`); nothing is repaired here (`rebuild_account` repairs). A
/// family the check could not look at (MariaDB down) keeps what was recorded of it, and the
/// step fails naming it, after the others' findings are recorded. Runs at most every
/// [`PERIODIC_EVERY`], tracked by the mtime of a marker file, and a check that finds what the
/// last one found commits nothing, so an idle pass stays read-only.
fn observe(config: &RunnerConfig, ctx: &mut Ctx) -> anyhow::Result<()> {
    if !due(&config.layout, &*config.clock, OBSERVED) {
        return Ok(());
    }
    mark(&config.layout, &*config.clock, OBSERVED)?;
    let check = ops::drift::detect(ctx);
    for d in &check.found {
        tracing::warn!(family = %d.family, resource_id = %d.resource_id, aspect = d.aspect.as_str(), "{}", d.message);
    }
    let unchecked: Vec<&str> = check.unchecked.iter().map(|(family, _)| *family).collect();
    let (new, resolved) = ctx.state.record_drift(&check.found, &unchecked)?;
    if new + resolved > 0 {
        tracing::warn!(new, resolved, "drift recorded on the events feed");
    }
    if !check.unchecked.is_empty() {
        let why: Vec<String> = check
            .unchecked
            .iter()
            .map(|(family, e)| format!("{family}: {}", e.message))
            .collect();
        anyhow::bail!("drift check: could not look at {}", why.join("; "));
    }
    Ok(())
}

/// Daily: queues a `renew_certificate` job for each ACME certificate within 30 days of expiry
/// (`ops::certificate::renewal_requests`), admitted like a request (`StateDb::admit_local`),
/// so each renewal is a job on the events feed, applied by the next apply step. A failed
/// renewal is a failed job and leaves the certificate in place; the next day queues it again.
fn renew_certificates(config: &RunnerConfig, ctx: &mut Ctx) -> anyhow::Result<()> {
    if !due_every(
        &config.layout,
        &*config.clock,
        RENEWALS_CHECKED,
        RENEWALS_EVERY,
    ) {
        return Ok(());
    }
    mark(&config.layout, &*config.clock, RENEWALS_CHECKED)?;
    let day = config.clock.now_secs().div_euclid(86_400);
    let requests = ops::certificate::renewal_requests(ctx, day)
        .map_err(|e| anyhow::anyhow!("list certificates due for renewal: {e}"))?;
    for body in requests {
        let queued = ctx.state.admit_local(
            declarations::registry(),
            &config.node_id,
            body.to_string().as_bytes(),
        )?;
        if queued {
            tracing::info!(request_id = %body["request_id"], certificate = %body["resource"]["id"], "certificate renewal queued");
        }
    }
    Ok(())
}

/// Removes uploads nobody used within the retention, and parts of interrupted writes. A
/// produced blob is never collected by age: it goes with the resource that records it.
fn blob_gc(config: &RunnerConfig) -> anyhow::Result<()> {
    // Retentions are a day and a week: listing both directories every 15 s would buy nothing.
    if !due(&config.layout, &*config.clock, BLOBS_COLLECTED) {
        return Ok(());
    }
    mark(&config.layout, &*config.clock, BLOBS_COLLECTED)?;
    let now = config.clock.system_time();
    store::blobs::collect_incoming(&config.layout, BLOB_RETENTION, now)?;
    store::blobs::collect_outgoing_parts(&config.layout, PART_RETENTION, now)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_periodic_step_is_due_until_it_ran_then_not_until_its_period_passed() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path());
        layout.prepare_root_side(None).unwrap();
        let clock = testkit::ManualClock::starting_at(1_700_000_000_000);
        assert!(due(&layout, &*clock, CHECKED), "never ran: due");
        mark(&layout, &*clock, CHECKED).unwrap();
        assert!(!due(&layout, &*clock, CHECKED), "just ran: not due");
        clock.advance(PERIODIC_EVERY - Duration::from_secs(1));
        assert!(
            !due(&layout, &*clock, CHECKED),
            "ran less than a period ago: not due"
        );
        clock.advance(Duration::from_secs(1));
        assert!(
            due(&layout, &*clock, CHECKED),
            "ran a period ago: due again"
        );
        assert!(due(&layout, &*clock, SWEPT), "each step has its own marker");
        // A marker the kernel stamped is judged on the system clock's scale.
        std::fs::write(layout.state_dir().join(SWEPT), b"").unwrap();
        assert!(!due(&layout, &clock::SystemClock, SWEPT));
    }
}
