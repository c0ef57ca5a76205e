//! Linux: the guard (`PR_SET_PDEATHSIG` on the supervisor, see `guard.rs`), the supervisor as the
//! command tree's child subreaper, and a pidfd of the runtime's process as the watchdog's proof of
//! its death.

#![allow(unsafe_code)]

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;

use nix::sys::signal::Signal;
use nix::sys::socket::MsgFlags;
use nix::unistd::Pid;

pub(crate) const LEADER_COMMAND: Result<(), &str> = Ok(());
pub(crate) const DEATH_PROOF: Result<(), &str> = Ok(());

/// Descriptors arrive close-on-exec: a command spawned meanwhile inherits none.
pub(crate) const RECV_FLAGS: MsgFlags = MsgFlags::MSG_CMSG_CLOEXEC;

/// The watchdog keeps the descriptors the runtime hands over (its pidfd, its socket).
pub(crate) fn keep_received_fds() -> bool {
    true
}

/// A pidfd of this process (`pidfd_open(getpid())`), to hand to the watchdog.
pub(crate) fn own_death_proof() -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, libc::getpid(), 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the descriptor was just created and is owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Spawns the command under a [guard](super::guard) that ends its whole process tree if this
/// supervisor dies.
pub(crate) fn guard_spawn(cmd: &mut std::process::Command) {
    let supervisor = nix::unistd::getpid().as_raw();
    let end_tree = super::guard::end_tree_signal();
    // SAFETY: `split` runs only async-signal-safe system calls in the forked child, which is what
    // `pre_exec` requires; the process group was set before pre_exec closures run.
    unsafe {
        cmd.pre_exec(move || super::guard::split(supervisor, end_tree));
    }
}

/// The command's pid under the guard `guard`: the guard's only child. The spawn returned after the
/// command's exec, which the guard forked before, so the child is there (unless it already ended:
/// then the guard's pid stands for it).
pub(crate) fn command_pid(guard: u32) -> u32 {
    if let Some(pid) = std::fs::read_to_string(format!("/proc/{guard}/task/{guard}/children"))
        .ok()
        .and_then(|c| c.split_whitespace().next().and_then(|p| p.parse().ok()))
    {
        return pid;
    }
    guard
}

/// Makes this process the subreaper of the command's tree, so that what escapes the guard's reach
/// (a guard killed alone, while the command had daemonised) is handed here and ended by
/// [`kill_orphans`], not to init.
pub(crate) fn become_subreaper() {
    let _ = nix::sys::prctl::set_child_subreaper(true);
}

/// SIGKILLs and reaps every child this supervisor has: called only when no command runs, so every
/// child is an orphan of a command tree handed to this subreaper.
pub(crate) fn kill_orphans() {
    for _ in 0..64 {
        let mut any = false;
        for task in std::fs::read_dir("/proc/self/task").into_iter().flatten().flatten() {
            let children = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for pid in children.split_whitespace().filter_map(|p| p.parse::<i32>().ok()) {
                any = true;
                let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
                let _ = nix::sys::wait::waitpid(Pid::from_raw(pid), None);
            }
        }
        if !any {
            return;
        }
    }
}

/// Asks the command's guard (pid `guard`) to end the command's whole tree: `Some(existed)`.
pub(crate) fn end_tree_by_guard(guard: u32) -> Option<bool> {
    Some(i32::try_from(guard).is_ok_and(super::guard::ask_to_end_tree))
}
