//! The run loop: one thread owning the engine and the socket (see the crate docs).
//!
//! One iteration is a short sequence of named steps over state grouped by concern:
//!
//! ```text
//! control  → the handles' commands, in the order they were sent
//! wait     → sleep until a datagram, the earliest deadline of any group, or a command
//! receive  → a batch of datagrams
//! timers   → the deadlines that passed
//! ```
//!
//! Each step gives the engine its inputs and then [`Loop::settle`]s: the engine's outputs leave
//! in order (`output.rs`), then the round is reported (`report.rs`: the handles' snapshot, the
//! counters, a pending `Leader` event, the stop's end, the quorum watch).
//!
//! # The host contract (an invariant of every step)
//!
//! - The engine is given inputs only on this thread, each with the time of one monotonic clock
//!   (`Shared::clock`), so time never goes backwards for it.
//! - Every input (a datagram, a timeout, a command, a `peer_down`, a confirmation) is followed by
//!   a drain before the next wait, so the engine's outputs leave in the order it produced them,
//!   and a `Persist` is durable before any `Send` or event produced after it leaves (a failed
//!   write is fatal and nothing else leaves).
//! - The only blocking call is the wait; its timeout is the earliest deadline any group holds
//!   ([`Loop::next_deadline`]), so no deadline is served late by more than the time one step
//!   takes.
//! - The handler is called on this thread only; after it panicked it is not called again.
//!
//! The grouping follows quinn-proto's `Connection` (state split by concern, each part with its
//! own deadlines) and the loop follows str0m's (feed one input, drain every output, wait for the
//! earliest timeout).

use std::io::ErrorKind;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use mio::net::UdpSocket;
use mio::{Events, Poll, Token};
use tenure::{DurableState, Role};

use crate::handle::{Command, Shared};
use crate::policy::FailureCounter;
use crate::probe::Prober;
use crate::resolve::Peers;
use crate::state::StateFile;
use crate::warn::Warner;
use crate::{Engine, Handler, RuntimeError, RuntimeEvent};

mod control;
mod handover;
mod output;
mod receive;
mod report;

pub(crate) const SOCKET: Token = Token(0);
pub(crate) const WAKER: Token = Token(1);
/// Larger than any datagram the core accepts (`tenure::MAX_MESSAGE_SIZE`), so oversized input is
/// seen whole and counted as such.
pub(crate) const RECV_BUFFER: usize = 65_536;

/// The socket side: how the loop waits, and the buffers it reads and writes with.
pub(crate) struct Io {
    pub(crate) poll: Poll,
    pub(crate) events: Events,
    pub(crate) socket: UdpSocket,
    /// Commands from the handles, and the resolver thread's answers.
    pub(crate) commands: mpsc::Receiver<Command>,
    /// One received datagram ([`RECV_BUFFER`] bytes).
    pub(crate) buf: Vec<u8>,
    /// The destination and bytes of the `Send` being drained (`Engine::poll_output_into`), kept
    /// across rounds so that sending allocates nothing.
    pub(crate) out_to: String,
    pub(crate) out_bytes: Vec<u8>,
    /// The last `receive` stopped at a batch limit: read again without waiting.
    pub(crate) readable: bool,
}

impl Io {
    pub(crate) fn new(poll: Poll, socket: UdpSocket, commands: mpsc::Receiver<Command>) -> Self {
        Io {
            poll,
            events: Events::with_capacity(64),
            socket,
            commands,
            buf: vec![0; RECV_BUFFER],
            out_to: String::new(),
            out_bytes: Vec::new(),
            readable: false,
        }
    }
}

/// The durable term and vote: the state file, and a `Persist` not written yet (consecutive ones
/// coalesce into one write before the next `Send` or event).
pub(crate) struct Durable {
    pub(crate) file: Option<StateFile>,
    pub(crate) pending: Option<DurableState>,
}

/// The other members: their addresses (DNS names resolved off the loop) and the prober that
/// watches a quiet leader (`probe.rs`).
pub(crate) struct Net {
    pub(crate) peers: Peers,
    /// `None` when ICMP errors cannot be read.
    pub(crate) prober: Option<Prober>,
    /// How this OS reports a refused port (`Some` exactly when `prober` is).
    pub(crate) refusals: Option<crate::os::probe::Refusals>,
    /// The node's heartbeat interval (when to probe a quiet leader).
    pub(crate) heartbeat_interval: u64,
}

impl Net {
    /// When a name is looked up again or the quiet leader is probed next.
    fn next_deadline(&self) -> Option<u64> {
        let probe = self.prober.as_ref().and_then(|p| p.due(self.heartbeat_interval));
        [self.peers.next_deadline(), probe].into_iter().flatten().min()
    }
}

/// Leadership as the application sees it: the confirm gate, the `Leader` event that waits for a
/// valid lease, and the leader-work failure policy's counters.
pub(crate) struct Lead {
    pub(crate) confirm_timeout: u64,
    /// A deferred confirmation: (term, deadline).
    pub(crate) confirm_pending: Option<(u64, u64)>,
    /// A term this node leads whose `Leader` event waits for a valid lease (see
    /// [`Loop::deliver_leadership`]).
    pub(crate) leader_pending: Option<u64>,
    /// Publishing death notices for a watchdog (`None`: off).
    pub(crate) notices: Option<NoticeRefresh>,
    pub(crate) failures: FailureCounter,
    /// A preemption's transfer waiting for the leader work to stop (`handover.rs`).
    pub(crate) held: Option<handover::HeldTransfer>,
    /// How long it may wait at most (`election_timeout_max`).
    pub(crate) hold_limit: u64,
}

/// When the published death notices are recomputed: on a new term, and every
/// [`crate::notice::REFRESH_MS`] while leading.
pub(crate) struct NoticeRefresh {
    pub(crate) next: u64,
    /// The term they were last computed in (0: none published).
    pub(crate) term: u64,
}

/// How the loop ends.
pub(crate) enum Exit {
    Graceful,
    Fatal(RuntimeError),
}

/// Stopping: the graceful handover and the loop's end.
pub(crate) struct Stop {
    /// How long a stopping leader waits for another node to lead.
    pub(crate) handover_timeout: u64,
    /// Stopping gracefully: the handover deadline.
    pub(crate) deadline: Option<u64>,
    /// Set when the loop must end.
    pub(crate) exit: Option<Exit>,
}

impl Stop {
    pub(crate) fn new(handover_timeout: u64) -> Self {
        Stop { handover_timeout, deadline: None, exit: None }
    }
    /// The loop ends after this step.
    fn ended(&self) -> bool {
        self.exit.is_some()
    }
    /// It ends because something failed: nothing more may leave.
    fn failed(&self) -> bool {
        matches!(self.exit, Some(Exit::Fatal(_)))
    }
    fn stopping(&self) -> bool {
        self.deadline.is_some()
    }
}

/// When the members' silence is assessed next, and since when no leader has been known (see
/// `quorum.rs`).
pub(crate) struct QuorumWatch {
    pub(crate) next: u64,
    /// How often (the heartbeat interval: `inspect` allocates).
    pub(crate) every: u64,
    /// `None`: a leader is known.
    pub(crate) leaderless_since: Option<u64>,
    /// Since when this node leads (`None`: it does not).
    pub(crate) leading_since: Option<u64>,
    /// How long a member may go unheard before it counts as silent.
    pub(crate) silent_after: u64,
}

/// What the loop tells people: log lines, rate-limited warnings, the quorum watch.
pub(crate) struct Report {
    pub(crate) id: String,
    pub(crate) log: bool,
    pub(crate) warner: Warner,
    /// The cluster key (to show what a dropped datagram claimed).
    pub(crate) key: Option<Vec<u8>>,
    /// Said once, after `Started`.
    pub(crate) start_term: u64,
    pub(crate) config_warnings: Vec<(String, String)>,
    pub(crate) quorum: QuorumWatch,
}

pub(crate) struct Loop<E, H> {
    /// The sans-IO node (the core, or a component engine).
    pub(crate) engine: E,
    /// The application, called on this thread.
    pub(crate) handler: H,
    /// What the handles read, and how they reach the loop.
    pub(crate) shared: Arc<Shared>,
    pub(crate) io: Io,
    pub(crate) durable: Durable,
    pub(crate) net: Net,
    pub(crate) lead: Lead,
    pub(crate) stop: Stop,
    pub(crate) report: Report,
}

impl<E: Engine, H: Handler> Loop<E, H> {
    fn now(&self) -> u64 {
        self.shared.clock.now()
    }

    pub(crate) fn run(&mut self) {
        self.start();
        while !self.stop.ended() {
            self.control();
            if self.stop.ended() {
                break;
            }
            let readable = self.wait();
            if readable {
                self.io.readable = self.receive();
            }
            if self.io.events.iter().any(|e| e.token() == crate::os::probe::PROBE) && !self.stop.ended() {
                self.icmp_errors();
            }
            if !self.stop.ended() {
                self.timers();
            }
        }
        self.finish();
    }

    /// `Started`, then the warnings about the configuration.
    fn start(&mut self) {
        let _ = self.shared.thread_id.set(std::thread::current().id());
        let (id, term) = (self.report.id.clone(), self.report.start_term);
        if self.report.log {
            log::info!(target: "tenure", "{id}: started on {} in term {term}", self.shared.bound);
        }
        self.emit(RuntimeEvent::Started { id, bound_addr: self.shared.bound, term });
        for (code, message) in std::mem::take(&mut self.report.config_warnings) {
            self.emit_warning(code, message);
        }
        self.after_round();
    }

    /// The handles' commands, in order, until none is queued or the loop ends.
    fn control(&mut self) {
        while let Ok(cmd) = self.io.commands.try_recv() {
            self.command(cmd);
            if self.stop.ended() {
                break;
            }
        }
    }

    /// Sleeps until a datagram, the earliest deadline or a command (the waker); `true` when the
    /// socket may have datagrams. A failing wait is fatal.
    fn wait(&mut self) -> bool {
        let now = self.now();
        let timeout = match self.io.readable {
            true => Some(Duration::ZERO),
            false => self.next_deadline().map(|d| Duration::from_millis(d.saturating_sub(now))),
        };
        if let Err(e) = self.io.poll.poll(&mut self.io.events, timeout) {
            if e.kind() != ErrorKind::Interrupted {
                self.fatal(RuntimeError::Io { context: "waiting for events".into(), message: e.to_string() });
                return false;
            }
        }
        self.io.readable || self.io.events.iter().any(|e| e.token() == SOCKET)
    }

    /// The earliest deadline of any group.
    fn next_deadline(&mut self) -> Option<u64> {
        [
            self.engine.poll_timeout(),
            self.lead.confirm_pending.map(|(_, d)| d),
            self.stop.deadline,
            self.net.next_deadline(),
            self.held_transfer_deadline(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Serves every deadline that passed: the quiet leader's probe, the engine's timeout, an
    /// unanswered confirmation (denied), DNS lookups.
    fn timers(&mut self) {
        let now = self.now();
        let probe = self.net.prober.as_mut().and_then(|p| p.take_due(now, self.net.heartbeat_interval));
        if let Some(leader) = probe {
            let alone = match (&mut self.net.refusals, self.net.peers.dest(&leader)) {
                (Some(r), Some(dest)) => r.probe_alone(self.io.poll.registry(), dest),
                _ => false,
            };
            if !alone {
                self.send(&leader, &[]);
            }
        }
        if self.engine.poll_timeout().is_some_and(|d| d <= now) {
            self.engine.handle_timeout(now);
            self.drain();
        }
        if let Some((term, deadline)) = self.lead.confirm_pending {
            if deadline <= now {
                self.lead.confirm_pending = None;
                if self.engine.confirm_leader(now, term, false).is_ok() {
                    let t = self.lead.confirm_timeout;
                    self.warn(now, "confirm_timeout", "", || {
                        format!("the leadership confirmation for term {term} was not answered within {t} ms: denied")
                    });
                }
                self.drain();
            }
        }
        if self.net.peers.next_deadline().is_some_and(|d| d <= now) {
            self.net.peers.lookup_due(now);
        }
        self.serve_held_transfer(now);
        self.after_round();
    }

    /// After an input: the outputs leave, then the round is reported.
    fn settle(&mut self) {
        self.drain();
        self.after_round();
    }

    /// Goodbyes, the last snapshot, `Stopped`.
    fn finish(&mut self) {
        let term = self.engine.term();
        if let Some(Exit::Fatal(e)) = &self.stop.exit {
            *self.shared.fatal.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.clone());
        }
        if self.report.log {
            log::info!(target: "tenure", "{}: stopped in term {term}", self.report.id);
        }
        self.say_goodbye();
        // Disarm before the snapshot says this node stopped leading (a follower of the snapshot
        // sees both), and let the socket go with the runtime.
        self.shared.notices.set(None);
        self.shared.notices.set_socket(None);
        self.shared.snapshot.publish(Role::Follower, term, None, None, None);
        self.emit(RuntimeEvent::Stopped { term });
        self.shared.running.store(false, Ordering::Release);
    }
}
