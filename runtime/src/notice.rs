//! The death notices a watchdog is armed with (see `docs/command.md`, "The watchdog").
//!
//! While this node leads, the run loop publishes its leadership's notices — the core's encoded
//! and authenticated datagrams, one per member known to understand them, with each member's
//! current address — and a duplicate of its socket. The command line's watchdog process holds
//! them and sends them from this node's own address when, and only when, this process is dead.
//! The run loop does not send them itself and no thread of this process ever does: the notice
//! says that no work of this leadership runs, which only this process's death makes true.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// One leadership's notices, as the watchdog is armed with them.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Armed {
    /// The term of the leadership they end.
    pub(crate) term: u64,
    /// `(address, datagram)`, one per member that understands them.
    pub(crate) datagrams: Vec<(SocketAddr, Vec<u8>)>,
}

/// How often a leader recomputes its notices (a member joined or left, an address changed, a
/// member said it speaks the notice's wire version): a few HMACs, and a watchdog armed at most
/// this late with a new member's notice.
pub(crate) const REFRESH_MS: u64 = 100;

/// A duplicate of the node's socket: a descriptor on Unix, a socket handle on Windows (where the
/// watchdog cannot take one yet, so none is ever made).
#[cfg(unix)]
pub(crate) type SocketDup = std::os::fd::OwnedFd;
#[cfg(windows)]
pub(crate) type SocketDup = std::os::windows::io::OwnedSocket;

/// Duplicates the node's socket for the watchdog.
pub(crate) fn duplicate(socket: &std::net::UdpSocket) -> std::io::Result<SocketDup> {
    #[cfg(unix)]
    return std::os::fd::AsFd::as_fd(socket).try_clone_to_owned();
    #[cfg(windows)]
    return std::os::windows::io::AsSocket::as_socket(socket).try_clone_to_owned();
}

/// The published notices (`None`: disarm) and a duplicate of the node's socket while it runs.
#[derive(Default)]
pub(crate) struct Published {
    armed: Mutex<Option<Arc<Armed>>>,
    socket: Mutex<Option<SocketDup>>,
}

impl Published {
    /// Replaces the notices; whether they changed.
    pub(crate) fn set(&self, armed: Option<Armed>) -> bool {
        let mut slot = self.armed.lock().unwrap_or_else(|p| p.into_inner());
        if slot.as_deref() == armed.as_ref() {
            return false;
        }
        *slot = armed.map(Arc::new);
        true
    }

    /// The current notices.
    pub(crate) fn get(&self) -> Option<Arc<Armed>> {
        self.armed.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Keeps a duplicate of the node's socket for the watchdog (`None`: the runtime ended, and
    /// the socket must not outlive it here).
    pub(crate) fn set_socket(&self, socket: Option<SocketDup>) {
        *self.socket.lock().unwrap_or_else(|p| p.into_inner()) = socket;
    }

    /// Another duplicate of the node's socket, while the runtime runs.
    pub(crate) fn socket(&self) -> Option<SocketDup> {
        self.socket.lock().unwrap_or_else(|p| p.into_inner()).as_ref().and_then(|s| s.try_clone().ok())
    }
}
