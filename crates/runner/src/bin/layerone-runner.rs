//! `layerone-runner`: the root side of the node, as the packages ship it. Applies admitted
//! operations to the OS through the real executor.
//!
//! Everything is the runner crate's (`runner::binary::main`: the clean start, the command
//! line, the pass or the watch); this binary only chooses how programs run. It links no
//! simulator and no way to arm a crash point: the simulated runner and the crash-point runner
//! are other binaries (`crates/devnode`) that the packages do not ship.

use std::sync::Arc;

use provider::RealExecutor;
use runner::binary::RunnerArgs;

fn main() -> anyhow::Result<()> {
    runner::binary::main::<RunnerArgs>(None, |_| Ok(Arc::new(RealExecutor)))
}
