//! Inputs: the host's calls that change the node (messages, timeouts, membership, leadership
//! answers, transfers, broadcasts).

use super::*;

/// A heartbeat recognised by [`Node::recognise_heartbeat`]: what a full decode would have found,
/// and the sender's entry.
#[cfg(any(test, not(target_family = "wasm")))]
pub(super) struct KnownHeartbeat {
    term: u64,
    incarnation: u64,
    sent_at: u64,
    known: usize,
}

impl Node {
    /// Handles a datagram received from peer `from`. Invalid input is dropped, counted, and
    /// reported as the error; the node's state is otherwise unchanged, except after an
    /// `implausible_term`, which steps this node's term up by at most `MAX_TERM_JUMP` (once per
    /// `election_timeout_min`, see `docs/protocol.md`).
    pub fn handle_message(&mut self, now: u64, from: &str, bytes: &[u8]) -> Result<(), DropReason> {
        let result = self.accept(now, from, bytes);
        self.count_drop(result)
    }

    /// Counts a dropped input under its reason; returns `result`.
    #[cfg_attr(not(target_family = "wasm"), inline)]
    fn count_drop(&mut self, result: Result<(), DropReason>) -> Result<(), DropReason> {
        if let Err(reason) = result {
            let counters = self.dropped.get_or_insert_with(|| Box::new([0; DropReason::ALL.len()]));
            if let Some(c) = counters.get_mut(reason.index()) {
                *c = c.saturating_add(1);
            }
        }
        result
    }

    pub(super) fn accept(&mut self, now: u64, from: &str, bytes: &[u8]) -> Result<(), DropReason> {
        // Native builds only: in the WebAssembly builds the ~1 KB the recognised path costs would
        // take the component past its 60 KB goal, so they decode every datagram in full. Both
        // paths run the one decoder (`wire::decode_raw`'s header check and `body::read`), and the
        // property that they agree runs on wasm32-wasip1 too (`make test-wasm-core`), with the
        // decode-only path those builds take as one side.
        #[cfg(not(target_family = "wasm"))]
        return self.accept_recognising(now, from, bytes);
        #[cfg(target_family = "wasm")]
        self.accept_decoded(now, from, bytes)
    }

    /// `accept` with the recognised path first: a steady follower's every input is its leader's
    /// next heartbeat, the same bytes as the last one up to its `sent_at`. Everything that
    /// follows the checks runs as for any other datagram.
    #[cfg(any(test, not(target_family = "wasm")))]
    #[inline]
    fn accept_recognising(&mut self, now: u64, from: &str, bytes: &[u8]) -> Result<(), DropReason> {
        if let Some(hb) = self.recognise_heartbeat(from, bytes) {
            self.last_sender = u16::try_from(hb.known).unwrap_or(self.last_sender);
            let greet = self.admit(now, from, hb.incarnation, Some(hb.known), false);
            self.dispatch(now, from, hb.term, Message::Heartbeat { sent_at: hb.sent_at }, Some(hb.known));
            if greet {
                self.greet(from, false);
            }
            return Ok(());
        }
        self.accept_decoded(now, from, bytes)
    }

    /// `accept` for any datagram: decoded in full, every check made.
    fn accept_decoded(&mut self, now: u64, from: &str, bytes: &[u8]) -> Result<(), DropReason> {
        let raw = wire::decode_raw(bytes, self.mac.as_deref().map(|m| &m.receive))?;
        if raw.version > self.wire_cap {
            return Err(DropReason::UnknownVersion);
        }
        // Bytes equal to a known-valid string are valid UTF-8: validate only the unexpected.
        let same_sender = raw.from == from.as_bytes();
        let env_from: &str =
            if same_sender { from } else { core::str::from_utf8(raw.from).map_err(|_| DropReason::Malformed)? };
        if raw.cluster != self.cluster().as_bytes() {
            core::str::from_utf8(raw.cluster).map_err(|_| DropReason::Malformed)?;
            return Err(DropReason::WrongCluster);
        }
        if env_from.is_empty() || env_from.len() > MAX_ID_LEN {
            return Err(DropReason::Malformed);
        }
        if !same_sender {
            return Err(DropReason::SenderMismatch);
        }
        if env_from == self.id() {
            return Err(DropReason::FromSelf);
        }
        let obsolete = |r: &Removed| r.through_term.is_some_and(|t| self.term > t);
        if self.removed.as_ref().and_then(|m| m.get(from)).is_some_and(obsolete) {
            // A run a death notice retired, once this node is past the term it led: nothing that
            // run sent can make this node follow it any more (its terms are older), so the record
            // goes and the sender's heartbeats take the recognised path again.
            self.take_removed(from);
        }
        if let Some(r) = self.removed.as_ref().and_then(|m| m.get(from)) {
            if now < r.until {
                return Err(DropReason::RemovedPeer);
            }
            if r.incarnation == Some(raw.incarnation) && r.through_term.is_none_or(|t| raw.term <= t) {
                // The run that was removed (or that died leading, by its notice): a replay or a
                // very late duplicate, or the removed process itself. Only a restart (a new
                // incarnation) or `join` brings it back.
                return Err(DropReason::Replay);
            }
        }
        if let Message::Observe { seq } = raw.message {
            // Only observers send it, and it counts for nothing: see `observed`.
            return self.observed(now, from, raw.term, raw.incarnation, seq);
        }
        // The peer's entry, found once for the whole message (admit and dispatch reuse it), tried
        // first where the previous message's sender was: a follower hears mostly its leader.
        let known = self.peers.index_of_hinted(Some(usize::from(self.last_sender)), from);
        self.last_sender = known.and_then(|i| u16::try_from(i).ok()).unwrap_or(self.last_sender);
        if known.is_none() {
            // A listed observer is never admitted as a member, whatever it sends.
            if !self.admit_unknown || self.lists_observer(from) {
                return Err(DropReason::UnknownPeer);
            }
            if self.peers.len() >= self.timing.max_peers as usize {
                return Err(DropReason::ViewFull);
            }
        }
        if let Message::DeathNotice = raw.message {
            // Before the term checks: a notice never moves the term, and changes nothing at all
            // unless it ends the leadership this node follows (nor is it news of a live sender).
            return self.death_notice(now, from, raw.term, raw.incarnation, known);
        }
        // `raw.term <= MAX_TERM` here: the decoder refuses larger terms as `malformed` (wire.rs,
        // `terms_past_max_term_neither_encode_nor_decode`).
        if raw.term > self.term.saturating_add(MAX_TERM_JUMP) && !self.bug(Bug::UnboundedTerm) {
            // One message moves this node at most MAX_TERM_JUMP terms, and at most once per
            // election_timeout_min; the message itself is dropped. Refusing such terms outright
            // would cut off for good the members that took a large jump (they would never hear
            // the rest again); stepping lets them be caught up with in a few messages, while
            // exhausting the term space from one member would take 2^21 steps (over 3.6 days at
            // the default 150 ms, every one of them counted and logged).
            if now >= self.jump_allowed_at {
                self.jump_allowed_at = now.saturating_add(self.timing.election_timeout_min);
                self.set_term(now, self.term.saturating_add(MAX_TERM_JUMP));
                if self.role != Role::Follower {
                    self.become_follower(now);
                }
            }
            return Err(DropReason::ImplausibleTerm);
        }
        if let Message::App { seq, .. } = &raw.message {
            let fresh = known.is_none() || {
                let apps = self.apps.get_or_insert_with(Box::default);
                if !apps.contains_key(from) {
                    apps.insert(from, AppWindows::default());
                }
                apps.get_mut(from).is_none_or(|w| w.fresh(raw.incarnation, *seq))
            };
            if !fresh {
                return Err(DropReason::Replay);
            }
        }
        let hello = matches!(raw.message, Message::Hello { .. });
        let greet = self.admit(now, from, raw.incarnation, known, hello);
        self.dispatch(now, from, raw.term, raw.message, known);
        if greet {
            self.greet(from, false);
        }
        Ok(())
    }

    /// `bytes` from member `from`, recognised as a heartbeat by comparing it in place with what
    /// the node knows ([`wire::known_heartbeat`]): this cluster, sender `from`, the node's term
    /// and the incarnation last heard from `from`. Nothing is kept for it. For such a datagram
    /// every check in `accept_decoded` before `admit` passes: the cluster is this node's; the
    /// sender is `from`, which is a member (its entry is `known`), and members have valid ids,
    /// never this node's (`new` skips it in the bootstrap, `join` ignores it, `admit` follows the
    /// checks); a sender with a record in `removed` (a member whose run a death notice retired)
    /// is never recognised, so that record is always checked; the term is no
    /// jump; it is no `App`. The incarnation is the one already recorded, so `admit` records
    /// nothing new. `None` (any doubt) sends the datagram through the full decode, which finds any
    /// reason to drop it.
    #[cfg(any(test, not(target_family = "wasm")))]
    #[inline]
    pub(super) fn recognise_heartbeat(&self, from: &str, bytes: &[u8]) -> Option<KnownHeartbeat> {
        if self.removed.as_ref().is_some_and(|r| r.contains_key(from)) {
            return None;
        }
        let known = self.peers.index_of_hinted(Some(usize::from(self.last_sender)), from)?;
        let incarnation = self.peers.get_at_or_find(Some(known), from)?.incarnation()?;
        let cluster = self.cluster().as_bytes();
        let sent_at = wire::known_heartbeat(
            bytes,
            self.mac.as_deref().map(|m| &m.receive),
            cluster,
            from.as_bytes(),
            self.term,
            incarnation,
        )?;
        Some(KnownHeartbeat { term: self.term, incarnation, sent_at, known })
    }

    /// Handles the passing of time: call at (or after) [`Node::poll_timeout`]. Calling it early or
    /// twice is harmless.
    pub fn handle_timeout(&mut self, now: u64) {
        // Ghosts whose TTL ran out, and silent admitted peers, leave the view.
        // A loop, not `collect` (one copy less of the collecting code).
        let mut expired = Vec::new();
        for (k, p) in self.peers.iter() {
            if self.peer_expiry(p).is_some_and(|t| t <= now) {
                expired.push(String::from(k));
            }
        }
        for peer in expired {
            self.remove_peer(now, &peer, false);
        }

        if self.role == Role::Observer {
            return self.observer_timeout(now);
        }
        if self.role == Role::Leader {
            if self.ranks.is_some() && self.preempt(now) {
                return;
            }
            if self.times.get(HEARTBEAT_DEADLINE).is_some_and(|t| t <= now) {
                self.leader_tick(now);
            }
            return;
        }
        if self.times.get(ELECTION_DEADLINE).is_none_or(|t| t > now) {
            return;
        }
        if self.times.get(AWAITING_CONFIRM).is_some() {
            // The host never answered: a timeout counts as a denial.
            self.deny(now);
            return;
        }
        if !self.clustered() {
            self.times.set(ELECTION_DEADLINE, None);
            return;
        }
        if self.promised(now) {
            // A lease this node contributed to may still run: campaigning would help elect a
            // second leader before it ends.
            self.times.set(ELECTION_DEADLINE, Some(self.promise_until()));
            return;
        }
        if let Some(hold) = self.times.get(CAMPAIGN_HOLD).filter(|h| *h > now) {
            // The host asked this node to let the others lead first (its leader work keeps
            // failing): it still votes, and campaigns only if nobody else has led by then.
            self.times.set(ELECTION_DEADLINE, Some(hold));
            return;
        }
        if self.never_lead() {
            // A witness votes and acknowledges, and never campaigns.
            self.reset_election_timer(now);
            return;
        }
        if self.pre_vote {
            self.start_pre_vote(now);
        } else {
            self.start_election(now, false);
        }
    }

    /// Declares a peer (idempotent). Joining this node's own id is ignored.
    pub fn join(&mut self, now: u64, peer: &str) -> Result<(), Error> {
        check_peer(peer)?;
        if peer == self.id() {
            return Ok(());
        }
        if let Some(p) = self.peers.get_mut(peer) {
            // Declared now, and no longer a ghost on its way out.
            p.set_flag(DECLARED, true);
            p.set_ghost_until(None);
            p.set_flag(SEND_FAILING, false);
            return Ok(());
        }
        if self.peers.len() >= self.timing.max_peers as usize {
            return Err(Error::ViewFull { peer: peer.to_string(), max_peers: self.timing.max_peers });
        }
        // Its delivered payloads (kept in `apps` while it was removed) stay delivered once.
        if self.take_removed(peer).is_none() {
            self.forget_apps(peer);
        }
        self.peers.insert(peer, Peer::declared_new());
        self.push_event(Event::PeerJoined { peer: peer.to_string() });
        self.membership_changed(now);
        Ok(())
    }

    /// Withdraws a peer from the view and from every quorum computed afterwards. Messages from it
    /// are refused for one election timeout so that traffic in flight cannot re-admit it.
    pub fn leave(&mut self, now: u64, peer: &str) -> Result<(), Error> {
        self.check_member(peer)?;
        self.remove_peer(now, peer, true);
        Ok(())
    }

    /// Reports a peer down. `Terminated` removes it at once (like `leave`); `NoConnection` keeps
    /// it in the view for `ghost_ttl` unless it is heard from again.
    pub fn peer_down(&mut self, now: u64, peer: &str, reason: PeerDownReason) -> Result<(), Error> {
        self.check_member(peer)?;
        match reason {
            PeerDownReason::Terminated => self.remove_peer(now, peer, true),
            PeerDownReason::NoConnection => {
                let until = now.saturating_add(self.timing.ghost_ttl);
                if let Some(p) = self.peers.get_mut(peer) {
                    if p.ghost_until().is_none() {
                        p.set_ghost_until(Some(until));
                    }
                    p.set_flag(SEND_FAILING, true);
                }
            }
            PeerDownReason::Refused => {
                if let Some(p) = self.peers.get_mut(peer) {
                    p.set_flag(REFUSED, true);
                }
                self.leader_refused(now, peer)
            }
        }
        Ok(())
    }

    /// `peer_down(peer, Refused)`: if `peer` is the leader this node follows, stop waiting for it.
    pub(super) fn leader_refused(&mut self, now: u64, peer: &str) {
        if self.role == Role::Observer && self.leader.as_deref() == Some(peer) {
            // An observer promised nothing: it stops reporting a leader whose port refused (or
            // that said it is stopping) at once, and reports the next one it hears.
            self.times.set(ELECTION_DEADLINE, Some(now));
            return self.observer_timeout(now);
        }
        if self.role != Role::Follower || self.leader.as_deref() != Some(peer) {
            return;
        }
        if self.bug(Bug::RefusedReleasesPromise) {
            self.acked_until = now.min(self.acked_until);
        }
        // Stickiness ends (so this node grants pre-votes once its promise runs out), but nothing
        // visible happens yet: a live leader's next heartbeat makes this a no-op.
        self.times.set(LEADER_CONTACT, None);
        self.refused_until = Some(now.saturating_add(self.timing.election_timeout_max));
        let at = self.failover_slot(now, Some(peer));
        if self.times.get(ELECTION_DEADLINE).is_none_or(|t| t > at) {
            self.times.set(ELECTION_DEADLINE, Some(at));
        }
    }

    /// When a survivor of a leader's death campaigns: at its rank among the view's members (by
    /// id, without `gone`) times one slot of `election_timeout_min / 10`, plus jitter inside the
    /// slot, counted from the end of its lease promise. The first survivor normally wins before
    /// the second starts, so the vote does not split as it would if all of them drew from the
    /// same short window.
    pub(super) fn failover_slot(&mut self, now: u64, gone: Option<&str>) -> u64 {
        let slot = self.failover_slot_len();
        let rank = match self.campaign_rank(gone) {
            Some(rank) => rank,
            None => self.peers.keys().filter(|p| *p < self.id() && Some(*p) != gone).count() as u64,
        };
        let jitter = self.rng.range_inclusive(0, slot / 3);
        // Never before a promise that still binds (a boot promise, say) runs out.
        let start = now.max(self.promise_until());
        start.saturating_add(rank.saturating_mul(slot)).saturating_add(jitter)
    }

    pub(super) fn failover_slot_len(&self) -> u64 {
        (self.timing.election_timeout_min / 10).max(2)
    }

    /// Answers an [`Event::ConfirmLeader`]: `true` publishes leadership, `false` withholds it and
    /// backs off (`election_timeout_max` × consecutive denials, at most × 20). A grant that comes
    /// after the winning votes are older than `election_timeout_min` (dated when the campaign
    /// asked for them) publishes nothing: check quorum holds from a leadership's first moment,
    /// so the node follows again (`BecameFollower`, no back-off) instead of leading on them.
    pub fn confirm_leader(&mut self, now: u64, term: u64, granted: bool) -> Result<(), Error> {
        if self.times.get(AWAITING_CONFIRM) != Some(term) || self.term != term {
            return Err(Error::NoPendingConfirm { term });
        }
        if granted {
            self.times.set(AWAITING_CONFIRM, None);
            self.become_leader(now);
        } else {
            self.deny(now);
        }
        Ok(())
    }

    /// Reports that the host's became-leader handler failed: leadership is rolled back, the node
    /// steps down and backs off as after a denial.
    pub fn leader_handler_failed(&mut self, now: u64, term: u64) -> Result<(), Error> {
        if self.role != Role::Leader || self.term != term {
            return Err(Error::NotLeaderInTerm { term });
        }
        self.deny(now);
        Ok(())
    }

    /// Limits the wire versions this node speaks to `version` (clamped to
    /// [`wire::MIN_VERSION`]`..=`[`wire::VERSION`]; returns the limit in effect). At
    /// `wire::MIN_VERSION` the node behaves on the wire exactly as v0.1.0: it sends and answers no
    /// `Hello`, drops datagrams of newer versions as [`DropReason::UnknownVersion`], and its
    /// [`Node::wire_version`] stays at the oldest. For pinning a cluster to the old messages
    /// through an upgrade, and for simulating and model-checking clusters that mix versions.
    pub fn limit_wire_version(&mut self, version: u8) -> u8 {
        self.wire_cap = version.clamp(wire::MIN_VERSION, wire::VERSION);
        self.wire_cap
    }

    /// Asks this node to campaign last until `until` (runtime clock): it starts no campaign of its
    /// own before then, not even when a leader hands leadership to it (that leader's peers then
    /// elect one of themselves after their election timeout), but votes and follows as usual. A host
    /// whose leader-only work keeps failing calls it after stepping down, so that any other member
    /// that can lead does so first, and this node leads again only when nobody else has by then.
    /// A later call replaces the instant (one at or before `now` ends the hold; an election
    /// deadline it already moved stays).
    pub fn hold_campaigns(&mut self, now: u64, until: u64) {
        self.times.set(CAMPAIGN_HOLD, (until > now).then_some(until));
        if until > now && self.role == Role::Follower && self.times.get(ELECTION_DEADLINE).is_some_and(|t| t < until) {
            self.times.set(ELECTION_DEADLINE, Some(until));
        }
    }

    /// Hands leadership to `peer`: it campaigns at once, and this node stops leading now. If no
    /// new leader appears, this node campaigns again after one election timeout.
    pub fn transfer_leadership(&mut self, now: u64, peer: &str) -> Result<(), Error> {
        if self.role != Role::Leader {
            return Err(Error::NotLeader);
        }
        self.check_member(peer)?;
        self.send(peer, &Message::TimeoutNow);
        self.leader = None;
        self.times.set(LEADER_CONTACT, None);
        // The lease ends here: this node stops leading before the target campaigns.
        self.bound_until = now;
        self.become_follower(now);
        let deadline = now.saturating_add(self.timing.election_timeout_max);
        self.times.set(ELECTION_DEADLINE, Some(deadline));
        Ok(())
    }

    /// Sends an application payload to every member of the view.
    pub fn broadcast(&mut self, _now: u64, payload: &[u8]) -> Result<(), Error> {
        let max = MAX_MESSAGE_SIZE - 1024;
        if payload.len() > max {
            return Err(Error::PayloadTooLarge { size: payload.len(), max });
        }
        let seq = self.app_seq;
        self.app_seq = self.app_seq.wrapping_add(1);
        let peers = self.peer_ids(0);
        let message = Message::App { seq, payload: payload.to_vec() };
        for p in peers {
            self.send(&p, &message);
        }
        Ok(())
    }
}

// The recognised path against the full decode, on every target (see `accept`).
#[cfg(test)]
mod tests;
