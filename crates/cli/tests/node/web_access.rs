//! Protected directories and IP blocks end to end: the real runner writes the vhost and the
//! `AuthUserFile` (every write checked by the real `apachectl -t`), then a real Apache serves
//! exactly those vhosts (only their port changed to a free loopback one) and answers 401
//! without credentials, 200 with the right password, 403 to a blocked address and to a
//! suspended account's site, and the ACME challenge path throughout; error pages answer from
//! the tenant's site.

use crate::common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::process::Command;

use common::real_web::RealWeb;
use common::*;
use registry::JobState;
use serde_json::{Value, json};

const DOMAIN: &str = "shop.example.com";

fn run(node: &mut Node, body: &Value) -> registry::JobView {
    node.submit(body);
    node.pass();
    let rid = body["request_id"].as_str().unwrap();
    node.state().job(rid).unwrap().unwrap()
}

fn ok(node: &mut Node, body: &Value) -> Value {
    let job = run(node, body);
    assert_eq!(job.state, JobState::Succeeded, "{body}: {:?}", job.error);
    job.result.unwrap_or_default()
}

/// `openssl passwd -6`: the crypt SHA-512 hash a control plane would send.
fn sha512_crypt(password: &str, salt: &str) -> String {
    #[allow(clippy::disallowed_methods)] // The test computes the hash with an independent tool.
    let out = Command::new("/usr/bin/openssl")
        .args(["passwd", "-6", "-salt", salt, password])
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn base64(input: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in input.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(TABLE[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The node's vhosts on the real Apache (mpm-itk: requests run as the tenant), stopped when
/// dropped.
struct Served {
    web: RealWeb,
}

impl Served {
    fn start(node: &Node) -> Served {
        Served {
            web: RealWeb::start(node),
        }
    }

    /// The status code of `GET path` for the web domain, with Basic credentials if given.
    fn status(&self, path: &str, user: Option<(&str, &str)>) -> u16 {
        let auth = user.map(|(name, password)| {
            format!(
                "Authorization: Basic {}",
                base64(format!("{name}:{password}").as_bytes())
            )
        });
        let headers: Vec<&str> = auth.iter().map(String::as_str).collect();
        self.web.get(DOMAIN, path, &headers).status
    }
}

fn protect(req: u64, id_: u64, path: &str, users: Value) -> Value {
    json!({"request_id": id(req), "operation": "ensure_protected_directory",
           "resource": {"id": id(id_), "account": id(10), "web_domain": id(30), "path": path,
                        "realm": "Staff only", "users": users}})
}

/// A node with the real `apachectl -t`, the host's `www-data` group in its sysroot, an
/// account, a web domain and the files the checks fetch.
fn web_node() -> Node {
    assert!(
        rustix::process::geteuid().is_root(),
        "these tests must run as root (CI does): Apache drops to www-data"
    );
    let mut node = Node::with_real_apache();
    let host_group = std::fs::read_to_string("/etc/group").unwrap();
    let www = host_group
        .lines()
        .find(|l| l.starts_with("www-data:"))
        .expect("the www-data group (apache2 creates it)");
    assert!(
        std::fs::read_to_string(node.path("/etc/group"))
            .unwrap()
            .contains(&format!("www-data:x:{}:", www.split(':').nth(2).unwrap())),
        "the sysroot's www-data is the host's, the group the test's Apache runs in"
    );
    ok(&mut node, &ensure_account(1, 10, "shop1"));
    ok(&mut node, &ensure_domain(2, 30, 10, DOMAIN));
    // The home stays 0750, in www-data's group: Apache passes through it to the document
    // root, and no other tenant can enter it.
    let home = std::fs::metadata(node.path("/home/shop1")).unwrap();
    assert_eq!(home.permissions().mode() & 0o7777, 0o750);
    assert_eq!(
        home.gid(),
        www.split(':').nth(2).unwrap().parse::<u32>().unwrap()
    );
    let docroot = node.path(&format!("/home/shop1/web/{DOMAIN}/public_html"));
    for (file, text) in [("index.html", "home"), ("staff/index.html", "staff")] {
        let path = docroot.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    }
    // Every vhost answers the challenge path from the node's webroot, where the certificate
    // family puts its responses.
    let challenges = node
        .path(ops::certificate::ACME_WEBROOT)
        .join(".well-known/acme-challenge");
    std::fs::create_dir_all(&challenges).unwrap();
    std::fs::write(challenges.join("tok3n"), "tok3n.key").unwrap();
    node
}

#[test]
fn protected_directory_asks_real_apache_for_the_password_and_spares_the_challenge() {
    let mut node = web_node();
    let hash = sha512_crypt("correct horse", "pr0tect3d");
    let result = ok(
        &mut node,
        &protect(
            3,
            70,
            "staff",
            json!([{"name": "alice", "password_hash": hash},
            {"name": "bob", "password_hash": sha512_crypt("other", "s4lt")}]),
        ),
    );
    assert_eq!(result["users"], json!(["alice", "bob"]));
    let docroot = node.path(&format!("/home/shop1/web/{DOMAIN}/public_html"));
    assert_eq!(
        result["directory"],
        docroot.join("staff").display().to_string()
    );
    // The AuthUserFile: derived from state.db, outside the home, root's, 0640 to the account.
    let file = node
        .path(node.provider.apache_layout().auth_dir)
        .join(format!("{}.htpasswd", id(70)));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with(&format!("alice:{hash}\nbob:$6$s4lt$")),
        "{text}"
    );
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(meta.mode() & 0o777, 0o640);
    assert_eq!(meta.uid(), 0);
    // Apache reads it as the account (mpm-itk), so the account's own group may read it.
    let account_gid = node
        .state()
        .resource("account", &id(10).parse().unwrap())
        .unwrap()
        .unwrap()
        .data["gid"]
        .as_u64()
        .unwrap();
    assert_eq!(u64::from(meta.gid()), account_gid);
    assert!(!file.starts_with(node.path("/home")));

    let served = Served::start(&node);
    assert_eq!(served.status("/", None), 200);
    assert_eq!(served.status("/staff/", None), 401);
    assert_eq!(
        served.status("/staff/index.html", Some(("alice", "wrong"))),
        401
    );
    assert_eq!(
        served.status("/staff/", Some(("mallory", "correct horse"))),
        401
    );
    assert_eq!(
        served.status("/staff/", Some(("alice", "correct horse"))),
        200
    );
    assert_eq!(
        served.status("/staff/index.html", Some(("bob", "other"))),
        200
    );
    assert_eq!(
        served.status("/.well-known/acme-challenge/tok3n", None),
        200
    );
    drop(served);

    // The user list is replaced whole: bob is gone, alice has a new password.
    let new_hash = sha512_crypt("battery staple", "n3w");
    ok(
        &mut node,
        &protect(
            4,
            70,
            "staff",
            json!([{"name": "alice", "password_hash": new_hash}]),
        ),
    );
    let conflict = run(
        &mut node,
        &protect(
            5,
            71,
            "staff",
            json!([{"name": "carol", "password_hash": new_hash}]),
        ),
    );
    assert_eq!(conflict.error.unwrap().code, "protected_directory_conflict");
    let served = Served::start(&node);
    assert_eq!(
        served.status("/staff/", Some(("alice", "correct horse"))),
        401
    );
    assert_eq!(served.status("/staff/", Some(("bob", "other"))), 401);
    assert_eq!(
        served.status("/staff/", Some(("alice", "battery staple"))),
        200
    );
    drop(served);
    node.check_converged();

    ok(
        &mut node,
        &json!({"request_id": id(6), "operation": "remove_protected_directory",
                "resource": {"id": id(70), "account": id(10)}}),
    );
    assert!(!file.exists(), "the AuthUserFile is still there");
    let served = Served::start(&node);
    assert_eq!(served.status("/staff/", None), 200);
    drop(served);
    node.check_converged();
}

#[test]
fn ip_block_gets_403_from_real_apache_until_removed_and_spares_the_challenge() {
    let mut node = web_node();
    let hash = sha512_crypt("correct horse", "pr0tect3d");
    ok(
        &mut node,
        &protect(
            3,
            70,
            "staff",
            json!([{"name": "alice", "password_hash": hash}]),
        ),
    );
    let block = |req: u64, networks: Value| {
        json!({"request_id": id(req), "operation": "ensure_ip_block",
               "resource": {"id": id(30), "account": id(10), "networks": networks}})
    };
    // Someone else's addresses: 127.0.0.1 is served as before.
    let other = ok(
        &mut node,
        &block(4, json!(["192.0.2.0/24", "2001:db8::/32"])),
    );
    assert_eq!(other["blocked"], json!(["192.0.2.0/24", "2001:db8::/32"]));
    let served = Served::start(&node);
    assert_eq!(served.status("/", None), 200);
    assert_eq!(served.status("/staff/", None), 401);
    drop(served);

    ok(&mut node, &block(5, json!(["127.0.0.0/8"])));
    let served = Served::start(&node);
    assert_eq!(served.status("/", None), 403);
    assert_eq!(served.status("/index.html", None), 403);
    assert_eq!(
        served.status("/staff/", Some(("alice", "correct horse"))),
        403,
        "the password lifted the block"
    );
    assert_eq!(
        served.status("/.well-known/acme-challenge/tok3n", None),
        200,
        "the block caught the ACME challenge"
    );
    drop(served);
    node.check_converged();

    let missing = run(
        &mut node,
        &json!({"request_id": id(6), "operation": "ensure_ip_block",
                "resource": {"id": id(99), "account": id(10), "networks": ["127.0.0.1"]}}),
    );
    assert_eq!(missing.error.unwrap().code, "web_domain_missing");

    ok(
        &mut node,
        &json!({"request_id": id(7), "operation": "remove_ip_block",
                "resource": {"id": id(30), "account": id(10)}}),
    );
    let served = Served::start(&node);
    assert_eq!(served.status("/", None), 200);
    assert_eq!(
        served.status("/staff/", None),
        401,
        "the protection went with the block"
    );
    assert_eq!(
        served.status("/staff/", Some(("alice", "correct horse"))),
        200
    );
    drop(served);
    node.check_converged();
}

#[test]
fn a_suspended_accounts_site_gets_403_from_real_apache_but_the_challenge_until_unsuspended() {
    let mut node = web_node();
    let served = Served::start(&node);
    assert_eq!(served.status("/", None), 200);
    drop(served);

    let suspended = ok(&mut node, &account_op(3, "suspend_account", 10));
    assert_eq!(suspended["web_domains"], json!([DOMAIN]));
    // The domain's own unsuspension does not lift the account's.
    ok(
        &mut node,
        &domain_suspension(4, "unsuspend_web_domain", 30, 10),
    );
    let served = Served::start(&node);
    assert_eq!(served.status("/", None), 403);
    assert_eq!(served.status("/index.html", None), 403);
    assert_eq!(
        served.status("/.well-known/acme-challenge/tok3n", None),
        200,
        "the account's suspension caught the ACME challenge"
    );
    drop(served);
    node.check_converged();

    let back = ok(&mut node, &account_op(5, "unsuspend_account", 10));
    assert_eq!(back["web_domains"], json!([]));
    let served = Served::start(&node);
    assert_eq!(served.status("/", None), 200);
    drop(served);
    node.check_converged();
}

/// `set_error_pages` on the real Apache: a missing page and a page the tenant may not read
/// answer with the tenant's own pages under their own statuses; a suspended domain answers
/// with the node's 403 alone; removed, Apache's pages are back.
#[test]
fn error_pages_answer_from_the_tenants_site_and_never_while_suspended() {
    let mut node = web_node();
    let docroot = node.path(&format!("/home/shop1/web/{DOMAIN}/public_html"));
    std::fs::create_dir_all(docroot.join("errors")).unwrap();
    std::fs::write(docroot.join("errors/404.html"), "shop1 has no such page").unwrap();
    std::fs::write(docroot.join("errors/403.html"), "shop1 keeps this private").unwrap();
    // Root's and 0600: the tenant's requests (mpm-itk, as shop1) cannot read it.
    let private = docroot.join("private.html");
    std::fs::write(&private, "root only").unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();

    let set = json!({"request_id": id(3), "operation": "set_error_pages",
                     "resource": {"id": id(30), "account": id(10),
                                  "pages": {"404": "/errors/404.html", "403": "/errors/403.html"}}});
    let result = ok(&mut node, &set);
    assert_eq!(result["state"], "present");
    assert_eq!(result["pages"]["404"], "/errors/404.html");
    node.check_converged();
    let served = Served::start(&node);
    let missing = served.web.get(DOMAIN, "/no/such/page.html", &[]);
    assert_eq!(missing.status, 404, "{missing:?}");
    assert_eq!(missing.body, "shop1 has no such page", "{missing:?}");
    let denied = served.web.get(DOMAIN, "/private.html", &[]);
    assert_eq!(denied.status, 403, "{denied:?}");
    assert_eq!(denied.body, "shop1 keeps this private", "{denied:?}");
    assert_eq!(served.status("/", None), 200);
    drop(served);

    ok(
        &mut node,
        &domain_suspension(4, "suspend_web_domain", 30, 10),
    );
    let served = Served::start(&node);
    let suspended = served.web.get(DOMAIN, "/", &[]);
    assert_eq!(suspended.status, 403, "{suspended:?}");
    assert!(!suspended.body.contains("shop1"), "{suspended:?}");
    drop(served);
    node.check_converged();

    ok(
        &mut node,
        &domain_suspension(5, "unsuspend_web_domain", 30, 10),
    );
    let removed = ok(
        &mut node,
        &json!({"request_id": id(6), "operation": "remove_error_pages",
                "resource": {"id": id(30), "account": id(10)}}),
    );
    assert_eq!(removed["state"], "absent");
    let served = Served::start(&node);
    let missing = served.web.get(DOMAIN, "/no/such/page.html", &[]);
    assert_eq!(missing.status, 404, "{missing:?}");
    assert!(
        !missing.body.contains("shop1"),
        "Apache's own page: {missing:?}"
    );
    drop(served);
    node.check_converged();
}

#[test]
fn hostile_access_fields_are_refused_naming_the_field() {
    let node = Node::new();
    let hash = format!("$6$saltsalt${}", "a".repeat(86));
    let user = |name: Value| json!([{"name": name, "password_hash": hash}]);
    let cases: Vec<(&str, &str, Value)> = vec![
        ("path", "path", json!(".well-known/acme-challenge")),
        ("path", "path", json!("../../etc")),
        ("path", "path", json!("/etc")),
        ("path", "path", json!("staff\"\n</Directory>")),
        ("realm", "realm", json!("a\" \nRequire all granted")),
        ("realm", "realm", json!("${APACHE_LOG_DIR}")),
        ("realm", "realm", json!("%{REMOTE_ADDR}")),
        ("users", "users[0].name", user(json!("a:b"))),
        ("users", "users[0].name", user(json!("a\nroot"))),
        ("users", "users", json!([])),
        (
            "users",
            "users[0].password_hash",
            json!([{"name": "a", "password_hash": "secret"}]),
        ),
        (
            "users",
            "users",
            json!([{"name": "a", "password_hash": hash}, {"name": "a", "password_hash": hash}]),
        ),
    ];
    for (field, reported, value) in cases {
        let mut body = protect(1, 70, "staff", user(json!("alice")));
        body["resource"][field] = value.clone();
        let err = declarations::registry()
            .validate(body.to_string().as_bytes(), &node.node_id)
            .err()
            .unwrap_or_else(|| panic!("{field} = {value} accepted"));
        assert_eq!(
            err.field,
            format!("resource.{reported}"),
            "{field} = {value}: {err:?}"
        );
    }
    for bad in [
        json!(["127.0.0.1 all"]),
        json!(["all"]),
        json!(["10.0.0.0/33"]),
        json!(["10.0.0.1\nRequire all granted"]),
        json!([]),
        json!(["10.0.0.1", "10.0.0.1"]),
    ] {
        let body = json!({"request_id": id(1), "operation": "ensure_ip_block",
                          "resource": {"id": id(30), "account": id(10), "networks": bad}});
        let err = declarations::registry()
            .validate(body.to_string().as_bytes(), &node.node_id)
            .err()
            .unwrap_or_else(|| panic!("{bad} accepted"));
        assert!(err.field.starts_with("resource.networks"), "{bad}: {err:?}");
    }
}

#[test]
fn rebuild_account_puts_back_the_user_file_and_the_vhost_byte_identical() {
    let mut node = Node::new();
    ok(&mut node, &ensure_account(1, 10, "shop1"));
    ok(&mut node, &ensure_domain(2, 30, 10, DOMAIN));
    ok(&mut node, &ensure_protected(3, 70, 10, 30, "staff"));
    ok(&mut node, &ensure_ip_block(4, 30, 10, &["192.0.2.0/24"]));
    node.check_converged();
    let vhost = node
        .path(node.provider.apache_layout().vhosts_dir)
        .join(format!("{}.conf", id(30)));
    let file = node
        .path(node.provider.apache_layout().auth_dir)
        .join(format!("{}.htpasswd", id(70)));
    let before = (
        std::fs::read(&vhost).unwrap(),
        std::fs::read(&file).unwrap(),
    );
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&vhost, "# emptied\n").unwrap();
    let rebuilt = ok(&mut node, &account_op(5, "rebuild_account", 10));
    let replayed = rebuilt["replayed"].to_string();
    for op in ["ensure_protected_directory", "ensure_ip_block"] {
        assert!(replayed.contains(op), "{op} was not replayed: {replayed}");
    }
    let after = (
        std::fs::read(&vhost).unwrap(),
        std::fs::read(&file).unwrap(),
    );
    assert!(
        before == after,
        "the rebuild did not put back the same files"
    );
    node.check_converged();
}
