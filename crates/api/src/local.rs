//! The local door: the same routes as the HTTPS API, over a unix socket, for sessions on the
//! machine (`layerone mcp`, an operator's scripts).
//!
//! The kernel authenticates the caller twice. The socket file
//! (`/run/layerone/operators/api.sock` on an installed node) is mode 0660 in the operators'
//! group (`layerone-operators`), so whoever is neither its owner nor in that group cannot connect; and every
//! connection's peer credentials (`SO_PEERCRED`, and `SO_PEERGROUPS` for the groups it had
//! when it connected) are checked against [`Operators`] before a byte of it is read: a peer
//! that is not admitted is closed at once and gets nothing. An admitted peer needs no bearer
//! key; its uid is the origin of every request it makes ([`registry::Origin::Local`]).
//!
//! The rules of the TCP door hold here too, by uid instead of by address: one uid has at most
//! [`crate::Limits::max_connections_per_source`] connections open (one over is closed at
//! accept), a connection that sends nothing for [`crate::Limits::first_byte_timeout`] after
//! it was accepted is closed, and the same HTTP server settings as the TCP door's cut off a
//! slow head and a slow body ([`crate::Limits::header_read_timeout`],
//! [`crate::Limits::body_read_timeout`]).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use anyhow::Context;
use axum::Extension;
use axum::extract::ConnectInfo;
use axum::middleware::AddExtension;
use axum_server::accept::Accept;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::UnixStream;
use tower_layer::Layer;

use crate::limits::{OpenPerKey, Slot, forward_write};

/// Where the local door listens, and who may use it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalSocket {
    pub path: PathBuf,
    pub operators: Operators,
}

/// Who may use the local door: root, the uids listed, and the members of one group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Operators {
    /// Admitted besides root (a dev node admits the user who started it).
    pub uids: Vec<u32>,
    /// The operators' group: the socket file's group, and its members are admitted.
    pub gid: Option<u32>,
}

impl Operators {
    /// Whether a peer with these credentials is admitted.
    pub fn admits(&self, peer: &Peer) -> bool {
        peer.uid == 0
            || self.uids.contains(&peer.uid)
            || self
                .gid
                .is_some_and(|gid| peer.gid == gid || peer.groups.contains(&gid))
    }

    /// The operators of a socket at `path`: root, and the group of its directory. In
    /// production that directory is `/run/layerone/operators`, whose group root sets to
    /// `layerone-operators` before the API starts: the group is named once, in the unit, and
    /// the API needs neither the group database nor membership of it.
    pub fn of_directory(path: &Path) -> anyhow::Result<Operators> {
        use std::os::unix::fs::MetadataExt;
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let meta =
            std::fs::metadata(dir).with_context(|| format!("looking at {}", dir.display()))?;
        Ok(Operators {
            uids: Vec::new(),
            gid: Some(meta.gid()),
        })
    }
}

/// What the kernel says of a connected peer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Peer {
    pub uid: u32,
    pub gid: u32,
    /// The supplementary groups it had when it connected.
    pub groups: Vec<u32>,
}

impl Peer {
    fn of(stream: &UnixStream) -> io::Result<Peer> {
        let cred = stream.peer_cred()?;
        // SAFETY: the stream is open for as long as the borrow.
        let fd = unsafe { BorrowedFd::borrow_raw(stream.as_raw_fd()) };
        Ok(Peer {
            uid: cred.uid(),
            gid: cred.gid(),
            groups: peer_groups(fd)?,
        })
    }
}

/// The peer's supplementary groups as the kernel recorded them at `connect()`.
fn peer_groups(fd: BorrowedFd<'_>) -> io::Result<Vec<u32>> {
    const WIDTH: usize = std::mem::size_of::<libc::gid_t>();
    let mut groups: Vec<libc::gid_t> = vec![0; 32];
    // Linux allows 65,536 supplementary groups; asking again once with the size the kernel
    // said it needs is enough.
    for _ in 0..2 {
        let mut len = (groups.len() * WIDTH) as libc::socklen_t;
        // SAFETY: `groups` is valid for writes of `len` bytes, and the kernel writes at most
        // `len` bytes there, setting `len` to what it wrote (or needs, with ERANGE).
        let rc = unsafe {
            libc::getsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_PEERGROUPS,
                groups.as_mut_ptr().cast(),
                &mut len,
            )
        };
        if rc == 0 {
            groups.truncate(len as usize / WIDTH);
            return Ok(groups);
        }
        let error = io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::ERANGE) {
            return Err(error);
        }
        groups.resize(len as usize / WIDTH + 1, 0);
    }
    Err(io::Error::other("the peer's groups changed size twice"))
}

/// Binds the socket: a stale socket left at `path` is replaced (anything else there is an
/// error), and the file is given mode 0660 and the operators' group before the first accept.
/// The door that goes with it admits the connections of operators only.
pub(crate) fn bind(
    socket: &LocalSocket,
    limits: &crate::Limits,
) -> anyhow::Result<(std::os::unix::net::UnixListener, LocalDoor)> {
    let path = &socket.path;
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_socket() => std::fs::remove_file(path)
            .with_context(|| format!("removing the stale socket {}", path.display()))?,
        Ok(_) => anyhow::bail!("{} exists and is not a socket", path.display()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("looking at {}", path.display())),
    }
    let listener = std::os::unix::net::UnixListener::bind(path)
        .with_context(|| format!("binding {}", path.display()))?;
    restrict(path, socket.operators.gid)?;
    let door = LocalDoor {
        state: Arc::new(Uids {
            operators: socket.operators.clone(),
            open: OpenPerKey::new(limits.max_connections_per_source),
            first_byte: limits.first_byte_timeout,
        }),
    };
    Ok((listener, door))
}

/// In production the socket's directory is set-group-id in the operators' group, so the
/// socket is born in it and the API need not be a member; elsewhere it is given the group
/// (which only a member may do).
fn restrict(path: &Path, gid: Option<u32>) -> anyhow::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let born_in = std::fs::symlink_metadata(path)
        .with_context(|| format!("looking at {}", path.display()))?
        .gid();
    if let Some(gid) = gid
        && gid != born_in
    {
        std::os::unix::fs::chown(path, None, Some(gid))
            .with_context(|| format!("giving {} the operators' group", path.display()))?;
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o660))
        .with_context(|| format!("restricting {}", path.display()))
}

/// The local door's accept step: only the connections of admitted peers go on, each with its
/// uid's slot and the deadline of its first byte, and with the peer in every request's
/// extensions (as [`ConnectInfo<Peer>`]) for the routes' guard.
#[derive(Clone)]
pub(crate) struct LocalDoor {
    state: Arc<Uids>,
}

struct Uids {
    operators: Operators,
    /// Connections open per uid.
    open: OpenPerKey<u32>,
    first_byte: Duration,
}

impl LocalDoor {
    /// The peer and its uid's slot, or why not.
    fn admit(&self, stream: UnixStream) -> io::Result<(LocalStream, Peer)> {
        let peer = Peer::of(&stream).inspect_err(|e| {
            tracing::warn!(error = %e, "reading a local peer's credentials");
        })?;
        if !self.state.operators.admits(&peer) {
            tracing::warn!(target: "audit", uid = peer.uid, "refused a local connection: not an operator");
            return Err(io::Error::other("the peer is not an operator"));
        }
        let Some(slot) = self.state.open.take(peer.uid) else {
            tracing::debug!(
                uid = peer.uid,
                "the uid's connection cap is reached; closing a new local connection"
            );
            return Err(io::Error::other("the uid's connection cap is reached"));
        };
        let stream = LocalStream {
            stream,
            _slot: slot,
            first_byte: Some(Box::pin(tokio::time::sleep(self.state.first_byte))),
        };
        Ok((stream, peer))
    }
}

impl<S: Send + 'static> Accept<UnixStream, S> for LocalDoor {
    type Stream = LocalStream;
    type Service = AddExtension<S, ConnectInfo<Peer>>;
    type Future = std::future::Ready<io::Result<(LocalStream, Self::Service)>>;

    fn accept(&self, stream: UnixStream, service: S) -> Self::Future {
        std::future::ready(
            self.admit(stream)
                .map(|(stream, peer)| (stream, Extension(ConnectInfo(peer)).layer(service))),
        )
    }
}

/// An admitted local connection: its uid's slot, and the deadline of its first byte until
/// that byte has come.
pub(crate) struct LocalStream {
    stream: UnixStream,
    _slot: Slot<u32>,
    first_byte: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl AsyncRead for LocalStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(read, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.first_byte = None;
        }
        if read.is_pending()
            && let Some(deadline) = self.first_byte.as_mut()
            && deadline.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "no first byte before the deadline",
            )));
        }
        read
    }
}

forward_write!(LocalStream);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operators_are_root_the_listed_uids_and_the_groups_members() {
        let operators = Operators {
            uids: vec![1000],
            gid: Some(990),
        };
        let peer = |uid, gid, groups: &[u32]| Peer {
            uid,
            gid,
            groups: groups.to_vec(),
        };
        assert!(operators.admits(&peer(0, 0, &[])));
        assert!(operators.admits(&peer(1000, 1000, &[])));
        assert!(operators.admits(&peer(1001, 990, &[])));
        assert!(operators.admits(&peer(1001, 1001, &[27, 990])));
        assert!(!operators.admits(&peer(1001, 1001, &[27])));
        assert!(!Operators::default().admits(&peer(1001, 990, &[990])));
    }
}
