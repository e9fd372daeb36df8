//! `simulator`: the simulated system, an implementation of the provider's executor
//! interface ([`provider::Executor`]) and of the machine it acts on ([`provider::Machine`])
//! that the dev node and the tests use and no packaged binary links.
//!
//! The simulation exists so the dev node and tests exercise handlers against real files (a
//! passwd line appended, a home created, a vhost rejected) without changing this machine.
//! [`SimExecutor`] receives exactly the argv production would run (the provider builds it,
//! audits it and checks its exit status the same way for every executor) and each model
//! parses it like the real program would, so a builder that produced a wrong flag fails here
//! too. Exit codes and messages follow the real programs (shadow-utils 4.13, Apache 2.4) for
//! the cases the node relies on. Programs without a model fail loudly with 127; list them in
//! [`SimExecutor::new`]'s `real` to run them for real (only programs that can be pointed at
//! the sysroot, such as `apachectl -f`: a real program that ignores the sysroot would change
//! this machine).
//!
//! Besides the programs it models the tenant worker when the process is not root
//! (`tenant_worker.rs`). The rest is the simulated machine's ([`SimMachine`], `machine.rs`,
//! which goes with the executor: [`SimExecutor::machine`]): MariaDB (`mariadb.rs`, a JSON file
//! under the sysroot, offered as the provider's database session when no server socket is
//! configured), which uids a real kill may reach ([`SIM_REAL_PROCESS_UIDS`]), and the
//! certificate authority of a node without an ACME CA (`certificate_authority.rs`).
//!
//! A simulation is driven from the outside: the models read the time of the provider they run
//! for (`Provider::clock`, which a test can hand a clock it moves itself), never the system's,
//! and they change only the sysroot (`Provider::sysconf`). What they read of this machine on
//! purpose is what a real kill could reach: its own `/etc/passwd` (the uids it names) and,
//! only on a root of `/`, `/proc` (the processes of a uid, as `userdel` checks).

mod apache;
mod certificate_authority;
mod cloudlinux;
mod cron;
mod dbctl;
mod etc_files;
mod machine;
mod mail;
mod mariadb;
mod php_fpm;
mod pure_pw;
mod quota;
mod selectorctl;
mod shadow_utils;
mod systemctl;
mod tenant_worker;
mod visudo;

use std::ffi::OsString;
use std::io::{Read, Write};
use std::ops::RangeInclusive;

use provider::{
    Argv, Executor, Invocation, Output, Program, Provider, ProviderError, RealExecutor,
};

pub use apache::SIM_RELOADS_FILE;
pub use certificate_authority::{LocalCaError, SIM_CA_NAME, SIM_VALIDITY, issue_locally_at};
pub use cloudlinux::{SIM_CAGEFS_FILE, SIM_LVE_FILE};
pub use dbctl::SIM_DBCTL_FILE;
pub use machine::SimMachine;
pub use mail::{SIM_DOVECOT_RELOADS_FILE, SIM_POSTFIX_RELOADS_FILE};
pub use mariadb::{
    SIM_MARIADB_FILE, SimMariadbContents, sim_mariadb_contents, sim_set_mariadb_size,
};
pub use php_fpm::SIM_SERVICE_RELOADS_FILE;
pub use quota::{SIM_HOMES_QUOTA_FILE, SIM_USER_QUOTA_FILE, SimHomesQuota, sim_set_homes_quota};
pub use selectorctl::SIM_SELECTOR_DIR;
pub use systemctl::SIM_UNITS_DIR;

/// How every model's own error message begins, so a failure says it came from the
/// simulation and not from the real program.
pub const MARKER: &str = "layerone sim:";

/// The uids a simulated sysroot's tenants may have for their processes to be real:
/// 2 000 000 000 to 2 099 999 999 (systemd's documented ranges end at 1 879 048 191 for
/// containers and start again at 2 147 352 576 for foreign uids; subordinate uid ranges of
/// rootless containers start at 100 000 and are 65 536 wide per user).
///
/// The worker that would kill a simulated tenant's processes runs for real when the process
/// is root, and a kill as a uid reaches every process of that uid on this machine. A
/// sysroot's uids are whatever its useradd handed out (1000 and up by default), which on a
/// developer's machine or a CI host are real people's and services' uids. So the worker is
/// started only for a uid in this band that this machine's own `/etc/passwd` does not name
/// (the tests that start real processes as a tenant give their sysroot a `login.defs` with
/// that band); for any other uid no real process can be the simulated tenant's, and nothing
/// is done ([`provider::Machine::may_signal_as`], [`SimMachine`]).
pub const SIM_REAL_PROCESS_UIDS: RangeInclusive<u32> = 2_000_000_000..=2_099_999_999;

/// The simulated executor: each program's effect on the sysroot, modelled in-process, except
/// the programs listed as real, which it starts through the real executor.
#[derive(Clone, Debug)]
pub struct SimExecutor {
    real: Vec<Program>,
    /// Whether tenant work may start the real worker (it drops to the tenant only when root
    /// starts it); otherwise the worker's request code runs in this process.
    root: bool,
}

impl SimExecutor {
    /// A simulation that starts the programs in `real` for real, and the tenant worker when
    /// this process is root.
    pub fn new(real: Vec<Program>) -> SimExecutor {
        SimExecutor {
            real,
            root: rustix::process::geteuid().is_root(),
        }
    }

    /// The same simulation as it runs when this process is `root` or not, for the tests of
    /// either path whoever runs them: not root, tenant work runs in-process, no real kill is
    /// sent and the provider gives no file an owner ([`provider::Machine::acts_as_root`]);
    /// root, the real worker is started (whose drop to the tenant fails unless this process
    /// really is root).
    pub fn acting_as_root(mut self, root: bool) -> SimExecutor {
        self.root = root;
        self
    }

    /// The simulated machine this executor's programs act on, acting as root when it does:
    /// what a provider on this executor is given (`ProviderConfig::machine`).
    pub fn machine(&self) -> SimMachine {
        SimMachine::new().acting_as_root(self.root)
    }
}

impl Executor for SimExecutor {
    /// The listed programs; the tenant worker whenever this process is root (the drop is
    /// real and safe in a sandbox: the worker only touches the home it is given, as its
    /// tenant).
    fn runs_real(&self, program: Program) -> bool {
        match program {
            Program::TenantWorker => self.root,
            program => self.real.contains(&program),
        }
    }

    fn run(
        &self,
        provider: &Provider,
        call: &Invocation<'_>,
        stdin: Option<&[u8]>,
    ) -> Result<Output, ProviderError> {
        if self.runs_real(call.program) {
            return RealExecutor.run(provider, call, stdin);
        }
        Ok(run_model(
            self,
            provider,
            call.program,
            call.argv.args(),
            stdin,
        ))
    }

    /// The tenant worker's streams: in this process without root; otherwise the real
    /// worker, which under `lve_suwrapper` (no LVE to enter here) or `systemd-run --scope` (no
    /// systemd to ask) is started directly with the arguments after the wrapper's own (the
    /// audit line keeps the wrapper's argv).
    fn run_streaming(
        &self,
        provider: &Provider,
        call: &Invocation<'_>,
        input: &mut (dyn Read + Send),
        output: &mut (dyn Write + Send),
    ) -> Result<Output, ProviderError> {
        if !self.root {
            return tenant_worker::serve_stream(provider, call, input, output);
        }
        if !call.program.wraps_tenant_worker() || self.real.contains(&call.program) {
            return RealExecutor.run_streaming(provider, call, input, output);
        }
        let worker =
            provider
                .program_path(Program::TenantWorker)
                .ok_or(ProviderError::Unsupported {
                    program: Program::TenantWorker,
                    platform: provider.platform(),
                })?;
        let mut rest = Argv::new();
        match tenant_worker::wrapped_args(provider, call) {
            Ok(args) => {
                for arg in args {
                    rest.arg(arg);
                }
            }
            Err(failed) => return Ok(failed),
        }
        let direct = Invocation {
            path: &worker,
            argv: &rest,
            ..*call
        };
        RealExecutor.run_streaming(provider, &direct, input, output)
    }
}

/// Runs the model of `program`. Never fails as a Rust call: whatever goes wrong becomes an
/// exit status and stderr, as with a real process.
fn run_model(
    sim: &SimExecutor,
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
        Program::TenantWorker => return tenant_worker::in_process(&args, stdin),
        Program::LveSuwrapper | Program::SystemdRun => {
            return tenant_worker::run_wrapped_worker(sim.root, provider, program, &args, stdin);
        }
        Program::Visudo => visudo::visudo(provider, &args),
        Program::PhpFpm(version) => php_fpm::php_fpm(provider, version, &args),
        // `show` is the runtime observation's; every other verb the php family's reload.
        Program::Systemctl if args.first().is_some_and(|verb| verb == "show") => {
            systemctl::systemctl(provider, &args)
        }
        // OpenDKIM's reload (the node only asks when `show` said it is active).
        Program::Systemctl
            if args.len() == 2 && args[0] == "reload" && args[1] == provider::OPENDKIM_UNIT =>
        {
            php_fpm::record_reload(provider, &args[1])
        }
        Program::Systemctl => php_fpm::systemctl(provider, &args),
        Program::Crontab => cron::crontab(provider, &args),
        Program::Selectorctl => selectorctl::selectorctl(provider, &args),
        Program::Lvectl => cloudlinux::lvectl(provider, &args),
        Program::PurePw => pure_pw::pure_pw(provider, &args),
        Program::Cagefsctl => cloudlinux::cagefsctl(provider, &args),
        Program::Dbctl => dbctl::dbctl(provider, &args),
        Program::Postfix(tool) => mail::postfix_tool(provider, tool, &args),
        Program::Doveconf => mail::doveconf(provider, &args),
        Program::Doveadm => mail::doveadm(provider, &args),
        Program::Sievec => mail::sievec(&args),
        Program::OpendkimGenkey => mail::opendkim_genkey(provider, &args),
        Program::Findmnt => quota::findmnt(provider, &args),
        Program::Setquota => quota::setquota(provider, &args),
        Program::Repquota => quota::repquota(provider, &args),
        // The installer's remount of `/proc` runs on a machine's own root only, never under a
        // simulation.
        Program::Mariadb
        | Program::Openssl
        | Program::Btrfs
        | Program::NatsServer
        | Program::Mount => Outcome::fail(
            127,
            format!(
                "{MARKER} no model of {program}; list it in SimExecutor::new's real programs to run it for real\n"
            ),
        ),
    };
    outcome.into()
}

/// A provider on this simulation whose sysroot is `<dir>/root` and audit directory
/// `<dir>/audit`, for the models' unit tests (the other crates use `testkit::sim_provider`).
#[cfg(test)]
pub(crate) fn test_provider(platform: provider::Platform, dir: &std::path::Path) -> Provider {
    let sim = SimExecutor::new(vec![]);
    let machine = std::sync::Arc::new(sim.machine());
    Provider::new(provider::ProviderConfig {
        platform,
        root: dir.join("root"),
        executor: std::sync::Arc::new(sim),
        machine,
        audit_dir: dir.join("audit"),
    })
}

/// What a simulated program "printed" and how it exited.
#[derive(Debug, Default)]
struct Outcome {
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

/// Days since 1970-01-01 on the provider's clock, as shadow's "last change" field.
fn today(provider: &Provider) -> i64 {
    provider.clock().now_secs().div_euclid(86_400)
}

/// The provider's clock's time in ms, for what a model records with a time.
fn unix_ms(provider: &Provider) -> i64 {
    provider.clock().now_ms()
}
