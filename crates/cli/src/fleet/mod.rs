//! `layerone fleet ...` and `layerone join`: the fleet's commands (docs/design.md section 10,
//! `docs/fleet.md`), their flags and what they print; what they do is the control plane's
//! library, `crates/fleet-control`, and the lines printed from its results are in
//! [`text`].

pub mod text;

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use fleet_control::admin::{self, AdminDir, ControlPlane, InitOptions};
use fleet_control::control::Fleet;
use fleet_control::node::{self, NodePaths};
use fleet_control::{operator, rotation, service};
use futures_util::StreamExt as _;
use registry::Module;

#[derive(Args, Debug, Clone)]
pub struct NodeTarget {
    /// A dev node's sandbox (`layerone-dev --root`), instead of this server's installed node.
    #[arg(long, value_name = "ROOT")]
    dev: Option<PathBuf>,
}

impl NodeTarget {
    fn paths(&self) -> anyhow::Result<NodePaths> {
        match &self.dev {
            Some(root) => NodePaths::dev(root),
            None => NodePaths::installed(),
        }
    }
}

#[derive(Args, Debug, Clone)]
pub struct Credential {
    /// The control plane's credential (made by `layerone fleet init`).
    #[arg(
        long,
        value_name = "FILE",
        default_value = "/etc/layerone/fleet-admin/control-plane.json"
    )]
    creds: PathBuf,
}

impl Credential {
    async fn fleet(&self) -> anyhow::Result<Fleet> {
        Fleet::connect(ControlPlane::load(&self.creds)?).await
    }
}

// Parsed once per run: the size of `init`'s flags does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum FleetCommand {
    /// Create the fleet on this host: its CA, the broker's configuration and unit, the streams
    /// and buckets, the catalogue; register this node; print a join token. Run again, it
    /// changes nothing and never makes another CA.
    Init {
        /// The administrative directory: the fleet's trust roots, kept on this host only.
        #[arg(long, default_value = admin::DEFAULT_DIR)]
        dir: PathBuf,
        /// The fleet's name.
        #[arg(long, default_value = "layerone")]
        name: String,
        /// Where the broker listens for clients.
        #[arg(long, default_value = "0.0.0.0:4222")]
        listen: String,
        /// Where nodes reach the broker, `tls://HOST:PORT` (repeat for a cluster's servers).
        #[arg(long = "broker", value_name = "URL", required = true)]
        brokers: Vec<String>,
        /// A name or address the broker's certificate is for (repeatable).
        #[arg(long = "broker-name", value_name = "NAME")]
        broker_names: Vec<String>,
        /// How many copies of each stream a broker cluster keeps.
        #[arg(long, default_value_t = 1)]
        replicas: usize,
        /// The broker's monitoring port on loopback (0: none).
        #[arg(long, default_value_t = 0)]
        monitor_port: u16,
        /// This broker's cluster (a fleet that outgrew one broker): its name, shared by every
        /// server.
        #[arg(long, value_name = "NAME", requires = "cluster_listen")]
        cluster_name: Option<String>,
        /// Where this server listens for its cluster peers.
        #[arg(long, value_name = "HOST:PORT")]
        cluster_listen: Option<String>,
        /// A peer's route, `nats-route://HOST:PORT` (repeatable).
        #[arg(long = "route", value_name = "URL")]
        routes: Vec<String>,
        /// Add a server to an existing fleet: take the fleet's CA and credentials from its
        /// administrative directory (copied over a private channel to this host).
        #[arg(long, value_name = "DIR")]
        from: Option<PathBuf>,
        /// Write the files only; run init again once the broker is started.
        #[arg(long)]
        files_only: bool,
        /// Do not install and start the broker's and the fleet service's units: the broker is
        /// started otherwise (a container, a test).
        #[arg(long)]
        no_units: bool,
        /// Register this node under this name.
        #[arg(long, value_name = "NAME")]
        node: Option<String>,
        #[command(flatten)]
        target: NodeTarget,
        /// How long to wait for the broker to answer.
        #[arg(long, default_value_t = 30)]
        wait: u64,
    },
    /// Run the fleet's service beside the broker: joins, the broker's configuration, node
    /// liveness, dead letters.
    Serve {
        #[arg(long, default_value = admin::DEFAULT_DIR)]
        dir: PathBuf,
        /// Do not run `nats-server -t` on a derived configuration (its binary is not at the
        /// node's program path).
        #[arg(long)]
        no_check: bool,
    },
    /// Mint a one-time join token for a node.
    Token {
        /// The node's name; without it, the joining node names itself (`join --name`).
        node: Option<String>,
        /// How long the token is good for, in seconds.
        #[arg(long, default_value_t = 3600)]
        ttl: u64,
        #[command(flatten)]
        creds: Credential,
    },
    /// Every node: state (up, down, lost, maintenance, draining, incompatible), last seen,
    /// assignment, what it reports.
    Nodes {
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        creds: Credential,
    },
    /// Set a node's modules (core is always assigned).
    Assign {
        node: String,
        #[arg(value_parser = parse_module)]
        modules: Vec<Module>,
        #[command(flatten)]
        creds: Credential,
    },
    /// Submit a request to a node over the broker.
    Submit {
        node: String,
        /// The request as JSON, or `-` for standard input.
        request: String,
        /// Wait for the job's final state (or the node's refusal) and print it.
        #[arg(long)]
        wait: bool,
        #[arg(long, default_value_t = 60)]
        timeout: u64,
        #[command(flatten)]
        creds: Credential,
    },
    /// Print the events stream as JSON lines; with --follow, keep printing.
    Events {
        #[arg(long)]
        follow: bool,
        /// Only this node's events.
        #[arg(long)]
        node: Option<String>,
        /// Start after this stream sequence (0: from the oldest kept).
        #[arg(long, default_value_t = 0)]
        after: u64,
        #[command(flatten)]
        creds: Credential,
    },
    /// No new work for a node; its queued work waits.
    Drain {
        node: String,
        #[command(flatten)]
        creds: Credential,
    },
    /// Maintenance: like drain, without leaving.
    Maintenance {
        node: String,
        #[command(flatten)]
        creds: Credential,
    },
    /// Back to taking work.
    Activate {
        node: String,
        #[command(flatten)]
        creds: Credential,
    },
    /// Remove a node: its credential is revoked at once.
    Remove {
        node: String,
        #[command(flatten)]
        creds: Credential,
    },
    /// Bring a cut-off node back, keeping its identity, queued work and unpublished events:
    /// other brokers, or a fresh token.
    Rescue {
        #[arg(long = "broker", value_name = "URL")]
        brokers: Vec<String>,
        #[arg(long, conflicts_with = "brokers")]
        token: Option<String>,
        #[command(flatten)]
        target: NodeTarget,
    },
    /// Rotate the fleet's CA while the fleet runs (on the host of the administrative
    /// directory, beside the broker): `rotate`, then `finish` once every node trusts the new CA.
    Ca {
        #[command(subcommand)]
        command: CaCommand,
    },
    /// Operators' credentials (an operator session's reach into the fleet), on the host of the
    /// administrative directory: `add`, `remove`, `list`.
    Operator {
        #[command(subcommand)]
        command: OperatorCommand,
    },
    /// Print the reference part of docs/fleet.md: every subject, stream, bucket, permission and
    /// message schema, generated from the protocol's declarations.
    Reference,
    /// This node's fleet link: joined or not, connected or cut off since when, events waiting.
    Status {
        #[command(flatten)]
        target: NodeTarget,
    },
}

#[derive(Subcommand, Debug)]
pub enum OperatorCommand {
    /// Issue an operator a credential of its own: submit to any node, read events and the
    /// fleet's state; the broker is reloaded with its user.
    Add {
        name: String,
        #[arg(long, default_value = admin::DEFAULT_DIR)]
        dir: PathBuf,
        /// Where the credential is written (0600).
        #[arg(long, default_value = fleet::operator::DEFAULT_PATH)]
        out: PathBuf,
    },
    /// Revoke an operator: its user leaves the broker's configuration (reloaded).
    Remove {
        name: String,
        #[arg(long, default_value = admin::DEFAULT_DIR)]
        dir: PathBuf,
    },
    /// The registered operators and their public keys.
    List {
        #[arg(long, default_value = admin::DEFAULT_DIR)]
        dir: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
pub enum CaCommand {
    /// Make the new CA beside the old one and have every node trust both; the broker keeps the
    /// old CA's certificate until `finish`.
    Rotate {
        #[arg(long, default_value = admin::DEFAULT_DIR)]
        dir: PathBuf,
    },
    /// Once every node that heartbeats trusts the new CA: the broker's certificate from the new
    /// CA (reloaded), then the old CA dropped from what nodes trust and what tokens pin.
    Finish {
        #[arg(long, default_value = admin::DEFAULT_DIR)]
        dir: PathBuf,
        /// Wait this long for the nodes to trust the new CA before refusing.
        #[arg(long, value_name = "SECONDS", default_value_t = 0)]
        wait: u64,
        /// Finish although registered nodes are down: they will need `fleet rescue --token`.
        #[arg(long)]
        allow_down: bool,
    },
    /// The fleet's CA, its trust bundle, and during a rotation which nodes trust the new CA.
    Status {
        #[arg(long, default_value = admin::DEFAULT_DIR)]
        dir: PathBuf,
    },
}

#[derive(Args, Debug)]
pub struct JoinArgs {
    /// The join token (`layerone fleet token`).
    token: String,
    /// This node's name, if the token does not name it.
    #[arg(long)]
    name: Option<String>,
    #[command(flatten)]
    target: NodeTarget,
}

fn parse_module(text: &str) -> Result<Module, String> {
    serde_json::from_value(serde_json::Value::String(text.to_owned()))
        .map_err(|_| format!("not a module: {text} (core, web, php, mysql, mail, tls, backup)"))
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

pub fn join(args: JoinArgs) -> anyhow::Result<()> {
    let paths = args.target.paths()?;
    let identity = runtime()?.block_on(node::join(&args.token, args.name.as_deref(), &paths))?;
    println!("joined the fleet as {}", identity.node);
    println!(
        "the node's daemon starts within seconds (layerone-api watches {})",
        paths.identity.0.display()
    );
    Ok(())
}

pub fn run(command: FleetCommand) -> anyhow::Result<()> {
    let rt = runtime()?;
    match command {
        FleetCommand::Init {
            dir,
            name,
            listen,
            brokers,
            broker_names,
            replicas,
            monitor_port,
            files_only,
            no_units,
            node,
            target,
            wait,
            cluster_name,
            cluster_listen,
            routes,
            from,
        } => {
            for url in &brokers {
                fleet_control::check_broker_url(url)?;
            }
            let dir = AdminDir(dir);
            let wrote = admin::init_files(&InitOptions {
                dir: dir.clone(),
                name,
                listen,
                brokers,
                server_names: broker_names,
                replicas,
                monitor_port,
                cluster: cluster_name.zip(cluster_listen).map(|(name, listen)| {
                    admin::cluster_spec(&dir, name, listen, routes)
                }),
                from: from.map(AdminDir),
            })?;
            let nodes = dir.load_nodes()?;
            dir.render_broker_config(None, &nodes)?;
            if wrote {
                println!("wrote the fleet's files in {}", dir.0.display());
            }
            if files_only {
                println!("start the broker: nats-server -c {}", dir.broker_conf().display());
                return Ok(());
            }
            if !no_units {
                fleet_control::install_units(&dir)?;
            }
            rt.block_on(init_on_broker(&dir, node, target, Duration::from_secs(wait)))
        }
        FleetCommand::Serve { dir, no_check } => {
            let provider = (!no_check).then(fleet_control::real_provider);
            let multi = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
            multi.block_on(async {
                let service = service::Service::connect(AdminDir(dir), provider).await?;
                tokio::select! {
                    result = service.run() => result,
                    _ = tokio::signal::ctrl_c() => Ok(()),
                }
            })
        }
        FleetCommand::Token { node, ttl, creds } => rt.block_on(async {
            let fleet = creds.fleet().await?;
            println!("{}", fleet.mint_token(node.as_deref(), Duration::from_secs(ttl)).await?);
            Ok(())
        }),
        FleetCommand::Nodes { json, creds } => rt.block_on(async {
            let nodes = creds.fleet().await?.nodes().await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&nodes)?);
                return Ok(());
            }
            println!("{:20} {:12} {:24} {:>4} modules", "node", "state", "last seen", "gen");
            for n in nodes {
                let seen = n.last_seen_ms.map_or("never".to_owned(), |ms| {
                    install::rfc3339((ms / 1000).max(0) as u64)
                });
                let modules = n.assignment.as_ref().map_or("(all: unassigned)".to_owned(), |m| {
                    m.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(",")
                });
                println!("{:20} {:12} {:24} {:>4} {modules}", n.name, n.state, seen, n.assignment_generation);
            }
            Ok(())
        }),
        FleetCommand::Assign { node, modules, creds } => rt.block_on(async {
            let assignment = creds.fleet().await?.assign(&node, &modules).await?;
            println!("{}", serde_json::to_string(&assignment)?);
            Ok(())
        }),
        FleetCommand::Submit {
            node,
            request,
            wait,
            timeout,
            creds,
        } => rt.block_on(async {
            let body = if request == "-" {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
                text
            } else {
                request
            };
            let fleet = creds.fleet().await?;
            let tail = fleet.events_tail().await?;
            let (request_id, seq, duplicate) = fleet.submit(&node, body.as_bytes()).await?;
            if !wait {
                println!(
                    "{}",
                    serde_json::json!({"request_id": request_id, "sequence": seq, "duplicate": duplicate})
                );
                return Ok(());
            }
            // Sent before: its final event may be older than this call, so look from the
            // oldest the stream keeps.
            let after = if duplicate { 0 } else { tail };
            let event = fleet
                .wait(&node, &request_id, after, Duration::from_secs(timeout))
                .await?;
            println!("{}", serde_json::to_string(&event)?);
            Ok(())
        }),
        FleetCommand::Events {
            follow,
            node,
            after,
            creds,
        } => rt.block_on(async {
            let fleet = creds.fleet().await?;
            let tail = fleet.events_tail().await?;
            let mut events = Box::pin(fleet.follow(after, node.as_deref()).await?);
            if !follow && tail <= after {
                return Ok(());
            }
            while let Some(event) = events.next().await {
                let (seq, event) = event?;
                let mut value = serde_json::to_value(&event)?;
                value["sequence"] = seq.into();
                println!("{value}");
                if !follow && seq >= tail {
                    break;
                }
            }
            Ok(())
        }),
        FleetCommand::Drain { node, creds } => rt.block_on(async {
            creds.fleet().await?.set_admin(&node, fleet::protocol::Admin::Draining).await
        }),
        FleetCommand::Maintenance { node, creds } => rt.block_on(async {
            creds.fleet().await?.set_admin(&node, fleet::protocol::Admin::Maintenance).await
        }),
        FleetCommand::Activate { node, creds } => rt.block_on(async {
            creds.fleet().await?.set_admin(&node, fleet::protocol::Admin::Active).await
        }),
        FleetCommand::Remove { node, creds } => rt.block_on(async {
            creds.fleet().await?.remove(&node).await?;
            println!("removed {node}: its credential is revoked when the fleet service renders the broker's configuration");
            Ok(())
        }),
        FleetCommand::Rescue {
            brokers,
            token,
            target,
        } => {
            let paths = target.paths()?;
            let identity = match token {
                Some(token) => rt.block_on(node::join(&token, None, &paths))?,
                None => {
                    anyhow::ensure!(!brokers.is_empty(), "give --broker URL or --token TOKEN");
                    node::rescue_brokers(&paths, brokers)?
                }
            };
            println!("node {} now reaches {}", identity.node, identity.brokers.join(","));
            Ok(())
        }
        FleetCommand::Operator { command } => match command {
            OperatorCommand::Add { name, dir, out } => {
                let reload = operator::add(&AdminDir(dir), &name, &out)?;
                text::reload_line(reload).into_iter().for_each(|l| println!("{l}"));
                println!(
                    "operator {name}: credential written to {} (0600)",
                    out.display()
                );
                Ok(())
            }
            OperatorCommand::Remove { name, dir } => {
                let reload = operator::remove(&AdminDir(dir), &name)?;
                text::reload_line(reload).into_iter().for_each(|l| println!("{l}"));
                println!("operator {name} removed: its credential is refused");
                Ok(())
            }
            OperatorCommand::List { dir, json } => {
                let operators = operator::list(&AdminDir(dir))?;
                if json {
                    let rows: Vec<_> = operators
                        .iter()
                        .map(|(name, key)| serde_json::json!({"name": name, "public_key": key}))
                        .collect();
                    println!("{}", serde_json::to_string_pretty(&rows)?);
                } else {
                    for (name, key) in operators {
                        println!("{name:20} {key}");
                    }
                }
                Ok(())
            }
        },
        FleetCommand::Ca { command } => {
            let lines = rt.block_on(async {
                anyhow::Ok(match command {
                    CaCommand::Rotate { dir } => {
                        text::rotation_lines(&rotation::rotate(&AdminDir(dir)).await?)
                    }
                    CaCommand::Finish { dir, wait, allow_down } => text::finished_lines(
                        &rotation::finish(&AdminDir(dir), Duration::from_secs(wait), allow_down)
                            .await?,
                    ),
                    CaCommand::Status { dir } => {
                        text::ca_status_lines(&rotation::status(&AdminDir(dir)).await?)
                    }
                })
            })?;
            for line in lines {
                println!("{line}");
            }
            Ok(())
        }
        FleetCommand::Reference => {
            print!("{}", fleet::protocol::reference());
            Ok(())
        }
        FleetCommand::Status { target } => {
            for line in text::status_lines(node::status(&target.paths()?)?.as_ref()) {
                println!("{line}");
            }
            Ok(())
        }
    }
}

/// The part of `fleet init` that needs the broker: streams and buckets, the catalogue, this
/// node's registration, a join token.
async fn init_on_broker(
    dir: &AdminDir,
    node_name: Option<String>,
    target: NodeTarget,
    wait: Duration,
) -> anyhow::Result<()> {
    let (fleet, sha) = fleet_control::init_on_broker(dir, wait).await?;
    println!("catalogue  {sha}");
    if let Some(name) = node_name {
        let paths = target.paths()?;
        fleet_control::register_this_node(dir, &fleet, &name, &paths).await?;
        println!("node       {name} registered");
    }
    let token = fleet.mint_token(None, Duration::from_secs(3600)).await?;
    println!("join token (one use, one hour; `layerone join TOKEN --name NAME` on the next node):");
    println!("{token}");
    Ok(())
}
