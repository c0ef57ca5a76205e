//! Internals every path shares: membership checks, promises, the output queue, sending,
//! persisting, the term and the election timer.

use super::*;

impl Node {
    pub(super) fn check_member(&self, peer: &str) -> Result<(), Error> {
        check_peer(peer)?;
        if peer == self.id() {
            return Err(Error::SelfPeer);
        }
        if !self.peers.contains_key(peer) {
            return Err(Error::UnknownPeer { peer: peer.to_string() });
        }
        Ok(())
    }

    pub(super) fn clustered(&self) -> bool {
        self.view_size() >= self.timing.min_cluster_size as usize
    }

    pub(super) fn sticky(&self, now: u64) -> bool {
        if self.bug(Bug::NoPrevoteStickiness) {
            return false;
        }
        if self.role == Role::Leader {
            return true;
        }
        self.leader.is_some()
            && self.times.get(LEADER_CONTACT).is_some_and(|t| now < t.saturating_add(self.timing.election_timeout_min))
    }

    /// Bound by a lease promise (see `bound_until`).
    pub(super) fn promised(&self, now: u64) -> bool {
        now < self.promise_until() && !self.bug(Bug::NoPrevoteStickiness)
    }

    pub(super) fn push_event(&mut self, e: Event) {
        self.flush_persist();
        self.outbox.push_other(Other::Event(e));
    }

    pub(super) fn send(&mut self, to: &str, message: &Message) {
        self.send_with_term(to, self.term, message);
    }

    /// Queues `message` for `to`, encoded into the output buffer (no allocation of its own); a
    /// pending `Persist` goes first, unless the message cannot be encoded (then nothing is queued).
    pub(super) fn send_with_term(&mut self, to: &str, term: u64, message: &Message) {
        let (from, cluster) = split_names(&self.names, self.id_len);
        let env = EnvelopeRef { cluster, from, term, incarnation: self.incarnation, message };
        if self.persist_pending {
            if wire::encoded_len(&env, self.mac.is_some()).is_err() {
                return;
            }
            self.flush_persist();
        }
        let (from, cluster) = split_names(&self.names, self.id_len);
        let env = EnvelopeRef { cluster, from, term, incarnation: self.incarnation, message };
        // An `Err` queued nothing: the message is one no receiver would accept.
        let _ = self.outbox.push_send(to, &env, self.mac.as_deref().map(|m| &m.send));
    }

    /// Notes that term or vote changed. The `Persist` output is emitted lazily, just before the
    /// next output of any kind, so that a term bump and a vote in one input cost the host one
    /// durable write, never zero before a dependent send.
    pub(super) fn persist(&mut self) {
        if self.durable {
            self.persist_pending = true;
        }
    }

    pub(super) fn flush_persist(&mut self) {
        if self.persist_pending {
            self.persist_pending = false;
            self.outbox.push_other(Other::Persist(DurableState {
                term: self.term,
                voted_for: self.voted_for.as_deref().map(String::from),
            }));
        }
    }

    pub(super) fn set_term(&mut self, now: u64, term: u64) {
        if term > self.term {
            self.term = term;
            self.voted_for = None;
            self.term_changed_at = now;
            self.leader = None;
            self.times.set(LEADER_CONTACT, None);
            self.leader_heartbeat = None;
            self.refused_until = None;
            self.campaign = None;
            // The promise stays: a lease this node contributed to in the old term still runs.
            if self.bug(Bug::DeposedForgetsPromise) {
                self.bound_until = 0;
                self.acked_until = 0;
            }
            self.persist();
        }
    }

    pub(super) fn reset_election_timer(&mut self, now: u64) {
        if self.ranks.is_some() {
            if let Some(at) = self.ranked_deadline(now) {
                self.times.set(ELECTION_DEADLINE, Some(at));
                return;
            }
        }
        let t = self.rng.range_inclusive(self.timing.election_timeout_min, self.timing.election_timeout_max);
        self.times.set(ELECTION_DEADLINE, Some(now.saturating_add(t)));
    }
}

/// The node's id and cluster id, from `Node::names` (split at `id_len`): borrows that field alone,
/// so that the output buffer can be written while an envelope borrows the ids.
pub(super) fn split_names(names: &str, id_len: u8) -> (&str, &str) {
    let at = usize::from(id_len);
    (names.get(0..at).unwrap_or(""), names.get(at..names.len()).unwrap_or(""))
}
