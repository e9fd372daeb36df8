//! `layerone install`, `layerone status` and `layerone tls rotate-key`: flags and printing; the work is the install
//! crate's.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use install::{InstallOptions, RunnerMode};
use provider::Platform;
use registry::types::DomainName;

#[derive(Args, Debug)]
pub struct InstallArgs {
    /// The system root to install into: `/` on a server, a directory for a sysroot.
    #[arg(long, default_value = "/")]
    root: PathBuf,
    /// Print what a run would change, and change nothing.
    #[arg(long)]
    check: bool,
    /// The node's fully qualified name (required the first time; its certificate and HTTPS
    /// vhost are for this name).
    #[arg(long, value_name = "FQDN")]
    name: Option<DomainName>,
    /// The platform profile: debian or cloudlinux (default debian on the first install).
    #[arg(long)]
    platform: Option<Platform>,
    /// Where the API listens (default 127.0.0.1:8443 on the first install).
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// How the runner is triggered: timer (oneshot + 15 s timer + path unit) or watch.
    #[arg(long)]
    runner: Option<RunnerMode>,
}

pub fn run(args: InstallArgs) -> anyhow::Result<()> {
    let opts = InstallOptions {
        root: args.root,
        check: args.check,
        name: args.name,
        platform: args.platform,
        listen: args.listen,
        runner: args.runner,
    };
    let report = install::install(&opts).map_err(|e| anyhow::anyhow!("[{}] {e:#}", e.code()))?;
    if report.changes.is_empty() {
        if report.checked_only {
            println!("nothing to change: the node is installed as derived");
        } else {
            println!("nothing changed: the node was already installed as derived");
        }
    } else {
        println!(
            "{}",
            if report.checked_only {
                "would change:"
            } else {
                "changed:"
            }
        );
        for change in &report.changes {
            println!("  {change}");
        }
    }
    for finding in &report.findings {
        println!("warning: {finding}");
    }
    for note in &report.notes {
        println!("note: {note}");
    }
    println!("node id    {}", report.node_id);
    println!("name       {}", report.name);
    match &report.pin {
        Some(pin) => print_pins(pin),
        None => println!("pin        (no certificate yet)"),
    }
    if let Some(key) = &report.api_key {
        println!("api key    {key}");
        println!("           (shown once: only its SHA-256 is stored on the node)");
    }
    Ok(())
}

/// The key pin (what a control plane pins: a renewal keeps it) and the certificate pin (the
/// older form, which changes with each renewal).
fn print_pins(pins: &api::tls::Pins) {
    println!("pin        {}", pins.spki);
    println!("cert pin   {}", pins.certificate);
}

#[derive(Subcommand, Debug)]
pub enum TlsCommand {
    /// Prepare a new key and certificate beside the served pair and print the new pin (the
    /// API keeps serving the old key); with --confirm, switch to the prepared key and restart
    /// the API.
    RotateKey {
        /// The system root the node is installed in: `/` on a server, a directory for a sysroot.
        #[arg(long, default_value = "/")]
        root: PathBuf,
        /// Switch to the prepared key, once the control plane holds its pin.
        #[arg(long)]
        confirm: bool,
    },
}

pub fn tls(cmd: TlsCommand) -> anyhow::Result<()> {
    let TlsCommand::RotateKey { root, confirm } = cmd;
    let report =
        install::rotate_key(&root, confirm).map_err(|e| anyhow::anyhow!("[{}] {e:#}", e.code()))?;
    for note in &report.notes {
        println!("note: {note}");
    }
    if let Some(prepared) = &report.prepared {
        println!(
            "prepared; the API keeps serving the current key until `layerone tls rotate-key --confirm`"
        );
        println!("next pin   {}", prepared.spki);
        println!("next cert  {}", prepared.certificate);
    }
    match &report.serving {
        Some(pins) => {
            if report.prepared.is_none() {
                println!("switched; the API serves the new key");
            }
            print_pins(pins);
        }
        None => println!("pin        (no certificate)"),
    }
    Ok(())
}

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// The system root the node is installed in: `/` on a server, a directory for a sysroot.
    #[arg(long, default_value = "/")]
    root: PathBuf,
}

pub fn status(args: StatusArgs) -> anyhow::Result<()> {
    let s = install::status(&args.root).map_err(|e| anyhow::anyhow!("[{}] {e:#}", e.code()))?;
    if !s.installed {
        match &s.config_error {
            Some(err) => println!("installed  no: {err}"),
            None => println!("installed  no (run `layerone install --name FQDN`)"),
        }
    } else {
        println!("installed  yes");
    }
    if let Some(id) = &s.node_id {
        println!("node id    {id}");
    }
    if let Some(name) = &s.name {
        println!("name       {name}");
    }
    match &s.drift {
        Some(drift) if drift.is_empty() => println!("drift      none"),
        Some(drift) => {
            println!(
                "drift      {} change(s) `layerone install` would make:",
                drift.len()
            );
            for change in drift {
                println!("  {change}");
            }
        }
        None => {}
    }
    for finding in &s.findings {
        println!("warning: {finding}");
    }
    println!("units");
    for (unit, state) in &s.units {
        println!("  {unit:32} {state}");
    }
    match &s.certificate {
        Some(cert) => {
            print_pins(&cert.pin);
            println!(
                "expires    {}{}",
                install::rfc3339(cert.not_after.max(0) as u64),
                if cert.self_signed {
                    " (self-signed placeholder)"
                } else {
                    ""
                }
            );
        }
        None => println!("pin        (no certificate)"),
    }
    if let Some(next) = &s.rotation {
        println!(
            "next pin   {} (prepared; `layerone tls rotate-key --confirm` switches)",
            next.spki
        );
    }
    match &s.last_pass {
        Some(pass) => {
            println!(
                "last pass  {} ({} ms), {} failed step(s)",
                install::rfc3339((pass.finished_ms / 1000).max(0) as u64),
                pass.finished_ms - pass.started_ms,
                pass.failed_steps.len()
            );
            for (step, _, message) in &pass.failed_steps {
                println!("  {step}: {message}");
            }
        }
        None => println!("last pass  none yet"),
    }
    if s.disk_full.is_empty() {
        println!("disk       ok");
    }
    for full in &s.disk_full {
        println!(
            "disk full  {} since {} ({} bytes available); requests are refused with disk_full",
            full.filesystem,
            install::rfc3339((full.since_ms / 1000).max(0) as u64),
            full.available_bytes
        );
    }
    // The fleet: joined or not, connected or cut off since when, events waiting.
    if args.root == std::path::Path::new("/") && s.installed {
        match fleet_control::node::NodePaths::installed()
            .and_then(|paths| fleet_control::node::status(&paths))
            .map(|status| crate::fleet::text::status_lines(status.as_ref()))
        {
            Ok(lines) => lines.iter().for_each(|l| println!("{l}")),
            Err(e) => println!("fleet      unreadable: {e:#}"),
        }
    }
    Ok(())
}
