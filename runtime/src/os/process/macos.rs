//! macOS (and any Unix but Linux): the supervisor runs the command in a process group of its own
//! and ends the group, as on Linux. On macOS the group is led by a guard that SIGKILLs it when the
//! supervisor dies (`kqueue_guard.rs`: kqueue's `EVFILT_PROC` in place of Linux's
//! `PR_SET_PDEATHSIG`); it has no subreaper, so what leaves the group goes to launchd. There is no
//! proof of the runtime's death for the watchdog yet (a pidfd is Linux's), so the death notice is
//! off.

#![allow(unsafe_code)]

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

/// Spawns the command under a [guard](super::kqueue_guard) that ends its process group if this
/// supervisor dies.
#[cfg(target_os = "macos")]
pub(crate) fn guard_spawn(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let supervisor = nix::unistd::getpid().as_raw();
    // SAFETY: `split` runs only system calls in the forked child (see its module), which is what
    // `pre_exec` requires; the process group was set before pre_exec closures run.
    unsafe {
        cmd.pre_exec(move || super::kqueue_guard::split(supervisor));
    }
}

/// No guard elsewhere: the command leads its process group itself.
#[cfg(not(target_os = "macos"))]
pub(crate) fn guard_spawn(_cmd: &mut std::process::Command) {}

/// The command's pid under the guard `guard`: the guard's only child (forked before the spawn
/// returned). If it is not found (it already ended) the guard's pid stands for it.
#[cfg(target_os = "macos")]
pub(crate) fn command_pid(guard: u32) -> u32 {
    let Ok(ppid) = libc::pid_t::try_from(guard) else { return guard };
    let mut pids = [0 as libc::pid_t; 4];
    // SAFETY: the buffer and its size in bytes match.
    let n = unsafe {
        libc::proc_listchildpids(ppid, pids.as_mut_ptr().cast(), std::mem::size_of_val(&pids) as libc::c_int)
    };
    match (n > 0, u32::try_from(pids[0])) {
        (true, Ok(pid)) if pid > 0 => pid,
        _ => guard,
    }
}

/// Without a guard the spawned process is the command.
#[cfg(not(target_os = "macos"))]
pub(crate) fn command_pid(guard: u32) -> u32 {
    guard
}

/// No subreaper: a command's escaped descendant goes to launchd.
pub(crate) fn become_subreaper() {}

pub(crate) fn kill_orphans() {}

/// The guard has no "end the tree now" signal (no real-time signals here, and nothing outside the
/// group to reach): the caller SIGKILLs the process group itself, the guard with it.
pub(crate) fn end_tree_by_guard(_guard: u32) -> Option<bool> {
    None
}
