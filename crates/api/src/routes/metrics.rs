//! `GET /v1/metrics`: the node in Prometheus' text exposition format (version 0.0.4), for the
//! monitoring an operator already runs. Behind the API key on the HTTPS door, like every
//! endpoint but health; on the local socket for whoever that door admits (a scraper on the
//! machine, no key on disk). Everything is read when asked, nothing is kept: state.db through
//! the read path every endpoint uses (one short read transaction, never a write), the inbox
//! through the API's own reader, the runner's pass durations from its lock file, the space
//! left from one `statvfs` per file system.

use std::fmt::Write as _;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use registry::{FileSystem, Lane, Registry};
use store::metrics::{Histogram, StateMetrics};

use super::{App, AppState, blocking};
use crate::error::ApiError;

/// The media type of the text exposition format.
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

pub(crate) async fn metrics(State(app): AppState) -> Result<Response, ApiError> {
    let text = blocking(&app, |app| {
        let state = app.admission.reader().metrics()?;
        Ok(render(app, &state, now_ms()))
    })
    .await?;
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = StatusCode::OK;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE));
    Ok(response)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The exposition text, one family after another.
struct Text(String);

impl Text {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.0, "# HELP {name} {help}\n# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl std::fmt::Display) {
        self.0.push_str(name);
        if !labels.is_empty() {
            self.0.push('{');
            for (i, (label, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.0.push(',');
                }
                let _ = write!(self.0, "{label}=\"{}\"", escape(v));
            }
            self.0.push('}');
        }
        let _ = writeln!(self.0, " {value}");
    }

    /// A histogram's buckets (in seconds), `+Inf`, sum and count.
    fn histogram(&mut self, name: &str, labels: &[(&str, &str)], h: &Histogram) {
        let bucket = format!("{name}_bucket");
        for (bound, n) in h.bounds_ms.iter().zip(&h.cumulative) {
            let le = seconds(*bound).to_string();
            let mut with = labels.to_vec();
            with.push(("le", &le));
            self.sample(&bucket, &with, n);
        }
        let mut with = labels.to_vec();
        with.push(("le", "+Inf"));
        self.sample(&bucket, &with, h.count);
        self.sample(&format!("{name}_sum"), labels, seconds(h.sum_ms));
        self.sample(&format!("{name}_count"), labels, h.count);
    }
}

fn seconds(ms: i64) -> f64 {
    ms as f64 / 1000.0
}

/// A label value as the format wants it: backslash, double quote and newline escaped.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// One lane's share of the queue.
#[derive(Debug, PartialEq, Eq)]
struct LaneQueue {
    lane: Lane,
    queued: u64,
    running: u64,
    /// When its oldest queued job was queued (ms), if one is.
    oldest_queued_at: Option<i64>,
}

/// The pending jobs (`(operation, state, jobs, earliest queued_at)`) by lane: a job is in the
/// lane its operation declares, and one whose operation this build does not know is in the
/// main lane, as the runner's claims put it.
fn lanes(registry: &Registry, pending: &[(String, String, u64, i64)]) -> [LaneQueue; 2] {
    let mut queue = [Lane::Main, Lane::Long].map(|lane| LaneQueue {
        lane,
        queued: 0,
        running: 0,
        oldest_queued_at: None,
    });
    for (operation, job_state, n, queued_at) in pending {
        let lane = registry
            .operation(operation)
            .map_or(Lane::Main, |op| op.lane());
        let q = &mut queue[usize::from(lane == Lane::Long)];
        match job_state.as_str() {
            "queued" => {
                q.queued += n;
                q.oldest_queued_at = Some(
                    q.oldest_queued_at
                        .map_or(*queued_at, |at| at.min(*queued_at)),
                );
            }
            _ => q.running += n,
        }
    }
    queue
}

fn render(app: &App, state: &StateMetrics, now_ms: i64) -> String {
    let mut t = Text(String::new());

    t.family(
        "layerone_jobs",
        "gauge",
        "Jobs in state.db by operation and state (queued, running, succeeded, failed, superseded).",
    );
    for (operation, job_state, n) in &state.jobs {
        t.sample(
            "layerone_jobs",
            &[("operation", operation), ("state", job_state)],
            n,
        );
    }

    t.family(
        "layerone_queue_depth",
        "gauge",
        "Jobs admitted and not finished, by lane (main, long: the one the job's operation declares) and state (queued, running).",
    );
    let queue = lanes(app.admission.registry(), &state.pending);
    for q in &queue {
        for (job_state, n) in [("queued", q.queued), ("running", q.running)] {
            t.sample(
                "layerone_queue_depth",
                &[("lane", q.lane.as_str()), ("state", job_state)],
                n,
            );
        }
    }
    t.family(
        "layerone_queue_oldest_queued_seconds",
        "gauge",
        "How long the oldest job queued in each lane has waited since it was queued (0 when none).",
    );
    for q in &queue {
        let age = q.oldest_queued_at.map_or(0, |at| (now_ms - at).max(0));
        t.sample(
            "layerone_queue_oldest_queued_seconds",
            &[("lane", q.lane.as_str())],
            seconds(age),
        );
    }

    t.family(
        "layerone_job_duration_seconds",
        "histogram",
        "How long each finished job's last run took, from its claim to its completion.",
    );
    for (operation, h) in &state.job_durations {
        t.histogram(
            "layerone_job_duration_seconds",
            &[("operation", operation)],
            h,
        );
    }

    t.family(
        "layerone_runner_pass_duration_seconds",
        "histogram",
        "How long the runner's passes took.",
    );
    match store::metrics::pass_durations(&app.layout) {
        Ok(h) => t.histogram("layerone_runner_pass_duration_seconds", &[], &h),
        Err(e) => tracing::warn!(error = %e, "the runner's pass durations are unreadable"),
    }

    t.family(
        "layerone_runner_step_failures_total",
        "counter",
        "Runner steps that failed (each recorded in state.db and logged; the pass goes on).",
    );
    t.sample(
        "layerone_runner_step_failures_total",
        &[],
        state.step_failures_total,
    );

    t.family(
        "layerone_admission_refusals_total",
        "counter",
        "Requests admission refused since the API started, by code (queue_full, disk_full, \
         invalid_field...): nothing of them was stored.",
    );
    for (code, n) in app.admission.refusals() {
        t.sample("layerone_admission_refusals_total", &[("code", &code)], n);
    }

    t.family(
        "layerone_drift_findings",
        "gauge",
        "Drift findings open now, by family and aspect.",
    );
    for (family, aspect, n) in &state.drift {
        t.sample(
            "layerone_drift_findings",
            &[("family", family), ("aspect", aspect)],
            n,
        );
    }

    // A broken inbox reader leaves these out rather than the whole answer.
    match app.admission.inbox().waiting(state.watermark) {
        Ok((waiting, oldest)) => {
            t.family(
                "layerone_inbox_waiting_requests",
                "gauge",
                "Requests received in the inbox that root has not admitted yet.",
            );
            t.sample("layerone_inbox_waiting_requests", &[], waiting);
            t.family(
                "layerone_inbox_oldest_waiting_seconds",
                "gauge",
                "How long the oldest request root has not admitted has waited (0 when none).",
            );
            let age = oldest.map_or(0, |at| (now_ms - at).max(0));
            t.sample("layerone_inbox_oldest_waiting_seconds", &[], seconds(age));
        }
        Err(e) => tracing::warn!(error = %e, "the inbox is unreadable for the metrics"),
    }

    t.family(
        "layerone_disk_full",
        "gauge",
        "1 while the runner has recorded the file system full (a disk_full event), else 0.",
    );
    for fs in FileSystem::ALL {
        let full = state.full.iter().any(|f| f.filesystem == fs);
        t.sample(
            "layerone_disk_full",
            &[("filesystem", fs.as_str())],
            u8::from(full),
        );
    }
    t.family(
        "layerone_disk_available_bytes",
        "gauge",
        "Bytes an unprivileged writer can still use on each of the node's file systems.",
    );
    for fs in FileSystem::ALL {
        if let Ok(available) = store::disk::available(&store::disk::dir_of(&app.layout, fs)) {
            t.sample(
                "layerone_disk_available_bytes",
                &[("filesystem", fs.as_str())],
                available,
            );
        }
    }

    if let Some(not_after) = app.tls_not_after {
        t.family(
            "layerone_tls_certificate_expiry_timestamp_seconds",
            "gauge",
            "When the certificate this API serves stops being valid (Unix time).",
        );
        t.sample(
            "layerone_tls_certificate_expiry_timestamp_seconds",
            &[],
            not_after,
        );
    }
    t.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each operation's jobs count in the lane it declares, an operation the registry does not
    /// know in the main lane; the oldest queued time is the earliest of the lane's queued jobs.
    #[test]
    fn pending_jobs_are_counted_in_their_operations_lane() {
        let registry = declarations::registry();
        let row = |op: &str, state: &str, n: u64, at: i64| (op.to_owned(), state.to_owned(), n, at);
        let [main, long] = lanes(
            registry,
            &[
                row("ensure_account", "queued", 2, 5_000),
                row("ensure_ssh_key", "queued", 1, 4_000),
                row("ensure_ssh_key", "running", 1, 3_000),
                row("observe_account_usage", "queued", 3, 7_000),
                row("create_account_backup", "running", 1, 1_000),
                row("gone_in_this_build", "queued", 1, 6_000),
            ],
        );
        assert_eq!(
            main,
            LaneQueue {
                lane: Lane::Main,
                queued: 4,
                running: 1,
                oldest_queued_at: Some(4_000)
            }
        );
        assert_eq!(
            long,
            LaneQueue {
                lane: Lane::Long,
                queued: 3,
                running: 1,
                oldest_queued_at: Some(7_000)
            }
        );
        let [idle, _] = lanes(registry, &[]);
        assert_eq!(
            (idle.queued, idle.running, idle.oldest_queued_at),
            (0, 0, None)
        );
    }

    #[test]
    fn label_values_are_escaped_as_the_format_wants() {
        assert_eq!(escape(r#"a\b"c"#), r#"a\\b\"c"#);
        assert_eq!(escape("x\ny"), r"x\ny");
    }

    #[test]
    fn a_histogram_is_cumulative_buckets_then_inf_sum_and_count() {
        let mut h = Histogram::new(&[10, 100]);
        h.observe(5);
        h.observe(50);
        h.observe(500);
        let mut t = Text(String::new());
        t.histogram("x_seconds", &[("operation", "op")], &h);
        assert_eq!(
            t.0,
            "x_seconds_bucket{operation=\"op\",le=\"0.01\"} 1\n\
             x_seconds_bucket{operation=\"op\",le=\"0.1\"} 2\n\
             x_seconds_bucket{operation=\"op\",le=\"+Inf\"} 3\n\
             x_seconds_sum{operation=\"op\"} 0.555\n\
             x_seconds_count{operation=\"op\"} 3\n"
        );
    }
}
