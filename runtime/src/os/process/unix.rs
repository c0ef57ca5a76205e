//! Unix (Linux and macOS alike): the supervisor's channel is one Unix socket, its stdin, that
//! carries the runtime's orders and the supervisor's reports and passes descriptors with
//! `SCM_RIGHTS`; the command's tree is a process group of its own (led, on Linux, by its guard).

#![allow(unsafe_code)]

use std::io::{self, IoSlice, IoSliceMut, Write};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use nix::sys::signal::{killpg, Signal};
use nix::sys::socket::{recvmsg, sendmsg, ControlMessage, ControlMessageOwned, MsgFlags};
use nix::unistd::Pid;

use super::{command_pid, guard_spawn, kill_orphans, RECV_FLAGS};

/// What rides along with an order: a descriptor (the runtime's pidfd, the node's socket).
pub(crate) type Attachment = OwnedFd;

/// The runtime's end of the channel, for orders.
pub(crate) struct Orders(UnixStream);

/// The runtime's end of the channel, for reports (the same socket).
pub(crate) type Reports = UnixStream;

impl Orders {
    pub(crate) fn send(&self, bytes: &[u8]) -> io::Result<()> {
        (&self.0).write_all(bytes)
    }

    /// Writes `bytes` with `fd` attached.
    pub(crate) fn send_with(&self, bytes: &[u8], fd: &Attachment) -> io::Result<()> {
        let fds = [fd.as_raw_fd()];
        let cmsg = [ControlMessage::ScmRights(&fds)];
        let sent = sendmsg::<()>(self.0.as_raw_fd(), &[IoSlice::new(bytes)], &cmsg, MsgFlags::empty(), None)
            .map_err(io::Error::from)?;
        // The descriptor went with the first byte; the rest (if the buffer was full) follows plainly.
        self.send(&bytes[sent..])
    }

    /// Ends the channel: the supervisor reads end of file (and so does the report reader).
    pub(crate) fn close(&self) {
        let _ = self.0.shutdown(std::net::Shutdown::Both);
    }

    pub(crate) fn try_clone(&self) -> io::Result<Orders> {
        self.0.try_clone().map(Orders)
    }
}

/// Starts the supervisor (`cmd`, its program and arguments set) with the channel as its stdin.
pub(crate) fn spawn_supervisor(mut cmd: std::process::Command) -> io::Result<(Orders, Reports, Child)> {
    let (ours, theirs) = UnixStream::pair()?;
    cmd.stdin(Stdio::from(OwnedFd::from(theirs)));
    // The supervisor prints the `death_notice` line, and the command writes its output, to
    // this process's standard output and error. Some hosts (Node.js) hold those
    // close-on-exec, which an inherited descriptor would not survive (the child would find
    // /dev/null there); duplicates handed over explicitly are installed without the flag.
    if let Ok(fd) = io::stdout().as_fd().try_clone_to_owned() {
        cmd.stdout(Stdio::from(fd));
    }
    if let Ok(fd) = io::stderr().as_fd().try_clone_to_owned() {
        cmd.stderr(Stdio::from(fd));
    }
    // Its own session: a signal to the runtime's process group (Ctrl-Z, `kill -STOP --
    // -PGID`, `kill -9 -- -PGID`, a process manager's group kill) must not pause or kill the
    // supervisor together with the runtime; it outlives the runtime to end the command.
    // SAFETY: `setsid` is async-signal-safe, as `pre_exec` requires (and a freshly forked child
    // is never a process group leader, so it cannot fail with EPERM).
    unsafe {
        cmd.pre_exec(|| nix::unistd::setsid().map(drop).map_err(io::Error::from));
    }
    let child = cmd.spawn()?;
    let reports = ours.try_clone()?;
    Ok((Orders(ours), reports, child))
}

/// The supervisor's end of the channel, for orders.
pub(crate) struct OrderSource(UnixStream);

/// The supervisor's end of the channel, for reports.
pub(crate) type ReportSink = UnixStream;

impl OrderSource {
    /// Reads what is there: bytes into `buf`, and the descriptors that came with them.
    /// `Ok((0, []))` is the end of file.
    pub(crate) fn recv(&mut self, buf: &mut [u8]) -> io::Result<(usize, Vec<Attachment>)> {
        let mut cmsg = nix::cmsg_space!([RawFd; 4]);
        let mut iov = [IoSliceMut::new(buf)];
        let msg = recvmsg::<()>(self.0.as_raw_fd(), &mut iov, Some(&mut cmsg), RECV_FLAGS).map_err(io::Error::from)?;
        let mut fds = Vec::new();
        if let Ok(cmsgs) = msg.cmsgs() {
            for c in cmsgs {
                if let ControlMessageOwned::ScmRights(raw) = c {
                    // SAFETY: the kernel installed these descriptors in this process for us.
                    fds.extend(raw.into_iter().map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }));
                }
            }
        }
        Ok((msg.bytes, fds))
    }
}

/// The supervisor's channel: its stdin, a Unix socket.
pub(crate) fn supervisor_link() -> io::Result<(OrderSource, ReportSink)> {
    let socket = UnixStream::from(io::stdin().as_fd().try_clone_to_owned()?);
    let reports = socket.try_clone()?;
    Ok((OrderSource(socket), reports))
}

/// Signals meant for the runtime's process group (Ctrl-C, a service manager's SIGTERM) must not
/// end the supervisor before the command: it stops the command when the runtime orders it or
/// goes away. Registering a flag replaces the default action (termination).
pub(crate) fn ignore_stop_requests() {
    let ignored = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP] {
        let _ = signal_hook::flag::register(sig, Arc::clone(&ignored));
    }
}

/// Whether `fd` is a socket (the node's, to send from) rather than the runtime's death proof.
pub(crate) fn is_socket(fd: &Attachment) -> bool {
    nix::sys::socket::getsockopt(fd, nix::sys::socket::sockopt::SockType).is_ok()
}

/// The node's socket, handed over to send the notices from.
pub(crate) fn into_udp(fd: Attachment) -> Option<std::net::UdpSocket> {
    Some(std::net::UdpSocket::from(fd))
}

/// Calls `dead` once the process whose death proof `proof` is has died (its pidfd turned
/// readable).
pub(crate) fn watch_death(proof: Attachment, dead: impl FnOnce() + Send + 'static) {
    let _ = std::thread::Builder::new().name("tenure-watch".into()).spawn(move || loop {
        let mut fds = [nix::poll::PollFd::new(proof.as_fd(), nix::poll::PollFlags::POLLIN)];
        match nix::poll::poll(&mut fds, nix::poll::PollTimeout::NONE) {
            Ok(n) if n > 0 => return dead(),
            Err(nix::errno::Errno::EINTR) | Ok(_) => {}
            Err(_) => return,
        }
    });
}

/// The command and everything it started: its process group.
pub(crate) struct Tree {
    /// The group's leader: the guard on Linux, the command elsewhere.
    pgid: u32,
    /// The command's own pid.
    command: u32,
}

/// Spawns the command (`cmd`, stdin and environment set) in a process group of its own, under the
/// guard where there is one.
pub(crate) fn spawn_tree(cmd: &mut std::process::Command) -> io::Result<(Child, Tree)> {
    cmd.process_group(0);
    guard_spawn(cmd);
    let child = cmd.spawn()?;
    let pgid = child.id();
    Ok((child, Tree { pgid, command: command_pid(pgid) }))
}

fn signal_group(pgid: u32, signal: Signal) -> bool {
    i32::try_from(pgid).is_ok_and(|p| killpg(Pid::from_raw(p), signal).is_ok())
}

impl Tree {
    /// The tree's id in reports: its process group.
    pub(crate) fn id(&self) -> u32 {
        self.pgid
    }

    pub(crate) fn command_pid(&self) -> u32 {
        self.command
    }

    /// An ordered stop: SIGTERM to the group.
    pub(crate) fn stop(&self) {
        signal_group(self.pgid, Signal::SIGTERM);
    }

    /// SIGKILL to the group.
    pub(crate) fn kill(&self) {
        signal_group(self.pgid, Signal::SIGKILL);
    }

    /// The command ended (its group's leader was reaped): whatever it left in its process group
    /// goes with it, and whatever left the group and was handed to this subreaper when the guard
    /// died before it could end them.
    pub(crate) fn ended(&self) {
        self.kill();
        kill_orphans();
    }
}

/// `code:N` or `signal:N`.
pub(crate) fn status_text(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("code:{code}"),
        (None, Some(sig)) => format!("signal:{sig}"),
        (None, None) => "code:-1".into(),
    }
}

/// What the runtime's backstop ends, for its warning (followed by the tree's id).
pub(crate) const BACKSTOP_ENDS: &str = "its process group";

/// The runtime's backstop, first step: asks the command's guard (the group `pgid`) to end the
/// command's whole tree, or SIGKILLs the group where there is no guard; whether it existed. The
/// supervisor is not needed on Unix: the group can be reached from here.
pub(crate) fn end_tree(pgid: u32, _supervisor: Option<&mut Child>) -> bool {
    super::end_tree_by_guard(pgid).unwrap_or_else(|| signal_group(pgid, Signal::SIGKILL))
}

/// The runtime's backstop, last step: SIGKILLs the process group `pgid` (a guard that is stopped
/// too); whether it existed.
pub(crate) fn kill_tree(pgid: u32, _supervisor: Option<&mut Child>) -> bool {
    signal_group(pgid, Signal::SIGKILL)
}

/// Exits the way the command did: with its exit code, or killed by the same signal. The guard
/// process ends this way on every Unix, so that whoever waits for it sees the command's status.
pub(super) unsafe fn mirror(status: libc::c_int) -> ! {
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::kill(libc::getpid(), sig);
        libc::_exit(128 + sig);
    }
    libc::_exit(if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { 1 })
}
