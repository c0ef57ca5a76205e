//! Messages: one decoded message from a peer, by kind, and following a leader.

use super::*;

impl Node {
    /// `known`: where `from`'s entry is, from `accept`'s `IdMap::index_of_hinted` (`admit` adds no
    /// entry when it is given); `None` for a peer `admit` just added.
    pub(super) fn dispatch(&mut self, now: u64, from: &str, term: u64, message: Message, known: Option<usize>) {
        if self.role == Role::Observer {
            return self.observe(now, from, term, message);
        }
        let adopts = match &message {
            Message::PreVote
            | Message::Hello { .. }
            | Message::DeathNotice
            | Message::Value { .. }
            | Message::ValueAck { .. }
            | Message::Priority { .. }
            | Message::Observe { .. } => false,
            Message::PreVoteReply { granted } => !granted,
            Message::Vote { transfer } => *transfer || !self.sticky(now),
            _ => true,
        };
        if term > self.term && adopts {
            if self.role == Role::Leader && self.bug(Bug::IgnoreHigherTerm) {
                return;
            }
            self.set_term(now, term);
            if self.role != Role::Follower {
                if let Message::Heartbeat { .. } = message {
                    // Learned from the new leader itself: announce it in the one follower event.
                    self.leader = Some(Box::from(from));
                }
                self.become_follower(now);
            }
        }
        match message {
            Message::PreVote => {
                let granted = term > self.term && !self.sticky(now) && !self.promised(now);
                let reply_term = if granted { term } else { self.term };
                self.send_with_term(from, reply_term, &Message::PreVoteReply { granted });
            }
            Message::PreVoteReply { granted } => {
                if let Some(c) = &mut self.campaign {
                    if c.pre && granted && c.term == term {
                        c.granted.add(from);
                        self.check_campaign(now);
                    }
                }
            }
            Message::Vote { transfer } => {
                let can_vote = term == self.term && matches!(self.role, Role::Follower | Role::Unclustered);
                let free = self.voted_for.as_deref().is_none_or(|v| v == from)
                    && self.leader.as_deref().is_none_or(|l| l == from);
                let unbound = transfer || !self.promised(now);
                let granted = can_vote && unbound && (free || self.bug(Bug::DoubleVote));
                if granted {
                    let first = self.voted_for.as_deref() != Some(from);
                    if first {
                        self.voted_for = Some(Box::from(from));
                        self.persist();
                    }
                    // The timer restarts so that this node does not campaign against the candidate
                    // it just voted for while that candidate collects its other votes. Only news
                    // does that: a candidate asks each voter once per term, so a request granted
                    // before is a duplicate or a replay, and a request from the leader this node
                    // already heard lead the term is older than that leadership. Restarting on
                    // those would let a recorder of a dead leader's requests keep its voters from
                    // ever timing out.
                    let led = matches!(&self.leader_heartbeat, Some((l, _)) if **l == *from);
                    if (first && !led) || self.bug(Bug::RepeatedVoteRestartsTimer) {
                        self.reset_election_timer(now);
                    }
                }
                self.send(from, &Message::VoteReply { granted });
            }
            Message::VoteReply { granted } => {
                if let Some(c) = &mut self.campaign {
                    if !c.pre && granted && term == self.term && self.role == Role::Candidate {
                        c.granted.add(from);
                        let asked_at = self.term_changed_at;
                        if let Some(p) = self.peers.get_hinted_mut(known, from) {
                            // A grant in this term answers this campaign's own requests, sent when
                            // the campaign started (`start_election` set `term_changed_at`, and a
                            // candidate's term does not change): evidence dated then, as an
                            // acknowledgement is dated at its heartbeat. Dated at arrival, a slow
                            // reply or a replay would pass for fresher evidence than it is.
                            p.set_evidence_at(Some(asked_at));
                        }
                        self.check_campaign(now);
                    }
                }
            }
            Message::Heartbeat { sent_at } => {
                if term < self.term {
                    // Tell the stale leader about the newer term.
                    self.send(from, &Message::HeartbeatAck { echo: sent_at });
                    return;
                }
                // Kept per term and sender, not per known leader: a follower that gave up on a dead
                // leader (its timer fired) must not follow it again because of a replay.
                let stale = matches!(&self.leader_heartbeat, Some((l, s)) if **l == *from && sent_at <= *s);
                if stale && !self.bug(Bug::StaleHeartbeatRefreshes) {
                    // A duplicate or a replay: it proves nothing about the leader being alive now,
                    // so it neither refreshes stickiness nor the election timer, nor is acknowledged.
                    return;
                }
                if self.role == Role::Leader {
                    // Within SPEC's scope two leaders in one term cannot exist. Outside it (members
                    // removed, restarts without durable state) they can; they must not demote each
                    // other, and must not both stay: the one with the greater id yields, so the
                    // cluster converges at the next heartbeat.
                    if from > self.id() {
                        return;
                    }
                    self.leader = Some(Box::from(from));
                    self.become_follower(now);
                }
                self.follow(now, from);
                match &mut self.leader_heartbeat {
                    // The usual case: the same leader's next heartbeat, updated in place.
                    Some((l, s)) if **l == *from => *s = sent_at.max(*s),
                    slot => *slot = Some((Box::from(from), sent_at)),
                }
                self.send(from, &Message::HeartbeatAck { echo: sent_at });
                if self.ranks.is_some() {
                    self.retell_ranks(now);
                }
                // The acknowledgement counts toward the leader's lease: honour it (on this node's
                // clock, from now, which is no earlier than the heartbeat's sending).
                self.acked_until = self.acked_until.max(now.saturating_add(self.timing.lease_duration));
                // `known` is still exact: nothing above adds or removes a peer.
                if self.peers.get_at_or_find(known, from).is_some_and(|p| !p.has(ACKED)) {
                    for p in self.peers.values_mut() {
                        p.set_flag(ACKED, false);
                    }
                    if let Some(p) = self.peers.get_mut(from) {
                        p.set_flag(ACKED, true);
                    }
                }
            }
            Message::HeartbeatAck { echo } => {
                // Only an echo of a heartbeat this leadership actually sent is evidence.
                let ours =
                    self.times.get(HEARTBEAT_OUT_LAST).is_some_and(|last| echo >= self.leader_since && echo <= last);
                if self.role == Role::Leader && term == self.term && ours {
                    if let Some(p) = self.peers.get_hinted_mut(known, from) {
                        p.set_ack_echo(Some(p.ack_echo().map_or(echo, |e| e.max(echo))));
                        p.set_evidence_at(Some(p.evidence_at().map_or(echo, |e| e.max(echo))));
                    }
                    if self.ranks.is_some() {
                        self.note_answer(now, from);
                    }
                }
            }
            Message::TimeoutNow => {
                if term == self.term
                    && self.leader.as_deref() == Some(from)
                    && self.role == Role::Follower
                    && self.clustered()
                    && !self.never_lead()
                    && self.times.get(CAMPAIGN_HOLD).is_none_or(|hold| hold <= now)
                {
                    self.start_election(now, true);
                }
            }
            Message::App { payload, .. } => self.push_event(Event::Message { from: from.to_string(), payload }),
            Message::Hello { version, reply } => {
                let mut news = false;
                if let Some(p) = self.peers.get_hinted_mut(known, from) {
                    news = !p.has(SPEAKS) && version >= wire::VERSION;
                    p.set_flag(SPEAKS, version >= wire::VERSION);
                }
                if !reply {
                    self.greet(from, true);
                }
                if news && self.values.is_some() {
                    // A run of it that said nothing yet (a first greeting, a restart, an upgrade):
                    // it holds no value.
                    self.value_to_new_speaker(from);
                }
                if news && self.ranks.is_some() {
                    self.rank_to_new_speaker(now, from);
                }
            }
            // Handled whole in `accept` (`death_notice`), which never passes one on.
            Message::DeathNotice => {}
            Message::Value { seq, value } => self.on_value(from, term, seq, &value),
            Message::ValueAck { seq } => self.on_value_ack(from, term, seq),
            Message::Priority { priority, never_lead, reply } => {
                self.on_priority(now, from, priority, never_lead, reply)
            }
            // Handled whole in `accept` (`observed`): never from a member.
            Message::Observe { .. } => {}
        }
    }

    /// Accepts `from` as the leader of the current term.
    pub(super) fn follow(&mut self, now: u64, from: &str) {
        self.times.set(LEADER_CONTACT, Some(now));
        self.refused_until = None;
        self.times.set(HEARTBEAT_IN_LAST, Some(now));
        let changed = self.leader.as_deref() != Some(from);
        if changed {
            self.leader = Some(Box::from(from));
        }
        self.campaign = None;
        match self.role {
            Role::Candidate => self.become_follower(now),
            Role::Follower if changed => self.push_event(Event::BecameFollower {
                term: self.term,
                leader: self.leader.as_deref().map(String::from),
            }),
            _ => {}
        }
        if self.role != Role::Unclustered {
            self.reset_election_timer(now);
        }
    }
}
