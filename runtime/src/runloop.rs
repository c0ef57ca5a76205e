//! The run loop: one thread owning the engine and the socket (see the crate docs).

use std::io::ErrorKind;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use mio::net::UdpSocket;
use mio::{Events, Poll, Token};
use tenure::{DurableState, PeerDownReason, Role};

use crate::handle::{Command, Reply, Shared};
use crate::policy::{Decision, FailureCounter};
use crate::probe::{refused_destinations, Prober};
use crate::resolve::{Family, Peers, Update};
use crate::state::StateFile;
use crate::warn::Warner;
use crate::{Engine, Handler, LeaderWorkVerdict, RuntimeError, RuntimeEvent};

mod output;

pub(crate) const SOCKET: Token = Token(0);
pub(crate) const WAKER: Token = Token(1);
/// Larger than any datagram the core accepts (`tenure::MAX_MESSAGE_SIZE`), so oversized input is
/// seen whole and counted as such.
pub(crate) const RECV_BUFFER: usize = 65_536;
/// What a stopping runtime sends every peer (docs/wire.md, "Goodbyes"): one zero byte, shorter
/// than any message. From a known peer it is reported to the engine as `peer_down(refused)`: the
/// peer is no handover target until heard from again (a rolling stop must not hand leadership
/// to the node stopped a moment before), and a follower of it stops waiting for it. As
/// unauthenticated as the ICMP answer it stands in for, and as harmless: liveness only.
pub(crate) const GOODBYE: [u8; 1] = [0];
/// Datagrams handled per wake-up before timers and commands get their turn (a flood cannot
/// starve the heartbeat timer); the rest are read on the next turn.
const RECV_BATCH: usize = 256;

pub(crate) struct Loop<E, H> {
    pub(crate) engine: E,
    pub(crate) handler: H,
    pub(crate) shared: Arc<Shared>,
    pub(crate) poll: Poll,
    pub(crate) socket: UdpSocket,
    pub(crate) rx: mpsc::Receiver<Command>,
    pub(crate) state: Option<StateFile>,
    pub(crate) peers: Peers,
    pub(crate) warner: Warner,
    pub(crate) log: bool,
    pub(crate) id: String,
    pub(crate) config_warnings: Vec<(String, String)>,
    pub(crate) confirm_timeout: u64,
    pub(crate) handover_timeout: u64,
    /// A deferred confirmation: (term, deadline).
    pub(crate) confirm_pending: Option<(u64, u64)>,
    /// Stopping gracefully: the handover deadline.
    pub(crate) stopping: Option<u64>,
    /// Set when the loop must end: `Some(None)` graceful, `Some(Some(e))` fatal.
    pub(crate) exit: Option<Option<RuntimeError>>,
    pub(crate) pending_persist: Option<DurableState>,
    pub(crate) buf: Vec<u8>,
    /// The destination and bytes of the `Send` being drained (`Engine::poll_output_into`), kept
    /// across rounds so that sending allocates nothing.
    pub(crate) out_to: String,
    pub(crate) out_bytes: Vec<u8>,
    pub(crate) start_term: u64,
    /// The last `receive` stopped at a batch limit: read again without waiting.
    pub(crate) readable: bool,
    /// Probes a quiet leader (see `probe.rs`); `None` when ICMP errors cannot be read.
    pub(crate) prober: Option<Prober>,
    /// The node's heartbeat interval (when to probe a quiet leader).
    pub(crate) heartbeat_interval: u64,
    /// The leader-work failure policy's counters.
    pub(crate) failures: FailureCounter,
    /// The cluster key (to show what a dropped datagram claimed).
    pub(crate) key: Option<Vec<u8>>,
    /// When the members' silence is assessed next (see `quorum.rs`).
    pub(crate) quorum_next: u64,
    /// Since when no leader has been known (`None`: one is known).
    pub(crate) leaderless_since: Option<u64>,
    /// How long a member may go unheard before it counts as silent.
    pub(crate) silent_after: u64,
    /// A term this node leads whose `Leader` event waits for a valid lease (see
    /// [`Loop::deliver_leadership`]).
    pub(crate) leader_pending: Option<u64>,
}

impl<E: Engine, H: Handler> Loop<E, H> {
    fn now(&self) -> u64 {
        self.shared.clock.now()
    }

    pub(crate) fn run(&mut self) {
        let _ = self.shared.thread_id.set(std::thread::current().id());
        if self.log {
            log::info!(target: "tenure", "{}: started on {} in term {}", self.id, self.shared.bound, self.start_term);
        }
        self.emit(RuntimeEvent::Started { id: self.id.clone(), bound_addr: self.shared.bound, term: self.start_term });
        for (code, message) in std::mem::take(&mut self.config_warnings) {
            self.emit_warning(code, message);
        }
        self.after_round();
        let mut events = Events::with_capacity(64);
        while self.exit.is_none() {
            while let Ok(cmd) = self.rx.try_recv() {
                self.command(cmd);
                if self.exit.is_some() {
                    break;
                }
            }
            if self.exit.is_some() {
                break;
            }
            let now = self.now();
            let timeout = match self.readable {
                true => Some(Duration::ZERO),
                false => self.next_deadline().map(|d| Duration::from_millis(d.saturating_sub(now))),
            };
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() != ErrorKind::Interrupted {
                    self.fatal(RuntimeError::Io { context: "waiting for events".into(), message: e.to_string() });
                    break;
                }
            }
            if self.readable || events.iter().any(|e| e.token() == SOCKET) {
                self.readable = self.receive();
            }
            if self.exit.is_none() {
                self.timers();
            }
        }
        self.finish();
    }

    fn finish(&mut self) {
        let term = self.engine.term();
        if let Some(Some(e)) = &self.exit {
            *self.shared.fatal.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.clone());
        }
        if self.log {
            log::info!(target: "tenure", "{}: stopped in term {term}", self.id);
        }
        self.say_goodbye();
        self.shared.snapshot.publish(Role::Follower, term, None, None);
        self.emit(RuntimeEvent::Stopped { term });
        self.shared.running.store(false, Ordering::Release);
    }

    fn next_deadline(&mut self) -> Option<u64> {
        let probe = self.prober.as_ref().and_then(|p| p.due(self.heartbeat_interval));
        [
            self.engine.poll_timeout(),
            self.confirm_pending.map(|(_, d)| d),
            self.stopping,
            self.peers.next_deadline(),
            probe,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    // ----- inputs ----------------------------------------------------------------------------

    /// Reads datagrams until the socket is empty (`false`) or a batch is done (`true`: more may
    /// be waiting, and the edge-triggered poll will not say so again).
    fn receive(&mut self) -> bool {
        for _ in 0..RECV_BATCH {
            match self.socket.recv_from(&mut self.buf) {
                Ok((n, source)) => {
                    let source = Family::source(source);
                    let now = self.now();
                    let from = match self.peers.id_of(source) {
                        Some(id) => id.to_string(),
                        None => {
                            self.peers.unknown_source(now);
                            source.to_string()
                        }
                    };
                    // A declared peer whose ghost expired is back: declare it again (its own input,
                    // drained before the datagram's).
                    if let Some(p) = self.peers.by_id.get_mut(&from) {
                        if p.declared && !p.in_view {
                            p.in_view = true;
                            let _ = self.engine.join(now, &from);
                            self.drain();
                        }
                    }
                    if let Some(p) = &mut self.prober {
                        p.heard(&from, now);
                    }
                    if n == 0 {
                        // A probe from a follower whose leader went quiet (docs/wire.md): its
                        // arrival is the answer; nothing to handle.
                        continue;
                    }
                    if self.buf.get(..n) == Some(&GOODBYE[..]) {
                        self.goodbye(&from, now);
                        continue;
                    }
                    let len = n.min(self.buf.len());
                    let result = self.engine.handle_message(now, &from, self.buf.get(..len).unwrap_or_default());
                    match result {
                        Ok(()) => {
                            if let Some(p) = self.peers.by_id.get_mut(&from) {
                                p.down_reported = false;
                                p.refused_reported = false;
                                p.heard_at = Some(now);
                            }
                        }
                        Err(reason) => self.dropped(reason, &from, source, len, now),
                    }
                    self.drain();
                    self.after_round();
                    if self.exit.is_some() {
                        return false;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return false,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                // ICMP errors reported on the socket (a peer's port closed): not a socket failure;
                // the error queue says whose.
                Err(e) if matches!(e.kind(), ErrorKind::ConnectionRefused | ErrorKind::ConnectionReset) => {
                    self.icmp_errors();
                    if self.exit.is_some() {
                        return false;
                    }
                }
                Err(e) => {
                    let now = self.now();
                    self.warn(now, "socket_error", "", || format!("receiving on the UDP socket failed: {e}"));
                    return false;
                }
            }
        }
        true
    }

    /// A known peer said it is stopping: `peer_down(refused)` (see [`GOODBYE`]).
    fn goodbye(&mut self, from: &str, now: u64) {
        let Some(p) = self.peers.by_id.get_mut(from) else { return };
        p.refused_reported = true;
        if self.log {
            log::info!(target: "tenure", "{}: peer {from} is stopping", self.id);
        }
        let _ = self.engine.peer_down(now, from, PeerDownReason::Refused);
        self.drain();
        self.after_round();
    }

    /// Sends [`GOODBYE`] to every peer with an address (best effort: a lost one costs what it
    /// did before, a handover to a stopped peer that its election timeout repairs).
    fn say_goodbye(&mut self) {
        let dests: Vec<std::net::SocketAddr> = self.peers.by_id.keys().filter_map(|id| self.peers.dest(id)).collect();
        for addr in dests {
            let _ = self.socket.send_to(&GOODBYE, addr);
        }
    }

    /// Reads the queued ICMP errors and reports a refused port to the engine: for the peer the
    /// prober watches (the leader this follower listens to) every time, for any other peer once
    /// until it is heard from again (the core then hands leadership to it no more; a leader whose
    /// follower died would otherwise pass it one refusal per heartbeat).
    fn icmp_errors(&mut self) {
        let Some(prober) = &self.prober else { return };
        let refused = refused_destinations(&self.socket);
        let mut watched: Vec<String> = Vec::new();
        for addr in refused {
            let Some(peer) = self.peers.id_of(Family::source(addr)).map(str::to_string) else { continue };
            let first =
                self.peers.by_id.get_mut(&peer).is_some_and(|p| !std::mem::replace(&mut p.refused_reported, true));
            if (prober.watches(&peer) || first) && !watched.contains(&peer) {
                watched.push(peer);
            }
        }
        for peer in watched {
            let now = self.now();
            if self.log {
                if let Some(m) = self.warner.note(now, "peer_refused", &peer, || {
                    format!("{peer}'s port refused a datagram: its process is gone (it stays a member)")
                }) {
                    log::info!(target: "tenure", "{}: {m}", self.id);
                }
            }
            let _ = self.engine.peer_down(now, &peer, PeerDownReason::Refused);
            self.drain();
            self.after_round();
        }
    }

    fn timers(&mut self) {
        let now = self.now();
        let probe = self.prober.as_mut().and_then(|p| p.take_due(now, self.heartbeat_interval));
        if let Some(leader) = probe {
            self.send(&leader, &[]);
        }
        if self.engine.poll_timeout().is_some_and(|d| d <= now) {
            self.engine.handle_timeout(now);
            self.drain();
        }
        if let Some((term, deadline)) = self.confirm_pending {
            if deadline <= now {
                self.confirm_pending = None;
                if self.engine.confirm_leader(now, term, false).is_ok() {
                    let t = self.confirm_timeout;
                    self.warn(now, "confirm_timeout", "", || {
                        format!("the leadership confirmation for term {term} was not answered within {t} ms: denied")
                    });
                }
                self.drain();
            }
        }
        if self.peers.next_deadline().is_some_and(|d| d <= now) {
            self.peers.lookup_due(now);
        }
        self.after_round();
    }

    fn command(&mut self, cmd: Command) {
        let now = self.now();
        match cmd {
            Command::Transfer(peer, r) => {
                let result = match peer.or_else(|| self.engine.transfer_target()) {
                    Some(target) => self.engine.transfer_leadership(now, &target).map_err(RuntimeError::from),
                    None if self.engine.role() != Role::Leader => Err(RuntimeError::Node(tenure::Error::NotLeader)),
                    None => Err(RuntimeError::NoTransferTarget),
                };
                self.reply(r, result);
            }
            Command::Inspect(r) => {
                let i = self.engine.inspect();
                self.reply(r, Ok(i));
            }
            Command::Broadcast(payload, r) => {
                let result = self.engine.broadcast(now, &payload).map_err(RuntimeError::from);
                self.reply(r, result);
            }
            Command::Join(peer, r) => {
                let result = self.engine.join(now, &peer).map_err(RuntimeError::from);
                if result.is_ok() && peer != self.id {
                    self.peers.add(&peer, true, now);
                    if let Some(p) = self.peers.by_id.get_mut(&peer) {
                        p.in_view = true;
                    }
                }
                self.reply(r, result);
            }
            Command::Leave(peer, r) => {
                let result = self.engine.leave(now, &peer).map_err(RuntimeError::from);
                if result.is_ok() {
                    self.peers.remove(&peer);
                }
                self.reply(r, result);
            }
            Command::PeerDown(peer, reason, r) => {
                let result = self.engine.peer_down(now, &peer, reason).map_err(RuntimeError::from);
                if result.is_ok() && reason == PeerDownReason::Terminated {
                    self.peers.remove(&peer);
                }
                self.reply(r, result);
            }
            Command::ConfirmLeader(term, granted, r) => {
                if self.confirm_pending.is_some_and(|(t, _)| t == term) {
                    self.confirm_pending = None;
                }
                // A stopping node does not take leadership.
                let granted = granted && self.stopping.is_none();
                let result = self.engine.confirm_leader(now, term, granted).map_err(RuntimeError::from);
                self.reply(r, result);
            }
            Command::LeaderWorkFailed(term, at_once, r) => {
                let result = self.leader_work_failed(now, term, at_once);
                self.reply(r, result);
            }
            Command::Stop(handover) => self.begin_stop(now, handover.unwrap_or(self.handover_timeout)),
            Command::Resolved { name, result } => {
                for (id, update) in self.peers.resolved(&name, result, now) {
                    match update {
                        Update::None => {}
                        Update::Resolved { rejoin } => {
                            if self.log {
                                let addr = self.peers.dest(&id).map(|a| a.to_string()).unwrap_or_default();
                                log::info!(target: "tenure", "{}: peer {id} resolved to {addr}", self.id);
                            }
                            if rejoin {
                                if let Some(p) = self.peers.by_id.get_mut(&id) {
                                    p.in_view = true;
                                }
                                let _ = self.engine.join(now, &id);
                                self.drain();
                            }
                        }
                        Update::Failed { error } => {
                            self.warn(now, "unresolved_name", &id, || {
                                format!("cannot resolve peer {id}: {error} (retrying with backoff)")
                            });
                        }
                    }
                }
            }
        }
        self.drain();
        self.after_round();
    }

    fn reply<T>(&mut self, r: Reply<T>, result: Result<T, RuntimeError>) {
        match r {
            Some(tx) => {
                let _ = tx.send(result);
            }
            None => {
                if let Err(e) = result {
                    self.emit_warning(e.code().to_string(), e.to_string());
                }
            }
        }
    }

    /// The failure policy (see `policy.rs`): count, then retry, step down or stop.
    fn leader_work_failed(&mut self, now: u64, term: u64, at_once: bool) -> Result<LeaderWorkVerdict, RuntimeError> {
        let decision = self.failures.failed(term, at_once);
        if decision != Decision::NotLeading && decision != Decision::AlreadyFailed {
            self.shared.counters.leader_work_failure();
        }
        match decision {
            Decision::Retry(after) => Ok(LeaderWorkVerdict::Retry { after }),
            Decision::AlreadyFailed => Ok(LeaderWorkVerdict::SteppedDown),
            Decision::NotLeading => Err(RuntimeError::Node(tenure::Error::NotLeaderInTerm { term })),
            Decision::StepDown { failures, step_downs, hold } => {
                self.hand_over_failed(now, term, hold);
                self.shared.counters.leader_work_step_down();
                let limit = match self.failures.policy().max_step_downs {
                    Some(max) => format!("{step_downs} of {max} failed leaderships in a row before the node stops"),
                    None => format!("{step_downs} failed leadership(s) in a row; the node keeps participating"),
                };
                let hold = hold.as_millis();
                self.warn(now, "leader_work_failed", "", || {
                    format!(
                        "leader-only work failed {failures} time(s) in term {term}: handing leadership over and \
                         campaigning last for {hold} ms ({limit})"
                    )
                });
                Ok(LeaderWorkVerdict::SteppedDown)
            }
            Decision::Stop { step_downs } => {
                let error = RuntimeError::LeaderWorkFailed { leaderships: step_downs, term };
                if self.log {
                    log::error!(target: "tenure", "{}: {error}; stopping", self.id);
                }
                *self.shared.fatal.lock().unwrap_or_else(|p| p.into_inner()) = Some(error.clone());
                self.emit(RuntimeEvent::Fatal { error });
                // A leader hands over (it denies any confirmation while stopping).
                self.begin_stop(now, self.handover_timeout);
                Ok(LeaderWorkVerdict::Stopping)
            }
        }
    }

    /// Leader work of `term` keeps failing: hand leadership to the peer the core picks (else roll
    /// it back), and campaign last for `hold`, so that any other member that can lead does.
    pub(crate) fn hand_over_failed(&mut self, now: u64, term: u64, hold: Duration) {
        let handed = match self.engine.transfer_target() {
            Some(target) => self.engine.transfer_leadership(now, &target).is_ok(),
            None => false,
        };
        if !handed {
            let _ = self.engine.leader_handler_failed(now, term);
        }
        let hold = u64::try_from(hold.as_millis()).unwrap_or(u64::MAX);
        self.engine.hold_campaigns(now, now.saturating_add(hold));
    }

    fn begin_stop(&mut self, now: u64, handover: u64) {
        if self.stopping.is_some() || self.exit.is_some() {
            return;
        }
        if self.engine.role() != Role::Leader {
            self.exit = Some(None);
            return;
        }
        let Some(target) = self.engine.transfer_target() else {
            self.emit_warning(
                "no_transfer_target".into(),
                "stopping as leader with no peer to hand leadership to: the others elect after their election timeout"
                    .into(),
            );
            self.exit = Some(None);
            return;
        };
        match self.engine.transfer_leadership(now, &target) {
            Ok(()) => {
                if self.log {
                    log::info!(target: "tenure", "{}: stopping: handing leadership to {target}", self.id);
                }
                self.stopping = Some(now.saturating_add(handover));
                self.handover_timeout = handover;
            }
            Err(e) => {
                self.emit_warning(e.code().into(), format!("stopping: leadership transfer to {target} failed: {e}"));
                self.exit = Some(None);
            }
        }
    }

    // ----- after every round -----------------------------------------------------------------

    fn after_round(&mut self) {
        if let Some(message) = self.engine.failure() {
            if self.exit.is_none() {
                self.fatal(RuntimeError::Engine { message });
            }
            return;
        }
        let (role, leader) = self.publish();
        let now = self.now();
        let term = self.engine.term();
        self.deliver_leadership(now);
        let peers = self.peers.by_id.values().map(|p| (p.in_view, p.down_reported));
        self.shared.counters.after_round(now, role, term, leader.as_deref(), self.stopping.is_some(), peers);
        if let Some(deadline) = self.stopping {
            if self.exit.is_none() {
                if leader.as_deref().is_some_and(|l| l != self.id) {
                    self.exit = Some(None);
                } else if now >= deadline {
                    let t = self.handover_timeout;
                    self.emit_warning(
                        "handover_timeout".into(),
                        format!("stopping: no new leader known within {t} ms; stopping anyway"),
                    );
                    self.exit = Some(None);
                }
            }
        }
        if now >= self.quorum_next && self.exit.is_none() && self.stopping.is_none() {
            // Once per heartbeat interval: `inspect` allocates.
            self.quorum_next = now.saturating_add(self.heartbeat_interval);
            self.assess_quorum(now, role, leader.is_some());
        }
        if role == Role::Unclustered && self.exit.is_none() {
            let engine = &mut self.engine;
            let message = self.warner.note(now, "view_too_small", "", || {
                let i = engine.inspect();
                format!(
                    "the view has {} member(s), fewer than min_cluster_size {}: no leader can exist (declare more peers, or lower --min-cluster-size)",
                    i.view_size, i.min_cluster_size
                )
            });
            if let Some(m) = message {
                self.emit_warning("view_too_small".into(), m);
            }
        }
    }

    /// Publishes who is silent and the quorum's slack, and warns: a leader names its silent
    /// members (`silent_peers`); a node that has known no leader for a while and hears too few
    /// members to elect says so (`waiting_for_quorum`). Both rate-limited like every warning.
    fn assess_quorum(&mut self, now: u64, role: Role, has_leader: bool) {
        let i = self.engine.inspect();
        let window = self.silent_after;
        let peers = &self.peers;
        let v = crate::quorum::assess(&i, |p| peers.by_id.get(p).and_then(|p| p.heard_at), now, window);
        let since = match has_leader {
            true => {
                self.leaderless_since = None;
                None
            }
            false => Some(*self.leaderless_since.get_or_insert(now)),
        };
        let silent = role == Role::Leader && !v.silent.is_empty();
        let stuck = since.is_some_and(|s| now.saturating_sub(s) >= window)
            && v.slack.is_some_and(|s| s < 0)
            && role != Role::Unclustered;
        let silent_message = silent.then(|| crate::quorum::silent_message(&v, window));
        let waiting_message = stuck.then(|| crate::quorum::waiting_message(&v));
        // Published first: a handler reading the metrics on the warning sees what it says.
        self.shared.counters.set_quorum(v);
        let wire = self.engine.wire_version().unwrap_or(0);
        self.shared.counters.wire_version.store(wire, std::sync::atomic::Ordering::Relaxed);
        if let Some(m) = silent_message {
            self.warn(now, "silent_peers", "", || m);
        }
        if let Some(m) = waiting_message {
            self.warn(now, "waiting_for_quorum", "", || m);
        }
    }

    /// Delivers the pending `Leader` event once this node's lease holds: leader work is handed a
    /// lease only once it is valid, in every host (the core publishes leadership when it wins the
    /// vote; the lease holds once a quorum acknowledged one of its heartbeats, a round trip later).
    /// The failure policy counts the leadership from here.
    fn deliver_leadership(&mut self, now: u64) {
        let Some(term) = self.leader_pending else { return };
        if self.engine.role() != Role::Leader || self.engine.term() != term {
            self.leader_pending = None;
            return;
        }
        if self.engine.lease_deadline().is_some_and(|d| d > now) && self.exit.is_none() {
            self.leader_pending = None;
            if self.log {
                log::info!(target: "tenure", "{}: leader of term {term}", self.id);
            }
            self.failures.became_leader(term);
            self.emit(RuntimeEvent::Leader { term });
        }
    }

    /// Publishes the engine's state for the handles' snapshot reads; returns role and leader.
    fn publish(&mut self) -> (Role, Option<String>) {
        let role = self.engine.role();
        let term = self.engine.term();
        let leader = self.engine.leader();
        let lease = if role == Role::Leader { self.engine.lease_deadline() } else { None };
        self.shared.snapshot.publish(role, term, leader.clone(), lease);
        if let Some(p) = &mut self.prober {
            let watched = leader.as_deref().filter(|l| role == Role::Follower && *l != self.id);
            p.watch(watched, self.shared.clock.now());
        }
        (role, leader)
    }

    // ----- delivery --------------------------------------------------------------------------

    fn warn(&mut self, now: u64, code: &str, subject: &str, message: impl FnOnce() -> String) {
        if let Some(m) = self.warner.note(now, code, subject, message) {
            self.emit_warning(code.to_string(), m);
        }
    }

    fn emit_warning(&mut self, code: String, message: String) {
        if self.log {
            log::warn!(target: "tenure", "{}: {message} [{code}]", self.id);
        }
        self.emit(RuntimeEvent::Warning { code, message });
    }

    fn fatal(&mut self, error: RuntimeError) {
        if self.log {
            log::error!(target: "tenure", "{}: {error}; stopping", self.id);
        }
        self.exit = Some(Some(error.clone()));
        self.emit(RuntimeEvent::Fatal { error });
    }

    fn handler_panicked(&mut self, payload: Box<dyn std::any::Any + Send>) {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        if self.exit.as_ref().is_none_or(|e| e.is_none()) {
            // Do not call the handler again for the Fatal event: it just panicked.
            let error = RuntimeError::HandlerPanicked { message };
            if self.log {
                log::error!(target: "tenure", "{}: {error}; stopping", self.id);
            }
            self.exit = Some(Some(error));
        }
    }

    fn emit(&mut self, event: RuntimeEvent) {
        if matches!(&self.exit, Some(Some(RuntimeError::HandlerPanicked { .. }))) {
            return;
        }
        let handler = &mut self.handler;
        if let Err(p) = std::panic::catch_unwind(AssertUnwindSafe(|| handler.on_event(event))) {
            self.handler_panicked(p);
        }
    }
}
