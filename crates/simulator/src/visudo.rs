//! Model of `visudo -c -f FILE` (sudo 1.9) for the subset of sudoers the node writes.
//!
//! Accepted, as the real parser accepts them: blank lines, `#` comments, `Defaults` with
//! comma-separated flags (`log_year`, `!log_host`), integers (`loglinelen=0`) and paths
//! (`logfile="/var/log/..."`, which must be absolute), and user specifications
//! `USERS HOSTS=(RUNAS[:GROUPS]) COMMANDS` whose users are names or `%group`s, hosts and run-as
//! lists are names or `ALL`, and commands are `ALL` or `!ALL`. Errors are reported like
//! sudo 1.9 (`FILE:LINE:COL: syntax error`, `unknown defaults entry "x"`, exit 1). Anything
//! outside the subset (includes, aliases, tags, line continuations, other `Defaults` forms) is
//! refused with a message saying it is not modelled, never accepted on faith: the Sim may
//! refuse a file the real visudo takes, never the other way round. The real visudo runs in
//! the integration tests.

use provider::Provider;

use super::{CommandLine, Outcome};

/// `Defaults` the model knows, with the kind of value each takes.
const DEFAULTS: &[(&str, Kind)] = &[
    ("logfile", Kind::Path),
    ("log_year", Kind::Flag),
    ("log_host", Kind::Flag),
    ("loglinelen", Kind::Integer),
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Flag,
    Integer,
    Path,
}

pub(crate) fn visudo(_provider: &Provider, args: &[String]) -> Outcome {
    // visudo's options are short ones; the node passes exactly `-c -f FILE`.
    let line = match CommandLine::parse("visudo", args, &["-f"], &["-c", "-q"]) {
        Ok(line) => line,
        Err(outcome) => return outcome,
    };
    if !line.has("-c") {
        return Outcome::fail(
            1,
            "layerone sim: only visudo's check mode (-c) is modelled\n",
        );
    }
    let Some(file) = line.value("-f") else {
        return Outcome::fail(
            1,
            "layerone sim: visudo -c without -f would check /etc/sudoers; not modelled\n",
        );
    };
    if !line.operands.is_empty() {
        return Outcome::fail(1, "usage: visudo [-chqsV] [[-f] sudoers ]\n");
    }
    let text = match std::fs::read(file) {
        Ok(bytes) => bytes,
        Err(e) => return Outcome::fail(1, format!("visudo: unable to open {file}: {e}\n")),
    };
    match check(&text) {
        Ok(()) => Outcome {
            status: 0,
            stdout: format!("{file}: parsed OK\n"),
            stderr: String::new(),
        },
        Err((line, col, message)) => Outcome::fail(1, format!("{file}:{line}:{col}: {message}\n")),
    }
}

type Problem = (usize, usize, String);

/// Checks a whole file; the first problem, with its 1-based line and column.
pub(crate) fn check(text: &[u8]) -> Result<(), Problem> {
    let Ok(text) = std::str::from_utf8(text) else {
        return Err((1, 1, "syntax error".into()));
    };
    for (i, raw) in text.split('\n').enumerate() {
        let n = i + 1;
        if let Some(col) = raw.find(|c: char| c.is_control() && c != '\t') {
            return Err((n, col + 1, "syntax error".into()));
        }
        let line = strip_comment(raw);
        let trimmed = line.trim();
        if trimmed.is_empty() {
            if raw.trim_start().starts_with("#include") {
                return Err((n, 1, not_modelled("#include directives")));
            }
            continue;
        }
        let col = line.len() - line.trim_start().len() + 1;
        if trimmed.ends_with('\\') {
            return Err((n, col, not_modelled("line continuations")));
        }
        if trimmed.starts_with('@') {
            return Err((n, col, not_modelled("@include directives")));
        }
        let result = if let Some(rest) = trimmed.strip_prefix("Defaults") {
            defaults(rest, col + "Defaults".len())
        } else {
            user_spec(trimmed, col)
        };
        result.map_err(|(c, m)| (n, c, m))?;
    }
    Ok(())
}

fn not_modelled(what: &str) -> String {
    format!("layerone sim: {what} are not modelled")
}

/// The line up to a comment. `#` followed by a digit is a uid (`#1000`), not a comment.
fn strip_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    let mut in_quotes = false;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' => in_quotes = !in_quotes,
            b'#' if !in_quotes && !bytes.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                return &line[..i];
            }
            _ => {}
        }
    }
    line
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

fn is_word(s: &str) -> bool {
    !s.is_empty() && s.chars().all(is_word_char)
}

/// `Defaults` followed by whitespace and a comma-separated list; `col` is the column just
/// after the keyword.
fn defaults(rest: &str, col: usize) -> Result<(), (usize, String)> {
    if rest.starts_with([':', '@', '>', '!']) {
        return Err((
            col,
            not_modelled("per-user, per-host and per-command Defaults"),
        ));
    }
    if !rest.starts_with([' ', '\t']) {
        return Err((col, "syntax error".into()));
    }
    let mut pos = col;
    let mut input = rest;
    loop {
        let skipped = input.len() - input.trim_start().len();
        pos += skipped;
        input = input.trim_start();
        let entry_col = pos;
        let (negated, body) = match input.strip_prefix('!') {
            Some(b) => (true, b),
            None => (false, input),
        };
        let name_len = body
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(body.len());
        let name = &body[..name_len];
        if name.is_empty() {
            return Err((entry_col, "syntax error".into()));
        }
        let mut after = &body[name_len..];
        let kind = DEFAULTS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, k)| *k)
            .ok_or_else(|| (entry_col, format!("unknown defaults entry \"{name}\"")))?;
        let value_col = pos + usize::from(negated) + name_len + 1;
        if let Some(v) = after.strip_prefix('=') {
            if negated {
                return Err((entry_col, "syntax error".into()));
            }
            let (value, rest) = take_value(v).ok_or((value_col, "syntax error".to_owned()))?;
            match kind {
                Kind::Flag => {
                    return Err((
                        entry_col,
                        format!("option \"{name}\" does not take a value"),
                    ));
                }
                Kind::Integer if value.parse::<i64>().is_err() => {
                    return Err((
                        value_col,
                        format!("value \"{value}\" is invalid for option \"{name}\""),
                    ));
                }
                Kind::Path if !value.starts_with('/') => {
                    return Err((
                        value_col,
                        format!("values for \"{name}\" must start with a '/'"),
                    ));
                }
                _ => {}
            }
            after = rest;
        } else if after.starts_with(['+', '-']) {
            return Err((entry_col, not_modelled("list Defaults operators")));
        } else if !negated && kind != Kind::Flag {
            return Err((entry_col, format!("no value specified for \"{name}\"")));
        }
        let consumed = input.len() - after.len();
        pos += consumed;
        let trimmed = after.trim_start();
        pos += after.len() - trimmed.len();
        match trimmed.strip_prefix(',') {
            Some(next) => {
                pos += 1;
                input = next;
            }
            None if trimmed.is_empty() => return Ok(()),
            None => return Err((pos, "syntax error".into())),
        }
    }
}

/// A Defaults value: `"quoted, with \" escapes"` or a run without spaces and commas.
/// Returns the value and what follows it.
fn take_value(input: &str) -> Option<(String, &str)> {
    if let Some(quoted) = input.strip_prefix('"') {
        let mut value = String::new();
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => value.push(chars.next()?.1),
                '"' => return Some((value, &quoted[i + 1..])),
                _ => value.push(c),
            }
        }
        None
    } else {
        let end = input
            .find(|c: char| c == ',' || c.is_whitespace())
            .unwrap_or(input.len());
        (end > 0).then(|| (input[..end].to_owned(), &input[end..]))
    }
}

/// `USERS HOSTS = [(RUNAS[:GROUPS])] COMMANDS`.
fn user_spec(line: &str, col: usize) -> Result<(), (usize, String)> {
    let syntax = |offset: usize| (col + offset, "syntax error".to_owned());
    let upper = line
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .next();
    if let Some(word) = upper
        && matches!(
            word,
            "User_Alias" | "Runas_Alias" | "Host_Alias" | "Cmnd_Alias" | "Cmd_Alias"
        )
    {
        return Err((col, not_modelled("aliases")));
    }
    let Some(eq) = line.find('=') else {
        return Err(syntax(line.len()));
    };
    let head = &line[..eq];
    let Some(split) = head.trim_end().rfind([' ', '\t']) else {
        return Err(syntax(0));
    };
    let (users, hosts) = (&head[..split], head[split..].trim());
    let mut offset = 0;
    for user in users.split(',') {
        let name = user.trim();
        let bare = name.strip_prefix('%').unwrap_or(name);
        if !(name == "ALL" || is_word(bare)) {
            return Err(syntax(offset + user.len() - user.trim_start().len()));
        }
        offset += user.len() + 1;
    }
    for host in hosts.split(',') {
        if !is_word(host.trim()) {
            return Err(syntax(split));
        }
    }
    let mut rest = line[eq + 1..].trim_start();
    let rest_col = |rest: &str| line.len() - rest.len();
    if let Some(runas) = rest.strip_prefix('(') {
        let Some(close) = runas.find(')') else {
            return Err(syntax(rest_col(rest)));
        };
        let inside = &runas[..close];
        for part in inside.splitn(2, ':') {
            for name in part.split(',').map(str::trim) {
                if !(name.is_empty() || name == "ALL" || is_word(name.trim_start_matches('%'))) {
                    return Err(syntax(rest_col(rest) + 1));
                }
            }
        }
        rest = runas[close + 1..].trim_start();
    }
    if rest.is_empty() {
        return Err(syntax(line.len()));
    }
    for command in rest.split(',') {
        let command = command.trim();
        if command.ends_with(':') || command.contains(':') && !command.starts_with('/') {
            return Err((col + rest_col(rest), not_modelled("command tags")));
        }
        match command {
            "ALL" | "!ALL" => {}
            _ if command.starts_with('/') || command.starts_with("!/") => {
                return Err((col + rest_col(rest), not_modelled("command paths")));
            }
            _ => return Err(syntax(rest_col(rest))),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> bool {
        check(text.as_bytes()).is_ok()
    }

    fn message(text: &str) -> String {
        check(text.as_bytes()).unwrap_err().2
    }

    #[test]
    fn the_node_s_drop_in_form_parses() {
        assert!(ok(concat!(
            "# Managed by layerone node\n",
            "Defaults logfile=\"/var/log/layerone/sudo.log\", log_year, loglinelen=0\n",
            "%sudo ALL=(ALL:ALL) !ALL\n",
            "alice ALL=(ALL:ALL) ALL\n",
            "\n"
        )));
        assert!(ok("alice,bob ALL=(ALL) ALL\n%wheel ALL=ALL\n"));
        assert!(ok("Defaults !log_host\nDefaults\tloglinelen=80\n"));
    }

    #[test]
    fn what_real_visudo_refuses_is_refused_with_its_message() {
        // Each of these was checked against sudo 1.9.13's visudo.
        assert_eq!(message("bogus line here\n"), "syntax error");
        assert_eq!(
            message("Defaults nosuchthing\n"),
            "unknown defaults entry \"nosuchthing\""
        );
        assert_eq!(
            message("Defaults logfile=relative\n"),
            "values for \"logfile\" must start with a '/'"
        );
        assert_eq!(
            message("Defaults loglinelen=abc\n"),
            "value \"abc\" is invalid for option \"loglinelen\""
        );
        assert_eq!(
            message("alice ALL=(ALL:ALL) ALL\nbob; ALL=ALL\n"),
            "syntax error"
        );
        assert_eq!(check(b"ok ALL=ALL\nbad line\n").unwrap_err().0, 2);
        assert!(!ok("alice ALL=(ALL:ALL) ALL\rroot ALL=ALL\n"));
        assert!(!ok("alice ALL=(ALL:ALL\n"));
        assert!(!ok("alice ALL=\n"));
        assert!(!ok("Defaults logfile=\"/unterminated\n"));
    }

    #[test]
    fn constructs_outside_the_subset_are_refused_as_not_modelled() {
        for text in [
            "@includedir /etc/sudoers.d\n",
            "#includedir /etc/sudoers.d\n",
            "User_Alias ADMINS = alice\n",
            "alice ALL=(ALL) NOPASSWD: ALL\n",
            "alice ALL=/usr/bin/id\n",
            "Defaults:alice log_year\n",
            "alice ALL=ALL \\\n",
        ] {
            assert!(message(text).contains("not modelled"), "{text:?}");
        }
    }
}
