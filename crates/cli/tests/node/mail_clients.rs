//! A hosted mail domain as mail clients and DNS see it, checked by independent parsers: the
//! record list its result carries parses with dnspython record by record and passes the SPF
//! and DMARC rules checkdmarc applies, and the real Apache (mpm-itk) over the node's vhosts
//! answers Thunderbird's autoconfig (on `autoconfig.<domain>` and the domain's
//! `.well-known` path) and Outlook's autodiscover POST with the node's settings, read back
//! with Python's XML parser.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::real_web::{RealWeb, require_web_daemons};
use common::*;
use registry::JobState;
use serde_json::{Value, json};

const DOMAIN: &str = "shop.example.com";
const NODE_NAME: &str = "node1.provider.test";

fn ok(node: &mut Node, body: &Value) -> Value {
    let rid = body["request_id"].as_str().unwrap().to_owned();
    node.submit(body);
    node.pass();
    let job = node.state().job(&rid).unwrap().unwrap();
    assert_eq!(job.state, JobState::Succeeded, "{body}: {:?}", job.error);
    job.result.unwrap()
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `script` with Python 3 and dnspython (`target/dnspy`, which ./scripts/test installs)
/// on `input`; returns what it prints, as JSON.
fn python(script: &str, input: &str) -> Value {
    let dnspy = workspace().join("target/dnspy");
    assert!(
        dnspy.join("dns").is_dir(),
        "dnspython is missing from {}: run ./scripts/test (it installs it there)",
        dnspy.display()
    );
    #[allow(clippy::disallowed_methods)] // The test runs the independent parser it checks with.
    let mut child = Command::new("python3")
        .args(["-c", script])
        .env("PYTHONPATH", &dnspy)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "python3: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Each record through `dns.rdata.from_text` for its type, then the SPF and DMARC records
/// through the rules checkdmarc applies (RFC 7208, RFC 7489), written here: what it prints
/// is each record's parsed form, and the problems found.
const CHECK_RECORDS: &str = r#"
import json, sys
import dns.name, dns.rdata, dns.rdataclass, dns.rdatatype

records = json.load(sys.stdin)
problems = []
parsed = []
for r in records:
    name = dns.name.from_text(r["name"])
    rd = dns.rdata.from_text(dns.rdataclass.IN, dns.rdatatype.from_text(r["type"]), r["value"], origin=dns.name.root, relativize=False)
    entry = {"name": name.to_text(), "type": r["type"], "ttl": r["ttl"]}
    if r["type"] == "TXT":
        entry["strings"] = [len(s) for s in rd.strings]
        entry["text"] = b"".join(rd.strings).decode()
    elif r["type"] == "MX":
        entry["preference"] = rd.preference
        entry["target"] = rd.exchange.to_text()
    elif r["type"] == "SRV":
        entry["port"] = rd.port
        entry["target"] = rd.target.to_text()
    elif r["type"] == "CNAME":
        entry["target"] = rd.target.to_text()
    parsed.append(entry)

apex = min((p["name"] for p in parsed), key=len)
txt_at = lambda n: [p["text"] for p in parsed if p["type"] == "TXT" and p["name"] == n]

# SPF (checkdmarc's rules): exactly one v=spf1 record; at most 10 mechanisms that cost a DNS
# lookup; known mechanisms only; the last term an `all` with a qualifier; nothing after it.
spf = [t for t in txt_at(apex) if t.lower().startswith("v=spf1")]
if len(spf) != 1:
    problems.append("want one SPF record, got %d" % len(spf))
else:
    terms = spf[0].split()
    if terms[0] != "v=spf1":
        problems.append("SPF does not start with v=spf1")
    lookups = 0
    for t in terms[1:]:
        q = t[0] if t[0] in "+-~?" else ""
        mech = t[len(q):].split(":")[0].split("/")[0].split("=")[0].lower()
        if mech not in ("all", "a", "mx", "ip4", "ip6", "include", "exists", "ptr", "redirect", "exp"):
            problems.append("unknown SPF term " + t)
        if mech in ("a", "mx", "include", "exists", "ptr", "redirect"):
            lookups += 1
    if lookups > 10:
        problems.append("SPF needs %d DNS lookups" % lookups)
    last = terms[-1]
    if last.lstrip("+-~?").lower() != "all" or last[0] not in "-~":
        problems.append("SPF does not end with ~all or -all: " + last)

# DMARC (checkdmarc's rules): one record at _dmarc; v=DMARC1 first, p= second; known tags,
# each once, with valid values.
dmarc = txt_at("_dmarc." + apex)
if len(dmarc) != 1:
    problems.append("want one DMARC record, got %d" % len(dmarc))
else:
    tags = [t.strip() for t in dmarc[0].split(";") if t.strip()]
    pairs = [t.split("=", 1) for t in tags]
    keys = [k.strip() for k, _ in pairs]
    values = dict((k.strip(), v.strip()) for k, v in pairs)
    if tags[0] != "v=DMARC1":
        problems.append("DMARC does not start with v=DMARC1")
    if len(keys) < 2 or keys[1] != "p":
        problems.append("DMARC's second tag is not p")
    if len(set(keys)) != len(keys):
        problems.append("a DMARC tag repeats")
    valid = {"v", "p", "sp", "adkim", "aspf", "pct", "fo", "rf", "ri", "rua", "ruf", "np"}
    for k in keys:
        if k not in valid:
            problems.append("unknown DMARC tag " + k)
    for k in ("p", "sp", "np"):
        if k in values and values[k] not in ("none", "quarantine", "reject"):
            problems.append("DMARC %s=%s" % (k, values[k]))
    for k in ("adkim", "aspf"):
        if k in values and values[k] not in ("r", "s"):
            problems.append("DMARC %s=%s" % (k, values[k]))

print(json.dumps({"records": parsed, "problems": problems}))
"#;

/// The settings in a Thunderbird autoconfig or an Outlook autodiscover response, read with
/// `xml.etree`: each server as (type, host, port, security), and the user name.
const READ_SETTINGS: &str = r#"
import json, sys
import xml.etree.ElementTree as ET

root = ET.fromstring(sys.stdin.read())
servers = []
if root.tag == "clientConfig":
    provider = root.find("emailProvider")
    out = {"kind": "autoconfig", "id": provider.get("id"), "domains": [d.text for d in provider.findall("domain")]}
    for s in provider.findall("incomingServer") + provider.findall("outgoingServer"):
        servers.append([s.get("type"), s.findtext("hostname"), int(s.findtext("port")), s.findtext("socketType"), s.findtext("username")])
else:
    ns = {"a": "http://schemas.microsoft.com/exchange/autodiscover/responseschema/2006",
          "o": "http://schemas.microsoft.com/exchange/autodiscover/outlook/responseschema/2006a"}
    assert root.tag == "{%s}Autodiscover" % ns["a"], root.tag
    account = root.find("o:Response/o:Account", ns)
    out = {"kind": "autodiscover", "action": account.findtext("o:Action", namespaces=ns),
           "account_type": account.findtext("o:AccountType", namespaces=ns)}
    for p in account.findall("o:Protocol", ns):
        security = p.findtext("o:Encryption", namespaces=ns) or ("SSL" if p.findtext("o:SSL", namespaces=ns) == "on" else "none")
        servers.append([p.findtext("o:Type", namespaces=ns), p.findtext("o:Server", namespaces=ns), int(p.findtext("o:Port", namespaces=ns)), security, p.findtext("o:LoginName", namespaces=ns)])
out["servers"] = servers
print(json.dumps(out))
"#;

/// An account with a web domain and a mail domain of the same name and a DKIM key (a real
/// 2048-bit one, whose record needs two TXT strings), on a node named [`NODE_NAME`].
fn hosted_mail_domain() -> (Node, Value) {
    require_web_daemons();
    assert!(
        Path::new("/usr/sbin/opendkim-genkey").is_file(),
        "/usr/sbin/opendkim-genkey is missing: install opendkim-tools (the test script does)"
    );
    let mut node = Node::with_real_apache();
    node.extra_real = vec!["opendkim-genkey"];
    let config = node.path(ops::certificate::NODE_CONFIG);
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, format!("name = \"{NODE_NAME}\"\n")).unwrap();
    ok(&mut node, &ensure_account(1, 10, "shop1"));
    ok(&mut node, &ensure_domain(2, 30, 10, DOMAIN));
    let created = ok(&mut node, &ensure_mail_domain(3, 50, 10, DOMAIN));
    assert_eq!(created["mail_host"], NODE_NAME, "{created}");
    ok(
        &mut node,
        &mail_op(
            4,
            "ensure_dkim_key",
            54,
            10,
            json!({"domain": DOMAIN, "selector": "mail2026", "bits": "rsa2048"}),
        ),
    );
    // Any operation on the domain answers its records as they are now, the key's among them.
    let result = ok(
        &mut node,
        &mail_op(5, "set_mail_sending_gate", 50, 10, json!({"open": true})),
    );
    (node, result)
}

#[test]
fn a_mail_domains_records_parse_with_dnspython_and_pass_the_spf_and_dmarc_rules() {
    let (_node, result) = hosted_mail_domain();
    let records = &result["records"];
    let checked = python(CHECK_RECORDS, &records.to_string());
    assert_eq!(checked["problems"], json!([]), "{checked}");
    let parsed = checked["records"].as_array().unwrap();
    assert_eq!(parsed.len(), records.as_array().unwrap().len());
    let one = |name: &str, kind: &str| {
        let found: Vec<&Value> = parsed
            .iter()
            .filter(|r| r["name"] == name && r["type"] == kind)
            .collect();
        assert_eq!(found.len(), 1, "{name} {kind} in {checked}");
        found[0].clone()
    };
    let node_fqdn = format!("{NODE_NAME}.");
    let mx = one(&format!("{DOMAIN}."), "MX");
    assert_eq!(mx["target"], node_fqdn.as_str());
    assert_eq!(mx["preference"], 10);
    let dkim = one(&format!("mail2026._domainkey.{DOMAIN}."), "TXT");
    let text = dkim["text"].as_str().unwrap();
    assert!(
        text.starts_with("v=DKIM1;") && text.contains("p=MII"),
        "{text}"
    );
    let strings: Vec<u64> = dkim["strings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect();
    assert!(
        strings.len() >= 2 && strings.iter().all(|n| *n <= 255),
        "a 2048-bit key's record is split into strings of at most 255 bytes: {strings:?}"
    );
    for (service, port, target) in [
        ("_submission._tcp", 587, node_fqdn.as_str()),
        ("_imaps._tcp", 993, node_fqdn.as_str()),
        ("_pop3s._tcp", 995, node_fqdn.as_str()),
        ("_imap._tcp", 0, "."),
        ("_pop3._tcp", 0, "."),
    ] {
        let srv = one(&format!("{service}.{DOMAIN}."), "SRV");
        assert_eq!(
            (
                srv["port"].as_u64().unwrap(),
                srv["target"].as_str().unwrap()
            ),
            (port, target)
        );
    }
    for label in ["autoconfig", "autodiscover"] {
        let cname = one(&format!("{label}.{DOMAIN}."), "CNAME");
        assert_eq!(cname["target"], node_fqdn.as_str());
    }
    assert!(parsed.iter().all(|r| r["ttl"] == 3600));
}

/// The settings every answer must carry: the node as the host of IMAPS, POP3S and
/// submission with STARTTLS.
fn assert_node_settings(settings: &Value, user: Option<&str>) {
    let user = user.map_or(Value::Null, |u| json!(u));
    let (imap, pop, smtp) = match settings["kind"].as_str() {
        Some("autoconfig") => ("imap", "pop3", "smtp"),
        _ => ("IMAP", "POP3", "SMTP"),
    };
    let starttls = match settings["kind"].as_str() {
        Some("autoconfig") => "STARTTLS",
        _ => "TLS",
    };
    assert_eq!(
        settings["servers"],
        json!([
            [imap, NODE_NAME, 993, "SSL", user],
            [pop, NODE_NAME, 995, "SSL", user],
            [smtp, NODE_NAME, 587, starttls, user],
        ]),
        "{settings}"
    );
}

#[test]
fn mail_clients_find_the_nodes_settings_for_a_hosted_domain_on_the_real_apache() {
    let (node, _) = hosted_mail_domain();
    let web = RealWeb::start(&node);
    let autoconfig = [
        (format!("autoconfig.{DOMAIN}"), "/mail/config-v1.1.xml"),
        (
            DOMAIN.to_owned(),
            "/.well-known/autoconfig/mail/config-v1.1.xml",
        ),
    ];
    for (host, path) in &autoconfig {
        let response = web.get(host, path, &[]);
        assert_eq!(
            response.status,
            200,
            "{host}{path}: {response:?}\n{}",
            web.error_log()
        );
        let settings = python(READ_SETTINGS, &response.body);
        assert_eq!(settings["kind"], "autoconfig");
        assert_eq!(settings["id"], DOMAIN);
        assert_eq!(settings["domains"], json!([DOMAIN]));
        assert_node_settings(&settings, Some("%EMAILADDRESS%"));
    }
    // Outlook POSTs the address it configures; the answer is the domain's, without a
    // LoginName, so the address the user typed stays the user name.
    let request = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n\
         <Autodiscover xmlns=\"http://schemas.microsoft.com/exchange/autodiscover/outlook/requestschema/2006\">\
         <Request><EMailAddress>info@{DOMAIN}</EMailAddress>\
         <AcceptableResponseSchema>http://schemas.microsoft.com/exchange/autodiscover/outlook/responseschema/2006a</AcceptableResponseSchema>\
         </Request></Autodiscover>"
    );
    for (host, path) in [
        (
            format!("autodiscover.{DOMAIN}"),
            "/autodiscover/autodiscover.xml",
        ),
        (
            format!("autodiscover.{DOMAIN}"),
            "/Autodiscover/Autodiscover.xml",
        ),
        (DOMAIN.to_owned(), "/autodiscover/autodiscover.xml"),
    ] {
        let response = web.post(&host, path, &["Content-Type: text/xml"], &request);
        assert_eq!(
            response.status,
            200,
            "{host}{path}: {response:?}\n{}",
            web.error_log()
        );
        let settings = python(READ_SETTINGS, &response.body);
        assert_eq!(settings["action"], "settings");
        assert_eq!(settings["account_type"], "email");
        assert_node_settings(&settings, None);
    }
    // The settings names serve the settings and nothing of the tenant's.
    let tenant_page = web.get(&format!("autoconfig.{DOMAIN}"), "/index.html", &[]);
    assert_eq!(tenant_page.status, 404, "{tenant_page:?}");
}

#[test]
fn removing_the_mail_domain_takes_its_settings_away() {
    let (mut node, _) = hosted_mail_domain();
    ok(&mut node, &mail_op(6, "remove_dkim_key", 54, 10, json!({})));
    let removed = ok(
        &mut node,
        &mail_op(7, "remove_mail_domain", 50, 10, json!({})),
    );
    assert_eq!(removed["records"], json!([]));
    let web = RealWeb::start(&node);
    let response = web.get(
        &format!("autoconfig.{DOMAIN}"),
        "/mail/config-v1.1.xml",
        &[],
    );
    assert_ne!(response.status, 200, "{response:?}");
    let response = web.get(DOMAIN, "/.well-known/autoconfig/mail/config-v1.1.xml", &[]);
    assert_eq!(response.status, 404, "{response:?}");
    let settings_dir = node.path(ops::mail_clients::MAIL_CLIENTS_DIR).join(id(50));
    assert!(!settings_dir.exists(), "{}", settings_dir.display());
}
