//! macOS (and any Unix but Linux): the supervisor runs the command in a process group of its own
//! and ends the group, as on Linux, but without a guard — nothing here delivers a signal when the
//! supervisor itself is SIGKILLed (`PR_SET_PDEATHSIG` is Linux's; kqueue's `EVFILT_PROC` on the
//! supervisor would be the way) — and without a proof of the runtime's death for the watchdog
//! (a pidfd is Linux's), so the death notice is off.

use std::io;
use std::os::fd::OwnedFd;

use nix::sys::socket::MsgFlags;

pub(crate) const LEADER_COMMAND: Result<(), &str> = Ok(());
pub(crate) const DEATH_PROOF: Result<(), &str> = Err(
    "this OS gives the watchdog no proof of the runtime's death yet (a pidfd is Linux's): a crash fails over by the lease",
);

/// No `MSG_CMSG_CLOEXEC` here: descriptors arrive inheritable, and are closed at once (see
/// [`keep_received_fds`]).
pub(crate) const RECV_FLAGS: MsgFlags = MsgFlags::empty();

/// Without a death proof the watchdog is never armed: any descriptor received is closed before a
/// command could inherit it.
pub(crate) fn keep_received_fds() -> bool {
    false
}

pub(crate) fn own_death_proof() -> io::Result<OwnedFd> {
    Err(io::Error::new(io::ErrorKind::Unsupported, DEATH_PROOF.err().unwrap_or_default()))
}

/// No guard: the command leads its process group itself.
pub(crate) fn guard_spawn(_cmd: &mut std::process::Command) {}

/// Without a guard the spawned process is the command.
pub(crate) fn command_pid(guard: u32) -> u32 {
    guard
}

/// No subreaper: a command's escaped descendant goes to launchd.
pub(crate) fn become_subreaper() {}

pub(crate) fn kill_orphans() {}

/// No guard to ask: the caller ends the process group itself.
pub(crate) fn end_tree_by_guard(_guard: u32) -> Option<bool> {
    None
}
