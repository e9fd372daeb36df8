//! CloudLinux's panel-integration scripts (`layerone cloudlinux SCRIPT`), run as the real
//! binary against a cloudlinux dev node whose accounts, domains, PHP versions, limits and
//! database users were created by real jobs through the real runner. Each answer is checked
//! against the shape CloudLinux documents ("Control panel integration": every key, its
//! type, nullability), then against what the jobs did; filters and the documented errors.

use crate::common;

use std::collections::BTreeSet;
use std::process::Output;

use common::*;
use registry::JobState;
use serde_json::{Value, json};

const LAYERONE: &str = env!("CARGO_BIN_EXE_layerone");

fn script_on(node: &Node, platform: &str, script: &str, args: &[&str]) -> (bool, Value) {
    #[allow(clippy::disallowed_methods)] // Tests run the real binary, as CloudLinux does.
    let out: Output = std::process::Command::new(LAYERONE)
        .arg("cloudlinux")
        .arg("--data-dir")
        .arg(node.layout.root())
        .arg("--root")
        .arg(node.provider.root())
        .args(["--platform", platform, "--backend", "sim", script])
        .args(args)
        .output()
        .expect("layerone starts");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{script} {args:?} printed no JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.success(), json)
}

fn script(node: &Node, script: &str, args: &[&str]) -> (bool, Value) {
    script_on(node, "cloudlinux", script, args)
}

/// An `ok` answer's data, after checking the envelope.
fn ok(node: &Node, name: &str, args: &[&str]) -> Value {
    let (success, json) = script(node, name, args);
    assert!(success, "{name} {args:?} failed: {json}");
    assert_eq!(json["metadata"], json!({"result": "ok"}), "{json}");
    assert_eq!(keys(&json), ["data", "metadata"]);
    json["data"].clone()
}

/// A documented error answer: `data` null, the result and a message; exit status 1.
fn error(node: &Node, name: &str, args: &[&str]) -> String {
    let (success, json) = script(node, name, args);
    assert!(!success, "{name} {args:?} succeeded: {json}");
    assert_eq!(keys(&json), ["data", "metadata"]);
    assert!(json["data"].is_null(), "{json}");
    assert_eq!(keys(&json["metadata"]), ["message", "result"]);
    assert!(!json["metadata"]["message"].as_str().unwrap().is_empty());
    json["metadata"]["result"].as_str().unwrap().to_owned()
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

fn sorted(list: &[&str]) -> Vec<String> {
    let set: BTreeSet<String> = list.iter().map(|s| (*s).to_owned()).collect();
    set.into_iter().collect()
}

fn succeeded(node: &Node, reqs: &[u64]) {
    for req in reqs {
        let job = node.state().job(&id(*req)).unwrap().unwrap();
        assert_eq!(job.state, JobState::Succeeded, "{job:?}");
    }
}

fn limits(req: u64, account: u64, cpu: u64) -> Value {
    set_limits(req, account, cpu)
}

/// Two accounts with web domains (and their aliases), PHP 8.2 on one domain, LVE limits
/// (two accounts sharing one set), and a database user, all through real jobs.
fn hosting_node() -> Node {
    let mut node = Node::cloudlinux();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.submit(&ensure_account(2, 11, "blog1"));
    node.submit(&ensure_account(3, 12, "idle1"));
    node.submit(&ensure_domain(4, 30, 10, "shop.example.com"));
    node.submit(&ensure_domain(5, 31, 10, "a-shop.example.net"));
    node.submit(&ensure_domain(6, 32, 11, "blog.example.org"));
    node.submit(&set_php_version(7, 30, 10, "8.2"));
    node.submit(&ensure_db_user(11, 40, 10, "app", SECRET_HASH));
    node.pass();
    // Limits are a change of the account itself, in a later pass than its creation.
    node.submit(&limits(8, 10, 150));
    node.submit(&limits(9, 11, 150));
    node.submit(&limits(10, 12, 50));
    node.pass();
    succeeded(&node, &(1..=11).collect::<Vec<_>>());
    node
}

#[test]
fn every_script_answers_the_documented_shape_from_what_the_jobs_did() {
    let node = hosting_node();

    let info = ok(&node, "panel_info", &[]);
    assert_eq!(
        keys(&info),
        sorted(&["name", "version", "user_login_url", "supported_cl_features"])
    );
    assert_eq!(info["name"], "layerone");
    assert!(info["version"].is_string() && info["user_login_url"].is_string());
    let features = info["supported_cl_features"].as_object().unwrap();
    for feature in [
        "php_selector",
        "ruby_selector",
        "python_selector",
        "nodejs_selector",
        "mod_lsapi",
        "mysql_governor",
        "cagefs",
        "reseller_limits",
        "xray",
        "accelerate_wp",
    ] {
        assert!(features[feature].is_boolean(), "{feature}: {info}");
    }
    assert_eq!(features["cagefs"], true);
    // No governor in this sysroot: the feature is not claimed.
    assert_eq!(features["mysql_governor"], false);

    let users = ok(&node, "users", &[]);
    let users = users.as_array().unwrap();
    assert_eq!(users.len(), 3);
    let passwd = std::fs::read_to_string(node.path("/etc/passwd")).unwrap();
    for user in users {
        assert_eq!(
            keys(user),
            sorted(&[
                "id",
                "username",
                "owner",
                "domain",
                "package",
                "email",
                "locale_code"
            ])
        );
        let name = user["username"].as_str().unwrap();
        let uid: u64 = passwd
            .lines()
            .find(|l| l.starts_with(&format!("{name}:")))
            .unwrap()
            .split(':')
            .nth(2)
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(user["id"], uid, "{user}");
        assert_eq!(user["owner"], "root");
        assert!(user["email"].is_null() && user["locale_code"].is_null());
        assert_eq!(keys(&user["package"]), ["name", "owner"]);
        assert_eq!(user["package"]["owner"], "root");
    }
    let by_name = |n: &str| users.iter().find(|u| u["username"] == n).unwrap().clone();
    // The main domain is the first of the account's domains in name order.
    assert_eq!(by_name("shop1")["domain"], "a-shop.example.net");
    assert_eq!(by_name("blog1")["domain"], "blog.example.org");
    assert_eq!(by_name("idle1")["domain"], "");
    assert_eq!(
        by_name("shop1")["package"]["name"],
        "cpu150-mem1024m-io2048k-nproc50-ep10"
    );
    assert_eq!(by_name("blog1")["package"], by_name("shop1")["package"]);
    assert_eq!(
        by_name("idle1")["package"]["name"],
        "cpu50-mem1024m-io2048k-nproc50-ep10"
    );

    let packages = ok(&node, "packages", &[]);
    assert_eq!(
        packages,
        json!([
            {"name": "cpu150-mem1024m-io2048k-nproc50-ep10", "owner": "root"},
            {"name": "cpu50-mem1024m-io2048k-nproc50-ep10", "owner": "root"}
        ])
    );

    let domains = ok(&node, "domains", &[]);
    assert_eq!(
        keys(&domains),
        sorted(&[
            "shop.example.com",
            "www.shop.example.com",
            "a-shop.example.net",
            "www.a-shop.example.net",
            "blog.example.org",
            "www.blog.example.org"
        ])
    );
    for (name, entry) in domains.as_object().unwrap() {
        assert_eq!(
            keys(entry),
            sorted(&["owner", "document_root", "is_main"]),
            "{name}"
        );
        let root = entry["document_root"].as_str().unwrap();
        let owner = entry["owner"].as_str().unwrap();
        assert!(
            root.starts_with(&format!("/home/{owner}/")),
            "{name}: {root}"
        );
        // The document root the node created is really there in the sysroot.
        assert!(
            node.path(root).is_dir(),
            "{name}: {root} is not a directory"
        );
    }
    assert_eq!(domains["shop.example.com"]["owner"], "shop1");
    assert_eq!(domains["a-shop.example.net"]["is_main"], true);
    assert_eq!(domains["shop.example.com"]["is_main"], false);
    assert_eq!(domains["www.blog.example.org"]["is_main"], false);
    assert_eq!(
        domains["www.shop.example.com"]["document_root"],
        domains["shop.example.com"]["document_root"]
    );

    let with_php = ok(&node, "domains", &["--with-php"]);
    assert_eq!(
        with_php["shop.example.com"]["php"],
        json!({"php_version_id": "alt-php82", "version": "82",
               "ini_path": "/opt/alt/php82/link/conf", "fpm": "alt-php82-fpm", "handler": "fpm"})
    );
    assert_eq!(
        with_php["www.shop.example.com"]["php"],
        with_php["shop.example.com"]["php"]
    );
    assert!(with_php["blog.example.org"]["php"].is_null());

    // The node offers the PHP its binaries show: 8.2 only in this sysroot.
    let php = ok(&node, "php", &[]);
    assert_eq!(
        php,
        json!([{
            "identifier": "alt-php82",
            "version": "8.2",
            "modules_dir": "/opt/alt/php82/usr/lib64/php/modules",
            "dir": "/opt/alt/php82/",
            "bin": "/opt/alt/php82/usr/bin/php",
            "ini": "/opt/alt/php82/link/conf/default.ini"
        }])
    );
    assert!(node.path("/opt/alt/php82/usr/bin/php").exists());

    assert_eq!(ok(&node, "resellers", &[]), json!([]));
    assert_eq!(
        ok(&node, "admins", &[]),
        json!([{"name": "root", "unix_user": "root", "locale_code": "EN_us",
                "email": null, "is_main": true}])
    );

    let db = ok(&node, "db_info", &[]);
    assert_eq!(keys(&db["mysql"]), ["access", "mapping"]);
    assert_eq!(
        keys(&db["mysql"]["access"]),
        sorted(&["login", "password", "host", "port"])
    );
    assert_eq!(
        db["mysql"]["mapping"],
        json!({"blog1": [], "idle1": [], "shop1": ["shop1_app"]})
    );
}

#[test]
fn filters_narrow_the_answers_and_unknown_entities_are_the_documented_not_found() {
    let node = hosting_node();

    let shop1 = ok(&node, "users", &["--username=shop1"]);
    assert_eq!(shop1.as_array().unwrap().len(), 1);
    assert_eq!(shop1[0]["username"], "shop1");
    let uid = shop1[0]["id"].as_u64().unwrap().to_string();
    assert_eq!(ok(&node, "users", &["--unix-id", &uid]), shop1);
    assert_eq!(
        ok(&node, "users", &["--fields=id,username"]),
        json!(
            ok(&node, "users", &[])
                .as_array()
                .unwrap()
                .iter()
                .map(|u| json!({"id": u["id"], "username": u["username"]}))
                .collect::<Vec<_>>()
        )
    );
    let in_package = ok(
        &node,
        "users",
        &[
            "--package-name=cpu150-mem1024m-io2048k-nproc50-ep10",
            "--package-owner=root",
        ],
    );
    let names: BTreeSet<&str> = in_package
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["username"].as_str().unwrap())
        .collect();
    assert_eq!(names, BTreeSet::from(["blog1", "shop1"]));
    assert_eq!(
        ok(&node, "users", &["-o", "root"])
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert_eq!(
        ok(&node, "packages", &["--owner=root"])
            .as_array()
            .unwrap()
            .len(),
        2
    );

    let own = ok(&node, "domains", &["--owner=blog1"]);
    assert_eq!(
        keys(&own),
        sorted(&["blog.example.org", "www.blog.example.org"])
    );
    let one = ok(&node, "domains", &["-n", "www.shop.example.com"]);
    assert_eq!(keys(&one), ["www.shop.example.com"]);
    assert_eq!(
        ok(&node, "admins", &["--name=root"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(ok(&node, "admins", &["--is-main=false"]), json!([]));

    // The documented "Nonexistent entities" answer.
    for (name, args) in [
        ("users", &["--username=nosuch"][..]),
        ("users", &["--unix-id=99999"]),
        ("users", &["--owner=reseller1"]),
        ("users", &["--package-name=gold", "--package-owner=root"]),
        ("domains", &["--owner=nosuch"]),
        ("domains", &["--name=nosuch.example.com"]),
        ("packages", &["--owner=reseller1"]),
        ("resellers", &["--name=reseller1"]),
        ("resellers", &["--id=10001"]),
        ("admins", &["--name=admin2"]),
    ] {
        assert_eq!(error(&node, name, args), "NotFound", "{name} {args:?}");
    }
    // "Error in arguments".
    for (name, args) in [
        ("users", &["--fields=id,nosuchfield"][..]),
        ("users", &["--unix-id=abc"]),
        ("users", &["--package-name=gold"]),
        ("users", &["--nosuch"]),
        ("domains", &["--with-php=yes"]),
        ("panel_info", &["--owner=x"]),
        ("admins", &["--is-main=maybe"]),
        ("nosuch_script", &[]),
    ] {
        assert_eq!(error(&node, name, args), "BadRequest", "{name} {args:?}");
    }
}

#[test]
fn the_scripts_read_without_writing_and_refuse_a_debian_node() {
    let node = hosting_node();
    let state = node.layout.state_db();
    let before = std::fs::read(&state).unwrap();
    let audit_before = node.audit_count();
    for name in [
        "panel_info",
        "db_info",
        "packages",
        "users",
        "domains",
        "resellers",
        "admins",
        "php",
    ] {
        ok(&node, name, &[]);
    }
    assert_eq!(std::fs::read(&state).unwrap(), before, "state.db changed");
    assert_eq!(node.audit_count(), audit_before, "a script ran a program");
    let (success, json) = script_on(&node, "debian", "users", &[]);
    assert!(!success);
    assert_eq!(json["metadata"]["result"], "InternalAPIError", "{json}");
}

#[test]
fn a_caller_other_than_root_gets_panel_info_and_permission_denied_for_the_rest() {
    use std::os::unix::process::CommandExt;
    let node = hosting_node();
    let run_as_nobody = |name: &str| -> (bool, Value) {
        #[allow(clippy::disallowed_methods)] // Tests run the real binary, as CloudLinux does.
        let out = std::process::Command::new(LAYERONE)
            .arg("cloudlinux")
            .arg("--data-dir")
            .arg(node.layout.root())
            .arg("--root")
            .arg(node.provider.root())
            .args(["--platform", "cloudlinux", "--backend", "sim", name])
            .uid(65534)
            .gid(65534)
            .output()
            .expect("layerone starts as nobody");
        (
            out.status.success(),
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
                panic!("{name}: {e}: {}", String::from_utf8_lossy(&out.stderr))
            }),
        )
    };
    let (success, info) = run_as_nobody("panel_info");
    assert!(success, "{info}");
    assert_eq!(info["data"]["name"], "layerone");
    for name in ["users", "domains", "packages", "db_info", "php"] {
        let (success, json) = run_as_nobody(name);
        assert!(!success);
        assert_eq!(json["data"], Value::Null);
        assert_eq!(
            json["metadata"]["result"], "PermissionDenied",
            "{name}: {json}"
        );
    }
}
