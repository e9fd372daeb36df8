//! State change notification for the events long-poll, without polling.
//!
//! An inotify watch on the state directory: root's commits to state.db (rollback journal)
//! create, write and delete `state.db-journal` and write `state.db`, and each of those bumps a
//! counter in a `tokio::sync::watch` channel that long-poll waiters await. The API's own reads
//! cause none of these events (they are opens, reads and closes without writing), so a waiter
//! never wakes itself. With no waiter, an event costs one read of the inotify descriptor and
//! one counter increment; nothing runs on a timer.
//!
//! `IN_DELETE` is watched besides the obvious ones because deleting the journal is the commit
//! point of a rollback-journal transaction: the write to state.db that precedes it happens
//! while root still holds the lock, so a reader woken by it alone could find the database busy.

use std::path::Path;

use inotify::{Inotify, WatchMask};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Starts watching `dir`. The receiver's value changes after each batch of filesystem events
/// in it. If the watch cannot be set up (no such directory yet, inotify limits) or fails later,
/// the value changes every second instead, which is logged once here: a waiter never needs a
/// timer of its own to notice root's commits.
pub(crate) fn spawn(dir: &Path) -> (watch::Receiver<u64>, JoinHandle<()>) {
    let (tx, rx) = watch::channel(0u64);
    let watched = (|| {
        let inotify = Inotify::init()?;
        let mask = WatchMask::MODIFY
            | WatchMask::CLOSE_WRITE
            | WatchMask::MOVED_TO
            | WatchMask::CREATE
            | WatchMask::DELETE;
        inotify.watches().add(dir, mask)?;
        // SAFETY: `Inotify` owns its descriptor and closes it only when dropped; the AsyncFd
        // owns the `Inotify`, so the descriptor stays open and the same for its whole life.
        unsafe { AsyncFd::register_with_interest(inotify, Interest::READABLE) }
            .map_err(std::io::Error::from)
    })();
    let task = match watched {
        Ok(fd) => tokio::spawn(run(fd, tx)),
        Err(e) => {
            tracing::warn!(dir = %dir.display(), error = %e, "cannot watch the state directory; waiters are woken every second instead");
            tokio::spawn(every_second(tx))
        }
    };
    (rx, task)
}

/// Without a watch: changes the value every second until every receiver is gone (the sender
/// is kept alive meanwhile, so waiters never see "closed").
async fn every_second(tx: watch::Sender<u64>) {
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => tx.send_modify(|n| *n = n.wrapping_add(1)),
            () = tx.closed() => return,
        }
    }
}

async fn run(mut fd: AsyncFd<Inotify>, tx: watch::Sender<u64>) {
    let mut buf = [0u8; 4096];
    loop {
        let mut guard = match fd.readable_mut().await {
            Ok(guard) => guard,
            Err(e) => {
                tracing::warn!(error = %e, "the state directory watch failed; waiters are woken every second instead");
                return every_second(tx).await;
            }
        };
        match guard.try_io(|inner| {
            inner
                .get_mut()
                .read_events(&mut buf)
                .map(|events| events.count())
        }) {
            Ok(Ok(0)) => {}
            Ok(Ok(_)) => {
                tx.send_modify(|n| *n = n.wrapping_add(1));
            }
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "reading the state directory watch failed; waiters are woken every second instead");
                return every_second(tx).await;
            }
            // Spurious readiness: try_io cleared it; wait again.
            Err(_would_block) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_write_in_the_directory_wakes_a_waiter() {
        let dir = tempfile::tempdir().unwrap();
        let (mut rx, task) = spawn(dir.path());
        rx.borrow_and_update();
        std::fs::write(dir.path().join("state.db"), b"x").unwrap();
        tokio::time::timeout(Duration::from_secs(5), rx.changed())
            .await
            .expect("woken")
            .unwrap();
        task.abort();
    }

    #[tokio::test]
    async fn a_directory_that_cannot_be_watched_wakes_a_waiter_every_second() {
        let dir = tempfile::tempdir().unwrap();
        let (mut rx, task) = spawn(&dir.path().join("not yet"));
        rx.borrow_and_update();
        for _ in 0..2 {
            tokio::time::timeout(Duration::from_secs(5), rx.changed())
                .await
                .expect("woken")
                .unwrap();
        }
        task.abort();
    }
}
