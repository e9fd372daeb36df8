//! The node administrator scope and the audit trail, end to end: requests admitted as the API
//! admits them (or through the real API over HTTPS), applied by the real `layerone-runner`
//! binary on a Sim sysroot (with the real `visudo` where it says so), and the audit trail read
//! back through the API.

use crate::common;
use crate::common::node_admin;

use std::os::unix::fs::PermissionsExt;

use common::*;
use node_admin::seed_admins;
use registry::JobState;
use serde_json::{Value, json};

/// The allowlist's id in these tests.
const LIST: u64 = 0x5d;
const HASH_SALT: &str = "$6$saltsalt$";

fn set_list(
    node_id: &registry::Hex32,
    req: u64,
    list: u64,
    generation: u64,
    users: &[&str],
) -> Value {
    json!({"request_id": id(req), "action": "set_sudo_allowlist", "node_id": node_id,
           "resource": {"id": id(list), "generation": generation, "users": users}})
}

fn remove_list(node_id: &registry::Hex32, req: u64, generation: u64) -> Value {
    json!({"request_id": id(req), "action": "remove_sudo_allowlist", "node_id": node_id,
           "resource": {"id": id(LIST), "generation": generation}})
}

fn read_events(node_id: &registry::Hex32, req: u64, cursor: Option<&Value>, limit: u64) -> Value {
    let mut resource = json!({"id": id(0xe7), "limit": limit});
    if let Some(cursor) = cursor {
        resource["cursor"] = cursor.clone();
    }
    json!({"request_id": id(req), "action": "read_sudo_events", "node_id": node_id,
           "resource": resource})
}

/// Submits one request, runs a pass, and returns the job.
fn run_one(node: &mut Node, body: &Value) -> registry::JobView {
    node.submit(body);
    node.pass();
    let request_id = body["request_id"].as_str().unwrap();
    node.state()
        .job(request_id)
        .unwrap()
        .expect("the job exists")
}

fn error_code(job: &registry::JobView) -> String {
    assert_eq!(job.state, JobState::Failed, "{job:?}");
    job.error.as_ref().unwrap().code.to_string()
}

fn dropin(node: &Node) -> std::path::PathBuf {
    node.path(node.provider.sudo_layout().dropin)
}

#[test]
fn sudo_allowlist_drop_in_passes_real_visudo_and_stale_or_invalid_changes_are_refused() {
    testkit::require_visudo();
    let mut node = Node::new();
    let nid = node.node_id.clone();
    node.extra_real.push("visudo");
    seed_admins(&node);

    let job = run_one(&mut node, &set_list(&nid, 1, LIST, 2, &["alice", "bob"]));
    assert_eq!(job.state, JobState::Succeeded, "{job:?}");
    let result = job.result.unwrap();
    assert_eq!(result["users"], json!(["alice", "bob"]));
    assert_eq!(result["generation"], 2);
    assert_eq!(result["admin_group"], "sudo");
    let installed = std::fs::read_to_string(dropin(&node)).unwrap();
    let rules: Vec<&str> = installed.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        rules,
        [
            "Defaults logfile=\"/var/log/layerone/sudo.log\", log_year, loglinelen=0",
            "%sudo ALL=(ALL:ALL) !ALL",
            "alice ALL=(ALL:ALL) ALL",
            "bob ALL=(ALL:ALL) ALL",
        ]
    );
    let mode = std::fs::metadata(dropin(&node))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o440);
    assert!(node.path("/var/log/layerone").is_dir());
    let visudo: Vec<_> = node
        .audit_records()
        .into_iter()
        .filter(|r| r.program == "visudo")
        .collect();
    assert_eq!(visudo.len(), 1);
    assert_eq!(
        visudo[0].backend, "real",
        "the real visudo checked the drop-in"
    );

    // Each refused change leaves the installed drop-in exactly as it was.
    let refused: [(Value, &str); 6] = [
        (set_list(&nid, 2, LIST, 2, &["alice"]), "stale_generation"),
        (set_list(&nid, 3, LIST, 1, &["alice"]), "stale_generation"),
        (set_list(&nid, 4, LIST, 3, &["eve"]), "sudo_user_not_admin"),
        (
            set_list(&nid, 5, LIST, 3, &["svc"]),
            "sudo_user_uid_out_of_range",
        ),
        (
            set_list(&nid, 6, LIST, 3, &["mallory"]),
            "sudo_user_missing",
        ),
        (
            set_list(&nid, 7, LIST + 1, 9, &["alice"]),
            "allowlist_id_mismatch",
        ),
    ];
    for (body, code) in refused {
        let job = run_one(&mut node, &body);
        assert_eq!(error_code(&job), code, "{body}");
        assert_eq!(std::fs::read_to_string(dropin(&node)).unwrap(), installed);
    }

    // Removal deletes the drop-in and keeps the generation: an older set stays refused.
    let job = run_one(&mut node, &remove_list(&nid, 8, 4));
    assert_eq!(job.state, JobState::Succeeded, "{job:?}");
    assert_eq!(job.result.unwrap()["state"], "absent");
    assert!(!dropin(&node).exists());
    let job = run_one(&mut node, &set_list(&nid, 9, LIST, 4, &["alice"]));
    assert_eq!(error_code(&job), "stale_generation");
    assert!(!dropin(&node).exists());
    let job = run_one(&mut node, &set_list(&nid, 10, LIST, 5, &["alice"]));
    assert_eq!(job.state, JobState::Succeeded, "{job:?}");
    assert!(
        std::fs::read_to_string(dropin(&node))
            .unwrap()
            .contains("\nalice ALL=(ALL:ALL) ALL\n")
    );
    node.check_converged();
    node_admin::check_sudo_converged(&node);
}

#[test]
fn a_tenant_purge_leaves_the_node_allowlist_alone() {
    let mut node = Node::new();
    let nid = node.node_id.clone();
    seed_admins(&node);
    node.submit(&ensure_account(1, 10, "shop1"));
    node.submit(&set_list(&nid, 2, LIST, 1, &["alice"]));
    node.pass();
    node.submit(&account_op(3, "remove_account", 10));
    node.pass();
    assert_eq!(node.job_state(&id(3)), Some(JobState::Succeeded));
    let rows = node.state().all_resources().unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].owner, registry::Owner::Node);
    assert!(dropin(&node).exists());
    node.check_converged();
    node_admin::check_sudo_converged(&node);
}

#[test]
fn read_sudo_events_pages_the_log_with_a_cursor_and_restarts_after_rotation() {
    let mut node = Node::new();
    let nid = node.node_id.clone();
    let log = node.path("/var/log/layerone/sudo.log");
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    std::fs::write(
        &log,
        "Nov 29 08:44:57 2026 : alice : TTY=pts/0 ; PWD=/home/alice ; USER=root ; COMMAND=/usr/bin/id\n\
         Nov 29 08:45:01 2026 : eve : user NOT in sudoers ; TTY=pts/1 ; PWD=/tmp ; USER=root ; COMMAND=/bin/sh -c echo\x1b[31m\n\
         this is not a sudo line\n\
         Nov 29 08:46:00 2026 : bob : PWD=/ ; USER=root ; COMMAND=/usr/bin/true\n",
    )
    .unwrap();

    let job = run_one(&mut node, &read_events(&nid, 1, None, 2));
    assert_eq!(job.state, JobState::Succeeded, "{job:?}");
    let page = job.result.unwrap();
    let entries = page["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["kind"], "event");
    assert_eq!(entries[0]["user"], "alice");
    assert_eq!(entries[0]["tty"], "pts/0");
    assert_eq!(entries[0]["runas_user"], "root");
    assert_eq!(entries[0]["command"], "/usr/bin/id");
    assert_eq!(entries[1]["message"], "user NOT in sudoers");
    assert_eq!(
        entries[1]["command"], "/bin/sh -c echo[31m",
        "control characters are stripped"
    );
    assert_eq!(page["restarted"], false);
    let cursor = page["next_cursor"].clone();

    let job = run_one(&mut node, &read_events(&nid, 2, Some(&cursor), 100));
    let page = job.result.unwrap();
    let entries = page["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert_eq!(entries[0]["kind"], "unparseable", "garbage is reported");
    assert_eq!(entries[0]["line"], "this is not a sudo line");
    assert_eq!(entries[1]["user"], "bob");
    let end = page["next_cursor"].clone();
    assert_eq!(
        end["offset"],
        std::fs::metadata(&log).unwrap().len(),
        "the cursor is at the end of the log"
    );

    // Nothing new: an empty page, the same cursor.
    let job = run_one(&mut node, &read_events(&nid, 3, Some(&end), 100));
    let page = job.result.unwrap();
    assert_eq!(page["entries"], json!([]));
    assert_eq!(page["next_cursor"], end);

    // Rotated: the old cursor names another file, so the new log is read from its start.
    std::fs::rename(&log, log.with_extension("log.1")).unwrap();
    std::fs::write(
        &log,
        "Nov 30 00:00:01 2026 : alice : PWD=/ ; USER=root ; COMMAND=/usr/bin/uptime\n",
    )
    .unwrap();
    let job = run_one(&mut node, &read_events(&nid, 4, Some(&end), 100));
    let page = job.result.unwrap();
    assert_eq!(page["restarted"], true);
    assert_eq!(page["entries"][0]["command"], "/usr/bin/uptime");
    // Reads leave no resource behind.
    assert!(node.state().all_resources().unwrap().is_empty());
}

#[test]
fn node_scope_row_for_another_node_in_the_inbox_fails_wrong_node_and_changes_nothing() {
    let mut node = Node::new();
    let nid = node.node_id.clone();
    seed_admins(&node);
    let mut body = set_list(&nid, 1, LIST, 1, &["alice"]);
    body["node_id"] = json!(id(0xbad));
    node.submit_raw(&id(1), "set_sudo_allowlist", body.to_string().as_bytes());
    node.pass();
    let state = node.state();
    let job = state.job(&id(1)).unwrap().expect("a failed job");
    assert_eq!(error_code(&job), "wrong_node");
    assert!(
        !dropin(&node).exists(),
        "root applied a request for another node"
    );
    assert!(state.all_resources().unwrap().is_empty());
    assert_eq!(
        node.audit_count(),
        0,
        "a request for another node ran a program"
    );
    let trail = state.audit(0, 100).unwrap();
    assert_eq!(trail.len(), 1, "{trail:?}");
    assert_eq!(trail[0].request_id.as_deref(), Some(id(1).as_str()));
    assert_eq!(
        trail[0].detail,
        registry::AuditDetail::NodeRequest {
            action: "set_sudo_allowlist".into(),
            stage: registry::NodeRequestStage::Rejected,
            code: Some("wrong_node".into()),
        }
    );
}

fn post(api: &Api, body: &Value) -> (u16, Value) {
    let resp = api
        .client
        .request("POST", "/v1/jobs", Some(body.to_string().as_bytes()), &[])
        .expect("an answer");
    (resp.status, resp.json().unwrap_or(Value::Null))
}

#[test]
fn audit_trail_through_the_api_shows_invocations_with_secrets_redacted_and_node_requests() {
    let node = Node::new();
    let nid = node.node_id.clone();
    seed_admins(&node);
    let api = start_api(&node);
    let hash = format!("{HASH_SALT}{}", "Q".repeat(86));
    let password = json!({"request_id": id(2), "operation": "set_account_password",
                          "resource": {"id": id(10), "password_hash": hash}});
    // The password is for the same account (the same job key): submitted after the account
    // exists.
    assert_eq!(post(&api, &ensure_account(1, 10, "shop1")).0, 202);
    node.pass();
    for body in [password, set_list(&nid, 3, LIST, 1, &["alice"])] {
        assert_eq!(post(&api, &body).0, 202, "{body}");
    }
    // A request for another node is refused at the door, and nothing reaches the inbox.
    let mut other = set_list(&nid, 4, LIST, 2, &["alice"]);
    other["node_id"] = json!(id(0xbad));
    let (status, error) = post(&api, &other);
    assert_eq!((status, error["code"].as_str()), (400, Some("wrong_node")));
    assert_eq!(error["field"], "node_id");
    node.pass();
    for req in 1..=3 {
        assert_eq!(
            node.job_state(&id(req)),
            Some(JobState::Succeeded),
            "job {req}"
        );
    }
    assert_eq!(
        node.job_state(&id(4)),
        None,
        "a refused request became a job"
    );

    let resp = api
        .client
        .request("GET", "/v1/audit?limit=1000", None, &[])
        .unwrap();
    assert_eq!(resp.status, 200);
    let text = String::from_utf8(resp.body.clone()).unwrap();
    assert!(
        !text.contains(HASH_SALT),
        "the password hash reached the audit trail"
    );
    let page = resp.json().unwrap();
    let entries = page["entries"].as_array().unwrap();
    let of = |req: u64| -> Vec<&Value> {
        entries
            .iter()
            .filter(|e| e["request_id"] == id(req))
            .collect()
    };
    let programs = |req: u64| -> Vec<String> {
        of(req)
            .iter()
            .filter(|e| e["detail"]["kind"] == "invocation")
            .map(|e| e["detail"]["program"].as_str().unwrap().to_owned())
            .collect()
    };
    // The homes' file system is looked up, and its user quota (the simulator offers user
    // quotas) set and read back.
    assert_eq!(
        programs(1),
        ["findmnt", "groupadd", "useradd", "setquota", "repquota"]
    );
    assert_eq!(programs(2), ["usermod"]);
    let usermod = of(2)
        .iter()
        .find(|e| e["detail"]["kind"] == "invocation")
        .and_then(|e| e["detail"]["args"].as_array())
        .unwrap()
        .clone();
    let at = usermod.iter().position(|a| a == "--password").unwrap();
    assert_eq!(usermod[at + 1], "<redacted>");
    assert_eq!(programs(3), ["visudo"]);
    let stages: Vec<&str> = of(3)
        .iter()
        .filter(|e| e["detail"]["kind"] == "node_request")
        .map(|e| e["detail"]["stage"].as_str().unwrap())
        .collect();
    assert_eq!(stages, ["admitted", "succeeded"]);
    // A tenant request: its admission, then what it ran; every entry of a request says where
    // it came in.
    assert_eq!(of(1)[0]["detail"]["kind"], "request");
    assert_eq!(of(1)[0]["detail"]["stage"], "admitted");
    assert!(
        of(1)[1..]
            .iter()
            .all(|e| e["detail"]["kind"] == "invocation"),
        "tenant requests are audited by their admission and what they ran"
    );
    for req in 1..=3 {
        assert!(
            of(req).iter().all(|e| e["origin"] == json!({"via": "api"})),
            "request {req}: {:?}",
            of(req)
        );
    }
    let seqs: Vec<i64> = entries.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(page["next"], *seqs.last().unwrap());

    // Paging: two at a time from the start reads the same trail.
    let mut after = 0;
    let mut paged = Vec::new();
    for _ in 0..entries.len() {
        let resp = api
            .client
            .request(
                "GET",
                &format!("/v1/audit?after={after}&limit=2"),
                None,
                &[],
            )
            .unwrap();
        let page = resp.json().unwrap();
        let got = page["entries"].as_array().unwrap().clone();
        if got.is_empty() {
            assert_eq!(page["next"], after);
            break;
        }
        after = page["next"].as_i64().unwrap();
        paged.extend(got);
    }
    assert_eq!(&paged, entries);

    let unauthenticated = api
        .client
        .request(
            "GET",
            "/v1/audit",
            None,
            &[("authorization", "Bearer wrong")],
        )
        .unwrap();
    assert_eq!(unauthenticated.status, 401);
    let bad = api
        .client
        .request("GET", "/v1/audit?limit=0", None, &[])
        .unwrap();
    assert_eq!(bad.status, 400);
}

#[test]
fn a_replayed_older_generation_never_supersedes_a_queued_newer_one() {
    let mut node = Node::new();
    let nid = node.node_id.clone();
    seed_admins(&node);
    // Both arrive before the runner's next pass: the newer one is queued first.
    node.submit(&set_list(&nid, 1, LIST, 5, &["alice"]));
    node.submit(&set_list(&nid, 2, LIST, 4, &["bob"]));
    node.pass();
    let newer = node.state().job(&id(1)).unwrap().unwrap();
    assert_eq!(newer.state, JobState::Succeeded, "{newer:?}");
    let older = node.state().job(&id(2)).unwrap().unwrap();
    assert_eq!(error_code(&older), "stale_generation");
    let installed = std::fs::read_to_string(dropin(&node)).unwrap();
    assert!(
        installed.contains("\nalice ALL=(ALL:ALL) ALL\n"),
        "{installed}"
    );
    assert!(!installed.contains("bob"), "{installed}");
    node.check_converged();
    node_admin::check_sudo_converged(&node);
}

/// One HTTP/1.1 exchange on the API's local socket, as a session on the machine makes it.
fn local_request(
    socket: &std::path::Path,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    use std::io::{Read, Write};
    let mut stream = std::os::unix::net::UnixStream::connect(socket).expect("the local socket");
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, payload) = answer.split_once("\r\n\r\n").expect("a whole answer");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    (status, serde_json::from_str(payload).unwrap_or(Value::Null))
}

/// What a process of `uid` gets from the socket at `path`: python3 connects, sends a request
/// and prints `refused: <errno name>` or the bytes it read back (nothing when the node closed
/// the connection on it).
fn as_uid(uid: u32, path: &std::path::Path) -> String {
    use std::os::unix::process::CommandExt;
    let script = r#"
import errno, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("refused:", errno.errorcode[e.errno]); sys.exit(0)
try:
    s.sendall(b"GET /v1/audit HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    s.settimeout(10)
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
except OSError as e:
    data = ("error: " + errno.errorcode.get(e.errno, str(e))).encode()
print("read:", data.decode(errors="replace"))
"#;
    #[allow(clippy::disallowed_methods)] // Another uid's client: a real process of that uid.
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .uid(uid)
        .gid(uid)
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[test]
fn the_local_socket_admits_only_operators_and_its_requests_carry_the_callers_uid() {
    assert!(
        rustix::process::geteuid().is_root(),
        "this test checks the kernel's refusals of another uid: run it as root, as CI does"
    );
    let node = Node::new();
    let api = start_api(&node);
    let socket = api.local_socket.clone();
    let mode = std::fs::metadata(&socket).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o660, "the socket's mode");

    // Root, an operator: admitted without the key, and its uid is the request's origin.
    let (status, view) = local_request(
        &socket,
        "POST",
        "/v1/jobs",
        Some(&ensure_account(1, 10, "shop1")),
    );
    assert_eq!(status, 202, "{view}");
    node.pass();
    assert_eq!(node.job_state(&id(1)), Some(JobState::Succeeded));
    // A refused body is refused alike, and recorded nowhere.
    let mut bad = ensure_account(2, 11, "shop2");
    bad["resource"]["name"] = json!("Not A Name");
    let (status, error) = local_request(&socket, "POST", "/v1/jobs", Some(&bad));
    assert_eq!(status, 400, "{error}");
    assert_eq!(error["field"], "resource.name");

    // Another uid: the socket's mode refuses it at connect; with the mode opened up, the
    // peer check closes the connection before answering anything.
    let nobody = 65534;
    assert_eq!(as_uid(nobody, &socket), "refused: EACCES");
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    let got = as_uid(nobody, &socket);
    // Closed at once: it reads nothing, or its send or read meets the closed connection
    // (EPIPE, ECONNRESET), depending on who was quicker.
    assert!(
        got.starts_with("read:") && !got.contains("HTTP/"),
        "a non-operator got {got:?}"
    );

    let (status, page) = local_request(&socket, "GET", "/v1/audit?limit=1000", None);
    assert_eq!(status, 200);
    let entries = page["entries"].as_array().unwrap();
    let ours: Vec<&Value> = entries
        .iter()
        .filter(|e| e["request_id"] == id(1))
        .collect();
    assert!(ours.len() > 1, "{entries:?}");
    assert_eq!(ours[0]["detail"]["kind"], "request");
    assert!(
        ours.iter()
            .all(|e| e["origin"] == json!({"via": "local", "uid": 0})),
        "{ours:?}"
    );
    assert!(
        entries
            .iter()
            .all(|e| e["request_id"].is_null() || e["request_id"] == id(1)),
        "only the operator's one request reached the trail: {entries:?}"
    );
}
