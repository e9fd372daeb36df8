//! The claim-and-apply step: claim jobs in admission order, apply each through its
//! operation, and complete them in batches so that a shared service touched by many jobs is
//! reloaded once.
//!
//! A job that changed a shared service's configuration waits for the end of its batch: it is
//! reported succeeded only after the service took the change. If the runner dies before that,
//! the job is still `running` and the next pass runs it again (handlers are idempotent); until
//! its batch is completed its row stays in the handlers' view (`Ctx::hold_for_batch`), so the
//! files later jobs derive include it. A job that touched no shared service is completed at
//! once. A batch takes at most [`MAX_BATCH`] jobs, accounts in turn, each by its oldest job
//! (`StateDb::claim_main`): an account has at most one job in a batch, so every job sees its
//! account's earlier changes recorded, and one account's thousand queued jobs delay another
//! account's next one by at most a batch.
//!
//! Before its handler, every job of either lane is held to the node's assignment
//! (`ops::assignment::admits`): a module the fleet did not assign fails
//! `module_not_assigned`, one assigned but not ready here `module_unavailable`.
//!
//! This is the main lane. Long work (operations declared [`registry::Lane::Long`]) is not
//! claimed here but by the long lane (`long_lane.rs`), and an account with long work pending
//! has its later jobs held back until that work is done: per account, jobs still run in
//! admission order; across accounts, nothing waits behind another account's long job.

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use ops::{Ctx, Service};
use registry::{AuditDetail, Handlers, Hex32, Lane, OpError, Owner, Registry};
use state::LongOperations;
use state::{ClaimedJob, Outcome, ResourceChange};

/// The programs one job ran, for the audit trail.
type Invocations = Vec<(i64, AuditDetail)>;

/// The most jobs applied before their batch is completed.
const MAX_BATCH: usize = 64;

/// What one [`apply_pending`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// How many jobs ran.
    pub jobs: usize,
    /// It ran jobs and stopped at its budget: more may be claimable now, and the next pass
    /// should follow at once rather than wait for a wake.
    pub stopped_at_budget: bool,
}

/// Applies queued jobs until none is claimable or `budget` has passed on the context's clock
/// (`Ctx::clock`, the runner's). Returns how many ran, and whether it stopped at the budget.
/// `between_batches` runs after each completed batch, when no job of the main lane is
/// running: the pass admits there what arrived since it began, so a request of another
/// account waits for one batch, not for the whole backlog the pass found.
pub fn apply_pending(
    ctx: &mut Ctx,
    registry: &Registry,
    handlers: &Handlers<Ctx>,
    node_id: &Hex32,
    budget: Duration,
    mut between_batches: impl FnMut(&mut Ctx),
) -> anyhow::Result<Applied> {
    let deadline = ctx.clock().monotonic() + budget;
    // Whether the last claim found nothing: then nothing is left, whatever the clock says.
    let mut drained = false;
    let done = |ctx: &Ctx, jobs: usize, drained: bool| Applied {
        jobs,
        stopped_at_budget: jobs > 0 && !drained && ctx.clock().monotonic() >= deadline,
    };
    let long = LongOperations::of(registry);
    // Under the pass lock no main-lane job can be running: any found is a dead runner's.
    ctx.state.recover_running(Lane::Main, &long)?;
    let mut applied = 0;
    loop {
        let mut batch: Vec<(ClaimedJob, Outcome, BTreeSet<Service>, Invocations)> = Vec::new();
        // The accounts this batch took a job of: each waits for the next batch.
        let mut served: Vec<String> = Vec::new();
        while served.len() < MAX_BATCH && ctx.clock().monotonic() < deadline {
            // Accounts in turn, each by its oldest job. None when every account with a job
            // to take now has had one in this batch.
            let Some(job) = ctx.state.claim_main(&long, &served)? else {
                drained = true;
                break;
            };
            served.push(job.owner.as_str().to_owned());
            let (outcome, services) = apply_one(ctx, registry, handlers, node_id, &job);
            // The programs this job ran are recorded with its completion.
            let invocations = ctx.take_invocations();
            if services.is_empty() {
                ctx.state.complete_audited(&job, &outcome, &invocations)?;
                applied += 1;
            } else {
                // Completed with its batch: until then, later jobs see its row.
                ctx.hold_for_batch(&job, &outcome.resource);
                batch.push((job, outcome, services, invocations));
            }
        }
        if served.is_empty() {
            return Ok(done(ctx, applied, drained));
        }
        let failed = ctx.finish_batch();
        // The reloads belong to the batch, not to one job: recorded on their own.
        ctx.state.append_audit(&ctx.take_invocations())?;
        for (job, outcome, services, invocations) in batch {
            let outcome = after_reloads(outcome, &services, &failed);
            ctx.state.complete_audited(&job, &outcome, &invocations)?;
            applied += 1;
        }
        if ctx.clock().monotonic() >= deadline {
            return Ok(done(ctx, applied, drained));
        }
        between_batches(ctx);
    }
}

/// A job's outcome once its batch's reloads ran: a success whose change a service did not
/// take (`failed`, reverted) is a failure.
pub(crate) fn after_reloads(
    outcome: Outcome,
    services: &BTreeSet<Service>,
    failed: &BTreeSet<Service>,
) -> Outcome {
    match services.intersection(failed).next() {
        Some(service) if outcome.result.is_ok() => Outcome {
            result: Err(OpError::retryable(
                "reload_failed",
                format!(
                    "{} did not take the change and it was reverted",
                    service.name()
                ),
            )),
            resource: ResourceChange::Keep,
        },
        _ => outcome,
    }
}

/// Applies one claimed job. Whatever happens (a failure, a panic, an invalid result) becomes
/// the job's outcome: a failed operation never disables anything else.
pub(crate) fn apply_one(
    ctx: &mut Ctx,
    registry: &Registry,
    handlers: &Handlers<Ctx>,
    node_id: &Hex32,
    job: &ClaimedJob,
) -> (Outcome, BTreeSet<Service>) {
    ctx.begin_job(job);
    let result = checked_apply(ctx, registry, handlers, node_id, job);
    let (resource, services) = ctx.take_job_effects();
    match result {
        Ok(value) => (
            Outcome {
                result: Ok(value),
                resource,
            },
            services,
        ),
        Err(error) => {
            tracing::warn!(request_id = job.request_id, operation = job.operation, code = %error.code, message = error.message, "job failed");
            (
                Outcome {
                    result: Err(error),
                    resource: ResourceChange::Keep,
                },
                services,
            )
        }
    }
}

fn checked_apply(
    ctx: &mut Ctx,
    registry: &Registry,
    handlers: &Handlers<Ctx>,
    node_id: &Hex32,
    job: &ClaimedJob,
) -> Result<serde_json::Value, OpError> {
    // Root wrote this body itself, but reads it back from a file: check it again.
    let validated = registry
        .validate(job.body.as_bytes(), node_id)
        .map_err(|e| {
            OpError::permanent(
                "state_corrupt",
                format!("the admitted body no longer validates: {e}"),
            )
        })?;
    if validated.operation != job.operation
        || validated.family != job.family
        || validated.resource_id != job.resource_id
        || validated.owner != job.owner
    {
        return Err(OpError::permanent(
            "state_corrupt",
            "the admitted body does not match its job row",
        ));
    }
    let existing = ctx
        .state
        .resource(&job.family, &job.resource_id)
        .map_err(|e| OpError::retryable("state_unavailable", e.to_string()))?;
    if let Some(row) = existing
        && row.owner != job.owner
    {
        return Err(OpError::permanent(
            "resource_owner_mismatch",
            format!(
                "{} {} belongs to another owner",
                job.family, job.resource_id
            ),
        ));
    }
    let op = registry
        .operation(&job.operation)
        .ok_or_else(|| OpError::permanent("state_corrupt", "unknown operation"))?;
    // A node its fleet assigned modules runs only those, and of those only the ones that can
    // run here: decided here, for every family and both lanes, before any handler.
    ops::assignment::admits(ctx, op.module())?;
    // A subvolume the tenant created in its home since the last scan counts against its
    // quota before its job runs (a usage read, a backup, a removal sees it counted). The
    // periodic scan retries what fails here; the job runs either way.
    if let Owner::Tenant(account) = &job.owner
        && ops::account::has_disk_quota(ctx, Some(account))?
        && let Err(e) = ops::account::enclose_subvolumes(ctx)
    {
        tracing::warn!(request_id = job.request_id, error = %e.message, "could not scan the tenant's subvolumes");
    }
    let handler = handlers
        .operation(&job.operation)
        .ok_or_else(|| OpError::permanent("state_corrupt", "no handler for the operation"))?;
    let resource = registry::stored_resource(&job.body)
        .ok_or_else(|| OpError::permanent("state_corrupt", "the admitted body has no resource"))?;
    crash::point(crash::runner::APPLY_BEFORE_HANDLER);
    let applied = catch_unwind(AssertUnwindSafe(|| handler.apply(ctx, resource))).unwrap_or_else(
        |panic| {
            if crash::is_death(&*panic) {
                std::panic::resume_unwind(panic);
            }
            let what = crash::panic_message(&*panic).unwrap_or_default();
            tracing::error!(
                request_id = job.request_id,
                operation = job.operation,
                panic = what,
                "handler panicked: a node bug"
            );
            Err(OpError::permanent(
                "handler_panicked",
                "the handler failed unexpectedly; this is a bug in the node",
            ))
        },
    )?;
    if let Err(reason) = op.validate_result(&applied) {
        tracing::error!(
            request_id = job.request_id,
            operation = job.operation,
            reason,
            "handler returned an invalid result: a node bug"
        );
        return Err(OpError::permanent(
            "invalid_result",
            format!("the result does not match its schema: {reason}"),
        ));
    }
    Ok(applied)
}
