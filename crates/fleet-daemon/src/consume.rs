//! The node's queue: one durable pull consumer (named after the node, created by the fleet)
//! on the work-queue stream. Every request goes through the API's admission, and each
//! account's requests are admitted in their order on the queue (their stream sequence), even
//! when one of them has to wait: the broker redelivers a request the node did not take, after
//! the later ones it already delivered.
//!
//! - admitted (or already known, the same job): an `accepted` event with the job's view, and
//!   the message acknowledged after the inbox COMMIT;
//! - refused (validation, a reused request id with another body): the request is copied to the
//!   dead-letter stream (`fleet.dlq.<node>`), the refusal put in the outbox as a `refused`
//!   event, then the message is terminated with the reason `refused <code>`, never
//!   redelivered; the fleet service says `dead_letter` when the broker tells it so;
//! - a refusal that may pass later (`Refusal::retryable`: the disk full, the inbox or state
//!   briefly unavailable): not acknowledged, delivered again after the refusal's `retry_after`
//!   (within [`super::Redelivery`]'s bounds), however many times it takes; it is recorded in
//!   `fleet.db` as waiting, under its account (the owner admission validates: a tenant, or the
//!   node for node-scope requests);
//! - a request of an account with an older request waiting: not handed to admission at all,
//!   recorded as waiting too and delivered again as late, so that it cannot overtake it; the
//!   record outlives a restart of the daemon. A waiting request the queue no longer holds
//!   (an operator deleted it: the consumer's acknowledgement floor passed it) stops holding
//!   the others back;
//! - "your assignment changed": the assignment is read from its bucket and handed to root;
//! - "the fleet's trust changed": the trust bundle is read again ([`super::trust`]).
//!
//! A stuck consumer (one that holds requests it does not deliver: NATS's own tracker has
//! consumers that stopped delivering after a restart) is noticed within a heartbeat: while the
//! daemon waits for work with nothing held back, it asks the broker every half heartbeat how
//! many requests the consumer has not delivered; some, twice in a row with nothing delivered
//! in between, is a stall: the daemon pulls anew and publishes `queue_stalled`, once per stall.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::HeaderMap;
use async_nats::jetstream::AckKind;
use async_nats::jetstream::consumer::PullConsumer;
use futures_util::StreamExt;
use registry::Origin;

use super::Shared;
use fleet::protocol::{
    self, ASSIGN_BUCKET, Assignment, EventBody, KIND_ASSIGNMENT, KIND_HEADER, KIND_TRUST,
    REQUESTS_STREAM, TERM_REASON_REFUSED,
};

/// How often the assignment and the trust bundle are read even without being told they
/// changed, and the waiting requests checked against the queue.
const ASSIGNMENT_POLL: Duration = Duration::from_secs(30);
/// How often, at most, a request held back makes the daemon check that the request it waits
/// for is still on the queue.
const GONE_CHECK: Duration = Duration::from_secs(5);
/// How long the broker has to store a dead letter.
const DEAD_LETTER_TIMEOUT: Duration = Duration::from_secs(10);

pub(super) async fn run(shared: Arc<Shared>) -> anyhow::Result<()> {
    let stream = shared
        .js
        .get_stream_no_info(REQUESTS_STREAM)
        .await
        .map_err(|e| anyhow::anyhow!("the requests stream: {e}"))?;
    let consumer: PullConsumer = stream
        .get_consumer(shared.node())
        .await
        .map_err(|e| anyhow::anyhow!("the node's consumer: {e}"))?;
    let mut holds = Holds::from_rows(shared.outbox.lock().await.held()?);
    if !holds.is_empty() {
        forget_gone(&shared, &consumer, &mut holds).await;
    }
    let mut messages = consumer
        .messages()
        .await
        .map_err(|e| anyhow::anyhow!("pulling the node's queue: {e}"))?;
    apply_assignment(&shared).await;
    let mut poll = tokio::time::interval(ASSIGNMENT_POLL);
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut look = tokio::time::interval(shared.config.heartbeat / 2);
    look.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut stall = Stall::default();
    loop {
        let message = tokio::select! {
            message = messages.next() => message,
            _ = poll.tick() => {
                apply_assignment(&shared).await;
                super::trust::refresh(&shared).await;
                if !holds.is_empty() {
                    forget_gone(&shared, &consumer, &mut holds).await;
                }
                continue;
            }
            _ = look.tick() => {
                if holds.is_empty()
                    && let Some((pending, paused)) = stall.looked_again(&consumer).await
                {
                    tracing::warn!(pending, paused, "the node's consumer holds requests it does not deliver; pulling anew");
                    shared.emit(EventBody::QueueStalled { pending, paused }).await?;
                    messages = consumer
                        .messages()
                        .await
                        .map_err(|e| anyhow::anyhow!("pulling the node's queue anew: {e}"))?;
                }
                continue;
            }
        };
        let Some(message) = message else {
            return Err(anyhow::anyhow!("the node's queue ended"));
        };
        let message = match message {
            Ok(message) => message,
            Err(e) => {
                // A missed heartbeat of the pull, the broker restarting: the stream resumes.
                tracing::warn!(error = %e, "pulling the node's queue");
                continue;
            }
        };
        stall.delivered();
        handle(&shared, &consumer, &mut holds, message).await?;
    }
}

/// What the daemon saw of its consumer at its last looks, for [`run`]'s stall check.
#[derive(Default)]
struct Stall {
    /// Whether the last look found undelivered requests; `false` after a delivery.
    pending: bool,
    /// Said already for this stall: said once until a delivery or an empty look ends it.
    said: bool,
}

impl Stall {
    fn delivered(&mut self) {
        self.pending = false;
        self.said = false;
    }

    /// Looks at the consumer; once per stall, when it began, returns what it holds and whether
    /// it is paused: requests not delivered at this look and at the one before, with nothing
    /// delivered in between. A look the broker does not answer proves nothing either way.
    async fn looked_again(&mut self, consumer: &PullConsumer) -> Option<(u64, bool)> {
        let info = consumer.get_info().await.ok()?;
        if info.num_pending == 0 {
            self.delivered();
            return None;
        }
        let stalled = self.pending && !self.said;
        self.pending = true;
        self.said |= stalled;
        stalled.then_some((info.num_pending, info.paused))
    }
}

async fn handle(
    shared: &Shared,
    consumer: &PullConsumer,
    holds: &mut Holds,
    message: async_nats::jetstream::Message,
) -> anyhow::Result<()> {
    let kind = message
        .headers
        .as_ref()
        .and_then(|h| h.get(KIND_HEADER))
        .map(|v| v.as_str().to_owned());
    if kind.as_deref() == Some(KIND_ASSIGNMENT) {
        apply_assignment(shared).await;
        ack(&message, AckKind::Ack).await;
        return Ok(());
    }
    if kind.as_deref() == Some(KIND_TRUST) {
        super::trust::refresh(shared).await;
        ack(&message, AckKind::Ack).await;
        return Ok(());
    }
    // The sequence the broker gave the request: with it the audit trail leads back to the
    // stream's copy. A message without one (no reply subject) is redelivered, never guessed at.
    let sequence = match message.info() {
        Ok(info) => info.stream_sequence,
        Err(e) => {
            tracing::warn!(error = %e, "a request without its stream sequence; redelivered");
            let delay = shared.redelivery.delay(None);
            ack(&message, AckKind::Nak(Some(delay))).await;
            return Ok(());
        }
    };
    // Whose request it is matters only while some request waits.
    let mut account = (!holds.is_empty()).then(|| account_of(shared, &message.payload));
    if let Some(Some(account)) = &account
        && let Some(first) = holds.first(account)
        && first < sequence
    {
        let delay = holds.delay(account, shared.redelivery.delay(None));
        tracing::debug!(
            sequence,
            first,
            "an account's request waits for its older one"
        );
        hold(shared, holds, account, sequence, delay).await;
        ack(&message, AckKind::Nak(Some(delay))).await;
        if holds.checked.is_none_or(|at| at.elapsed() >= GONE_CHECK) {
            forget_gone(shared, consumer, holds).await;
        }
        return Ok(());
    }
    let origin = Origin::Fleet {
        stream: REQUESTS_STREAM.to_owned(),
        sequence,
    };
    match shared.gate.submit(&message.payload, origin).await {
        Ok(job) => {
            shared
                .emit(EventBody::Accepted {
                    request_id: job.request_id.clone(),
                    job,
                })
                .await?;
            release(shared, holds, &[sequence]).await;
            ack(&message, AckKind::Ack).await;
        }
        Err(refusal) if refusal.retryable() => {
            let delay = shared.redelivery.delay(refusal.retry_after);
            if let Some(account) =
                account.get_or_insert_with(|| account_of(shared, &message.payload))
            {
                hold(shared, holds, account, sequence, delay).await;
            }
            ack(&message, AckKind::Nak(Some(delay))).await;
            // Said once it is recorded and given back.
            tracing::warn!(
                code = %refusal.code,
                sequence,
                delay_ms = delay.as_millis() as u64,
                "the node cannot take a request now; it will be delivered again"
            );
        }
        Err(refusal) => {
            // Copied first: a request terminated is gone from the queue.
            if let Err(e) = copy_to_dead_letters(shared, sequence, &message).await {
                let delay = shared.redelivery.delay(None);
                tracing::warn!(error = %format!("{e:#}"), sequence, "a refused request could not be copied to the dead letters; it will be delivered again");
                if let Some(account) =
                    account.get_or_insert_with(|| account_of(shared, &message.payload))
                {
                    hold(shared, holds, account, sequence, delay).await;
                }
                ack(&message, AckKind::Nak(Some(delay))).await;
                return Ok(());
            }
            let request_id = serde_json::from_slice::<serde_json::Value>(&message.payload)
                .ok()
                .and_then(|v| v.get("request_id")?.as_str().map(str::to_owned));
            let reason = format!("{TERM_REASON_REFUSED} {}", refusal.code);
            shared
                .emit(EventBody::Refused {
                    request_id,
                    code: refusal.code.into_owned(),
                    message: refusal.message,
                    field: refusal.field,
                })
                .await?;
            release(shared, holds, &[sequence]).await;
            terminate(shared, &message, &reason).await;
        }
    }
    Ok(())
}

/// The account a request belongs to, as admission validates it (`None`: it does not
/// validate, and admission refuses it for good).
fn account_of(shared: &Shared, body: &[u8]) -> Option<String> {
    shared
        .gate
        .owner_of(body)
        .map(|owner| owner.as_str().to_owned())
}

/// Records that `sequence` of `account` waits, in memory and in `fleet.db`. A record that
/// cannot be written (the daemon's own file system full too) is kept in memory: the order
/// holds as long as the daemon runs.
async fn hold(shared: &Shared, holds: &mut Holds, account: &str, sequence: u64, delay: Duration) {
    holds.set_delay(account, delay);
    if holds.insert(account, sequence)
        && let Err(e) = shared.outbox.lock().await.hold(account, sequence)
    {
        tracing::warn!(error = %format!("{e:#}"), sequence, "cannot record a waiting request in fleet.db");
    }
}

/// Forgets waiting requests (taken, refused for good, or gone from the queue).
async fn release(shared: &Shared, holds: &mut Holds, sequences: &[u64]) {
    let known: Vec<u64> = sequences
        .iter()
        .copied()
        .filter(|seq| holds.remove(*seq))
        .collect();
    if known.is_empty() {
        return;
    }
    if let Err(e) = shared.outbox.lock().await.release(&known) {
        tracing::warn!(error = %format!("{e:#}"), "cannot forget waiting requests in fleet.db");
    }
}

/// Forgets the waiting requests the queue no longer holds: at or below the consumer's
/// acknowledgement floor every message was acknowledged, terminated or deleted (an operator's
/// delete of a pending message counts as terminated).
async fn forget_gone(shared: &Shared, consumer: &PullConsumer, holds: &mut Holds) {
    holds.checked = Some(Instant::now());
    let floor = match consumer.get_info().await {
        Ok(info) => info.ack_floor.stream_sequence,
        Err(e) => {
            tracing::warn!(error = %e, "reading the node's consumer");
            return;
        }
    };
    let gone = holds.through(floor);
    if !gone.is_empty() {
        tracing::warn!(
            sequences = ?gone,
            "waiting requests are gone from the node's queue; their accounts' later ones go on"
        );
        release(shared, holds, &gone).await;
    }
}

/// Copies a refused request to the node's subject of the dead-letter stream, once (its
/// message id is derived from its sequence).
async fn copy_to_dead_letters(
    shared: &Shared,
    sequence: u64,
    message: &async_nats::jetstream::Message,
) -> anyhow::Result<()> {
    let mut headers = HeaderMap::new();
    headers.insert("Nats-Msg-Id", format!("dlq.{sequence}").as_str());
    headers.insert("Layerone-Original-Sequence", sequence.to_string().as_str());
    let ack = shared
        .js
        .publish_with_headers(
            protocol::dead_letter_subject(shared.node()),
            headers,
            message.payload.clone(),
        )
        .await?;
    tokio::time::timeout(DEAD_LETTER_TIMEOUT, ack)
        .await
        .map_err(|_| anyhow::anyhow!("the broker did not store the dead letter in time"))??;
    Ok(())
}

async fn ack(message: &async_nats::jetstream::Message, kind: AckKind) {
    if let Err(e) = message.ack_with(kind).await {
        // Not acknowledged: the broker redelivers, and admission is idempotent.
        tracing::warn!(error = %e, "acknowledging a request");
    }
}

/// Terminates a request with `reason`, which the broker's terminated advisory carries.
async fn terminate(shared: &Shared, message: &async_nats::jetstream::Message, reason: &str) {
    let Some(reply) = message.reply.clone() else {
        return;
    };
    if let Err(e) = shared
        .client
        .publish(reply, format!("+TERM {reason}").into())
        .await
    {
        // Not terminated: the broker redelivers, and it is refused again.
        tracing::warn!(error = %e, "terminating a request");
    }
}

/// The requests of the node's queue not taken yet, by account, each by its stream sequence.
#[derive(Default)]
struct Holds {
    accounts: HashMap<String, BTreeSet<u64>>,
    owners: HashMap<u64, String>,
    /// The wait of each account's last retryable refusal, which its held requests wait too.
    delays: HashMap<String, Duration>,
    /// When the queue was last checked for waiting requests gone from it.
    checked: Option<Instant>,
}

impl Holds {
    fn from_rows(rows: Vec<(u64, String)>) -> Holds {
        let mut holds = Holds::default();
        for (seq, account) in rows {
            holds.insert(&account, seq);
        }
        holds
    }

    fn is_empty(&self) -> bool {
        self.owners.is_empty()
    }

    /// The oldest waiting request of `account`.
    fn first(&self, account: &str) -> Option<u64> {
        self.accounts.get(account)?.first().copied()
    }

    /// Whether it is new.
    fn insert(&mut self, account: &str, seq: u64) -> bool {
        if self.owners.contains_key(&seq) {
            return false;
        }
        self.owners.insert(seq, account.to_owned());
        self.accounts
            .entry(account.to_owned())
            .or_default()
            .insert(seq);
        true
    }

    /// Whether it was waiting.
    fn remove(&mut self, seq: u64) -> bool {
        let Some(account) = self.owners.remove(&seq) else {
            return false;
        };
        if let Some(seqs) = self.accounts.get_mut(&account) {
            seqs.remove(&seq);
            if seqs.is_empty() {
                self.accounts.remove(&account);
                self.delays.remove(&account);
            }
        }
        true
    }

    fn set_delay(&mut self, account: &str, delay: Duration) {
        self.delays.insert(account.to_owned(), delay);
    }

    fn delay(&self, account: &str, default: Duration) -> Duration {
        self.delays.get(account).copied().unwrap_or(default)
    }

    /// The waiting requests at or below `floor`.
    fn through(&self, floor: u64) -> Vec<u64> {
        let mut seqs: Vec<u64> = self
            .owners
            .keys()
            .copied()
            .filter(|seq| *seq <= floor)
            .collect();
        seqs.sort_unstable();
        seqs
    }
}

/// Reads this node's assignment (a direct get of its own key) and hands it to root as a
/// node-scope request. The request id is derived from the signed assignment, so reading the
/// same one again is the same job.
async fn apply_assignment(shared: &Shared) {
    let (sequence, payload) = match super::read_key(&shared.js, ASSIGN_BUCKET, shared.node()).await
    {
        Ok(Some(read)) => read,
        Ok(None) => return,
        Err(e) => {
            tracing::warn!(error = %format!("{e:#}"), "reading the node's assignment");
            return;
        }
    };
    let assignment: Assignment = match serde_json::from_slice(&payload) {
        Ok(a) => a,
        Err(e) => {
            tracing::error!(error = %e, "the node's assignment is not an assignment");
            return;
        }
    };
    let body = assignment_request(&assignment, &shared.credentials.identity.node_id);
    let origin = Origin::Fleet {
        stream: format!("KV_{ASSIGN_BUCKET}"),
        sequence,
    };
    match shared.gate.submit(body.as_bytes(), origin).await {
        Ok(_) => {}
        Err(refusal) => {
            tracing::error!(
                code = %refusal.code,
                message = refusal.message,
                "the node refused its assignment"
            );
            let _ = shared
                .emit(EventBody::AssignmentRefused {
                    generation: assignment.generation,
                    code: refusal.code.into_owned(),
                    message: refusal.message,
                })
                .await;
        }
    }
}

/// The `apply_assignment` request of a signed assignment.
pub(crate) fn assignment_request(assignment: &Assignment, node_id: &str) -> String {
    let id_source = format!(
        "{}\n{}\n{}",
        assignment.node, assignment.generation, assignment.signature
    );
    let request_id = &fleet::token::sha256_hex(id_source.as_bytes())[..32];
    serde_json::json!({
        "request_id": request_id,
        "action": "apply_assignment",
        "node_id": node_id,
        "resource": {
            "id": node_id,
            "node": assignment.node,
            "generation": assignment.generation,
            "modules": assignment.modules,
            "signature": assignment.signature,
        }
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Redelivery;

    #[test]
    fn each_account_waits_behind_its_oldest_waiting_request_only() {
        let mut holds = Holds::from_rows(vec![(9, "a".into()), (4, "a".into()), (6, "b".into())]);
        assert_eq!((holds.first("a"), holds.first("b")), (Some(4), Some(6)));
        assert_eq!(holds.first("node:"), None);
        assert!(!holds.insert("a", 9), "already waiting");
        assert!(holds.insert("a", 12));
        assert!(holds.remove(4));
        assert!(!holds.remove(4));
        assert_eq!(holds.first("a"), Some(9));
        holds.set_delay("b", Duration::from_millis(300));
        assert_eq!(
            holds.delay("b", Duration::from_secs(1)),
            Duration::from_millis(300)
        );
        assert_eq!(holds.through(9), vec![6, 9]);
        assert!(holds.remove(6));
        assert_eq!(holds.first("b"), None);
        assert_eq!(
            holds.delay("b", Duration::from_secs(1)),
            Duration::from_secs(1),
            "an account that no longer waits forgets its wait"
        );
        assert!(holds.remove(9) && holds.remove(12) && holds.is_empty());
    }

    #[test]
    fn a_redelivery_waits_the_refusals_retry_after_within_its_bounds() {
        let default = Redelivery::default();
        assert_eq!(default.delay(None), Duration::from_secs(1));
        assert_eq!(default.delay(Some(0)), Duration::from_secs(1));
        assert_eq!(default.delay(Some(2)), Duration::from_secs(2));
        assert_eq!(default.delay(Some(30)), Duration::from_secs(30));
        assert_eq!(default.delay(Some(3600)), Duration::from_secs(30));
        let short = Redelivery::at_most(Duration::from_millis(200));
        assert_eq!(short.delay(Some(30)), Duration::from_millis(200));
        assert_eq!(short.delay(None), Duration::from_millis(200));
    }
}
