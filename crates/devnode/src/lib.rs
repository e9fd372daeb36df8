//! `devnode`: the node's binaries that the packages do not ship, built by the same
//! `cargo build --workspace` as the rest.
//!
//! - `layerone-dev` (`src/bin/layerone-dev.rs`, [`dev`]): a dev node in a sandbox directory,
//!   the API and a watching runner on the simulator.
//! - `layerone-sim-runner` (`src/bin/layerone-sim-runner.rs`, [`sim_runner`]): the runner on
//!   a simulated system root, what the end-to-end tests and the benchmark drive.
//! - `layerone-crash-runner` (`src/bin/layerone-crash-runner.rs`): the same simulated runner
//!   with crash points armable from the environment (`LAYERONE_CRASH_AT`), for the crash
//!   matrix and the seeded histories.
//!
//! Both runners run the runner crate's `runner::binary::main`, the code of the packaged
//! `layerone-runner`, with two differences: the executor is the simulator's (which starts
//! for real only the programs named by `--sim-real`, and the tenant worker when root), and,
//! in the crash-point runner only, crash points are armed before the environment is
//! cleared.

pub mod dev;
pub mod sim_runner;
