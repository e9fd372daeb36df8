//! openapi-python-client (from PyPI; `scripts/test` installs it from
//! `scripts/python-client.requirements` into `target/pyclientvenv`) on the OpenAPI document
//! `layerone catalogue --openapi` prints, which is the one the API serves: it generates a client
//! without a warning, and every operation's job has its own class whose `result` is that
//! operation's result class.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The generator: `$LAYERONE_OPENAPI_PYTHON_CLIENT` or the one in `target/pyclientvenv`.
fn generator() -> PathBuf {
    if let Some(path) = std::env::var_os("LAYERONE_OPENAPI_PYTHON_CLIENT") {
        return PathBuf::from(path);
    }
    let venv = workspace().join("target/pyclientvenv/bin/openapi-python-client");
    assert!(
        venv.exists(),
        "openapi-python-client is missing: run ./scripts/test (it installs scripts/python-client.requirements into target/pyclientvenv)"
    );
    venv
}

#[allow(clippy::disallowed_methods)] // Tests run the real binary.
fn layerone(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_layerone"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("layerone runs");
    assert!(out.status.success(), "layerone {args:?}: {out:?}");
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn pascal(snake: &str) -> String {
    snake
        .split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

#[test]
#[allow(clippy::disallowed_methods)] // Tests run an external tool.
fn the_openapi_document_generates_a_python_client_typed_per_operation() {
    let tool = generator();
    let document = layerone(&["catalogue", "--openapi"]);
    let catalogue = layerone(&["catalogue", "--json"]);
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("openapi.json");
    std::fs::write(&spec, serde_json::to_vec(&document).unwrap()).unwrap();
    let output = dir.path().join("client");
    // The generator formats its output with ruff, which its virtualenv holds.
    let path = std::env::join_paths(tool.parent().into_iter().map(Path::to_path_buf).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let out = Command::new(&tool)
        .args(["generate", "--meta", "none", "--path"])
        .arg(&spec)
        .arg("--output-path")
        .arg(&output)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", tool.display()));
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the generator failed: {said}");
    assert!(
        !said.contains("Warning") && !said.contains("Unable") && !said.contains("WARNING"),
        "the generator dropped part of the document: {said}"
    );
    let operations = catalogue["operations"].as_array().expect("operations");
    assert!(!operations.is_empty());
    for op in operations {
        let name = op["operation"].as_str().expect("a name");
        let model = output.join(format!("models/{name}_job.py"));
        let source = std::fs::read_to_string(&model)
            .unwrap_or_else(|e| panic!("no job class for {name} ({}): {e}", model.display()));
        // The attribute's declaration: `result: A | B | C = UNSET`, in the generator's order.
        let class = format!("{}Result", pascal(name));
        let declared = source
            .lines()
            .find(|line| line.trim_start().starts_with("result: ") && line.ends_with("= UNSET"))
            .unwrap_or_else(|| panic!("{name}'s job declares no result: {source}"));
        let mut types: Vec<&str> = declared
            .trim()
            .trim_start_matches("result: ")
            .trim_end_matches("= UNSET")
            .split('|')
            .map(str::trim)
            .collect();
        types.sort_unstable();
        let mut expected = vec![class.as_str(), "None", "Unset"];
        expected.sort_unstable();
        assert_eq!(
            types, expected,
            "{name}'s job types its result otherwise: {declared}"
        );
        let request = output.join(format!("models/{name}_request.py"));
        assert!(request.exists(), "no request class for {name}");
    }
    let get_job = std::fs::read_to_string(output.join("api/default/get_job.py")).unwrap();
    assert!(
        get_job.contains(&format!(
            "{}Job",
            pascal(operations[0]["operation"].as_str().unwrap())
        )),
        "getJob does not answer the per-operation job classes: {get_job}"
    );
}
