//! The `mail_queue` family's declarations (node scope): what Postfix's queue holds, and a retry
//! of the mail it has deferred. A hosting operator reads the queue first when a tenant's site
//! starts sending spam or a remote server stops accepting mail.
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::mail_queue`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::declare::{family, operation};
use crate::resource::NodeResource;

family! { pub struct MailQueue { name: "mail_queue", module: Mail } }

pub type ObserveMailQueueRequest = NodeResource;
pub type FlushMailQueueRequest = NodeResource;

/// How many messages each of Postfix's queues holds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueueCounts {
    pub maildrop: u64,
    pub incoming: u64,
    pub active: u64,
    pub deferred: u64,
    pub hold: u64,
}

/// One sender domain and how many of the queued messages it sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SenderDomain {
    /// The domain of the envelope sender, lower-cased; `<>` for bounces.
    pub domain: String,
    pub messages: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailQueueResult {
    /// Every message in the queue, whatever its queue.
    pub messages: u64,
    /// Their sizes added up, in bytes.
    pub bytes: u64,
    pub by_queue: QueueCounts,
    /// When the oldest message entered the queue, in Unix seconds; `null` when it is empty.
    pub oldest_arrival: Option<u64>,
    /// The ten sender domains with the most messages queued, most first (ties by name).
    pub top_sender_domains: Vec<SenderDomain>,
    /// Lines of Postfix's listing the node could not read: when not 0, the counts are short
    /// by at least this many messages.
    pub unreadable_entries: u32,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlushMailQueueResult {
    /// How many deferred messages Postfix was asked to try again.
    pub deferred_retried: u64,
}

operation! {
    pub struct ObserveMailQueue {
        name: "observe_mail_queue",
        kind: Observe,
        scope: Node,
        family: MailQueue,
        summary: "Report how many messages Postfix's queue holds, per queue and per sender domain",
        request: ObserveMailQueueRequest,
        result: MailQueueResult,
        example: NodeResource::example(0xa7),
    }
}

operation! {
    pub struct FlushMailQueue {
        name: "flush_mail_queue",
        kind: Action,
        scope: Node,
        family: MailQueue,
        summary: "Ask Postfix to try every deferred message again now",
        request: FlushMailQueueRequest,
        result: FlushMailQueueResult,
        example: NodeResource::example(0xa7),
    }
}
