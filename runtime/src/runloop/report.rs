//! The report after every round (the handles' snapshot, counters, the pending `Leader` event,
//! the stop's end, the quorum watch) and the delivery of events and warnings to the handler.

use std::panic::AssertUnwindSafe;

use tenure::Role;

use super::{Exit, Loop};
use crate::{Engine, Handler, RuntimeError, RuntimeEvent};

impl<E: Engine, H: Handler> Loop<E, H> {
    pub(super) fn after_round(&mut self) {
        if let Some(message) = self.engine.failure() {
            if !self.stop.ended() {
                self.fatal(RuntimeError::Engine { message });
            }
            return;
        }
        let (role, leader) = self.publish();
        let now = self.now();
        let term = self.engine.term();
        self.deliver_leadership(now);
        let peers = self.net.peers.by_id.values().map(|p| (p.in_view, p.down_reported));
        self.shared.counters.after_round(now, role, term, leader.as_deref(), self.stop.stopping(), peers);
        self.end_stop(now, leader.as_deref());
        if now >= self.report.quorum.next && !self.stop.ended() && !self.stop.stopping() {
            // Once per heartbeat interval: `inspect` allocates.
            self.report.quorum.next = now.saturating_add(self.report.quorum.every);
            self.assess_quorum(now, role, leader.is_some());
        }
        if role == Role::Unclustered && !self.stop.ended() {
            let engine = &mut self.engine;
            let message = self.report.warner.note(now, "view_too_small", "", || {
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

    /// A stopping leader ends once another node is known to lead, or at the handover deadline.
    fn end_stop(&mut self, now: u64, leader: Option<&str>) {
        let Some(deadline) = self.stop.deadline else { return };
        if self.stop.ended() {
            return;
        }
        if leader.is_some_and(|l| l != self.report.id) {
            self.stop.exit = Some(Exit::Graceful);
        } else if now >= deadline {
            let t = self.stop.handover_timeout;
            self.emit_warning(
                "handover_timeout".into(),
                format!("stopping: no new leader known within {t} ms; stopping anyway"),
            );
            self.stop.exit = Some(Exit::Graceful);
        }
    }

    /// Publishes who is silent and the quorum's slack, and warns: a leader names its silent
    /// members (`silent_peers`); a node that has known no leader for a while and hears too few
    /// members to elect says so (`waiting_for_quorum`). Both rate-limited like every warning.
    fn assess_quorum(&mut self, now: u64, role: Role, has_leader: bool) {
        let i = self.engine.inspect();
        let watch = &mut self.report.quorum;
        let window = watch.silent_after;
        let peers = &self.net.peers;
        let v = crate::quorum::assess(&i, |p| peers.by_id.get(p).and_then(|p| p.heard_at), now, window);
        let since = match has_leader {
            true => {
                watch.leaderless_since = None;
                None
            }
            false => Some(*watch.leaderless_since.get_or_insert(now)),
        };
        // Silence counts from this leadership's start: as a follower this node hears nothing
        // from the other followers, so a new leader would otherwise name every one of them
        // silent before their first acknowledgement (a round trip into its leadership).
        let leading = match role {
            Role::Leader => Some(*watch.leading_since.get_or_insert(now)),
            _ => {
                watch.leading_since = None;
                None
            }
        };
        let silent = leading.is_some_and(|s| now.saturating_sub(s) >= window) && !v.silent.is_empty();
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
    pub(super) fn deliver_leadership(&mut self, now: u64) {
        let Some(term) = self.lead.leader_pending else { return };
        if self.engine.role() != Role::Leader || self.engine.term() != term {
            self.lead.leader_pending = None;
            return;
        }
        if self.engine.lease_deadline().is_some_and(|d| d > now) && !self.stop.ended() {
            self.lead.leader_pending = None;
            if self.report.log {
                log::info!(target: "tenure", "{}: leader of term {term}", self.report.id);
            }
            self.lead.failures.became_leader(term);
            let value = self.engine.leader_value();
            self.emit(RuntimeEvent::Leader { term, value });
        }
    }

    /// Publishes the engine's state for the handles' snapshot reads; returns role and leader.
    pub(super) fn publish(&mut self) -> (Role, Option<String>) {
        let role = self.engine.role();
        let term = self.engine.term();
        let leader = self.engine.leader();
        let value = self.engine.leader_value();
        let lease = if role == Role::Leader { self.engine.lease_deadline() } else { None };
        let notices_changed = self.refresh_notices(role, term);
        self.shared.snapshot.publish(role, term, leader.clone(), value, lease);
        if notices_changed {
            self.shared.snapshot.notify();
        }
        if let Some(p) = &mut self.net.prober {
            let watched = leader.as_deref().filter(|l| role == Role::Follower && *l != self.report.id);
            p.watch(watched, self.shared.clock.now());
        }
        (role, leader)
    }

    /// Recomputes the published death notices when due (see [`super::NoticeRefresh`]); whether
    /// they changed.
    fn refresh_notices(&mut self, role: Role, term: u64) -> bool {
        let now = self.now();
        let Some(r) = &mut self.lead.notices else { return false };
        if role != Role::Leader || self.stop.stopping() {
            if r.term == 0 {
                return false;
            }
            r.term = 0;
            return self.shared.notices.set(None);
        }
        if r.term == term && now < r.next {
            return false;
        }
        r.term = term;
        r.next = now.saturating_add(crate::notice::REFRESH_MS);
        let datagrams = self
            .engine
            .death_notices()
            .into_iter()
            .filter_map(|(peer, bytes)| self.net.peers.dest(&peer).map(|addr| (addr, bytes)))
            .collect();
        self.shared.notices.set(Some(crate::notice::Armed { term, datagrams }))
    }

    // ----- delivery --------------------------------------------------------------------------

    /// A warning, rate-limited per code and subject.
    pub(super) fn warn(&mut self, now: u64, code: &str, subject: &str, message: impl FnOnce() -> String) {
        if let Some(m) = self.report.warner.note(now, code, subject, message) {
            self.emit_warning(code.to_string(), m);
        }
    }

    pub(super) fn emit_warning(&mut self, code: String, message: String) {
        if self.report.log {
            log::warn!(target: "tenure", "{}: {message} [{code}]", self.report.id);
        }
        self.emit(RuntimeEvent::Warning { code, message });
    }

    pub(super) fn fatal(&mut self, error: RuntimeError) {
        if self.report.log {
            log::error!(target: "tenure", "{}: {error}; stopping", self.report.id);
        }
        self.stop.exit = Some(Exit::Fatal(error.clone()));
        self.emit(RuntimeEvent::Fatal { error });
    }

    pub(super) fn handler_panicked(&mut self, payload: Box<dyn std::any::Any + Send>) {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        if !self.stop.failed() {
            // Do not call the handler again for the Fatal event: it just panicked.
            let error = RuntimeError::HandlerPanicked { message };
            if self.report.log {
                log::error!(target: "tenure", "{}: {error}; stopping", self.report.id);
            }
            self.stop.exit = Some(Exit::Fatal(error));
        }
    }

    pub(super) fn emit(&mut self, event: RuntimeEvent) {
        if matches!(&self.stop.exit, Some(Exit::Fatal(RuntimeError::HandlerPanicked { .. }))) {
            return;
        }
        let handler = &mut self.handler;
        if let Err(p) = std::panic::catch_unwind(AssertUnwindSafe(|| handler.on_event(event))) {
            self.handler_panicked(p);
        }
    }
}
