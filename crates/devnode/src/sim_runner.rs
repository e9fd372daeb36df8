//! The simulated runner's command line and start: the packaged runner's command line
//! (`runner::binary::RunnerArgs`) and `--sim-real`, the programs to start for real anyway.

use std::sync::Arc;

use anyhow::Context as _;
use clap::Parser;
use provider::Program;
use runner::binary::{Backend, RunnerArgs};
use simulator::SimExecutor;

/// Applies the operations the API admitted into inbox.db to a simulated system root: the
/// runner of the dev node and the tests.
#[derive(Parser, Debug)]
#[command(name = "layerone-sim-runner", version)]
pub struct SimRunnerArgs {
    #[command(flatten)]
    pub runner: RunnerArgs,
    /// Programs to run for real anyway (`apachectl`): only programs that can be pointed at
    /// the root (`apachectl -f`), since a real program that ignores it changes this machine.
    #[arg(long = "sim-real", value_delimiter = ',')]
    pub sim_real: Vec<String>,
}

impl AsRef<RunnerArgs> for SimRunnerArgs {
    fn as_ref(&self) -> &RunnerArgs {
        &self.runner
    }
}

/// Runs the simulated runner; `arm_crash_points` is the crash-point runner's arming.
pub fn main(arm_crash_points: Option<fn()>) -> anyhow::Result<()> {
    runner::binary::main_on::<SimRunnerArgs>(arm_crash_points, |args| {
        let real = args
            .sim_real
            .iter()
            .map(|name| {
                Program::all()
                    .find(|p| p.name() == name)
                    .with_context(|| format!("unknown program {name}"))
            })
            .collect::<anyhow::Result<_>>()?;
        let executor = SimExecutor::new(real);
        Ok(Backend {
            machine: Arc::new(executor.machine()),
            executor: Arc::new(executor),
        })
    })
}
