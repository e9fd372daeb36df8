//! The convergence engine: compares one thing on disk with what it should be, records the
//! change, and (unless checking) makes it. Every write goes through the provider's atomic,
//! owner-setting writer under the install root; the only symlinks it makes are a
//! distribution's enabling links ([`Engine::link`]: Apache's `mods-enabled`, pure-ftpd's
//! `auth/`), made as `a2enmod` makes them.

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use provider::Provider;
use sha2::{Digest, Sha256};
use store::{ApiIdentity, LayoutOwner};

use crate::InstallError;
use crate::paths;

/// One change the installer made, or would make under `--check`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    CreateGroup(String),
    CreateUser(String),
    CreateDir {
        path: String,
        mode: u32,
        owner: String,
    },
    WriteFile {
        path: String,
        why: WriteReason,
    },
    Adopt {
        path: String,
        to: String,
        what: String,
    },
    OwnerMode {
        path: String,
        from: String,
        to: String,
    },
    GenerateApiKey,
    TlsPlaceholder {
        name: String,
    },
    StateDb {
        from: usize,
        to: usize,
    },
    Enable(Vec<String>),
    Disable(Vec<String>),
    /// One setting of a service's file that differs from the node's table
    /// (`services/`): `found` is `None` when the file does not set it, `want` is `None` when
    /// the node does not set it at all.
    Setting {
        service: String,
        file: String,
        key: String,
        found: Option<String>,
        want: Option<String>,
    },
    /// A distribution enabling link (`mods-enabled/ssl.load`) made.
    Link {
        path: String,
        target: String,
    },
    /// A service's user made a member of one of the node's groups.
    AddToGroup {
        user: String,
        group: String,
    },
    /// The node's one `/etc/fstab` entry for a mount point, in place of the entries `found`
    /// for it (none: added), every other line kept.
    FstabEntry {
        found: Vec<String>,
        want: String,
    },
    /// A line added to a distribution's file, every other line kept.
    AddLine {
        path: String,
        line: String,
    },
    /// A mounted file system's options changed in place (`mount -o remount`).
    Remount {
        path: String,
        found: String,
        want: String,
    },
    /// A listener that presents another certificate than the node's (`found` and `want` are
    /// the leaf certificates' SHA-256): its service is reloaded, then restarted.
    StaleListener {
        service: String,
        port: u16,
        found: String,
        want: String,
    },
    Other(String),
}

/// Why a file is (re)written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteReason {
    Missing,
    Outdated,
    ReplacesForeign,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::CreateGroup(g) => write!(f, "create system group {g}"),
            Change::CreateUser(u) => write!(f, "create system user {u}"),
            Change::CreateDir { path, mode, owner } => {
                write!(f, "create directory {path} ({owner} {mode:04o})")
            }
            Change::WriteFile { path, why } => match why {
                WriteReason::Missing => write!(f, "write {path}"),
                WriteReason::Outdated => write!(f, "rewrite {path} (derived content changed)"),
                WriteReason::ReplacesForeign => {
                    write!(f, "write {path} in place of the file moved aside")
                }
            },
            Change::Adopt { path, to, what } => {
                write!(f, "move {what} found at {path} to {to} (with a note)")
            }
            Change::OwnerMode { path, from, to } => write!(f, "set {path} to {to} (was {from})"),
            Change::GenerateApiKey => write!(f, "generate the API key (shown once)"),
            Change::TlsPlaceholder { name } => {
                write!(f, "write a self-signed placeholder certificate for {name}")
            }
            Change::StateDb { from: 0, to } => write!(f, "create state.db (schema {to})"),
            Change::StateDb { from, to } => {
                write!(f, "migrate state.db from schema {from} to {to}")
            }
            Change::Enable(units) => write!(f, "enable {}", units.join(" ")),
            Change::Disable(units) => write!(f, "disable {}", units.join(" ")),
            Change::Setting {
                service,
                file,
                key,
                found,
                want,
            } => match (found, want) {
                (Some(found), Some(want)) => write!(
                    f,
                    "{service} {file}: {key} is {found:?}, the node needs {want:?}"
                ),
                (None, Some(want)) => {
                    write!(
                        f,
                        "{service} {file}: {key} is not set, the node needs {want:?}"
                    )
                }
                (Some(found), None) => write!(
                    f,
                    "{service} {file}: {key} is {found:?}, which the node does not set"
                ),
                (None, None) => write!(f, "{service} {file}: {key}"),
            },
            Change::Link { path, target } => write!(f, "link {path} -> {target}"),
            Change::AddToGroup { user, group } => write!(f, "add {user} to group {group}"),
            Change::FstabEntry { found, want } if found.is_empty() => {
                write!(f, "add to /etc/fstab: {want}")
            }
            Change::FstabEntry { found, want } => write!(
                f,
                "replace {} in /etc/fstab with {want}",
                found
                    .iter()
                    .map(|l| format!("`{l}`"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
            Change::AddLine { path, line } => write!(f, "add to {path}: {line}"),
            Change::Remount { path, found, want } => {
                write!(f, "remount {path} with {want} (mounted with {found})")
            }
            Change::StaleListener {
                service,
                port,
                found,
                want,
            } => write!(
                f,
                "{service} on port {port} presents certificate sha256:{found}, not the node's sha256:{want}: reload {service}"
            ),
            Change::Other(text) => f.write_str(text),
        }
    }
}

/// What the engine needs: the provider (its root is the install root), whether to only
/// check, the API's identity once known, and the changes so far.
pub struct Engine {
    pub provider: Provider,
    pub check: bool,
    /// `None` while the API user does not exist (only under `--check`).
    pub api: Option<ApiIdentity>,
    pub changes: Vec<Change>,
    /// Derived file → SHA-256 of what the installer last wrote there.
    pub manifest: BTreeMap<String, String>,
    manifest_loaded: BTreeMap<String, String>,
}

/// How an existing path looks, without following a symlink.
#[derive(Debug)]
enum Found {
    Missing,
    Symlink(PathBuf),
    Dir { mode: u32, uid: u32, gid: u32 },
    File { mode: u32, uid: u32, gid: u32 },
    Other,
}

fn look(path: &Path) -> Result<Found, InstallError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Found::Missing),
        Err(source) => {
            return Err(InstallError::Io {
                path: path.to_owned(),
                source,
            });
        }
    };
    let ft = meta.file_type();
    let (mode, uid, gid) = (meta.permissions().mode() & 0o7777, meta.uid(), meta.gid());
    Ok(if ft.is_symlink() {
        Found::Symlink(std::fs::read_link(path).unwrap_or_default())
    } else if ft.is_dir() {
        Found::Dir { mode, uid, gid }
    } else if ft.is_file() {
        Found::File { mode, uid, gid }
    } else {
        Found::Other
    })
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

impl Engine {
    pub fn new(provider: Provider, check: bool) -> Result<Engine, InstallError> {
        let manifest = read_manifest(&provider.sysconf(paths::MANIFEST))?;
        Ok(Engine {
            provider,
            check,
            api: None,
            changes: Vec::new(),
            manifest_loaded: manifest.clone(),
            manifest,
        })
    }

    pub fn map(&self, system_path: &str) -> PathBuf {
        self.provider.sysconf(system_path)
    }

    /// `(uid, gid)` for `owner`, or `None` when it names the API user, which does not exist
    /// yet (checking only).
    fn ids(&self, owner: LayoutOwner) -> Option<(u32, u32)> {
        match (owner, self.api) {
            (LayoutOwner::Root, _) => Some((0, 0)),
            (owner, Some(api)) => Some(owner.ids(api)),
            (_, None) => None,
        }
    }

    fn owner_name(owner: LayoutOwner) -> &'static str {
        match owner {
            LayoutOwner::Root => "root:root",
            LayoutOwner::Api => "layerone-api:layerone-api",
            LayoutOwner::RootApiGroup => "root:layerone-api",
        }
    }

    pub fn record(&mut self, change: Change) {
        tracing::info!(change = %change, check = self.check, "install");
        self.changes.push(change);
    }

    /// A directory with exactly `mode` and `owner`. A symlink in its place is refused (an
    /// operator may have moved the data elsewhere on purpose); a file is moved aside.
    pub fn dir(
        &mut self,
        system_path: &str,
        mode: u32,
        owner: LayoutOwner,
    ) -> Result<(), InstallError> {
        let path = self.map(system_path);
        match look(&path)? {
            Found::Dir { mode: m, uid, gid } => {
                self.fix(system_path, &path, (m, uid, gid), mode, owner)
            }
            Found::Symlink(target) => Err(InstallError::Refused {
                path: path.clone(),
                reason: format!(
                    "is a symlink to {}; the installer uses real directories only",
                    target.display()
                ),
            }),
            Found::Missing => {
                self.record(Change::CreateDir {
                    path: system_path.to_owned(),
                    mode,
                    owner: Self::owner_name(owner).to_owned(),
                });
                if !self.check {
                    self.provider.ensure_dir(&path, mode)?;
                    if let Some(ids) = self.ids(owner) {
                        self.provider.set_owner_mode(&path, mode, ids)?;
                    }
                }
                Ok(())
            }
            Found::File { .. } | Found::Other => {
                self.adopt(system_path, "a file")?;
                self.record(Change::CreateDir {
                    path: system_path.to_owned(),
                    mode,
                    owner: Self::owner_name(owner).to_owned(),
                });
                if !self.check {
                    self.provider.ensure_dir(&path, mode)?;
                    if let Some(ids) = self.ids(owner) {
                        self.provider.set_owner_mode(&path, mode, ids)?;
                    }
                }
                Ok(())
            }
        }
    }

    /// A directory with exactly `mode`, owned by `ids` (a service's own user, such as
    /// `vmail`); `ids` is `None` only under `--check` before that user exists.
    pub fn dir_ids(
        &mut self,
        system_path: &str,
        mode: u32,
        ids: Option<(u32, u32)>,
        owner: &str,
    ) -> Result<(), InstallError> {
        let path = self.map(system_path);
        let found = look(&path)?;
        if let Found::Dir { mode: m, uid, gid } = found {
            if m == mode && ids == Some((uid, gid)) {
                return Ok(());
            }
            self.record(Change::OwnerMode {
                path: system_path.to_owned(),
                from: format!("{uid}:{gid} {m:04o}"),
                to: format!("{owner} {mode:04o}"),
            });
        } else {
            if !matches!(found, Found::Missing) {
                self.adopt(system_path, "something that is not a directory")?;
            }
            self.record(Change::CreateDir {
                path: system_path.to_owned(),
                mode,
                owner: owner.to_owned(),
            });
            if !self.check {
                self.provider.ensure_dir(&path, mode)?;
            }
        }
        if !self.check
            && let Some(ids) = ids
        {
            self.provider.set_owner_mode(&path, mode, ids)?;
        }
        Ok(())
    }

    /// A distribution's enabling link: `system_path` is a symlink to `target` (relative, as
    /// `a2enmod` makes it). Anything else there is moved to the override
    /// area first. Returns whether the link was (or, checking, would be) made.
    pub fn link(&mut self, system_path: &str, target: &str) -> Result<bool, InstallError> {
        let path = self.map(system_path);
        match look(&path)? {
            Found::Symlink(current) if current == Path::new(target) => return Ok(false),
            Found::Missing => {}
            Found::Symlink(current) => {
                self.adopt(system_path, &format!("a symlink to {}", current.display()))?;
            }
            _ => self.adopt(system_path, "something that is not the enabling link")?,
        }
        self.record(Change::Link {
            path: system_path.to_owned(),
            target: target.to_owned(),
        });
        if !self.check {
            self.provider.enable_link(&path, Path::new(target))?;
        }
        Ok(true)
    }

    /// Owner and mode of an existing file or directory, corrected if they differ.
    fn fix(
        &mut self,
        system_path: &str,
        path: &Path,
        (mode, uid, gid): (u32, u32, u32),
        want_mode: u32,
        owner: LayoutOwner,
    ) -> Result<(), InstallError> {
        let want = self.ids(owner);
        if mode == want_mode && want == Some((uid, gid)) {
            return Ok(());
        }
        self.record(Change::OwnerMode {
            path: system_path.to_owned(),
            from: format!("{uid}:{gid} {mode:04o}"),
            to: format!("{} {want_mode:04o}", Self::owner_name(owner)),
        });
        if !self.check
            && let Some(ids) = want
        {
            self.provider.set_owner_mode(path, want_mode, ids)?;
        }
        Ok(())
    }

    /// Owner and mode of a file the installer keeps but does not derive (the key, the
    /// certificate, state.db), if it exists.
    pub fn owner_mode(
        &mut self,
        system_path: &str,
        mode: u32,
        owner: LayoutOwner,
    ) -> Result<(), InstallError> {
        let path = self.map(system_path);
        match look(&path)? {
            Found::File { mode: m, uid, gid } | Found::Dir { mode: m, uid, gid } => {
                self.fix(system_path, &path, (m, uid, gid), mode, owner)
            }
            _ => Ok(()),
        }
    }

    /// The current bytes of a regular file at `system_path`; `None` when it is missing or
    /// not a regular file (a symlink is never read through).
    pub fn read_regular(&self, system_path: &str) -> Result<Option<Vec<u8>>, InstallError> {
        let path = self.map(system_path);
        match look(&path)? {
            Found::File { .. } => Ok(Some(std::fs::read(&path).map_err(|source| {
                InstallError::Io {
                    path: path.clone(),
                    source,
                }
            })?)),
            _ => Ok(None),
        }
    }

    /// A derived file: exactly `content`, `mode` and `owner`. An outdated file of the
    /// installer's own is rewritten; anything else in its place (a file someone edited or
    /// put there, a symlink, a directory) is moved to the override area with a note first.
    pub fn derived(
        &mut self,
        system_path: &str,
        content: &[u8],
        mode: u32,
        owner: LayoutOwner,
    ) -> Result<bool, InstallError> {
        let path = self.map(system_path);
        let digest = sha256_hex(content);
        let why = match look(&path)? {
            Found::Missing => WriteReason::Missing,
            Found::File { mode: m, uid, gid } => {
                let current = std::fs::read(&path).map_err(|source| InstallError::Io {
                    path: path.clone(),
                    source,
                })?;
                if current == content {
                    self.manifest.insert(system_path.to_owned(), digest);
                    self.fix(system_path, &path, (m, uid, gid), mode, owner)?;
                    return Ok(false);
                }
                if self.manifest_loaded.get(system_path) == Some(&sha256_hex(&current)) {
                    WriteReason::Outdated
                } else {
                    self.adopt(system_path, "a file that differs from the derived one")?;
                    WriteReason::ReplacesForeign
                }
            }
            Found::Symlink(target) => {
                self.adopt(system_path, &format!("a symlink to {}", target.display()))?;
                WriteReason::ReplacesForeign
            }
            Found::Dir { .. } | Found::Other => {
                self.adopt(system_path, "something that is not a regular file")?;
                WriteReason::ReplacesForeign
            }
        };
        self.write(system_path, content, mode, owner, why)?;
        self.manifest.insert(system_path.to_owned(), digest);
        Ok(true)
    }

    /// Puts back files as they were before derived ones replaced them (`None`: there was
    /// none), after the service's configuration test refused the derived ones; they are no
    /// longer the node's.
    pub fn put_back(&mut self, before: Vec<(String, Option<Vec<u8>>)>) -> Result<(), InstallError> {
        for (path, content) in before {
            let mapped = self.map(&path);
            match content {
                Some(bytes) => self.provider.write_config_atomic(&mapped, &bytes, 0o644)?,
                None => self.provider.remove_config(&mapped)?,
            }
            self.manifest.remove(&path);
        }
        Ok(())
    }

    /// Writes a file whole (temporary file, owner, mode, fsync, rename).
    pub fn write(
        &mut self,
        system_path: &str,
        content: &[u8],
        mode: u32,
        owner: LayoutOwner,
        why: WriteReason,
    ) -> Result<(), InstallError> {
        self.record(Change::WriteFile {
            path: system_path.to_owned(),
            why,
        });
        if !self.check {
            let path = self.map(system_path);
            if let Some(parent) = path.parent()
                && !parent.exists()
            {
                self.provider.ensure_dir(parent, 0o755)?;
            }
            let ids = self.ids(owner).unwrap_or((0, 0));
            self.provider
                .write_owned_atomic(&path, content, mode, ids)?;
        }
        Ok(())
    }

    /// Nothing at `system_path`: whatever is there (a file, a symlink) is moved into the
    /// override area with a note saying `why`. Returns whether something was moved.
    pub fn absent(&mut self, system_path: &str, why: &str) -> Result<bool, InstallError> {
        let found = match look(&self.map(system_path))? {
            Found::Missing => return Ok(false),
            Found::Symlink(target) => format!("a symlink to {}", target.display()),
            Found::File { .. } => "a file".to_owned(),
            Found::Dir { .. } | Found::Other => "something that is not a regular file".to_owned(),
        };
        self.adopt_because(system_path, &found, why)?;
        Ok(true)
    }

    /// Moves whatever is at `system_path` into the override area, beside a note saying when
    /// and why.
    pub fn adopt(&mut self, system_path: &str, what: &str) -> Result<(), InstallError> {
        self.adopt_because(
            system_path,
            what,
            "layerone install derives this file; what was there is kept here and the \
             derived file was written in its place. Put local changes in a systemd drop-in or in \
             /etc/layerone/config.toml instead.",
        )
    }

    fn adopt_because(
        &mut self,
        system_path: &str,
        what: &str,
        reason: &str,
    ) -> Result<(), InstallError> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let flat = system_path.trim_start_matches('/').replace('/', "_");
        let mut name = format!("{flat}.{now}");
        let mut n = 1;
        while self
            .map(&format!("{}/{name}", paths::OVERRIDE_DIR))
            .exists()
        {
            n += 1;
            name = format!("{flat}.{now}.{n}");
        }
        let to = format!("{}/{name}", paths::OVERRIDE_DIR);
        self.record(Change::Adopt {
            path: system_path.to_owned(),
            to: to.clone(),
            what: what.to_owned(),
        });
        if self.check {
            return Ok(());
        }
        let override_dir = self.map(paths::OVERRIDE_DIR);
        if !override_dir.is_dir() {
            self.provider.ensure_dir(&override_dir, 0o700)?;
        }
        let from = self.map(system_path);
        let to_path = self.map(&to);
        self.provider.move_aside(&from, &to_path)?;
        let note = format!(
            "path = {system_path:?}\nmoved_at = {:?}\nmoved_at_unix = {now}\nfound = {what:?}\n\
             reason = {reason:?}\n",
            rfc3339(now)
        );
        self.provider.write_owned_atomic(
            &self.map(&format!("{to}.note")),
            note.as_bytes(),
            0o600,
            (0, 0),
        )?;
        Ok(())
    }

    /// Writes the manifest if it changed. Bookkeeping, not a change to report.
    pub fn save_manifest(&mut self) -> Result<(), InstallError> {
        if self.check || self.manifest == self.manifest_loaded {
            return Ok(());
        }
        let text: String = self
            .manifest
            .iter()
            .map(|(path, sha)| format!("{sha}  {path}\n"))
            .collect();
        let path = self.map(paths::MANIFEST);
        self.provider
            .write_owned_atomic(&path, text.as_bytes(), 0o600, (0, 0))?;
        self.manifest_loaded = self.manifest.clone();
        Ok(())
    }
}

fn read_manifest(path: &Path) -> Result<BTreeMap<String, String>, InstallError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(source) => {
            return Err(InstallError::Io {
                path: path.to_owned(),
                source,
            });
        }
    };
    Ok(text
        .lines()
        .filter_map(|l| {
            let (sha, path) = l.split_once("  ")?;
            Some((path.to_owned(), sha.to_owned()))
        })
        .collect())
}

/// `YYYY-MM-DDTHH:MM:SSZ` for a Unix time (the civil-from-days algorithm).
pub fn rfc3339(unix: u64) -> String {
    let days = (unix / 86_400) as i64;
    let secs = unix % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_matches_known_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_798_761_599), "2026-12-31T23:59:59Z");
    }
}
