//! `pure-pw`: pure-ftpd's virtual-user tool. The node derives the passwd file itself (from
//! state.db, whole, on every change) and uses `pure-pw` for what only it does right: building
//! the PureDB that pure-ftpd reads, and showing one user as pure-ftpd parses them.
//!
//! - `pure-pw mkdb PDB -f PASSWD`: compiles PASSWD into PDB (written to a temporary file and
//!   renamed by pure-pw itself). It skips a line it cannot parse with a warning and still
//!   exits 0, so the node validates every field itself and reads each user back.
//! - `pure-pw show LOGIN -f PASSWD`: prints `Login`, `Password` (the hash), `UID`, `GID`, `Directory`... as
//!   pure-ftpd parses the line; exit 16 when there is no such (valid) line.
//!
//! The passwd line is `LOGIN:HASH:UID:GID:GECOS:DIR/./` followed by the twelve optional
//! fields (bandwidth, ratios, quotas, IP lists, time restrictions); the node fills the upload
//! and download bandwidth (bytes per second) and the concurrent sessions from the account's
//! limits and leaves the others empty. `/./` at the end of the directory is pure-ftpd's
//! chroot marker: the user is jailed there.

use std::path::Path;

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::program::Program;
use crate::provider::Provider;

/// Where pure-ftpd keeps its virtual users (Debian's `pure-ftpd` package and EPEL's agree).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FtpLayout {
    pub passwd: &'static str,
    pub pdb: &'static str,
}

pub const FTP_LAYOUT: FtpLayout = FtpLayout {
    passwd: "/etc/pure-ftpd/pureftpd.passwd",
    pdb: "/etc/pure-ftpd/pureftpd.pdb",
};

/// One virtual user as `pure-pw show` prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FtpUserShown {
    pub login: String,
    /// The crypt hash pure-ftpd checks the password against.
    pub password: String,
    pub uid: u32,
    pub gid: u32,
    pub directory: String,
    /// Per-session download bandwidth in KiB/s; `None` unlimited.
    pub download_kib_per_sec: Option<u64>,
    /// Per-session upload bandwidth in KiB/s; `None` unlimited.
    pub upload_kib_per_sec: Option<u64>,
    /// Concurrent sessions; `None` unlimited.
    pub max_sessions: Option<u64>,
}

/// Parses `pure-pw show` output.
pub fn parse_show(text: &str) -> Option<FtpUserShown> {
    let field = |name: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == name).then(|| v.trim().to_owned())
        })
    };
    let number = |name: &str| field(name)?.split_whitespace().next()?.parse().ok();
    // `100 Kb (enabled)`, `0 Kb (unlimited)`; `3 (enabled)`, `0 (unlimited)`.
    let limit = |name: &str| -> Option<Option<u64>> {
        let value = field(name)?;
        let n: u64 = value.split_whitespace().next()?.parse().ok()?;
        Some((value.ends_with("(enabled)") && n > 0).then_some(n))
    };
    Some(FtpUserShown {
        login: field("Login")?,
        password: field("Password")?,
        uid: number("UID")?,
        gid: number("GID")?,
        directory: field("Directory")?,
        download_kib_per_sec: limit("Download bandwidth")?,
        upload_kib_per_sec: limit("Upload   bandwidth")?,
        max_sessions: limit("Max sim sessions")?,
    })
}

impl Provider {
    pub fn ftp_layout(&self) -> FtpLayout {
        FTP_LAYOUT
    }

    /// `pure-pw mkdb PDB -f PASSWD` (both mapped with `sysconf`).
    pub fn pure_pw_mkdb(&self, passwd: &Path, pdb: &Path) -> Result<(), ProviderError> {
        self.assert_mapped(passwd);
        self.assert_mapped(pdb);
        let mut argv = Argv::new();
        argv.arg("mkdb").arg(pdb).arg("-f").arg(passwd);
        self.execute(
            Program::PurePw,
            &argv,
            None,
            Program::PurePw.default_timeout(),
        )?;
        Ok(())
    }

    /// `pure-pw show LOGIN -f PASSWD`, parsed; `None` when pure-pw finds no such user.
    pub fn pure_pw_show(
        &self,
        login: &str,
        passwd: &Path,
    ) -> Result<Option<FtpUserShown>, ProviderError> {
        self.assert_mapped(passwd);
        let mut argv = Argv::new();
        argv.arg("show").arg(login).arg("-f").arg(passwd);
        match self.execute(
            Program::PurePw,
            &argv,
            None,
            Program::PurePw.default_timeout(),
        ) {
            Ok(out) => Ok(parse_show(&String::from_utf8_lossy(&out.stdout))),
            Err(ProviderError::Failed { status: 16, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }
}
