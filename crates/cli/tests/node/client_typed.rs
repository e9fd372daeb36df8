//! The typed client against the real API over pinned HTTPS, with the real `layerone-runner`
//! applying the jobs: requests built from the operations' own request types, results read back
//! as the operations' own result types, and node administrator requests that need the exact
//! node id.

use crate::common;

use std::time::Duration;

use client::{ClientError, OpOutcome};
use common::*;
use declarations::account::{EnsureAccount, EnsureAccountRequest};
use declarations::sudo::{SetSudoAllowlist, SetSudoAllowlistRequest};
use registry::{Hex32, JobState};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(30);

fn hex(n: u64) -> Hex32 {
    id(n).parse().unwrap()
}

fn account(account: u64, username: &str) -> EnsureAccountRequest {
    serde_json::from_value(json!({"id": id(account), "username": username, "shell": "bash"}))
        .unwrap()
}

fn allowlist(generation: u64) -> SetSudoAllowlistRequest {
    serde_json::from_value(json!({"id": id(0x5d), "generation": generation, "users": []})).unwrap()
}

#[test]
fn a_typed_ensure_account_round_trip_returns_the_typed_result_with_the_uid() {
    let node = Node::new();
    let api = start_api(&node);
    let received = api
        .client
        .submit_op::<EnsureAccount>(&hex(1), &account(10, "shop1"))
        .unwrap();
    assert_eq!(
        (received.operation.as_str(), received.state),
        ("ensure_account", JobState::Received)
    );
    node.pass();
    let outcome = api.client.wait_op::<EnsureAccount>(&hex(1), WAIT).unwrap();
    let OpOutcome::Succeeded(result) = outcome else {
        panic!("ensure_account did not succeed: {outcome:?}");
    };
    assert_eq!(result.username.as_deref(), Some("shop1"));
    let passwd = std::fs::read_to_string(node.path("/etc/passwd")).unwrap();
    let uid = passwd
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f[0] == "shop1").then(|| f[2].parse::<u32>().unwrap())
        })
        .expect("shop1 is in /etc/passwd");
    assert_eq!(result.uid, Some(uid));
    assert_eq!(result.home.as_deref(), Some("/home/shop1"));
}

#[test]
fn a_failed_typed_job_gives_the_typed_error() {
    let node = Node::new();
    let api = start_api(&node);
    api.client
        .submit_op::<EnsureAccount>(&hex(1), &account(10, "shop1"))
        .unwrap();
    node.pass();
    // Another account with the same user name: admitted, then refused by the operation.
    api.client
        .submit_op::<EnsureAccount>(&hex(2), &account(11, "shop1"))
        .unwrap();
    node.pass();
    match api.client.wait_op::<EnsureAccount>(&hex(2), WAIT).unwrap() {
        OpOutcome::Failed(error) => {
            assert_eq!(error.code, "username_taken");
            assert!(!error.retryable);
        }
        other => panic!("expected the typed error, got {other:?}"),
    }
    // Reading a job as another operation's result is refused, not misparsed.
    let err = api
        .client
        .wait_op::<SetSudoAllowlist>(&hex(1), WAIT)
        .unwrap_err();
    assert!(matches!(err, ClientError::Unexpected(_)), "{err:?}");
}

/// The feed's final events read as the same typed outcomes as the job views, which is what
/// lets `wait_op` end on the event instead of reading the job again.
#[test]
fn the_final_events_give_the_same_typed_outcomes_as_the_job_views() {
    let node = Node::new();
    let api = start_api(&node);
    let cursor = api.client.events(0, 0, 1000).unwrap().next;
    api.client
        .submit_op::<EnsureAccount>(&hex(1), &account(10, "shop1"))
        .unwrap();
    // Waiting from before the job ran: it ends on the job's final event.
    let waiter = {
        let client = client::NodeClient::new(&api.url, Some(api.key.clone()), &api.pin).unwrap();
        std::thread::spawn(move || client.wait_op::<EnsureAccount>(&hex(1), WAIT))
    };
    node.pass();
    let waited = waiter.join().unwrap().unwrap();
    api.client
        .submit_op::<EnsureAccount>(&hex(2), &account(11, "shop1"))
        .unwrap();
    node.pass();
    let events = api.client.events(cursor, 0, 1000).unwrap().events;
    for (id, kind) in [(hex(1), JobState::Succeeded), (hex(2), JobState::Failed)] {
        let event = events
            .iter()
            .find(|e| e.request_id.as_deref() == Some(id.as_str()) && e.state == Some(kind))
            .unwrap_or_else(|| panic!("no {kind:?} event for {id}: {events:?}"));
        let view = api.client.job(id.as_str()).unwrap();
        let from_event = client::typed::event_outcome::<EnsureAccount>(event).unwrap();
        // The result types compare by what they show.
        let from_view = client::typed::outcome::<EnsureAccount>(&view).unwrap();
        assert_eq!(format!("{from_event:?}"), format!("{from_view:?}"));
        if kind == JobState::Succeeded {
            assert_eq!(format!("{from_event:?}"), format!("{waited:?}"));
            assert!(matches!(from_event, OpOutcome::Succeeded(_)));
        } else {
            assert!(
                matches!(&from_event, OpOutcome::Failed(e) if e.code == "username_taken"),
                "{from_event:?}"
            );
        }
    }
}

#[test]
fn a_node_scope_operation_is_refused_through_the_tenant_call_before_anything_is_sent() {
    let node = Node::new();
    let api = start_api(&node);
    let before = api.client.connections_opened();
    // The tenant-scope call has no node id to give, so it refuses a node-scope operation.
    let err = api
        .client
        .submit_op::<SetSudoAllowlist>(&hex(3), &allowlist(1))
        .unwrap_err();
    assert!(
        matches!(
            err,
            ClientError::Scope {
                operation: "set_sudo_allowlist",
                scope: "node"
            }
        ),
        "{err:?}"
    );
    // And the node-scope call refuses a tenant operation.
    let err = api
        .client
        .submit_node_op::<EnsureAccount>(&hex(4), &node.node_id, &account(10, "shop1"))
        .unwrap_err();
    assert!(matches!(err, ClientError::Scope { .. }), "{err:?}");
    assert_eq!(
        api.client.connections_opened(),
        before,
        "a refused call reached the network"
    );
    node.pass();
    for req in [3, 4] {
        assert_eq!(node.job_state(&id(req)), None, "job {req} exists");
    }
}

#[test]
fn a_node_scope_request_for_another_node_id_gets_wrong_node() {
    let node = Node::new();
    let api = start_api(&node);
    let err = api
        .client
        .submit_node_op::<SetSudoAllowlist>(&hex(5), &hex(0xbad), &allowlist(1))
        .unwrap_err();
    assert_eq!(
        (err.status(), err.api_code()),
        (Some(400), Some("wrong_node"))
    );
    assert!(
        matches!(&err, ClientError::Api { field, .. } if field == "node_id"),
        "{err:?}"
    );
    // The same request for this node's id is admitted as a node-scope job.
    let received = api
        .client
        .submit_node_op::<SetSudoAllowlist>(&hex(6), &node.node_id, &allowlist(1))
        .unwrap();
    assert_eq!(received.operation, "set_sudo_allowlist");
    node.pass();
    assert_eq!(
        node.job_state(&id(5)),
        None,
        "a refused request became a job"
    );
    assert!(node.job_state(&id(6)).is_some_and(JobState::is_terminal));
}
