//! Latency summaries.

use std::time::Duration;

#[derive(Clone, Copy, Debug, Default)]
pub struct Summary {
    pub n: usize,
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
}

/// Nearest-rank percentiles.
pub fn summarize(mut samples: Vec<Duration>) -> Summary {
    if samples.is_empty() {
        return Summary::default();
    }
    samples.sort();
    let rank = |p: f64| {
        let r = (p * samples.len() as f64).ceil() as usize;
        samples[r.clamp(1, samples.len()) - 1]
    };
    Summary {
        n: samples.len(),
        p50: rank(0.50),
        p99: rank(0.99),
        max: samples[samples.len() - 1],
    }
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms (n = {})",
            ms(self.p50),
            ms(self.p99),
            ms(self.max),
            self.n
        )
    }
}
