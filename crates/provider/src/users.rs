//! Reading the system user and group databases (`/etc/passwd`, `/etc/group`, `/etc/shadow`)
//! through the sysroot.
//!
//! Handlers use these to observe the state after a change (the uid assigned, whether an
//! account is locked) instead of echoing their request. Only the local files are read, never
//! NSS: the node manages local accounts, and a directory service answering for the same name
//! must not make the node believe its own user exists.

use std::collections::BTreeSet;
use std::io;
use std::path::PathBuf;

use crate::error::ProviderError;
use crate::provider::Provider;

/// One line of `/etc/passwd`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PasswdEntry {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    /// The comment field, verbatim.
    pub gecos: String,
    pub home: PathBuf,
    pub shell: String,
}

/// One line of `/etc/group`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupEntry {
    pub name: String,
    pub gid: u32,
    pub members: Vec<String>,
}

/// One line of `/etc/shadow`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShadowEntry {
    pub name: String,
    /// The password field: a crypt hash, possibly prefixed by `!` (locked), or `!`/`*` alone.
    pub hash: String,
    /// Days since 1970-01-01 of the last password change (field 3).
    pub last_change: Option<i64>,
    /// Days since 1970-01-01 on which the account expires (field 8); `None` when empty.
    pub expire: Option<i64>,
}

impl ShadowEntry {
    /// Whether password login is locked (`usermod --lock`, or no password ever set).
    pub fn is_locked(&self) -> bool {
        self.hash.starts_with('!')
    }

    /// Whether the account has an expiry date at all (suspension sets it to 1).
    pub fn has_expiry(&self) -> bool {
        self.expire.is_some()
    }
}

/// One line of a passwd file (`name:x:uid:gid:gecos:home:shell`), or `None` if it is not
/// one.
pub fn parse_passwd_line(line: &str) -> Option<PasswdEntry> {
    let f: Vec<&str> = line.split(':').collect();
    if f.len() != 7 {
        return None;
    }
    Some(PasswdEntry {
        name: f[0].to_owned(),
        uid: f[2].parse().ok()?,
        gid: f[3].parse().ok()?,
        gecos: f[4].to_owned(),
        home: PathBuf::from(f[5]),
        shell: f[6].to_owned(),
    })
}

pub(crate) fn parse_group_line(line: &str) -> Option<GroupEntry> {
    let f: Vec<&str> = line.split(':').collect();
    if f.len() != 4 {
        return None;
    }
    Some(GroupEntry {
        name: f[0].to_owned(),
        gid: f[2].parse().ok()?,
        members: f[3]
            .split(',')
            .filter(|m| !m.is_empty())
            .map(str::to_owned)
            .collect(),
    })
}

pub(crate) fn parse_shadow_line(line: &str) -> Option<ShadowEntry> {
    let f: Vec<&str> = line.split(':').collect();
    if f.len() != 9 {
        return None;
    }
    let day = |s: &str| if s.is_empty() { None } else { s.parse().ok() };
    Some(ShadowEntry {
        name: f[0].to_owned(),
        hash: f[1].to_owned(),
        last_change: day(f[2]),
        expire: day(f[7]),
    })
}

impl Provider {
    /// The `/etc/passwd` entry named `name`, if any.
    pub fn lookup_user(&self, name: &str) -> Result<Option<PasswdEntry>, ProviderError> {
        self.find_in("/etc/passwd", name, parse_passwd_line)
    }

    /// Every well-formed `/etc/passwd` entry, in file order.
    pub fn passwd_entries(&self) -> Result<Vec<PasswdEntry>, ProviderError> {
        let path = self.sysconf("/etc/passwd");
        match std::fs::read(&path) {
            Ok(bytes) => Ok(String::from_utf8_lossy(&bytes)
                .lines()
                .filter_map(parse_passwd_line)
                .collect()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(ProviderError::io("read", path, e)),
        }
    }

    /// The `/etc/group` entry named `name`, if any.
    pub fn lookup_group(&self, name: &str) -> Result<Option<GroupEntry>, ProviderError> {
        self.find_in("/etc/group", name, parse_group_line)
    }

    /// The gids of the groups in `/etc/group` whose member list names `user` (its
    /// supplementary groups), sorted.
    pub fn supplementary_groups(&self, user: &str) -> Result<Vec<u32>, ProviderError> {
        let path = self.sysconf("/etc/group");
        let text = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(ProviderError::io("read", path, e)),
        };
        let mut gids: Vec<u32> = String::from_utf8_lossy(&text)
            .lines()
            .filter_map(parse_group_line)
            .filter(|g| g.members.iter().any(|m| m == user))
            .map(|g| g.gid)
            .collect();
        gids.sort_unstable();
        gids.dedup();
        Ok(gids)
    }

    /// What the platform's useradd writes in a shadow entry for a user given no password:
    /// `!` on Debian, `!!` on Red Hat's shadow-utils (CloudLinux).
    pub fn no_password_hash(&self) -> &'static str {
        match self.platform() {
            crate::Platform::Debian => "!",
            crate::Platform::CloudLinux => "!!",
        }
    }

    /// The `/etc/shadow` entry named `name`, if any: for suspension checks and tests.
    pub fn shadow_entry(&self, name: &str) -> Result<Option<ShadowEntry>, ProviderError> {
        self.find_in("/etc/shadow", name, parse_shadow_line)
    }

    fn find_in<T>(
        &self,
        file: &str,
        name: &str,
        parse: fn(&str) -> Option<T>,
    ) -> Result<Option<T>, ProviderError> {
        let path = self.sysconf(file);
        let text = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(ProviderError::io("read", path, e)),
        };
        let text = String::from_utf8_lossy(&text);
        // Malformed lines are skipped, not fatal: one hand-edited line must not hide every
        // other account from the node.
        Ok(text
            .lines()
            .filter(|line| line.split(':').next() == Some(name))
            .find_map(parse))
    }
}

/// The UID range of login accounts when `/etc/login.defs` does not say (shadow-utils'
/// defaults).
pub const DEFAULT_UID_RANGE: (u32, u32) = (1000, 60000);

/// `UID_MIN` and `UID_MAX` from the text of a `login.defs`, each falling back to shadow-utils'
/// default when absent or unparseable; a range that makes no sense (min 0, min above max) is
/// the default range, never a range that would admit root.
pub fn parse_uid_range(text: &str) -> (u32, u32) {
    parse_id_range(text, "UID")
}

/// `GID_MIN` and `GID_MAX`, under the same rules as [`parse_uid_range`].
pub fn parse_gid_range(text: &str) -> (u32, u32) {
    parse_id_range(text, "GID")
}

fn parse_id_range(text: &str, kind: &str) -> (u32, u32) {
    let value = |key: &str| {
        text.lines()
            .rev()
            .map(str::trim)
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut words = l.split_whitespace();
                (words.next() == Some(key))
                    .then(|| words.next())
                    .flatten()?
                    .parse::<u32>()
                    .ok()
            })
            .next()
    };
    let min = value(&format!("{kind}_MIN")).unwrap_or(DEFAULT_UID_RANGE.0);
    let max = value(&format!("{kind}_MAX")).unwrap_or(DEFAULT_UID_RANGE.1);
    if min == 0 || min > max {
        DEFAULT_UID_RANGE
    } else {
        (min, max)
    }
}

/// Every uid in passwd and every gid in group: ids a new tenant is never given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SystemIds {
    pub uids: BTreeSet<u32>,
    pub gids: BTreeSet<u32>,
}

/// The account databases and, for each, the fields that hold names: the entry's own, and the
/// member lists (group: members; gshadow: administrators, members).
const NAME_FIELDS: [(&str, &[(usize, &str)]); 4] = [
    ("/etc/passwd", &[(0, "an entry")]),
    ("/etc/shadow", &[(0, "an entry")]),
    ("/etc/group", &[(0, "an entry"), (3, "a member of a group")]),
    (
        "/etc/gshadow",
        &[
            (0, "an entry"),
            (2, "an administrator of a group"),
            (3, "a member of a group"),
        ],
    ),
];

impl Provider {
    /// The UID range of login accounts, from the system's `login.defs` (through `sysconf`).
    pub fn login_uid_range(&self) -> Result<(u32, u32), ProviderError> {
        Ok(parse_uid_range(&self.login_defs()?))
    }

    /// The GID range of login accounts' groups, from the system's `login.defs`.
    pub fn login_gid_range(&self) -> Result<(u32, u32), ProviderError> {
        Ok(parse_gid_range(&self.login_defs()?))
    }

    fn login_defs(&self) -> Result<String, ProviderError> {
        let path = self.sysconf(self.sudo_layout().login_defs);
        match std::fs::read(&path) {
            Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(String::new()),
            Err(e) => Err(ProviderError::io("read", path, e)),
        }
    }

    /// Where the system's passwd, shadow, group or gshadow (through `sysconf`) hold `name`:
    /// as an entry, a group's member or a gshadow administrator (`"a member of a group in
    /// /etc/group"`); `None` if nowhere. A malformed line still counts by its fields, since a
    /// name is taken however its line is damaged. What a new tenant's name is checked against
    /// (ARCHITECTURE.md invariant 15).
    pub fn system_name_use(&self, name: &str) -> Result<Option<String>, ProviderError> {
        if name.is_empty() {
            return Ok(None);
        }
        for (file, fields) in NAME_FIELDS {
            let text = self.read_database(file)?;
            for line in text.lines() {
                let parts: Vec<&str> = line.split(':').collect();
                for &(field, role) in fields {
                    let hit = match parts.get(field) {
                        Some(value) if field == 0 => *value == name,
                        Some(list) => list.split(',').any(|m| m == name),
                        None => false,
                    };
                    if hit {
                        return Ok(Some(format!("{role} in {file}")));
                    }
                }
            }
        }
        Ok(None)
    }

    /// Every uid in passwd and gid in group (through `sysconf`).
    pub fn system_ids(&self) -> Result<SystemIds, ProviderError> {
        let ids = |text: String| -> BTreeSet<u32> {
            text.lines()
                .filter_map(|l| l.split(':').nth(2)?.parse().ok())
                .collect()
        };
        Ok(SystemIds {
            uids: ids(self.read_database("/etc/passwd")?),
            gids: ids(self.read_database("/etc/group")?),
        })
    }

    /// An account database's text; empty when it does not exist.
    fn read_database(&self, file: &str) -> Result<String, ProviderError> {
        let path = self.sysconf(file);
        match std::fs::read(&path) {
            Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(String::new()),
            Err(e) => Err(ProviderError::io("read", path, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uid_range_comes_from_login_defs_with_sane_defaults() {
        assert_eq!(parse_uid_range(""), DEFAULT_UID_RANGE);
        assert_eq!(
            parse_uid_range("# UID_MIN 5\nUID_MIN\t\t 2000\nUID_MAX 3000\n"),
            (2000, 3000)
        );
        assert_eq!(parse_uid_range("UID_MIN 0\n"), DEFAULT_UID_RANGE);
        assert_eq!(parse_uid_range("UID_MIN 70000\n"), DEFAULT_UID_RANGE);
        assert_eq!(
            parse_uid_range("UID_MIN lots\nUID_MAX 9000\n"),
            (1000, 9000)
        );
        assert_eq!(
            parse_gid_range("UID_MIN 2000\nGID_MIN 3000\nGID_MAX 4000\n"),
            (3000, 4000)
        );
        assert_eq!(parse_gid_range("UID_MIN 2000\n"), DEFAULT_UID_RANGE);
    }

    #[test]
    fn parses_the_three_databases() {
        let p = parse_passwd_line("acme:x:1000:1001:layerone-ab:/home/acme:/bin/bash").unwrap();
        assert_eq!((p.uid, p.gid), (1000, 1001));
        assert_eq!(p.home, PathBuf::from("/home/acme"));
        assert_eq!(p.gecos, "layerone-ab");
        let g = parse_group_line("www:x:33:a,b").unwrap();
        assert_eq!(g.members, ["a", "b"]);
        assert!(parse_group_line("acme:x:1000:").unwrap().members.is_empty());
        let s = parse_shadow_line("acme:!$6$x:20000:0:99999:7::1:").unwrap();
        assert!(s.is_locked());
        assert_eq!(s.expire, Some(1));
        assert_eq!(s.last_change, Some(20000));
        let s = parse_shadow_line("acme:$6$x:20000:0:99999:7:::").unwrap();
        assert!(!s.is_locked());
        assert!(!s.has_expiry());
        assert!(parse_passwd_line("broken:x:1").is_none());
    }
}
