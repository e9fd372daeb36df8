//! `layerone-dev`: the main job on its embedded defaults.
//!
//! A sandbox directory (default `./.layerone-dev`) holds a simulated system root
//! (`sysroot/`), the node's data (`data/`: inbox, state, blobs, audit log) and its TLS pair
//! (`tls/`); run as root from where tenants cannot pass (a checkout under a 0700 `/root`), the
//! simulated system root lives in `/var/tmp` and `sysroot` links to it. The API serves HTTPS on loopback and a watching runner applies jobs to the
//! sysroot through the simulator (`crates/simulator`). Starting again reuses everything: the
//! key, the node id, the certificate and the state.
//!
//! When no `layerone-tenant` was built beside it, the dev node starts this very executable
//! under the worker's name for tenant work, and it is then that worker
//! ([`invoked_as_tenant_worker`]).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;
use client::DevInfo;
use provider::{Platform, Provider, ProviderConfig};
use registry::Hex32;
use runner::RunnerConfig;
use store::Layout;

/// Run a dev node: the API over HTTPS plus a watching runner on the simulated provider, in a
/// sandbox directory (no system package needed, nothing outside the sandbox changed).
#[derive(Parser, Debug)]
#[command(name = "layerone-dev", version)]
pub struct DevArgs {
    /// The sandbox directory: the simulated system root, the node's data, its TLS pair.
    #[arg(long, default_value = ".layerone-dev")]
    root: PathBuf,
    /// Where the API listens (loopback; port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:8443")]
    listen: SocketAddr,
    /// How often the fleet daemon heartbeats once the node joined a fleet, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    fleet_heartbeat_ms: u64,
    /// The longest the fleet daemon lets a request it cannot take now (a full disk) wait
    /// before the broker delivers it again, in milliseconds (by default a refusal's
    /// `retry_after`, up to 30 s): a test's full disk need not last 30 s.
    #[arg(long, value_name = "MS")]
    fleet_redelivery_max_ms: Option<u64>,
    /// The platform the simulated system is: `debian` (apache2, php-fpm pools) or
    /// `cloudlinux` (httpd, alt-php, LVE, CageFS and MySQL Governor, so account limits and
    /// isolation apply). Start a sandbox with the platform it was made with.
    #[arg(long, value_name = "PLATFORM", default_value_t = Platform::Debian)]
    platform: Platform,
    /// How many events the feed keeps before root trims the oldest (a node keeps 100,000).
    /// A few make a client that fell behind the trim, and its 410 `events_lost`, easy to try.
    #[arg(
        long,
        value_name = "N",
        default_value_t = runner::steps::EVENTS_KEPT,
        value_parser = clap::value_parser!(i64).range(1..)
    )]
    events_kept: i64,
}

/// The identity a dev node keeps across restarts.
/// The front door's limits: the `[api]` table of the simulated system's
/// `/etc/layerone/config.toml`, as a node reads its own, when the file is there.
fn front_door_limits(sysroot: &Path) -> anyhow::Result<api::Limits> {
    let path = sysroot.join("etc/layerone/config.toml");
    let front_door = match std::fs::read_to_string(&path) {
        Ok(text) => api::FrontDoor::from_config_file(&text)
            .with_context(|| format!("in {}", path.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => api::FrontDoor::default(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    Ok(front_door.limits(api::Limits::default())?)
}

fn identity(dev_json: &Path) -> anyhow::Result<(String, Hex32)> {
    if let Ok(info) = DevInfo::load(dev_json) {
        return Ok((info.api_key, info.node_id));
    }
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    Ok((
        api::generate_api_key(),
        hex::encode(bytes).parse().expect("32 hex digits"),
    ))
}

pub fn run(args: DevArgs) -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    std::fs::create_dir_all(&args.root)
        .with_context(|| format!("create {}", args.root.display()))?;
    let root = std::path::absolute(&args.root)?;
    let sysroot = if rustix::process::geteuid().is_root() {
        let sysroot = sysroot_tenants_reach(&root)?;
        reachable_by_tenants(&sysroot)?;
        sysroot
    } else {
        root.join("sysroot")
    };
    let layout = Layout::new(root.join("data"));
    let dev_json = root.join("dev.json");
    let (api_key, node_id) = identity(&dev_json)?;
    std::fs::create_dir_all(root.join("tls"))?;
    let (cert, key) = api::tls::write_key_pair(&root.join("tls"), "localhost")?;
    let pin = api::tls::Pins::of(&std::fs::read_to_string(&cert)?)?;

    std::fs::create_dir_all(&sysroot)?;
    let sim = simulator::SimExecutor::new(vec![]);
    let machine = Arc::new(sim.machine());
    let mut provider = Provider::new(ProviderConfig {
        platform: args.platform,
        root: sysroot.clone(),
        executor: Arc::new(sim),
        machine,
        audit_dir: layout.root().join("log"),
    });
    if let provider::TenantIsolation::Worker { path } = provider.tenant_isolation()
        && !path.is_file()
    {
        provider = provider.with_tenant_worker(tenant_worker_link(&root)?);
    }
    let provider = Arc::new(provider);
    if provider.lookup_user("root")?.is_none() {
        testkit::seed_accounts(&provider)?;
    }
    // A stock Debian 12 hosting server has PHP 8.2 with its usual extensions, so every PHP
    // operation (and a PHP cron task) works from the first command; a CloudLinux one has
    // alt-php 8.2 with the same extensions.
    if provider.php_installed_versions().is_empty() {
        testkit::seed_php(&provider, provider::PhpVersion::V8_2, DEV_PHP_EXTENSIONS)?;
    }
    // CloudLinux's LVE and CageFS tools are the simulator's models; MySQL Governor is there
    // too, so the database part of an account's limits applies.
    if provider.platform() == Platform::CloudLinux {
        testkit::seed_mysql_governor(&provider)?;
    }
    // Its simulated Apache, MariaDB, Postfix and Dovecot are there, so a fleet that assigns it
    // any module finds the module ready.
    testkit::fleet::seed_module_programs(&provider)?;
    provider.ensure_dir(
        &provider.sysconf(provider.apache_layout().vhosts_dir),
        0o755,
    )?;
    layout.prepare_api_side(None)?;
    // The system's, as the provider's: the dev node is a node, not a simulation.
    let clock = provider.clock().clone();
    let config = RunnerConfig {
        layout: layout.clone(),
        provider,
        node_id: node_id.clone(),
        budget: Duration::from_secs(5),
        api: None,
        clock,
        events_kept: args.events_kept,
    };
    // One pass first, so state.db exists before the API reads it.
    runner::run_once(&config)?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    // The local door admits root and whoever started the dev node: the operators of a dev node.
    let local_socket = root.join("api.sock");
    let api = runtime.block_on(api::start(api::ApiConfig {
        data_dir: layout.root().to_owned(),
        listen: args.listen,
        tls_cert: cert.clone(),
        tls_key: key,
        key_sha256: api::key_sha256(&api_key),
        node_id: node_id.clone(),
        local_socket: Some(api::LocalSocket {
            path: local_socket.clone(),
            operators: api::Operators {
                uids: vec![rustix::process::getuid().as_raw()],
                gid: None,
            },
        }),
        limits: front_door_limits(&sysroot)?,
    }))?;
    // In a fleet once `layerone join --dev ROOT` wrote the identity, under the simulated
    // system's /etc, where root's `apply_assignment` reads the pinned fleet key.
    let (stop_daemon, daemon_stopped) = tokio::sync::watch::channel(false);
    let redelivery = args
        .fleet_redelivery_max_ms
        .map_or_else(fleet_daemon::Redelivery::default, |ms| {
            fleet_daemon::Redelivery::at_most(Duration::from_millis(ms.max(10)))
        });
    let daemon = runtime.spawn(fleet_daemon::supervise_with(
        api.gate(),
        fleet_daemon::DaemonConfig {
            identity: fleet::identity::IdentityDir(sysroot.join("etc/layerone/fleet")),
            state_dir: layout.fleet_dir(),
            heartbeat: Duration::from_millis(args.fleet_heartbeat_ms.max(100)),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            platform: "dev".to_owned(),
        },
        redelivery,
        daemon_stopped,
    ));
    let info = DevInfo {
        url: format!("https://{}", api.addr),
        api_key,
        pin_sha256: pin.certificate,
        pin_spki: Some(pin.spki),
        node_id,
        local_socket: Some(local_socket),
    };
    info.save(&dev_json)?;

    let stop = Arc::new(AtomicBool::new(false));
    let watcher = {
        let stop = stop.clone();
        std::thread::Builder::new()
            .name("runner".into())
            .spawn(move || runner::watch::watch(&config, &stop))?
    };
    println!("layerone dev node");
    println!("  url        {}", info.url);
    println!("  api key    {}", info.api_key);
    println!("  pin        {}", info.pin());
    println!("  cert pin   {}", info.pin_sha256);
    println!("  node id    {}", info.node_id);
    println!("  sysroot    {}", sysroot.display());
    println!("  written to {}", dev_json.display());
    println!(
        "Ctrl-C stops it; starting it again reuses {}.",
        root.display()
    );

    runtime.block_on(async {
        let _ = tokio::signal::ctrl_c().await;
    });
    eprintln!("stopping");
    stop.store(true, Ordering::Relaxed);
    stop_daemon.send_replace(true);
    let _ = runtime.block_on(tokio::time::timeout(Duration::from_secs(5), daemon));
    runtime.block_on(api.stop())?;
    watcher
        .join()
        .map_err(|_| anyhow::anyhow!("the runner thread panicked"))?;
    Ok(())
}

/// The extensions of the dev node's PHP 8.2: what Debian's usual hosting packages load.
const DEV_PHP_EXTENSIONS: &[&str] = &[
    "opcache",
    "bcmath",
    "curl",
    "gd",
    "intl",
    "mbstring",
    "mysqli",
    "pdo_mysql",
    "soap",
    "xml",
    "zip",
];

/// Run as root, the dev node does a tenant's work as the tenant (the worker drops to its
/// uid), which must be able to pass through every directory above the sandbox. A checkout
/// under a private directory (`/root` is 0700) cannot host it: say so, and what to do,
/// before anything is started.
fn reachable_by_tenants(sysroot: &std::path::Path) -> anyhow::Result<()> {
    if let Some((dir, mode)) = closed_parent(sysroot)? {
        anyhow::bail!(
            "the dev node runs as root and does each tenant's work as that tenant, who cannot \
                 pass through {} (mode {:o}); start it with a sandbox elsewhere, for example \
                 `layerone-dev --root /var/tmp/layerone-dev` (then `layerone job --dev \
                 /var/tmp/layerone-dev/dev.json ...`), or as a user other than root",
            dir.display(),
            mode & 0o7777
        );
    }
    Ok(())
}

/// The first parent of `path` that other users cannot pass through, with its mode.
fn closed_parent(path: &std::path::Path) -> anyhow::Result<Option<(std::path::PathBuf, u32)>> {
    use std::os::unix::fs::PermissionsExt;
    for dir in path.ancestors().skip(1) {
        let mode = std::fs::metadata(dir)
            .with_context(|| format!("read {}", dir.display()))?
            .permissions()
            .mode();
        if mode & 0o001 == 0 {
            return Ok(Some((dir.to_owned(), mode)));
        }
    }
    Ok(None)
}

/// Where a dev node run as root keeps its simulated system: `<sandbox>/sysroot`, unless the
/// sandbox sits where tenants cannot pass (a checkout under a 0700 `/root`); then in
/// `/var/tmp/layerone-dev-<hash of the sandbox's path>/sysroot`, with `<sandbox>/sysroot` a
/// symlink to it, so every path under `.layerone-dev/sysroot` still reads as before. A
/// sandbox that already holds a real `sysroot` there keeps it (and is refused if tenants
/// cannot reach it).
fn sysroot_tenants_reach(root: &std::path::Path) -> anyhow::Result<std::path::PathBuf> {
    let inside = root.join("sysroot");
    if std::fs::symlink_metadata(&inside).is_ok_and(|m| m.is_dir())
        || closed_parent(&inside)?.is_none()
    {
        return Ok(inside);
    }
    // FNV-1a of the sandbox's path: one shared directory per sandbox, the same each start.
    let hash = root
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    let shared = std::path::Path::new("/var/tmp").join(format!("layerone-dev-{hash:016x}"));
    let outside = shared.join("sysroot");
    std::fs::create_dir_all(&outside).with_context(|| format!("create {}", outside.display()))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o755))?;
    }
    match std::fs::read_link(&inside) {
        Ok(target) if target == outside => {}
        Ok(_) => {
            std::fs::remove_file(&inside)?;
            std::os::unix::fs::symlink(&outside, &inside)?;
        }
        Err(_) => std::os::unix::fs::symlink(&outside, &inside)
            .with_context(|| format!("link {} to {}", inside.display(), outside.display()))?,
    }
    eprintln!(
        "{} cannot be reached by the tenants the dev node works as: the simulated system is in {} \
         ({} links to it)",
        root.display(),
        outside.display(),
        inside.display()
    );
    Ok(outside)
}

/// This executable, linked into the sandbox under the tenant worker's name: `main` then runs
/// as the worker, so a dev node started as root drops to each tenant for their files even
/// when only the `layerone-dev` binary was built.
fn tenant_worker_link(root: &std::path::Path) -> anyhow::Result<std::path::PathBuf> {
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin)?;
    let link = bin.join(provider::TENANT_WORKER_NAME);
    let me = std::env::current_exe()?;
    let _ = std::fs::remove_file(&link);
    if std::fs::hard_link(&me, &link).is_err() {
        std::fs::copy(&me, &link)?;
    }
    Ok(link)
}

/// Whether this process was started under the tenant worker's name.
pub fn invoked_as_tenant_worker() -> bool {
    std::env::args_os()
        .next()
        .map(std::path::PathBuf::from)
        .is_some_and(|arg0| {
            arg0.file_name()
                .is_some_and(|name| name == provider::TENANT_WORKER_NAME)
        })
}
