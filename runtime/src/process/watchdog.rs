//! The watchdog's half of the supervisor process: the leader's death notices, sent from the
//! node's own address when — and only when — the runtime's process is proven dead.
//!
//! The runtime hands over, on the supervisor's channel (attached to an order: `SCM_RIGHTS` on
//! Unix):
//!
//! - once, at start, a pidfd of its own process (`watch`): the proof of death is that pidfd
//!   turning readable, which happens only when the whole process (every thread) has exited. A
//!   closed socket is not proof — a runtime thread that ended inside a living Python or Node.js
//!   process closes it too, while the process and its work live on — and neither is a parent pid
//!   (it can be reused) nor `PR_SET_PDEATHSIG` (it fires when the spawning *thread* ends);
//! - while the node leads, the notices (`arm TERM ID N` and `N` lines `notice ADDR HEX`) with a
//!   duplicate of the node's UDP socket attached; `disarm` drops both (a graceful handover, a lost
//!   leadership, a stop).
//!
//! When the process dies while armed, the supervisor first ends the leader-only command and its
//! whole tree (as it does for any end of the runtime), and sends only if that completed before
//! the command's lease deadline (see [`Death`]). The watchdog holds no key and no protocol state:
//! the datagrams were encoded and authenticated by the node.

use std::io::Write;
use std::net::{SocketAddr, UdpSocket};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::supervisor::Msg;
use crate::os::process::{into_udp, is_socket, watch_death, Attachment, OrderSource};

/// How long after its socket closed the watchdog waits for proof that the runtime's process died
/// (the kernel closes a dying process's files just before it reports the death). No proof in
/// this time: the process lives on (a runtime thread ended in it), and nothing is sent.
pub(crate) const DEATH_PROOF_WAIT: Duration = Duration::from_millis(500);

/// The runtime's side of arming: the order text for `armed` (the socket goes attached).
pub(crate) fn arm_order(id: &str, armed: &crate::notice::Armed) -> String {
    use std::fmt::Write as _;
    let mut s = format!("arm {} {id} {}\n", armed.term, armed.datagrams.len());
    for (addr, bytes) in &armed.datagrams {
        let _ = write!(s, "notice {addr} ");
        for b in bytes {
            let _ = write!(s, "{b:02x}");
        }
        s.push('\n');
    }
    s
}

/// Reads the runtime's orders and the descriptors that come with them, until the end of file.
/// Descriptors are passed on after the lines of the read that carried them (the kernel ends a
/// read at a message that carries descriptors, so they belong to its last order).
pub(crate) fn read_orders(mut source: OrderSource, tx: &mpsc::Sender<Msg>) {
    let mut pending = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let (n, fds) = match source.recv(&mut buf) {
            Ok(got) => got,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if n == 0 && fds.is_empty() {
            break;
        }
        pending.extend_from_slice(&buf[..n]);
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let line = String::from_utf8_lossy(&pending[..end]).into_owned();
            pending.drain(..=end);
            if tx.send(Msg::Order(line)).is_err() {
                return;
            }
        }
        for fd in fds.into_iter().filter(|_| crate::os::process::keep_received_fds()) {
            if tx.send(Msg::Fd(fd)).is_err() {
                return;
            }
        }
    }
    let _ = tx.send(Msg::Eof);
}

/// The notices the watchdog is armed with.
struct Notices {
    term: u64,
    id: String,
    expected: usize,
    datagrams: Vec<(SocketAddr, Vec<u8>)>,
    socket: Option<UdpSocket>,
}

/// The watchdog's state in the supervisor.
#[derive(Default)]
pub(crate) struct Watchdog {
    armed: Option<Notices>,
    watching: bool,
    /// Proof of the runtime process's death arrived.
    pub(crate) dead: bool,
    /// The runtime's socket closed: from then on, orders are final.
    pub(crate) closed_at: Option<Instant>,
}

/// What the supervisor knew of the leader-only command when the runtime's process died.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Death {
    /// No command ran: the process's death ended all of this leadership's work.
    NoCommand,
    /// A command ran and is not yet gone: wait.
    CommandRunning,
    /// The command and its whole tree ended before its lease deadline.
    CommandEndedInTime,
    /// The command's tree ended after its lease deadline (or its end could not be confirmed):
    /// send nothing; the followers' promises run out as for any crash.
    CommandEndedLate,
}

impl Watchdog {
    /// A descriptor from the runtime: its pidfd (watched from now on) or the node's socket (for
    /// the current notices).
    pub(crate) fn fd(&mut self, fd: Attachment, tx: &mpsc::Sender<Msg>) {
        if is_socket(&fd) {
            if let Some(n) = &mut self.armed {
                n.socket = into_udp(fd);
            }
        } else if !self.watching {
            self.watching = true;
            let tx = tx.clone();
            watch_death(fd, move || {
                let _ = tx.send(Msg::ParentDead);
            });
        }
    }

    /// A watchdog order; `false` if `line` is none.
    pub(crate) fn order(&mut self, line: &str) -> bool {
        let mut w = line.split(' ');
        match (w.next(), w.next(), w.next(), w.next(), w.next()) {
            (Some("arm"), Some(term), Some(id), Some(n), None) => {
                self.armed = match (term.parse(), n.parse()) {
                    (Ok(term), Ok(expected)) => {
                        Some(Notices { term, id: id.to_string(), expected, datagrams: Vec::new(), socket: None })
                    }
                    _ => None,
                };
            }
            (Some("notice"), Some(addr), Some(hex), None, None) => {
                if let (Some(n), Ok(addr), Some(bytes)) = (&mut self.armed, addr.parse(), unhex(hex)) {
                    n.datagrams.push((addr, bytes));
                }
            }
            (Some("disarm"), None, None, None, None) => self.armed = None,
            (Some("watch"), None, None, None, None) => {}
            _ => return false,
        }
        true
    }

    /// Whether the supervisor may exit: the runtime is gone and either its death is proven, or
    /// proof did not come in time, or nothing is armed.
    pub(crate) fn settled(&self) -> bool {
        self.dead
            || self.armed.is_none()
            || !self.watching
            || self.closed_at.is_some_and(|t| t.elapsed() >= DEATH_PROOF_WAIT)
    }

    /// When the supervisor must look again without a message (the end of the wait for proof).
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        (!self.dead && self.armed.is_some() && self.watching)
            .then_some(self.closed_at.map(|t| t + DEATH_PROOF_WAIT))
            .flatten()
    }

    /// Sends the notices if the runtime's process is proven dead and `death` allows it; at most
    /// once. Prints a `death_notice` line (the runtime cannot: it is dead).
    pub(crate) fn fire(&mut self, death: Death) {
        if !self.dead || !matches!(death, Death::NoCommand | Death::CommandEndedInTime) {
            return;
        }
        let Some(n) = self.armed.take() else { return };
        let Some(socket) = &n.socket else { return };
        if n.datagrams.len() != n.expected {
            return;
        }
        // The line's time is when the first notice left: a receiver may elect before the line
        // is written, and readers of the lines order that election after the notice.
        let at = crate::clock::wall_ms();
        let sent = n.datagrams.iter().filter(|(addr, bytes)| socket.send_to(bytes, addr).is_ok()).count();
        let line = crate::event::json_line(
            at,
            &n.id,
            "death_notice",
            &format!(",\"term\":{},\"sent\":{sent},\"peers\":{}", n.term, n.datagrams.len()),
        );
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}
