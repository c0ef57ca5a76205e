//! Death notices: a dead leader's watchdog tells the followers that its leadership ended, so that
//! they fail over as fast as after a handover instead of waiting out the promise made to it
//! (`docs/protocol.md`, "Death notices").

use super::*;

impl Node {
    /// The death notices of this node's current leadership: one encoded (and, with a key,
    /// authenticated) datagram per member of the view that said it speaks wire version 4 or
    /// later, as (peer id, bytes). Empty unless this node leads.
    ///
    /// The host hands them to a process that outlives this one (the runtime's watchdog), which
    /// sends them from this node's address once it has proof that this process, and every piece
    /// of work its lease covers, has ended before the lease deadline. Members that never said
    /// they speak version 4 (v0.1.0) get none: they keep their promise and fail over by the
    /// lease path, and are never sent a kind they cannot read.
    pub fn death_notices(&self) -> Vec<(String, Vec<u8>)> {
        let message = Message::DeathNotice;
        if self.role != Role::Leader || self.wire_cap < message.wire_version() {
            return Vec::new();
        }
        let env = EnvelopeRef {
            cluster: self.cluster(),
            from: self.id(),
            term: self.term,
            incarnation: self.incarnation,
            message: &message,
        };
        let Ok(len) = wire::encoded_len(&env, self.mac.is_some()) else {
            return Vec::new();
        };
        let every = self.bug(Bug::NoticeToEveryMember);
        let mac = self.mac.as_deref().map(|m| &m.send);
        // A plain loop rather than an iterator chain: the same work in less WebAssembly code.
        let mut notices = Vec::new();
        for (to, p) in self.peers.iter() {
            if every || p.has(SPEAKS) {
                let mut bytes = Vec::with_capacity(len);
                wire::write(&mut bytes, &env, mac, to.as_bytes());
                notices.push((String::from(to), bytes));
            }
        }
        notices
    }

    /// A death notice from member `from` (its entry is `known`) about the leadership of `term` in
    /// `incarnation`. Accepted only by a follower that acknowledged exactly that leadership: a
    /// heartbeat of `from` in its current term `term`, from the run `incarnation`. It then
    /// releases the promise made to `from` (only that one: `acked_until` is raised only by
    /// acknowledgements, and its newest went to `from`), forgets it as leader, retires that run of
    /// it and campaigns as after `peer_down(terminated)`: pre-vote and ordinary votes in rank
    /// order, never the transfer vote. `from` stays a member: the quorum does not shrink.
    /// Anything else changes nothing ([`DropReason::NoticeMismatch`]; a second copy of an
    /// accepted notice comes from the retired run: [`DropReason::Replay`] in `accept`).
    pub(super) fn death_notice(
        &mut self,
        now: u64,
        from: &str,
        term: u64,
        incarnation: u64,
        known: Option<usize>,
    ) -> Result<(), DropReason> {
        let acknowledged = self.role == Role::Follower
            && term == self.term
            && matches!(&self.leader_heartbeat, Some((l, _)) if **l == *from)
            && self.peers.get_at_or_find(known, from).is_some_and(|p| p.incarnation() == Some(incarnation));
        if !acknowledged {
            return Err(DropReason::NoticeMismatch);
        }
        if let Some(p) = self.peers.get_hinted_mut(known, from) {
            p.set_flag(ACKED, false);
        }
        // The notice vouches that no lease of this leadership still runs: the promise is released.
        self.acked_until = now.min(self.acked_until);
        // A late or replayed message of the dead run (a heartbeat in flight when it died, with a
        // newer `sent_at` than any seen) must not make this node follow it again: its messages of
        // this term and older are refused (`accept`; never recognised as heartbeats meanwhile).
        self.retire(from, now, Some(incarnation), Some(term));
        self.leader = None;
        self.leader_heartbeat = None;
        self.times.set(LEADER_CONTACT, None);
        // The other followers learn of the death within milliseconds of this one: a pre-vote they
        // refused is retried one rank slot later, as after a refused port.
        self.refused_until = Some(now.saturating_add(self.timing.election_timeout_max));
        let at = self.failover_slot(now, Some(from));
        self.times.set(ELECTION_DEADLINE, Some(at));
        self.push_event(Event::BecameFollower { term: self.term, leader: None });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;

    use crate::wire::{encode, Envelope, Message};
    use crate::{Config, Node};

    fn from_n2(term: u64, incarnation: u64, message: Message) -> alloc::vec::Vec<u8> {
        let e = Envelope { cluster: "c".to_string(), from: "n2".to_string(), term, incarnation, message };
        encode(&e, None).unwrap()
    }

    /// The retirement lasts while it matters: once this node is past the dead leader's term, the
    /// record goes with the sender's next message, and its heartbeats are recognised again.
    #[test]
    fn a_retired_run_s_record_goes_once_this_node_is_past_its_term() {
        let mut n = Node::new(Config::new("n1", "c").bootstrap(["n1", "n2", "n3"]), 1, None, 0).unwrap();
        n.handle_message(200, "n2", &from_n2(1, 7, Message::Heartbeat { sent_at: 200 })).unwrap();
        n.handle_message(210, "n2", &from_n2(1, 7, Message::DeathNotice)).unwrap();
        assert!(n.removed.is_some());
        // A new leader of term 2, then the dead leader's new run.
        let e = Envelope {
            cluster: "c".to_string(),
            from: "n3".to_string(),
            term: 2,
            incarnation: 9,
            message: Message::Heartbeat { sent_at: 300 },
        };
        n.handle_message(300, "n3", &encode(&e, None).unwrap()).unwrap();
        assert!(n.removed.is_some(), "only a message from the retired sender looks at its record");
        n.handle_message(310, "n2", &from_n2(2, 8, Message::HeartbeatAck { echo: 1 })).unwrap();
        assert!(n.removed.is_none());
        let hb = from_n2(2, 8, Message::Heartbeat { sent_at: 320 });
        assert!(n.recognise_heartbeat("n2", &hb).is_some());
        // A replay of the dead run is harmless now: an older term (answered, never followed).
        n.handle_message(311, "n2", &from_n2(1, 7, Message::Heartbeat { sent_at: 999 })).unwrap();
        assert_eq!(n.leader(), Some("n3"));
    }
}
