//! `layerone install` and `layerone status` (docs/design.md sections 2, 6, 9 and 10).
//!
//! The installer converges a server, or a sysroot, to the node's layout, idempotently: the
//! `layerone-api` system user (through the provider's `groupadd`/`useradd`); the directories
//! and files of the node with their owners and modes (the data layout comes from
//! `store::Layout`, the one table of it); `/etc/layerone/config.toml` with a node id generated
//! once; the API key, generated once, printed once and stored only as its SHA-256; state.db
//! created and migrated; the systemd units from `packaging/systemd/` and their
//! `EnvironmentFile`; a self-signed placeholder certificate for the node's name.
//!
//! - `converge.rs`: compare one path with what it should be, record the change, make it.
//!   Derived files are written whole and never as links (the only links are a
//!   distribution's enabling links); a foreign file in their place is moved to
//!   `/etc/layerone/override/` with a note.
//! - `config.rs`: the configuration file, parsed strictly.
//! - `units.rs`: the units, and the shadowing copies, masks and drop-ins that are reported.
//! - `status.rs`: what is installed and what drifted, without changing anything.
//! - `tls.rs`: the placeholder certificate, the Apache vhost and include, ACME and renewal,
//!   and every listener of the certificate reloaded and checked by a handshake (the
//!   handshake is `acme::probe`'s; a listener still presenting another certificate is a
//!   `Change::StaleListener`).
//! - [`rotate_key`]: `layerone tls rotate-key`, a prepared pair (`tls/next-key.pem`,
//!   `tls/next-cert.pem`) beside the one in place, put in place on `--confirm`.
//! - `web.rs`: what keeps tenants apart in Apache and PHP-FPM: the distribution's default
//!   pool replaced, the shared-state modules disabled, the homes' symlink rule.
//! - On the `cloudlinux` profile, `/opt/cpvendor/etc/integration.ini` naming the node's
//!   panel-integration scripts (the `cloudlinux` crate).
//! - `services/`: every service the node drives, configured from one table of settings
//!   (Apache's modules, PHP-FPM's main configuration, Postfix, Dovecot and the `vmail` user,
//!   OpenDKIM, pure-ftpd, the MariaDB root-socket check), then the services' units enabled
//!   and those whose files changed restarted (nothing is started on a sysroot).
//! - `proc_mount.rs`: `/proc` hiding other users' processes (`hidepid=invisible`) from
//!   tenants, the group `layerone-proc` exempted and given to systemd-logind and polkit; in
//!   `/etc/fstab` for every boot, and on the mounted `/proc` (not on a sysroot).
//!
//! A second run changes nothing and says so; `--check` says what a run would change and
//! changes nothing (its read-only `systemctl` queries are audited in a throw-away directory,
//! so that not even the audit log moves).

pub mod config;
mod converge;
pub mod cron_slice;
pub mod identity;
pub mod paths;
pub mod proc_mount;
pub mod services;
pub mod status;
pub mod tls;
pub mod web;

pub mod units;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use provider::{Platform, Provider, ProviderConfig, RealExecutor, SystemUserAdd};
use registry::Hex32;
use registry::types::DomainName;
use store::{ApiIdentity, Layout, LayoutOwner};

pub use config::{ConfigError, NodeConfig, RunnerMode};
pub use converge::{Change, WriteReason, rfc3339};
pub use status::{CertStatus, Status, status};

pub use units::UnitFinding;

/// What `layerone install` was asked.
#[derive(Clone, Debug)]
pub struct InstallOptions {
    /// `/` on a server; a directory for a sysroot.
    pub root: PathBuf,
    /// Only say what would change.
    pub check: bool,
    /// The node's name; required by the first install, changes the configuration later.
    pub name: Option<DomainName>,
    pub platform: Option<Platform>,
    pub listen: Option<SocketAddr>,
    pub runner: Option<RunnerMode>,
}

impl InstallOptions {
    pub fn new(root: impl Into<PathBuf>) -> InstallOptions {
        InstallOptions {
            root: root.into(),
            check: false,
            name: None,
            platform: None,
            listen: None,
            runner: None,
        }
    }
}

/// What a run did (or, checking, would do).
#[derive(Debug)]
pub struct InstallReport {
    pub checked_only: bool,
    pub changes: Vec<Change>,
    /// Things reported, not changed: shadowing unit copies, masks, overriding drop-ins.
    pub findings: Vec<UnitFinding>,
    pub node_id: Hex32,
    pub name: DomainName,
    /// The API key, only on the run that generated it: it is stored nowhere.
    pub api_key: Option<String>,
    /// The pins of the certificate the API serves (`None` only when checking a node that has
    /// none yet).
    pub pin: Option<api::tls::Pins>,
    /// What the operator should know that is not a change: ACME failures (the certificate in
    /// place is kept), an Apache configuration test that failed, Apache missing.
    pub notes: Vec<String>,
}

/// Why the installer stopped. It stops before changing anything it cannot finish safely;
/// what it already changed is correct on its own, and the next run picks up from there.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("layerone install must run as root (it creates a system user and sets owners)")]
    NotRoot,
    #[error("the first install needs the node's name: pass --name FQDN")]
    NeedName,
    #[error("{path}: {source}{}", field_suffix(source))]
    Config {
        path: PathBuf,
        #[source]
        source: ConfigError,
    },
    #[error("refusing {path}: {reason}")]
    Refused { path: PathBuf, reason: String },
    #[error("cannot read {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Provider(#[from] provider::ProviderError),
    #[error(transparent)]
    Store(#[from] store::StoreError),
    #[error(transparent)]
    Tls(#[from] api::tls::TlsError),
    #[error("cannot generate a random value")]
    Random(#[from] getrandom::Error),
    #[error("no key rotation is prepared: run `layerone tls rotate-key` first")]
    NoRotation,
    #[error("state.db: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

fn field_suffix(e: &ConfigError) -> String {
    e.field
        .as_ref()
        .map(|f| format!(" (field {f})"))
        .unwrap_or_default()
}

impl InstallError {
    /// A stable code for scripts.
    pub fn code(&self) -> &'static str {
        match self {
            InstallError::NotRoot => "not_root",
            InstallError::NeedName => "need_name",
            InstallError::Config { .. } => "invalid_config",
            InstallError::Refused { .. } => "refused",
            InstallError::Io { .. } => "io_error",
            InstallError::Provider(_) => "provider_error",
            InstallError::Store(_) => "store_error",
            InstallError::Tls(_) => "tls_error",
            InstallError::Random(_) => "random_error",
            InstallError::NoRotation => "no_rotation",
            InstallError::Sqlite(_) => "state_db_error",
        }
    }
}

/// `root` made absolute, for a caller that must be root (it sets owners).
fn root_as_root(root: &Path) -> Result<PathBuf, InstallError> {
    if !rustix::process::geteuid().is_root() {
        return Err(InstallError::NotRoot);
    }
    absolute_root(root)
}

pub(crate) fn absolute_root(root: &Path) -> Result<PathBuf, InstallError> {
    std::path::absolute(root).map_err(|source| InstallError::Io {
        path: root.to_owned(),
        source,
    })
}

/// A system path mapped under `root` without a provider (before the platform is known).
pub(crate) fn under(root: &Path, system_path: &str) -> PathBuf {
    root.join(system_path.trim_start_matches('/'))
}

pub(crate) fn read_config(root: &Path) -> Result<Option<NodeConfig>, InstallError> {
    let path = under(root, paths::CONFIG);
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(InstallError::Io { path, source }),
        Ok(meta) if !meta.file_type().is_file() => {
            return Err(InstallError::Refused {
                path,
                reason: "is not a regular file (it holds the node id: fix it by hand)".into(),
            });
        }
        Ok(_) => {}
    }
    let text = std::fs::read_to_string(&path).map_err(|source| InstallError::Io {
        path: path.clone(),
        source,
    })?;
    NodeConfig::parse(&text)
        .map(Some)
        .map_err(|source| InstallError::Config { path, source })
}

fn random_hex32() -> Result<Hex32, InstallError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    Ok(hex::encode(bytes).parse().expect("32 lowercase hex digits"))
}

/// A provider for the install root. Under `--check` (and for `status`) its audit log goes
/// to a throw-away directory, so that looking changes nothing.
pub(crate) fn provider_for(root: &Path, platform: Platform, audit_dir: PathBuf) -> Provider {
    Provider::new(ProviderConfig {
        platform,
        root: root.to_owned(),
        executor: std::sync::Arc::new(RealExecutor),
        machine: std::sync::Arc::new(provider::RealMachine),
        audit_dir,
    })
}

/// A directory removed when dropped, for the audit log of a run that must change nothing.
pub(crate) struct ScratchDir(pub PathBuf);

impl ScratchDir {
    pub(crate) fn new(what: &str) -> Result<ScratchDir, InstallError> {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes)?;
        let dir = std::env::temp_dir().join(format!("layerone-{what}-{}", hex::encode(bytes)));
        std::fs::create_dir(&dir).map_err(|source| InstallError::Io {
            path: dir.clone(),
            source,
        })?;
        Ok(ScratchDir(dir))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Converges the install root (or, with `check`, reports what that would change).
pub fn install(opts: &InstallOptions) -> Result<InstallReport, InstallError> {
    let root = root_as_root(&opts.root)?;

    // The configuration: read strictly, then the flags on top.
    let existing = read_config(&root)?;
    let config = match &existing {
        Some(c) => NodeConfig {
            node_id: c.node_id.clone(),
            name: opts.name.clone().unwrap_or_else(|| c.name.clone()),
            platform: opts.platform.unwrap_or(c.platform),
            listen: opts.listen.unwrap_or(c.listen),
            runner: opts.runner.unwrap_or(c.runner),
            acme: c.acme.clone(),
            mail: c.mail.clone(),
            api: c.api.clone(),
        },
        None => NodeConfig {
            node_id: random_hex32()?,
            name: opts.name.clone().ok_or(InstallError::NeedName)?,
            platform: opts.platform.unwrap_or(Platform::Debian),
            listen: opts
                .listen
                .unwrap_or_else(|| config::DEFAULT_LISTEN.parse().expect("a valid address")),
            runner: opts.runner.unwrap_or_default(),
            acme: None,
            mail: config::MailConfig::default(),
            api: api::FrontDoor::default(),
        },
    };

    let scratch = if opts.check {
        Some(ScratchDir::new("check")?)
    } else {
        None
    };
    let audit_dir = match &scratch {
        Some(s) => s.0.clone(),
        None => under(&root, paths::AUDIT_DIR),
    };
    let provider = provider_for(&root, config.platform, audit_dir);
    let mut e = converge::Engine::new(provider, opts.check)?;

    // The data directory and the audit directory first: every program run below is
    // audited there, and the audit log must not be the one to create them.
    e.dir(paths::DATA_DIR, 0o755, LayoutOwner::Root)?;
    e.dir(paths::AUDIT_DIR, 0o700, LayoutOwner::Root)?;

    // The API's user and group.
    e.api = api_identity(&e.provider)?;
    if e.provider.lookup_group(paths::API_USER)?.is_none() {
        e.changes.push(Change::CreateGroup(paths::API_USER.into()));
        if !opts.check {
            e.provider.groupadd_system(paths::API_USER)?;
        }
    }
    if e.provider.lookup_user(paths::API_USER)?.is_none() {
        e.changes.push(Change::CreateUser(paths::API_USER.into()));
        if !opts.check {
            e.provider.useradd_system(&SystemUserAdd {
                name: paths::API_USER,
                group: paths::API_USER,
                home: Path::new(paths::DATA_DIR),
                shell: "/usr/sbin/nologin",
                comment: "layerone node API",
            })?;
        }
    }
    if e.provider.lookup_group(paths::OPERATORS_GROUP)?.is_none() {
        e.changes
            .push(Change::CreateGroup(paths::OPERATORS_GROUP.into()));
        if !opts.check {
            e.provider.groupadd_system(paths::OPERATORS_GROUP)?;
        }
    }
    if !opts.check {
        e.api = Some(
            api_identity(&e.provider)?.ok_or_else(|| InstallError::Refused {
                path: e.map("/etc/passwd"),
                reason: "useradd succeeded but the layerone-api user is not in it".into(),
            })?,
        );
    }

    // /etc/layerone and the configuration.
    e.dir(paths::ETC_DIR, 0o755, LayoutOwner::Root)?;
    e.dir(paths::OVERRIDE_DIR, 0o700, LayoutOwner::Root)?;
    e.dir(paths::TLS_DIR, 0o755, LayoutOwner::Root)?;
    if existing.as_ref() != Some(&config) {
        let why = if existing.is_some() {
            WriteReason::Outdated
        } else {
            WriteReason::Missing
        };
        e.write(
            paths::CONFIG,
            config.render().as_bytes(),
            0o644,
            LayoutOwner::Root,
            why,
        )?;
    } else {
        e.owner_mode(paths::CONFIG, 0o644, LayoutOwner::Root)?;
    }
    e.derived(
        paths::ENV_FILE,
        environment_file(&config).as_bytes(),
        0o644,
        LayoutOwner::Root,
    )?;
    e.derived(
        paths::IDENTITY,
        identity::render(&config).as_bytes(),
        0o644,
        LayoutOwner::Root,
    )?;

    // The API key: generated once, stored as its hash only.
    let api_key = api_key(&mut e)?;

    // The TLS pair: a self-signed placeholder until ACME succeeds.
    let mut pin = tls::placeholder(&mut e, &config)?;

    // The data layout, exactly as the store defines it, and the audit directory.
    let layout = Layout::new(e.map(paths::DATA_DIR));
    for entry in layout.entries() {
        let system_path = system_path_of(&e, &entry.path);
        if entry.dir {
            e.dir(&system_path, entry.mode, entry.owner)?;
        }
    }
    state_db(&mut e, &layout)?;
    for entry in layout.entries().into_iter().filter(|en| !en.dir) {
        let system_path = system_path_of(&e, &entry.path);
        e.owner_mode(&system_path, entry.mode, entry.owner)?;
    }

    // The units, and what could override them.
    e.dir(paths::UNIT_DIR, 0o755, LayoutOwner::Root)?;
    let mut units_written = false;
    for (name, text) in units::UNITS {
        units_written |= e.derived(
            &format!("{}/{name}", paths::UNIT_DIR),
            text.as_bytes(),
            0o644,
            LayoutOwner::Root,
        )?;
    }
    let findings = units::findings(&|p: &str| e.map(p));
    enable_units(&mut e, config.runner, &findings)?;
    if units_written && !opts.check {
        e.provider.systemd_daemon_reload()?;
    }
    // The API reads its unit, environment, key hash and certificate at start: restart it
    // (if it runs) when one of them changed. Nothing runs on a sysroot.
    let api_inputs = [
        paths::ENV_FILE,
        paths::API_KEY_SHA256,
        paths::TLS_CERT,
        paths::TLS_KEY,
        "/usr/lib/systemd/system/layerone-api.service",
    ];
    let api_changed = e.changes.iter().any(|c| match c {
        Change::WriteFile { path, .. } | Change::OwnerMode { path, .. } => {
            api_inputs.contains(&path.as_str())
        }
        _ => false,
    });
    if api_changed && !opts.check {
        e.provider.systemd_restart(units::API_UNIT, false)?;
    }
    // CloudLinux learns the node's users, domains, packages and PHP versions from the
    // panel-integration scripts this file names (`layerone cloudlinux SCRIPT`). World-readable,
    // as CloudLinux requires; only on the cloudlinux profile.
    if config.platform == Platform::CloudLinux {
        e.dir(paths::CPVENDOR_DIR, 0o755, LayoutOwner::Root)?;
        e.dir(paths::CPVENDOR_ETC_DIR, 0o755, LayoutOwner::Root)?;
        e.derived(
            cloudlinux::INTEGRATION_INI,
            cloudlinux::integration_ini(paths::LAYERONE_BIN).as_bytes(),
            0o644,
            LayoutOwner::Root,
        )?;
    }
    // Apache's side and, with an [acme] table, the real certificate.
    let mut notes = Vec::new();
    let mut issued = false;
    if tls::apache(&mut e, &config, &mut notes)?
        && let Some(new_pin) = tls::acme(&mut e, &config, &mut notes)?
    {
        pin = Some(new_pin);
        issued = true;
    }
    web::converge(&mut e, &mut notes)?;
    services::converge(&mut e, &config, &mut notes)?;
    proc_mount::converge(&mut e, &mut notes)?;
    cron_slice::converge(&mut e)?;
    // Every listener of the node's certificate reloaded after an issue or renewal, and each
    // one checked by a handshake (the services above wrote their copies of the pair first).
    tls::follow(&mut e, &config, issued, &mut notes)?;
    e.save_manifest()?;

    Ok(InstallReport {
        checked_only: opts.check,
        changes: e.changes,
        findings,
        node_id: config.node_id,
        name: config.name,
        api_key,
        pin,
        notes,
    })
}

/// What `layerone tls rotate-key` did.
#[derive(Debug)]
pub struct RotationReport {
    /// The pins the API serves now (after `--confirm`: the new key's).
    pub serving: Option<api::tls::Pins>,
    /// The prepared key's pins, while the rotation waits for `--confirm`.
    pub prepared: Option<api::tls::Pins>,
    pub notes: Vec<String>,
}

/// A key rotation (docs/design.md section 9). Without `confirm`: a new key and a self-signed
/// certificate for it beside the pair in place (kept when one is already prepared, so the
/// printed pin stays the one to hand to the control plane); the API keeps serving the old key.
/// With `confirm`: the prepared pair replaces the one in place, the API is restarted (it reads
/// its key at start, through the unit's `LoadCredential=`) and, with an `[acme]` table, a
/// CA-issued certificate is requested for the new key at once.
pub fn rotate_key(root: &Path, confirm: bool) -> Result<RotationReport, InstallError> {
    let root = root_as_root(root)?;
    let config = read_config(&root)?.ok_or(InstallError::NeedName)?;
    let provider = provider_for(&root, config.platform, under(&root, paths::AUDIT_DIR));
    let mut e = converge::Engine::new(provider, false)?;
    let mut notes = Vec::new();
    let report = if confirm {
        let serving = tls::confirm_rotation(&mut e, &config, &mut notes)?;
        RotationReport {
            serving: Some(serving),
            prepared: None,
            notes,
        }
    } else {
        let prepared = tls::prepare_rotation(&mut e, &config)?;
        let serving = e
            .read_regular(paths::TLS_CERT)?
            .and_then(|pem| api::tls::Pins::of(&String::from_utf8_lossy(&pem)).ok());
        RotationReport {
            serving,
            prepared: Some(prepared),
            notes,
        }
    };
    e.save_manifest()?;
    Ok(report)
}

fn api_identity(provider: &Provider) -> Result<Option<ApiIdentity>, InstallError> {
    let user = provider.lookup_user(paths::API_USER)?;
    let group = provider.lookup_group(paths::API_USER)?;
    Ok(match (user, group) {
        (Some(u), Some(g)) => Some(ApiIdentity {
            uid: u.uid,
            gid: g.gid,
        }),
        _ => None,
    })
}

/// The system path of a path under the install root.
fn system_path_of(e: &converge::Engine, mapped: &Path) -> String {
    let rel = mapped
        .strip_prefix(e.provider.root())
        .expect("layout paths are built under the install root");
    format!("/{}", rel.display())
}

/// The units' `EnvironmentFile`: derived from the configuration, never imported from the
/// environment of whoever ran the installer.
pub fn environment_file(config: &NodeConfig) -> String {
    format!(
        "# Derived from /etc/layerone/config.toml by `layerone install`; edits here are moved\n\
         # to /etc/layerone/override/ by the next install.\n\
         LAYERONE_NODE_ID={}\nLAYERONE_NAME={}\nLAYERONE_PLATFORM={}\nLAYERONE_LISTEN={}\n",
        config.node_id, config.name, config.platform, config.listen
    )
}

fn api_key(e: &mut converge::Engine) -> Result<Option<String>, InstallError> {
    let current = e.read_regular(paths::API_KEY_SHA256)?;
    let valid = current.as_ref().is_some_and(|bytes| {
        std::str::from_utf8(bytes).is_ok_and(|t| api::parse_key_sha256(t).is_ok())
    });
    if valid {
        e.owner_mode(paths::API_KEY_SHA256, 0o640, LayoutOwner::RootApiGroup)?;
        return Ok(None);
    }
    let path = e.map(paths::API_KEY_SHA256);
    let why = if std::fs::symlink_metadata(&path).is_ok() {
        e.adopt(paths::API_KEY_SHA256, "something that is not a key hash")?;
        WriteReason::ReplacesForeign
    } else {
        WriteReason::Missing
    };
    e.changes.push(Change::GenerateApiKey);
    if e.check {
        return Ok(None);
    }
    let key = api::generate_api_key();
    let hash = format!("{}\n", hex::encode(api::key_sha256(&key)));
    e.write(
        paths::API_KEY_SHA256,
        hash.as_bytes(),
        0o640,
        LayoutOwner::RootApiGroup,
        why,
    )?;
    Ok(Some(key))
}

/// The schema version of an existing state.db (0 when absent), read without writing.
pub(crate) fn state_db_version(path: &Path) -> Result<usize, InstallError> {
    if !path.exists() {
        return Ok(0);
    }
    let conn = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    Ok(version as usize)
}

fn state_db(e: &mut converge::Engine, layout: &Layout) -> Result<(), InstallError> {
    let version = state_db_version(&layout.state_db())?;
    if version >= state::STATE_SCHEMA_VERSION {
        return Ok(());
    }
    e.changes.push(Change::StateDb {
        from: version,
        to: state::STATE_SCHEMA_VERSION,
    });
    if e.check {
        return Ok(());
    }
    drop(state::StateDb::open(&layout.state_db())?);
    // Its owner and mode are the layout's, set right away rather than reported as drift.
    layout.prepare_root_side(e.api)?;
    Ok(())
}

fn enable_units(
    e: &mut converge::Engine,
    mode: RunnerMode,
    findings: &[UnitFinding],
) -> Result<(), InstallError> {
    let (enable, disable) = units::enabled_for(mode);
    let all: Vec<&str> = enable.iter().chain(disable).copied().collect();
    // Under --check on a fresh root the unit files are not there yet, so systemd knows none.
    let states = e.provider.systemd_unit_states(&all)?;
    let masked = |u: &str| {
        findings
            .iter()
            .any(|f| matches!(f, UnitFinding::Masked { unit, .. } if unit == u))
    };
    let to_enable: Vec<&str> = enable
        .iter()
        .copied()
        .filter(|u| states.get(*u).map(String::as_str) != Some("enabled") && !masked(u))
        .collect();
    let to_disable: Vec<&str> = disable
        .iter()
        .copied()
        .filter(|u| states.get(*u).map(String::as_str) == Some("enabled"))
        .collect();
    if !to_disable.is_empty() {
        e.changes.push(Change::Disable(
            to_disable.iter().map(|u| (*u).to_owned()).collect(),
        ));
        if !e.check {
            e.provider.systemd_disable(&to_disable)?;
        }
    }
    if !to_enable.is_empty() {
        e.changes.push(Change::Enable(
            to_enable.iter().map(|u| (*u).to_owned()).collect(),
        ));
        if !e.check {
            e.provider.systemd_enable(&to_enable)?;
        }
    }
    Ok(())
}
