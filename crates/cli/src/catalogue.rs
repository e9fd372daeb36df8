//! `layerone catalogue`: the registry as a table or as JSON.

use clap::Args;

#[derive(Args, Debug)]
pub struct CatalogueArgs {
    /// Print the whole catalogue as JSON: its version, its SHA-256 and every operation with
    /// request and result schemas (the form `layerone contract check --catalogue` reads).
    #[arg(long)]
    json: bool,
    /// Print the OpenAPI document of the node's HTTP API (what `GET /v1/openapi.json` serves).
    #[arg(long, conflicts_with = "json")]
    openapi: bool,
}

pub fn run(args: CatalogueArgs) -> anyhow::Result<()> {
    let registry = declarations::registry();
    registry.check()?;
    if args.openapi {
        let document = registry::openapi::document(registry, env!("CARGO_PKG_VERSION"));
        println!("{}", serde_json::to_string_pretty(&document)?);
        return Ok(());
    }
    let catalogue = registry.catalogue();
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "version": declarations::CATALOGUE_VERSION,
                "sha256": registry.catalogue_sha256(),
                "operations": catalogue,
            }))?
        );
        return Ok(());
    }
    println!(
        "{:<22} {:<12} {:<7} {:<7} SUMMARY",
        "OPERATION", "FAMILY", "MODULE", "SCOPE"
    );
    for op in catalogue {
        println!(
            "{:<22} {:<12} {:<7} {:<7} {}",
            op.operation,
            op.family,
            op.module.as_str(),
            serde_json::to_value(op.scope)?.as_str().unwrap_or_default(),
            op.summary
        );
    }
    Ok(())
}
