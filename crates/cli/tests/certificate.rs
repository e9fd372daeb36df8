//! Certificates through the real runner and the real `apache2ctl -t`: a bundle bound to a
//! vhost as an HTTPS virtual host, refusals with their own codes (nothing changed), removal,
//! and the account's purge.

mod common;

use std::os::unix::fs::PermissionsExt;

use common::*;
use registry::JobState;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

fn run(node: &mut Node, body: &Value) -> registry::JobView {
    node.submit(body);
    node.pass();
    let rid = body["request_id"].as_str().unwrap();
    node.state().job(rid).unwrap().unwrap()
}

fn code(job: &registry::JobView) -> String {
    job.error
        .as_ref()
        .map(|e| e.code.to_string())
        .unwrap_or_default()
}

fn vhost(node: &Node, domain_id: u64) -> String {
    let dir = node.path(node.provider.apache_layout().vhosts_dir);
    std::fs::read_to_string(dir.join(format!("{}.conf", id(domain_id)))).unwrap()
}

fn bundle_request(req: u64, chain: &str, key: &str) -> Value {
    json!({"request_id": id(req), "operation": "ensure_certificate",
           "resource": {"id": id(80), "account": id(10), "web_domain": id(30), "chain": chain, "key": key}})
}

#[test]
fn a_bundle_is_bound_to_the_vhost_under_the_real_apache_test() {
    let mut node = Node::with_real_apache();
    run(&mut node, &ensure_account(1, 10, "shop1"));
    run(&mut node, &ensure_domain(2, 30, 10, "shop.example.com"));
    run(&mut node, &ensure_redirect(3, 50, 10, 30, "/"));
    let before = vhost(&node, 30);

    // The key of another certificate: refused, nothing written.
    let (chain, _) = cert_bundle("shop.example.com");
    let (_, other_key) = cert_bundle("shop.example.com");
    let mismatch = run(&mut node, &bundle_request(4, &chain, &other_key));
    assert_eq!(code(&mismatch), "certificate_key_mismatch", "{mismatch:?}");
    // A certificate for another name: refused.
    let (elsewhere, elsewhere_key) = cert_bundle("other.example.org");
    let foreign = run(&mut node, &bundle_request(5, &elsewhere, &elsewhere_key));
    assert_eq!(code(&foreign), "certificate_not_covering", "{foreign:?}");
    // Not a certificate at all once parsed.
    let garbage = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
    let (_, key) = cert_bundle("shop.example.com");
    let bad = run(&mut node, &bundle_request(6, garbage, &key));
    assert_eq!(code(&bad), "invalid_certificate", "{bad:?}");
    // A web domain that does not exist.
    let missing = ensure_cert(7, 81, 10, 99, "shop.example.com");
    assert_eq!(code(&run(&mut node, &missing)), "web_domain_missing");
    assert_eq!(
        vhost(&node, 30),
        before,
        "a refused certificate changed the vhost"
    );
    let dir = node.path(ops::certificate::CERTIFICATE_DIR);
    assert_eq!(
        std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0),
        0,
        "a refused certificate left files"
    );

    // Bound: the same site over HTTPS, the challenge still exempt from the redirect.
    let made = rcgen::generate_simple_self_signed(vec![
        "shop.example.com".to_owned(),
        "www.shop.example.com".to_owned(),
    ])
    .unwrap();
    let fingerprint: String = Sha256::digest(made.cert.der())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let ok = run(
        &mut node,
        &bundle_request(8, &made.cert.pem(), &made.signing_key.serialize_pem()),
    );
    assert_eq!(ok.state, JobState::Succeeded, "{ok:?}");
    let result = ok.result.unwrap();
    assert_eq!(result["fingerprint_sha256"], fingerprint);
    // rcgen's default validity ends in 4096.
    assert!(result["not_after"].as_i64().unwrap() > 4_000_000_000);
    assert_eq!(
        result["covered"],
        json!(["shop.example.com", "www.shop.example.com"])
    );
    let text = vhost(&node, 30);
    let chain_file = dir.join(format!("{}.crt", id(80)));
    let key_file = dir.join(format!("{}.key", id(80)));
    assert!(text.contains("<VirtualHost *:80>") && text.contains("<VirtualHost *:443>"));
    assert!(text.contains(&format!("SSLCertificateFile \"{}\"", chain_file.display())));
    assert!(text.contains(&format!("SSLCertificateKeyFile \"{}\"", key_file.display())));
    assert_eq!(
        text.matches("RedirectMatch 301 \"^(?!/\\.well-known/acme-challenge/)/(.*)$\"")
            .count(),
        2,
        "{text}"
    );
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode(&chain_file), mode(&key_file)), (0o644, 0o600));
    assert_eq!(
        std::fs::read_to_string(&chain_file).unwrap(),
        made.cert.pem()
    );
    node.check_converged();

    // A second certificate for the same domain: refused.
    let conflict = run(&mut node, &ensure_cert(9, 82, 10, 30, "shop.example.com"));
    assert_eq!(code(&conflict), "certificate_conflict");

    let removed = run(&mut node, &remove_cert(10, 80, 10));
    assert_eq!(removed.state, JobState::Succeeded, "{removed:?}");
    assert!(!vhost(&node, 30).contains(":443"));
    assert!(!chain_file.exists() && !key_file.exists());
    node.check_converged();

    // Bound again, then the account goes: every file with it.
    let again = run(&mut node, &ensure_cert(11, 80, 10, 30, "shop.example.com"));
    assert_eq!(again.state, JobState::Succeeded, "{again:?}");
    let purged = run(&mut node, &account_op(12, "remove_account", 10));
    assert_eq!(purged.state, JobState::Succeeded, "{purged:?}");
    assert!(!chain_file.exists() && !key_file.exists());
    assert!(node.vhosts().is_empty());
    node.check_converged();
}

#[test]
fn malformed_bundles_are_refused_at_admission() {
    let node_id: registry::Hex32 = id(0xfeed).parse().unwrap();
    let (chain, key) = cert_bundle("shop.example.com");
    let cases = [
        ("chain", json!("not pem")),
        ("chain", json!(key.clone())),
        ("key", json!(chain.clone())),
        (
            "key",
            json!("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n"),
        ),
        ("chain", json!(format!("{chain}{}", "A".repeat(70 * 1024)))),
        ("key", json!(42)),
    ];
    for (field, value) in cases {
        let mut body = bundle_request(1, &chain, &key);
        body["resource"][field] = value;
        let refused = ops::registry().validate(body.to_string().as_bytes(), &node_id);
        assert!(refused.is_err(), "{field} accepted");
    }
    assert!(
        ops::registry()
            .validate(
                bundle_request(1, &chain, &key).to_string().as_bytes(),
                &node_id
            )
            .is_ok()
    );
}
