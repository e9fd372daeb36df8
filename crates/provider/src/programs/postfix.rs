//! `postfix check`, `postfix reload` and `postmap -q`: Postfix's configuration test, its
//! reload, and a lookup in one of the node's tables (used by tests and diagnostics).
//!
//! With a sysroot (tests, dev node) every command gets `-c <sysroot>/etc/postfix`, so the
//! real Postfix reads the sysroot's `main.cf` and not `/etc/postfix`.

use std::path::Path;

use crate::error::ProviderError;
use crate::executor::Argv;
use crate::program::Program;
use crate::provider::Provider;

/// Postfix's tools the node runs, as [`Program::Postfix`]: the same package installs each at
/// `/usr/sbin/<name>` on both platforms, and every one of them takes `-c DIR` for a sysroot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PostfixTool {
    /// `postfix check` and `postfix reload`.
    Postfix,
    /// The table tool; the node runs only its query mode (`postmap -q`).
    Postmap,
}

impl PostfixTool {
    /// Every tool, in the order `Program::all` lists them.
    pub const ALL: &'static [PostfixTool] = &[PostfixTool::Postfix, PostfixTool::Postmap];

    /// The stable name, used in the audit log, errors and serde.
    pub fn name(self) -> &'static str {
        match self {
            PostfixTool::Postfix => "postfix",
            PostfixTool::Postmap => "postmap",
        }
    }

    /// Where the tool is on every platform.
    pub fn path(self) -> &'static str {
        match self {
            PostfixTool::Postfix => "/usr/sbin/postfix",
            PostfixTool::Postmap => "/usr/sbin/postmap",
        }
    }
}

const POSTFIX: Program = Program::Postfix(PostfixTool::Postfix);
const POSTMAP: Program = Program::Postfix(PostfixTool::Postmap);

impl Provider {
    /// `postfix [-c DIR] check`: `main.cf` and `master.cf` parse, and the directories and
    /// files Postfix needs have sane owners and modes.
    pub fn postfix_check(&self) -> Result<(), ProviderError> {
        let mut argv = self.postfix_config_argv();
        argv.arg("check");
        self.execute(POSTFIX, &argv, None, POSTFIX.default_timeout())?;
        Ok(())
    }

    /// `postfix [-c DIR] reload`: running daemons finish their work and restart with the new
    /// configuration and tables.
    pub fn postfix_reload(&self) -> Result<(), ProviderError> {
        let mut argv = self.postfix_config_argv();
        argv.arg("reload");
        self.execute(POSTFIX, &argv, None, POSTFIX.default_timeout())?;
        Ok(())
    }

    /// `postmap [-c DIR] -q KEY texthash:TABLE`: what the table maps `key` to, or `None`.
    pub fn postmap_query(&self, table: &Path, key: &str) -> Result<Option<String>, ProviderError> {
        self.assert_mapped(table);
        let mut argv = self.postfix_config_argv();
        let mut spec = std::ffi::OsString::from("texthash:");
        spec.push(table);
        argv.arg("-q").arg(key).arg(spec);
        match self.execute(POSTMAP, &argv, None, POSTMAP.default_timeout()) {
            Ok(out) => Ok(Some(
                String::from_utf8_lossy(&out.stdout).trim_end().to_owned(),
            )),
            // Not found is exit 1 with nothing on stderr; a fatal error says why.
            Err(ProviderError::Failed {
                status: 1, stderr, ..
            }) if stderr.trim().is_empty() => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn postfix_config_argv(&self) -> Argv {
        let mut argv = Argv::new();
        if !self.root_is_slash() {
            argv.arg("-c")
                .arg(self.sysconf(self.mail_layout().postfix_dir));
        }
        argv
    }
}
