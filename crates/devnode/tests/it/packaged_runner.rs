//! The packaged `layerone-runner` cannot select the simulator nor arm a crash point, and the
//! code of neither is in it: it refuses the simulated runner's flags, and its bytes hold none
//! of the strings that the simulator and the arming of crash points put into a binary, which
//! the crash-point runner of this package, built from the same runner code, does hold.
//!
//! The packaged runner is a binary of `crates/runner`, found beside this package's binaries in
//! the target directory: `cargo nextest run --workspace` (./scripts/test) builds both.

use std::path::{Path, PathBuf};
use std::process::Command;

const CRASH_RUNNER: &str = env!("CARGO_BIN_EXE_layerone-crash-runner");
const SIM_RUNNER: &str = env!("CARGO_BIN_EXE_layerone-sim-runner");

/// What the simulator and the crash-point arming leave in a binary that links them: the
/// variable that arms a point, the prefix of every model's own message, the model of
/// MariaDB's file, the simulated executor's and machine's type names (in their symbols), and
/// the simulated certificate authority's name.
const MARKERS: &[&str] = &[
    testkit::crash_points::ENV,
    simulator::MARKER,
    simulator::SIM_MARIADB_FILE,
    "SimExecutor",
    "SimMachine",
    simulator::SIM_CA_NAME,
];

fn packaged_runner() -> PathBuf {
    let path = Path::new(CRASH_RUNNER).with_file_name("layerone-runner");
    assert!(
        path.is_file(),
        "{} is missing: the packaged runner is built by `cargo build -p runner` (the workspace \
         build and test run do)",
        path.display()
    );
    path
}

/// Whether the file at `path` holds `needle`.
fn holds(path: &Path, needle: &str) -> bool {
    let bytes = std::fs::read(path).unwrap();
    memchr::memmem::find(&bytes, needle.as_bytes()).is_some()
}

#[allow(clippy::disallowed_methods)] // The test runs the real binaries it checks.
fn run(binary: &Path, args: &[&str]) -> std::process::Output {
    Command::new(binary).args(args).output().unwrap()
}

#[test]
fn the_packaged_runner_refuses_the_simulator_and_names_no_such_flag() {
    let packaged = packaged_runner();
    // Should a flag be accepted, nothing may run: the paths are a scratch directory's, and
    // `--version` (parsed after the flag) ends the process before any pass.
    let scratch = tempfile::tempdir().unwrap();
    let scratch = scratch.path().to_str().unwrap();
    for flags in [["--backend", "sim"], ["--sim-real", "apachectl"]] {
        let mut args = flags.to_vec();
        args.extend([
            "--data-dir",
            scratch,
            "--root",
            scratch,
            "--node-id",
            "0123456789abcdef0123456789abcdef",
            "--version",
        ]);
        let out = run(&packaged, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{flags:?} was accepted: {stderr}");
        assert!(
            stderr.contains(&format!("unexpected argument '{}'", flags[0])),
            "{flags:?}: {stderr}"
        );
    }
    let help = String::from_utf8_lossy(&run(&packaged, &["--help"]).stdout).into_owned();
    assert!(help.contains("--node-id"), "{help}");
    assert!(
        !help.contains("--backend") && !help.contains("--sim-real"),
        "{help}"
    );
    // The simulated runner is the one that takes them.
    let help =
        String::from_utf8_lossy(&run(Path::new(SIM_RUNNER), &["--help"]).stdout).into_owned();
    assert!(help.contains("--sim-real"), "{help}");
}

#[test]
fn the_packaged_runner_holds_no_simulator_and_no_crash_point_arming() {
    let packaged = packaged_runner();
    for marker in MARKERS {
        assert!(
            holds(Path::new(CRASH_RUNNER), marker),
            "the crash-point runner does not hold {marker:?}: the marker no longer stands for \
             the code it marks"
        );
        assert!(
            !holds(&packaged, marker),
            "the packaged layerone-runner holds {marker:?}: it links the simulator or the \
             arming of crash points"
        );
    }
}
