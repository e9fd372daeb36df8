//! The fleet's assignment of modules, end to end: signed requests admitted as the API admits
//! them, applied by the real runner binary on a Sim sysroot whose fleet identity a test pins,
//! then the jobs of every module held to what was assigned and found ready.

use crate::common;

use common::*;
use nkeys::KeyPair;
use registry::{JobState, Module};
use serde_json::{Value, json};
use testkit::fleet::{seed_module_programs, sign_assignment, write_fleet_identity};

/// The node's name in its fleet, in these tests.
const NAME: &str = "web-1";
/// The assignment's id.
const ASSIGNMENT: u64 = 0xa55;

/// A fleet with its own key, whose identity the node pinned; every module's programs in place
/// unless the test says otherwise.
fn fleet_node(with_programs: bool) -> (Node, KeyPair) {
    let node = Node::new();
    let fleet = KeyPair::new_account();
    write_fleet_identity(&node.provider, NAME, &fleet.public_key()).unwrap();
    if with_programs {
        seed_module_programs(&node.provider).unwrap();
    }
    (node, fleet)
}

fn names(modules: &[Module]) -> Vec<&'static str> {
    modules.iter().map(|m| m.as_str()).collect()
}

/// The id the harness gives every node (`Node::new`): node-scope requests name it.
fn node_id() -> String {
    id(0xfeed)
}

/// `apply_assignment` request `req` with the signature given.
fn assignment_with(
    req: u64,
    name: &str,
    generation: u64,
    modules: &[Module],
    signature: &str,
) -> Value {
    json!({"request_id": id(req), "action": "apply_assignment", "node_id": node_id(),
           "resource": {"id": id(ASSIGNMENT), "node": name, "generation": generation,
                        "modules": names(modules), "signature": signature}})
}

/// `apply_assignment` request `req`, signed by `fleet` as the fleet signs it.
fn signed(fleet: &KeyPair, req: u64, generation: u64, modules: &[Module]) -> Value {
    let signature = sign_assignment(fleet, NAME, generation, modules);
    assignment_with(req, NAME, generation, modules, &signature)
}

/// Submits one request, runs a pass, and returns the job.
fn run_one(node: &mut Node, body: &Value) -> registry::JobView {
    node.submit(body);
    node.pass();
    job(node, body)
}

fn job(node: &Node, body: &Value) -> registry::JobView {
    node.state()
        .job(body["request_id"].as_str().unwrap())
        .unwrap()
        .expect("the job exists")
}

fn succeeded(node: &mut Node, body: &Value) -> Value {
    let job = run_one(node, body);
    assert_eq!(job.state, JobState::Succeeded, "{body}: {job:?}");
    job.result.unwrap()
}

/// The job's error, as (code, message).
fn refused(job: &registry::JobView) -> (String, String) {
    assert_eq!(job.state, JobState::Failed, "{job:?}");
    let error = job.error.as_ref().unwrap();
    (error.code.to_string(), error.message.clone())
}

/// The assignment as the API reads it before it admits a request.
fn assigned(node: &Node) -> Option<Vec<store::AssignedModule>> {
    store::StateReader::new(&node.layout.state_db())
        .assigned_modules()
        .unwrap()
}

fn module_status(module: &str, ready: bool, reason: Option<&str>) -> Value {
    json!({"module": module, "ready": ready, "reason": reason})
}

#[test]
fn a_signed_assignment_is_applied_and_reports_every_assigned_module_ready() {
    let (mut node, fleet) = fleet_node(true);
    node.pass();
    assert_eq!(assigned(&node), None, "outside a fleet: no assignment");
    let modules = [
        Module::Mail,
        Module::Web,
        Module::Php,
        Module::Mysql,
        Module::Web,
    ];
    let result = succeeded(&mut node, &signed(&fleet, 1, 3, &modules));
    let ready = |m| module_status(m, true, None);
    assert_eq!(
        result,
        json!({"node": NAME, "generation": 3,
               "modules": [ready("core"), ready("web"), ready("php"), ready("mysql"), ready("mail")]})
    );
    let schema = declarations::registry()
        .operation("apply_assignment")
        .unwrap()
        .validate_result(&result);
    assert!(schema.is_ok(), "{schema:?}");
    let read: Vec<Module> = assigned(&node)
        .expect("the assignment is recorded")
        .iter()
        .inspect(|m| assert!(m.ready && m.reason.is_none(), "{m:?}"))
        .map(|m| m.module)
        .collect();
    assert_eq!(
        read,
        [
            Module::Core,
            Module::Web,
            Module::Php,
            Module::Mysql,
            Module::Mail
        ]
    );

    // The assigned modules' operations run.
    succeeded(&mut node, &ensure_account(2, 10, "shop1"));
    succeeded(&mut node, &ensure_domain(3, 30, 10, "shop.example.com"));
    succeeded(&mut node, &ensure_db(4, 40, 10, "shop"));
    succeeded(
        &mut node,
        &ensure_mail_domain(5, 50, 10, "shop.example.com"),
    );

    // The same assignment again (a redelivery) is applied again; a newer one with fewer
    // modules takes the unused one away.
    succeeded(&mut node, &signed(&fleet, 6, 3, &modules));
    let fewer = [Module::Mail, Module::Web, Module::Mysql];
    let result = succeeded(&mut node, &signed(&fleet, 7, 4, &fewer));
    assert_eq!(result["generation"], 4);
    assert_eq!(
        result["modules"],
        json!([ready("core"), ready("web"), ready("mysql"), ready("mail")])
    );
    node.check_converged();
}

#[test]
fn a_bad_signature_another_nodes_name_or_a_stale_generation_is_refused_and_changes_nothing() {
    let (mut node, fleet) = fleet_node(true);
    let modules = [Module::Web, Module::Mail];
    succeeded(&mut node, &signed(&fleet, 1, 5, &modules));
    let applied = assigned(&node);

    let stranger = KeyPair::new_account();
    let other_modules = [Module::Web, Module::Mail, Module::Mysql];
    // Signed for generation 6 but sent with other modules: not what the fleet signed.
    let tampered = {
        let mut body = signed(&fleet, 4, 6, &modules);
        body["resource"]["modules"] = json!(names(&other_modules));
        body
    };
    let cases: Vec<(Value, &str)> = vec![
        (
            assignment_with(
                2,
                NAME,
                6,
                &modules,
                &sign_assignment(&stranger, NAME, 6, &modules),
            ),
            "invalid_signature",
        ),
        (
            assignment_with(3, NAME, 6, &modules, &"A".repeat(86)),
            "invalid_signature",
        ),
        (tampered, "invalid_signature"),
        (
            assignment_with(
                5,
                "web-2",
                6,
                &modules,
                &sign_assignment(&fleet, "web-2", 6, &modules),
            ),
            "wrong_fleet_node",
        ),
        (signed(&fleet, 6, 4, &modules), "stale_generation"),
        (signed(&fleet, 7, 5, &other_modules), "stale_generation"),
        (
            {
                let mut body = signed(&fleet, 8, 6, &modules);
                body["resource"]["id"] = json!(id(ASSIGNMENT + 1));
                body
            },
            "assignment_id_mismatch",
        ),
    ];
    for (body, code) in cases {
        let job = run_one(&mut node, &body);
        assert_eq!(refused(&job).0, code, "{body}");
        assert_eq!(assigned(&node), applied, "{body} changed the assignment");
    }

    // While a newer one is queued, an older one is refused at admission.
    node.submit(&signed(&fleet, 9, 8, &modules));
    node.submit(&signed(&fleet, 10, 7, &other_modules));
    node.pass();
    assert_eq!(node.job_state(&id(9)), Some(JobState::Succeeded));
    let older = node.state().job(&id(10)).unwrap().unwrap();
    assert_eq!(refused(&older).0, "stale_generation", "{older:?}");
    let now: Vec<Module> = assigned(&node).unwrap().iter().map(|m| m.module).collect();
    assert_eq!(now, [Module::Core, Module::Web, Module::Mail]);

    // A node that joined no fleet takes no assignment.
    let mut outside = Node::new();
    let job = run_one(&mut outside, &signed(&fleet, 1, 1, &modules));
    assert_eq!(refused(&job).0, "not_in_fleet");
    assert_eq!(assigned(&outside), None);
    node.check_converged();
}

#[test]
fn unassigning_mail_while_it_holds_mailboxes_is_refused_with_the_counts_and_changes_nothing() {
    let (mut node, fleet) = fleet_node(true);
    node.submit(&ensure_account(1, 10, "shop1"));
    node.pass();
    succeeded(
        &mut node,
        &ensure_mail_domain(2, 20, 10, "shop.example.com"),
    );
    node.submit(&ensure_mailbox(3, 30, 10, "shop.example.com", "info"));
    node.submit(&ensure_mailbox(4, 31, 10, "shop.example.com", "sales"));
    node.pass();
    assert_eq!(node.job_state(&id(4)), Some(JobState::Succeeded));
    let rows = node.state().all_resources().unwrap();

    // A node outside a fleet runs every module: its first assignment takes away what it
    // leaves out.
    let job = run_one(&mut node, &signed(&fleet, 5, 1, &[Module::Web]));
    let (code, message) = refused(&job);
    assert_eq!(code, "module_in_use");
    assert!(
        message.contains("mail: 1 mail_domain, 2 mailbox"),
        "{message}"
    );
    assert_eq!(assigned(&node), None);
    assert_eq!(node.state().all_resources().unwrap(), rows);

    // Assigned, then taken away by a newer generation: refused the same way.
    succeeded(
        &mut node,
        &signed(&fleet, 6, 1, &[Module::Web, Module::Mail]),
    );
    let applied = assigned(&node);
    let job = run_one(&mut node, &signed(&fleet, 7, 2, &[Module::Web]));
    let (code, message) = refused(&job);
    assert_eq!(code, "module_in_use");
    assert!(
        message.contains("mail: 1 mail_domain, 2 mailbox"),
        "{message}"
    );
    assert_eq!(assigned(&node), applied);
    assert_eq!(node.state().all_resources().unwrap().len(), rows.len() + 1);
    // The mail module still runs.
    succeeded(
        &mut node,
        &ensure_mailbox(8, 32, 10, "shop.example.com", "new"),
    );

    // Once its resources are gone, mail can be taken away.
    for (req, mailbox) in [(9, 30), (10, 31), (11, 32)] {
        node.submit(&mail_op(req, "remove_mailbox", mailbox, 10, json!({})));
    }
    node.pass();
    succeeded(
        &mut node,
        &mail_op(12, "remove_mail_domain", 20, 10, json!({})),
    );
    succeeded(&mut node, &signed(&fleet, 13, 2, &[Module::Web]));
    node.check_converged();
}

#[test]
fn an_operation_of_a_module_not_assigned_fails_module_not_assigned_before_its_handler() {
    let (mut node, fleet) = fleet_node(true);
    succeeded(&mut node, &signed(&fleet, 1, 1, &[Module::Web]));
    // core runs whether it is listed or not.
    succeeded(&mut node, &ensure_account(2, 10, "shop1"));
    succeeded(&mut node, &ensure_domain(3, 30, 10, "shop.example.com"));
    let audited = node.audit_count();

    let job = run_one(&mut node, &ensure_db(4, 40, 10, "shop"));
    let (code, message) = refused(&job);
    assert_eq!(code, "module_not_assigned");
    assert!(message.contains("mysql"), "{message}");
    let job = run_one(
        &mut node,
        &ensure_mail_domain(5, 50, 10, "shop.example.com"),
    );
    let (code, message) = refused(&job);
    assert_eq!(code, "module_not_assigned");
    assert!(message.contains("mail"), "{message}");

    // Nothing of either was made: no row, no database, no program run.
    let families: Vec<String> = node
        .state()
        .all_resources()
        .unwrap()
        .into_iter()
        .map(|r| r.family)
        .collect();
    assert!(
        !families
            .iter()
            .any(|f| f == "mysql_database" || f == "mail_domain"),
        "{families:?}"
    );
    assert!(
        testkit::sim_mariadb_contents(&node.provider)
            .unwrap()
            .databases
            .is_empty()
    );
    assert_eq!(node.audit_count(), audited, "a refused job ran a program");
    node.check_converged();
}

#[test]
fn an_assigned_module_whose_service_is_missing_is_not_ready_and_its_operations_fail_module_unavailable()
 {
    // Apache only: no Postfix, no Dovecot.
    let (mut node, fleet) = fleet_node(false);
    let apache = provider::Program::ApacheCtl
        .path(node.provider.platform())
        .unwrap();
    std::fs::create_dir_all(node.path(apache).parent().unwrap()).unwrap();
    std::fs::write(node.path(apache), "").unwrap();
    let modules = [Module::Web, Module::Mail];
    let result = succeeded(&mut node, &signed(&fleet, 1, 1, &modules));
    let reason = "Postfix is not installed (no /usr/sbin/postfix); \
                  Dovecot is not installed (no /usr/bin/doveconf)";
    assert_eq!(
        result["modules"],
        json!([
            module_status("core", true, None),
            module_status("web", true, None),
            module_status("mail", false, Some(reason)),
        ])
    );
    let mail = assigned(&node).unwrap().pop().unwrap();
    assert_eq!(
        (mail.module, mail.ready, mail.reason.as_deref()),
        (Module::Mail, false, Some(reason))
    );

    succeeded(&mut node, &ensure_account(2, 10, "shop1"));
    succeeded(&mut node, &ensure_domain(3, 30, 10, "shop.example.com"));
    let job = run_one(
        &mut node,
        &ensure_mail_domain(4, 40, 10, "shop.example.com"),
    );
    let (code, message) = refused(&job);
    assert_eq!(code, "module_unavailable");
    assert!(
        message.contains("mail") && message.contains(reason),
        "{message}"
    );

    // Once Postfix and Dovecot are there, the same assignment applied again finds mail
    // ready, and its operations run.
    seed_module_programs(&node.provider).unwrap();
    let result = succeeded(&mut node, &signed(&fleet, 5, 1, &modules));
    assert_eq!(result["modules"][2], module_status("mail", true, None));
    succeeded(
        &mut node,
        &ensure_mail_domain(6, 40, 10, "shop.example.com"),
    );
    node.check_converged();
}
