//! Model of `pure-pw mkdb PDB -f PASSWD` and `pure-pw show LOGIN -f PASSWD` (pure-ftpd
//! 1.0.50), for the forms the node runs.
//!
//! A passwd line is read as pure-pw reads it: at least `LOGIN:HASH:UID:GID:GECOS:DIR`, UID and
//! GID decimal, DIR absolute, the bandwidth (bytes per second) and session fields empty or
//! decimal (`show` prints them as pure-pw does, bandwidth in KiB); any other line is skipped with pure-pw's warning, and `show`
//! of a login without a valid line exits 16 with pure-pw's message. `mkdb` writes the valid
//! users to PDB (0600) as text, not PureDB's binary format: nothing in the Sim reads it but
//! tests, and the real `pure-pw` builds and reads the real format in the integration tests.

use provider::{Provider, write_atomic};

use super::{CommandLine, Outcome};

struct Line {
    login: String,
    hash: String,
    uid: u32,
    gid: u32,
    gecos: String,
    dir: String,
    /// Bytes per second; 0 unlimited.
    upload: u64,
    download: u64,
    sessions: u64,
}

/// An optional numeric field: absent or empty is 0; anything else but digits makes the line
/// invalid, as pure-pw finds it.
fn optional(field: Option<&&str>) -> Option<u64> {
    match field {
        None | Some(&"") => Some(0),
        Some(s) if s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok(),
        Some(_) => None,
    }
}

/// pure-pw's way of printing a limit: `N Kb (enabled)` or `0 Kb (unlimited)`.
fn shown(value: u64, unit: &str) -> String {
    if value == 0 {
        format!("0{unit} (unlimited)")
    } else {
        format!("{value}{unit} (enabled)")
    }
}

fn parse_line(line: &str) -> Option<Line> {
    let f: Vec<&str> = line.split(':').collect();
    if f.len() < 6 || f[0].is_empty() || !f[5].starts_with('/') {
        return None;
    }
    let number = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| s.parse().ok())
            .flatten()
    };
    Some(Line {
        login: f[0].to_owned(),
        hash: f[1].to_owned(),
        uid: number(f[2])?,
        gid: number(f[3])?,
        gecos: f[4].to_owned(),
        dir: f[5].to_owned(),
        upload: optional(f.get(6))?,
        download: optional(f.get(7))?,
        sessions: optional(f.get(10))?,
    })
}

pub(crate) fn pure_pw(_provider: &Provider, args: &[String]) -> Outcome {
    let Some((command, rest)) = args.split_first() else {
        return Outcome::fail(
            1,
            "Usage: pure-pw useradd|usermod|userdel|passwd|show|mkdb|list\n",
        );
    };
    let line = match CommandLine::parse("pure-pw", rest, &["-f"], &[]) {
        Ok(line) => line,
        Err(outcome) => return outcome,
    };
    let Some(file) = line.value("-f") else {
        return Outcome::fail(1, "layerone sim: pure-pw without -f is not modelled\n");
    };
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) => return Outcome::fail(1, format!("Unable to open [{file}]: {e}\n")),
    };
    match (command.as_str(), &line.operands[..]) {
        ("mkdb", [pdb]) => {
            let mut out = Outcome::ok();
            let mut db = String::from("layerone-sim puredb\n");
            for raw in text.lines().filter(|l| !l.is_empty()) {
                match parse_line(raw) {
                    Some(l) => db.push_str(&format!("{} {} {} {}\n", l.login, l.uid, l.gid, l.dir)),
                    None => {
                        let login = raw.split(':').next().unwrap_or_default();
                        out = out.warn(format!("Warning: invalid line [{login}]"));
                    }
                }
            }
            match write_atomic(std::path::Path::new(pdb), db.as_bytes(), 0o600, None) {
                Ok(()) => out,
                Err(e) => Outcome::fail(1, format!("Unable to create [{pdb}]: {e}\n")),
            }
        }
        ("show", [login]) => {
            match text
                .lines()
                .filter_map(parse_line)
                .find(|l| &l.login == login)
            {
                Some(l) => Outcome {
                    status: 0,
                    stdout: format!(
                        "\nLogin              : {}\nPassword           : {}\nUID                : {} (-)\nGID                : {} (-)\nDirectory          : {}\nFull name          : {}\nDownload bandwidth : {}\nUpload   bandwidth : {}\nMax sim sessions   : {}\n",
                        l.login,
                        l.hash,
                        l.uid,
                        l.gid,
                        l.dir,
                        l.gecos,
                        shown(l.download / 1024, " Kb"),
                        shown(l.upload / 1024, " Kb"),
                        shown(l.sessions, ""),
                    ),
                    stderr: String::new(),
                },
                None => Outcome::fail(
                    16,
                    format!("Unable to fetch info about user [{login}] in file [{file}]\n"),
                ),
            }
        }
        _ => Outcome::fail(
            1,
            format!(
                "layerone sim: pure-pw {command} {:?} is not modelled\n",
                line.operands
            ),
        ),
    }
}
