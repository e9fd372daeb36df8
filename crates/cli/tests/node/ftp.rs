//! FTP accounts end to end: the real runner binary with the real `pure-pw` building the
//! PureDB and reading each login back; hostile fields refused before they reach a file.

use crate::common;

use common::*;
use registry::JobState;

fn job(node: &Node, req: u64) -> registry::JobView {
    node.state().job(&id(req)).unwrap().unwrap()
}

fn real_pure_pw_node() -> Node {
    assert!(
        std::path::Path::new("/usr/bin/pure-pw").exists(),
        "pure-pw is missing: install pure-ftpd (scripts/test does)"
    );
    let mut node = Node::new();
    node.extra_real = vec!["pure-pw"];
    node
}

#[test]
fn ftp_accounts_are_jailed_mapped_to_the_tenant_and_read_back_by_the_real_pure_pw() {
    let mut node = real_pure_pw_node();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.submit(&ensure_account(2, 11, "shop2"));
    node.pass();
    node.submit(&ensure_ftp(3, 50, 10, "shop1.up", Some("web/uploads")));
    node.submit(&ensure_ftp(4, 51, 11, "shop2", None)); // a system user's name
    node.submit(&ensure_ftp(5, 52, 11, "shop2.ftp", None));
    node.pass();
    let first = job(&node, 3);
    assert_eq!(first.state, JobState::Succeeded, "{first:?}");
    let result = first.result.unwrap();
    let shop1 = node.provider.lookup_user("shop1").unwrap().unwrap();
    assert_eq!(result["uid"], shop1.uid);
    assert_eq!(result["gid"], shop1.gid);
    let jail = node.path("/home/shop1/web/uploads");
    assert_eq!(result["directory"], jail.display().to_string());
    assert!(jail.is_dir(), "the jail directory was not created");
    if rustix::process::geteuid().is_root() {
        use std::os::unix::fs::MetadataExt;
        assert_eq!(std::fs::metadata(&jail).unwrap().uid(), shop1.uid);
    }
    let taken = job(&node, 4);
    assert_eq!(taken.state, JobState::Failed);
    assert_eq!(taken.error.unwrap().code, "ftp_login_taken");
    assert_eq!(job(&node, 5).state, JobState::Succeeded);
    let audit: Vec<Vec<String>> = node
        .audit_records()
        .into_iter()
        .filter(|r| r.program == "pure-pw")
        .map(|r| {
            assert_eq!(r.backend, "real");
            r.args
        })
        .collect();
    assert!(audit.iter().any(|a| a[0] == "mkdb"));
    assert!(
        audit
            .iter()
            .any(|a| a[..2] == ["show".to_owned(), "shop1.up".to_owned()])
    );
    assert!(
        audit.iter().flatten().all(|a| !a.contains("$6$")),
        "a password hash reached an argv"
    );
    let passwd = std::fs::read_to_string(node.path(provider::FTP_LAYOUT.passwd)).unwrap();
    assert_eq!(passwd.lines().count(), 2, "{passwd}");
    node.check_converged();

    // Another login may not take shop1.up; the same resource may change its directory.
    node.submit(&ensure_ftp(6, 53, 11, "shop1.up", None));
    node.submit(&ensure_ftp(7, 50, 10, "shop1.up", None));
    node.pass();
    assert_eq!(job(&node, 6).error.unwrap().code, "ftp_login_taken");
    let moved = job(&node, 7).result.unwrap();
    assert_eq!(
        moved["directory"],
        node.path("/home/shop1").display().to_string()
    );

    // A new password changes the hash only: the real pure-pw shows the new one, same jail.
    let new_hash = format!("$6$newsalt${}", "Z".repeat(86));
    node.submit(&set_ftp_password(11, 50, 10, &new_hash));
    node.submit(&set_ftp_password(12, 99, 10, &new_hash)); // no such FTP account
    node.submit(&set_ftp_password(13, 52, 10, &new_hash)); // another account's login
    node.pass();
    let changed = job(&node, 11);
    assert_eq!(changed.state, JobState::Succeeded, "{changed:?}");
    assert_eq!(changed.result.unwrap(), moved);
    assert_eq!(job(&node, 12).error.unwrap().code, "ftp_account_missing");
    assert_eq!(
        job(&node, 13).error.unwrap().code,
        "resource_owner_mismatch"
    );
    let reader = testkit::sim_provider(
        provider::Platform::Debian,
        node.dir.path(),
        vec![provider::Program::PurePw],
    );
    let shown = reader
        .pure_pw_show("shop1.up", &node.path(provider::FTP_LAYOUT.passwd))
        .unwrap()
        .expect("the real pure-pw shows the login");
    assert_eq!(shown.password, new_hash);
    assert_eq!(
        shown.directory,
        format!("{}/./", node.path("/home/shop1").display())
    );
    let other = reader
        .pure_pw_show("shop2.ftp", &node.path(provider::FTP_LAYOUT.passwd))
        .unwrap()
        .unwrap();
    assert_eq!(other.password, FTP_HASH, "another login's hash changed");
    node.check_converged();

    // Suspended: the real pure-pw no longer knows the login, the other one is untouched; a
    // new password meanwhile and a rebuild of the account keep it suspended; unsuspended, it
    // is back with the newest hash.
    let passwd = node.path(provider::FTP_LAYOUT.passwd);
    let suspend = |req: u64, op: &str| {
        serde_json::json!({"request_id": id(req), "operation": op,
                           "resource": {"id": id(50), "account": id(10)}})
    };
    node.submit(&suspend(30, "suspend_ftp_account"));
    node.pass();
    let suspended = job(&node, 30);
    assert_eq!(suspended.state, JobState::Succeeded, "{suspended:?}");
    assert_eq!(suspended.result.unwrap()["suspended"], true);
    assert_eq!(reader.pure_pw_show("shop1.up", &passwd).unwrap(), None);
    assert!(reader.pure_pw_show("shop2.ftp", &passwd).unwrap().is_some());
    let pdb = std::fs::read(node.path(provider::FTP_LAYOUT.pdb)).unwrap();
    assert!(
        !String::from_utf8_lossy(&pdb).contains("shop1.up"),
        "the PureDB still holds the suspended login"
    );
    let newest = format!("$6$newest${}", "Y".repeat(86));
    node.submit(&set_ftp_password(31, 50, 10, &newest));
    node.pass();
    assert_eq!(job(&node, 31).state, JobState::Succeeded);
    node.submit(&account_op(32, "rebuild_account", 10));
    node.pass();
    assert_eq!(job(&node, 32).state, JobState::Succeeded);
    assert_eq!(reader.pure_pw_show("shop1.up", &passwd).unwrap(), None);
    node.check_converged();
    node.submit(&suspend(33, "unsuspend_ftp_account"));
    node.pass();
    assert_eq!(job(&node, 33).result.unwrap()["suspended"], false);
    let back = reader.pure_pw_show("shop1.up", &passwd).unwrap().unwrap();
    assert_eq!(back.password, newest);
    node.check_converged();

    // A symlink planted where the jail goes fails that job only.
    let outside = node.dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, node.path("/home/shop2/jail")).unwrap();
    node.submit(&ensure_ftp(8, 52, 11, "shop2.ftp", Some("jail/in")));
    node.pass();
    let planted = job(&node, 8);
    assert_eq!(planted.state, JobState::Failed, "{planted:?}");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);

    node.submit(&remove_ftp(9, 52, 11));
    node.submit(&account_op(10, "remove_account", 10));
    node.pass();
    assert_eq!(job(&node, 9).state, JobState::Succeeded);
    assert_eq!(job(&node, 10).state, JobState::Succeeded);
    let passwd = std::fs::read_to_string(node.path(provider::FTP_LAYOUT.passwd)).unwrap();
    assert!(passwd.is_empty(), "{passwd}");
    node.check_converged();
}

#[test]
fn hostile_ftp_fields_are_refused_naming_the_field() {
    let node = Node::new();
    let cases = [
        ("login", serde_json::json!("shop1:0:0")),
        ("login", serde_json::json!("shop1\nroot::0:0::/:")),
        ("login", serde_json::json!("Root")),
        ("login", serde_json::json!("")),
        ("password_hash", serde_json::json!("plaintext")),
        (
            "password_hash",
            serde_json::json!("$1$md5$abcdefghijklmnopqrstuv"),
        ),
        (
            "password_hash",
            serde_json::json!(format!("{FTP_HASH}:0:0")),
        ),
        ("directory", serde_json::json!("../shop2")),
        ("directory", serde_json::json!("/etc")),
        ("directory", serde_json::json!("web/./x")),
        ("directory", serde_json::json!("web/x:y")),
        ("uid", serde_json::json!(0)),
    ];
    for (field, value) in cases {
        let mut body = ensure_ftp(1, 50, 10, "shop1.up", None);
        body["resource"][field] = value.clone();
        let err = declarations::registry()
            .validate(body.to_string().as_bytes(), &node.node_id)
            .err()
            .unwrap_or_else(|| panic!("{field} = {value} accepted"));
        assert!(
            err.field == format!("resource.{field}") || err.code == "unknown_field",
            "{field} = {value}: {err:?}"
        );
    }
}
