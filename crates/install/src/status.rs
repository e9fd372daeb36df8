//! `layerone status`: what is installed, what drifted from the derived state, whether the
//! units are enabled, the certificate's expiry and pin, the runner's last pass with its
//! failed steps, and the file systems it found full. It changes nothing: drift is what `layerone install --check` would change,
//! and its `systemctl` queries are audited in a throw-away directory.

use std::path::Path;

use provider::Platform;
use registry::Hex32;
use registry::types::DomainName;

use crate::converge::Change;
use crate::units::{self, UnitFinding};
use crate::{InstallError, InstallOptions, ScratchDir, paths, provider_for, read_config, under};

/// The certificate the API serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertStatus {
    pub pin: api::tls::Pins,
    /// When it stops being valid (Unix seconds).
    pub not_after: i64,
    /// The install-time placeholder rather than a CA-issued certificate.
    pub self_signed: bool,
}

/// What `layerone status` reports.
#[derive(Clone, Debug)]
pub struct Status {
    /// A configuration file is present and parses.
    pub installed: bool,
    /// Why the configuration did not parse, if it did not.
    pub config_error: Option<String>,
    pub node_id: Option<Hex32>,
    pub name: Option<DomainName>,
    /// What `layerone install` would change (empty: no drift). `None` when not installed.
    pub drift: Option<Vec<Change>>,
    pub findings: Vec<UnitFinding>,
    /// Each unit and the enablement state systemd reports (`not-found` when absent).
    pub units: Vec<(String, String)>,
    pub certificate: Option<CertStatus>,
    /// The pins of a key rotation's prepared pair, waiting for `layerone tls rotate-key
    /// --confirm`.
    pub rotation: Option<api::tls::Pins>,
    pub last_pass: Option<state::LastPass>,
    /// The file systems the runner recorded full (empty: none), as on the events feed.
    pub disk_full: Vec<store::FullFileSystem>,
}

/// Looks at the node installed under `root` without changing anything.
pub fn status(root: &Path) -> Result<Status, InstallError> {
    let root = crate::absolute_root(root)?;
    let (config, config_error) = match read_config(&root) {
        Ok(c) => (c, None),
        Err(e) => (None, Some(e.to_string())),
    };
    let installed = config.is_some();
    let platform = config.as_ref().map_or(Platform::Debian, |c| c.platform);

    let drift = if installed {
        let mut check = InstallOptions::new(&root);
        check.check = true;
        Some(crate::install(&check)?.changes)
    } else {
        None
    };

    let scratch = ScratchDir::new("status")?;
    let provider = provider_for(&root, platform, scratch.0.clone());
    let names: Vec<&str> = units::UNITS.iter().map(|(n, _)| *n).collect();
    let states = provider.systemd_unit_states(&names)?;
    let units = names
        .iter()
        .map(|n| {
            (
                (*n).to_owned(),
                states
                    .get(*n)
                    .cloned()
                    .unwrap_or_else(|| "not-found".to_owned()),
            )
        })
        .collect();
    let findings = units::findings(&|p: &str| provider.sysconf(p));

    let certificate = std::fs::read_to_string(under(&root, paths::TLS_CERT))
        .ok()
        .and_then(|pem| {
            Some(CertStatus {
                pin: api::tls::Pins::of(&pem).ok()?,
                not_after: acme::not_after(&pem).ok()?,
                self_signed: acme::is_self_signed(&pem).ok()?,
            })
        });
    let rotation = std::fs::read_to_string(under(&root, paths::TLS_NEXT_CERT))
        .ok()
        .and_then(|pem| api::tls::Pins::of(&pem).ok());
    let layout = store::Layout::new(under(&root, paths::DATA_DIR));
    let (last_pass, disk_full) = if layout.state_db().is_file() {
        (
            state::last_pass(&layout)?,
            state::full_filesystems(&layout)?,
        )
    } else {
        (None, Vec::new())
    };
    Ok(Status {
        installed,
        config_error,
        node_id: config.as_ref().map(|c| c.node_id.clone()),
        name: config.map(|c| c.name),
        drift,
        findings,
        units,
        certificate,
        rotation,
        last_pass,
        disk_full,
    })
}
