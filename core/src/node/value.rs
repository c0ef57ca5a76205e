//! The proclaimed value: a short text the leader publishes with its leadership (its service URL,
//! say), which every member reports with the leader.
//!
//! The value belongs to one leadership, (term, leader). Each leadership starts with its leader's
//! configured value and numbers every value it proclaims (`seq`, from 1). The leader sends a
//! `Value` at once on `proclaim`, and with every heartbeat round to each member known to speak
//! wire version 4 that has not acknowledged the current `seq` (a `ValueAck`): a member that
//! missed it holds it one heartbeat interval later, one that joins or restarts as soon as it says
//! it speaks version 4 (its new run acknowledged nothing), and a member of an older version is
//! sent nothing. The acknowledgements live here, not in every peer's entry: a node without a value
//! keeps nothing for them. A member keeps the value of
//! the highest `seq` of the leadership it follows and reports none for any other: it forgets the
//! value with the leader.

use super::*;

/// A node's proclaimed-value state (boxed in [`Node`]; absent while there is none).
#[derive(Debug, Clone)]
#[cfg_attr(feature = "model-check", derive(Hash))]
pub(super) struct Values {
    /// What each of this node's leaderships starts with (`Config::value`).
    configured: Option<Box<str>>,
    /// The value of the leadership (`term`, `leader`): this node's own while it leads, learned
    /// while it follows. `None`: that leader has no value.
    pub(super) shown: Option<Box<str>>,
    /// The number of `shown` in its leadership; 0: none proclaimed (nothing to send).
    pub(super) seq: u64,
    /// The leadership `shown` belongs to.
    pub(super) term: u64,
    pub(super) leader: Box<str>,
    /// While leading: the members that acknowledged `seq` (cleared with every new `seq`).
    acked: IdSet,
}

/// `value`, or `None` when empty (an empty value is no value).
fn text(value: &str) -> Option<Box<str>> {
    (!value.is_empty()).then(|| Box::from(value))
}

impl Values {
    /// The state of a node configured with `value` (`None` when there is none to keep).
    pub(super) fn configured(value: Option<&str>) -> Option<Box<Values>> {
        let configured = text(value?)?;
        Some(Box::new(Values { configured: Some(configured), ..Values::none() }))
    }

    fn none() -> Values {
        Values { configured: None, shown: None, seq: 0, term: 0, leader: Box::from(""), acked: IdSet::new() }
    }
}

impl Node {
    /// The value the leader this node knows of proclaims: its own while it leads, the one it
    /// learned from the leader while it follows (after one heartbeat interval at most, or none
    /// yet). `None` when no leader is known or the leader has no value; a member of wire version
    /// 3, or one limited to it, never learns one.
    pub fn leader_value(&self) -> Option<&str> {
        let v = self.values.as_deref()?;
        let current = v.term == self.term && self.leader.as_deref() == Some(&*v.leader);
        if current && matches!(self.role, Role::Leader | Role::Follower | Role::Observer) {
            v.shown.as_deref()
        } else {
            None
        }
    }

    /// Changes the value this node proclaims while it leads (empty: none) and sends it to every
    /// member that speaks wire version 4. The leadership's next ones start with the configured
    /// value again. Errors: [`Error::NotLeader`], [`Error::ValueTooLong`] (above
    /// [`crate::MAX_VALUE_LEN`] bytes).
    pub fn proclaim(&mut self, _now: u64, value: &str) -> Result<(), Error> {
        if value.len() > wire::MAX_VALUE_LEN {
            return Err(Error::ValueTooLong { len: value.len() });
        }
        if self.role != Role::Leader {
            return Err(Error::NotLeader);
        }
        let (term, id) = (self.term, Box::<str>::from(self.id()));
        let v = self.values.get_or_insert_with(|| Box::new(Values::none()));
        if v.term != term || v.seq == 0 {
            // A leadership without a value yet (none configured): this is its first.
            v.term = term;
            v.leader = id;
            v.seq = 0;
        }
        v.seq = v.seq.saturating_add(1);
        v.shown = text(value);
        v.acked = IdSet::new();
        self.send_values();
        if self.observers.is_some() {
            // At once to every listed observer; one that misses it names the older `seq` in its
            // answer to the next heartbeat, and is sent it again (`observed`).
            let seq = self.values.as_deref().map_or(0, |v| v.seq);
            self.send_to_observers(&Message::Value { seq, value: String::from(value) });
        }
        Ok(())
    }

    /// A leadership starts with the configured value, numbered 1 (nothing to send without one),
    /// acknowledged by nobody yet.
    pub(super) fn start_leadership_value(&mut self) {
        let (term, id) = (self.term, Box::<str>::from(self.id()));
        if let Some(v) = self.values.as_deref_mut() {
            v.term = term;
            v.leader = id;
            v.shown = v.configured.clone();
            v.seq = u64::from(v.shown.is_some());
            v.acked = IdSet::new();
        }
    }

    /// Sends this leadership's value to every member that said it speaks wire version 4 and has
    /// not acknowledged it. Nothing without a value.
    pub(super) fn send_values(&mut self) {
        let Some(v) = self.values.as_deref().filter(|v| v.seq > 0 && v.term == self.term) else { return };
        if self.wire_cap < 4 {
            return;
        }
        let message = Message::Value { seq: v.seq, value: String::from(v.shown.as_deref().unwrap_or("")) };
        let mut targets = Vec::new();
        for (k, p) in self.peers.iter() {
            let due = p.has(SPEAKS) && !v.acked.contains_key(k);
            if due {
                targets.push(String::from(k));
            }
        }
        for p in targets {
            self.send(&p, &message);
        }
    }

    /// A run of a peer said, for the first time, that it speaks wire version 4 (a new member, or
    /// one that restarted: what an earlier run acknowledged is forgotten). The leader sends it the
    /// value at once rather than at the next heartbeat round, so it learns it within a round trip.
    pub(super) fn value_to_new_speaker(&mut self, to: &str) {
        let Some(v) = self.values.as_deref_mut() else { return };
        v.acked.remove(to);
        if self.role != Role::Leader || v.seq == 0 || v.term != self.term {
            return;
        }
        let message = Message::Value { seq: v.seq, value: String::from(v.shown.as_deref().unwrap_or("")) };
        self.send(to, &message);
    }

    /// A `Value` from `from` in `term`: kept when `from` is the leader this node follows in its
    /// term and `seq` is newer than the one it holds of that leadership, and acknowledged; dropped
    /// unacknowledged otherwise (the leader sends it again, so a value that arrives before the
    /// leader's heartbeat is not lost). A change is reported as news of the leader
    /// ([`Event::BecameFollower`]).
    pub(super) fn on_value(&mut self, from: &str, term: u64, seq: u64, value: &str) {
        let observer = self.role == Role::Observer;
        if term != self.term || !(self.role == Role::Follower || observer) || self.leader.as_deref() != Some(from) {
            return;
        }
        let before = self.leader_value().map(Box::<str>::from);
        let v = self.values.get_or_insert_with(|| Box::new(Values::none()));
        let same = v.term == term && *v.leader == *from;
        if !same || seq > v.seq {
            v.term = term;
            v.leader = Box::from(from);
            v.seq = seq;
            v.shown = text(value);
        }
        if !observer {
            // An observer acknowledges nothing: its answer to the next heartbeat names what it holds.
            self.send(from, &Message::ValueAck { seq });
        }
        if self.leader_value() != before.as_deref() {
            self.push_event(Event::BecameFollower { term: self.term, leader: Some(String::from(from)) });
        }
    }

    /// A `ValueAck`: member `from` holds `seq` of this leadership's value (an older `seq` says
    /// nothing about the current one).
    pub(super) fn on_value_ack(&mut self, from: &str, term: u64, seq: u64) {
        if self.role != Role::Leader || term != self.term || !self.peers.contains_key(from) {
            return;
        }
        if let Some(v) = self.values.as_deref_mut().filter(|v| v.term == term && v.seq == seq) {
            v.acked.add(from);
        }
    }
}
