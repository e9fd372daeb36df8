//! A tenant's cron jobs in its slice (`user-<uid>.slice`), under the limits
//! `set_account_limits` sets there. Debian's cron opens a PAM session for every job
//! (`/etc/pam.d/cron`), but its stack has no `pam_systemd`: the jobs ran in `cron.service`,
//! outside every tenant's slice. The installer adds [`PAM_SYSTEMD`] to that stack, so logind
//! registers each job's session and puts it in a session scope of its user's slice (as sshd's
//! stack already does for SSH sessions). `optional`: a logind that does not answer leaves the
//! job running where it did, never stops it. Every other line is kept; a node without the
//! file (another cron, CloudLinux's cronie with its LVE) is left alone.
//!
//! `--check` names the missing line.

use provider::Platform;

use crate::InstallError;
use crate::converge::{Change, Engine};

/// Debian's cron PAM stack.
pub const PAM_CRON: &str = "/etc/pam.d/cron";

/// The line the installer adds.
pub const PAM_SYSTEMD: &str = "session    optional   pam_systemd.so";

/// `current` with [`PAM_SYSTEMD`] appended, unless a session line of `pam_systemd.so` is
/// already there (commented lines do not count).
pub fn with_pam_systemd(current: &str) -> String {
    let has = current.lines().any(|l| {
        let words: Vec<&str> = l.split_whitespace().collect();
        words.first() == Some(&"session") && words.contains(&"pam_systemd.so")
    });
    if has {
        return current.to_owned();
    }
    let mut out = current.to_owned();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("# Added by `layerone install`: each job in its user's slice (logind).\n");
    out.push_str(PAM_SYSTEMD);
    out.push('\n');
    out
}

pub fn converge(e: &mut Engine) -> Result<(), InstallError> {
    if e.provider.platform() != Platform::Debian {
        return Ok(());
    }
    let Some(bytes) = e.read_regular(PAM_CRON)? else {
        return Ok(());
    };
    let path = e.map(PAM_CRON);
    let current = String::from_utf8(bytes).map_err(|_| InstallError::Refused {
        path: path.clone(),
        reason: "is not UTF-8; the installer only adds its pam_systemd line".into(),
    })?;
    let text = with_pam_systemd(&current);
    if text == current {
        return Ok(());
    }
    e.record(Change::AddLine {
        path: PAM_CRON.into(),
        line: PAM_SYSTEMD.into(),
    });
    if !e.check {
        e.provider
            .write_owned_atomic(&path, text.as_bytes(), 0o644, (0, 0))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEBIAN: &str = "@include common-auth\nsession    required     pam_loginuid.so\n\
                          @include common-session-noninteractive\nsession    required   pam_limits.so\n";

    #[test]
    fn the_line_is_added_once_and_every_other_line_kept() {
        let once = with_pam_systemd(DEBIAN);
        assert!(once.starts_with(DEBIAN), "{once}");
        assert!(once.ends_with(&format!("{PAM_SYSTEMD}\n")), "{once}");
        assert_eq!(with_pam_systemd(&once), once);
        // An administrator's own line counts; a commented one does not.
        let own = format!("{DEBIAN}session required pam_systemd.so\n");
        assert_eq!(with_pam_systemd(&own), own);
        let commented = format!("{DEBIAN}# session optional pam_systemd.so\n");
        assert!(with_pam_systemd(&commented).ends_with(&format!("{PAM_SYSTEMD}\n")));
        assert!(with_pam_systemd("session required pam_env.so").contains("pam_env.so\n#"));
    }
}
