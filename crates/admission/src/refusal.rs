//! Why a request was not admitted, in no transport's words.
//!
//! The `code` is stable (a control plane branches on it), `message` is safe to show, `field`
//! names the offending field or is empty. The [`RefusalKind`] says what kind of answer it is,
//! which each door maps to its own: the API to a status (400, 413, 409, 429, 503), the fleet
//! daemon to terminating the message (never redelivered) or leaving it to be redelivered.
//! Details that help an operator (a SQLite error, a path) go to the log, never here.

use std::borrow::Cow;

use registry::{FieldError, FileSystem, OpError};
use store::ReadError;

/// What kind of refusal it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusalKind {
    /// The request itself is wrong (it does not validate, or names another node): the same
    /// bytes are refused again.
    Invalid,
    /// The body is larger than [`registry::envelope::MAX_BODY`].
    TooLarge,
    /// The request id was used with another body, or the node's assignment refuses the
    /// operation's module: refused as long as that state holds.
    Conflict,
    /// State.db or the inbox is briefly unavailable, or a file system is full: nothing was
    /// stored, and the same request may succeed after [`Refusal::retry_after`].
    Unavailable,
    /// The queue is at its cap ([`inbox::QueueCaps`]): the account's, the node-scope lane's
    /// or every account's together. Nothing was stored; the same request may succeed after
    /// [`Refusal::retry_after`], once the runner has done some of what waits.
    Backpressure,
}

/// The cap a [`RefusalKind::Backpressure`] refusal met, and how many requests wait under it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueFull {
    pub limit: u64,
    pub queued: u64,
}

/// A request not admitted: nothing of it was stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub kind: RefusalKind,
    pub code: Cow<'static, str>,
    pub field: String,
    pub message: String,
    /// When the same request may succeed later, how many seconds to wait first.
    pub retry_after: Option<u32>,
    /// For a [`RefusalKind::Backpressure`] refusal, the cap and how many wait under it.
    pub queue: Option<QueueFull>,
}

/// How long a client waits before it retries on a full disk: space comes back by an
/// operator's hand, not within a second.
const DISK_FULL_RETRY_SECS: u32 = 30;

/// How long a client waits before it retries on a full queue: long enough for the runner to
/// do some of what waits, short enough that a control plane's retry is soon served.
const QUEUE_FULL_RETRY_SECS: u32 = 5;

impl Refusal {
    /// Whether the same request may succeed later ([`RefusalKind::Unavailable`],
    /// [`RefusalKind::Backpressure`]): a broker message is then redelivered, not terminated.
    pub fn retryable(&self) -> bool {
        matches!(
            self.kind,
            RefusalKind::Unavailable | RefusalKind::Backpressure
        )
    }

    fn new(kind: RefusalKind, code: &'static str, field: &str, message: String) -> Refusal {
        Refusal {
            kind,
            code: Cow::Borrowed(code),
            field: field.to_owned(),
            message,
            retry_after: None,
            queue: None,
        }
    }

    fn unavailable(code: &'static str, message: String, retry_after_secs: u32) -> Refusal {
        Refusal {
            retry_after: Some(retry_after_secs),
            ..Refusal::new(RefusalKind::Unavailable, code, "", message)
        }
    }

    /// The body is larger than the registry's limit.
    pub fn too_large() -> Refusal {
        Refusal::new(
            RefusalKind::TooLarge,
            "body_too_large",
            "",
            format!(
                "the body is larger than {} bytes",
                registry::envelope::MAX_BODY
            ),
        )
    }

    /// The request id was used with another body.
    pub fn conflict() -> Refusal {
        Refusal::new(
            RefusalKind::Conflict,
            "request_id_conflict",
            "request_id",
            "the request id was used with another body".to_owned(),
        )
    }

    /// The node's fleet assignment refuses the operation's module (`module_not_assigned`,
    /// `module_unavailable`): what root would answer, said before the request is queued.
    pub fn module(e: OpError) -> Refusal {
        Refusal {
            kind: RefusalKind::Conflict,
            code: e.code,
            field: "operation".to_owned(),
            message: e.message,
            retry_after: None,
            queue: None,
        }
    }

    /// State.db is briefly unreadable.
    pub fn state_unavailable(retry_after_secs: u32) -> Refusal {
        Refusal::unavailable(
            "state_unavailable",
            "state is briefly unavailable".to_owned(),
            retry_after_secs,
        )
    }

    /// The inbox's writer did not take the request.
    pub fn inbox_unavailable() -> Refusal {
        Refusal::unavailable(
            "inbox_unavailable",
            "the inbox is unavailable".to_owned(),
            1,
        )
    }

    /// The file system holding `filesystem` is full: nothing was written.
    pub fn disk_full(filesystem: FileSystem) -> Refusal {
        Refusal::unavailable(
            "disk_full",
            format!("the node's {filesystem} file system is full; nothing was stored"),
            DISK_FULL_RETRY_SECS,
        )
    }
}

impl Refusal {
    /// The queue is at one of its caps: `limit` says which, `queued` requests wait under it.
    pub fn queue_full(limit: inbox::QueueLimit, cap: u64, queued: u64) -> Refusal {
        let message = match limit {
            inbox::QueueLimit::Account => format!(
                "the account has {queued} requests queued, at most {cap}; retry once some are done"
            ),
            inbox::QueueLimit::NodeScope => format!(
                "{queued} node-scope requests are queued, at most {cap}; retry once some are done"
            ),
            inbox::QueueLimit::Node => format!(
                "the node has {queued} requests queued, at most {cap}; retry once some are done"
            ),
        };
        Refusal {
            kind: RefusalKind::Backpressure,
            retry_after: Some(QUEUE_FULL_RETRY_SECS),
            queue: Some(QueueFull { limit: cap, queued }),
            ..Refusal::new(RefusalKind::Backpressure, "queue_full", "", message)
        }
    }
}

impl From<FieldError> for Refusal {
    fn from(e: FieldError) -> Self {
        // The registry re-checks the size it was given.
        if e.code == "body_too_large" {
            Refusal::too_large()
        } else {
            Refusal {
                kind: RefusalKind::Invalid,
                code: e.code,
                field: e.field,
                message: e.message,
                retry_after: None,
                queue: None,
            }
        }
    }
}

impl From<ReadError> for Refusal {
    fn from(e: ReadError) -> Self {
        match e {
            ReadError::Unavailable { retry_after_secs } => {
                Refusal::state_unavailable(retry_after_secs)
            }
            ReadError::Failed(e) => {
                // Not the client's doing, and not something it can fix: log it whole, answer
                // the same clean refusal as a busy database.
                tracing::error!(error = ?e, "reading state.db failed");
                Refusal::state_unavailable(1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each refusal says its kind, and only what may succeed later is retryable, with the
    /// wait it names: a door maps the kind, never a status or a message.
    #[test]
    fn each_refusal_has_its_kind_and_only_the_unavailable_are_retryable() {
        let invalid = Refusal::from(FieldError {
            code: "missing_field".into(),
            field: "resource.name".into(),
            message: "missing".into(),
        });
        assert_eq!(
            (invalid.kind, invalid.code.as_ref(), invalid.field.as_str()),
            (RefusalKind::Invalid, "missing_field", "resource.name")
        );
        let too_large = Refusal::from(FieldError {
            code: "body_too_large".into(),
            field: String::new(),
            message: "too large".into(),
        });
        assert_eq!(too_large, Refusal::too_large());
        assert_eq!(too_large.kind, RefusalKind::TooLarge);
        assert_eq!(Refusal::conflict().kind, RefusalKind::Conflict);
        let module = Refusal::module(OpError::permanent("module_not_assigned", "not here"));
        assert_eq!(
            (module.kind, module.code.as_ref(), module.field.as_str()),
            (RefusalKind::Conflict, "module_not_assigned", "operation")
        );
        for refusal in [&invalid, &too_large, &module, &Refusal::conflict()] {
            assert!(
                !refusal.retryable() && refusal.retry_after.is_none(),
                "{refusal:?}"
            );
        }
        let busy = Refusal::from(ReadError::Unavailable {
            retry_after_secs: 2,
        });
        assert_eq!(
            (busy.code.as_ref(), busy.retry_after),
            ("state_unavailable", Some(2))
        );
        let full = Refusal::disk_full(FileSystem::Inbox);
        assert_eq!(
            (full.code.as_ref(), full.retry_after),
            ("disk_full", Some(30))
        );
        assert_eq!(Refusal::inbox_unavailable().retry_after, Some(1));
        for refusal in [&busy, &full, &Refusal::inbox_unavailable()] {
            assert!(refusal.retryable(), "{refusal:?}");
            assert_eq!(refusal.kind, RefusalKind::Unavailable);
        }
        let queue = Refusal::queue_full(inbox::QueueLimit::Account, 1000, 1000);
        assert_eq!(
            (
                queue.kind,
                queue.code.as_ref(),
                queue.retry_after,
                queue.queue
            ),
            (
                RefusalKind::Backpressure,
                "queue_full",
                Some(5),
                Some(QueueFull {
                    limit: 1000,
                    queued: 1000
                })
            )
        );
        assert!(queue.retryable());
    }
}
