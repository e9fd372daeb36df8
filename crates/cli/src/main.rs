//! `layerone`: the node's command line.
//!
//! - `layerone catalogue`: every operation, with family, module, scope and schemas.
//! - `layerone contract check CONTRACT`: a control plane's contract against a node's
//!   catalogue (this build's, `--catalogue FILE` or `--live`), as a JSON report for CI.
//! - `layerone job submit|show|wait`: jobs against a node, with its URL, key and pin from
//!   flags or from a dev node's `dev.json`.
//! - `layerone install [--root R] [--check]`: converge a server (or a sysroot) to a node.
//! - `layerone status [--root R]`: installed or not, drift, units, certificate, last pass.
//! - `layerone tls rotate-key [--root R] [--confirm]`: prepare a new TLS key (printing its
//!   pin) beside the served one, then switch to it.
//! - `layerone cloudlinux SCRIPT [ARGS]`: CloudLinux's panel-integration scripts, read-only.
//! - `layerone fleet init|serve|token|nodes|assign|submit|events|drain|maintenance|activate|remove|rescue|status`
//!   and `layerone join TOKEN`: the fleet (`src/fleet/`, over `crates/fleet-control`).
//! - `layerone mcp`: the node's operations as MCP tools over stdio for an operator's session,
//!   through the API's local socket (`src/mcp.rs`, `crates/mcp`).
//! - `layerone completions bash|zsh|fish`: the shell's completion script (the packages ship
//!   `packaging/completions/`, which a test keeps equal to this output).
//!
//! The dev node is `layerone-dev` (`crates/devnode`), which the packages do not ship.

mod catalogue;
mod cloudlinux;
mod contract;
mod fleet;
mod install;
mod job;
mod mcp;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "layerone", version, about = "The layerone node command line")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List every operation this build offers.
    Catalogue(catalogue::CatalogueArgs),
    /// Check a control plane's contract against a node's catalogue.
    #[command(subcommand)]
    Contract(contract::ContractCommand),
    /// Submit, show or wait for jobs on a node.
    #[command(subcommand)]
    Job(job::JobCommand),
    /// Install or converge this server (or a sysroot) as a node; run it again at will.
    Install(install::InstallArgs),
    /// What is installed, what drifted, units, certificate, and the runner's last pass.
    Status(install::StatusArgs),
    /// The node's TLS key: rotate it in two steps, prepare then confirm.
    #[command(subcommand)]
    Tls(install::TlsCommand),
    /// CloudLinux's panel-integration scripts (integration.ini), answered from state.db.
    Cloudlinux(cloudlinux::CloudlinuxArgs),
    /// The fleet: create it, mint join tokens, list and assign nodes, submit over the broker,
    /// follow its events, drain or remove a node, rescue this one.
    #[command(subcommand)]
    Fleet(fleet::FleetCommand),
    /// Join a fleet with a one-time token (`layerone fleet token`).
    Join(fleet::JoinArgs),
    /// Serve this node's operations as MCP tools on stdio, for an operator's MCP client,
    /// through the API's local socket.
    Mcp(mcp::McpArgs),
    /// Print the completion script of a shell (bash, zsh or fish) on standard output.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

fn main() -> std::process::ExitCode {
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
        Command::Catalogue(args) => catalogue::run(args),
        Command::Contract(cmd) => contract::run(cmd),
        Command::Job(cmd) => job::run(cmd),
        Command::Install(args) => install::run(args),
        Command::Status(args) => install::status(args),
        Command::Tls(cmd) => install::tls(cmd),
        Command::Cloudlinux(args) => cloudlinux::run(args),
        Command::Fleet(command) => fleet::run(command),
        Command::Join(args) => fleet::join(args),
        Command::Mcp(args) => mcp::run(args),
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
