//! `layerone-crash-runner`: the simulated runner with crash points armable from the
//! environment (`testkit::crash_points::ENV`), for the crash matrix and the seeded histories.
//! The only binary that installs a crash-point hook; not shipped by the packages.

fn main() -> anyhow::Result<()> {
    devnode::sim_runner::main(Some(|| {
        testkit::crash_points::arm_from_env(&ops::crash_points())
    }))
}
