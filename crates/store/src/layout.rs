//! Where the node's files live, and with which owners and modes (DESIGN.md sections 2 and 6).
//!
//! ```text
//! <data>/inbox/            layerone-api 0700   inbox.db (WAL), written only by the API
//! <data>/blobs/in/         layerone-api 0700   uploads, written only by the API
//! <data>/state/            root:layerone-api 0750
//! <data>/state/state.db    root:layerone-api 0640 (rollback journal)
//! <data>/blobs/out/        root:layerone-api 0750
//! ```
//!
//! The kernel, not application code, keeps the API from writing root's state: it can read
//! state.db through its group, and can create nothing in the state directory.

use std::fs;
use std::os::unix::fs::{PermissionsExt, chown};
use std::path::{Path, PathBuf};

use crate::StoreError;

#[derive(Clone, Debug)]
pub struct Layout {
    root: PathBuf,
}

/// The API's user, as root sees it when it sets owners. `None` on a dev node run by an
/// ordinary user, where every file simply belongs to that user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApiIdentity {
    pub uid: u32,
    pub gid: u32,
}

impl Layout {
    pub fn new(root: impl Into<PathBuf>) -> Layout {
        Layout { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
    pub fn inbox_dir(&self) -> PathBuf {
        self.root.join("inbox")
    }
    pub fn inbox_db(&self) -> PathBuf {
        self.inbox_dir().join("inbox.db")
    }
    pub fn state_dir(&self) -> PathBuf {
        self.root.join("state")
    }
    pub fn state_db(&self) -> PathBuf {
        self.state_dir().join("state.db")
    }
    pub fn blobs_in(&self) -> PathBuf {
        self.root.join("blobs/in")
    }
    pub fn blobs_out(&self) -> PathBuf {
        self.root.join("blobs/out")
    }
    /// The lock that keeps two runners from running a pass at once.
    pub fn runner_lock(&self) -> PathBuf {
        self.state_dir().join("runner.lock")
    }

    /// Root's side: the state directory, the outgoing blobs, and state.db's mode once it exists.
    pub fn prepare_root_side(&self, api: Option<ApiIdentity>) -> Result<(), StoreError> {
        make_dir(&self.root, 0o755, None)?;
        make_dir(&self.root.join("blobs"), 0o755, None)?;
        let group = api.map(|a| (0, a.gid));
        make_dir(&self.state_dir(), 0o750, group)?;
        make_dir(&self.blobs_out(), 0o750, group)?;
        let db = self.state_db();
        if db.exists() {
            set_mode(&db, 0o640, group)?;
        }
        Ok(())
    }

    /// The API's side: its inbox directory and incoming blobs, owned by the API user.
    pub fn prepare_api_side(&self, api: Option<ApiIdentity>) -> Result<(), StoreError> {
        make_dir(&self.root, 0o755, None)?;
        make_dir(&self.root.join("blobs"), 0o755, None)?;
        let owner = api.map(|a| (a.uid, a.gid));
        make_dir(&self.inbox_dir(), 0o700, owner)?;
        make_dir(&self.blobs_in(), 0o700, owner)?;
        Ok(())
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_owned(),
        source,
    }
}

fn make_dir(path: &Path, mode: u32, owner: Option<(u32, u32)>) -> Result<(), StoreError> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(StoreError::Io {
                path: path.to_owned(),
                source: std::io::Error::other("is a symlink; refusing to use it"),
            });
        }
        Ok(_) => {}
        Err(_) => fs::create_dir_all(path).map_err(io(path))?,
    }
    set_mode(path, mode, owner)
}

fn set_mode(path: &Path, mode: u32, owner: Option<(u32, u32)>) -> Result<(), StoreError> {
    if let Some((uid, gid)) = owner {
        chown(path, Some(uid), Some(gid)).map_err(io(path))?;
    }
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).map_err(io(path))
}
