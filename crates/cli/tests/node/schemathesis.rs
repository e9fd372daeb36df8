//! schemathesis (from PyPI; `scripts/test` installs it) against the OpenAPI document of a real
//! dev node (`layerone-dev`: the API over HTTPS and a watching runner on a Sim sysroot): a
//! bounded number of generated requests per operation and a time budget, with every check but
//! `positive_data_acceptance` (the document describes each field's shape; the node refuses
//! some schema-valid values on purpose, such as reserved user names or domains that are not
//! valid IDNA, and says so in the field's description). No 5xx, no response that violates
//! the document, no schema-invalid request accepted, no endpoint answering without the key.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use client::{DevInfo, NodeClient};

use crate::common;

/// Examples per operation and phase, and the run's time budget (schemathesis stops itself);
/// the hard bound kills it if it does not.
const EXAMPLES: &str = "25";
const BUDGET_SECS: &str = "60";
const HARD_BOUND: Duration = Duration::from_secs(300);

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The schemathesis executable: `$LAYERONE_SCHEMATHESIS`, the virtualenv `scripts/test`
/// makes under `target/`, or one on `PATH`.
fn schemathesis() -> PathBuf {
    if let Some(path) = std::env::var_os("LAYERONE_SCHEMATHESIS") {
        return PathBuf::from(path);
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/pyvenv/bin/schemathesis");
    if venv.exists() {
        return venv;
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join("schemathesis"))
        .find(|p| p.exists());
    on_path.unwrap_or_else(|| {
        panic!(
            "schemathesis is missing: run ./scripts/test (it installs it into target/pyvenv), or `pip install schemathesis`"
        )
    })
}

#[test]
#[allow(clippy::disallowed_methods)] // Tests start the real dev node and an external tool.
fn schemathesis_finds_no_5xx_and_no_schema_violation() {
    let tool = schemathesis();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("dev");
    let log = std::fs::File::create(dir.path().join("dev.log")).unwrap();
    let _dev = Killed(
        Command::new(&*common::DEV_NODE)
            .args(["--listen", "127.0.0.1:0", "--root"])
            .arg(&root)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("the dev node starts"),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let info = loop {
        if let Ok(info) = DevInfo::load(&root.join("dev.json")) {
            break info;
        }
        assert!(
            Instant::now() < deadline,
            "the dev node wrote no dev.json: {}",
            std::fs::read_to_string(dir.path().join("dev.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let client = NodeClient::new(&info.url, Some(info.api_key.clone()), &info.pin_sha256).unwrap();
    let document = loop {
        match client.openapi() {
            Ok(doc) => break doc,
            Err(e) => {
                assert!(Instant::now() < deadline, "no OpenAPI document: {e}");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    };
    let spec = dir.path().join("openapi.json");
    std::fs::write(&spec, serde_json::to_vec(&document).unwrap()).unwrap();
    // The long-poll's `wait` (up to 60 s, bounds tested in the API's own tests) is pinned to
    // 0 so each generated request answers at once. A schema-invalid body too large to read
    // is refused with 413, which is a refusal like 400.
    let config = dir.path().join("schemathesis.toml");
    std::fs::write(
        &config,
        "[checks.negative_data_rejection]\n\
         expected-statuses = [400, 401, 404, 405, 409, 413, 429]\n\n\
         [[operations]]\n\
         include-name = \"GET /v1/events\"\n\
         parameters = { \"query.wait\" = 0 }\n",
    )
    .unwrap();
    let out_path = dir.path().join("schemathesis.out");
    let out = std::fs::File::create(&out_path).unwrap();
    let mut run = Killed(
        Command::new(&tool)
            .arg("--config-file")
            .arg(&config)
            .arg("run")
            .arg(&spec)
            .args(["--url", &info.url])
            .args([
                "--header",
                &format!("Authorization: Bearer {}", info.api_key),
            ])
            .args(["--tls-verify", "false"])
            .args(["--max-examples", EXAMPLES, "--max-time", BUDGET_SECS])
            .args([
                "--checks",
                "all",
                "--exclude-checks",
                "positive_data_acceptance",
            ])
            .args(["--request-timeout", "20", "--generation-database", "none"])
            .args(["--workers", "1"])
            .env("NO_COLOR", "1")
            .env("SCHEMATHESIS_TELEMETRY", "false")
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", tool.display())),
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = run.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < HARD_BOUND,
            "schemathesis ran past {HARD_BOUND:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let report = std::fs::read_to_string(&out_path).unwrap_or_default();
    assert!(
        status.success(),
        "schemathesis found problems ({status}):\n{report}"
    );
    assert!(
        report.contains("generated") && report.contains("passed"),
        "schemathesis ran no test cases:\n{report}"
    );
    eprintln!(
        "{}",
        report
            .lines()
            .filter(|l| l.contains("generated") || l.contains("Seed"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
