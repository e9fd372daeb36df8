//! `dev.json`: what a dev node (`layerone-dev`) writes so the CLI and the tests can reach it
//! without flags: its URL, API key, key and certificate pins and node id, and where its API's local
//! socket is.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use registry::Hex32;
use serde::{Deserialize, Serialize};

use crate::{ClientError, NodeClient};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DevInfo {
    /// `https://127.0.0.1:<port>`
    pub url: String,
    pub api_key: String,
    /// Hex SHA-256 of the API's certificate (DER).
    pub pin_sha256: String,
    /// `spki-sha256:` and the hex SHA-256 of the certificate's public key: the pin that
    /// survives a renewal with the same key ([`crate::pin`]). Absent in a dev.json written
    /// before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin_spki: Option<String>,
    pub node_id: Hex32,
    /// The API's local socket (plain HTTP, peer credentials), when the dev node serves one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_socket: Option<PathBuf>,
}

impl DevInfo {
    pub fn load(path: &Path) -> Result<DevInfo, ClientError> {
        let fail = |source: Box<dyn std::error::Error + Send + Sync>| ClientError::DevInfo {
            path: path.to_owned(),
            source,
        };
        let text = std::fs::read(path).map_err(|e| fail(Box::new(e)))?;
        serde_json::from_slice(&text).map_err(|e| fail(Box::new(e)))
    }

    /// Writes the file with mode 0600 (it holds the API key): created under a temporary name
    /// with that mode, then renamed over `path`, so the key is never readable by others even
    /// for a moment and a reader never sees half a file.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("dev.json");
        let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        let json = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        file.write_all(&json)?;
        file.write_all(b"\n")?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    }

    /// The pin to trust: the key pin when the file has one, else the certificate pin.
    pub fn pin(&self) -> &str {
        self.pin_spki.as_deref().unwrap_or(&self.pin_sha256)
    }

    /// A client for the dev node this file describes.
    pub fn client(&self) -> Result<NodeClient, ClientError> {
        NodeClient::new(&self.url, Some(self.api_key.clone()), self.pin())
    }

    /// A client for the dev node's local socket, if it serves one.
    pub fn local_client(&self) -> Option<NodeClient> {
        self.local_socket.as_ref().map(NodeClient::local)
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn dev_json_round_trips_and_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev.json");
        let info = DevInfo {
            url: "https://127.0.0.1:8443".into(),
            api_key: "k".repeat(64),
            pin_sha256: "ab".repeat(32),
            pin_spki: Some(format!("spki-sha256:{}", "cd".repeat(32))),
            node_id: "0123456789abcdef0123456789abcdef".parse().unwrap(),
            local_socket: Some(dir.path().join("api.sock")),
        };
        info.save(&path).unwrap();
        assert_eq!(DevInfo::load(&path).unwrap(), info);
        // A dev.json of a node without a local socket still loads.
        let without = DevInfo {
            local_socket: None,
            ..info.clone()
        };
        without.save(&path).unwrap();
        assert!(
            !std::fs::read_to_string(&path)
                .unwrap()
                .contains("local_socket")
        );
        assert_eq!(DevInfo::load(&path).unwrap(), without);
        // One written before the key pin existed loads and is trusted by its certificate pin.
        let older = DevInfo {
            pin_spki: None,
            ..info.clone()
        };
        older.save(&path).unwrap();
        assert!(!std::fs::read_to_string(&path).unwrap().contains("pin_spki"));
        assert_eq!(DevInfo::load(&path).unwrap().pin(), "ab".repeat(32));
        assert_eq!(info.pin(), format!("spki-sha256:{}", "cd".repeat(32)));
        info.save(&path).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        std::fs::write(&path, b"{").unwrap();
        assert!(matches!(
            DevInfo::load(&path),
            Err(ClientError::DevInfo { .. })
        ));
    }
}
