//! The fleet's administrative directory, where its trust roots live (the first node, or a
//! control-plane host), and the control plane's credential.
//!
//! ```text
//! <dir>/fleet.json            the fleet's settings: name, CA generation, brokers, the broker's spec
//! <dir>/ca.pem, ca.key        the fleet CA (key 0600); never regenerated once made, replaced
//!                             only by `fleet ca finish`
//! <dir>/ca-next.pem, .key     while the CA is rotated: the new CA (`fleet ca rotate`)
//! <dir>/control-plane.json    the control plane's credential (0600): its nkey seed, the
//!                             assignment-signing seed, the join password, the CA, the brokers
//! <dir>/broker.pem, .key      the broker's chain (its certificate, then the CA) and key
//! <dir>/broker.conf           the broker's configuration, derived (`fleet::broker_config`)
//! <dir>/nodes.json            the node users the configuration was last rendered with
//! <dir>/operators.json        the operators (`fleet operator add`): name and public key each
//! <dir>/store/                the broker's JetStream store
//! ```

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use fleet::broker_config::{BrokerSpec, ClusterSpec, Users};
use serde::{Deserialize, Serialize};

pub const DEFAULT_DIR: &str = "/etc/layerone/fleet-admin";

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FleetSettings {
    pub name: String,
    /// The CA's common name: the fleet's name and the CA's generation (a rotation bumps it).
    pub ca_common_name: String,
    /// The common name of the CA the last rotation made (`ca-next.pem` while it runs).
    #[serde(default)]
    pub next_ca_common_name: Option<String>,
    /// Where nodes and control planes reach the brokers (`tls://host:port`).
    pub brokers: Vec<String>,
    pub replicas: usize,
    pub broker: BrokerSpec,
}

/// What a control plane connects and signs with.
#[derive(Clone, Serialize, Deserialize)]
pub struct ControlPlane {
    pub brokers: Vec<String>,
    /// Every CA a broker's certificate may be issued by (two while the CA is rotated).
    pub ca_pem: String,
    pub ca_sha256: String,
    pub seed: String,
    pub signing_seed: String,
    pub join_password: String,
}

impl std::fmt::Debug for ControlPlane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControlPlane")
            .field("brokers", &self.brokers)
            .finish_non_exhaustive()
    }
}

impl ControlPlane {
    pub fn load(path: &Path) -> anyhow::Result<ControlPlane> {
        let text = std::fs::read_to_string(path).with_context(|| {
            format!(
                "reading the control plane's credential {} (made by `layerone fleet init`)",
                path.display()
            )
        })?;
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
    }

    /// Writes the credential whole, 0600.
    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        write_file(path, serde_json::to_string_pretty(self)?.as_bytes(), 0o600)
    }

    pub fn public_key(&self) -> anyhow::Result<String> {
        Ok(nkeys::KeyPair::from_seed(&self.seed)?.public_key())
    }

    pub fn fleet_key(&self) -> anyhow::Result<String> {
        Ok(nkeys::KeyPair::from_seed(&self.signing_seed)?.public_key())
    }

    pub async fn connect(&self) -> anyhow::Result<async_nats::Client> {
        fleet::connect::control_plane(&self.seed, &[&self.ca_pem], &self.brokers).await
    }
}

#[derive(Clone, Debug)]
pub struct AdminDir(pub PathBuf);

impl AdminDir {
    pub fn settings(&self) -> PathBuf {
        self.0.join("fleet.json")
    }
    pub fn ca_pem(&self) -> PathBuf {
        self.0.join("ca.pem")
    }
    pub fn ca_key(&self) -> PathBuf {
        self.0.join("ca.key")
    }
    pub fn ca_next_pem(&self) -> PathBuf {
        self.0.join("ca-next.pem")
    }
    pub fn ca_next_key(&self) -> PathBuf {
        self.0.join("ca-next.key")
    }
    pub fn control_plane(&self) -> PathBuf {
        self.0.join("control-plane.json")
    }
    pub fn broker_conf(&self) -> PathBuf {
        self.0.join("broker.conf")
    }
    pub fn nodes(&self) -> PathBuf {
        self.0.join("nodes.json")
    }
    pub fn operators(&self) -> PathBuf {
        self.0.join("operators.json")
    }

    /// The operators the broker's configuration renders: `(name, public key)`, sorted.
    pub fn load_operators(&self) -> anyhow::Result<Vec<(String, String)>> {
        match std::fs::read_to_string(self.operators()) {
            Ok(text) => serde_json::from_str(&text)
                .with_context(|| format!("parsing {}", self.operators().display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e.into()),
        }
    }

    pub fn write_operators(&self, operators: &[(String, String)]) -> anyhow::Result<()> {
        let mut operators = operators.to_vec();
        operators.sort();
        write_file(
            &self.operators(),
            serde_json::to_string_pretty(&operators)?.as_bytes(),
            0o600,
        )
    }

    pub fn load_settings(&self) -> anyhow::Result<FleetSettings> {
        let text = std::fs::read_to_string(self.settings())
            .with_context(|| format!("reading {}", self.settings().display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("parsing {}", self.settings().display()))
    }

    pub fn write_settings(&self, settings: &FleetSettings) -> anyhow::Result<()> {
        write_file(
            &self.settings(),
            serde_json::to_string_pretty(settings)?.as_bytes(),
            0o600,
        )
    }

    /// The node users the broker's configuration holds now.
    pub fn load_nodes(&self) -> anyhow::Result<Vec<(String, String)>> {
        match std::fs::read_to_string(self.nodes()) {
            Ok(text) => Ok(serde_json::from_str(&text)?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e.into()),
        }
    }

    /// Renders the broker's configuration for `nodes` and the registered operators; writes it (and `nodes.json`) only if it
    /// changed, after `nats-server -t` passed on it. Returns whether it changed.
    pub fn render_broker_config(
        &self,
        provider: Option<&provider::Provider>,
        nodes: &[(String, String)],
    ) -> anyhow::Result<bool> {
        let settings = self.load_settings()?;
        let control_plane = ControlPlane::load(&self.control_plane())?;
        let users = Users {
            control_plane: control_plane.public_key()?,
            join_password: control_plane.join_password.clone(),
            nodes: nodes.to_vec(),
            operators: self.load_operators()?,
        };
        let text = fleet::broker_config::render(&settings.broker, &users);
        let path = self.broker_conf();
        if std::fs::read_to_string(&path).ok().as_deref() == Some(text.as_str()) {
            return Ok(false);
        }
        // Another process (`fleet init` beside `fleet serve`) may render at the same time:
        // each checks a candidate of its own.
        let candidate = self
            .0
            .join(format!(".broker.conf.{}", fleet::token::random_hex(8)));
        write_file(&candidate, text.as_bytes(), 0o600)?;
        if let Some(provider) = provider
            && let Err(e) = provider.check_broker_config(&candidate)
        {
            let _ = std::fs::remove_file(&candidate);
            return Err(anyhow::anyhow!(
                "the broker refused the derived configuration: {e}"
            ));
        }
        std::fs::rename(&candidate, &path)?;
        write_file(
            &self.nodes(),
            serde_json::to_string(nodes)?.as_bytes(),
            0o600,
        )?;
        Ok(true)
    }

    /// Tells the running broker to read its configuration again (SIGHUP to its pid file).
    pub fn reload_broker(&self) -> anyhow::Result<()> {
        let settings = self.load_settings()?;
        let pid = std::fs::read_to_string(&settings.broker.pid_file)
            .with_context(|| format!("reading {}", settings.broker.pid_file.display()))?;
        let pid: i32 = pid.trim().parse().context("the broker's pid file")?;
        let pid = rustix::process::Pid::from_raw(pid).context("the broker's pid")?;
        rustix::process::kill_process(pid, rustix::process::Signal::HUP)
            .context("signalling the broker to reload")?;
        Ok(())
    }
}

/// Writes a file whole (temporary file, then rename) with `mode`.
pub fn write_file(path: &Path, bytes: &[u8], mode: u32) -> anyhow::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let dir = path.parent().context("a file's directory")?;
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().unwrap_or_default().to_string_lossy(),
        fleet::token::random_hex(8)
    ));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&tmp)
        .with_context(|| format!("creating {}", tmp.display()))?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// What `layerone fleet init` is given.
#[derive(Clone, Debug)]
pub struct InitOptions {
    pub dir: AdminDir,
    pub name: String,
    pub listen: String,
    pub brokers: Vec<String>,
    pub server_names: Vec<String>,
    pub replicas: usize,
    pub monitor_port: u16,
    pub cluster: Option<ClusterSpec>,
    /// Another broker of the same fleet: its CA, its control plane's credential and its name
    /// are copied, never made anew (a cluster's second and third servers).
    pub from: Option<AdminDir>,
}

/// Creates what is missing of the administrative directory; never replaces a trust root that
/// exists. Returns whether anything was written.
pub fn init_files(options: &InitOptions) -> anyhow::Result<bool> {
    let dir = &options.dir;
    std::fs::create_dir_all(&dir.0)?;
    std::fs::set_permissions(&dir.0, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
    let mut wrote = false;
    let mut name = options.name.clone();
    let mut ca_common_name = format!("{} fleet CA 1", options.name);
    if let Some(from) = &options.from {
        let theirs = from.load_settings()?;
        name = theirs.name;
        ca_common_name = theirs.ca_common_name;
        for (src, dst, mode) in [
            (from.ca_pem(), dir.ca_pem(), 0o644),
            (from.ca_key(), dir.ca_key(), 0o600),
            (from.control_plane(), dir.control_plane(), 0o600),
        ] {
            if !dst.exists() {
                write_file(&dst, &std::fs::read(&src)?, mode)?;
                wrote = true;
            }
        }
    }
    let settings = match dir.load_settings() {
        Ok(settings) => settings,
        Err(_) => {
            let broker = BrokerSpec {
                server_name: options
                    .server_names
                    .first()
                    .cloned()
                    .unwrap_or_else(|| name.clone()),
                listen: options.listen.clone(),
                monitor_port: options.monitor_port,
                store_dir: dir.0.join("store"),
                pid_file: dir.0.join("broker.pid"),
                cert_file: dir.0.join("broker.pem"),
                key_file: dir.0.join("broker.key"),
                cluster: options.cluster.clone(),
            };
            let settings = FleetSettings {
                name,
                ca_common_name,
                next_ca_common_name: None,
                brokers: options.brokers.clone(),
                replicas: options.replicas,
                broker,
            };
            dir.write_settings(&settings)?;
            wrote = true;
            settings
        }
    };
    if !dir.ca_pem().exists() {
        if dir.ca_key().exists() {
            anyhow::bail!(
                "{} exists without {}: refusing to make another CA over it",
                dir.ca_key().display(),
                dir.ca_pem().display()
            );
        }
        let ca = fleet::tls::create_ca(&settings.ca_common_name)?;
        write_file(&dir.ca_key(), ca.key_pem.as_bytes(), 0o600)?;
        write_file(&dir.ca_pem(), ca.cert_pem.as_bytes(), 0o644)?;
        wrote = true;
    }
    let ca = fleet::tls::CaPair {
        cert_pem: std::fs::read_to_string(dir.ca_pem())?,
        key_pem: std::fs::read_to_string(dir.ca_key())?,
    };
    if !settings.broker.cert_file.exists() {
        let mut names = options.server_names.clone();
        names.extend(["127.0.0.1".to_owned(), "localhost".to_owned()]);
        names.dedup();
        let (chain, key) = fleet::tls::issue_broker_cert(&ca, &settings.ca_common_name, &names)?;
        write_file(&settings.broker.key_file, key.as_bytes(), 0o600)?;
        write_file(&settings.broker.cert_file, chain.as_bytes(), 0o644)?;
        wrote = true;
    }
    if !dir.control_plane().exists() {
        let control_plane = ControlPlane {
            brokers: settings.brokers.clone(),
            ca_sha256: fleet::tls::pem_sha256(&ca.cert_pem)?,
            ca_pem: ca.cert_pem.clone(),
            seed: nkeys::KeyPair::new_user().seed()?,
            signing_seed: nkeys::KeyPair::new_account().seed()?,
            join_password: fleet::token::random_hex(32),
        };
        control_plane.write(&dir.control_plane())?;
        wrote = true;
    }
    Ok(wrote)
}

/// Where `fleet init` installs the broker's and the fleet service's units.
pub const UNIT_DIR: &str = "/etc/systemd/system";
pub const BROKER_UNIT: &str = "layerone-broker.service";
pub const SERVICE_UNIT: &str = "layerone-fleet.service";

/// The fleet service's unit (`layerone fleet serve`), after the broker.
pub fn service_unit(dir: &AdminDir) -> String {
    format!(
        "[Unit]\n\
         Description=layerone fleet service (joins, broker configuration, liveness, dead letters)\n\
         After={BROKER_UNIT}\n\
         Requires={BROKER_UNIT}\n\n\
         [Service]\n\
         ExecStart=/usr/bin/layerone fleet serve --dir {dir}\n\
         Restart=always\n\
         RestartSec=2\n\n\
         [Install]\n\
         WantedBy=multi-user.target\n",
        dir = dir.0.display()
    )
}

/// The broker's unit: the derived configuration, reloaded on `systemctl reload`.
pub fn broker_unit(dir: &AdminDir) -> String {
    format!(
        "[Unit]\n\
         Description=layerone fleet broker (NATS JetStream)\n\
         After=network-online.target\n\
         Wants=network-online.target\n\n\
         [Service]\n\
         ExecStart=/usr/local/bin/nats-server -c {conf}\n\
         ExecReload=/bin/kill -HUP $MAINPID\n\
         Restart=on-failure\n\
         LimitNOFILE=65536\n\n\
         [Install]\n\
         WantedBy=multi-user.target\n",
        conf = dir.broker_conf().display()
    )
}

/// A cluster member's settings: its routes verified with the fleet CA.
pub fn cluster_spec(
    dir: &AdminDir,
    name: String,
    listen: String,
    routes: Vec<String>,
) -> ClusterSpec {
    ClusterSpec {
        name,
        listen,
        routes,
        ca_file: dir.ca_pem(),
    }
}
