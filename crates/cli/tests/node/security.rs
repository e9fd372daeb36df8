//! The bug classes hosting panels keep shipping, tried against the real runner binary on a Sim
//! sysroot (docs/security.md lists them):
//!
//! - every string field of every operation, derived from the registry, fuzzed with hostile
//!   text: refused at admission naming the field, or written so that the file it lands in,
//!   parsed back, holds exactly the intended value and nothing more;
//! - `..` and friends in every path-like field refused at admission;
//! - a tenant's symlinks and hard links in its home: each fails (or is replaced without being
//!   followed by) only its own operation, nothing outside the home changes, and the next
//!   operation for another tenant succeeds.

use crate::common;

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::{Path, PathBuf};

use common::*;
use registry::{JobState, OperationEntry, Scope};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------
// Fields, derived from the registry.

#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Index(usize),
}

/// Every string or null leaf of `value` (a null is an optional string field left out).
fn string_leaves(value: &Value, prefix: &[Seg], out: &mut Vec<Vec<Seg>>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let mut p = prefix.to_vec();
                p.push(Seg::Key(k.clone()));
                string_leaves(v, &p, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                let mut p = prefix.to_vec();
                p.push(Seg::Index(i));
                string_leaves(v, &p, out);
            }
        }
        Value::String(_) | Value::Null => out.push(prefix.to_vec()),
        _ => {}
    }
}

fn get<'a>(value: &'a Value, path: &[Seg]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, seg| match seg {
        Seg::Key(k) => v.get(k),
        Seg::Index(i) => v.get(i),
    })
}

fn set(value: &mut Value, path: &[Seg], new: Value) {
    let (last, parents) = path.split_last().expect("a non-empty path");
    let parent = parents.iter().fold(value, |v, seg| match seg {
        Seg::Key(k) => &mut v[k.as_str()],
        Seg::Index(i) => &mut v[*i],
    });
    match last {
        Seg::Key(k) => {
            parent
                .as_object_mut()
                .expect("an object")
                .insert(k.clone(), new);
        }
        Seg::Index(i) => parent[*i] = new,
    }
}

fn render(path: &[Seg]) -> String {
    let mut out = String::from("resource");
    for seg in path {
        match seg {
            Seg::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// Every string field of an operation's request: the example's string (or null) leaves, and
/// every schema property the example leaves out.
fn string_fields(op: &dyn OperationEntry) -> Vec<Vec<Seg>> {
    let example = op.example();
    let mut fields = Vec::new();
    string_leaves(&example, &[], &mut fields);
    let schema = op.request_schema();
    for name in schema["properties"]
        .as_object()
        .expect("a request schema lists its properties")
        .keys()
    {
        if example.get(name).is_none() {
            fields.push(vec![Seg::Key(name.clone())]);
        }
    }
    fields
}

fn envelope(op: &dyn OperationEntry, request_id: &str, resource: Value) -> Value {
    match op.scope() {
        Scope::Tenant => {
            json!({"request_id": request_id, "operation": op.name(), "resource": resource})
        }
        Scope::Node => {
            json!({"request_id": request_id, "action": op.name(), "node_id": id(0xfeed), "resource": resource})
        }
    }
}

/// Hostile text: line breaks, NUL, quotes, shell metacharacters, Unicode look-alikes and
/// invisible characters, and overlong values.
fn payloads() -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = vec![
        ("newline", "\n".into()),
        ("CRLF", "\r\n".into()),
        ("CR", "\r".into()),
        ("NUL", "\0".into()),
        ("double quote", "\"".into()),
        ("single quote", "'".into()),
        ("backtick", "`id`".into()),
        ("command substitution", "$(id)".into()),
        ("variable", "${IFS}".into()),
        ("semicolon", "; id".into()),
        ("pipe", "| id".into()),
        ("ampersand", "& id".into()),
        ("redirect", "> /etc/passwd".into()),
        ("colon", ":0:0:".into()),
        ("hash", "# x".into()),
        ("angle brackets", "</VirtualHost>".into()),
        ("backslash", "\\".into()),
        ("tab", "\t".into()),
        ("space", " ".into()),
        ("percent", "%00".into()),
        ("glob", "*".into()),
        ("Cyrillic look-alike", "\u{0455}hop".into()),
        ("fullwidth look-alike", "\u{ff53}hop".into()),
        ("zero-width space", "\u{200b}".into()),
        ("right-to-left override", "\u{202e}".into()),
        ("line separator", "\u{2028}".into()),
        ("next line", "\u{85}".into()),
        ("combining mark", "e\u{301}".into()),
    ];
    out.push(("300 bytes", "x".repeat(300)));
    out.push(("20000 bytes", "y".repeat(20_000)));
    out
}

/// The values a field is tried with: each payload alone, and appended to and inserted into
/// the field's valid example value.
fn variants(original: Option<&Value>) -> Vec<(String, String)> {
    let base = original.and_then(Value::as_str).unwrap_or("");
    let mut out = Vec::new();
    for (what, p) in payloads() {
        out.push((format!("{what} alone"), p.clone()));
        if !base.is_empty() {
            out.push((format!("{what} appended"), format!("{base}{p}")));
            out.push((format!("{what} appended then text"), format!("{base}{p}x")));
            let mid = base.char_indices().nth(1).map_or(0, |(i, _)| i);
            out.push((
                format!("{what} inside"),
                format!("{}{p}{}", &base[..mid], &base[mid..]),
            ));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Parsers for the files a value can land in. An operation whose family has none here fails
// the test when a hostile value is accepted for it: a new family must say how its file reads.

/// `/etc/passwd`, `/etc/shadow`, `/etc/group`, `/etc/gshadow`: every line has exactly the
/// format's field count, and the tenant's line names exactly the intended user.
fn check_account_files(node: &Node, username: &str) -> Result<(), String> {
    for (file, fields) in [
        ("/etc/passwd", 7),
        ("/etc/shadow", 9),
        ("/etc/group", 4),
        ("/etc/gshadow", 4),
    ] {
        let text = std::fs::read_to_string(node.path(file)).map_err(|e| format!("{file}: {e}"))?;
        if text.contains(['\0', '\r']) {
            return Err(format!("{file} holds a NUL or CR"));
        }
        let mut names = Vec::new();
        for line in text.lines() {
            let parts: Vec<&str> = line.split(':').collect();
            if parts.len() != fields {
                return Err(format!("{file}: line {line:?} has {} fields", parts.len()));
            }
            names.push(parts[0].to_owned());
        }
        let expected: Vec<String> = match file {
            "/etc/passwd" | "/etc/shadow" => vec!["root".into(), "nobody".into()],
            // The groups of a fresh system, the web server's among them (seed_accounts).
            _ => vec!["root".into(), "nogroup".into(), "www-data".into()],
        }
        .into_iter()
        .chain(std::iter::once(username.to_owned()))
        .collect();
        if names != expected {
            return Err(format!(
                "{file} has the entries {names:?}, not {expected:?}"
            ));
        }
    }
    Ok(())
}

/// `authorized_keys`: the managed header and exactly the intended key line, which starts with
/// its key type (no options such as `command=`).
fn check_authorized_keys(node: &Node, home: &str, key: &str) -> Result<(), String> {
    let path = node.path(home).join(".ssh/authorized_keys");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("authorized_keys: {e}"))?;
    let lines: Vec<&str> = text.split('\n').collect();
    let keys: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    if keys != [key] {
        return Err(format!(
            "authorized_keys holds {keys:?}, not exactly {key:?}"
        ));
    }
    if text.contains(['\r', '\0']) || lines.len() != 3 {
        return Err(format!("authorized_keys has unexpected lines: {text:?}"));
    }
    let kind = key.split(' ').next().unwrap_or_default();
    if !kind.starts_with("ssh-") && !kind.starts_with("ecdsa-") && !kind.starts_with("sk-") {
        return Err(format!("the key line starts with {kind:?}, not a key type"));
    }
    Ok(())
}

/// The vhost, parsed as Apache reads it: exactly the directives the node renders, with the
/// intended names and document root as their only arguments.
fn check_vhost(node: &Node, resource_id: &str, resource: &Value, home: &str) -> Result<(), String> {
    let path = node
        .path(node.provider.apache_layout().vhosts_dir)
        .join(format!("{resource_id}.conf"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("vhost: {e}"))?;
    if text.contains(['\r', '\0', '\\', '`', '$', '\'']) {
        return Err(format!(
            "the vhost holds a control or quoting character: {text:?}"
        ));
    }
    let docroot = node
        .path(home)
        .join(
            resource["docroot"]
                .as_str()
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    Path::new("web")
                        .join(resource["domain"].as_str().unwrap_or_default())
                        .join("public_html")
                }),
        )
        .display()
        .to_string();
    let aliases: Vec<&str> = resource["aliases"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut expected = vec![
        "<VirtualHost *:80>".to_owned(),
        format!(
            "ServerName {}",
            resource["domain"].as_str().unwrap_or_default()
        ),
    ];
    if !aliases.is_empty() {
        expected.push(format!("ServerAlias {}", aliases.join(" ")));
    }
    // Who the requests run as: the ids recorded for the account whose home this is.
    let account = node
        .state()
        .all_resources()
        .unwrap()
        .into_iter()
        .find(|r| r.family == "account" && r.data["home"] == home)
        .ok_or_else(|| format!("no account has the home {home}"))?;
    let tenant = ops::web_isolation::WebTenant {
        uid: u32::try_from(account.data["uid"].as_u64().unwrap_or_default()).unwrap(),
        gid: u32::try_from(account.data["gid"].as_u64().unwrap_or_default()).unwrap(),
        home: node.path(home),
    };
    expected.extend(
        ops::web_isolation::render_tenant_section(&tenant)
            .lines()
            .map(str::trim)
            .filter(|l| !l.starts_with('#'))
            .map(str::to_owned),
    );
    let challenges = node
        .path(ops::certificate::ACME_WEBROOT)
        .join(".well-known/acme-challenge");
    expected.extend([
        format!(
            "Alias \"/.well-known/acme-challenge/\" \"{}/\"",
            challenges.display()
        ),
        format!("<Directory \"{}\">", challenges.display()),
        "Options None".to_owned(),
        "AllowOverride None".to_owned(),
        "Require all granted".to_owned(),
        "</Directory>".to_owned(),
        format!("DocumentRoot \"{docroot}\""),
        format!("<Directory \"{docroot}\">"),
        "Options -Indexes -FollowSymLinks +SymLinksIfOwnerMatch".to_owned(),
        format!(
            "AllowOverride Options={} None",
            ops::web_isolation::HTACCESS_OPTIONS.join(",")
        ),
        format!(
            "AllowOverrideList {}",
            ops::web_isolation::HTACCESS_DIRECTIVES.join(" ")
        ),
        "Require all granted".to_owned(),
        "</Directory>".to_owned(),
        "</VirtualHost>".to_owned(),
    ]);
    let directives: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect();
    if directives != expected {
        return Err(format!(
            "the vhost's directives are {directives:#?}, not {expected:#?}"
        ));
    }
    Ok(())
}

/// The one account every other example names.
fn example_account() -> Value {
    let op = declarations::registry()
        .operation("ensure_account")
        .expect("the registry has ensure_account");
    envelope(op, &id(0xacc), op.example())
}

/// Runs an accepted hostile request on a fresh node (with the example account first, unless
/// the request is that account's own) and parses the file it lands in.
fn run_accepted(op: &dyn OperationEntry, body: &Value) -> Result<(), String> {
    let mut node = Node::new();
    let account = example_account();
    let username = account["resource"]["username"].as_str().unwrap().to_owned();
    if op.name() != "ensure_account" {
        node.submit(&account);
        node.pass();
    }
    // What the family's example builds on: the example web domain, mail domain, mailbox.
    let needs: &[&str] = match op.family() {
        "redirect" | "php_version" | "certificate" => &["ensure_web_domain"],
        "mailbox" | "mail_forwarder" | "dkim_key" | "spam_filter" => &["ensure_mail_domain"],
        "autoresponder" => &["ensure_mail_domain", "ensure_mailbox"],
        _ => &[],
    };
    for (i, name) in needs.iter().enumerate() {
        let needed = declarations::registry()
            .operation(name)
            .expect("the prerequisite operation exists");
        node.submit(&envelope(needed, &id(0xb00 + i as u64), needed.example()));
        node.pass();
    }
    let job = declarations::registry()
        .validate(body.to_string().as_bytes(), &node.node_id)
        .map_err(|e| format!("revalidation failed: {e:?}"))?;
    let canonical: Value = serde_json::from_str(&job.canonical).expect("canonical JSON");
    let resource = &canonical["resource"];
    node.submit(body);
    node.pass();
    let rid = body["request_id"].as_str().unwrap();
    let view = node.state().job(rid).unwrap().expect("the job exists");
    node.check_converged();
    if view.state == JobState::Failed {
        // Refused at execution with a typed error (a look-alike domain that is not the
        // account's mail domain, say): nothing may have changed, which check_converged shows.
        return match view.error {
            Some(e) if !e.code.is_empty() => Ok(()),
            other => Err(format!("the job failed without a typed error: {other:?}")),
        };
    }
    if view.state != JobState::Succeeded {
        return Err(format!("the job did not finish: {:?}", view.state));
    }
    let username = resource["username"]
        .as_str()
        .unwrap_or(&username)
        .to_owned();
    check_account_files(&node, &username)?;
    let home = format!("/home/{username}");
    match op.family() {
        "account" => Ok(()),
        "ssh_key" => check_authorized_keys(&node, &home, resource["key"].as_str().unwrap_or("")),
        "web_domain" => check_vhost(&node, job.resource_id.as_str(), resource, &home),
        other => match PARSED_ELSEWHERE
            .iter()
            .find(|(family, _, _)| *family == other)
        {
            Some((_, free_text, _)) => no_control_characters(resource, free_text),
            None => Err(format!(
                "a hostile value was accepted for family {other}, which has no parser in this test: add one"
            )),
        },
    }
}

/// Families whose accepted values land in files this test does not parse, with the fields that
/// are free text (they may hold line breaks, escaped where they land) and the test that parses
/// their files back. Every other string of theirs must be free of control characters, so no
/// value can add a line to a line-based file.
const PARSED_ELSEWHERE: &[(&str, &[&str], &str)] = &[
    (
        "mail_domain",
        &[],
        "generated_mail_configuration_passes_the_real_checks_and_authenticates",
    ),
    (
        "mailbox",
        &[],
        "generated_mail_configuration_passes_the_real_checks_and_authenticates",
    ),
    (
        "mail_forwarder",
        &[],
        "generated_mail_configuration_passes_the_real_checks_and_authenticates",
    ),
    (
        "dkim_key",
        &[],
        "dkim_record_in_the_result_is_the_key_on_disk",
    ),
    (
        "spam_filter",
        &[],
        "generated_mail_configuration_passes_the_real_checks_and_authenticates",
    ),
    (
        "autoresponder",
        &["subject", "body"],
        "hostile_autoresponder_text_stays_inside_its_sieve_strings",
    ),
    (
        "redirect",
        &[],
        "redirects_spare_the_challenge_and_suspension_leaves_the_docroot_alone",
    ),
    (
        "scheduled_task",
        &[],
        "scheduled_tasks_become_the_tenants_crontab_and_pass_the_real_cron_parser",
    ),
    (
        "ftp_account",
        &[],
        "ftp_accounts_are_jailed_mapped_to_the_tenant_and_read_back_by_the_real_pure_pw",
    ),
    (
        "mysql_database",
        &[],
        "every_mysql_operation_against_a_real_server",
    ),
    (
        "mysql_user",
        &[],
        "every_mysql_operation_against_a_real_server",
    ),
    (
        "mysql_grant",
        &[],
        "every_mysql_operation_against_a_real_server",
    ),
];

fn no_control_characters(resource: &Value, free_text: &[&str]) -> Result<(), String> {
    fn walk(value: &Value, path: &str, free_text: &[&str], out: &mut Vec<String>) {
        match value {
            Value::String(s)
                if s.chars().any(char::is_control)
                    && !free_text.iter().any(|f| path.ends_with(&format!(".{f}"))) =>
            {
                out.push(format!("{path}: {s:?}"));
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(item, &format!("{path}[{i}]"), free_text, out);
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    walk(item, &format!("{path}.{key}"), free_text, out);
                }
            }
            _ => {}
        }
    }
    let mut bad = Vec::new();
    walk(resource, "resource", free_text, &mut bad);
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!("control characters were accepted: {bad:?}"))
    }
}

#[test]
fn every_string_field_fuzzed_is_refused_naming_it_or_lands_verbatim() {
    let node_id: registry::Hex32 = id(0xfeed).parse().unwrap();
    let mut refused = 0usize;
    let mut accepted = 0usize;
    let mut failures = Vec::new();
    let mut fields_seen = 0usize;
    for op in declarations::registry().operations() {
        let example = op.example();
        for path in string_fields(op) {
            fields_seen += 1;
            let field = render(&path);
            for (what, value) in variants(get(&example, &path)) {
                let mut resource = example.clone();
                set(&mut resource, &path, Value::String(value.clone()));
                let body = envelope(op, &id(0xbad), resource);
                match declarations::registry().validate(body.to_string().as_bytes(), &node_id) {
                    Err(e) => {
                        if e.field != field {
                            failures.push(format!(
                                "{} {field} {what}: refused but named {:?} ({})",
                                op.name(),
                                e.field,
                                e.code
                            ));
                        } else {
                            refused += 1;
                        }
                    }
                    Ok(_) => {
                        accepted += 1;
                        if let Err(e) = run_accepted(op, &body) {
                            failures.push(format!(
                                "{} {field} {what} ({value:?}) was accepted: {e}",
                                op.name()
                            ));
                        }
                    }
                }
            }
        }
        // The envelope's own string fields.
        let valid = envelope(op, &id(0xbad), example.clone());
        for key in ["request_id", "operation", "action", "node_id"] {
            let Some(original) = valid.get(key) else {
                continue;
            };
            for (what, value) in variants(Some(original)) {
                let mut body = valid.clone();
                body[key] = Value::String(value);
                match declarations::registry().validate(body.to_string().as_bytes(), &node_id) {
                    Err(e) if e.field == key => refused += 1,
                    Err(e) => failures.push(format!(
                        "{} envelope {key} {what}: named {:?}",
                        op.name(),
                        e.field
                    )),
                    Ok(_) => {
                        failures.push(format!("{} envelope {key} {what}: accepted", op.name()))
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} hostile values were mishandled:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        fields_seen >= declarations::registry().operations().count(),
        "only {fields_seen} string fields found"
    );
    assert!(
        accepted > 0,
        "no legal hostile value was run and parsed back"
    );
    eprintln!(
        "{fields_seen} string fields: {refused} hostile values refused naming the field, {accepted} legal ones run and parsed back"
    );
}

#[test]
fn dot_dot_in_every_path_like_field_is_refused_at_admission() {
    let node_id: registry::Hex32 = id(0xfeed).parse().unwrap();
    let mut path_like = Vec::new();
    for op in declarations::registry().operations() {
        let example = op.example();
        for path in string_fields(op) {
            // A field is path-like if it accepts a relative path with a separator, and is not
            // free text (which takes any words, "public site" as well: an autoresponder's body).
            let accepts = |value: &str| {
                let mut probe = example.clone();
                set(&mut probe, &path, json!(value));
                let body = envelope(op, &id(0xbad), probe);
                declarations::registry()
                    .validate(body.to_string().as_bytes(), &node_id)
                    .is_ok()
            };
            if !accepts("public/site") || accepts("public site") {
                continue;
            }
            let field = render(&path);
            path_like.push(format!("{} {field}", op.name()));
            for hostile in [
                "..",
                "../x",
                "../../etc/passwd",
                "a/..",
                "a/../b",
                "a/../../b",
                ".",
                "./a",
                "a/./b",
                "/etc",
                "/",
                "a//b",
                "a/",
                ".ssh",
                "a/.ssh",
                "..\u{0}",
                "a\\..\\b",
                "%2e%2e/x",
                "\u{ff0e}\u{ff0e}/x",
            ] {
                let mut resource = example.clone();
                set(&mut resource, &path, json!(hostile));
                let body = envelope(op, &id(0xbad), resource);
                match declarations::registry().validate(body.to_string().as_bytes(), &node_id) {
                    Err(e) => assert_eq!(e.field, field, "{} {hostile:?}", op.name()),
                    Ok(_) => panic!("{} accepted {hostile:?} at {field}", op.name()),
                }
            }
        }
    }
    assert!(
        !path_like.is_empty(),
        "no path-like field found: the probe is broken"
    );
    eprintln!("path-like fields checked: {path_like:?}");
}

// ---------------------------------------------------------------------------------------
// Symlink and hard-link attacks by a tenant.

/// What a tree holds: every entry's kind, mode, owner and content (file bytes or link target).
/// Link counts are left out: replacing a tenant's hard link lowers its target's count.
fn snapshot(root: &Path, skip: &[PathBuf]) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_owned()];
    let mut seen = 0;
    while let Some(dir) = stack.pop() {
        seen += 1;
        assert!(seen < 100_000, "the sysroot is unexpectedly large");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if skip.iter().any(|s| path.starts_with(s)) {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let what = if meta.file_type().is_symlink() {
                format!("link {:?}", std::fs::read_link(&path).unwrap())
            } else if meta.is_dir() {
                stack.push(path.clone());
                "dir".to_owned()
            } else {
                format!("file {:?}", std::fs::read(&path).unwrap())
            };
            out.insert(
                path,
                format!(
                    "{what} mode {:o} owner {}:{}",
                    meta.mode(),
                    meta.uid(),
                    meta.gid()
                ),
            );
        }
    }
    out
}

fn web_domain(
    req: u64,
    domain_id: u64,
    account: u64,
    domain: &str,
    docroot: Option<&str>,
) -> Value {
    json!({"request_id": id(req), "operation": "ensure_web_domain",
           "resource": {"id": id(domain_id), "account": id(account), "domain": domain, "docroot": docroot}})
}

#[test]
fn tenant_symlink_and_hardlink_attacks_fail_only_their_own_operation() {
    let mut node = Node::new();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.submit(&ensure_account(2, 11, "shop2"));
    node.pass();
    node.submit(&ensure_key(3, 21, 11));
    node.pass();
    assert_eq!(node.job_state(&id(3)), Some(JobState::Succeeded));
    let home1 = node.path("/home/shop1");
    let home2 = node.path("/home/shop2");
    let etc = node.path("/etc");
    std::fs::write(home2.join("secret.txt"), b"shop2's data").unwrap();

    // (name, how the tenant prepares its home, the request, what must hold afterwards)
    type Prepare = Box<dyn Fn(&Path)>;
    let attacks: Vec<(&str, Prepare, Value)> = vec![
        (
            "docroot parent is a symlink to /etc",
            Box::new({
                let etc = etc.clone();
                move |home: &Path| symlink(&etc, home.join("web")).unwrap()
            }),
            web_domain(100, 30, 10, "shop.example.com", None),
        ),
        (
            "docroot is a symlink to another tenant's home",
            Box::new({
                let home2 = home2.clone();
                move |home: &Path| symlink(&home2, home.join("site")).unwrap()
            }),
            web_domain(101, 31, 10, "site.example.com", Some("site")),
        ),
        (
            "a docroot component deep down is a symlink to /etc",
            Box::new({
                let etc = etc.clone();
                move |home: &Path| {
                    std::fs::create_dir_all(home.join("deep/a")).unwrap();
                    symlink(&etc, home.join("deep/a/b")).unwrap();
                }
            }),
            web_domain(102, 32, 10, "deep.example.com", Some("deep/a/b/c")),
        ),
        (
            "log directory is a symlink to another tenant's home",
            Box::new({
                let home2 = home2.clone();
                move |home: &Path| {
                    std::fs::create_dir_all(home.join("web/logs.example.com")).unwrap();
                    symlink(&home2, home.join("web/logs.example.com/logs")).unwrap();
                }
            }),
            web_domain(
                103,
                33,
                10,
                "logs.example.com",
                Some("web/logs.example.com/logs/public_html"),
            ),
        ),
        (
            ".ssh is a symlink to /etc",
            Box::new({
                let etc = etc.clone();
                move |home: &Path| symlink(&etc, home.join(".ssh")).unwrap()
            }),
            ensure_key(104, 20, 10),
        ),
        (
            ".ssh is a symlink to another tenant's .ssh",
            Box::new({
                let home2 = home2.clone();
                move |home: &Path| symlink(home2.join(".ssh"), home.join(".ssh")).unwrap()
            }),
            ensure_key(105, 20, 10),
        ),
    ];
    let mut req = 200;
    for (name, prepare, request) in attacks {
        // A fresh home for each attack: undo the previous one.
        for entry in std::fs::read_dir(&home1).unwrap().flatten() {
            let p = entry.path();
            if std::fs::symlink_metadata(&p).unwrap().is_dir() {
                std::fs::remove_dir_all(&p).unwrap();
            } else {
                std::fs::remove_file(&p).unwrap();
            }
        }
        prepare(&home1);
        let before = snapshot(node.root_path(), std::slice::from_ref(&home1));
        node.submit(&request);
        node.pass();
        let rid = request["request_id"].as_str().unwrap();
        let job = node.state().job(rid).unwrap().unwrap();
        assert_eq!(job.state, JobState::Failed, "{name}: {job:?}");
        assert_eq!(
            job.error.as_ref().unwrap().code,
            "tenant_path_unsafe",
            "{name}: {:?}",
            job.error
        );
        let after = snapshot(node.root_path(), std::slice::from_ref(&home1));
        let changed: Vec<_> = before
            .keys()
            .chain(after.keys())
            .filter(|k| before.get(*k) != after.get(*k))
            .collect();
        assert!(
            changed.is_empty(),
            "{name}: changed outside the tenant's home: {changed:?}"
        );
        // The next operation for another tenant succeeds.
        req += 1;
        let other = json!({"request_id": id(req), "operation": "ensure_ssh_key",
            "resource": {"id": id(1000 + req), "account": id(11), "key": KEY}});
        node.submit(&other);
        node.pass();
        assert_eq!(
            node.job_state(&id(req)),
            Some(JobState::Succeeded),
            "{name}: the next job of another tenant failed"
        );
    }
    assert_eq!(
        std::fs::read(home2.join("secret.txt")).unwrap(),
        b"shop2's data"
    );
}

#[test]
fn authorized_keys_replaced_by_a_link_is_replaced_never_written_through() {
    let mut node = Node::new();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.submit(&ensure_account(2, 11, "shop2"));
    node.pass();
    node.submit(&ensure_key(3, 21, 11));
    node.pass();
    let home1 = node.path("/home/shop1");
    let home2 = node.path("/home/shop2");
    std::fs::create_dir(home1.join(".ssh")).unwrap();
    let cases: Vec<(&str, PathBuf, bool)> = vec![
        ("symlink to /etc/passwd", node.path("/etc/passwd"), false),
        (
            "symlink to another tenant's authorized_keys",
            home2.join(".ssh/authorized_keys"),
            false,
        ),
        ("hard link to /etc/shadow", node.path("/etc/shadow"), true),
        (
            "hard link to another tenant's authorized_keys",
            home2.join(".ssh/authorized_keys"),
            true,
        ),
    ];
    let mut req = 100;
    for (name, target, hard) in cases {
        let link = home1.join(".ssh/authorized_keys");
        let _ = std::fs::remove_file(&link);
        if hard {
            std::fs::hard_link(&target, &link).unwrap();
        } else {
            symlink(&target, &link).unwrap();
        }
        let before = snapshot(node.root_path(), std::slice::from_ref(&home1));
        // Adding a key and removing every key: both rewrite the file.
        req += 1;
        node.submit(&ensure_key(req, 20, 10));
        node.pass();
        let job = node.state().job(&id(req)).unwrap().unwrap();
        // Root renames a new file over the link (or refuses): the target is never written.
        match job.state {
            JobState::Succeeded => {
                let meta = std::fs::symlink_metadata(&link).unwrap();
                assert!(
                    meta.is_file() && meta.nlink() == 1,
                    "{name}: authorized_keys is still a link"
                );
                check_authorized_keys(&node, "/home/shop1", KEY).unwrap();
            }
            JobState::Failed => assert_eq!(job.error.unwrap().code, "tenant_path_unsafe"),
            other => panic!("{name}: {other:?}"),
        }
        let after = snapshot(node.root_path(), std::slice::from_ref(&home1));
        let changed: Vec<_> = before
            .keys()
            .chain(after.keys())
            .filter(|k| before.get(*k) != after.get(*k))
            .collect();
        assert!(changed.is_empty(), "{name}: changed outside: {changed:?}");
        // The same link again, then remove the key: unlinking removes the link, not its target.
        let _ = std::fs::remove_file(&link);
        if hard {
            std::fs::hard_link(&target, &link).unwrap();
        } else {
            symlink(&target, &link).unwrap();
        }
        let before = snapshot(node.root_path(), std::slice::from_ref(&home1));
        req += 1;
        node.submit(&remove_key(req, 20, 10));
        node.pass();
        assert_eq!(
            node.job_state(&id(req)),
            Some(JobState::Succeeded),
            "{name}"
        );
        assert!(
            std::fs::symlink_metadata(&link).is_err(),
            "{name}: the link is still there"
        );
        let after = snapshot(node.root_path(), std::slice::from_ref(&home1));
        assert_eq!(before, after, "{name}: removing changed something outside");
        req += 1;
        node.submit(
            &json!({"request_id": id(req), "operation": "ensure_ssh_key",
            "resource": {"id": id(1000 + req), "account": id(11), "key": KEY}}),
        );
        node.pass();
        assert_eq!(
            node.job_state(&id(req)),
            Some(JobState::Succeeded),
            "{name}"
        );
    }
}

#[test]
fn removing_an_account_never_follows_its_links() {
    let mut node = Node::new();
    node.submit(&ensure_account(1, 10, "shop1"));
    node.submit(&ensure_account(2, 11, "shop2"));
    node.pass();
    let home1 = node.path("/home/shop1");
    let home2 = node.path("/home/shop2");
    std::fs::write(home2.join("secret.txt"), b"shop2's data").unwrap();
    symlink(node.path("/etc"), home1.join("etc")).unwrap();
    symlink(&home2, home1.join("logs")).unwrap();
    symlink(home2.join("secret.txt"), home1.join("secret-link")).unwrap();
    std::fs::hard_link(node.path("/etc/shadow"), home1.join("shadow-link")).unwrap();
    std::fs::create_dir(home1.join("web")).unwrap();
    symlink(&home2, home1.join("web/public_html")).unwrap();
    let skip = [home1.clone(), node.path("/etc")];
    let before = snapshot(node.root_path(), &skip);
    node.submit(&account_op(3, "remove_account", 10));
    node.pass();
    assert_eq!(node.job_state(&id(3)), Some(JobState::Succeeded));
    assert!(!home1.exists(), "the home is still there");
    let after = snapshot(node.root_path(), &skip);
    assert_eq!(
        before, after,
        "removing shop1 changed something outside its home"
    );
    assert_eq!(
        std::fs::read(home2.join("secret.txt")).unwrap(),
        b"shop2's data"
    );
    let passwd = std::fs::read_to_string(node.path("/etc/passwd")).unwrap();
    assert!(passwd.contains("shop2:"), "{passwd}");
    check_account_files(&node, "shop2").unwrap();
    node.submit(&ensure_key(4, 21, 11));
    node.pass();
    assert_eq!(node.job_state(&id(4)), Some(JobState::Succeeded));
}
