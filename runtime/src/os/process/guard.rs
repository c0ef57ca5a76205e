//! The command's guard (Linux): a process inside the leader-only command's process group that
//! ends the command's whole process tree when the supervisor dies, however it dies.
//!
//! The supervisor keeps the lease deadline, but nothing the supervisor does can run after a
//! SIGKILL of the supervisor itself (an OOM kill, a `kill -9` of its pid or of its process group,
//! `pkill`). The kernel's only notice that outlives the killed process is `PR_SET_PDEATHSIG`,
//! delivered to the *children* of the thread that spawned them. So the supervisor's spawn forks
//! twice: the first child (the guard, the process group's leader, whose pid the supervisor tracks)
//! arms a death signal on the supervisor and forks the command; the command arms `SIGKILL` as its
//! own death signal on the guard and execs. Then:
//!
//! - the supervisor dies → the guard gets [`DEATH`] → it SIGKILLs every descendant (the command
//!   and whatever it started, including what left the process group with `setsid` or a double
//!   fork: the guard is their child subreaper) and exits;
//! - the guard dies (even by SIGKILL) → the kernel SIGKILLs the command; the supervisor, which
//!   reaps the guard, SIGKILLs what is left of the group and its own orphaned descendants;
//! - the command exits → the guard SIGKILLs whatever the command left behind and exits with the
//!   command's status (the same code, or death by the same signal), which the supervisor reports;
//! - the guard gets [`end_tree_signal`] (from a runtime whose supervisor is stopped and so cannot
//!   end the command by its lease deadline) → it SIGKILLs every descendant, as above.
//!
//! The guard never execs: it is a copy of the supervisor that runs only the async-signal-safe
//! system calls below (a forked child of a multi-threaded process may not allocate or take locks),
//! with every file descriptor closed, so it holds none of the supervisor's sockets or the spawn's
//! status pipe. It ignores SIGTERM, SIGINT and SIGHUP: an ordered stop is the supervisor's SIGTERM
//! to the group, which the command handles and the guard outlives to report its status.

#![allow(unsafe_code)]

use super::mirror;
use std::io;

/// The guard's death signal: the supervisor has died. Blocked and taken with `sigwaitinfo`, and
/// acted on only when the guard's parent really changed (a stray SIGUSR1 changes nothing).
const DEATH: libc::c_int = libc::SIGUSR1;

/// The signal that asks the guard to end the command's tree now: the last real-time signal, which
/// no program sends by convention (unlike SIGUSR1/2). The same number in every process.
pub(crate) fn end_tree_signal() -> libc::c_int {
    libc::SIGRTMAX()
}

/// Asks the guard `pid` to end the command's tree now; whether the signal was delivered.
pub(crate) fn ask_to_end_tree(pid: libc::pid_t) -> bool {
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe { libc::kill(pid, end_tree_signal()) == 0 }
}

/// The guard's name in `ps` and `/proc/PID/comm` (it runs the supervisor's image, not its own).
const NAME: &[u8] = b"tenure-guard\0";

/// Rounds of "kill every child" before the guard gives up on a tree that keeps forking (each round
/// reaps what it killed; a killed process's children become the guard's in the next round).
const MAX_ROUNDS: usize = 64;

/// Splits the forked child of the supervisor's spawn into the guard (this process, which never
/// returns from here) and the command (the returned `Ok`, which std then execs).
///
/// # Safety
///
/// Call only from `CommandExt::pre_exec`, in the child of a fork, after the process group was set
/// (`process_group(0)`): it forks again and runs only async-signal-safe system calls.
pub(crate) unsafe fn split(supervisor: libc::pid_t, end_tree: libc::c_int) -> io::Result<()> {
    let guard = libc::getpid();
    // SIGCHLD and the death signal are blocked before the fork, so neither can be lost between
    // the fork and the guard's first wait; the command gets the mask back before it execs.
    let mut wait_set: libc::sigset_t = std::mem::zeroed();
    let mut old: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut wait_set);
    libc::sigaddset(&mut wait_set, libc::SIGCHLD);
    libc::sigaddset(&mut wait_set, DEATH);
    libc::sigaddset(&mut wait_set, end_tree);
    if libc::sigprocmask(libc::SIG_BLOCK, &wait_set, &mut old) != 0 {
        return Err(io::Error::last_os_error());
    }
    // Armed before the fork: a supervisor that dies from here on is noticed. Checked against the
    // pid it had before, for a supervisor that died before the signal was armed.
    if libc::prctl(libc::PR_SET_PDEATHSIG, DEATH as libc::c_ulong, 0, 0, 0) != 0
        || libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) != 0
    {
        return Err(io::Error::last_os_error());
    }
    if libc::getppid() != supervisor {
        libc::_exit(1);
    }
    match libc::fork() {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            // The command: killed by the kernel when the guard dies, whatever kills it.
            libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != guard {
                libc::_exit(1);
            }
            Ok(())
        }
        command => guard_main(supervisor, command, end_tree, &wait_set),
    }
}

/// The guard's life: wait for the command's end or the supervisor's death; end the tree; exit.
unsafe fn guard_main(
    supervisor: libc::pid_t,
    command: libc::pid_t,
    end_tree: libc::c_int,
    wait_set: &libc::sigset_t,
) -> ! {
    libc::prctl(libc::PR_SET_NAME, NAME.as_ptr() as libc::c_ulong, 0, 0, 0);
    for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        libc::signal(sig, libc::SIG_IGN);
    }
    close_all();
    loop {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let sig = libc::sigwaitinfo(wait_set, &mut info);
        if libc::getppid() != supervisor {
            kill_descendants();
            libc::_exit(1);
        }
        if sig == end_tree {
            // The command was killed and reaped with the rest: exit as the group kill would have.
            kill_descendants();
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
        if sig != libc::SIGCHLD {
            continue;
        }
        // Reap what ended: the command, or an orphan that was handed to this subreaper.
        loop {
            let mut status = 0;
            let pid = libc::waitpid(-1, &mut status, libc::WNOHANG);
            if pid <= 0 {
                break;
            }
            if pid == command {
                kill_descendants();
                mirror(status);
            }
        }
    }
}

/// Closes every file descriptor (the supervisor's socket and the spawn's status pipe among them).
unsafe fn close_all() {
    if libc::syscall(libc::SYS_close_range, 0 as libc::c_uint, libc::c_uint::MAX, 0 as libc::c_uint) != 0 {
        for fd in 0..4096 {
            libc::close(fd);
        }
    }
}

/// SIGKILLs every descendant: each child listed in `/proc/thread-self/children` is killed and
/// reaped; its children then become this subreaper's and are killed in the next round.
unsafe fn kill_descendants() {
    for _ in 0..MAX_ROUNDS {
        let mut buf = [0u8; 4096];
        let fd = libc::open(c"/proc/thread-self/children".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return;
        }
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        let Ok(n) = usize::try_from(n) else { return };
        let mut any = false;
        let mut pid: libc::pid_t = 0;
        for &b in buf[..n].iter().chain(b" ") {
            if b.is_ascii_digit() {
                pid = pid.saturating_mul(10).saturating_add(libc::pid_t::from(b - b'0'));
            } else if pid > 0 {
                any = true;
                libc::kill(pid, libc::SIGKILL);
                let mut status = 0;
                libc::waitpid(pid, &mut status, 0);
                pid = 0;
            }
        }
        if !any {
            return;
        }
    }
}
