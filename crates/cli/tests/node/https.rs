//! HTTPS through the real runner and a real Apache (mpm-itk, mod_ssl, mod_rewrite,
//! mod_headers) serving exactly the vhosts the node wrote, on free loopback ports for `*:80`
//! and `*:443`: `set_https_policy` sends HTTP to HTTPS but for the ACME challenge path, HSTS
//! is sent over HTTPS only, a redirect of the site to itself over HTTPS ends in a 200 instead
//! of a loop, and the policy waits for a certificate (removing it drops the redirect).

use crate::common;

use std::process::{Command, Stdio};

use common::real_web::RealWeb;
use common::*;
use registry::JobState;
use serde_json::{Value, json};

const DOMAIN: &str = "shop.example.com";

fn ok(node: &mut Node, body: &Value) -> Value {
    node.submit(body);
    node.pass();
    let rid = body["request_id"].as_str().unwrap();
    let job = node.state().job(rid).unwrap().unwrap();
    assert_eq!(job.state, JobState::Succeeded, "{body}: {:?}", job.error);
    job.result.unwrap_or_default()
}

fn set_policy(req: u64, force_https: bool, hsts: Value) -> Value {
    json!({"request_id": id(req), "operation": "set_https_policy",
           "resource": {"id": id(30), "account": id(10), "force_https": force_https,
                        "hsts": hsts}})
}

fn remove_policy(req: u64) -> Value {
    json!({"request_id": id(req), "operation": "remove_https_policy",
           "resource": {"id": id(30), "account": id(10)}})
}

fn redirect_to_itself(req: u64) -> Value {
    json!({"request_id": id(req), "operation": "ensure_redirect",
           "resource": {"id": id(50), "account": id(10), "web_domain": id(30), "source": "/",
                        "target": format!("https://{DOMAIN}/"), "status": 301}})
}

/// One answer of curl: status, headers (lowercase names) and body.
struct Answer {
    status: u16,
    head: String,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// `curl` against the served vhosts: `shop.example.com` (and its alias) on ports 80 and
/// 443 are this test's Apache on loopback, the certificate is the Sim CA's (not checked).
#[allow(clippy::disallowed_methods)] // The test checks the real Apache with a real client.
fn curl(web: &RealWeb, url: &str, extra: &[&str]) -> (String, String) {
    let mut args = vec![
        "-s".to_owned(),
        "-k".to_owned(),
        "--max-time".into(),
        "20".into(),
    ];
    for name in [DOMAIN.to_owned(), format!("www.{DOMAIN}")] {
        args.push("--connect-to".into());
        args.push(format!("{name}:80:127.0.0.1:{}", web.port));
        args.push("--connect-to".into());
        args.push(format!("{name}:443:127.0.0.1:{}", web.tls_port));
    }
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    args.push(url.to_owned());
    let out = Command::new("curl")
        .args(&args)
        .stdin(Stdio::null())
        .output()
        .expect("curl (the test script installs it)");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `GET url`, not following redirects.
fn get(web: &RealWeb, url: &str) -> Answer {
    let (out, err) = curl(web, url, &["-i"]);
    let (head, body) = out
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no answer from {url}: {err}"));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer from {url}: {out}"));
    Answer {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    }
}

/// `GET url` following at most 5 redirects: the last status, how many redirects, the last URL.
fn follow(web: &RealWeb, url: &str) -> (u16, u32, String) {
    let (out, err) = curl(
        web,
        url,
        &[
            "-L",
            "--max-redirs",
            "5",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code} %{num_redirects} %{url_effective}",
        ],
    );
    let mut words = out.split_whitespace();
    let mut next = || {
        words
            .next()
            .unwrap_or_else(|| panic!("curl -L {url}: {out} {err}"))
    };
    let status = next().parse().unwrap();
    let redirects = next().parse().unwrap();
    (status, redirects, next().to_owned())
}

/// A node on the real `apachectl -t` with an account, its web domain (a home page) and a
/// challenge response in the node's webroot.
fn web_node() -> Node {
    common::real_web::require_web_daemons();
    let mut node = Node::with_real_apache();
    ok(&mut node, &ensure_account(1, 10, "shop1"));
    ok(&mut node, &ensure_domain(2, 30, 10, DOMAIN));
    let docroot = node.path(&format!("/home/shop1/web/{DOMAIN}/public_html"));
    std::fs::write(docroot.join("index.html"), "home").unwrap();
    let challenges = node
        .path(ops::certificate::ACME_WEBROOT)
        .join(".well-known/acme-challenge");
    std::fs::create_dir_all(&challenges).unwrap();
    std::fs::write(challenges.join("tok3n"), "tok3n.key").unwrap();
    node
}

#[test]
fn forced_https_redirects_all_but_the_challenge_and_hsts_is_sent_over_https_only() {
    let mut node = web_node();
    ok(&mut node, &ensure_cert(3, 80, 10, 30));
    let result = ok(
        &mut node,
        &set_policy(
            4,
            true,
            json!({"max_age": 31_536_000, "include_subdomains": true}),
        ),
    );
    assert_eq!(result["active"], true, "{result}");
    assert_eq!(result["force_https"], true);
    let web = RealWeb::start(&node);

    let home = get(&web, &format!("http://{DOMAIN}/"));
    assert_eq!(home.status, 301, "{}", home.head);
    assert_eq!(home.header("location"), Some("https://shop.example.com/"));
    assert_eq!(
        home.header("strict-transport-security"),
        None,
        "HSTS over HTTP"
    );
    // The host asked for, the path and the query are kept.
    let deep = get(&web, &format!("http://www.{DOMAIN}/a/b.html?x=1&y=2"));
    assert_eq!(deep.status, 301);
    assert_eq!(
        deep.header("location"),
        Some("https://www.shop.example.com/a/b.html?x=1&y=2")
    );
    // The challenge path is answered from the node's webroot, over HTTP.
    let challenge = get(
        &web,
        &format!("http://{DOMAIN}/.well-known/acme-challenge/tok3n"),
    );
    assert_eq!(
        (challenge.status, challenge.body.as_str()),
        (200, "tok3n.key")
    );
    assert_eq!(challenge.header("location"), None);

    let secure = get(&web, &format!("https://{DOMAIN}/"));
    assert_eq!((secure.status, secure.body.as_str()), (200, "home"));
    assert_eq!(secure.header("location"), None);
    assert_eq!(
        secure.header("strict-transport-security"),
        Some("max-age=31536000; includeSubDomains")
    );
    assert_eq!(
        follow(&web, &format!("http://{DOMAIN}/")),
        (200, 1, "https://shop.example.com/".to_owned())
    );
    // Both TLS versions the vhost allows are served.
    for version in ["1.2", "1.3"] {
        let flag = format!("--tlsv{version}");
        let (code, err) = curl(
            &web,
            &format!("https://{DOMAIN}/"),
            &[
                &flag,
                "--tls-max",
                version,
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
            ],
        );
        assert_eq!(code, "200", "TLS {version}: {err}");
    }
    drop(web);

    // HSTS without forcing: HTTP serves the site, HTTPS sends the header.
    ok(&mut node, &set_policy(5, false, json!({"max_age": 600})));
    let web = RealWeb::start(&node);
    let plain = get(&web, &format!("http://{DOMAIN}/"));
    assert_eq!((plain.status, plain.body.as_str()), (200, "home"));
    assert_eq!(plain.header("strict-transport-security"), None);
    let secure = get(&web, &format!("https://{DOMAIN}/"));
    assert_eq!(
        secure.header("strict-transport-security"),
        Some("max-age=600")
    );
    drop(web);

    // Removed: neither the redirect nor the header.
    ok(&mut node, &remove_policy(6));
    let web = RealWeb::start(&node);
    assert_eq!(get(&web, &format!("http://{DOMAIN}/")).status, 200);
    let secure = get(&web, &format!("https://{DOMAIN}/"));
    assert_eq!(secure.status, 200);
    assert_eq!(secure.header("strict-transport-security"), None);
    drop(web);
    node.check_converged();
}

#[test]
fn a_redirect_of_the_site_to_itself_over_https_ends_in_200_not_a_loop() {
    let mut node = web_node();
    ok(&mut node, &ensure_cert(3, 80, 10, 30));
    ok(&mut node, &redirect_to_itself(4));
    let web = RealWeb::start(&node);
    // Over HTTP it is the redirect to HTTPS it was asked for; over HTTPS it does nothing.
    let home = get(&web, &format!("http://{DOMAIN}/page.html"));
    assert_eq!(home.status, 301);
    assert_eq!(
        home.header("location"),
        Some("https://shop.example.com/page.html")
    );
    let secure = get(&web, &format!("https://{DOMAIN}/"));
    assert_eq!((secure.status, secure.body.as_str()), (200, "home"));
    assert_eq!(
        follow(&web, &format!("http://{DOMAIN}/")),
        (200, 1, "https://shop.example.com/".to_owned())
    );
    assert_eq!(
        follow(&web, &format!("https://{DOMAIN}/")),
        (200, 0, "https://shop.example.com/".to_owned())
    );
    drop(web);

    // With HTTPS forced as well: still one hop, then 200.
    ok(&mut node, &set_policy(5, true, Value::Null));
    let web = RealWeb::start(&node);
    assert_eq!(
        follow(&web, &format!("http://{DOMAIN}/")),
        (200, 1, "https://shop.example.com/".to_owned())
    );
    drop(web);
    node.check_converged();
}

#[test]
fn https_policy_waits_for_a_certificate_and_removing_the_certificate_drops_the_redirect() {
    let mut node = web_node();
    let vhost = |node: &Node| {
        std::fs::read_to_string(
            node.path(node.provider.apache_layout().vhosts_dir)
                .join(format!("{}.conf", id(30))),
        )
        .unwrap()
    };
    let before = vhost(&node);
    // No certificate: recorded, not in force, the vhost unchanged.
    let result = ok(&mut node, &set_policy(3, true, json!({"max_age": 600})));
    assert_eq!(result["active"], false, "{result}");
    assert_eq!(vhost(&node), before);
    let web = RealWeb::start(&node);
    let plain = get(&web, &format!("http://{DOMAIN}/"));
    assert_eq!((plain.status, plain.body.as_str()), (200, "home"));
    drop(web);

    // The certificate brings the policy into force.
    ok(&mut node, &ensure_cert(4, 80, 10, 30));
    let web = RealWeb::start(&node);
    assert_eq!(get(&web, &format!("http://{DOMAIN}/")).status, 301);
    drop(web);

    // Removing the certificate is accepted and takes the redirect out with the HTTPS host:
    // HTTP serves the site again, the challenge path still answers.
    ok(&mut node, &remove_cert(5, 80, 10));
    let text = vhost(&node);
    assert!(
        !text.contains("<VirtualHost *:443>") && !text.contains("    RewriteEngine On\n"),
        "{text}"
    );
    assert_eq!(text, before);
    let web = RealWeb::start(&node);
    let plain = get(&web, &format!("http://{DOMAIN}/"));
    assert_eq!((plain.status, plain.body.as_str()), (200, "home"));
    assert_eq!(plain.header("strict-transport-security"), None);
    let challenge = get(
        &web,
        &format!("http://{DOMAIN}/.well-known/acme-challenge/tok3n"),
    );
    assert_eq!(challenge.status, 200);
    drop(web);
    // The policy is still recorded: setting it again says it waits.
    let result = ok(&mut node, &set_policy(6, true, json!({"max_age": 600})));
    assert_eq!(result["active"], false, "{result}");
    node.check_converged();
}

#[test]
fn a_policy_for_a_missing_domain_and_bad_hsts_are_refused_naming_the_field() {
    let mut node = web_node();
    let missing = json!({"request_id": id(3), "operation": "set_https_policy",
                         "resource": {"id": id(99), "account": id(10), "force_https": true}});
    node.submit(&missing);
    node.pass();
    let job = node.state().job(&id(3)).unwrap().unwrap();
    assert_eq!(job.state, JobState::Failed, "{job:?}");
    assert_eq!(job.error.unwrap().code, "web_domain_missing");
    let registry = declarations::registry();
    for (hsts, field) in [
        (json!({"max_age": 63_072_001}), "resource.hsts.max_age"),
        (json!({"max_age": -1}), "resource.hsts.max_age"),
        (
            json!({"max_age": 600, "preload": true}),
            "resource.hsts.preload",
        ),
        (json!([600, true]), "resource.hsts"),
    ] {
        let body = set_policy(4, true, hsts.clone());
        let error = registry
            .validate(body.to_string().as_bytes(), &node.node_id)
            .expect_err("refused");
        assert_eq!(error.field, field, "{hsts}: {error:?}");
    }
}
