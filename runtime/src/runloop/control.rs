//! The control step: the handles' commands, the leader-work failure policy and the graceful stop.

use std::time::Duration;

use tenure::{PeerDownReason, Role};

use super::{Exit, Loop};
use crate::handle::{Command, Reply};
use crate::policy::Decision;
use crate::resolve::Update;
use crate::{Engine, Handler, LeaderWorkVerdict, RuntimeError, RuntimeEvent};

/// A handle's answer, sent after the round (see [`Loop::command`]).
type Answer = Box<dyn FnOnce()>;

impl<E: Engine, H: Handler> Loop<E, H> {
    /// One command, then the round it caused is settled (its outputs sent, the handles'
    /// snapshot published), and only then is the caller answered: a thread that acts on the
    /// answer (the command runner after a `transfer`) never reads a role from before it.
    pub(super) fn command(&mut self, cmd: Command) {
        let now = self.now();
        let answer = match cmd {
            Command::Transfer(peer, r) => {
                let result = match peer.or_else(|| self.engine.transfer_target()) {
                    Some(target) => self.engine.transfer_leadership(now, &target).map_err(RuntimeError::from),
                    None if self.engine.role() != Role::Leader => Err(RuntimeError::Node(tenure::Error::NotLeader)),
                    None => Err(RuntimeError::NoTransferTarget),
                };
                self.answer(r, result)
            }
            Command::Inspect(r) => {
                let i = self.engine.inspect();
                self.answer(r, Ok(i))
            }
            Command::Broadcast(payload, r) => {
                let result = self.engine.broadcast(now, &payload).map_err(RuntimeError::from);
                self.answer(r, result)
            }
            Command::Proclaim(value, r) => {
                let result = self.engine.proclaim(now, &value).map_err(RuntimeError::from);
                self.answer(r, result)
            }
            Command::Join(peer, r) => {
                let result = self.engine.join(now, &peer).map_err(RuntimeError::from);
                if result.is_ok() && peer != self.report.id {
                    self.net.peers.add(&peer, true, now);
                    if let Some(p) = self.net.peers.by_id.get_mut(&peer) {
                        p.in_view = true;
                    }
                }
                self.answer(r, result)
            }
            Command::Leave(peer, r) => {
                let result = self.engine.leave(now, &peer).map_err(RuntimeError::from);
                if result.is_ok() {
                    self.net.peers.remove(&peer);
                }
                self.answer(r, result)
            }
            Command::PeerDown(peer, reason, r) => {
                let result = self.engine.peer_down(now, &peer, reason).map_err(RuntimeError::from);
                if result.is_ok() && reason == PeerDownReason::Terminated {
                    self.net.peers.remove(&peer);
                }
                self.answer(r, result)
            }
            Command::ConfirmLeader(term, granted, r) => {
                if self.lead.confirm_pending.is_some_and(|(t, _)| t == term) {
                    self.lead.confirm_pending = None;
                }
                // A stopping node does not take leadership.
                let granted = granted && !self.stop.stopping();
                let result = self.engine.confirm_leader(now, term, granted).map_err(RuntimeError::from);
                self.answer(r, result)
            }
            Command::LeaderWorkFailed(term, at_once, r) => {
                let result = self.leader_work_failed(now, term, at_once);
                self.answer(r, result)
            }
            Command::Stop(handover) => {
                self.begin_stop(now, handover.unwrap_or(self.stop.handover_timeout));
                None
            }
            Command::Warning { code, message } => {
                self.emit_warning(code, message);
                None
            }
            Command::Resolved { name, result } => {
                self.resolved(now, &name, result);
                None
            }
        };
        self.settle();
        if let Some(answer) = answer {
            answer();
        }
    }

    /// The resolver thread's answer for `name`: a peer that resolves again rejoins the view; a
    /// failure is explained.
    fn resolved(&mut self, now: u64, name: &str, result: Result<Vec<std::net::SocketAddr>, String>) {
        for (id, update) in self.net.peers.resolved(name, result, now) {
            match update {
                Update::None => {}
                Update::Resolved { rejoin } => {
                    if self.report.log {
                        let addr = self.net.peers.dest(&id).map(|a| a.to_string()).unwrap_or_default();
                        log::info!(target: "tenure", "{}: peer {id} resolved to {addr}", self.report.id);
                    }
                    if rejoin {
                        if let Some(p) = self.net.peers.by_id.get_mut(&id) {
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

    /// The answer to a handle's command, to send once the round is settled; a refused command
    /// from the runtime thread (which cannot wait for an answer) is a warning now instead.
    fn answer<T: Send + 'static>(&mut self, r: Reply<T>, result: Result<T, RuntimeError>) -> Option<Answer> {
        match r {
            Some(tx) => Some(Box::new(move || {
                let _ = tx.send(result);
            })),
            None => {
                if let Err(e) = result {
                    self.emit_warning(e.code().to_string(), e.to_string());
                }
                None
            }
        }
    }

    /// The failure policy (see `policy.rs`): count, then retry, step down or stop.
    fn leader_work_failed(&mut self, now: u64, term: u64, at_once: bool) -> Result<LeaderWorkVerdict, RuntimeError> {
        let decision = self.lead.failures.failed(term, at_once);
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
                let limit = match self.lead.failures.policy().max_step_downs {
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
                if self.report.log {
                    log::error!(target: "tenure", "{}: {error}; stopping", self.report.id);
                }
                *self.shared.fatal.lock().unwrap_or_else(|p| p.into_inner()) = Some(error.clone());
                self.emit(RuntimeEvent::Fatal { error });
                // A leader hands over (it denies any confirmation while stopping).
                self.begin_stop(now, self.stop.handover_timeout);
                Ok(LeaderWorkVerdict::Stopping)
            }
        }
    }

    /// Leader work of `term` keeps failing: hand leadership to the peer the core picks (else roll
    /// it back), and campaign last for `hold`, so that any other member that can lead does.
    fn hand_over_failed(&mut self, now: u64, term: u64, hold: Duration) {
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

    /// A follower stops at once; a leader hands over first and ends when another node leads or
    /// the handover deadline passes (see `after_round`).
    fn begin_stop(&mut self, now: u64, handover: u64) {
        if self.stop.stopping() || self.stop.ended() {
            return;
        }
        // What already arrived is read first: the goodbye of a member that stopped a moment ago
        // (a rolling stop) must count before a target is chosen, or leadership goes to a node
        // that is gone and the others wait out an election timeout. Commands are served before
        // the socket in each iteration, so without this a stop could overtake that goodbye.
        let _ = self.receive();
        let now = now.max(self.now());
        if self.stop.ended() {
            return;
        }
        if self.engine.role() != Role::Leader {
            self.stop.exit = Some(Exit::Graceful);
            return;
        }
        let Some(target) = self.engine.transfer_target() else {
            self.emit_warning(
                "no_transfer_target".into(),
                "stopping as leader with no peer to hand leadership to: the others elect after their election timeout"
                    .into(),
            );
            self.stop.exit = Some(Exit::Graceful);
            return;
        };
        match self.engine.transfer_leadership(now, &target) {
            Ok(()) => {
                if self.report.log {
                    log::info!(target: "tenure", "{}: stopping: handing leadership to {target}", self.report.id);
                }
                self.stop.deadline = Some(now.saturating_add(handover));
                self.stop.handover_timeout = handover;
            }
            Err(e) => {
                self.emit_warning(e.code().into(), format!("stopping: leadership transfer to {target} failed: {e}"));
                self.stop.exit = Some(Exit::Graceful);
            }
        }
    }
}
