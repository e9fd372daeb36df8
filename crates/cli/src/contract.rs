//! `layerone contract check CONTRACT`: a control plane's contract against a node's catalogue
//! (this build's, a catalogue file's, or a live node's over the pinned client). Prints the
//! JSON report; exits 1 when the node does not give what the contract depends on.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use serde_json::Value;

use crate::job::Target;

#[derive(Subcommand, Debug)]
pub enum ContractCommand {
    /// Check a control plane's contract (what it sends, what it reads) against a node's
    /// catalogue; print the JSON report and exit 1 if anything it depends on is not given.
    Check(CheckArgs),
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The contract (JSON; see docs/contract.md).
    contract: PathBuf,
    /// Check against this catalogue file (`layerone catalogue --json`, or a node's
    /// `/v1/catalogue`) instead of this build's.
    #[arg(long, conflicts_with = "live")]
    catalogue: Option<PathBuf>,
    /// Check against a running node's catalogue, reached like `layerone job`.
    #[arg(long)]
    live: bool,
    #[command(flatten)]
    target: Target,
}

/// Sends checked with this build's own validation: the error code and field the node's API
/// would answer.
struct Registry(&'static registry::Registry);

impl contract::Sends for Registry {
    fn name(&self) -> &'static str {
        "registry"
    }

    fn refusal(
        &self,
        operation: &str,
        _entry: &Value,
        resource: &Value,
    ) -> Option<contract::Refusal> {
        let op = self.0.operation(operation)?;
        op.parse(resource.clone()).err().map(|e| contract::Refusal {
            code: e.code.into_owned(),
            field: e.field,
            message: e.message,
        })
    }
}

pub fn run(command: ContractCommand) -> anyhow::Result<()> {
    let ContractCommand::Check(args) = command;
    let text = std::fs::read_to_string(&args.contract)
        .with_context(|| format!("reading {}", args.contract.display()))?;
    let wanted: contract::Contract = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a contract", args.contract.display()))?;
    let report = if let Some(path) = &args.catalogue {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let catalogue: Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not JSON", path.display()))?;
        contract::check(&wanted, &catalogue, &contract::RequestSchema)
    } else if args.live {
        let catalogue = args.target.connect()?.catalogue()?;
        contract::check(&wanted, &catalogue, &contract::RequestSchema)
    } else {
        let registry = declarations::registry();
        let catalogue = serde_json::json!({
            "sha256": registry.catalogue_sha256(),
            "operations": registry.catalogue(),
        });
        contract::check(&wanted, &catalogue, &Registry(registry))
    };
    println!("{}", serde_json::to_string_pretty(&report)?);
    if !report.ok {
        std::process::exit(1);
    }
    Ok(())
}
