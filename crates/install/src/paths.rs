//! The system paths the installer owns. All are mapped under the install root with
//! `Provider::sysconf`, so the same code installs into `/` and into a temporary sysroot.

/// The node's configuration directory.
pub const ETC_DIR: &str = "/etc/layerone";
/// What the operator chose, and the node id (`config.rs`).
pub const CONFIG: &str = "/etc/layerone/config.toml";
/// The units' `EnvironmentFile`, derived from the configuration.
pub const ENV_FILE: &str = "/etc/layerone/layerone.env";
/// Who the node is, for an operator's MCP session (`identity::render`).
pub const IDENTITY: &str = "/etc/layerone/identity.md";
/// The hex SHA-256 of the API key; the key itself is never stored.
pub const API_KEY_SHA256: &str = "/etc/layerone/api-key.sha256";
/// Where foreign files found in the place of derived ones are moved, each with a note.
pub const OVERRIDE_DIR: &str = "/etc/layerone/override";
/// The certificate and key the API (and the node's Apache vhost) serve.
pub const TLS_DIR: &str = "/etc/layerone/tls";
pub const TLS_CERT: &str = "/etc/layerone/tls/cert.pem";
pub const TLS_KEY: &str = "/etc/layerone/tls/key.pem";
/// A key rotation's prepared certificate and key (`layerone tls rotate-key`), beside the pair
/// the API serves until the rotation is confirmed.
pub const TLS_NEXT_CERT: &str = "/etc/layerone/tls/next-cert.pem";
pub const TLS_NEXT_KEY: &str = "/etc/layerone/tls/next-key.pem";
/// The node's data directory (`store::Layout`): inbox, state, blobs, audit log.
pub const DATA_DIR: &str = "/var/lib/layerone";
/// The provider's audit log directory.
pub const AUDIT_DIR: &str = "/var/lib/layerone/log";
/// What the installer last wrote to each derived file (`sha256  path` lines), so that an
/// outdated file of its own is rewritten while a file someone else changed is adopted.
pub const MANIFEST: &str = "/var/lib/layerone/installed";
/// Vendor unit directory: the templates the installer (and the packages) write.
pub const UNIT_DIR: &str = "/usr/lib/systemd/system";
/// Unit directories whose copies of a unit shadow the vendor one, most specific first.
pub const SHADOWING_UNIT_DIRS: &[&str] = &["/etc/systemd/system", "/run/systemd/system"];
/// Unit directories whose `NAME.d/*.conf` drop-ins change a unit.
pub const DROP_IN_DIRS: &[&str] = &[
    "/etc/systemd/system",
    "/run/systemd/system",
    "/usr/lib/systemd/system",
];
/// The API's system user and group.
pub const API_USER: &str = "layerone-api";
/// The group whose members may use the API's local socket (`layerone mcp`).
pub const OPERATORS_GROUP: &str = "layerone-operators";
/// The runner's binaries, as the units name them.
pub const BIN_DIR: &str = "/usr/bin";
/// The CloudLinux vendor directory whose `etc/integration.ini` names the node's
/// panel-integration scripts (cloudlinux profile only).
pub const CPVENDOR_DIR: &str = "/opt/cpvendor";
pub const CPVENDOR_ETC_DIR: &str = "/opt/cpvendor/etc";
/// The `layerone` command, as integration.ini names it.
pub const LAYERONE_BIN: &str = "/usr/bin/layerone";
