//! `cagefsctl`: CloudLinux's CageFS control tool. The node turns one user's CageFS on or off
//! and reads which users have it.
//!
//! The command forms, as CloudLinux documents them ("CageFS / Command-line tools"):
//!
//! - `cagefsctl --enable USER` / `cagefsctl --disable USER`: puts the user into, or takes
//!   them out of, their CageFS (in either CageFS mode: "enable all" keeps a list of disabled
//!   users, "disable all" a list of enabled ones; the command updates whichever applies).
//! - `cagefsctl --list-enabled`: a count line (`N enabled user(s)`) then one user name per
//!   line.
//!
//! No CloudLinux host is available here: the Sim model (`sim/cloudlinux.rs`) parses exactly
//! these forms and keeps the list in the sysroot.

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::program::Program;
use crate::provider::Provider;

/// Parses `cagefsctl --list-enabled`: the user names after the count line.
pub fn parse_list_enabled(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.ends_with("user(s)") && !l.contains(char::is_whitespace))
        .map(str::to_owned)
        .collect()
}

impl Provider {
    /// `cagefsctl --enable USER` or `cagefsctl --disable USER`. `unsupported_on_platform` on
    /// Debian, before anything runs.
    pub fn cagefs_set(&self, user: &str, enabled: bool) -> Result<(), ProviderError> {
        let mut argv = Argv::new();
        argv.arg(if enabled { "--enable" } else { "--disable" })
            .arg(user);
        self.execute(
            Program::Cagefsctl,
            &argv,
            None,
            Program::Cagefsctl.default_timeout(),
        )?;
        Ok(())
    }

    /// `cagefsctl --list-enabled`, parsed.
    pub fn cagefs_enabled_users(&self) -> Result<Vec<String>, ProviderError> {
        let mut argv = Argv::new();
        argv.arg("--list-enabled");
        let out = self.execute(
            Program::Cagefsctl,
            &argv,
            None,
            Program::Cagefsctl.default_timeout(),
        )?;
        Ok(parse_list_enabled(&String::from_utf8_lossy(&out.stdout)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_enabled_skips_the_count_line() {
        assert_eq!(
            parse_list_enabled("2 enabled user(s)\nshop1\nshop2\n"),
            ["shop1", "shop2"]
        );
        assert!(parse_list_enabled("0 enabled user(s)\n").is_empty());
    }
}
