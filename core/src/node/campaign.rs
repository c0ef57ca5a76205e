//! Campaigns: following, pre-votes, elections and counting their replies.

use super::*;

impl Node {
    /// Moves into follower (or stays unclustered), firing `BecameFollower` when the role changes.
    pub(super) fn become_follower(&mut self, now: u64) {
        if self.role == Role::Observer {
            return;
        }
        self.campaign = None;
        self.times.set(AWAITING_CONFIRM, None);
        self.times.set(HEARTBEAT_DEADLINE, None);
        if self.role == Role::Leader {
            for p in self.peers.values_mut() {
                p.set_ack_echo(None);
            }
        }
        if !self.clustered() {
            self.role = Role::Unclustered;
            self.times.set(ELECTION_DEADLINE, None);
            return;
        }
        let was = self.role;
        self.role = Role::Follower;
        if was != Role::Follower {
            self.push_event(Event::BecameFollower {
                term: self.term,
                leader: self.leader.as_deref().map(String::from),
            });
        }
        if self.times.get(ELECTION_DEADLINE).is_none() || was != Role::Follower {
            self.reset_election_timer(now);
        }
    }

    pub(super) fn start_pre_vote(&mut self, now: u64) {
        if self.term >= MAX_TERM {
            // The term space is exhausted (only reachable past the jump bound): wait.
            self.reset_election_timer(now);
            return;
        }
        let term = self.term.saturating_add(1);
        let mut granted = IdSet::new();
        granted.add(self.id());
        self.campaign = Some(Box::new(Campaign { pre: true, term, granted }));
        self.leader = None;
        if self.refused_until.is_some_and(|until| now < until) {
            // The leader's port refused: the others learn it within milliseconds, so a refused
            // pre-vote round is retried one slot later rather than a full timeout.
            self.times.set(ELECTION_DEADLINE, Some(now.saturating_add(self.failover_slot_len())));
        } else {
            self.reset_election_timer(now);
        }
        let peers = self.peer_ids(0);
        for p in peers {
            self.send_with_term(&p, term, &Message::PreVote);
        }
        self.check_campaign(now);
    }

    pub(super) fn start_election(&mut self, now: u64, transfer: bool) {
        if self.term >= MAX_TERM {
            self.reset_election_timer(now);
            return;
        }
        let term = self.term.saturating_add(1);
        self.term = term;
        self.leader_heartbeat = None;
        for p in self.peers.values_mut() {
            p.set_evidence_at(None);
        }
        self.term_changed_at = now;
        self.voted_for = Some(Box::from(self.id()));
        self.times.set(LEADER_CONTACT, None);
        self.persist();
        self.role = Role::Candidate;
        self.leader = None;
        let mut granted = IdSet::new();
        granted.add(self.id());
        self.campaign = Some(Box::new(Campaign { pre: false, term, granted }));
        self.reset_election_timer(now);
        let peers = self.peer_ids(0);
        for p in peers {
            self.send(&p, &Message::Vote { transfer });
        }
        self.check_campaign(now);
    }

    pub(super) fn check_campaign(&mut self, now: u64) {
        let Some(c) = &self.campaign else { return };
        // Votes from peers no longer in the view do not count.
        let count = c.granted.keys().filter(|g| *g == self.id() || self.peers.contains_key(g)).count();
        if count < self.quorum() {
            return;
        }
        if c.pre {
            self.start_election(now, false);
            return;
        }
        if self.role != Role::Candidate || self.times.get(AWAITING_CONFIRM).is_some() {
            return;
        }
        if self.confirm_gate {
            self.times.set(AWAITING_CONFIRM, Some(self.term));
            // The host must answer within one election timeout; silence is a denial.
            self.times.set(ELECTION_DEADLINE, Some(now.saturating_add(self.timing.election_timeout_max)));
            self.push_event(Event::ConfirmLeader { term: self.term });
        } else {
            self.become_leader(now);
        }
    }
}
