//! Repository rules checked as ordinary tests: ARCHITECTURE.md names only paths that exist,
//! and only the provider runs programs (DESIGN.md invariant 4).

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Backticked tokens of a line that look like paths.
fn paths(line: &str) -> Vec<&str> {
    line.split('`')
        .skip(1)
        .step_by(2)
        .filter(|t| {
            !t.contains(' ')
                && (t.starts_with("crates/") || t.starts_with("src/") || t.starts_with("tests/"))
        })
        .collect()
}

#[test]
fn architecture_md_names_only_paths_that_exist() {
    let root = workspace();
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut checked = 0;
    for line in text.lines() {
        let tokens = paths(line);
        // In a table row, `src/...` is relative to the crate the row is about.
        let krate = tokens
            .iter()
            .find(|t| t.starts_with("crates/") && t.matches('/').count() == 1)
            .copied();
        for token in tokens {
            let path = match (
                token.starts_with("src/") || token.starts_with("tests/"),
                krate,
            ) {
                (true, Some(krate)) => root.join(krate).join(token),
                _ => root.join(token),
            };
            assert!(
                path.exists(),
                "ARCHITECTURE.md names {token}, which does not exist ({})",
                path.display()
            );
            checked += 1;
        }
    }
    assert!(
        checked > 20,
        "only {checked} paths found: the parser no longer reads ARCHITECTURE.md"
    );
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn only_the_provider_runs_programs() {
    let root = workspace();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    let mut offenders = Vec::new();
    for file in &files {
        let rel = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        // Tests may start the real binaries they test; the provider is the one exception.
        if rel.starts_with("crates/provider/src/") || rel.contains("/tests/") {
            continue;
        }
        // The benchmark, like a test, starts the real binaries it measures, from one module.
        if rel == "crates/bench/src/child.rs" {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for needle in [
            "process::Command",
            "Command::new",
            "\"sh\", \"-c\"",
            "\"bash\", \"-c\"",
            "libc::system",
            "libc::exec",
        ] {
            if text.contains(needle) {
                offenders.push(format!("{rel}: {needle}"));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "programs run outside crates/provider: {offenders:?}"
    );
    let provider = std::fs::read_to_string(root.join("crates/provider/src/exec.rs")).unwrap();
    // Its unit tests may start a shell as a child to test the timeout; its code may not.
    let code = provider.split("#[cfg(test)]").next().unwrap_or_default();
    assert!(
        !code.contains("\"-c\"") && !code.contains("/bin/sh"),
        "the provider must not use a shell"
    );
    let clippy = std::fs::read_to_string(root.join("clippy.toml")).unwrap();
    assert!(
        clippy.contains("std::process::Command::new"),
        "clippy.toml must disallow Command::new"
    );
}
