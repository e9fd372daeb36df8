//! `layerone cloudlinux SCRIPT [ARGS]`: the CloudLinux panel-integration scripts named in
//! `/opt/cpvendor/etc/integration.ini` (the `cloudlinux` crate answers; this only finds the
//! node's state and platform and prints). Read-only: it opens state.db through the store's
//! read path and changes nothing. Whatever goes wrong is printed in CloudLinux's documented
//! error shape (stdout, exit status 1), since CloudLinux reads stdout, not our errors.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use provider::{Platform, Provider, ProviderConfig, ReadOnlyExecutor};
use serde_json::json;
use store::{Layout, StateReader};

#[derive(Args, Debug)]
pub struct CloudlinuxArgs {
    /// The node's data directory (its state.db is read, never written).
    #[arg(long, default_value = "/var/lib/layerone")]
    data_dir: PathBuf,
    /// The system root: `/` in production.
    #[arg(long, default_value = "/")]
    root: PathBuf,
    /// The platform profile; default: the one `layerone install` recorded.
    #[arg(long)]
    platform: Option<Platform>,
    /// `sim`: look for alt-php and dbctl in the root instead of this machine (dev nodes, tests).
    #[arg(long, default_value = "real")]
    backend: String,
    /// panel_info, db_info, packages, users, domains, resellers, admins or php.
    script: String,
    /// The script's arguments, as CloudLinux passes them (`--owner=NAME`, `--fields=a,b`...).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

fn platform_of(root: &Path, flag: Option<Platform>) -> Result<Platform, String> {
    if let Some(p) = flag {
        return Ok(p);
    }
    let path = root.join(install::paths::CONFIG.trim_start_matches('/'));
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("the node is not installed ({}: {e})", path.display()))?;
    install::NodeConfig::parse(&text)
        .map(|c| c.platform)
        .map_err(|e| format!("{}: {e}", path.display()))
}

pub fn run(args: CloudlinuxArgs) -> anyhow::Result<()> {
    let reply = answer(&args);
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", serde_json::to_string(&reply.json)?)?;
    out.flush()?;
    if !reply.ok {
        std::process::exit(1);
    }
    Ok(())
}

fn answer(args: &CloudlinuxArgs) -> cloudlinux::Reply {
    let internal = |message: String| cloudlinux::Reply {
        ok: false,
        json: json!({"data": null, "metadata": {"result": "InternalAPIError", "message": message}}),
    };
    let (root, data_dir) = match (
        std::path::absolute(&args.root),
        std::path::absolute(&args.data_dir),
    ) {
        (Ok(r), Ok(d)) => (r, d),
        (Err(e), _) | (_, Err(e)) => return internal(format!("cannot resolve a path: {e}")),
    };
    let platform = match platform_of(&root, args.platform) {
        Ok(p) => p,
        Err(message) => return internal(message),
    };
    // The scripts only look at files: an executor that starts nothing, looking for the
    // programs (alt-php, dbctl) on this machine or, with `sim`, in the root.
    let programs_in_root = match args.backend.as_str() {
        "real" => false,
        "sim" => true,
        other => return internal(format!("unknown backend {other:?}: expected real or sim")),
    };
    let layout = Layout::new(&data_dir);
    let provider = Provider::new(ProviderConfig {
        platform,
        root,
        executor: std::sync::Arc::new(ReadOnlyExecutor { programs_in_root }),
        machine: std::sync::Arc::new(provider::RealMachine),
        // Nothing is run: the scripts only look at files. No audit log is opened.
        audit_dir: layout.root().join("log"),
    });
    let state = StateReader::new(&layout.state_db());
    cloudlinux::answer(
        &args.script,
        &args.args,
        &cloudlinux::Node {
            state: &state,
            provider: &provider,
            caller_uid: rustix::process::geteuid().as_raw(),
            version: env!("CARGO_PKG_VERSION"),
        },
    )
}
