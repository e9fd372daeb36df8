//! `layerone`: the node's command line.
//!
//! - `layerone dev`: the main job on its embedded defaults: a dev node with SQLite, the
//!   simulated provider, a sandbox root and a self-signed certificate.
//! - `layerone catalogue`: every operation, with family, module, scope and schemas.
//! - `layerone job submit|show|wait`: jobs against a node, with its URL, key and pin from
//!   flags or from a dev node's `dev.json`.
//! - `layerone install [--root R] [--check]`: converge a server (or a sysroot) to a node.
//! - `layerone status [--root R]`: installed or not, drift, units, certificate, last pass.
//! - `layerone cloudlinux SCRIPT [ARGS]`: CloudLinux's panel-integration scripts, read-only.
//! - `layerone completions bash|zsh|fish`: the shell's completion script (the packages ship
//!   `packaging/completions/`, which a test keeps equal to this output).

mod catalogue;
mod cloudlinux;
mod dev;
mod install;
mod job;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "layerone", version, about = "The layerone node command line")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a dev node: API over HTTPS plus a watching runner on the simulated provider.
    Dev(dev::DevArgs),
    /// List every operation this build offers.
    Catalogue(catalogue::CatalogueArgs),
    /// Submit, show or wait for jobs on a node.
    #[command(subcommand)]
    Job(job::JobCommand),
    /// Install or converge this server (or a sysroot) as a node; run it again at will.
    Install(install::InstallArgs),
    /// What is installed, what drifted, units, certificate, and the runner's last pass.
    Status(install::StatusArgs),
    /// CloudLinux's panel-integration scripts (integration.ini), answered from state.db.
    Cloudlinux(cloudlinux::CloudlinuxArgs),
    /// Print the completion script of a shell (bash, zsh or fish) on standard output.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

fn main() -> std::process::ExitCode {
    // The dev node starts this executable under the tenant worker's name when the build has
    // no `layerone-tenant` beside it: it is then that worker, and nothing else.
    if dev::invoked_as_tenant_worker() {
        return tenant::process::worker_main();
    }
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e:?}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Dev(args) => dev::run(args),
        Command::Catalogue(args) => catalogue::run(args),
        Command::Job(cmd) => job::run(cmd),
        Command::Install(args) => install::run(args),
        Command::Status(args) => install::status(args),
        Command::Cloudlinux(args) => cloudlinux::run(args),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "layerone",
                &mut std::io::stdout(),
            );
            Ok(())
        }
    }
}
