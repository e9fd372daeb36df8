//! Model of `selectorctl --interpreter=php --version=X.Y --list-extensions` and
//! `selectorctl --interpreter=php --version=X.Y --user=USER --replace-user-extensions=LIST`.
//!
//! alt-php keeps one ini per installed extension in `/opt/alt/phpXY/etc/php.d.all` and the
//! default-enabled ones in `php.d` (the version's ini directory): the list marks the first
//! `-`, the second `+`. A user's selection is recorded in
//! [`SIM_SELECTOR_DIR`]`/USER/X.Y`, one extension a line; an unknown user or extension fails
//! as the real tool does (exit 1, message on stderr).

use provider::{PhpVersion, Provider};

use super::{CommandLine, Outcome};

/// Where the Sim records users' selections (a system path).
pub const SIM_SELECTOR_DIR: &str = "/var/lib/layerone-sim/selector";

pub(super) fn selectorctl(provider: &Provider, args: &[String]) -> Outcome {
    let line = match CommandLine::parse(
        "selectorctl",
        args,
        &[
            "--interpreter",
            "--version",
            "--user",
            "--replace-user-extensions",
        ],
        &["--list-extensions"],
    ) {
        Ok(line) => line,
        Err(outcome) => return outcome,
    };
    if line.value("--interpreter") != Some("php") || !line.operands.is_empty() {
        return Outcome::fail(1, "ERROR:Unsupported interpreter or arguments\n");
    }
    let Some(version) = line
        .value("--version")
        .and_then(|v| PhpVersion::ALL.iter().copied().find(|x| x.as_str() == v))
    else {
        return Outcome::fail(1, "ERROR:No such version\n");
    };
    let layout = provider.php_fpm_layout(version);
    let all_dir = provider.sysconf(layout.ini_dir.replace("/php.d", "/php.d.all"));
    let names = |dir: &std::path::Path| -> Vec<String> {
        let mut out: Vec<String> = std::fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .filter_map(|e| {
                        let name = e.file_name().to_string_lossy().into_owned();
                        name.strip_suffix(".ini")
                            .map(|s| s.split_once('-').map_or(s, |(_, m)| m).to_owned())
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.sort();
        out
    };
    let installed = names(&all_dir);
    if installed.is_empty() {
        return Outcome::fail(
            1,
            format!("ERROR:Alt-php {} is not installed\n", version.as_str()),
        );
    }
    if line.has("--list-extensions") {
        let enabled = names(&provider.sysconf(&layout.ini_dir));
        let mut out = String::new();
        for name in &installed {
            let mark = if enabled.contains(name) { '+' } else { '-' };
            out.push_str(&format!("{mark} {name}\n"));
        }
        return Outcome {
            status: 0,
            stdout: out,
            stderr: String::new(),
        };
    }
    let (Some(user), Some(list)) = (
        line.value("--user"),
        line.value("--replace-user-extensions"),
    ) else {
        return Outcome::fail(1, "ERROR:Nothing to do\n");
    };
    match provider.lookup_user(user) {
        Ok(Some(_)) => {}
        _ => return Outcome::fail(1, format!("ERROR:User {user} does not exist\n")),
    }
    let wanted: Vec<&str> = list.split(',').filter(|s| !s.is_empty()).collect();
    if let Some(bad) = wanted.iter().find(|w| !installed.iter().any(|i| i == *w)) {
        return Outcome::fail(1, format!("ERROR:No such extension ({bad})\n"));
    }
    let file = provider
        .sysconf(SIM_SELECTOR_DIR)
        .join(user)
        .join(version.as_str());
    let written = file
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&file, wanted.join("\n") + "\n"));
    match written {
        Ok(()) => Outcome::ok(),
        Err(e) => Outcome::fail(1, format!("ERROR:{e}\n")),
    }
}
