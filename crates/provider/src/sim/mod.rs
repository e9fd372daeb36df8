//! The Sim backend: each program's effect on the sysroot, modelled in-process.
//!
//! Sim exists so the dev node and tests exercise handlers against real files (a passwd line
//! appended, a home created, a vhost rejected) without changing this machine. It receives
//! exactly the argv production would run and parses it like the real program would, so a
//! builder that produced a wrong flag fails here too. Exit codes and messages follow the
//! real programs (shadow-utils 4.13, Apache 2.4) for the cases the node relies on. Programs
//! without a model fail loudly with 127; list them in `Backend::Sim { real }` to run them
//! for real.

mod apache;
mod cloudlinux;
mod cron;
mod dbctl;
mod etc_files;
mod mail;
mod php_fpm;
mod pure_pw;
mod selectorctl;
mod shadow_utils;
mod systemctl;
mod tenant_worker;
mod visudo;

use std::ffi::OsString;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::exec::Output;
use crate::program::Program;
use crate::provider::Provider;

pub use apache::SIM_RELOADS_FILE;
pub use cloudlinux::{SIM_CAGEFS_FILE, SIM_LVE_FILE};
pub use dbctl::SIM_DBCTL_FILE;
pub use mail::{SIM_DOVECOT_RELOADS_FILE, SIM_POSTFIX_RELOADS_FILE};
pub use php_fpm::SIM_SERVICE_RELOADS_FILE;
pub use selectorctl::SIM_SELECTOR_DIR;
pub use systemctl::SIM_UNITS_DIR;

/// Runs the model of `program`. Never fails as a Rust call: whatever goes wrong becomes an
/// exit status and stderr, as with a real process.
pub(crate) fn run(
    provider: &Provider,
    program: Program,
    args: &[OsString],
    stdin: Option<&[u8]>,
) -> Output {
    let args: Vec<String> = match args
        .iter()
        .map(|a| a.clone().into_string())
        .collect::<Result<_, _>>()
    {
        Ok(args) => args,
        Err(bad) => {
            return Outcome::fail(2, format!("{program}: argument {bad:?} is not UTF-8\n")).into();
        }
    };
    let outcome = match program {
        Program::Useradd => shadow_utils::useradd(provider, &args),
        Program::Usermod => shadow_utils::usermod(provider, &args),
        Program::Userdel => shadow_utils::userdel(provider, &args),
        Program::Groupadd => shadow_utils::groupadd(provider, &args),
        Program::Groupdel => shadow_utils::groupdel(provider, &args),
        Program::ApacheCtl => apache::apachectl(provider, &args),
        Program::TenantWorker => return tenant_worker::in_process(provider, &args, stdin),
        Program::LveSuwrapper => return tenant_worker::lve_suwrapper(provider, &args, stdin),
        Program::Visudo => visudo::visudo(provider, &args),
        Program::PhpFpm(version) => php_fpm::php_fpm(provider, version, &args),
        // `show` is the runtime observation's; every other verb the php family's reload.
        Program::Systemctl if args.first().is_some_and(|verb| verb == "show") => {
            systemctl::systemctl(provider, &args)
        }
        Program::Systemctl => php_fpm::systemctl(provider, &args),
        Program::Crontab => cron::crontab(provider, &args),
        Program::Selectorctl => selectorctl::selectorctl(provider, &args),
        Program::Lvectl => cloudlinux::lvectl(provider, &args),
        Program::PurePw => pure_pw::pure_pw(provider, &args),
        Program::Cagefsctl => cloudlinux::cagefsctl(provider, &args),
        Program::Dbctl => dbctl::dbctl(provider, &args),
        Program::Postfix => mail::postfix(provider, &args),
        Program::Postmap => mail::postmap(&args),
        Program::Doveconf => mail::doveconf(provider, &args),
        Program::Doveadm => mail::doveadm(provider, &args),
        Program::Sievec => mail::sievec(&args),
        Program::OpendkimGenkey => mail::opendkim_genkey(&args),
        Program::Mariadb | Program::Openssl => Outcome::fail(
            127,
            format!(
                "layerone sim: no model of {program}; list it in Backend::Sim {{ real }} to run it for real\n"
            ),
        ),
    };
    outcome.into()
}

/// What a simulated program "printed" and how it exited.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    status: i32,
    stdout: String,
    stderr: String,
}

impl Outcome {
    fn ok() -> Outcome {
        Outcome::default()
    }

    fn fail(status: i32, stderr: impl Into<String>) -> Outcome {
        Outcome {
            status,
            stdout: String::new(),
            stderr: stderr.into(),
        }
    }

    fn warn(mut self, line: impl AsRef<str>) -> Outcome {
        self.stderr.push_str(line.as_ref());
        self.stderr.push('\n');
        self
    }
}

impl From<Outcome> for Output {
    fn from(o: Outcome) -> Output {
        Output {
            status: o.status,
            stdout: o.stdout.into_bytes(),
            stdout_truncated: false,
            stderr: o.stderr.into_bytes(),
            stderr_truncated: false,
        }
    }
}

/// Parsed command line: options in order, then operands. getopt_long-like: `--opt value`,
/// `--opt=value`, `--` ends options, operands may come before options.
#[derive(Debug, Default)]
struct CommandLine {
    options: Vec<(String, Option<String>)>,
    operands: Vec<String>,
}

impl CommandLine {
    /// `with_value` and `flags` are the long options the program accepts; anything else is
    /// rejected like getopt does ("unrecognized option", exit 2).
    fn parse(
        program: &str,
        args: &[String],
        with_value: &[&str],
        flags: &[&str],
    ) -> Result<CommandLine, Outcome> {
        let mut line = CommandLine::default();
        let mut iter = args.iter();
        while let Some(arg) = iter.next() {
            if arg == "--" {
                line.operands.extend(iter.by_ref().cloned());
                break;
            }
            if !arg.starts_with('-') || arg == "-" {
                line.operands.push(arg.clone());
                continue;
            }
            let (name, inline) = match arg.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (arg.as_str(), None),
            };
            if with_value.contains(&name) {
                let value = match inline {
                    Some(v) => v,
                    None => iter.next().cloned().ok_or_else(|| {
                        Outcome::fail(
                            2,
                            format!("{program}: option '{name}' requires an argument\n"),
                        )
                    })?,
                };
                line.options.push((name.to_owned(), Some(value)));
            } else if flags.contains(&name) && inline.is_none() {
                line.options.push((name.to_owned(), None));
            } else {
                return Err(Outcome::fail(
                    2,
                    format!("{program}: unrecognized option '{arg}'\n"),
                ));
            }
        }
        Ok(line)
    }

    fn has(&self, name: &str) -> bool {
        self.options.iter().any(|(n, _)| n == name)
    }

    /// The last value given for `name` (getopt semantics: later wins).
    fn value(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_deref())
    }
}

/// Days since 1970-01-01, as shadow's "last change" field.
fn today() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| (d.as_secs() / 86_400) as i64)
}

fn unix_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}
