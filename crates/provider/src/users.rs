//! Reading the system user and group databases (`/etc/passwd`, `/etc/group`, `/etc/shadow`)
//! through the sysroot.
//!
//! Handlers use these to observe the state after a change (the uid assigned, whether an
//! account is locked) instead of echoing their request. Only the local files are read, never
//! NSS: the node manages local accounts, and a directory service answering for the same name
//! must not make the node believe its own user exists.

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

pub(crate) fn parse_passwd_line(line: &str) -> Option<PasswdEntry> {
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
    let min = value("UID_MIN").unwrap_or(DEFAULT_UID_RANGE.0);
    let max = value("UID_MAX").unwrap_or(DEFAULT_UID_RANGE.1);
    if min == 0 || min > max {
        DEFAULT_UID_RANGE
    } else {
        (min, max)
    }
}

impl Provider {
    /// The UID range of login accounts, from the system's `login.defs` (through `sysconf`).
    pub fn login_uid_range(&self) -> Result<(u32, u32), ProviderError> {
        let path = self.sysconf(self.sudo_layout().login_defs);
        match std::fs::read(&path) {
            Ok(bytes) => Ok(parse_uid_range(&String::from_utf8_lossy(&bytes))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(DEFAULT_UID_RANGE),
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
