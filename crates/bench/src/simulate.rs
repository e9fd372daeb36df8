//! `layerone-bench simulate`: the deterministic simulation (`crates/simulation`) at scale, or
//! one history replayed from its seed.
//!
//! `--histories N` (10,000 unless told) and `--minutes M` (no limit unless told) both bound
//! the run; `--first S` is its first seed (1). `--seed S` runs the one history of seed `S`
//! and prints its trace hash, which the same seed always gives: what a failure says to run.
//! The figures are printed, never asserted; a history that breaks an invariant stops the run
//! with its seed.

use std::time::Duration;

/// Runs the simulation as `args` (what follows `simulate`) say.
pub fn run(args: &[&str], dir: &std::path::Path) -> anyhow::Result<()> {
    let mut histories: u64 = 10_000;
    let mut minutes: Option<f64> = None;
    let mut first: u64 = 1;
    let mut seed: Option<u64> = None;
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let value = rest
            .next()
            .ok_or_else(|| anyhow::anyhow!("{flag} wants a value"))?;
        match *flag {
            "--histories" => histories = value.parse()?,
            "--minutes" => minutes = Some(value.parse()?),
            "--first" => first = value.parse()?,
            "--seed" => seed = Some(value.parse()?),
            other => anyhow::bail!(
                "unknown flag {other} (simulate takes --histories, --minutes, --first, --seed)"
            ),
        }
    }
    if let Some(seed) = seed {
        let outcome = simulation::run(seed, dir).map_err(|f| anyhow::anyhow!("{f}"))?;
        println!(
            "seed {seed} ({:?}): trace {}: {} requests submitted ({} accepted), {} passes, \
             {} crashes, {} unsynced sectors lost, {} derived files edited",
            outcome.platform,
            outcome.trace_hash,
            outcome.submitted,
            outcome.accepted,
            outcome.passes,
            outcome.crashes,
            outcome.sectors_lost,
            outcome.drift_edits
        );
        return Ok(());
    }
    let budget = minutes.map_or(Duration::MAX, |m| Duration::from_secs_f64(m * 60.0));
    let summary = simulation::run_many(first, histories, budget, dir, |outcome| {
        if (outcome.seed - first + 1).is_multiple_of(1000) {
            eprintln!("... {} histories", outcome.seed - first + 1);
        }
    });
    println!("{summary}");
    match summary.failure {
        Some(failure) => anyhow::bail!("{failure}"),
        None => Ok(()),
    }
}
