//! The completion scripts the packages ship (`packaging/completions/`) are exactly what
//! `layerone completions SHELL` prints: a new flag or subcommand that is not regenerated
//! fails here.

use std::path::Path;
use std::process::Command;

#[test]
fn shipped_completions_are_what_the_binary_prints() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../packaging/completions");
    for (shell, file) in [
        ("bash", "layerone.bash"),
        ("zsh", "_layerone"),
        ("fish", "layerone.fish"),
    ] {
        #[allow(clippy::disallowed_methods)] // The test runs the binary whose output it checks.
        let out = Command::new(env!("CARGO_BIN_EXE_layerone"))
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success(), "layerone completions {shell}");
        let shipped = std::fs::read(dir.join(file)).unwrap();
        assert!(
            shipped == out.stdout,
            "packaging/completions/{file} differs from `layerone completions {shell}`: \
             regenerate it with `layerone completions {shell} > packaging/completions/{file}`"
        );
        assert!(String::from_utf8_lossy(&shipped).contains("install"));
    }
}
