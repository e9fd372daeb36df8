//! `layerone mcp`: the node's operations as MCP tools, for an operator's session (an MCP
//! client started by a person on the node), over stdio.
//!
//! Unprivileged: it links the declarations, the registry and the client, never the code that
//! performs an operation, and reaches the node only through its API's local socket
//! ([`client::NodeClient::local`]), where the API knows the operator by the socket's peer
//! credentials and records them in the audit trail of every request. A call of an
//! operation's tool is a job like any other: admitted by the API, run by root's runner,
//! waited for here.
//!
//! - [`tools`]: the tool table, from `declarations::registry()`: one tool per operation, and
//!   the read tools (jobs, events, audit, drift, status).
//! - [`server`]: the session: rate limit, confirmation of destructive calls, jobs.
//! - [`identity`]: the node's identity text, the session's `instructions`.
//! - [`target`]: the node a session acts on, behind one interface ([`target::NodeTarget`]).
//! - [`peers`]: the fleet's other nodes, reached over the broker with an operator's
//!   credential (never a node's), when the session has one.

pub mod identity;
pub mod peers;
pub mod server;
pub mod target;
pub mod tools;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use client::NodeClient;
use registry::Module;
use rmcp::ServiceExt as _;

use crate::target::{LocalNode, NodeTarget};

/// The most tools a session lists unless told otherwise: some clients refuse more than 128
/// tools per request.
pub const DEFAULT_MAX_TOOLS: usize = 128;
/// Tool calls per minute a session may make unless told otherwise.
pub const DEFAULT_RATE_LIMIT: u32 = 60;
/// Where a joined node's fleet identity is.
pub const FLEET_IDENTITY: &str = "/etc/layerone/fleet/identity.json";
/// The node's identity file, which `layerone install` derives from its configuration.
pub const IDENTITY_FILE: &str = "/etc/layerone/identity.md";

/// How `layerone mcp` was started.
#[derive(Clone, Debug)]
pub struct Options {
    /// The API's local socket.
    pub socket: PathBuf,
    /// List only these modules' operations (and the read tools); all when `None`.
    pub modules: Option<Vec<Module>>,
    pub max_tools: usize,
    pub allow_destructive_without_confirmation: bool,
    /// Tool calls per minute.
    pub rate_limit: u32,
    /// How long a call waits for its job.
    pub wait: Duration,
    /// The fleet identity to name the node by, when it joined a fleet.
    pub fleet_identity: PathBuf,
    /// The node's identity file, the identity's first part when it names this node.
    pub identity_file: PathBuf,
    /// An operator's credential (`layerone fleet operator add`): with it the session reaches
    /// the fleet's peers too.
    pub fleet_credential: Option<PathBuf>,
}

/// Serves one session on standard input and output until the client closes it. Refuses to
/// start, before connecting to anything, when the tool table would be larger than
/// [`Options::max_tools`]; then asks the node for its health and catalogue, which the
/// identity is made of.
pub fn serve(options: Options) -> anyhow::Result<()> {
    let with_peers = options.fleet_credential.is_some();
    let tools = tools::table(
        declarations::registry(),
        options.modules.as_deref(),
        options.max_tools,
        with_peers,
    )?;
    let credential = options
        .fleet_credential
        .as_deref()
        .map(fleet::operator::OperatorCredential::load)
        .transpose()?;
    let node = LocalNode::new(NodeClient::local(&options.socket));
    let (status, health) = node
        .health()
        .with_context(|| format!("the node's API at {}", options.socket.display()))?;
    if status != 200 {
        anyhow::bail!("the node's API answers {status}: {health}");
    }
    let catalogue = node
        .catalogue()
        .with_context(|| format!("the catalogue of the node at {}", options.socket.display()))?;
    let mut facts = identity::NodeFacts::from_api(&health, &catalogue)
        .with_fleet_identity(&options.fleet_identity)
        .with_identity_file(&options.identity_file);
    facts.tools = tools.len();
    facts.narrowed_to = options
        .modules
        .as_ref()
        .map(|m| m.iter().map(|m| m.as_str().to_owned()).collect());
    facts.unconfirmed_destructive = options.allow_destructive_without_confirmation;
    facts.fleet_operator = credential.as_ref().map(|c| c.name.clone());
    let identity = identity::render(&facts);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("the server's runtime")?;
    runtime.block_on(async move {
        let peers = match credential {
            Some(credential) => {
                let client = credential
                    .connect()
                    .await
                    .context("connecting to the fleet's broker with the operator credential")?;
                let peers =
                    peers::Peers::open(async_nats::jetstream::new(client), facts.fleet_name)
                        .await
                        .context("reading the fleet's state with the operator credential")?;
                Some(Arc::new(peers))
            }
            None => None,
        };
        let server = server::Server::new(
            Arc::new(node),
            tools,
            identity,
            catalogue.to_string(),
            server::Policy {
                allow_destructive_without_confirmation: options
                    .allow_destructive_without_confirmation,
                rate_limit: options.rate_limit,
                rate_window: Duration::from_secs(60),
                wait: options.wait,
            },
            peers,
        );
        let follower = tokio::spawn(server.clone().follow_fleet());
        let running = server
            .serve(rmcp::transport::io::stdio())
            .await
            .context("the MCP session did not start")?;
        let ended = running.waiting().await.context("the MCP session");
        follower.abort();
        ended?;
        anyhow::Ok(())
    })
}
