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
use registry::FileSystem;
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
