//! Who the worker becomes: the tenant's uid, gid, supplementary groups and home, passed as
//! arguments the provider builds from the system's passwd and group files.
//!
//! The same type writes the arguments (root's side, [`Identity::to_args`]) and reads them
//! (the worker, [`Identity::from_args`]), so the two cannot disagree. Nothing here comes from
//! a request: a request names an account, root looks the account up. The worker refuses uid
//! or gid 0 anywhere in the identity, so a bug upstream cannot make it run as root.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use crate::protocol::{ErrorCode, MAX_GROUPS, MAX_PATH_BYTES, TenantError};

/// The tenant a worker runs as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub uid: u32,
    /// The primary group.
    pub gid: u32,
    /// Supplementary groups (the groups whose member list names the user), sorted, without
    /// duplicates; may include the primary group.
    pub groups: Vec<u32>,
    /// The home as the worker sees it: absolute, no `.` or `..` (mapped under the sysroot in
    /// tests and the dev node).
    pub home: PathBuf,
}

impl Identity {
    /// Builds and checks an identity.
    pub fn new(
        uid: u32,
        gid: u32,
        mut groups: Vec<u32>,
        home: PathBuf,
    ) -> Result<Identity, TenantError> {
        groups.sort_unstable();
        groups.dedup();
        let identity = Identity {
            uid,
            gid,
            groups,
            home,
        };
        identity.check()?;
        Ok(identity)
    }

    fn check(&self) -> Result<(), TenantError> {
        let bad = |why: String| TenantError::new(ErrorCode::IdentityInvalid, why);
        if self.uid == 0 || self.gid == 0 || self.groups.contains(&0) {
            return Err(bad("the worker never runs as uid 0 or with group 0".into()));
        }
        if self.groups.len() > MAX_GROUPS {
            return Err(bad(format!("more than {MAX_GROUPS} supplementary groups")));
        }
        let home = self.home.as_os_str();
        if home.len() > MAX_PATH_BYTES * 4 || !self.home.is_absolute() {
            return Err(bad("the home must be an absolute path".into()));
        }
        if self
            .home
            .components()
            .any(|c| !matches!(c, Component::RootDir | Component::Normal(_)))
            || self.home == Path::new("/")
        {
            return Err(bad("the home must not be / or contain '.' or '..'".into()));
        }
        Ok(())
    }

    /// The worker's arguments: `--uid U --gid G --groups A,B --home PATH`.
    pub fn to_args(&self) -> Vec<OsString> {
        let groups: Vec<String> = self.groups.iter().map(u32::to_string).collect();
        vec![
            "--uid".into(),
            self.uid.to_string().into(),
            "--gid".into(),
            self.gid.to_string().into(),
            "--groups".into(),
            groups.join(",").into(),
            "--home".into(),
            self.home.clone().into_os_string(),
        ]
    }

    /// Parses exactly the arguments [`Identity::to_args`] writes, in that order.
    pub fn from_args(args: impl IntoIterator<Item = OsString>) -> Result<Identity, TenantError> {
        let bad = |why: &str| TenantError::new(ErrorCode::IdentityInvalid, why);
        let args: Vec<OsString> = args.into_iter().take(9).collect();
        let [k_uid, uid, k_gid, gid, k_groups, groups, k_home, home] = args.as_slice() else {
            return Err(bad(
                "usage: layerone-tenant --uid U --gid G --groups A,B --home PATH",
            ));
        };
        for (key, want) in [
            (k_uid, "--uid"),
            (k_gid, "--gid"),
            (k_groups, "--groups"),
            (k_home, "--home"),
        ] {
            if key != want {
                return Err(bad(
                    "arguments must be --uid --gid --groups --home, in order",
                ));
            }
        }
        let number = |v: &OsString, what: &str| -> Result<u32, TenantError> {
            v.to_str()
                .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| bad(&format!("{what}: not a number")))
        };
        let uid = number(uid, "--uid")?;
        let gid = number(gid, "--gid")?;
        let groups_text = groups.to_str().ok_or_else(|| bad("--groups: not UTF-8"))?;
        let groups = if groups_text.is_empty() {
            Vec::new()
        } else {
            groups_text
                .split(',')
                .take(MAX_GROUPS + 1)
                .map(|g| number(&OsString::from(g), "--groups"))
                .collect::<Result<Vec<u32>, _>>()?
        };
        Identity::new(uid, gid, groups, PathBuf::from(home))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn round_trips_through_arguments() {
        let id = Identity::new(1001, 1001, vec![33, 1001, 33], "/home/acme".into()).unwrap();
        assert_eq!(id.groups, vec![33, 1001]);
        assert_eq!(Identity::from_args(id.to_args()).unwrap(), id);
        let none = Identity::new(1001, 1001, vec![], "/home/acme".into()).unwrap();
        assert_eq!(Identity::from_args(none.to_args()).unwrap(), none);
    }

    #[test]
    fn root_and_malformed_identities_are_refused() {
        for bad in [
            args(&[
                "--uid", "0", "--gid", "1", "--groups", "", "--home", "/home/a",
            ]),
            args(&[
                "--uid", "1", "--gid", "0", "--groups", "", "--home", "/home/a",
            ]),
            args(&[
                "--uid", "1", "--gid", "1", "--groups", "5,0", "--home", "/home/a",
            ]),
            args(&[
                "--uid", "-1", "--gid", "1", "--groups", "", "--home", "/home/a",
            ]),
            args(&[
                "--uid", "1", "--gid", "1", "--groups", "", "--home", "home/a",
            ]),
            args(&[
                "--uid",
                "1",
                "--gid",
                "1",
                "--groups",
                "",
                "--home",
                "/home/../etc",
            ]),
            args(&["--uid", "1", "--gid", "1", "--groups", "", "--home", "/"]),
            args(&[
                "--gid", "1", "--uid", "1", "--groups", "", "--home", "/home/a",
            ]),
            args(&["--uid", "1", "--gid", "1", "--groups", "", "--home"]),
            args(&[
                "--uid", "1", "--gid", "1", "--groups", "", "--home", "/h", "--extra",
            ]),
            args(&[
                "--uid", "1 ", "--gid", "1", "--groups", "", "--home", "/home/a",
            ]),
            args(&[
                "--uid",
                "99999999999",
                "--gid",
                "1",
                "--groups",
                "",
                "--home",
                "/home/a",
            ]),
        ] {
            let err = Identity::from_args(bad.clone()).unwrap_err();
            assert_eq!(err.code, ErrorCode::IdentityInvalid, "{bad:?}");
        }
        let many: Vec<String> = (1..=MAX_GROUPS as u32 + 1).map(|g| g.to_string()).collect();
        let err = Identity::from_args(args(&[
            "--uid",
            "1",
            "--gid",
            "1",
            "--groups",
            &many.join(","),
            "--home",
            "/home/a",
        ]))
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::IdentityInvalid);
    }
}
