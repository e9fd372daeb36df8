//! Models of the mail stack's programs: `postfix check|reload`, `postmap -q`,
//! `postqueue -j|-f`, `doveconf -n`, `doveadm reload`, `sievec` and `opendkim-genkey`, on the
//! sysroot.
//!
//! What each model checks (real runs are in the provider's and the CLI's tests):
//!
//! - `postfix check`: `main.cf`, when the sysroot has one, is `name = value` lines,
//!   comments and continuations (Postfix's own rule). The node's tables must be `key value`
//!   lines without control characters; real Postfix only warns about such a line and ignores
//!   it, so the model is stricter where the node's own output is concerned.
//! - `doveconf -n`: the main configuration, when present, has balanced `{ }` sections; the
//!   node's passwd-file has the 8 fields of every line (Dovecot's auth process refuses a
//!   line without them at run time).
//! - `sievec`: a lexer and bracket/command check of the Sieve subset the node generates
//!   (RFC 5228 strings with `\\` and `\"` escapes, comments, tags, numbers), reporting like
//!   Pigeonhole (`line N: error: ...`), and a `.svbin` beside the script.
//! - `opendkim-genkey`: the two files with the real names, modes and stub format; the key
//!   itself is labelled simulated (the Sim has no RSA).
//! - `postqueue -j` prints the lines of `SIM_MAIL_QUEUE_FILE` (a queue as `postqueue -j`
//!   lists one; none when the file is absent), and `postqueue -f` turns every `deferred`
//!   message of it `active` (the delivery that follows is not modelled).
//! - `postfix reload` and `doveadm reload` record a line in `SIM_POSTFIX_RELOADS_FILE` /
//!   `SIM_DOVECOT_RELOADS_FILE` (the Sim models running services). `doveadm auth test` has
//!   no model (it needs the real auth service): exit 127.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use provider::{PostfixMap, PostfixTool, Provider};

use super::{Outcome, unix_ms};

/// Where a simulated `postfix reload` is recorded (a system path).
pub const SIM_POSTFIX_RELOADS_FILE: &str = "/var/lib/layerone-sim/postfix-reloads";
/// Where a simulated `doveadm reload` is recorded (a system path).
pub const SIM_DOVECOT_RELOADS_FILE: &str = "/var/lib/layerone-sim/dovecot-reloads";

/// The simulated queue, one message per line in `postqueue -j`'s format (a system path).
pub(crate) const SIM_MAIL_QUEUE_FILE: &str = "/var/lib/layerone-sim/mail-queue.jsonl";

/// Splits a leading `-c VALUE` off `args`.
fn config_option(args: &[String]) -> (Option<&str>, &[String]) {
    match args {
        [flag, value, rest @ ..] if flag == "-c" => (Some(value.as_str()), rest),
        _ => (None, args),
    }
}

fn record(provider: &Provider, file: &str, what: &str) -> Outcome {
    let path = provider.sysconf(file);
    let written = (|| {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut f = OpenOptions::new().create(true).append(true).open(&path)?;
        f.write_all(format!("{what} {}\n", unix_ms(provider)).as_bytes())
    })();
    match written {
        Ok(()) => Outcome::ok(),
        Err(e) => Outcome::fail(1, format!("layerone sim: record {what}: {e}\n")),
    }
}

fn has_control(line: &str) -> Option<char> {
    line.chars()
        .find(|&c| (c.is_control() && c != '\t') || c == '\u{7f}')
}

/// Postfix's tools, each by its own model.
pub(super) fn postfix_tool(provider: &Provider, tool: PostfixTool, args: &[String]) -> Outcome {
    match tool {
        PostfixTool::Postfix => postfix(provider, args),
        PostfixTool::Postmap => postmap(args),
        PostfixTool::Postqueue => postqueue(provider, args),
    }
}

fn postqueue(provider: &Provider, args: &[String]) -> Outcome {
    let (_, rest) = config_option(args);
    let path = provider.sysconf(SIM_MAIL_QUEUE_FILE);
    let queue = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Outcome::fail(75, format!("postqueue: fatal: read queue: {e}\n")),
    };
    match rest {
        [flag] if flag == "-j" => Outcome {
            status: 0,
            stdout: queue,
            stderr: String::new(),
        },
        [flag] if flag == "-f" && queue.is_empty() => Outcome::ok(),
        [flag] if flag == "-f" => {
            let flushed: String = queue
                .lines()
                .map(|line| {
                    let mut line = match serde_json::from_str::<serde_json::Value>(line) {
                        Ok(mut message) if message["queue_name"] == "deferred" => {
                            message["queue_name"] = "active".into();
                            message.to_string()
                        }
                        _ => line.to_owned(),
                    };
                    line.push('\n');
                    line
                })
                .collect();
            match std::fs::write(&path, flushed) {
                Ok(()) => Outcome::ok(),
                Err(e) => Outcome::fail(75, format!("postqueue: fatal: flush: {e}\n")),
            }
        }
        _ => Outcome::fail(64, "postqueue: fatal: usage: postqueue [-c dir] -j | -f\n"),
    }
}

pub(super) fn postfix(provider: &Provider, args: &[String]) -> Outcome {
    let (dir, rest) = config_option(args);
    let dir = dir
        .map(PathBuf::from)
        .unwrap_or_else(|| provider.sysconf(provider.mail_layout().postfix_dir));
    match rest {
        [verb] if verb == "check" => match check_postfix(provider, &dir) {
            Ok(()) => Outcome::ok(),
            Err(e) => Outcome::fail(1, e),
        },
        [verb] if verb == "reload" => match check_postfix(provider, &dir) {
            Ok(()) => record(provider, SIM_POSTFIX_RELOADS_FILE, "reload"),
            Err(e) => Outcome::fail(1, e),
        },
        _ => Outcome::fail(
            1,
            "postfix: fatal: usage: postfix [-c config_dir] [-Dv] command\n",
        ),
    }
}

fn check_postfix(provider: &Provider, dir: &Path) -> Result<(), String> {
    let main_cf = dir.join("main.cf");
    if let Ok(text) = std::fs::read_to_string(&main_cf) {
        for (i, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') || line.starts_with([' ', '\t']) {
                continue;
            }
            let name_ok = line.split_once('=').is_some_and(|(name, _)| {
                let name = name.trim();
                !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            });
            if !name_ok {
                return Err(format!(
                    "/usr/sbin/postconf: fatal: {}, line {}: missing '=' after attribute name: \"{}\"\n",
                    main_cf.display(),
                    i + 1,
                    trimmed
                ));
            }
        }
    }
    for map in PostfixMap::ALL {
        let path = provider.postfix_map_path(*map);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for (i, line) in text.split('\n').enumerate() {
            if let Some(c) = has_control(line) {
                return Err(format!(
                    "postfix: fatal: {}, line {}: control character {:?}\n",
                    path.display(),
                    i + 1,
                    c
                ));
            }
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            if trimmed.split_whitespace().count() < 2 {
                return Err(format!(
                    "postfix: fatal: {}, line {}: expected format: key whitespace value\n",
                    path.display(),
                    i + 1
                ));
            }
        }
    }
    Ok(())
}

pub(super) fn postmap(args: &[String]) -> Outcome {
    let (_, rest) = config_option(args);
    let [flag, key, table] = rest else {
        return Outcome::fail(
            1,
            "postmap: fatal: usage: postmap [-c dir] -q key type:file\n",
        );
    };
    let Some(file) = table.strip_prefix("texthash:").filter(|_| flag == "-q") else {
        return Outcome::fail(
            1,
            "postmap: fatal: usage: postmap [-c dir] -q key type:file\n",
        );
    };
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) => return Outcome::fail(1, format!("postmap: fatal: open {file}: {e}\n")),
    };
    let wanted = key.to_lowercase();
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with('#') {
            continue;
        }
        if let Some((k, v)) = line.split_once(char::is_whitespace)
            && k.to_lowercase() == wanted
        {
            return Outcome {
                status: 0,
                stdout: format!("{}\n", v.trim()),
                stderr: String::new(),
            };
        }
    }
    Outcome::fail(1, "")
}

pub(super) fn doveconf(provider: &Provider, args: &[String]) -> Outcome {
    let (file, rest) = config_option(args);
    if rest != ["-n"] {
        return Outcome::fail(64, "doveconf: Fatal: usage: doveconf [-c FILE] -n\n");
    }
    let file = file
        .map(PathBuf::from)
        .unwrap_or_else(|| provider.sysconf(provider.mail_layout().dovecot_config));
    let mut printed = String::new();
    if let Ok(text) = std::fs::read_to_string(&file) {
        let mut depth = 0i32;
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            depth += line.matches('{').count() as i32;
            depth -= line.matches('}').count() as i32;
            if depth < 0 {
                return Outcome::fail(
                    89,
                    format!(
                        "doveconf: Fatal: Error in configuration file {} line {}: Unexpected '}}'\n",
                        file.display(),
                        i + 1
                    ),
                );
            }
        }
        if depth != 0 {
            return Outcome::fail(
                89,
                format!(
                    "doveconf: Fatal: Error in configuration file {}: Missing '}}'\n",
                    file.display()
                ),
            );
        }
        printed = text;
    }
    let passwd = provider.dovecot_passwd_path();
    if let Ok(text) = std::fs::read_to_string(&passwd) {
        for (i, line) in text.split('\n').enumerate() {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if has_control(line).is_some() || line.split(':').count() < 8 {
                return Outcome::fail(
                    89,
                    format!(
                        "doveconf: Fatal: passwd-file {} line {}: expected user:password:uid:gid:gecos:home:shell:extra\n",
                        passwd.display(),
                        i + 1
                    ),
                );
            }
        }
    }
    Outcome {
        status: 0,
        stdout: printed,
        stderr: String::new(),
    }
}

pub(super) fn doveadm(provider: &Provider, args: &[String]) -> Outcome {
    let (_, rest) = config_option(args);
    match rest {
        [verb] if verb == "reload" => record(provider, SIM_DOVECOT_RELOADS_FILE, "reload"),
        _ => Outcome::fail(
            127,
            "layerone sim: doveadm has a model of `reload` only; run it for real\n",
        ),
    }
}

/// Commands and tests of the Sieve subset the node generates (RFC 5228 core, vacation,
/// date, relational, fileinto).
const SIEVE_WORDS: &[&str] = &[
    "require",
    "if",
    "elsif",
    "else",
    "keep",
    "discard",
    "stop",
    "fileinto",
    "redirect",
    "vacation",
    "allof",
    "anyof",
    "not",
    "true",
    "false",
    "header",
    "address",
    "envelope",
    "exists",
    "size",
    "currentdate",
    "date",
];

pub(super) fn sievec(args: &[String]) -> Outcome {
    let (_, rest) = config_option(args);
    let (script, out) = match rest {
        [script] => (PathBuf::from(script), None),
        [script, out] => (PathBuf::from(script), Some(PathBuf::from(out))),
        _ => {
            return Outcome::fail(
                64,
                "Usage: sievec [-c <config-file>] <script-file> [<out-file>]\n",
            );
        }
    };
    let name = script
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text = match std::fs::read(&script) {
        Ok(bytes) => bytes,
        Err(e) => {
            return Outcome::fail(
                1,
                format!(
                    "sievec: Fatal: failed to open sieve script {}: {e}\n",
                    script.display()
                ),
            );
        }
    };
    if let Err((line, message)) = check_sieve(&text) {
        return Outcome::fail(
            1,
            format!(
                "{name}: line {line}: error: {message}.\n{name}: error: parse failed.\nsievec: Fatal: failed to compile sieve script '{}'\n",
                script.display()
            ),
        );
    }
    let out = out.unwrap_or_else(|| script.with_extension("svbin"));
    let mut binary = b"layerone sim svbin\n".to_vec();
    binary.extend_from_slice(&text);
    match std::fs::write(&out, binary) {
        Ok(()) => Outcome::ok(),
        Err(e) => Outcome::fail(1, format!("sievec: Fatal: write {}: {e}\n", out.display())),
    }
}

/// Lexes `text` and checks brackets and command names; `Err((line, message))`.
pub(super) fn check_sieve(text: &[u8]) -> Result<(), (usize, String)> {
    let text = std::str::from_utf8(text).map_err(|_| (1, "script is not UTF-8".to_owned()))?;
    let chars: Vec<char> = text.chars().collect();
    let mut line = 1;
    let mut open: Vec<(char, usize)> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\n' => line += 1,
            ' ' | '\t' | '\r' | ',' | ';' => {}
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                let start = line;
                i += 2;
                loop {
                    match chars.get(i) {
                        None => return Err((start, "end of file before end of comment".into())),
                        Some('*') if chars.get(i + 1) == Some(&'/') => break,
                        Some('\n') => line += 1,
                        Some(_) => {}
                    }
                    i += 1;
                }
                i += 1;
            }
            '"' => {
                let start = line;
                i += 1;
                loop {
                    match chars.get(i) {
                        None => {
                            return Err((
                                start,
                                format!(
                                    "end of file before end of quoted string started at line {start}"
                                ),
                            ));
                        }
                        Some('\\') => i += 1,
                        Some('"') => break,
                        Some('\n') => line += 1,
                        Some(_) => {}
                    }
                    i += 1;
                }
            }
            '[' | '{' | '(' => open.push((c, line)),
            ']' | '}' | ')' => {
                let want = match c {
                    ']' => '[',
                    '}' => '{',
                    _ => '(',
                };
                match open.pop() {
                    Some((o, _)) if o == want => {}
                    _ => return Err((line, format!("unexpected '{c}'"))),
                }
            }
            ':' => {
                i += 1;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    i += 1;
                }
                continue;
            }
            c if c.is_ascii_digit() => {
                while chars.get(i).is_some_and(|c| c.is_ascii_digit()) {
                    i += 1;
                }
                if chars.get(i).is_some_and(|c| matches!(c, 'K' | 'M' | 'G')) {
                    i += 1;
                }
                continue;
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = i;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                if !SIEVE_WORDS.contains(&word.to_ascii_lowercase().as_str()) {
                    return Err((line, format!("unknown command '{word}'")));
                }
                continue;
            }
            other => return Err((line, format!("unexpected character {other:?}"))),
        }
        i += 1;
    }
    if let Some((c, at)) = open.pop() {
        return Err((at, format!("unclosed '{c}'")));
    }
    Ok(())
}

pub(super) fn opendkim_genkey(provider: &Provider, args: &[String]) -> Outcome {
    let mut bits = None;
    let mut domain = None;
    let mut selector = None;
    let mut dir = None;
    let mut iter = args.iter();
    while let Some(flag) = iter.next() {
        let slot = match flag.as_str() {
            "-b" => &mut bits,
            "-d" => &mut domain,
            "-s" => &mut selector,
            "-D" => &mut dir,
            "-h" => {
                iter.next();
                continue;
            }
            other => {
                return Outcome::fail(
                    64,
                    format!("opendkim-genkey: unrecognized option '{other}'\n"),
                );
            }
        };
        let Some(value) = iter.next() else {
            return Outcome::fail(
                64,
                format!("opendkim-genkey: option {flag} needs a value\n"),
            );
        };
        *slot = Some(value.clone());
    }
    let (Some(bits), Some(domain), Some(selector), Some(dir)) = (bits, domain, selector, dir)
    else {
        return Outcome::fail(64, "opendkim-genkey: usage: -b -d -s -D\n");
    };
    let Ok(bits) = bits.parse::<u32>() else {
        return Outcome::fail(64, format!("opendkim-genkey: bad key size {bits}\n"));
    };
    let dir = PathBuf::from(dir);
    // SubjectPublicKeyInfo of an RSA key: about bits/8 + 38 bytes.
    let mut state = seed(&format!("{domain}/{selector}/{}", unix_ms(provider)));
    let public: Vec<u8> = (0..bits / 8 + 38).map(|_| next(&mut state) as u8).collect();
    let p = base64(&public);
    let (head, tail) = p.split_at(p.len().min(250));
    let stub = format!(
        "{selector}._domainkey\tIN\tTXT\t( \"v=DKIM1; h=sha256; k=rsa; \"\n\t  \"p={head}\"\n\t  \"{tail}\" )  ; ----- DKIM key {selector} for {domain}\n"
    );
    let private =
        "-----BEGIN PRIVATE KEY-----\nlayerone sim: not a real key\n-----END PRIVATE KEY-----\n";
    for (name, content) in [
        (format!("{selector}.private"), private.to_owned()),
        (format!("{selector}.txt"), stub),
    ] {
        let path = dir.join(name);
        let written = std::fs::write(&path, content)
            .and_then(|()| std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)));
        if let Err(e) = written {
            return Outcome::fail(1, format!("opendkim-genkey: {}: {e}\n", path.display()));
        }
    }
    Outcome::ok()
}

fn seed(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(TABLE[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sieve_model_accepts_escaped_strings_and_refuses_breakouts() {
        check_sieve(
            b"require [\"vacation\"];\nvacation :days 7 :subject \"a \\\" b\" \"x\\\\\";\n",
        )
        .unwrap();
        let err = check_sieve(b"vacation \"x").unwrap_err();
        assert_eq!(err.0, 1);
        assert!(err.1.contains("end of file before end of quoted string"));
        let err = check_sieve(b"if true {\n").unwrap_err();
        assert!(err.1.contains("unclosed"), "{err:?}");
        let err = check_sieve(b"vacation \"a\";\nsystem \"rm\";\n").unwrap_err();
        assert_eq!(err, (2, "unknown command 'system'".to_owned()));
    }

    #[test]
    fn postqueue_lists_the_simulated_queue_and_a_flush_makes_deferred_mail_active() {
        let dir = tempfile::tempdir().unwrap();
        let provider = crate::test_provider(provider::Platform::Debian, dir.path());
        let run = |arg: &str| postqueue(&provider, &["-c".into(), "/x".into(), arg.into()]);
        assert_eq!(run("-j").stdout, "", "no queue file: an empty queue");
        let file = provider.sysconf(SIM_MAIL_QUEUE_FILE);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let deferred = r#"{"queue_name":"deferred","queue_id":"A1","arrival_time":1,"message_size":10,"sender":"s@example.com"}"#;
        let hold = r#"{"queue_name":"hold","queue_id":"B2","arrival_time":2,"message_size":20,"sender":""}"#;
        std::fs::write(&file, format!("{deferred}\n{hold}\n")).unwrap();
        let listed = provider::parse_queue_listing(run("-j").stdout.as_bytes());
        assert_eq!(listed.messages.len(), 2);
        assert_eq!(listed.messages[0].queue_name, "deferred");
        assert_eq!(run("-f").status, 0);
        let listed = provider::parse_queue_listing(run("-j").stdout.as_bytes());
        let queues: Vec<&str> = listed
            .messages
            .iter()
            .map(|m| m.queue_name.as_str())
            .collect();
        assert_eq!(queues, ["active", "hold"]);
        assert_eq!(listed.unparsed_lines, 0);
        assert_eq!(
            run("-d").status,
            64,
            "deleting mail is not a verb of the node"
        );
    }

    #[test]
    fn base64_matches_the_standard_alphabet() {
        assert_eq!(base64(b"Man"), "TWFu");
        assert_eq!(base64(b"Ma"), "TWE=");
        assert_eq!(base64(b"M"), "TQ==");
    }
}
