//! `layerone-sim-runner`: the runner on a simulated system root (`devnode::sim_runner`), for
//! the tests and the benchmark. Not shipped by the packages.

fn main() -> anyhow::Result<()> {
    devnode::sim_runner::main(None)
}
