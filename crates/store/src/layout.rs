//! Where the node's files live, and with which owners and modes (docs/design.md sections 2 and 6).
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
    /// The fleet daemon's own state (`fleet.db`: its cursor, its unpublished events), the
    /// API user's.
    pub fn fleet_dir(&self) -> PathBuf {
        self.root.join("fleet")
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

    /// Every directory and file of the layout with its mode and owner: the one table the
    /// runner, the API and the installer prepare or check against. `state.db` is listed as
    /// a file; it is only adjusted once it exists (the runner or the installer creates it).
    pub fn entries(&self) -> Vec<LayoutEntry> {
        use LayoutOwner::{Api, Root, RootApiGroup};
        use Side::{ApiSide, Both, RootSide};
        let dir = |path: PathBuf, mode, owner, side| LayoutEntry {
            path,
            dir: true,
            mode,
            owner,
            side,
        };
        vec![
            dir(self.root.clone(), 0o755, Root, Both),
            dir(self.root.join("blobs"), 0o755, Root, Both),
            dir(self.state_dir(), 0o750, RootApiGroup, RootSide),
            dir(self.blobs_out(), 0o750, RootApiGroup, RootSide),
            LayoutEntry {
                path: self.state_db(),
                dir: false,
                mode: 0o640,
                owner: RootApiGroup,
                side: RootSide,
            },
            dir(self.inbox_dir(), 0o700, Api, ApiSide),
            dir(self.blobs_in(), 0o700, Api, ApiSide),
            dir(self.fleet_dir(), 0o700, Api, ApiSide),
        ]
    }

    /// Root's side: the state directory, the outgoing blobs, and state.db's mode once it exists.
    pub fn prepare_root_side(&self, api: Option<ApiIdentity>) -> Result<(), StoreError> {
        self.prepare(api, Side::RootSide)
    }

    /// The API's side: its inbox directory and incoming blobs, owned by the API user.
    pub fn prepare_api_side(&self, api: Option<ApiIdentity>) -> Result<(), StoreError> {
        self.prepare(api, Side::ApiSide)
    }

    fn prepare(&self, api: Option<ApiIdentity>, side: Side) -> Result<(), StoreError> {
        for entry in self.entries() {
            if entry.side != side && entry.side != Side::Both {
                continue;
            }
            // Without an API identity (a dev node run by an ordinary user) nothing is
            // chowned; root-owned entries are left to whoever created them.
            let owner = match (api, entry.owner) {
                (None, _) | (Some(_), LayoutOwner::Root) => None,
                (Some(api), owner) => Some(owner.ids(api)),
            };
            if entry.dir {
                make_dir(&entry.path, entry.mode, owner)?;
            } else if entry.path.exists() {
                set_mode(&entry.path, entry.mode, owner)?;
            }
        }
        Ok(())
    }
}

/// One directory or file of the layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutEntry {
    pub path: PathBuf,
    pub dir: bool,
    /// Permission bits, exactly.
    pub mode: u32,
    pub owner: LayoutOwner,
    /// Which process prepares it.
    pub side: Side,
}

/// Who owns an entry, as user and group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutOwner {
    /// `root:root`.
    Root,
    /// The API user and its group.
    Api,
    /// `root` with the API's group, so the API can read but not write.
    RootApiGroup,
}

impl LayoutOwner {
    /// `(uid, gid)` of this owner given the API's identity.
    pub fn ids(self, api: ApiIdentity) -> (u32, u32) {
        match self {
            LayoutOwner::Root => (0, 0),
            LayoutOwner::Api => (api.uid, api.gid),
            LayoutOwner::RootApiGroup => (0, api.gid),
        }
    }
}

/// Which process prepares an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    RootSide,
    ApiSide,
    Both,
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
