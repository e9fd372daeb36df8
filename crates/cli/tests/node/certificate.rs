//! Certificates through the real runner: ACME issuance (the Sim's CA, and pebble through a
//! real Apache serving the challenge), binding to a vhost as an HTTPS virtual host under the
//! real `apache2ctl -t`, observation, forced and scheduled renewal (the runner's
//! `renew_certificates` step), refusals with their own codes (nothing changed), removal and
//! the account's purge. No secret reaches a request, a row, a result or the audit trail.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use common::acme_ca::{free_port, pebble, wait_for_port};
use common::*;
use registry::JobState;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The system's time in Unix seconds: these tests run the packaged runner's code, on the
/// system clock, against real CAs.
fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

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

fn files(node: &Node, cert: u64) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = node.path(ops::certificate::CERTIFICATE_DIR);
    (
        dir.join(format!("{}.crt", id(cert))),
        dir.join(format!("{}.key", id(cert))),
    )
}

fn fingerprint_of(chain: &str) -> String {
    let (leaf, _) = acme::parse_chain(chain).unwrap();
    Sha256::digest(&leaf.der)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Makes certificate `cert` due: its chain is replaced by one for the same names and key
/// that expires in ten days, and the renewal check is made due too (its daily marker goes).
fn make_due(node: &Node, cert: u64, names: &[&str]) -> String {
    let (chain_file, key_file) = files(node, cert);
    let key = std::fs::read_to_string(key_file).unwrap();
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let short = simulator::issue_locally_at(
        &names,
        &key,
        unix_now(),
        Duration::from_secs(10 * 24 * 3600),
    )
    .unwrap();
    std::fs::write(&chain_file, &short).unwrap();
    make_check_due(node);
    short
}

fn make_check_due(node: &Node) {
    let marker = node
        .layout
        .state_dir()
        .join(runner::steps::RENEWALS_CHECKED);
    let _ = std::fs::remove_file(marker);
}

/// The events of the renewal jobs the runner queued, oldest first: (request id, state). The
/// test's own requests have small ids (`id(n)`); the runner's are digests.
fn renewal_jobs(node: &Node) -> Vec<(String, JobState)> {
    node.feed(0)
        .into_iter()
        .filter(|e| e.operation.as_deref() == Some("renew_certificate"))
        .filter(|e| {
            e.request_id
                .as_deref()
                .is_some_and(|r| r > id(0xffff).as_str())
        })
        .map(|e| (e.request_id.unwrap(), e.state.unwrap()))
        .collect()
}

/// Every byte of the data directory, searched for the key's base64 body: a private key is
/// in its file and in no request, row, result or audit line.
fn assert_key_only_in_its_file(node: &Node, key_file: &Path) {
    let key = std::fs::read_to_string(key_file).unwrap();
    let body: String = key
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect::<Vec<_>>()
        .concat();
    // The private scalar: PKCS#8 keys of one algorithm share their first bytes, and the
    // public key at the end is in the certificate too.
    let needle = &body[52..92];
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut all = Vec::new();
    // inbox.db, state.db (jobs, results, resources, events, audit), the runner's log.
    walk(node.layout.root(), &mut all);
    assert!(all.len() > 2, "{all:?}");
    for path in all {
        let bytes = std::fs::read(&path).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains(needle),
            "the private key's body is in {}",
            path.display()
        );
    }
}

#[test]
fn an_acme_certificate_is_bound_observed_renewed_and_removed_under_the_real_apache_test() {
    let mut node = Node::with_real_apache();
    run(&mut node, &ensure_account(1, 10, "shop1"));
    run(&mut node, &ensure_domain(2, 30, 10, "shop.example.com"));
    run(&mut node, &ensure_redirect(3, 50, 10, 30, "/"));
    let before = vhost(&node, 30);

    // A web domain that does not exist: refused, nothing written.
    let missing = run(&mut node, &ensure_cert(4, 81, 10, 99));
    assert_eq!(code(&missing), "web_domain_missing", "{missing:?}");
    assert_eq!(vhost(&node, 30), before);
    let dir = node.path(ops::certificate::CERTIFICATE_DIR);
    assert_eq!(
        std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0),
        0,
        "a refused certificate left files"
    );

    // Issued (by the Sim's CA, no [acme] table) for the name and its alias, and bound.
    let ok = run(&mut node, &ensure_cert(5, 80, 10, 30));
    assert_eq!(ok.state, JobState::Succeeded, "{ok:?}");
    let result = ok.result.clone().unwrap();
    assert_eq!(result["issued"], true);
    assert_eq!(
        result["covered"],
        json!(["shop.example.com", "www.shop.example.com"])
    );
    let (chain_file, key_file) = files(&node, 80);
    let chain = std::fs::read_to_string(&chain_file).unwrap();
    let key = std::fs::read_to_string(&key_file).unwrap();
    assert_eq!(result["fingerprint_sha256"], fingerprint_of(&chain));
    let (leaf, count) = acme::parse_chain(&chain).unwrap();
    assert_eq!(count, 2, "the certificate and its CA");
    assert_eq!(result["not_after"], leaf.not_after);
    assert_eq!(acme::key_public_der(&key).unwrap(), leaf.public_key_der);
    let text = vhost(&node, 30);
    assert!(text.contains("<VirtualHost *:80>") && text.contains("<VirtualHost *:443>"));
    assert!(text.contains(&format!("SSLCertificateFile \"{}\"", chain_file.display())));
    assert!(text.contains(&format!("SSLCertificateKeyFile \"{}\"", key_file.display())));
    // The challenge path: answered from the node's webroot in both, never redirected.
    let challenges = node.path(ops::certificate::ACME_WEBROOT);
    assert_eq!(
        text.matches(&format!(
            "Alias \"/.well-known/acme-challenge/\" \"{}/.well-known/acme-challenge/\"",
            challenges.display()
        ))
        .count(),
        2,
        "{text}"
    );
    assert_eq!(
        text.matches("RedirectMatch 301 \"^(?!/\\.well-known/acme-challenge/)/(.*)$\"")
            .count(),
        2,
        "{text}"
    );
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode(&chain_file), mode(&key_file)), (0o644, 0o600));
    assert_eq!(
        std::fs::read_dir(challenges.join(".well-known/acme-challenge"))
            .unwrap()
            .count(),
        0,
        "a challenge response was left behind"
    );
    node.check_converged();

    // Ensured again: converged, nothing issued.
    let again = run(&mut node, &ensure_cert(6, 80, 10, 30));
    assert_eq!(again.state, JobState::Succeeded, "{again:?}");
    assert_eq!(again.result.as_ref().unwrap()["issued"], false);
    assert_eq!(std::fs::read_to_string(&chain_file).unwrap(), chain);

    // Observed: one certificate, its fingerprint, not due.
    let seen = run(&mut node, &observe_certs(7, 10));
    let list = seen.result.unwrap()["certificates"].clone();
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list[0]["id"], id(80));
    assert_eq!(list[0]["domain"], "shop.example.com");
    assert_eq!(list[0]["source"], "acme");
    assert_eq!(list[0]["renewal_due"], false);
    assert_eq!(list[0]["fingerprint_sha256"], fingerprint_of(&chain));

    // A second certificate for the same domain: refused.
    let conflict = run(&mut node, &ensure_cert(8, 82, 10, 30));
    assert_eq!(code(&conflict), "certificate_conflict");

    // Renewed on request: a new chain, the same key.
    let renewed = run(&mut node, &renew_cert(9, 80, 10));
    assert_eq!(renewed.state, JobState::Succeeded, "{renewed:?}");
    let renewed_chain = std::fs::read_to_string(&chain_file).unwrap();
    assert_ne!(renewed_chain, chain);
    assert_eq!(std::fs::read_to_string(&key_file).unwrap(), key);
    assert_eq!(
        renewed.result.unwrap()["fingerprint_sha256"],
        fingerprint_of(&renewed_chain)
    );

    // The runner's step: nothing is due, nothing is queued.
    make_check_due(&node);
    node.pass();
    assert!(renewal_jobs(&node).is_empty());
    // Due: one renewal job, on the events feed, applied in the same pass.
    let short = make_due(&node, 80, &["shop.example.com", "www.shop.example.com"]);
    let due = run(&mut node, &observe_certs(10, 10));
    assert_eq!(due.result.unwrap()["certificates"][0]["renewal_due"], true);
    make_check_due(&node);
    node.pass();
    let jobs = renewal_jobs(&node);
    let states: Vec<JobState> = jobs.iter().map(|(_, s)| *s).collect();
    assert_eq!(
        states,
        [JobState::Queued, JobState::Running, JobState::Succeeded],
        "{jobs:?}"
    );
    let scheduled = std::fs::read_to_string(&chain_file).unwrap();
    assert_ne!(scheduled, short);
    let (leaf, _) = acme::parse_chain(&scheduled).unwrap();
    assert!(leaf.not_after - unix_now() > 80 * 24 * 3600);
    // The step ran today: the next pass queues nothing more, even for a due certificate.
    make_due(&node, 80, &["shop.example.com", "www.shop.example.com"]);
    std::fs::write(
        node.layout
            .state_dir()
            .join(runner::steps::RENEWALS_CHECKED),
        b"",
    )
    .unwrap();
    node.pass();
    assert_eq!(renewal_jobs(&node).len(), 3);

    // A renewal that fails (the configured CA does not answer) is a failed job; the
    // certificate in place stays, and the next check queues it again.
    let in_place = std::fs::read_to_string(&chain_file).unwrap();
    let vhost_before = vhost(&node, 30);
    let config = node.path(ops::certificate::NODE_CONFIG);
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        format!(
            "[acme]\ndirectory = \"https://127.0.0.1:{}/dir\"\n",
            free_port()
        ),
    )
    .unwrap();
    make_check_due(&node);
    node.pass();
    let jobs = renewal_jobs(&node);
    assert_eq!(jobs.last().unwrap().1, JobState::Failed, "{jobs:?}");
    let failed = node.state().job(&jobs.last().unwrap().0).unwrap().unwrap();
    assert_eq!(code(&failed), "acme_failed", "{failed:?}");
    assert_eq!(std::fs::read_to_string(&chain_file).unwrap(), in_place);
    assert_eq!(vhost(&node, 30), vhost_before);
    node.check_converged();
    // The same day: not queued again (its request id is the day's).
    make_check_due(&node);
    node.pass();
    assert_eq!(renewal_jobs(&node).len(), jobs.len());
    std::fs::remove_file(&config).unwrap();
    let forced = run(&mut node, &renew_cert(11, 80, 10));
    assert_eq!(forced.state, JobState::Succeeded, "{forced:?}");
    assert_key_only_in_its_file(&node, &key_file);

    let removed = run(&mut node, &remove_cert(12, 80, 10));
    assert_eq!(removed.state, JobState::Succeeded, "{removed:?}");
    assert!(!vhost(&node, 30).contains(":443"));
    assert!(!chain_file.exists() && !key_file.exists());
    let gone = run(&mut node, &renew_cert(13, 80, 10));
    assert_eq!(code(&gone), "certificate_missing");
    node.check_converged();

    // Bound again, then the account goes: every file with it.
    let again = run(&mut node, &ensure_cert(14, 80, 10, 30));
    assert_eq!(again.state, JobState::Succeeded, "{again:?}");
    let purged = run(&mut node, &account_op(15, "remove_account", 10));
    assert_eq!(purged.state, JobState::Succeeded, "{purged:?}");
    assert!(!chain_file.exists() && !key_file.exists());
    assert!(node.vhosts().is_empty());
    node.check_converged();
}

#[test]
fn a_real_node_without_an_acme_table_refuses_and_sources_are_typed() {
    let node_id: registry::Hex32 = id(0xfeed).parse().unwrap();
    let valid = ensure_cert(1, 80, 10, 30);
    assert!(
        declarations::registry()
            .validate(valid.to_string().as_bytes(), &node_id)
            .is_ok()
    );
    let (chain, key) = cert_bundle("shop.example.com");
    let cases = [
        ("source", json!("letsencrypt")),
        ("source", json!(null)),
        ("source", json!(42)),
        ("chain", json!(chain)),
        ("key", json!(key)),
    ];
    for (field, value) in cases {
        let mut body = valid.clone();
        body["resource"][field] = value;
        let refused = declarations::registry()
            .validate(body.to_string().as_bytes(), &node_id)
            .unwrap_err();
        assert_eq!(refused.field, format!("resource.{field}"), "{refused:?}");
    }
    let mut body = valid.clone();
    body["resource"].as_object_mut().unwrap().remove("source");
    assert!(
        declarations::registry()
            .validate(body.to_string().as_bytes(), &node_id)
            .is_err()
    );
}

/// Runs a program of the test (curl, openssl) and returns its stdout.
#[allow(clippy::disallowed_methods)] // Tests check the real Apache with real clients.
fn output(program: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The end-entity certificate Apache serves for `name` on 127.0.0.1:443.
fn served_fingerprint(name: &str) -> String {
    let text = output(
        "openssl",
        &["s_client", "-connect", "127.0.0.1:443", "-servername", name],
    );
    let start = text
        .find("-----BEGIN CERTIFICATE-----")
        .expect("a certificate");
    let end = text.find("-----END CERTIFICATE-----").unwrap() + 25;
    fingerprint_of(&format!("{}\n", &text[start..end]))
}

#[test]
fn acme_through_pebble_and_a_real_apache_serving_the_challenge() {
    for port in [80, 443] {
        assert!(
            std::net::TcpListener::bind(("127.0.0.1", port)).is_ok(),
            "this test serves the tenant's vhosts on 127.0.0.1:{port}, which is taken"
        );
    }
    let mut node = Node::with_real_apache();
    // The tenant vhosts are `*:80` and `*:443`: the test's Apache listens there too, on
    // loopback only.
    let main = node.path(node.provider.apache_layout().main_config);
    let mut conf = std::fs::read_to_string(&main).unwrap();
    conf.push_str("Listen 127.0.0.1:80\nListen 127.0.0.1:443\n");
    std::fs::write(&main, conf).unwrap();
    // Started as an operator's would be: the runner reloads it, and never starts one.
    node.start_apache();
    let ca = pebble(node.dir.path(), 80);
    let config = node.path(ops::certificate::NODE_CONFIG);
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        format!(
            "[acme]\ndirectory = \"{}\"\nserver_root = \"{}\"\nemail = \"ops@example.com\"\n",
            ca.directory,
            ca.server_root.display()
        ),
    )
    .unwrap();
    run(&mut node, &ensure_account(1, 10, "shop1"));
    run(&mut node, &ensure_domain(2, 30, 10, "shop.example.com"));
    let redirect = run(&mut node, &ensure_redirect(3, 50, 10, 30, "/"));
    assert_eq!(redirect.state, JobState::Succeeded, "{redirect:?}");
    wait_for_port(80, "apache");

    // Apache serves the challenge path from the node's webroot, while everything else is
    // redirected.
    let challenges = node
        .path(ops::certificate::ACME_WEBROOT)
        .join(".well-known/acme-challenge");
    std::fs::create_dir_all(&challenges).unwrap();
    std::fs::write(challenges.join("probe"), "probe-answer").unwrap();
    let host = ["-H", "Host: shop.example.com"];
    let probe = output(
        "curl",
        &[
            "-s",
            host[0],
            host[1],
            "http://127.0.0.1:80/.well-known/acme-challenge/probe",
        ],
    );
    assert_eq!(probe, "probe-answer");
    let home = output(
        "curl",
        &[
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            host[0],
            host[1],
            "http://127.0.0.1:80/",
        ],
    );
    assert_eq!(home, "301");
    std::fs::remove_file(challenges.join("probe")).unwrap();

    // Issued by pebble, which fetched each challenge through Apache, then bound.
    let ok = run(&mut node, &ensure_cert(4, 80, 10, 30));
    assert_eq!(ok.state, JobState::Succeeded, "{ok:?}");
    let result = ok.result.unwrap();
    let (chain_file, key_file) = files(&node, 80);
    let chain = std::fs::read_to_string(&chain_file).unwrap();
    assert!(chain.matches("BEGIN CERTIFICATE").count() >= 2, "a chain");
    assert!(!acme::is_self_signed(&chain).unwrap());
    assert_eq!(
        result["covered"],
        json!(["shop.example.com", "www.shop.example.com"])
    );
    assert_eq!(result["fingerprint_sha256"], fingerprint_of(&chain));
    node.provider.apache_configtest().unwrap();
    let text = vhost(&node, 30);
    assert!(text.contains("<VirtualHost *:443>"), "{text}");
    assert_eq!(std::fs::read_dir(&challenges).unwrap().count(), 0);
    let account = node.path(ops::certificate::ACME_ACCOUNT);
    assert_eq!(
        std::fs::metadata(&account).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // Apache serves it over HTTPS.
    assert_eq!(
        served_fingerprint("shop.example.com"),
        fingerprint_of(&chain)
    );

    // Due: the runner's step renews it through pebble, and Apache serves the new one.
    make_due(&node, 80, &["shop.example.com", "www.shop.example.com"]);
    node.pass();
    let jobs = renewal_jobs(&node);
    assert_eq!(jobs.last().unwrap().1, JobState::Succeeded, "{jobs:?}");
    let renewed = std::fs::read_to_string(&chain_file).unwrap();
    assert_ne!(renewed, chain);
    assert!(!acme::is_self_signed(&renewed).unwrap());
    assert!(renewed.matches("BEGIN CERTIFICATE").count() >= 2);
    let (leaf, _) = acme::parse_chain(&renewed).unwrap();
    assert!(leaf.not_after - unix_now() > 30 * 24 * 3600);
    assert_eq!(
        served_fingerprint("shop.example.com"),
        fingerprint_of(&renewed)
    );
    assert_key_only_in_its_file(&node, &key_file);

    let removed = run(&mut node, &remove_cert(5, 80, 10));
    assert_eq!(removed.state, JobState::Succeeded, "{removed:?}");
    assert!(!vhost(&node, 30).contains(":443"));
    assert!(!chain_file.exists() && !key_file.exists());
    node.provider.apache_configtest().unwrap();
    node.check_converged();
}

/// A chain and key for `names` (self-signed) as one PEM bundle, valid from `from` to `to`
/// (Unix days from now).
fn bundle(names: &[&str], from_days: i64, to_days: i64) -> (String, String) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params =
        rcgen::CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>())
            .unwrap();
    let day = |d: i64| {
        let t = unix_now() + d * 86_400;
        let days = t.div_euclid(86_400);
        // Civil date from days since the epoch (Howard Hinnant's algorithm).
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = (doy - (153 * mp + 2) / 5 + 1) as u8;
        let m = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
        let y = (yoe + era * 400 + i64::from(m <= 2)) as i32;
        rcgen::date_time_ymd(y, m, d)
    };
    params.not_before = day(from_days);
    params.not_after = day(to_days);
    let cert = params.self_signed(&key).unwrap();
    (format!("{}{}", cert.pem(), key.serialize_pem()), cert.pem())
}

#[test]
fn a_bundle_blob_is_checked_then_bound_and_every_refusal_names_the_blob() {
    let mut node = Node::with_real_apache();
    run(&mut node, &ensure_account(1, 10, "shop1"));
    run(&mut node, &ensure_domain(2, 30, 10, "shop.example.com"));
    let before = vhost(&node, 30);
    let names = ["shop.example.com", "www.shop.example.com"];

    let (good, good_chain) = bundle(&names, -1, 365);
    let (other, _) = bundle(&names, -1, 365);
    // The chain of one bundle with the key of another.
    let other_key = &other[other.find("-----BEGIN PRIVATE KEY-----").unwrap()..];
    let mismatched = format!("{good_chain}{other_key}");
    let (expired, _) = bundle(&names, -30, -2);
    let (elsewhere, _) = bundle(&["other.example.org"], -1, 365);
    let swapped = node.upload_blob(good.as_bytes());
    // A blob whose content is no longer what its name says (swapped after the upload).
    std::fs::write(node.layout.blobs_in().join(&swapped), elsewhere.as_bytes()).unwrap();
    let no_key = node.upload_blob(good_chain.as_bytes());
    let cases = [
        (
            node.upload_blob(mismatched.as_bytes()),
            "certificate_key_mismatch",
        ),
        (
            node.upload_blob(expired.as_bytes()),
            "certificate_not_valid_now",
        ),
        (
            node.upload_blob(elsewhere.as_bytes()),
            "certificate_not_covering",
        ),
        (swapped, "blob_mismatch"),
        ("ab".repeat(32), "blob_missing"),
        (no_key, "invalid_private_key"),
        (node.upload_blob(b"not pem at all"), "invalid_private_key"),
    ];
    let mut req = 10;
    for (blob, expected) in &cases {
        req += 1;
        let job = run(&mut node, &ensure_bundle_cert(req, 80, 10, 30, blob));
        assert_eq!(code(&job), *expected, "{job:?}");
        let message = &job.error.as_ref().unwrap().message;
        assert!(message.starts_with("resource.blob:"), "{message}");
    }
    // A bundle source without a blob, an ACME source with one.
    let mut body = ensure_bundle_cert(30, 80, 10, 30, &"ab".repeat(32));
    body["resource"].as_object_mut().unwrap().remove("blob");
    assert_eq!(code(&run(&mut node, &body)), "blob_required");
    let mut body = ensure_cert(31, 80, 10, 30);
    body["resource"]["blob"] = json!("ab".repeat(32));
    assert_eq!(code(&run(&mut node, &body)), "blob_not_expected");
    assert_eq!(
        vhost(&node, 30),
        before,
        "a refused bundle changed the vhost"
    );
    let dir = node.path(ops::certificate::CERTIFICATE_DIR);
    assert_eq!(
        std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0),
        0,
        "a refused bundle left files"
    );

    // The good one: bound, its key 0600 and nowhere else.
    let blob = node.upload_blob(good.as_bytes());
    let ok = run(&mut node, &ensure_bundle_cert(40, 80, 10, 30, &blob));
    assert_eq!(ok.state, JobState::Succeeded, "{ok:?}");
    let result = ok.result.unwrap();
    assert_eq!(result["fingerprint_sha256"], fingerprint_of(&good_chain));
    assert_eq!(result["covered"], json!(names));
    let (chain_file, key_file) = files(&node, 80);
    assert_eq!(std::fs::read_to_string(&chain_file).unwrap(), good_chain);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode(&chain_file), mode(&key_file)), (0o644, 0o600));
    assert!(vhost(&node, 30).contains("<VirtualHost *:443>"));
    node.provider.apache_configtest().unwrap();
    node.check_converged();
    let seen = run(&mut node, &observe_certs(41, 10));
    let listed = &seen.result.unwrap()["certificates"][0];
    assert_eq!(listed["source"], "bundle");
    assert_eq!(listed["renewal_due"], false);
    // Not the node's to renew; the runner's step leaves it alone.
    assert_eq!(
        code(&run(&mut node, &renew_cert(42, 80, 10))),
        "certificate_not_renewable"
    );
    // Replayed after the upload is gone: converged from what is in place.
    std::fs::remove_file(node.layout.blobs_in().join(&blob)).unwrap();
    let again = run(&mut node, &ensure_bundle_cert(43, 80, 10, 30, &blob));
    assert_eq!(again.state, JobState::Succeeded, "{again:?}");
    assert_eq!(again.result.unwrap()["issued"], false);
    assert_key_only_in_its_file(&node, &key_file);

    // Purged with the account.
    let purged = run(&mut node, &account_op(44, "remove_account", 10));
    assert_eq!(purged.state, JobState::Succeeded, "{purged:?}");
    assert!(!chain_file.exists() && !key_file.exists());
    node.check_converged();
}
