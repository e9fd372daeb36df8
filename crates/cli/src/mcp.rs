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
    /// The fleet identity the node is named by when it joined a fleet.
    #[arg(long, default_value = ::mcp::FLEET_IDENTITY)]
    fleet_identity: PathBuf,
    /// The node's identity file (derived by `layerone install`), the start of the session's
    /// instructions when it names this node.
    #[arg(long, default_value = ::mcp::IDENTITY_FILE)]
    identity_file: PathBuf,
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
    let socket = match (args.socket, args.dev) {
        (Some(socket), _) => socket,
        (None, Some(dev)) => DevInfo::load(&dev)?
            .local_socket
            .with_context(|| format!("{} names no local socket", dev.display()))?,
        (None, None) => PathBuf::from(client::LOCAL_SOCKET),
    };
    ::mcp::serve(::mcp::Options {
        socket,
        modules: args.modules.map(|m| m.0),
        max_tools: args.max_tools,
        allow_destructive_without_confirmation: args.allow_destructive_without_confirmation,
        rate_limit: args.rate_limit,
        wait: Duration::from_secs(args.wait_secs),
        fleet_identity: args.fleet_identity,
        identity_file: args.identity_file,
    })
}
