//! Membership: admitting, forgetting and removing peers, and what a changed view does to the
//! role.

use super::*;

impl Node {
    /// `known`: where `from`'s entry is, if it is a member: `accept`'s `IdMap::index_of_hinted`,
    /// with `peers` unchanged since (its two calls of `admit` follow the search directly).
    ///
    /// Returns whether to greet `from` with a `Hello` once the message is handled: a peer not
    /// known to speak this core's newest wire version is greeted at most once per
    /// `HELLO_RETRY_TIMEOUTS` election timeouts per run of it, unless the message is itself a
    /// `Hello` (`hello`), which is answered instead.
    #[must_use]
    pub(super) fn admit(&mut self, now: u64, from: &str, incarnation: u64, known: Option<usize>, hello: bool) -> bool {
        let retry = self.timing.election_timeout_max.saturating_mul(HELLO_RETRY_TIMEOUTS);
        // A node limited to the oldest version greets nobody, as a node of that version.
        // Nor does an observer: it sends members nothing but `Observe`.
        let hello = hello || self.wire_cap <= wire::MIN_VERSION || self.role == Role::Observer;
        // No search and no comparison on the steady path (a known peer's every message): `accept`
        // found the entry.
        let entry = known.and_then(|i| self.peers.at_mut(i));
        debug_assert!(entry.as_ref().is_none_or(|(k, _)| *k == from), "a stale index for {from}");
        let (is_new, greet) = match entry.map(|(_, p)| p) {
            Some(p) => {
                p.heard(now, incarnation);
                (false, !hello && p.greet(now, retry))
            }
            None => {
                if self.take_removed(from).is_none() {
                    self.forget_apps(from);
                }
                let mut p = Peer::default();
                p.heard(now, incarnation);
                let greet = !hello && p.greet(now, retry);
                self.peers.insert(from, p);
                (true, greet)
            }
        };
        if is_new {
            self.push_event(Event::PeerJoined { peer: from.to_string() });
            self.membership_changed(now);
        }
        greet
    }

    /// Tells `to` which wire version this node speaks (`reply`: answering its `Hello`).
    pub(super) fn greet(&mut self, to: &str, reply: bool) {
        self.send(to, &Message::Hello { version: wire::VERSION, reply });
    }

    /// Drops what was delivered from `peer` (it is neither a member nor a removed peer any more).
    pub(super) fn forget_apps(&mut self, peer: &str) {
        if let Some(apps) = self.apps.as_mut() {
            apps.remove(peer);
            if apps.is_empty() {
                self.apps = None;
            }
        }
    }

    /// Takes `peer`'s record out of `removed` (freeing the map once empty).
    pub(super) fn take_removed(&mut self, peer: &str) -> Option<Removed> {
        let removed = self.removed.as_mut()?;
        let r = removed.remove(peer);
        if removed.is_empty() {
            self.removed = None;
        }
        r
    }

    pub(super) fn remove_peer(&mut self, now: u64, peer: &str, sticky: bool) {
        let Some(gone) = self.peers.remove(peer) else {
            return;
        };
        let was_acked = gone.has(ACKED);
        if sticky {
            let until = now.saturating_add(self.timing.election_timeout_max);
            self.retire(peer, until, gone.incarnation(), None);
        } else {
            self.forget_apps(peer);
        }
        if let Some(c) = &mut self.campaign {
            c.granted.remove(peer);
        }
        self.push_event(Event::PeerLeft { peer: peer.to_string() });
        if was_acked {
            // The host vouches that this leader is gone (terminated, or withdrawn with `leave`):
            // no lease of it still runs, so the promise made to it is released. `no_connection`
            // never does this (the peer may be alive behind a broken link).
            self.acked_until = now.min(self.acked_until);
        }
        if self.leader.as_deref() == Some(peer) {
            // Fast failover: the leader is known to be gone, so nobody should wait a full election
            // timeout, and nobody stays loyal to it (stickiness ends).
            self.leader = None;
            self.times.set(LEADER_CONTACT, None);
            if self.role == Role::Follower {
                // Survivors campaign in turn (see `failover_slot`).
                let at = self.failover_slot(now, None);
                self.times.set(ELECTION_DEADLINE, Some(at));
                self.push_event(Event::BecameFollower { term: self.term, leader: None });
            } else if self.role == Role::Observer {
                self.times.set(ELECTION_DEADLINE, None);
                self.push_event(Event::BecameFollower { term: self.term, leader: None });
            }
        }
        self.membership_changed(now);
    }

    /// Records `peer` in `removed`: its messages are refused until `until`, and those of run
    /// `incarnation` (of terms up to `through_term`, if given) for as long as the record is kept. Bounded by `max_peers` records: the one
    /// with the earliest `until` makes room (its run is no longer retired). A member's record
    /// (the retired run of a leader whose death notice was accepted, `Removed`) keeps its
    /// delivered payloads; a removed peer's go with its record.
    pub(super) fn retire(&mut self, peer: &str, until: u64, incarnation: Option<u64>, through_term: Option<u64>) {
        let max = self.timing.max_peers as usize;
        let removed = self.removed.get_or_insert_with(Box::default);
        if removed.len() >= max && !removed.contains_key(peer) {
            let oldest = removed.iter().min_by_key(|(_, r)| r.until).map(|(k, _)| String::from(k));
            if let Some(k) = oldest {
                removed.remove(&k);
                if !self.peers.contains_key(&k) {
                    self.forget_apps(&k);
                }
            }
        }
        self.removed.get_or_insert_with(Box::default).insert(peer, Removed { until, incarnation, through_term });
    }

    /// Re-evaluates the role after the view changed.
    pub(super) fn membership_changed(&mut self, now: u64) {
        if self.role == Role::Observer {
            return;
        }
        let clustered = self.clustered();
        match (self.role, clustered) {
            (Role::Unclustered, true) => {
                self.role = Role::Follower;
                self.push_event(Event::BecameFollower {
                    term: self.term,
                    leader: self.leader.as_deref().map(String::from),
                });
                self.reset_election_timer(now);
            }
            (Role::Unclustered, false) => {}
            (_, false) => {
                let was = self.role;
                self.role = Role::Unclustered;
                self.campaign = None;
                self.times.set(AWAITING_CONFIRM, None);
                self.times.set(ELECTION_DEADLINE, None);
                self.times.set(HEARTBEAT_DEADLINE, None);
                if was == Role::Leader {
                    self.leader = None;
                }
                if was != Role::Follower {
                    self.push_event(Event::BecameFollower { term: self.term, leader: None });
                }
            }
            (Role::Candidate, true) => self.check_campaign(now),
            (_, true) => {}
        }
    }
}
