//! Observers: processes that must know the leader, its term and its value without taking part in
//! the election (a router, a dashboard).
//!
//! An observer ([`Role::Observer`], `Config::observer`) is given the members as its `bootstrap`;
//! a member keeps informed only the observers it lists (`Config::observer_peers`), which never
//! enter its view. Each of its leaderships sends the listed observers its heartbeats (so an
//! observer learns a new leader and its term within one heartbeat interval of its first round)
//! and, on `proclaim`, its value. The observer answers each heartbeat with an `Observe { seq }`
//! (kind 13, version 4) naming the `seq` of the leadership's value it holds; the leader sends
//! the value back at once when that is not its current one. A new value therefore reaches an
//! observer within a round trip, or one heartbeat interval and a round trip when the first send
//! is lost; a new or restarted observer, within a round trip of its first heartbeat.
//!
//! Nothing an observer sends can count: it sends no vote, no pre-vote and no acknowledgement,
//! only `Observe`, which changes no term, no vote and no evidence on the member; a member drops
//! every other kind from an observer, and an `Observe` from an observer it does not list, as
//! `unknown_peer` (even with `admit_unknown_peers`: an observer is never admitted as a member).
//! Observers are a version 4 notion: a member of wire version 3 (v0.1.0, or a node limited to
//! it) lists none and sends them nothing.

use super::*;

/// The observers `config` lists, less this node and its members (an id listed as both is a
/// member), or `None`. An observer itself keeps nobody informed.
pub(super) fn listed(config: &Config) -> Option<Box<IdSet>> {
    if config.observer {
        return None;
    }
    let mut set = IdSet::new();
    for o in &config.observer_peers {
        if *o != config.id && !config.bootstrap.contains(o) {
            set.add(o);
        }
    }
    (!set.is_empty()).then(|| Box::new(set))
}

impl Node {
    /// Whether this node is an observer ([`Role::Observer`]).
    pub fn is_observer(&self) -> bool {
        self.role == Role::Observer
    }

    /// The observers this member keeps informed (`Config::observer_peers` less its members),
    /// sorted; empty on an observer.
    pub fn observers(&self) -> Vec<String> {
        let mut ids = Vec::new();
        if let Some(o) = &self.observers {
            for k in o.keys() {
                ids.push(String::from(k));
            }
        }
        ids
    }

    pub(super) fn lists_observer(&self, peer: &str) -> bool {
        self.observers.as_ref().is_some_and(|o| o.contains_key(peer))
    }

    /// Member side: an `Observe { seq }` from `from` in `term` (`incarnation`). Dropped as
    /// `unknown_peer` unless `from` is an observer this member lists; otherwise, if this node
    /// leads `term` and `seq` is not its value's current one, the value goes to `from`. Nothing
    /// else changes: no term, no vote, no evidence, no view.
    pub(super) fn observed(
        &mut self,
        now: u64,
        from: &str,
        term: u64,
        incarnation: u64,
        seq: u64,
    ) -> Result<(), DropReason> {
        if !self.lists_observer(from) {
            return Err(DropReason::UnknownPeer);
        }
        if self.bug(Bug::ObserverCounted) {
            // The injected bug: the observer is taken for a member that acknowledged the last
            // heartbeat round (it joins the view, and its answer counts toward the quorum).
            let known = self.peers.index_of_hinted(None, from);
            let _ = self.admit(now, from, incarnation, known, true);
            let last = self.times.get(HEARTBEAT_OUT_LAST);
            if let (Some(p), Role::Leader) = (self.peers.get_mut(from), self.role) {
                p.set_evidence_at(last);
                p.set_ack_echo(last);
            }
        }
        if self.role != Role::Leader || term != self.term {
            return Ok(());
        }
        let Some(v) = self.values.as_deref().filter(|v| v.seq > 0 && v.seq != seq && v.term == term) else {
            return Ok(());
        };
        let message = Message::Value { seq: v.seq, value: String::from(v.shown.as_deref().unwrap_or("")) };
        self.send(from, &message);
        Ok(())
    }

    /// Leader side: `message` to every observer this member lists, unless it speaks only wire
    /// version 3 (that version has no observers).
    pub(super) fn send_to_observers(&mut self, message: &Message) {
        if self.wire_cap < 4 {
            return;
        }
        let Some(o) = &self.observers else { return };
        let mut targets = Vec::with_capacity(o.len());
        for k in o.keys() {
            targets.push(String::from(k));
        }
        for t in targets {
            self.send(&t, message);
        }
    }

    /// Observer side: one message from member `from` in `term`. Heartbeats and values are
    /// taken; anything else is ignored (an observer neither votes nor acknowledges).
    pub(super) fn observe(&mut self, now: u64, from: &str, term: u64, message: Message) {
        match message {
            Message::Heartbeat { sent_at } => self.observe_heartbeat(now, from, term, sent_at),
            Message::Value { seq, value } => self.on_value(from, term, seq, &value),
            _ => {}
        }
    }

    /// A heartbeat of `term` from `from`: a newer term, or a newer heartbeat of the current one,
    /// makes `from` the leader this observer reports until `election_timeout_max` passes without
    /// one. Answered with an `Observe` naming the value held of that leadership.
    fn observe_heartbeat(&mut self, now: u64, from: &str, term: u64, sent_at: u64) {
        if term < self.term {
            if self.leader.is_some() {
                return;
            }
            // No leader heard for an election timeout: the term this observer holds may be one
            // no live leader has (a forged heartbeat, say), and no member ever learns an
            // observer's term to catch up with it. It reports the leader it hears instead (its
            // term is no promise: it votes for nobody).
            self.term = term;
            self.leader_heartbeat = None;
        }
        self.set_term(now, term);
        // A duplicate or a replay proves nothing about the leader being alive now.
        if matches!(&self.leader_heartbeat, Some((l, s)) if **l == *from && sent_at <= *s) {
            return;
        }
        self.leader_heartbeat = Some((Box::from(from), sent_at));
        self.times.set(LEADER_CONTACT, Some(now));
        self.times.set(HEARTBEAT_IN_LAST, Some(now));
        self.times.set(ELECTION_DEADLINE, Some(now.saturating_add(self.timing.election_timeout_max)));
        if self.leader.as_deref() != Some(from) {
            self.leader = Some(Box::from(from));
            self.push_event(Event::BecameFollower { term: self.term, leader: Some(String::from(from)) });
        }
        let seq = self.values.as_deref().filter(|v| v.term == self.term && *v.leader == *from).map_or(0, |v| v.seq);
        self.send(from, &Message::Observe { seq });
    }

    /// Observer side, at `poll_timeout`: a leader silent for `election_timeout_max` is no longer
    /// reported (a router must not keep sending to a dead leader); the next heartbeat of any
    /// leader is reported at once.
    pub(super) fn observer_timeout(&mut self, now: u64) {
        if self.times.get(ELECTION_DEADLINE).is_none_or(|t| t > now) {
            return;
        }
        self.times.set(ELECTION_DEADLINE, None);
        self.times.set(LEADER_CONTACT, None);
        if self.leader.take().is_some() {
            self.push_event(Event::BecameFollower { term: self.term, leader: None });
        }
    }
}
