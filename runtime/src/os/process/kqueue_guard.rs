//! The command's guard on macOS: a process that leads the leader-only command's process group and
//! SIGKILLs the whole group when the supervisor dies, however it dies — the role `guard.rs` plays
//! on Linux, with kqueue's `EVFILT_PROC`/`NOTE_EXIT` on the supervisor in place of
//! `PR_SET_PDEATHSIG` (which macOS does not have).
//!
//! The supervisor's spawn forks the guard (the group's leader, whose pid the supervisor tracks and
//! reaps); the guard forks the command, which execs. Then:
//!
//! - the supervisor dies → the guard's kqueue reports its exit → the guard SIGKILLs its process
//!   group (the command, what the command started in the group, and itself);
//! - the command exits → the guard reaps it and exits the way it did (the same code, or death by
//!   the same signal), which the supervisor reports; the supervisor then SIGKILLs what is left of
//!   the group;
//! - the guard dies (SIGKILL of its pid): nothing ends the command at once (macOS has no death
//!   signal for a parent); the supervisor, which reaps the guard, SIGKILLs the group.
//!
//! What it does not cover: descendants that left the group (`setsid`, a double fork into another
//! group) go to launchd, and the supervisor and the guard killed together leave the command
//! running.
//!
//! Between fork and exec only system calls run (`fork`, `getpid`, `getppid`, `signal`, `close`,
//! `kqueue`, `kevent`, `waitpid`, `kill`, `sigprocmask`, `_exit`): no allocation and no lock, as a
//! forked child of a multi-threaded process requires. `kqueue` and `kevent` are not on POSIX's
//! list of async-signal-safe functions (they are not POSIX); they are plain system calls that take
//! no lock in user space. A kqueue is not inherited across `fork`, so the guard makes its own after
//! the fork.

#![allow(unsafe_code)]

use super::mirror;
use std::io;

/// How long the guard's wait lasts before it looks again without an event (a bound on a race the
/// filters cannot see: a command that ended before its filter was registered).
const LOOK_AGAIN: libc::timespec = libc::timespec { tv_sec: 1, tv_nsec: 0 };

/// Splits the forked child of the supervisor's spawn into the guard (this process, which never
/// returns from here) and the command (the returned `Ok`, which std then execs).
///
/// # Safety
///
/// Call only from `CommandExt::pre_exec`, in the child of a fork, after the process group was set
/// (`process_group(0)`): it forks again and runs only system calls.
pub(crate) unsafe fn split(supervisor: libc::pid_t) -> io::Result<()> {
    if libc::getppid() != supervisor {
        libc::_exit(1);
    }
    let guard = libc::getpid();
    match libc::fork() {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            // The command. A guard already gone (killed at once) could not end it later.
            if libc::getppid() != guard {
                libc::_exit(1);
            }
            Ok(())
        }
        command => guard_main(supervisor, command),
    }
}

/// Registers a `NOTE_EXIT` filter on `pid`; whether it took.
unsafe fn watch(kq: libc::c_int, pid: libc::pid_t) -> bool {
    let change = libc::kevent {
        ident: pid as libc::uintptr_t,
        filter: libc::EVFILT_PROC,
        flags: libc::EV_ADD,
        fflags: libc::NOTE_EXIT,
        data: 0,
        udata: std::ptr::null_mut(),
    };
    libc::kevent(kq, &change, 1, std::ptr::null_mut(), 0, std::ptr::null()) == 0
}

/// The guard's life: wait for the command's end or the supervisor's death; act; exit.
unsafe fn guard_main(supervisor: libc::pid_t, command: libc::pid_t) -> ! {
    for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        libc::signal(sig, libc::SIG_IGN);
    }
    close_all();
    let kq = libc::kqueue();
    // Without the filter on the supervisor the guard could not keep its promise: end now.
    if kq < 0 || !watch(kq, supervisor) {
        end_group();
    }
    // The command's filter only shortens the wait; a command already gone is found by waitpid.
    watch(kq, command);
    loop {
        // Registered after the fork: a supervisor that died before it is seen here (its child
        // went to launchd).
        if libc::getppid() != supervisor {
            end_group();
        }
        let mut status = 0;
        if libc::waitpid(command, &mut status, libc::WNOHANG) == command {
            mirror(status);
        }
        // SAFETY of the zeroed event: plain data, written by kevent.
        let mut event: libc::kevent = std::mem::zeroed();
        let n = libc::kevent(kq, std::ptr::null(), 0, &mut event, 1, &LOOK_AGAIN);
        if n > 0 && event.ident == supervisor as libc::uintptr_t {
            end_group();
        }
    }
}

/// SIGKILLs the guard's process group: the command, what it started in the group, and the guard.
unsafe fn end_group() -> ! {
    libc::kill(0, libc::SIGKILL);
    libc::_exit(1)
}

/// Closes every file descriptor (the supervisor's socket and the spawn's status pipe among them,
/// so that the spawn returns once the command has exec'd or failed to).
unsafe fn close_all() {
    let max = libc::getdtablesize().clamp(0, 65_536);
    for fd in 0..max {
        libc::close(fd);
    }
}
