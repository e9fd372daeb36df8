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
/// in it. If the watch cannot be set up (no such directory yet, inotify limits), waiters fall
/// back to their safety timeout, which is logged once here.
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
            tracing::warn!(dir = %dir.display(), error = %e, "cannot watch the state directory; long-polls will notice changes within a second instead");
            // Keep the sender alive so waiters see "no change", not "closed".
            tokio::spawn(async move {
                tx.closed().await;
            })
        }
    };
    (rx, task)
}

async fn run(mut fd: AsyncFd<Inotify>, tx: watch::Sender<u64>) {
    let mut buf = [0u8; 4096];
    loop {
        let mut guard = match fd.readable_mut().await {
            Ok(guard) => guard,
            Err(e) => {
                tracing::warn!(error = %e, "the state directory watch failed; long-polls fall back to their safety timeout");
                tx.closed().await;
                return;
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
                tracing::warn!(error = %e, "reading the state directory watch failed; long-polls fall back to their safety timeout");
                tx.closed().await;
                return;
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
}
