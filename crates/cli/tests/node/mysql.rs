//! The MariaDB families end to end against a real server: a throw-away `mariadbd` (its own
//! datadir and socket in a temporary directory), requests admitted as the API admits them,
//! the real runner applying them over the socket, and every effect checked in MariaDB itself,
//! including connecting as the tenant's user with its password.

use crate::common;

use common::*;
use registry::JobState;
use serde_json::{Value, json};
use testkit::MariadbServer;
use testkit::mysql::prelude::Queryable;
use testkit::mysql::{Conn, Error as MysqlError};

fn hash(server: &MariadbServer, password: &str) -> String {
    server
        .root_conn()
        .exec_first("SELECT PASSWORD(?)", (password,))
        .unwrap()
        .unwrap()
}

/// Runs one pass and returns the job's result, which must have succeeded.
fn done(node: &Node, req: u64) -> Value {
    let job = node.state().job(&id(req)).unwrap().expect("the job exists");
    assert_eq!(job.state, JobState::Succeeded, "{job:?}");
    serde_json::to_value(job.result).unwrap()
}

fn submit_pass(node: &mut Node, body: Value) -> Value {
    let req = u64::from_str_radix(body["request_id"].as_str().unwrap(), 16).unwrap();
    node.submit(&body);
    node.pass();
    done(node, req)
}

fn denied(result: Result<(), MysqlError>) -> bool {
    match result {
        Err(e) => e.to_string().contains("denied"),
        Ok(()) => false,
    }
}

/// Sum of data and index bytes of a schema, straight from information_schema.
fn schema_size(root: &mut Conn, schema: &str) -> u64 {
    root.exec_first::<u64, _, _>(
        "SELECT CAST(COALESCE(SUM(DATA_LENGTH + INDEX_LENGTH), 0) AS UNSIGNED) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?",
        (schema,),
    )
    .unwrap()
    .unwrap()
}

/// Everything MariaDB holds whose name starts with `prefix_`: databases, users, and
/// database-level grants.
fn owned_by(root: &mut Conn, prefix: &str) -> (Vec<String>, Vec<String>, Vec<String>) {
    let like = format!("{prefix}\\_%");
    let dbs: Vec<String> = root
        .exec(
            "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE ?",
            (&like,),
        )
        .unwrap();
    let users: Vec<String> = root
        .exec(
            "SELECT CONCAT(User, '@', Host) FROM mysql.user WHERE User LIKE ?",
            (&like,),
        )
        .unwrap();
    let grants: Vec<String> = root
        .exec(
            "SELECT CONCAT(User, '@', Host, ' on ', Db) FROM mysql.db WHERE User LIKE ? OR Db LIKE ?",
            (&like, format!("{prefix}\\\\\\_%")),
        )
        .unwrap();
    (dbs, users, grants)
}

#[test]
fn every_mysql_operation_against_a_real_server() {
    let server = MariadbServer::start();
    let mut root = server.root_conn();
    let mut node = Node::with_mariadb(server.socket());
    let secret = hash(&server, "secret");

    // Created.
    submit_pass(&mut node, ensure_account(1, 10, "shop1"));
    let db = submit_pass(&mut node, ensure_db(2, 50, 10, "main"));
    assert_eq!(db["name"], "shop1_main");
    assert_eq!(db["collation"], "utf8mb4_unicode_ci");
    let shown: Option<(String, String)> = root
        .query_first("SELECT DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'shop1_main'")
        .unwrap();
    assert_eq!(shown, Some(("utf8mb4".into(), "utf8mb4_unicode_ci".into())));
    // Hostile rows written straight into the inbox (past the API) fail as jobs in the
    // runner's own validation; MariaDB does not see them.
    let before = owned_by(&mut root, "shop1");
    let audit_dir = node.layout.root().join("log");
    let audited = provider::read_audit_log(&audit_dir).unwrap().len();
    let hostile: Vec<(u64, Value)> = vec![
        (200, {
            let mut b = ensure_db(200, 90, 10, "x");
            b["resource"]["name"] = json!("x`; DROP DATABASE shop1_main; --");
            b
        }),
        (201, {
            let mut b = ensure_db_user(201, 91, 10, "u", &secret);
            b["resource"]["name"] = json!("u'@'%");
            b
        }),
        (202, {
            let mut b = ensure_db_user(202, 92, 10, "v", &secret);
            b["resource"]["password_hash"] = json!("secret' OR '1'='1");
            b
        }),
        (203, {
            let mut b = ensure_db_user(203, 93, 10, "w", &secret);
            b["resource"]["hosts"] = json!(["localhost\r\nGRANT ALL"]);
            b
        }),
        (204, {
            let mut b = ensure_grant(204, 94, 10, 50, 60, "all");
            b["resource"]["privileges"] = json!("ALL PRIVILEGES ON *.*");
            b
        }),
    ];
    for (req, body) in &hostile {
        node.submit_raw(
            &id(*req),
            body["operation"].as_str().unwrap(),
            body.to_string().as_bytes(),
        );
    }
    node.pass();
    for (req, _) in &hostile {
        let job = node.state().job(&id(*req)).unwrap().unwrap();
        assert_eq!(job.state, JobState::Failed);
        assert_eq!(job.error.unwrap().code, "invalid_field", "request {req}");
    }
    assert_eq!(owned_by(&mut root, "shop1"), before);
    assert_eq!(
        provider::read_audit_log(&audit_dir).unwrap().len(),
        audited,
        "a hostile row made a change in MariaDB"
    );
    assert!(audited > 0, "the runner audits its MariaDB changes");

    let mut latin = ensure_db(3, 51, 10, "legacy");
    latin["resource"]["charset"] = json!("latin1");
    latin["resource"]["collation"] = json!("latin1_bin");
    assert_eq!(submit_pass(&mut node, latin)["collation"], "latin1_bin");
    let mut mismatch = ensure_db(4, 52, 10, "bad");
    mismatch["resource"]["collation"] = json!("latin1_bin");
    node.submit(&mismatch);
    node.pass();
    let job = node.state().job(&id(4)).unwrap().unwrap();
    assert_eq!(job.state, JobState::Failed);
    assert_eq!(job.error.unwrap().code, "collation_mismatch");

    let user = submit_pass(&mut node, ensure_db_user(5, 60, 10, "app", &secret));
    assert_eq!(user["name"], "shop1_app");
    assert_eq!(user["hosts"], json!(["127.0.0.1", "localhost"]));
    let hosts: Vec<String> = root
        .query("SELECT Host FROM mysql.user WHERE User = 'shop1_app' ORDER BY Host")
        .unwrap();
    assert_eq!(hosts, ["127.0.0.1", "localhost"]);
    // No grant yet: the user cannot use the database.
    assert!(
        server
            .user_conn("shop1_app", "secret", Some("shop1_main"))
            .is_err()
    );

    // Granted: connect as the user with its password and write.
    let grant = submit_pass(&mut node, ensure_grant(6, 70, 10, 50, 60, "all"));
    assert!(
        grant["privileges"]
            .as_array()
            .unwrap()
            .contains(&json!("INSERT"))
    );
    let mut app = server
        .user_conn("shop1_app", "secret", Some("shop1_main"))
        .unwrap();
    app.query_drop("CREATE TABLE t (b LONGBLOB)").unwrap();
    for _ in 0..3 {
        app.exec_drop("INSERT INTO t VALUES (REPEAT('x', ?))", (1_000_000,))
            .unwrap();
    }
    assert!(
        server
            .user_conn("shop1_app", "wrong", Some("shop1_main"))
            .is_err()
    );
    // read_only leaves SELECT only.
    submit_pass(&mut node, ensure_grant(7, 70, 10, 50, 60, "read_only"));
    let mut app = server
        .user_conn("shop1_app", "secret", Some("shop1_main"))
        .unwrap();
    assert!(denied(app.query_drop("INSERT INTO t VALUES ('y')")));
    assert_eq!(
        app.query_first::<i64, _>("SELECT COUNT(*) FROM t").unwrap(),
        Some(3)
    );
    submit_pass(&mut node, ensure_grant(8, 70, 10, 50, 60, "all"));

    // Observed: the sizes are information_schema's.
    root.query_drop("ANALYZE TABLE shop1_main.t").unwrap();
    let usage = submit_pass(&mut node, account_op(9, "observe_mysql_usage", 10));
    let expected = schema_size(&mut root, "shop1_main");
    assert!(expected > 2 << 20, "3 MB of rows measure {expected} bytes");
    let main = usage["databases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "shop1_main")
        .unwrap();
    assert_eq!(main["size_bytes"], expected);
    assert_eq!(
        usage["total_bytes"],
        expected + schema_size(&mut root, "shop1_legacy")
    );
    assert_eq!(usage["writes_revoked"], false);

    // Quota exceeded: writes refused, reads and deletes allowed; recorded in state.db.
    let over = submit_pass(&mut node, set_quota(10, 10, 1));
    assert_eq!(over["writes_revoked"], true);
    let quota_row = node
        .state()
        .resource("mysql_database", &id(10).parse().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(quota_row.data["writes_revoked"], true);
    let events = node.feed(0);
    assert!(
        events
            .iter()
            .any(|e| e.request_id == Some(id(10)) && e.state == Some(JobState::Succeeded)),
        "the enforcement is on the events feed"
    );
    let mut app = server
        .user_conn("shop1_app", "secret", Some("shop1_main"))
        .unwrap();
    assert!(denied(app.query_drop("INSERT INTO t VALUES ('y')")));
    assert!(denied(app.query_drop("CREATE TABLE u (v INT)")));
    assert_eq!(
        app.query_first::<i64, _>("SELECT COUNT(*) FROM t").unwrap(),
        Some(3)
    );
    // A grant changed while over quota stays without writes.
    let regrant = submit_pass(&mut node, ensure_grant(11, 70, 10, 50, 60, "all"));
    assert_eq!(regrant["writes_revoked"], true);
    assert!(
        !regrant["privileges"]
            .as_array()
            .unwrap()
            .contains(&json!("INSERT"))
    );

    // Back under (the tenant dropped its table): writes restored by the next observation.
    app.query_drop("DROP TABLE t").unwrap();
    let under = submit_pass(&mut node, account_op(12, "observe_mysql_usage", 10));
    assert_eq!(under["writes_revoked"], false);
    let mut app = server
        .user_conn("shop1_app", "secret", Some("shop1_main"))
        .unwrap();
    app.query_drop("CREATE TABLE t (v INT)").unwrap();
    app.query_drop("INSERT INTO t VALUES (1)").unwrap();
    // Lifted: a quota of 0 never revokes.
    submit_pass(&mut node, set_quota(13, 10, 0));

    // Password changed: the old one is refused, the new one works.
    let other = hash(&server, "other pass");
    submit_pass(&mut node, set_db_password(14, 60, 10, &other));
    assert!(server.user_conn("shop1_app", "secret", None).is_err());
    assert!(server.user_conn("shop1_app", "other pass", None).is_ok());
    // Hosts narrowed: the other host's account is dropped with its grants.
    let mut narrowed = ensure_db_user(15, 60, 10, "app", &other);
    narrowed["resource"]["hosts"] = json!(["localhost"]);
    assert_eq!(
        submit_pass(&mut node, narrowed)["hosts"],
        json!(["localhost"])
    );
    let hosts: Vec<String> = root
        .query("SELECT Host FROM mysql.user WHERE User = 'shop1_app'")
        .unwrap();
    assert_eq!(hosts, ["localhost"]);

    // Another account cannot grant on this one's database, nor to this one's user.
    submit_pass(&mut node, ensure_account(16, 11, "blog1"));
    submit_pass(&mut node, ensure_db_user(17, 61, 11, "app", &secret));
    for (req, db, user) in [(18, 50, 61), (19, 50, 60)] {
        node.submit(&ensure_grant(req, 71, 11, db, user, "all"));
        node.pass();
        let job = node.state().job(&id(req)).unwrap().unwrap();
        assert_eq!(job.state, JobState::Failed);
        assert!(
            ["mysql_database_missing", "mysql_user_missing"]
                .contains(&job.error.unwrap().code.as_ref())
        );
    }
    let blog_grants: Vec<String> = root
        .query("SELECT Db FROM mysql.db WHERE User = 'blog1_app'")
        .unwrap();
    assert!(blog_grants.is_empty(), "{blog_grants:?}");
    // Nor reuse this one's resource ids: neither removal nor takeover.
    for (req, body) in [
        (30, remove_db(30, 50, 11)),
        (31, remove_db_user(31, 60, 11)),
        (32, ensure_db_user(32, 60, 11, "app", &secret)),
        (33, remove_grant(33, 70, 11)),
    ] {
        node.submit(&body);
        node.pass();
        let job = node.state().job(&id(req)).unwrap().unwrap();
        assert_eq!(job.state, JobState::Failed, "{body}");
        // The runner refuses a job whose resource id another account owns.
        assert_eq!(job.error.unwrap().code, "resource_owner_mismatch");
    }
    let (dbs, users, grants) = owned_by(&mut root, "shop1");
    assert_eq!((dbs.len(), users.len(), grants.len()), (2, 1, 1));

    // One grant per database and user: a second would contradict the first.
    node.submit(&ensure_grant(40, 72, 10, 50, 60, "read_only"));
    node.pass();
    let job = node.state().job(&id(40)).unwrap().unwrap();
    assert_eq!(job.state, JobState::Failed);
    assert_eq!(job.error.unwrap().code, "grant_exists");
    // A user name with `-` cannot prefix MariaDB names.
    submit_pass(&mut node, ensure_account(41, 12, "web-1"));
    node.submit(&ensure_db(42, 53, 12, "main"));
    node.pass();
    let job = node.state().job(&id(42)).unwrap().unwrap();
    assert_eq!(job.state, JobState::Failed);
    assert_eq!(job.error.unwrap().code, "username_not_mysql_compatible");

    // Removed, one by one.
    submit_pass(&mut node, remove_grant(20, 70, 10));
    assert!(
        server
            .user_conn("shop1_app", "other pass", Some("shop1_main"))
            .is_err()
    );
    assert_eq!(owned_by(&mut root, "shop1").2, Vec::<String>::new());
    submit_pass(&mut node, remove_db_user(21, 60, 10));
    assert!(server.user_conn("shop1_app", "other pass", None).is_err());
    submit_pass(&mut node, remove_db(22, 50, 10));
    submit_pass(&mut node, remove_db(23, 51, 10));
    assert_eq!(
        owned_by(&mut root, "shop1"),
        (vec![], vec![], vec![]),
        "removed one by one, nothing of shop1 is left"
    );
    // Removing what is absent succeeds.
    submit_pass(&mut node, remove_db(24, 50, 10));

    // Purged with the account.
    submit_pass(&mut node, ensure_db(25, 50, 10, "main"));
    submit_pass(&mut node, ensure_db_user(26, 60, 10, "app", &secret));
    submit_pass(&mut node, ensure_grant(27, 70, 10, 50, 60, "read_write"));
    let (dbs, users, grants) = owned_by(&mut root, "shop1");
    assert_eq!((dbs.len(), users.len(), grants.len()), (1, 2, 2));
    submit_pass(&mut node, account_op(28, "remove_account", 10));
    assert_eq!(
        owned_by(&mut root, "shop1"),
        (vec![], vec![], vec![]),
        "remove_account left something of shop1 in MariaDB"
    );
    // The other account is untouched.
    assert_eq!(owned_by(&mut root, "blog1").1.len(), 2);
}

/// Every field of every mysql request, given hostile strings: each is refused at admission
/// naming the field, so none can reach the server (the inbox stays empty).
#[test]
fn hostile_names_are_refused_at_admission_naming_the_field() {
    let hostile = [
        "a'b",
        "a`b",
        "a\"b",
        "a\u{0}b",
        "a\nb",
        "a\r\nb",
        "a;b",
        "shop\u{0430}",
        "\u{ff41}",
        "a b",
        "a\\b",
        "a%",
        "x".repeat(300).leak(),
        "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7'",
        "localhost'); DROP DATABASE x; --",
    ];
    let node_id: registry::Hex32 = id(0xfeed).parse().unwrap();
    let mut checked = 0;
    for op in declarations::registry()
        .operations()
        .filter(|op| op.name().contains("mysql"))
    {
        let example = op.example();
        let fields: Vec<String> = example.as_object().unwrap().keys().cloned().collect();
        for field in fields {
            for value in &hostile {
                let mut resource = example.clone();
                resource[&field] = if example[&field].is_array() {
                    json!([value])
                } else {
                    json!(value)
                };
                let body =
                    json!({"request_id": id(1), "operation": op.name(), "resource": resource});
                let err = declarations::registry()
                    .validate(body.to_string().as_bytes(), &node_id)
                    .expect_err(&format!("{}: {field} = {value:?} was accepted", op.name()));
                let expected = if example[&field].is_array() {
                    format!("resource.{field}[0]")
                } else {
                    format!("resource.{field}")
                };
                assert_eq!(err.field, expected, "{}: {value:?}", op.name());
                checked += 1;
            }
        }
    }
    assert!(checked > 300, "only {checked} cases");
}

/// Drift on the real server: a grant cut to SELECT, a database dropped and a host added to a
/// user behind the node's back are drift events naming each (what MariaDB shows is compared
/// with what state.db records), and the account's rebuild makes MariaDB show the recorded
/// state again.
#[test]
fn grants_databases_and_users_changed_in_a_real_mariadb_are_drift_until_the_rebuild() {
    let server = MariadbServer::start();
    let secret = hash(&server, "secret");
    let mut node = Node::with_mariadb(server.socket());
    for body in [
        ensure_account(1, 10, "shop1"),
        ensure_db(2, 50, 10, "main"),
        ensure_db(3, 51, 10, "logs"),
        ensure_db_user(4, 60, 10, "app", &secret),
        ensure_grant(5, 70, 10, 50, 60, "all"),
    ] {
        submit_pass(&mut node, body);
    }
    assert_eq!(node.check_drift(), [], "a converged node drifted");
    let mut root = server.root_conn();
    let (_, _, grants) = owned_by(&mut root, "shop1");

    tamper_mariadb(&node);
    let found = mariadb_drift();
    assert_eq!(
        node.check_drift(),
        drift_as(registry::EventKind::Drift, &found)
    );
    let hosts: Vec<String> = root
        .exec(
            "SELECT Host FROM mysql.user WHERE User = ? ORDER BY Host",
            ("shop1_app",),
        )
        .unwrap();
    assert_eq!(
        hosts,
        ["%", "127.0.0.1", "localhost"],
        "reported, not repaired"
    );

    submit_pass(&mut node, account_op(6, "rebuild_account", 10));
    assert_eq!(
        node.check_drift(),
        drift_as(registry::EventKind::DriftResolved, &found)
    );
    let (mut dbs, users, after) = owned_by(&mut root, "shop1");
    dbs.sort();
    assert_eq!(dbs, ["shop1_logs", "shop1_main"]);
    assert!(!users.iter().any(|u| u.contains('%')), "{users:?}");
    assert_eq!(after, grants, "the rebuild put back other grants");
    node.check_converged();
}
