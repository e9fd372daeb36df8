//! The API's integration tests: real HTTPS on 127.0.0.1:0, real SQLite in temporary
//! directories, the real client. Each test's name is the property it proves.

use crate::common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use client::{ClientError, Response, TlsError};
use common::{Node, hex32};
use registry::JobState;
use serde_json::{Value, json};

/// The codes a validation failure may carry; anything else is not a stable contract.
const FIELD_CODES: &[&str] = &[
    "invalid_json",
    "invalid_envelope",
    "unknown_operation",
    "unknown_field",
    "missing_field",
    "invalid_field",
    "wrong_node",
];

/// Asserts `resp` is a JSON error with exactly `{code, message, field}` (and `retry_after_s`,
/// the `Retry-After` header's value, when it has one; `limit` and `queued` on `queue_full`),
/// and returns it.
fn error_body(resp: &Response) -> (String, String) {
    assert_eq!(
        resp.header("content-type"),
        Some("application/json"),
        "status {}: {:?}",
        resp.status,
        String::from_utf8_lossy(&resp.body)
    );
    let body = resp.json().expect("a JSON error body");
    let obj = body.as_object().expect("an object");
    assert_eq!(
        obj.get("retry_after_s").map(|v| v.to_string()),
        resp.header("retry-after").map(str::to_owned),
        "{body}"
    );
    let queue = ["limit", "queued"];
    assert!(
        queue
            .iter()
            .all(|k| obj.contains_key(*k) == (body["code"] == "queue_full")),
        "{body}"
    );
    let mut keys: Vec<&str> = obj
        .keys()
        .map(String::as_str)
        .filter(|k| *k != "retry_after_s" && !queue.contains(k))
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["code", "field", "message"], "{body}");
    (
        body["code"].as_str().expect("a code").to_owned(),
        body["field"].as_str().expect("a field").to_owned(),
    )
}

fn post_json(client: &client::NodeClient, value: &Value) -> Response {
    client
        .request("POST", "/v1/jobs", Some(value.to_string().as_bytes()), &[])
        .expect("an answer")
}

// ---------------------------------------------------------------------------------------
// Bad input, derived from the registry.

#[derive(Clone, Debug, PartialEq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// Every path inside `value` (objects and arrays included), in document order.
fn paths(value: &Value, prefix: &[Seg], out: &mut Vec<Vec<Seg>>) {
    let mut push = |seg: Seg, child: &Value| {
        let mut path = prefix.to_vec();
        path.push(seg);
        paths(child, &path, out);
        out.push(path);
    };
    match value {
        Value::Object(map) => map.iter().for_each(|(k, v)| push(Seg::Key(k.clone()), v)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .for_each(|(i, v)| push(Seg::Index(i), v)),
        _ => {}
    }
}

fn get<'a>(value: &'a Value, path: &[Seg]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, seg| match seg {
        Seg::Key(k) => v.get(k),
        Seg::Index(i) => v.get(i),
    })
}

fn set(value: &mut Value, path: &[Seg], new: Value) {
    let (last, parents) = path.split_last().expect("a non-empty path");
    let parent = parents.iter().fold(value, |v, seg| match seg {
        Seg::Key(k) => &mut v[k.as_str()],
        Seg::Index(i) => &mut v[*i],
    });
    match last {
        Seg::Key(k) => {
            parent
                .as_object_mut()
                .expect("an object")
                .insert(k.clone(), new);
        }
        Seg::Index(i) => parent[*i] = new,
    }
}

/// The path as the API names it: `resource.aliases[0]`.
fn render(root: &str, path: &[Seg]) -> String {
    let mut out = root.to_owned();
    for seg in path {
        match seg {
            Seg::Key(k) if out.is_empty() => out.push_str(k),
            Seg::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// The mutations every field gets: a value of the wrong type, two hostile strings, and null.
fn mutations(original: Option<&Value>) -> Vec<(&'static str, Value)> {
    let wrong_type = match original {
        Some(Value::Object(_)) => json!(["not", "an", "object"]),
        _ => json!({"unexpected": "object"}),
    };
    vec![
        ("wrong type", wrong_type),
        ("path traversal with NUL", json!("../../etc/passwd\u{0}")),
        ("300 characters", json!("x".repeat(300))),
        ("null", Value::Null),
    ]
}

#[test]
fn bad_input_for_every_field_of_every_request_is_a_4xx_naming_the_field() {
    // Thousands of requests in a burst: the rate limit is not what this test is about.
    let node = Node::start_with(api::Limits {
        rate_per_sec: 100_000,
        burst: 100_000,
        ..api::Limits::default()
    });
    let client = node.client();
    let mut checked = 0usize;
    let mut allowed = 0usize;
    // (operation, field) -> mutations that got the expected 400 naming the field.
    let mut coverage: BTreeMap<(String, String), usize> = BTreeMap::new();

    // Every mismatch is collected, so one run lists them all.
    let mut failures: Vec<String> = Vec::new();

    let mut expect_field_error = |op: &str,
                                  what: &str,
                                  body: &Value,
                                  field: &str,
                                  schema_allows: bool| {
        let resp = post_json(&client, body);
        let covered = coverage
            .entry((op.to_owned(), field.to_owned()))
            .or_default();
        if resp.status == 202 {
            if !schema_allows {
                failures.push(format!("{op}: {what} at {field} was accepted, but the request schema forbids it: {body}"));
            }
            allowed += 1;
            return;
        }
        if resp.status != 400 {
            failures.push(format!(
                "{op}: {what} at {field}: {} {}",
                resp.status,
                String::from_utf8_lossy(&resp.body)
            ));
            return;
        }
        let (code, got_field) = error_body(&resp);
        if !FIELD_CODES.contains(&code.as_str()) {
            failures.push(format!("{op}: {what} at {field}: unstable code {code}"));
        } else if got_field != field {
            failures.push(format!(
                "{op}: {what} at {field} was reported at {got_field:?} ({code})"
            ));
        } else {
            *covered += 1;
            checked += 1;
        }
    };

    for op in declarations::registry().operations() {
        let example = op.example();
        let schema = op.request_schema();
        let validator = jsonschema::validator_for(&schema).expect("the request schema compiles");
        let envelope = |resource: Value| match op.scope() {
            registry::Scope::Tenant => {
                json!({"request_id": hex32(), "operation": op.name(), "resource": resource})
            }
            registry::Scope::Node => {
                json!({"request_id": hex32(), "action": op.name(), "node_id": node.node_id, "resource": resource})
            }
        };

        // Every field of the example and of its other examples (each mutated in the example
        // that has it), and every property of the schema they all leave out.
        let examples: Vec<Value> = std::iter::once(example.clone())
            .chain(op.other_examples())
            .collect();
        let mut fields: Vec<(&Value, Vec<Seg>)> = Vec::new();
        for base in &examples {
            let mut of_base = Vec::new();
            paths(base, &[], &mut of_base);
            for path in of_base {
                if !fields.iter().any(|(_, known)| *known == path) {
                    fields.push((base, path));
                }
            }
        }
        let properties = schema["properties"]
            .as_object()
            .expect("a request schema lists its properties");
        for name in properties.keys() {
            if examples.iter().all(|e| e.get(name).is_none()) {
                fields.push((&example, vec![Seg::Key(name.clone())]));
            }
        }
        assert!(!fields.is_empty(), "{} has no fields to check", op.name());
        for (base, path) in &fields {
            let field = render("resource", path);
            for (what, value) in mutations(get(base, path)) {
                let mut resource = (*base).clone();
                set(&mut resource, path, value);
                let schema_allows = validator.is_valid(&resource);
                expect_field_error(op.name(), what, &envelope(resource), &field, schema_allows);
            }
        }

        // Each required field removed.
        for name in schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            let mut resource = example.clone();
            resource.as_object_mut().expect("an object").remove(name);
            expect_field_error(
                op.name(),
                "removed",
                &envelope(resource),
                &format!("resource.{name}"),
                false,
            );
        }

        // An unknown field in the resource.
        let mut resource = example.clone();
        resource["unexpected_field"] = json!(1);
        expect_field_error(
            op.name(),
            "unknown field",
            &envelope(resource),
            "resource.unexpected_field",
            false,
        );

        // The envelope's own fields: each mutated, each removed, and one unknown added.
        let valid = envelope(example.clone());
        for key in valid.as_object().expect("an object").keys() {
            for (what, value) in mutations(valid.get(key)) {
                let mut body = valid.clone();
                body[key.as_str()] = value;
                body["request_id"] = if key == "request_id" {
                    body["request_id"].clone()
                } else {
                    json!(hex32())
                };
                expect_field_error(op.name(), what, &body, key, false);
            }
            // Without `action`, a node-scope envelope reads as a tenant one: whichever field
            // that makes wrong is named, so only the removal of the other keys is exact.
            if key != "action" {
                let mut body = valid.clone();
                body.as_object_mut().expect("an object").remove(key);
                expect_field_error(op.name(), "removed", &body, key, false);
            }
        }
        let mut body = valid.clone();
        body["unexpected_field"] = json!(true);
        expect_field_error(
            op.name(),
            "unknown envelope field",
            &body,
            "unexpected_field",
            false,
        );
    }

    assert!(
        failures.is_empty(),
        "{} bad inputs were not refused as expected:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let uncovered: Vec<_> = coverage
        .iter()
        .filter(|(_, n)| **n == 0)
        .map(|(k, _)| k)
        .collect();
    assert!(
        uncovered.is_empty(),
        "fields no mutation was refused for: {uncovered:?}"
    );
    let operations = declarations::registry().operations().count();
    assert!(
        checked >= operations * 20,
        "only {checked} bad inputs checked for {operations} operations"
    );
    eprintln!(
        "{checked} bad inputs refused with the field named; {allowed} accepted where the schema allows them"
    );
}

// ---------------------------------------------------------------------------------------
// OpenAPI.

#[test]
#[allow(clippy::disallowed_methods)] // Tests may run external validators.
fn openapi_document_validates_as_openapi_3() {
    let node = Node::start();
    let document = node.client().openapi().expect("the OpenAPI document");
    assert_eq!(document["openapi"], "3.1.0");
    let path = node.dir.path().join("openapi.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&document).expect("JSON"))
        .expect("write the document");

    let probe = std::process::Command::new("python3")
        .args(["-c", "import openapi_spec_validator"])
        .output();
    match probe {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "the OpenAPI validator is missing: install it with `pip install openapi-spec-validator` ({})",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => panic!(
            "python3 is needed to validate the OpenAPI document ({e}); then `pip install openapi-spec-validator`"
        ),
    }
    let out = std::process::Command::new("python3")
        .args(["-m", "openapi_spec_validator"])
        .arg(&path)
        .output()
        .expect("run openapi_spec_validator");
    assert!(
        out.status.success(),
        "the OpenAPI document does not validate:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn catalogue_lists_every_operation_of_the_registry() {
    let node = Node::start();
    let catalogue = node.client().catalogue().expect("the catalogue");
    let names: Vec<&str> = catalogue["operations"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|e| e["operation"].as_str().expect("a name"))
        .collect();
    let expected: Vec<&str> = declarations::registry()
        .operations()
        .map(|op| op.name())
        .collect();
    assert_eq!(names, expected);
}

#[test]
fn catalogue_and_health_carry_the_catalogue_version_beside_its_sha256() {
    let node = Node::start();
    let catalogue = node.client().catalogue().expect("the catalogue");
    assert_eq!(catalogue["version"], declarations::CATALOGUE_VERSION);
    let sha = declarations::registry().catalogue_sha256();
    assert_eq!(catalogue["sha256"], sha.as_str());
    let (status, health) = node.client_with(None, &node.pin).health().expect("health");
    assert_eq!(status, 200);
    assert_eq!(health["catalogue_version"], declarations::CATALOGUE_VERSION);
    assert_eq!(health["catalogue_sha256"], sha.as_str());
}

// ---------------------------------------------------------------------------------------
// Idempotency and conflicts, before and after root has ingested the request.

#[test]
fn idempotent_resubmission_returns_the_same_job() {
    let node = Node::start();
    let client = node.client();
    let id = hex32();
    let envelope = node.example_envelope(&id);

    let first = client.submit(&envelope).expect("202");
    assert_eq!(first.state, JobState::Received);
    assert_eq!(first.request_id, id.as_str());
    // Every view carries the version of its operation on this node.
    let version = |name: &str| {
        declarations::registry()
            .catalogue()
            .into_iter()
            .find(|e| e.operation == name)
            .map(|e| e.sha256)
    };
    assert_eq!(first.operation_sha256, version(&first.operation));
    let again = client.submit(&envelope).expect("202 again");
    assert_eq!(again, first, "the same received job");
    // The same request formatted differently is the same request.
    let pretty = serde_json::to_vec_pretty(&envelope).expect("JSON");
    let resp = client
        .request("POST", "/v1/jobs", Some(&pretty), &[])
        .expect("an answer");
    assert_eq!(resp.status, 202);
    assert_eq!(node.inbox_len(), 1, "one inbox row for three submissions");
    assert_eq!(client.job(id.as_str()).expect("the job"), first);

    let report = node.ingest();
    assert_eq!(report.admitted, 1);
    let admitted = client.submit(&envelope).expect("202 after ingest");
    assert_eq!(admitted.state, JobState::Queued);
    assert_eq!(admitted.request_id, id.as_str());
    assert!(admitted.generation.is_some());
    assert_eq!(admitted.operation_sha256, version(&admitted.operation));
    assert_eq!(client.job(id.as_str()).expect("the job"), admitted);
    assert_eq!(node.ingest().admitted, 0, "nothing new for root to admit");
}

#[test]
fn same_request_id_with_another_body_is_409() {
    let node = Node::start();
    let client = node.client();
    let id = hex32();
    let envelope = node.example_envelope(&id);
    let other_op = declarations::registry()
        .operations()
        .filter(|op| op.scope() == registry::Scope::Tenant)
        .nth(1)
        .expect("a second tenant operation");
    let other =
        json!({"request_id": id, "operation": other_op.name(), "resource": other_op.example()});

    client.submit(&envelope).expect("202");
    let conflict = |when: &str| {
        let resp = post_json(&client, &other);
        assert_eq!(resp.status, 409, "{when}");
        assert_eq!(
            error_body(&resp),
            ("request_id_conflict".to_owned(), "request_id".to_owned()),
            "{when}"
        );
    };
    conflict("while received");
    node.ingest();
    conflict("after root admitted it");
    assert_eq!(
        client
            .submit(&envelope)
            .expect("the original still resolves")
            .state,
        JobState::Queued
    );
}

#[test]
fn wait_follows_a_job_to_its_end_through_the_events_feed() {
    let node = Node::start();
    let client = node.client();
    let id = hex32();
    client.submit(&node.example_envelope(&id)).expect("202");
    let waiter = {
        let client = node.client();
        let id = id.to_string();
        std::thread::spawn(move || client.wait(&id, Duration::from_secs(30)))
    };
    node.ingest();
    assert_eq!(
        node.finish_next(json!({"state": "present"})).as_deref(),
        Some(id.as_str())
    );
    let done = waiter.join().expect("the waiter").expect("the job ended");
    assert_eq!(done.state, JobState::Succeeded);
    assert_eq!(done.result, Some(json!({"state": "present"})));
}

// ---------------------------------------------------------------------------------------
// The key, health, and errors for what a client gets wrong.

#[test]
fn missing_or_wrong_key_is_401() {
    let node = Node::start();
    let wrong = api::generate_api_key();
    for client in [
        node.client_with(None, &node.pin),
        node.client_with(Some(&wrong), &node.pin),
    ] {
        for (method, path) in [
            ("GET", "/v1/catalogue"),
            ("GET", "/v1/openapi.json"),
            ("GET", "/v1/events"),
            ("POST", "/v1/jobs"),
        ] {
            let body = (method == "POST").then(|| node.example_envelope(&hex32()).to_string());
            let resp = client
                .request(method, path, body.as_deref().map(str::as_bytes), &[])
                .expect("an answer");
            assert_eq!(resp.status, 401, "{method} {path}");
            assert_eq!(error_body(&resp).0, "unauthorized");
            assert_eq!(resp.header("www-authenticate"), Some("Bearer"));
        }
    }
    let basic = node.client_with(None, &node.pin);
    let resp = basic
        .request(
            "GET",
            "/v1/catalogue",
            None,
            &[("Authorization", &format!("Basic {}", node.key))],
        )
        .expect("an answer");
    assert_eq!(resp.status, 401, "only a bearer key counts");
    assert_eq!(node.inbox_len(), 0, "nothing was admitted without the key");
}

#[test]
fn health_needs_no_key() {
    let node = Node::start();
    let (status, body) = node.client_with(None, &node.pin).health().expect("health");
    assert_eq!(status, 200);
    assert_eq!(body["status"], "ok");
    assert_eq!(body["state_readable"], true);
    assert_eq!(body["node_id"], node.node_id.as_str());
    assert_eq!(body["version"], env!("CARGO_PKG_VERSION"));
}

#[test]
fn state_briefly_unreadable_is_503_with_retry_after() {
    let node = Node::start();
    // What a root crash mid-commit looks like to the API until the next pass: the database
    // cannot be read. Here it is simply gone: emptied first, so that a connection the API
    // pooled before (its inbox pruner reads state.db as it starts) reads nothing either, then
    // removed, so that a fresh one cannot open it.
    std::fs::File::create(node.layout.state_db()).expect("empty state.db");
    std::fs::remove_file(node.layout.state_db()).expect("remove state.db");
    let client = node.client();
    let (status, body) = client.health().expect("health");
    assert_eq!(status, 503);
    assert_eq!(body["state_readable"], false);
    let resp = client
        .request("GET", &format!("/v1/jobs/{}", hex32()), None, &[])
        .expect("an answer");
    assert_eq!(resp.status, 503);
    assert_eq!(error_body(&resp).0, "state_unavailable");
    assert!(resp.header("retry-after").is_some());
}

#[test]
fn unknown_path_and_method_are_json_errors() {
    let node = Node::start();
    let client = node.client();
    let check = |method: &str,
                 path: &str,
                 body: Option<&[u8]>,
                 headers: &[(&str, &str)],
                 status: u16,
                 code: &str,
                 field: &str| {
        let resp = client
            .request(method, path, body, headers)
            .expect("an answer");
        assert_eq!(
            resp.status,
            status,
            "{method} {path}: {}",
            String::from_utf8_lossy(&resp.body)
        );
        assert_eq!(
            error_body(&resp),
            (code.to_owned(), field.to_owned()),
            "{method} {path}"
        );
    };
    check("GET", "/v1/nope", None, &[], 404, "not_found", "");
    check("GET", "/", None, &[], 404, "not_found", "");
    check("GET", "/v1/jobs/", None, &[], 404, "not_found", "");
    check(
        "DELETE",
        "/v1/jobs",
        None,
        &[],
        405,
        "method_not_allowed",
        "",
    );
    check("GET", "/v1/jobs", None, &[], 405, "method_not_allowed", "");
    let resp = client
        .request("DELETE", "/v1/jobs", None, &[])
        .expect("an answer");
    assert_eq!(
        resp.header("allow"),
        Some("POST"),
        "a 405 says what is allowed"
    );
    check(
        "PUT",
        "/v1/health",
        None,
        &[],
        405,
        "method_not_allowed",
        "",
    );
    check(
        "POST",
        "/v1/events",
        Some(b"{}"),
        &[],
        405,
        "method_not_allowed",
        "",
    );
    check(
        "GET",
        "/v1/events?after=abc",
        None,
        &[],
        400,
        "invalid_query",
        "after",
    );
    check(
        "GET",
        "/v1/events?wait=9999",
        None,
        &[],
        400,
        "invalid_query",
        "wait",
    );
    check(
        "GET",
        "/v1/events?limit=0",
        None,
        &[],
        400,
        "invalid_query",
        "limit",
    );
    check(
        "GET",
        "/v1/events?colour=blue",
        None,
        &[],
        400,
        "invalid_query",
        "colour",
    );
    check(
        "GET",
        "/v1/jobs/not-a-request-id",
        None,
        &[],
        400,
        "invalid_request_id",
        "request_id",
    );
    check(
        "GET",
        "/v1/jobs/%00%2e%2e",
        None,
        &[],
        400,
        "invalid_request_id",
        "request_id",
    );
    check(
        "GET",
        &format!("/v1/jobs/{}", hex32()),
        None,
        &[],
        404,
        "job_not_found",
        "request_id",
    );
    check(
        "POST",
        "/v1/jobs",
        Some(b"{\"request_id\": "),
        &[],
        400,
        "invalid_json",
        "",
    );
    check(
        "POST",
        "/v1/jobs",
        Some(b"[1, 2]"),
        &[],
        400,
        "invalid_envelope",
        "",
    );
    check(
        "POST",
        "/v1/jobs",
        Some(b"\xff\xfe"),
        &[],
        400,
        "invalid_json",
        "",
    );
    check(
        "POST",
        "/v1/jobs",
        None,
        &[],
        400,
        "invalid_content_type",
        "content-type",
    );
    let valid = node.example_envelope(&hex32()).to_string();
    check(
        "POST",
        "/v1/jobs",
        Some(valid.as_bytes()),
        &[("Content-Type", "text/plain")],
        400,
        "invalid_content_type",
        "content-type",
    );
    check("POST", "/v1/jobs", Some(b""), &[], 400, "invalid_json", "");
    assert_eq!(node.inbox_len(), 0);
}

#[test]
fn oversized_body_is_413() {
    let node = Node::start();
    let client = node.client();
    let max = registry::envelope::MAX_BODY;
    // Announced by Content-Length.
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(max));
    let resp = client
        .request("POST", "/v1/jobs", Some(big.as_bytes()), &[])
        .expect("an answer");
    assert_eq!(resp.status, 413);
    assert_eq!(error_body(&resp).0, "body_too_large");
    // Streamed without a length: refused once the bytes so far exceed the cap.
    let mut chunked = Vec::new();
    for chunk in big.as_bytes().chunks(8192) {
        chunked.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        chunked.extend_from_slice(chunk);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let resp = client
        .request(
            "POST",
            "/v1/jobs",
            Some(&chunked),
            &[("Transfer-Encoding", "chunked")],
        )
        .expect("an answer");
    assert_eq!(resp.status, 413);
    assert_eq!(error_body(&resp).0, "body_too_large");
    // A body just under the cap is read and judged on its content.
    let fits = format!("{{\"pad\":\"{}\"}}", "x".repeat(max - 20));
    let resp = client
        .request("POST", "/v1/jobs", Some(fits.as_bytes()), &[])
        .expect("an answer");
    assert_eq!(resp.status, 400);
    assert_eq!(node.inbox_len(), 0);
}

#[test]
fn rate_limit_answers_429_with_retry_after() {
    let node = Node::start_with(api::Limits {
        rate_per_sec: 2,
        burst: 5,
        ..api::Limits::default()
    });
    let client = node.client();
    let mut limited = None;
    for _ in 0..50 {
        let resp = client
            .request("GET", "/v1/health", None, &[])
            .expect("an answer");
        if resp.status == 429 {
            limited = Some(resp);
            break;
        }
        assert_eq!(resp.status, 200);
    }
    let resp = limited.expect("a 429 within 50 requests at 2/s with a burst of 5");
    assert_eq!(error_body(&resp).0, "rate_limited");
    let retry: u64 = resp
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("seconds");
    assert!(retry >= 1);
    // Unauthenticated requests spend tokens too, so guessing keys is limited as well.
    let resp = node
        .client_with(None, &node.pin)
        .request("GET", "/v1/catalogue", None, &[])
        .expect("an answer");
    assert_eq!(resp.status, 429);
}

// ---------------------------------------------------------------------------------------
// The events long-poll.

#[test]
fn events_long_poll_wakes_on_a_state_change() {
    let node = Node::start();
    let client = node.client();
    let start = client.events(0, 0, 1000).expect("the feed").next;
    let waiter = {
        let client = node.client();
        std::thread::spawn(move || client.events(start, 10, 100))
    };
    // Let the waiter block (if it has not yet, it finds the event on its first read: the
    // assertion below holds either way).
    std::thread::sleep(Duration::from_millis(300));
    let id = hex32();
    node.client()
        .submit(&node.example_envelope(&id))
        .expect("202");
    node.ingest();
    let page = waiter.join().expect("the waiter").expect("a page");
    let event = page
        .events
        .iter()
        .find(|e| e.request_id.as_deref() == Some(id.as_str()))
        .expect("the waiter returned with the new job's event");
    assert_eq!(event.state, Some(JobState::Queued));
    assert_eq!(page.next, page.events.last().expect("an event").cursor);
    assert!(page.next > start);
    // Nothing after it: a zero wait answers at once, with the cursor unchanged.
    let empty = client.events(page.next, 0, 100).expect("the feed");
    assert!(empty.events.is_empty());
    assert_eq!(empty.next, page.next);
}

/// Runs `n` example jobs to success, each for its own resource.
fn jobs_succeeded(node: &Node, n: usize) -> Vec<registry::Hex32> {
    let client = node.client();
    let ids: Vec<_> = (0..n).map(|_| hex32()).collect();
    for id in &ids {
        let mut envelope = node.example_envelope(id);
        envelope["resource"]["id"] = json!(hex32());
        client.submit(&envelope).expect("202");
    }
    node.ingest();
    for id in &ids {
        let ran = node.finish_next(json!({"state": "present"}));
        assert_eq!(ran.as_deref(), Some(id.as_str()));
    }
    ids
}

/// Root keeps the newest events only. A read from a cursor the trim went past (events just
/// after it are gone) is 410 `events_lost` with the oldest cursor left, at once even for a
/// long-poll, never a page that skips ahead; from one below that cursor on, the feed reads as
/// before, and a feed never trimmed reads from 0.
#[test]
fn a_cursor_behind_the_trimmed_feed_is_410_events_lost_with_the_oldest_cursor_left() {
    let node = Node::start();
    let client = node.client();
    assert_eq!(client.events(0, 0, 1000).expect("a fresh feed").next, 0);
    jobs_succeeded(&node, 3);
    // Three events a job (queued, running, succeeded): cursors 1 to 9, all from 0.
    let all = client.events(0, 0, 1000).expect("a feed never trimmed");
    assert_eq!(
        all.events.iter().map(|e| e.cursor).collect::<Vec<_>>(),
        (1..=9).collect::<Vec<_>>()
    );
    assert_eq!(node.trim_events(4), 5);

    // The whole answer, as it goes over the wire.
    let resp = client
        .request("GET", "/v1/events?after=0&wait=5", None, &[])
        .expect("an answer");
    assert_eq!(resp.status, 410);
    let body: Value = serde_json::from_slice(&resp.body).expect("JSON");
    let mut keys: Vec<&str> = body
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["code", "field", "first_cursor", "message"], "{body}");
    assert_eq!(body["code"], "events_lost");
    assert_eq!(body["field"], "after");
    assert_eq!(body["first_cursor"], 6);

    for behind in [0, 3, 4] {
        let started = Instant::now();
        let err = client.events(behind, 10, 1000).expect_err("events lost");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "a long-poll from behind the trim answers at once"
        );
        assert_eq!(err.status(), Some(410));
        assert_eq!(err.api_code(), Some("events_lost"));
        assert_eq!(err.events_lost(), Some(6), "after={behind}");
    }
    // One below the oldest left: nothing was lost after it.
    let resumed = client.events(5, 0, 1000).expect("the feed from 5");
    assert_eq!(
        resumed.events.iter().map(|e| e.cursor).collect::<Vec<_>>(),
        [6, 7, 8, 9]
    );
    for at_or_past_the_newest in [9, 1_000] {
        let page = client
            .events(at_or_past_the_newest, 0, 1000)
            .expect("an empty page");
        assert!(page.events.is_empty());
    }
}

/// The client's `wait` from a cursor behind the trim (a fresh client starts at 0) reads the
/// job itself and follows the feed on from the oldest event left, so it returns the job once
/// it ends instead of failing or missing its end; a job that ended among the events lost is
/// read directly.
#[test]
fn the_clients_wait_from_behind_the_trim_reads_the_job_and_follows_the_feed_on() {
    let node = Node::start();
    let ended = jobs_succeeded(&node, 2);
    node.trim_events(1);
    assert!(
        node.client()
            .events(0, 0, 1000)
            .is_err_and(|e| e.events_lost().is_some())
    );

    let id = hex32();
    node.client()
        .submit(&node.example_envelope(&id))
        .expect("202");
    let waiter = {
        let client = node.client();
        let id = id.clone();
        std::thread::spawn(move || client.wait(id.as_str(), Duration::from_secs(30)))
    };
    // Let the waiter meet the trimmed feed and block on the feed (if it has not yet, it finds
    // the job ended on its first look: the assertions below hold either way).
    std::thread::sleep(Duration::from_millis(300));
    node.ingest();
    assert_eq!(
        node.finish_next(json!({"state": "present"})).as_deref(),
        Some(id.as_str())
    );
    let view = waiter.join().expect("the waiter").expect("the job ended");
    assert_eq!(view.state, JobState::Succeeded);

    let client = node.client();
    for id in &ended {
        let view = client
            .wait(id.as_str(), Duration::from_secs(5))
            .expect("an ended job");
        assert_eq!(view.state, JobState::Succeeded);
    }
}

/// Every event after `after`, page by page; and how many pages were cut at the byte budget.
fn whole_feed(client: &client::NodeClient, mut after: i64) -> (Vec<registry::Event>, usize) {
    let (mut events, mut cut) = (Vec::new(), 0);
    for _ in 0..1000 {
        let page = client.events(after, 0, 1000).expect("the feed");
        if page.events.is_empty() {
            assert!(!page.truncated);
            return (events, cut);
        }
        cut += usize::from(page.truncated);
        after = page.next;
        events.extend(page.events);
    }
    panic!("the feed never ended");
}

/// Submits the example job, runs it to `end`, and returns its id, its view and the whole feed.
fn one_job_ended(
    node: &Node,
    end: Result<Value, registry::OpError>,
) -> (registry::Hex32, registry::JobView, Vec<registry::Event>) {
    let client = node.client();
    let id = hex32();
    client.submit(&node.example_envelope(&id)).expect("202");
    node.ingest();
    node.end_next(end).expect("a job ran");
    let view = client.job(id.as_str()).expect("the job");
    (id, view, whole_feed(&client, 0).0)
}

#[test]
fn a_succeeded_jobs_event_carries_the_result_its_job_view_shows() {
    let node = Node::start();
    let client = node.client();
    let result = json!({"state": "present", "uid": 1001});
    let (id, view, events) = one_job_ended(&node, Ok(result.clone()));
    assert_eq!(view.result, Some(result));
    let mine: Vec<_> = events
        .iter()
        .filter(|e| e.request_id.as_deref() == Some(id.as_str()))
        .collect();
    let states: Vec<_> = mine.iter().map(|e| e.state.expect("a job state")).collect();
    assert_eq!(
        states,
        [JobState::Queued, JobState::Running, JobState::Succeeded]
    );
    for event in &mine[..2] {
        assert_eq!((&event.result, &event.error), (&None, &None), "{event:?}");
    }
    assert_eq!(mine[2].result, view.result);
    assert_eq!(mine[2].error, None);
    // On the wire: `result` beside the state, and no `result` or `error` key elsewhere.
    let raw = client
        .request("GET", "/v1/events?after=0&limit=1000", None, &[])
        .expect("the feed")
        .json()
        .expect("JSON");
    for event in raw["events"].as_array().expect("events") {
        let terminal = event["state"] == "succeeded";
        assert_eq!(event.get("result").is_some(), terminal, "{event}");
        assert!(event.get("error").is_none(), "{event}");
    }
}

#[test]
fn a_failed_jobs_event_carries_its_error_code_and_field() {
    let node = Node::start();
    let error = registry::OpError::from(registry::FieldError::new(
        "invalid_field",
        "resource.name",
        "taken by another account",
    ));
    let (id, view, events) = one_job_ended(&node, Err(error.clone()));
    assert_eq!(view.error.as_ref(), Some(&error));
    let failed = events
        .iter()
        .find(|e| e.request_id.as_deref() == Some(id.as_str()) && e.state == Some(JobState::Failed))
        .expect("the failed event");
    let carried = failed.error.as_ref().expect("the event carries the error");
    assert_eq!(carried, &error);
    assert_eq!(carried.code, "invalid_field");
    assert!(
        carried.message.starts_with("resource.name: "),
        "{carried:?}"
    );
    assert_eq!(failed.result, None);
}

#[test]
fn a_page_over_the_byte_budget_is_cut_and_the_next_page_continues_without_losing_an_event() {
    let node = Node::start();
    let client = node.client();
    let start = client.events(0, 0, 1000).expect("the feed").next;
    // Each result a little over a third of the budget: two fit in a page, a third does not.
    let big = "x".repeat(registry::EVENTS_PAGE_RESULT_BYTES / 3 + 1);
    let ids: Vec<_> = (0..5).map(|_| hex32()).collect();
    for id in &ids {
        // Each for its own resource, so none supersedes another.
        let mut envelope = node.example_envelope(id);
        envelope["resource"]["id"] = json!(hex32());
        client.submit(&envelope).expect("202");
    }
    node.ingest();
    for (i, id) in ids.iter().enumerate() {
        let ran = node.finish_next(json!({"state": "present", "n": i, "pad": big}));
        assert_eq!(ran.as_deref(), Some(id.as_str()));
    }
    // One page from the start: cut before the third result, short of its limit.
    let first = client.events(start, 0, 1000).expect("a page");
    assert!(first.truncated);
    let results = first.events.iter().filter(|e| e.result.is_some()).count();
    assert_eq!(results, 2, "{} events", first.events.len());
    assert_eq!(first.next, first.events.last().expect("events").cursor);
    let (events, cut) = whole_feed(&client, start);
    assert_eq!(
        cut, 2,
        "five results of a third of the budget take three pages"
    );
    // Nothing lost, nothing twice: consecutive cursors, every job's three events, each
    // result whole.
    let cursors: Vec<i64> = events.iter().map(|e| e.cursor).collect();
    assert_eq!(cursors, (start + 1..=start + 15).collect::<Vec<_>>());
    for (i, id) in ids.iter().enumerate() {
        let done = events
            .iter()
            .find(|e| {
                e.request_id.as_deref() == Some(id.as_str()) && e.state == Some(JobState::Succeeded)
            })
            .expect("each job's final event");
        assert_eq!(done.result.as_ref().expect("its result")["n"], i);
        assert_eq!(
            done.result.as_ref().expect("its result")["pad"],
            big.as_str()
        );
    }
    // A single result over the whole budget still makes a page of one event.
    let huge = "y".repeat(registry::EVENTS_PAGE_RESULT_BYTES + 1);
    let id = hex32();
    client.submit(&node.example_envelope(&id)).expect("202");
    node.ingest();
    node.finish_next(json!({"state": "present", "pad": huge}));
    let page = client.events(start + 17, 0, 1000).expect("a page");
    assert_eq!(page.events.len(), 1);
    assert!(page.events[0].result.is_some());
    assert!(!page.truncated, "nothing follows the one event");
}

// ---------------------------------------------------------------------------------------
// Pinning.

#[test]
fn wrong_pin_is_refused_before_any_request_is_sent() {
    let node = Node::start();
    let wrong = node.client_with(Some(&node.key), &"00".repeat(32));
    let envelope = node.example_envelope(&hex32());
    match wrong.submit(&envelope) {
        Err(ClientError::Tls(TlsError::PinMismatch {
            expected,
            presented,
        })) => {
            assert_eq!(expected, "00".repeat(32));
            assert_eq!(presented, node.pin);
        }
        other => panic!("expected a pin mismatch, got {other:?}"),
    }
    assert!(matches!(
        wrong.health(),
        Err(ClientError::Tls(TlsError::PinMismatch { .. }))
    ));
    assert_eq!(node.inbox_len(), 0, "the server saw no request");
    // The same request with the right pin goes through, so the pin was the only difference.
    let upper = node.client_with(Some(&node.key), &node.pin.to_uppercase());
    upper.submit(&envelope).expect("202 with the right pin");
    assert_eq!(node.inbox_len(), 1);
    // The same with a key pin: another key's is refused (the node's key pin is presented),
    // the node's goes through.
    let other_key = format!("spki-sha256:{}", "00".repeat(32));
    match node.client_with(Some(&node.key), &other_key).health() {
        Err(ClientError::Tls(TlsError::PinMismatch {
            expected,
            presented,
        })) => {
            assert_eq!(expected, other_key);
            assert_eq!(presented, node.spki_pin);
        }
        other => panic!("expected a pin mismatch, got {other:?}"),
    }
    assert!(matches!(
        node.client_with(Some(&node.key), &node.spki_pin).health(),
        Ok((200, _))
    ));
}

#[test]
fn oversized_or_too_many_headers_are_refused_not_served() {
    let node = Node::start();
    let client = node.client();
    let big = "x".repeat(20 * 1024);
    let too_many: Vec<(String, String)> = (0..100)
        .map(|i| (format!("X-Filler-{i}"), "1".to_owned()))
        .collect();
    let too_many: Vec<(&str, &str)> = too_many
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    for headers in [vec![("X-Big", big.as_str())], too_many] {
        match client.request("GET", "/v1/health", None, &headers) {
            // hyper refuses the head itself (431) before any handler runs.
            Ok(resp) => assert_eq!(resp.status, 431),
            // Or it closed the connection with part of the head unread.
            Err(ClientError::Io(_) | ClientError::Http(_)) => {}
            Err(e) => panic!("unexpected {e:?}"),
        }
    }
    // The server is fine afterwards.
    assert_eq!(client.health().expect("health").0, 200);
}

#[test]
fn an_idle_connection_the_server_closed_is_replaced_transparently() {
    // hyper closes a keep-alive connection that sends no request head within the header read
    // timeout: the client's pooled connection is then dead, and the next request must not fail.
    let node = Node::start_with(api::Limits {
        header_read_timeout: Duration::from_millis(400),
        ..api::Limits::default()
    });
    let client = node.client();
    for _ in 0..3 {
        assert_eq!(client.health().expect("health").0, 200);
        std::thread::sleep(Duration::from_millis(1200));
    }
    assert_eq!(
        client.connections_opened(),
        3,
        "each pause outlived the connection"
    );
    // A connection that is still open is reused.
    for _ in 0..50 {
        assert_eq!(
            client
                .request("GET", "/v1/catalogue", None, &[])
                .expect("an answer")
                .status,
            200
        );
    }
    assert_eq!(
        client.connections_opened(),
        4,
        "50 requests in a row share one connection"
    );
}

// ---------------------------------------------------------------------------------------
// Node scope and the audit trail.

#[test]
fn node_scope_request_for_another_node_is_400_wrong_node_and_nothing_is_written() {
    let node = Node::start();
    let client = node.client();
    let op = declarations::registry()
        .operations()
        .find(|op| op.scope() == registry::Scope::Node)
        .expect("the registry has a node-scope operation");
    let body = |node_id: &str| {
        json!({"request_id": hex32(), "action": op.name(), "node_id": node_id,
               "resource": op.example()})
    };
    let resp = post_json(&client, &body(hex32().as_str()));
    assert_eq!(resp.status, 400);
    assert_eq!(
        error_body(&resp),
        ("wrong_node".to_owned(), "node_id".to_owned())
    );
    assert_eq!(
        node.inbox_len(),
        0,
        "a request for another node was written"
    );
    // The same request for this node is received.
    let resp = post_json(&client, &body(node.node_id.as_str()));
    assert_eq!(resp.status, 202);
    assert_eq!(node.inbox_len(), 1);
    // A tenant envelope naming a node-scope operation is no way around the check.
    let resp = post_json(
        &client,
        &json!({"request_id": hex32(), "operation": op.name(), "resource": op.example()}),
    );
    assert_eq!(resp.status, 400);
    assert_eq!(error_body(&resp).0, "unknown_operation");
    assert_eq!(node.inbox_len(), 1);
}

#[test]
fn audit_endpoint_pages_root_s_records_and_refuses_bad_queries() {
    let node = Node::start();
    let client = node.client();
    let empty = client.request("GET", "/v1/audit", None, &[]).unwrap();
    assert_eq!(empty.status, 200);
    assert_eq!(empty.json().unwrap(), json!({"entries": [], "next": 0}));
    // A node-scope request admitted by root leaves a record the API serves.
    let op = declarations::registry()
        .operations()
        .find(|op| op.scope() == registry::Scope::Node)
        .expect("the registry has a node-scope operation");
    let request_id = hex32();
    let resp = post_json(
        &client,
        &json!({"request_id": request_id, "action": op.name(), "node_id": node.node_id,
                "resource": op.example()}),
    );
    assert_eq!(resp.status, 202);
    assert_eq!(node.ingest().admitted, 1);
    let page = client
        .request("GET", "/v1/audit?after=0&limit=10", None, &[])
        .unwrap()
        .json()
        .unwrap();
    let entries = page["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{page}");
    assert_eq!(entries[0]["request_id"], request_id.as_str());
    assert_eq!(
        entries[0]["detail"],
        json!({"kind": "node_request", "action": op.name(), "stage": "admitted", "code": null})
    );
    assert_eq!(page["next"], entries[0]["seq"]);
    for query in ["limit=0", "limit=1001", "after=-1", "wait=1", "after=x"] {
        let resp = client
            .request("GET", &format!("/v1/audit?{query}"), None, &[])
            .unwrap();
        assert_eq!(resp.status, 400, "{query}");
        assert_eq!(error_body(&resp).0, "invalid_query", "{query}");
    }
    let resp = client
        .request(
            "GET",
            "/v1/audit",
            None,
            &[("authorization", "Bearer nope")],
        )
        .unwrap();
    assert_eq!(resp.status, 401);
}
