//! `visudo -c -f FILE`: the sudoers checker, and the one way the node installs a sudoers
//! drop-in.
//!
//! A broken sudoers file can lock every administrator out of sudo, so the drop-in follows the
//! same rule as a shared service's configuration (ARCHITECTURE.md invariant 8), with the check
//! before the move: the bytes go to a temporary file in the drop-in directory (mode 0440,
//! created `O_EXCL|O_NOFOLLOW`), `visudo -c -f TMP` checks it, and only a file that passed is
//! renamed over the drop-in. A failed check removes the temporary file and leaves the previous
//! drop-in exactly as it was. sudo ignores files in `sudoers.d` whose name contains a `.`, so
//! the temporary file (`.layerone.layerone-tmp`) is never read by sudo while it is unchecked.

use std::path::Path;

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::files::{sync_parent, temp_name, write_exclusive};
use crate::platform::Platform;
use crate::program::Program;
use crate::provider::Provider;

/// Where the platform keeps what the node administrator scope touches. All are system paths:
/// map them with [`Provider::sysconf`] before touching them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SudoLayout {
    /// The group whose members are the platform's administrators (`sudo` on Debian, `wheel`
    /// on CloudLinux).
    pub admin_group: &'static str,
    /// The drop-in directory sudo includes (`@includedir` / `#includedir`).
    pub dropin_dir: &'static str,
    /// The node's drop-in, inside `dropin_dir`. Its name has no `.`, which sudo requires.
    pub dropin: &'static str,
    /// The file the drop-in points sudo's own log at (`Defaults logfile=`), which
    /// `read_sudo_events` reads.
    pub logfile: &'static str,
    /// Where the UID range of login accounts is configured.
    pub login_defs: &'static str,
}

/// The mode sudo requires of a sudoers file.
pub const SUDOERS_MODE: u32 = 0o440;

impl SudoLayout {
    pub fn for_platform(platform: Platform) -> SudoLayout {
        let admin_group = match platform {
            Platform::Debian => "sudo",
            Platform::CloudLinux => "wheel",
        };
        SudoLayout {
            admin_group,
            dropin_dir: "/etc/sudoers.d",
            dropin: "/etc/sudoers.d/layerone",
            logfile: "/var/log/layerone/sudo.log",
            login_defs: "/etc/login.defs",
        }
    }
}

impl Provider {
    pub fn sudo_layout(&self) -> SudoLayout {
        SudoLayout::for_platform(self.platform)
    }

    /// `visudo -c -f PATH`: checks a sudoers file without installing it. `Err(Failed)` carries
    /// visudo's explanation (`FILE:LINE:COL: syntax error`).
    pub fn visudo_check(&self, path: &Path) -> Result<(), ProviderError> {
        let mut argv = Argv::new();
        argv.arg("-c").arg("-f").arg(path);
        self.execute(
            Program::Visudo,
            &argv,
            None,
            Program::Visudo.default_timeout(),
        )?;
        Ok(())
    }

    /// Installs `content` as the sudoers file `path` (already mapped with `sysconf`), mode
    /// 0440, only if `visudo -c` accepts it; otherwise the previous file is left untouched and
    /// the check's failure is returned.
    ///
    /// # Panics
    /// If `path` is not under the configured root: it was not mapped with `sysconf`.
    pub fn install_sudoers(&self, path: &Path, content: &[u8]) -> Result<(), ProviderError> {
        self.assert_mapped(path);
        let (Some(parent), Some(file_name)) = (path.parent(), path.file_name()) else {
            panic!("install_sudoers needs a file path, got {}", path.display());
        };
        let tmp = parent.join(temp_name(file_name));
        write_exclusive(&tmp, content, SUDOERS_MODE, None)?;
        let installed = self.visudo_check(&tmp).and_then(|()| {
            std::fs::rename(&tmp, path).map_err(|e| ProviderError::io("rename into", path, e))
        });
        if installed.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        installed?;
        sync_parent(path)
    }
}
