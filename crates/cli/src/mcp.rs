//! `layerone mcp`: the node's operations as MCP tools over stdio, for an operator's session
//! (`crates/mcp`). It reaches the node only through the API's local socket.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use client::DevInfo;

#[derive(Args, Debug)]
pub struct McpArgs {
    /// The API's local socket. Default: /run/layerone/operators/api.sock, or with --dev the dev node's.
    #[arg(long, conflicts_with = "dev")]
    socket: Option<PathBuf>,
    /// A dev node's dev.json, whose local socket to use.
    #[arg(long)]
    dev: Option<PathBuf>,
    /// List only these modules' operations (and the read tools), e.g. `web,mail`.
    #[arg(long, value_parser = parse_modules)]
    modules: Option<ModuleList>,
    /// Refuse to start with more tools than this (some clients refuse more than 128).
    #[arg(long, default_value_t = ::mcp::DEFAULT_MAX_TOOLS)]
    max_tools: usize,
    /// Run destructive calls (remove, suspend, restore...) without asking the operator to
    /// confirm them, also on clients that cannot ask.
    #[arg(long)]
    allow_destructive_without_confirmation: bool,
    /// Tool calls per minute this session may make; past it a call is a tool error.
    #[arg(long, default_value_t = ::mcp::DEFAULT_RATE_LIMIT)]
    rate_limit: u32,
    /// How long a call waits for its job before answering `still_running`, in seconds.
    #[arg(long, default_value_t = 300)]
    wait_secs: u64,
    /// The fleet identity the node is named by when it joined a fleet. Default:
    /// /etc/layerone/fleet/identity.json, or with --dev the dev node's.
    #[arg(long)]
    fleet_identity: Option<PathBuf>,
    /// The node's identity file (derived by `layerone install`), the start of the session's
    /// instructions when it names this node.
    #[arg(long, default_value = ::mcp::IDENTITY_FILE)]
    identity_file: PathBuf,
    /// An operator's credential (`layerone fleet operator add`): the session also reaches the
    /// fleet's other nodes, each operation's tool taking `target_node`. Default:
    /// /etc/layerone/fleet/operator.json when it exists.
    #[arg(long, conflicts_with = "no_fleet")]
    fleet_credential: Option<PathBuf>,
    /// Reach this node only, even where an operator's credential is installed.
    #[arg(long)]
    no_fleet: bool,
}

/// A parsed `--modules` list.
#[derive(Clone, Debug)]
struct ModuleList(Vec<registry::Module>);

fn parse_modules(list: &str) -> Result<ModuleList, String> {
    ::mcp::tools::parse_modules(list).map(ModuleList)
}

pub fn run(args: McpArgs) -> anyhow::Result<()> {
    // Standard output is the protocol: every log line goes to standard error.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let socket = match (args.socket, &args.dev) {
        (Some(socket), _) => socket,
        (None, Some(dev)) => DevInfo::load(dev)?
            .local_socket
            .with_context(|| format!("{} names no local socket", dev.display()))?,
        (None, None) => PathBuf::from(client::LOCAL_SOCKET),
    };
    // A dev node keeps its fleet identity in its simulated system, beside its dev.json.
    let fleet_identity = args.fleet_identity.unwrap_or_else(|| match &args.dev {
        Some(dev) => fleet_control::node::dev_identity_dir(dev.parent().unwrap_or(dev.as_path()))
            .identity_json(),
        None => PathBuf::from(::mcp::FLEET_IDENTITY),
    });
    let default_credential = std::path::Path::new(fleet::operator::DEFAULT_PATH);
    let fleet_credential = match (args.fleet_credential, args.no_fleet) {
        (Some(path), _) => Some(path),
        (None, false) if default_credential.exists() => Some(default_credential.to_owned()),
        (None, _) => None,
    };
    ::mcp::serve(::mcp::Options {
        socket,
        modules: args.modules.map(|m| m.0),
        max_tools: args.max_tools,
        allow_destructive_without_confirmation: args.allow_destructive_without_confirmation,
        rate_limit: args.rate_limit,
        wait: Duration::from_secs(args.wait_secs),
        fleet_identity,
        identity_file: args.identity_file,
        fleet_credential,
    })
}
