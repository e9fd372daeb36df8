//! `postfix check`, `postfix reload`, `postmap -q`, `postqueue -j` and `postqueue -f`:
//! Postfix's configuration test, its reload, a lookup in one of the node's tables (used by
//! tests and diagnostics), the queue's listing and a retry of its deferred mail.
//!
//! With a sysroot (tests, dev node) every command gets `-c <sysroot>/etc/postfix`, so the
//! real Postfix reads the sysroot's `main.cf` and not `/etc/postfix`.

use std::path::Path;

use serde::Deserialize;

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
    /// The queue's user interface: its JSON listing (`postqueue -j`) and a flush
    /// (`postqueue -f`), nothing that deletes or holds mail.
    Postqueue,
}

impl PostfixTool {
    /// Every tool, in the order `Program::all` lists them.
    pub const ALL: &'static [PostfixTool] = &[
        PostfixTool::Postfix,
        PostfixTool::Postmap,
        PostfixTool::Postqueue,
    ];

    /// The stable name, used in the audit log, errors and serde.
    pub fn name(self) -> &'static str {
        match self {
            PostfixTool::Postfix => "postfix",
            PostfixTool::Postmap => "postmap",
            PostfixTool::Postqueue => "postqueue",
        }
    }

    /// Where the tool is on every platform.
    pub fn path(self) -> &'static str {
        match self {
            PostfixTool::Postfix => "/usr/sbin/postfix",
            PostfixTool::Postmap => "/usr/sbin/postmap",
            PostfixTool::Postqueue => "/usr/sbin/postqueue",
        }
    }
}

const POSTFIX: Program = Program::Postfix(PostfixTool::Postfix);
const POSTMAP: Program = Program::Postfix(PostfixTool::Postmap);
const POSTQUEUE: Program = Program::Postfix(PostfixTool::Postqueue);

/// One message of Postfix's queue, as `postqueue -j` lists it (one JSON object per line, Postfix
/// 3.1 and later). Only what the node reports is kept: never the recipients, which are the
/// tenants' correspondents; fields Postfix adds later are ignored.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct QueuedMessage {
    /// `maildrop`, `incoming`, `active`, `deferred` or `hold`.
    pub queue_name: String,
    pub queue_id: String,
    /// When the message entered the queue, in Unix seconds.
    pub arrival_time: u64,
    /// In bytes.
    pub message_size: u64,
    /// The envelope sender; empty for a bounce.
    pub sender: String,
}

/// What `postqueue -j` listed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueListing {
    pub messages: Vec<QueuedMessage>,
    /// Lines that were not one message as above: counted, so a listing the node could not
    /// read whole says so instead of looking smaller.
    pub unparsed_lines: u32,
}

/// Parses `postqueue -j`'s output.
pub fn parse_queue_listing(stdout: &[u8]) -> QueueListing {
    let mut listing = QueueListing::default();
    for line in stdout.split(|&b| b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice(line) {
            Ok(message) => listing.messages.push(message),
            Err(_) => listing.unparsed_lines += 1,
        }
    }
    listing
}

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

    /// `postqueue [-c DIR] -j`: every message in the queue. Postfix's `showq` service answers
    /// it, so it fails while Postfix is stopped.
    pub fn postqueue_list(&self) -> Result<QueueListing, ProviderError> {
        let mut argv = self.postfix_config_argv();
        argv.arg("-j");
        let out = self.execute(POSTQUEUE, &argv, None, POSTQUEUE.default_timeout())?;
        Ok(parse_queue_listing(&out.stdout))
    }

    /// `postqueue [-c DIR] -f`: asks Postfix to try every deferred message again now.
    pub fn postqueue_flush(&self) -> Result<(), ProviderError> {
        let mut argv = self.postfix_config_argv();
        argv.arg("-f");
        self.execute(POSTQUEUE, &argv, None, POSTQUEUE.default_timeout())?;
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_listing_keeps_each_message_and_counts_what_it_cannot_read() {
        // Two lines as Postfix 3.7 prints them (recipients and all), one that is not a message.
        let stdout = br#"{"queue_name": "deferred", "queue_id": "4Q9xZT1d2Kz9rxV", "arrival_time": 1733059200, "message_size": 1830, "forced_expire": false, "sender": "shop@example.com", "recipients": [{"address": "a@example.net", "delay_reason": "connect to mx.example.net[192.0.2.1]:25: Connection timed out"}]}
{"queue_name": "active", "queue_id": "4Q9xZV0Wb5z9rxW", "arrival_time": 1733059260, "message_size": 912, "forced_expire": false, "sender": "", "recipients": [{"address": "b@example.org"}]}
postqueue: warning: something

"#;
        let listing = parse_queue_listing(stdout);
        assert_eq!(listing.unparsed_lines, 1);
        assert_eq!(
            listing.messages,
            vec![
                QueuedMessage {
                    queue_name: "deferred".into(),
                    queue_id: "4Q9xZT1d2Kz9rxV".into(),
                    arrival_time: 1733059200,
                    message_size: 1830,
                    sender: "shop@example.com".into(),
                },
                QueuedMessage {
                    queue_name: "active".into(),
                    queue_id: "4Q9xZV0Wb5z9rxW".into(),
                    arrival_time: 1733059260,
                    message_size: 912,
                    sender: String::new(),
                },
            ]
        );
        assert_eq!(parse_queue_listing(b""), QueueListing::default());
    }
}
