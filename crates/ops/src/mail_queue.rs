//! The `mail_queue` family (node scope): Postfix's queue, read with `postqueue -j` and flushed
//! with `postqueue -f` (`crates/provider/src/programs/postfix.rs`). It records nothing and
//! derives no file: the queue is Postfix's own state, reported as it is now.
//!
//! Nothing here deletes or holds mail: a control plane that wants a spammer's mail gone
//! suspends the mailbox or the domain; the queue then drains or expires as Postfix decides.

pub use declarations::mail_queue::*;

use std::collections::BTreeMap;

use provider::{QueueListing, QueuedMessage};
use registry::types::Hex32;
use registry::{Apply, Derive, Derived, OpError, Purge};

use crate::context::{Ctx, provider_error};

crash::points! {}

/// How many sender domains a report names.
const TOP_SENDER_DOMAINS: usize = 10;

impl Purge<Ctx> for MailQueue {
    /// The queue belongs to Postfix and to no tenant: a purge leaves it alone.
    fn purge(_: &mut Ctx, _: &Hex32) -> Result<(), OpError> {
        Ok(())
    }
}

impl Derive<Ctx> for MailQueue {
    /// Nothing: the queue is Postfix's own state, and the family records no row.
    fn derive(_: &Ctx) -> Result<Vec<Derived>, OpError> {
        Ok(Vec::new())
    }
}

impl Apply<Ctx> for ObserveMailQueue {
    fn apply(ctx: &mut Ctx, _: &ObserveMailQueueRequest) -> Result<MailQueueResult, OpError> {
        let listing = ctx.provider.postqueue_list().map_err(provider_error)?;
        Ok(report(&listing))
    }
}

impl Apply<Ctx> for FlushMailQueue {
    fn apply(ctx: &mut Ctx, _: &FlushMailQueueRequest) -> Result<FlushMailQueueResult, OpError> {
        let listing = ctx.provider.postqueue_list().map_err(provider_error)?;
        ctx.provider.postqueue_flush().map_err(provider_error)?;
        Ok(FlushMailQueueResult {
            deferred_retried: report(&listing).by_queue.deferred,
        })
    }
}

/// The report of one listing: counts per queue, the oldest arrival, the busiest senders.
fn report(listing: &QueueListing) -> MailQueueResult {
    let mut by_queue = QueueCounts::default();
    let mut senders: BTreeMap<String, u64> = BTreeMap::new();
    let mut unreadable = listing.unparsed_lines;
    for message in &listing.messages {
        let count = match message.queue_name.as_str() {
            "maildrop" => &mut by_queue.maildrop,
            "incoming" => &mut by_queue.incoming,
            "active" => &mut by_queue.active,
            "deferred" => &mut by_queue.deferred,
            "hold" => &mut by_queue.hold,
            // A queue this node does not know: not a message it can report on.
            _ => {
                unreadable += 1;
                continue;
            }
        };
        *count += 1;
        *senders.entry(sender_domain(message)).or_default() += 1;
    }
    let known = || {
        listing.messages.iter().filter(|m| {
            matches!(
                m.queue_name.as_str(),
                "maildrop" | "incoming" | "active" | "deferred" | "hold"
            )
        })
    };
    let mut top: Vec<SenderDomain> = senders
        .into_iter()
        .map(|(domain, messages)| SenderDomain { domain, messages })
        .collect();
    // Most first; the map's order breaks ties by name.
    top.sort_by_key(|sender| std::cmp::Reverse(sender.messages));
    top.truncate(TOP_SENDER_DOMAINS);
    MailQueueResult {
        messages: known().count() as u64,
        bytes: known().map(|m| m.message_size).sum(),
        by_queue,
        oldest_arrival: known().map(|m| m.arrival_time).min(),
        top_sender_domains: top,
        unreadable_entries: unreadable,
    }
}

/// The sender's domain, lower-cased; `<>` for a bounce (an empty sender).
fn sender_domain(message: &QueuedMessage) -> String {
    match message.sender.rsplit_once('@') {
        Some((_, domain)) => domain.to_ascii_lowercase(),
        None if message.sender.is_empty() => "<>".to_owned(),
        None => message.sender.to_ascii_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(queue: &str, at: u64, size: u64, sender: &str) -> QueuedMessage {
        QueuedMessage {
            queue_name: queue.into(),
            queue_id: format!("Q{at}"),
            arrival_time: at,
            message_size: size,
            sender: sender.into(),
        }
    }

    #[test]
    fn a_report_counts_each_queue_and_names_the_busiest_sender_domains() {
        let listing = QueueListing {
            messages: vec![
                message("deferred", 300, 10, "a@Shop.example"),
                message("deferred", 200, 20, "b@shop.example"),
                message("active", 100, 30, "c@blog.example"),
                message("hold", 400, 40, ""),
                message("corrupt", 50, 1000, "d@x.example"),
            ],
            unparsed_lines: 2,
        };
        let report = report(&listing);
        assert_eq!(report.messages, 4);
        assert_eq!(report.bytes, 100);
        assert_eq!(
            report.by_queue,
            QueueCounts {
                active: 1,
                deferred: 2,
                hold: 1,
                ..QueueCounts::default()
            }
        );
        assert_eq!(report.oldest_arrival, Some(100));
        assert_eq!(report.unreadable_entries, 3, "two lines and one unknown queue");
        let top: Vec<(&str, u64)> = report
            .top_sender_domains
            .iter()
            .map(|s| (s.domain.as_str(), s.messages))
            .collect();
        assert_eq!(top, [("shop.example", 2), ("<>", 1), ("blog.example", 1)]);
    }

    #[test]
    fn an_empty_queue_is_all_zeros_and_no_oldest_arrival() {
        let report = report(&QueueListing::default());
        assert_eq!(report.messages, 0);
        assert_eq!(report.oldest_arrival, None);
        assert!(report.top_sender_domains.is_empty());
    }

    #[test]
    fn observe_and_flush_run_postqueue_on_the_simulated_queue() {
        let dir = tempfile::tempdir().unwrap();
        let provider = testkit::sim_provider(provider::Platform::Debian, dir.path(), vec![]);
        let state = state::StateDb::open(&dir.path().join("state.db")).unwrap();
        let mut ctx = Ctx::new(std::sync::Arc::new(provider), state);
        let request = FlushMailQueueRequest {
            id: "a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7".parse().unwrap(),
        };
        let observed = ObserveMailQueue::apply(&mut ctx, &request).unwrap();
        assert_eq!(observed.messages, 0, "a new node's queue is empty");
        let flushed = FlushMailQueue::apply(&mut ctx, &request).unwrap();
        assert_eq!(flushed.deferred_retried, 0);
        let programs: Vec<Vec<String>> = ctx
            .provider
            .take_audit_records()
            .into_iter()
            .filter(|r| r.program == "postqueue")
            .map(|r| r.args)
            .collect();
        assert_eq!(programs.len(), 3, "a listing, then a listing and a flush");
        assert_eq!(programs[2].last().map(String::as_str), Some("-f"));
    }
}
