//! Model of `crontab -n FILE` / `crontab -T FILE` (the dry run), `crontab -u USER FILE` and
//! `crontab -u USER -r`, writing the sysroot's spool.
//!
//! Each line is checked as Vixie cron / cronie load it: blank and `#` lines, `NAME=value`
//! environment lines, and entries of five time fields (numbers, `*`, ranges, steps, lists,
//! month and weekday names, within each field's bounds) or an `@` macro, followed by a
//! non-empty command. A bad line fails the whole file the way the installer does
//! (`"FILE":N: bad minute` then `errors in crontab file, can't install.`, exit 1) and the
//! spool keeps the old crontab.

use provider::{Platform, Provider, crontab_spool};

use super::{CommandLine, Outcome};

pub(super) fn crontab(provider: &Provider, args: &[String]) -> Outcome {
    let dry = match provider.platform() {
        Platform::Debian => "-n",
        Platform::CloudLinux => "-T",
    };
    let line = match CommandLine::parse("crontab", args, &["-u"], &[dry, "-r"]) {
        Ok(line) => line,
        Err(outcome) => return outcome,
    };
    if line.has(dry) {
        let [file] = line.operands.as_slice() else {
            return Outcome::fail(1, "crontab: usage error: file name must be specified\n");
        };
        return match check_file(file) {
            Ok(()) => Outcome::ok(),
            Err(e) => Outcome::fail(1, e),
        };
    }
    let Some(user) = line.value("-u") else {
        return Outcome::fail(1, "crontab: the node always names the user with -u\n");
    };
    match provider.lookup_user(user) {
        Ok(Some(_)) => {}
        _ => return Outcome::fail(1, format!("crontab: user `{user}' unknown\n")),
    }
    let spool = provider
        .sysconf(crontab_spool(provider.platform()))
        .join(user);
    if line.has("-r") {
        if !line.operands.is_empty() {
            return Outcome::fail(
                1,
                "crontab: usage error: no arguments permitted after this option\n",
            );
        }
        return match std::fs::remove_file(&spool) {
            Ok(()) => Outcome::ok(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Outcome::fail(1, format!("no crontab for {user}\n"))
            }
            Err(e) => Outcome::fail(1, format!("crontab: {e}\n")),
        };
    }
    let [file] = line.operands.as_slice() else {
        return Outcome::fail(
            1,
            "crontab: usage error: file name must be specified for replace\n",
        );
    };
    if let Err(e) = check_file(file) {
        return Outcome::fail(1, e);
    }
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) => return Outcome::fail(1, format!("{file}: {e}\n")),
    };
    if let Err(e) = provider
        .ensure_dir(&provider.sysconf(crontab_spool(provider.platform())), 0o730)
        .and_then(|()| provider.write_config_atomic(&spool, &bytes, 0o600))
    {
        return Outcome::fail(1, format!("crontab: {e}\n"));
    }
    Outcome::ok()
}

fn check_file(file: &str) -> Result<(), String> {
    let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}\n"))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        format!("\"{file}\":1: bad command\nerrors in crontab file, can't install.\n")
    })?;
    if !text.is_empty() && !text.ends_with('\n') {
        return Err("new crontab file is missing newline before EOF, can't install.\n".to_string());
    }
    for (i, line) in text.lines().enumerate() {
        if let Err(what) = check_line(line) {
            return Err(format!(
                "\"{file}\":{}: {what}\nerrors in crontab file, can't install.\n",
                i + 1
            ));
        }
    }
    Ok(())
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAYS: [&str; 8] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun"];

fn check_line(line: &str) -> Result<(), &'static str> {
    let line = line.trim_start();
    if line.is_empty() || line.starts_with('#') {
        return Ok(());
    }
    if line.bytes().any(|b| b < 0x20 && b != b'\t') {
        return Err("bad command");
    }
    if let Some(rest) = line.strip_prefix('@') {
        let (name, command) = rest.split_once([' ', '\t']).ok_or("bad time specifier")?;
        if ![
            "reboot", "yearly", "annually", "monthly", "weekly", "daily", "midnight", "hourly",
        ]
        .contains(&name)
        {
            return Err("bad time specifier");
        }
        return if command.trim().is_empty() {
            Err("bad command")
        } else {
            Ok(())
        };
        // (Vixie cron does accept five fields with an empty command; so does this model.)
    }
    let first = line.split([' ', '\t']).next().unwrap_or("");
    if first.contains('=')
        || line
            .split_once('=')
            .is_some_and(|(k, _)| !k.contains([' ', '\t', '*']))
    {
        // An environment line: NAME=value.
        return Ok(());
    }
    let mut rest = line;
    let fields: [(&str, u32, u32, &[&str], u32); 5] = [
        ("bad minute", 0, 59, &[], 0),
        ("bad hour", 0, 23, &[], 0),
        ("bad day-of-month", 1, 31, &[], 0),
        ("bad month", 1, 12, &MONTHS, 1),
        ("bad day-of-week", 0, 7, &DAYS, 0),
    ];
    for (what, lo, hi, names, base) in fields {
        rest = rest.trim_start_matches([' ', '\t']);
        let end = rest.find([' ', '\t']).unwrap_or(rest.len());
        if end == 0 {
            return Err(what);
        }
        check_field(&rest[..end], lo, hi, names, base).map_err(|()| what)?;
        rest = &rest[end..];
    }
    // Vixie cron loads an entry whose command is empty (it never runs anything).
    Ok(())
}

fn check_field(field: &str, lo: u32, hi: u32, names: &[&str], base: u32) -> Result<(), ()> {
    let value = |s: &str| -> Result<u32, ()> {
        if let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(s)) {
            return Ok(i as u32 + base);
        }
        let n: u32 = s.parse().map_err(|_| ())?;
        if s.len() > 2 || n < lo || n > hi {
            Err(())
        } else {
            Ok(n)
        }
    };
    for item in field.split(',') {
        let (range, step) = match item.split_once('/') {
            Some((r, s)) => (r, Some(s)),
            None => (item, None),
        };
        if let Some(step) = step {
            // Vixie cron takes any step from 1 up (`*/60` fires at minute 0 only).
            let s: u32 = step.parse().map_err(|_| ())?;
            if s == 0 {
                return Err(());
            }
        }
        if range == "*" {
            continue;
        }
        match range.split_once('-') {
            // A reversed range (`5-1`) loads and selects nothing, as in Vixie cron.
            Some((a, b)) => {
                value(a)?;
                value(b)?;
            }
            None => {
                value(range)?;
                if step.is_some() {
                    return Err(());
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_checked_like_cron_loads_them() {
        for good in [
            "# comment",
            "SHELL=/bin/sh",
            "*/5 * * * * /usr/bin/true",
            "0 3 1-15/2 jan-mar mon,wed,fri /usr/bin/true",
            "0 0 * * 7 x",
            "@daily x",
            "5-1 * * * * x",
            "* * * * *",
            "*/60 * * * * x",
        ] {
            check_line(good).unwrap_or_else(|e| panic!("{good}: {e}"));
        }
        for (bad, why) in [
            ("60 * * * * x", "bad minute"),
            ("* 24 * * * x", "bad hour"),
            ("* * 0 * * x", "bad day-of-month"),
            ("* * * 13 * x", "bad month"),
            ("* * * * 8 x", "bad day-of-week"),
            ("*/0 * * * * x", "bad minute"),
            ("* * * *", "bad day-of-week"),
            ("@sometimes x", "bad time specifier"),
        ] {
            assert_eq!(check_line(bad), Err(why), "{bad}");
        }
    }
}
