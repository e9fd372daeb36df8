//! `selectorctl` (CloudLinux PHP Selector): which alt-php extensions a version offers, and
//! which a user's PHP loads. CloudLinux only; on Debian the program is absent and every call
//! answers `unsupported_on_platform` before anything starts.
//!
//! Command forms (CloudLinux documentation, "PHP Selector", `selectorctl`):
//! - list: `selectorctl --interpreter=php --version=8.2 --list-extensions`, one extension a
//!   line prefixed `+ ` (enabled by default), `- ` (installed, disabled) or `~ ` (built in);
//! - per user: `selectorctl --interpreter=php --version=8.2 --user=USER
//!   --replace-user-extensions=intl,opcache`, which makes exactly those the user's selected
//!   extensions of that version (what the user's command-line PHP, hence their cron jobs,
//!   loads inside CageFS).

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::program::{PhpVersion, Program};
use crate::provider::Provider;

/// How the selector lists one extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectorState {
    /// `+`: loaded unless a user deselects it.
    Enabled,
    /// `-`: installed, loaded only for users who select it.
    Disabled,
    /// `~`: compiled in.
    BuiltIn,
}

impl Provider {
    /// The extensions alt-php `version` offers, as the selector lists them.
    pub fn selector_extensions(
        &self,
        version: PhpVersion,
    ) -> Result<Vec<(String, SelectorState)>, ProviderError> {
        let mut argv = Argv::new();
        argv.arg("--interpreter=php")
            .arg(format!("--version={}", version.as_str()))
            .arg("--list-extensions");
        let out = self.execute(
            Program::Selectorctl,
            &argv,
            None,
            Program::Selectorctl.default_timeout(),
        )?;
        Ok(parse_extension_list(&String::from_utf8_lossy(&out.stdout)))
    }

    /// Makes `extensions` exactly `user`'s selected extensions of `version`. `user` and the
    /// names must be validated by the caller (a tenant's username, names from a closed list).
    pub fn selector_replace_user_extensions(
        &self,
        user: &str,
        version: PhpVersion,
        extensions: &[String],
    ) -> Result<(), ProviderError> {
        let mut argv = Argv::new();
        argv.arg("--interpreter=php")
            .arg(format!("--version={}", version.as_str()))
            .arg(format!("--user={user}"))
            .arg(format!(
                "--replace-user-extensions={}",
                extensions.join(",")
            ));
        self.execute(
            Program::Selectorctl,
            &argv,
            None,
            Program::Selectorctl.default_timeout(),
        )?;
        Ok(())
    }
}

/// Parses `--list-extensions` output; lines of another shape are ignored.
pub fn parse_extension_list(text: &str) -> Vec<(String, SelectorState)> {
    text.lines()
        .filter_map(|line| {
            let (mark, name) = line.trim().split_once(' ')?;
            let state = match mark {
                "+" => SelectorState::Enabled,
                "-" => SelectorState::Disabled,
                "~" => SelectorState::BuiltIn,
                _ => return None,
            };
            Some((name.trim().to_ascii_lowercase(), state))
        })
        .collect()
}
