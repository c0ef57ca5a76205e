//! Leadership: becoming leader, heartbeats, the leader's tick (check-quorum) and a denied
//! confirmation's backoff.

use super::*;

impl Node {
    pub(super) fn become_leader(&mut self, now: u64) {
        // Check quorum from the first moment: the votes that won the term are evidence dated when
        // they were asked for, and a slow confirmation (or slow votes) can leave them older than
        // `election_timeout_min`. Leading on them until the first heartbeat tick would stretch
        // the bound check quorum keeps; a winner whose evidence is stale does not lead at all.
        if !self.quorum_evidence(now) && !self.bug(Bug::UncheckedLeadershipStart) {
            self.follow_no_leader(now);
            return;
        }
        self.campaign = None;
        self.role = Role::Leader;
        self.leader = Some(Box::from(self.id()));
        self.times.set(LEADER_CONTACT, Some(now));
        self.leader_since = now;
        self.probe_at = now;
        self.confirm_denied = 0;
        self.times.set(ELECTION_DEADLINE, None);
        for p in self.peers.values_mut() {
            p.set_ack_echo(None);
        }
        if self.values.is_some() {
            self.start_leadership_value();
        }
        if self.ranks.is_some() {
            self.ranks_new_leadership();
        }
        self.push_event(Event::BecameLeader { term: self.term });
        self.send_heartbeats(now);
    }

    pub(super) fn send_heartbeats(&mut self, now: u64) {
        // Peers that have not answered yet (declared but silent, or re-joined) get a heartbeat
        // once per election_timeout_min, so that a second leader of one term (possible only
        // outside the guarantee's scope) hears of this one and the two converge.
        let probe = now >= self.probe_at;
        if probe {
            self.probe_at = now.saturating_add(self.timing.election_timeout_min);
        }
        let targets = self.peer_ids(if probe { 0 } else { ANSWERED });
        for p in targets {
            self.send(&p, &Message::Heartbeat { sent_at: now });
        }
        if self.observers.is_some() {
            // Every round to every listed observer: they never answer in a way that counts, so
            // there is nothing to probe.
            self.send_to_observers(&Message::Heartbeat { sent_at: now });
        }
        if self.values.is_some() {
            // Again to each member that has not acknowledged it: loss costs one round.
            self.send_values();
        }
        if self.ranks.is_some() {
            self.retell_ranks(now);
        }
        // This node counts itself in the lease it is building: it must not help elect anyone else
        // before that lease can have run out.
        self.bound_until = self.bound_until.max(now.saturating_add(self.timing.lease_duration));
        self.times.set(HEARTBEAT_OUT_LAST, Some(now));
        self.times.set(HEARTBEAT_DEADLINE, Some(now.saturating_add(self.timing.heartbeat_interval)));
    }

    /// Check quorum's test: a quorum (counting this node) answered within the last
    /// `election_timeout_min`. Evidence is an acknowledgement echoing one of this leadership's own
    /// heartbeats, dated at that heartbeat, or a vote granted to the campaign that led to it,
    /// dated when that campaign asked. Not "any message": a replay or a very late duplicate proves
    /// nothing about now. A send the transport accepted is not evidence either.
    fn quorum_evidence(&self, now: u64) -> bool {
        let window_start = now.saturating_sub(self.timing.election_timeout_min);
        let any = self.bug(Bug::AnyMessageIsEvidence);
        let heard = self
            .peers
            .values()
            .filter(|p| if any { p.last_heard() } else { p.evidence_at() }.is_some_and(|t| t >= window_start))
            .count();
        heard + 1 >= self.quorum()
    }

    /// Stops leading, or a leadership that is not starting, with no leader known: check quorum
    /// failing at a leadership's start or on a tick, and a denied confirmation. One copy of it:
    /// the three call it (the WebAssembly builds' size).
    #[inline(never)]
    fn follow_no_leader(&mut self, now: u64) {
        self.leader = None;
        self.times.set(LEADER_CONTACT, None);
        self.become_follower(now);
    }

    pub(super) fn leader_tick(&mut self, now: u64) {
        if !self.quorum_evidence(now) && !self.bug(Bug::NoStepDown) {
            self.follow_no_leader(now);
            return;
        }
        self.send_heartbeats(now);
    }

    pub(super) fn deny(&mut self, now: u64) {
        self.confirm_denied = self.confirm_denied.saturating_add(1);
        self.times.set(LAST_DENIED_AT, Some(now));
        self.times.set(AWAITING_CONFIRM, None);
        self.follow_no_leader(now);
        let factor = u64::from(self.confirm_denied).min(MAX_BACKOFF_FACTOR);
        let backoff = self.timing.election_timeout_max.saturating_mul(factor);
        let jitter = self.rng.range_inclusive(0, self.timing.election_timeout_max - self.timing.election_timeout_min);
        if self.role == Role::Follower {
            self.times.set(ELECTION_DEADLINE, Some(now.saturating_add(backoff).saturating_add(jitter)));
        }
    }
}
