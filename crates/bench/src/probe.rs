//! `layerone-bench probe HOST PATH SECONDS`: a visitor of one site, one request after another
//! for SECONDS, each on a new connection to this machine's port 80 (curl, with `Host: HOST`),
//! as a neighbour's latency is seen while another tenant misbehaves (scripts/qualify.py runs
//! it on the real node, idle and during each attack of one tenant on its limits). Prints one
//! JSON line: the requests, how many failed (a transfer error, a timeout, or a status other
//! than 200), and the latency's p50, p99 and maximum as curl timed each transfer. Printed,
//! never asserted here; the caller decides what a failure means.

use std::time::{Duration, Instant};

use anyhow::bail;

use crate::child;
use crate::stats::{ms, summarize};

/// Requests per curl process: each one is still a connection of its own.
const BATCH: usize = 10;
/// A request that takes longer has failed.
const REQUEST_TIMEOUT_S: &str = "10";

pub fn run(host: &str, path: &str, seconds: u64) -> anyhow::Result<()> {
    if !path.starts_with('/') || host.is_empty() || host.contains(['/', ' ', ':']) {
        bail!("probe HOST PATH SECONDS: HOST is a name, PATH starts with /");
    }
    let url = format!("http://{host}{path}");
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let (mut samples, mut failures, mut statuses) = (Vec::new(), 0usize, Vec::new());
    while Instant::now() < deadline {
        let mut args: Vec<String> = [
            "--silent",
            "--max-time",
            REQUEST_TIMEOUT_S,
            "--resolve",
            &format!("{host}:80:127.0.0.1"),
            "--header",
            "Connection: close",
            "--write-out",
            "%{http_code} %{time_total}\\n",
        ]
        .map(String::from)
        .to_vec();
        for _ in 0..BATCH {
            args.extend(["--output".into(), "/dev/null".into(), url.clone()]);
        }
        let stdout = child::stdout_of("curl", &args)?;
        let text = String::from_utf8_lossy(&stdout);
        let mut seen = 0;
        for line in text.lines() {
            seen += 1;
            let (code, time) = line.split_once(' ').unwrap_or((line, ""));
            match (code, time.parse::<f64>()) {
                ("200", Ok(t)) => samples.push(Duration::from_secs_f64(t)),
                _ => {
                    failures += 1;
                    if statuses.len() < 10 {
                        statuses.push(code.to_owned());
                    }
                }
            }
        }
        // A curl that stopped early (killed, or no line written) failed the rest.
        failures += BATCH.saturating_sub(seen);
    }
    let summary = summarize(samples);
    let requests = summary.n + failures;
    println!(
        "{}",
        serde_json::json!({
            "url": url,
            "seconds": seconds,
            "requests": requests,
            "failures": failures,
            "failed_statuses": statuses,
            "p50_ms": round(ms(summary.p50)),
            "p99_ms": round(ms(summary.p99)),
            "max_ms": round(ms(summary.max)),
        })
    );
    Ok(())
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
