//! The node administrator scope's declarations: the sudo allowlist of the platform's
//! administrators and the reading of sudo's log. Both families are node-scope: their requests
//! use the envelope `{request_id, action, node_id, resource}` and their resources live under
//! the reserved owner `node:`.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::sudo`.

use registry::types::{Generation, Hex32, Presence, SudoEventLimit, SudoUsers};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::declare::{family, impl_resource, operation};
use crate::example;

family! {
    pub struct SudoAllowlist {
        name: "sudo_allowlist",
        module: Core,
        drift: {
            /// The sudo allowlist is recorded as installed and its drop-in is gone.
            SUDO_DROPIN_MISSING = "sudo_dropin_missing",
            /// The sudo drop-in is not what state.db derives, or is there while the allowlist is recorded as removed.
            SUDO_DROPIN_DIFFERS = "sudo_dropin_differs",
        },
    }
}

family! { pub struct SudoEvents { name: "sudo_events", module: Core } }

// ---------------------------------------------------------------------------------------
// The allowlist.

/// Install the node's sudo allowlist.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetSudoAllowlistRequest {
    /// The allowlist's id; a node has one, and every later request names the same id.
    pub id: Hex32,
    /// Greater than the generation of the allowlist installed now, or the request is refused.
    pub generation: Generation,
    /// The administrators allowed to use sudo: local users in the platform's admin group
    /// with a UID in the login range. Empty: no member of the admin group may use sudo.
    pub users: SudoUsers,
}

/// Remove the node's sudo allowlist (its drop-in).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveSudoAllowlistRequest {
    pub id: Hex32,
    /// Greater than the generation installed now, or the request is refused.
    pub generation: Generation,
}

impl_resource!(
    owner = node: SetSudoAllowlistRequest,
    RemoveSudoAllowlistRequest,
    ReadSudoEventsRequest,
);

/// The allowlist as the node now has it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SudoAllowlistResult {
    pub state: Presence,
    /// The generation now in effect.
    pub generation: u64,
    /// The users the installed drop-in allows (empty when absent).
    pub users: Vec<String>,
    /// The admin group the drop-in restricts (`sudo` or `wheel`).
    pub admin_group: String,
}

/// The example allowlist's id byte: a node has one allowlist, and every request names it.
const ALLOWLIST: u8 = 0xc3;

operation! {
    pub struct SetSudoAllowlist {
        name: "set_sudo_allowlist",
        kind: Declare,
        scope: Node,
        family: SudoAllowlist,
        summary: "Allow only the listed administrators to use sudo (checked with visudo, monotonic generation)",
        request: SetSudoAllowlistRequest,
        result: SudoAllowlistResult,
        generation: generation,
        example: SetSudoAllowlistRequest {
            id: example::id(ALLOWLIST),
            generation: example::number(1),
            users: SudoUsers::try_from(vec![example::parse("alice")])
                .expect("an example is valid (Registry::check)"),
        },
    }
}

operation! {
    pub struct RemoveSudoAllowlist {
        name: "remove_sudo_allowlist",
        kind: Remove,
        scope: Node,
        family: SudoAllowlist,
        summary: "Remove the node's sudo allowlist drop-in (sudo falls back to the main sudoers file)",
        request: RemoveSudoAllowlistRequest,
        result: SudoAllowlistResult,
        generation: generation,
        example: RemoveSudoAllowlistRequest {
            id: example::id(ALLOWLIST),
            generation: example::number(2),
        },
    }
}

// ---------------------------------------------------------------------------------------
// Events.

/// Where a page of sudo events starts: a byte offset in the log file with this identity.
///
/// Deserialized from a JSON object only: serde's derive would also build it from an array of
/// its fields, which the schema does not allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SudoLogCursor {
    pub device: u64,
    pub inode: u64,
    pub offset: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CursorFields {
    device: u64,
    inode: u64,
    offset: u64,
}

impl<'de> Deserialize<'de> for SudoLogCursor {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ObjectOnly;
        impl<'de> serde::de::Visitor<'de> for ObjectOnly {
            type Value = SudoLogCursor;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object {device, inode, offset}")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<SudoLogCursor, A::Error> {
                let f =
                    CursorFields::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(SudoLogCursor {
                    device: f.device,
                    inode: f.inode,
                    offset: f.offset,
                })
            }
        }
        d.deserialize_map(ObjectOnly)
    }
}

/// Read a page of sudo's own log.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadSudoEventsRequest {
    pub id: Hex32,
    /// The `next_cursor` of the previous page; absent to start at the beginning of the log.
    #[serde(default)]
    pub cursor: Option<SudoLogCursor>,
    /// At most this many entries (at most 200; default 100).
    #[serde(default = "default_limit")]
    pub limit: SudoEventLimit,
}

fn default_limit() -> SudoEventLimit {
    SudoEventLimit::try_from(100).expect("100 is within bounds")
}

/// One entry of sudo's log. Every string has its control characters removed and is cut to a
/// bounded length.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SudoEntry {
    /// A sudo event.
    Event {
        /// When, as sudo wrote it (the node's local time): `Nov 29 08:44:57 2026`.
        time: String,
        /// Who ran sudo.
        user: String,
        /// What sudo said besides running the command (`3 incorrect password attempts`,
        /// `user NOT in sudoers`); absent for a command that ran.
        message: Option<String>,
        tty: Option<String>,
        pwd: Option<String>,
        /// The user the command ran as.
        runas_user: Option<String>,
        runas_group: Option<String>,
        command: String,
    },
    /// A line that is not a sudo event the node understands, returned rather than dropped.
    Unparseable {
        /// The line, sanitized and cut.
        line: String,
        reason: String,
    },
}

/// A page of sudo events.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SudoEventsResult {
    pub entries: Vec<SudoEntry>,
    /// Pass it as `cursor` to read on; absent when the log does not exist yet.
    pub next_cursor: Option<SudoLogCursor>,
    /// True when the cursor named a file that is no longer the log (rotated) or an offset past
    /// its end (truncated): this page starts at the beginning of the current log.
    pub restarted: bool,
}

operation! {
    pub struct ReadSudoEvents {
        name: "read_sudo_events",
        kind: Observe,
        scope: Node,
        family: SudoEvents,
        summary: "A page of sudo's own log, parsed and sanitized, with a cursor",
        request: ReadSudoEventsRequest,
        result: SudoEventsResult,
        example: ReadSudoEventsRequest {
            id: example::id(0xd4),
            cursor: Some(SudoLogCursor {
                device: 2049,
                inode: 131_074,
                offset: 0,
            }),
            limit: default_limit(),
        },
    }
}
