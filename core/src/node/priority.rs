//! Priorities, a preferred leader and witnesses.
//!
//! Every member has a priority (`Config::priority`, default 0) and may be a witness
//! (`Config::never_lead`). A member whose own pair is not the default tells it, in a `Priority`
//! message, to each member that said it speaks wire version 4 (at once when that member's run says
//! so, and again every `election_timeout_min` while that run has not answered with a `Priority`
//! marked `reply`). A member of wire version 3, and a member that said nothing, has priority 0 and
//! may lead. A member that knows a rank from an earlier run of a peer asks the new run for its
//! own (a `Priority` of its own rank, which the new run answers with its rank). Nothing is sent in a cluster where every member has the default pair: its bytes are
//! those of a cluster without priorities.
//!
//! What a member knows of the others' priorities orders its campaigns (higher first, then the
//! smaller id), and lets a leader hand leadership to a member of higher priority that answered
//! it steadily for `preempt_after` (a preemption, which is a leadership transfer). All of it is
//! liveness: no vote, term or lease depends on a priority, so a lost or stale `Priority` costs at
//! most a slower election or a preemption that does not happen.

use super::*;

/// After preempting to a member, this node does not preempt to it again for this many
/// `preempt_after`. A member that cannot take or keep leadership (its host holds its campaigns, or
/// its leader work fails) then costs at most one handover per this window and leader instead of
/// one every `preempt_after`; a member that took leadership and kept it past the window is
/// preempted to again as soon as it answers steadily, as any other.
pub const PREEMPT_BACKOFF_FACTOR: u64 = 8;

/// What this node knows of one peer's rank, and, while leading, how steadily it answers.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "model-check", derive(Hash))]
struct PeerRank {
    /// The run (incarnation) of the peer the rank below came from; another run has the defaults
    /// until it says otherwise.
    learned: Option<u64>,
    priority: u32,
    never_lead: bool,
    /// The run of the peer that answered this node's own `Priority` (it knows this node's rank).
    told: Option<u64>,
    /// When this node's `Priority` last went to it.
    told_at: Option<u64>,
    /// While leading: when its current unbroken series of acknowledgements started, and when the
    /// newest arrived (a gap longer than `election_timeout_min` starts a new series).
    since: Option<u64>,
    seen: u64,
    /// Not preempted to by this node before this instant.
    backoff_until: u64,
}

/// A node's priority state (boxed in [`Node`]; absent while the node and every peer it heard of
/// have the default rank).
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "model-check", derive(Hash))]
pub(super) struct Ranks {
    priority: u32,
    never_lead: bool,
    peers: IdMap<PeerRank>,
}

impl Ranks {
    /// The state of a node configured with `priority` and `never_lead` (`None` for the defaults).
    pub(super) fn configured(priority: u32, never_lead: bool) -> Option<Box<Ranks>> {
        (priority != 0 || never_lead).then(|| Box::new(Ranks { priority, never_lead, peers: IdMap::new() }))
    }

    fn entry(&mut self, peer: &str) -> Option<&mut PeerRank> {
        if !self.peers.contains_key(peer) {
            self.peers.insert(peer, PeerRank::default());
        }
        self.peers.get_mut(peer)
    }
}

impl Node {
    /// This node's priority (`Config::priority`).
    pub fn priority(&self) -> u32 {
        self.ranks.as_deref().map_or(0, |r| r.priority)
    }

    /// Whether this node is a witness (`Config::never_lead`): it never campaigns.
    pub fn never_lead(&self) -> bool {
        self.ranks.as_deref().is_some_and(|r| r.never_lead)
    }

    /// The priority and witness flag member `peer` told this node for its current run: `(0,
    /// false)` for a member that told nothing (a member of wire version 3 included); `None` for a
    /// peer that is not a member.
    pub fn peer_priority(&self, peer: &str) -> Option<(u32, bool)> {
        let p = self.peers.get(peer)?;
        Some(self.rank_of(peer, p))
    }

    /// Every member that told this node a rank other than the default, with its priority and
    /// witness flag (sorted by id).
    pub fn known_priorities(&self) -> Vec<(String, u32, bool)> {
        let mut out = Vec::new();
        for (id, p) in self.peers.iter() {
            let (priority, never_lead) = self.rank_of(id, p);
            if priority != 0 || never_lead {
                out.push((String::from(id), priority, never_lead));
            }
        }
        out
    }

    pub(super) fn rank_of(&self, id: &str, p: &Peer) -> (u32, bool) {
        match self.ranks.as_deref().and_then(|r| r.peers.get(id)) {
            Some(r) if r.learned.is_some() && r.learned == p.incarnation() => (r.priority, r.never_lead),
            _ => (0, false),
        }
    }

    fn own_rank_is_default(&self) -> bool {
        self.ranks.as_deref().is_none_or(|r| r.priority == 0 && !r.never_lead)
    }

    /// Sends this node's rank to `to`.
    fn tell_rank(&mut self, now: u64, to: &str, reply: bool) {
        let (priority, never_lead) = (self.priority(), self.never_lead());
        if let Some(r) = self.ranks.as_deref_mut().and_then(|r| r.entry(to)) {
            r.told_at = Some(now);
        }
        self.send(to, &Message::Priority { priority, never_lead, reply });
    }

    /// A run of `peer` said, for the first time, that it speaks wire version 4: it is told this
    /// node's rank at once (nothing when the rank is the default).
    pub(super) fn rank_to_new_speaker(&mut self, now: u64, peer: &str) {
        if !self.own_rank_is_default() && self.wire_cap >= 4 {
            self.tell_rank(now, peer, false);
        }
    }

    /// Tells this node's rank again to each member that speaks version 4 and whose current run
    /// has not answered it, at most once per `election_timeout_min` each (a lost `Priority`, or
    /// a lost answer). Run with each heartbeat round as leader and each heartbeat accepted as
    /// follower; nothing when the rank is the default, except to ask (below).
    ///
    /// Also asks each member whose rank this node learned from an earlier run of that member:
    /// the answer to this node's `Priority` carries the new run's rank. That run may never tell
    /// it by itself: an answer this node gave to a late datagram of the earlier run reads, at the
    /// new run, as an answer to its own `Priority`. Even a node of the default rank asks, so a
    /// cluster where every member has the default rank still sends nothing.
    pub(super) fn retell_ranks(&mut self, now: u64) {
        if self.wire_cap < 4 {
            return;
        }
        let own_default = self.own_rank_is_default();
        let retry = self.timing.election_timeout_min;
        let mut due = Vec::new();
        if let Some(ranks) = self.ranks.as_deref() {
            for (id, p) in self.peers.iter() {
                if !p.has(SPEAKS) {
                    continue;
                }
                let r = ranks.peers.get(id);
                let told = r.is_some_and(|r| r.told.is_some() && r.told == p.incarnation());
                let stale = r.is_some_and(|r| r.learned.is_some() && r.learned != p.incarnation());
                let recent = r.and_then(|r| r.told_at).is_some_and(|t| now < t.saturating_add(retry));
                if ((!own_default && !told) || stale) && !recent {
                    due.push(String::from(id));
                }
            }
        }
        for to in due {
            self.tell_rank(now, &to, false);
        }
    }

    /// A `Priority` from member `from` (its current run is the one `admit` just recorded): kept,
    /// and answered unless it is an answer itself.
    pub(super) fn on_priority(&mut self, now: u64, from: &str, priority: u32, never_lead: bool, reply: bool) {
        let Some(incarnation) = self.peers.get(from).and_then(Peer::incarnation) else { return };
        if self.ranks.is_none() && priority == 0 && !never_lead && !reply {
            // The default from a node that knows nothing new: keep nothing, answer.
            self.tell_rank(now, from, true);
            return;
        }
        let ranks = self.ranks.get_or_insert_with(Box::default);
        if let Some(r) = ranks.entry(from) {
            if r.learned != Some(incarnation) {
                r.since = None;
            }
            r.learned = Some(incarnation);
            r.priority = priority;
            r.never_lead = never_lead;
            if reply {
                r.told = Some(incarnation);
            }
        }
        if !reply {
            self.tell_rank(now, from, true);
        }
        if self.role == Role::Leader {
            // Its rank arrives a round trip after its first answers to this leadership (its
            // `Priority` follows the greeting its first acknowledgement prompted): the series of
            // answers starts here, not a heartbeat interval later with its next acknowledgement.
            self.note_answer(now, from);
        }
    }

    /// Whether `peer` may be given leadership by a preemption from this leader: it told a priority
    /// above this node's, is no witness, and the host reports nothing wrong with it.
    fn preemptible(&self, id: &str, p: &Peer) -> bool {
        let (priority, never_lead) = self.rank_of(id, p);
        priority > self.priority()
            && !never_lead
            && !p.has(REFUSED)
            && !p.has(SEND_FAILING)
            && p.ghost_until().is_none()
    }

    /// While leading: `from` acknowledged one of this leadership's heartbeats. Extends (or starts)
    /// its series of steady answers when it is a member this node may preempt to.
    pub(super) fn note_answer(&mut self, now: u64, from: &str) {
        let window = self.timing.election_timeout_min;
        let eligible = self.peers.get(from).is_some_and(|p| self.preemptible(from, p));
        if let Some(r) = self.ranks.as_deref_mut().and_then(|r| r.peers.get_mut(from)) {
            if !eligible {
                r.since = None;
                return;
            }
            if r.since.is_none() || now > r.seen.saturating_add(window) {
                r.since = Some(now);
            }
            r.seen = now;
        }
    }

    /// A leadership starts: every series of answers starts again.
    pub(super) fn ranks_new_leadership(&mut self) {
        if let Some(ranks) = self.ranks.as_deref_mut() {
            for r in ranks.peers.values_mut() {
                r.since = None;
            }
        }
    }

    /// While leading with preemption on: the earliest instant a preemption may be due.
    pub(super) fn preempt_at(&self) -> Option<u64> {
        if self.role != Role::Leader || self.timing.preempt_after == 0 {
            return None;
        }
        let ranks = self.ranks.as_deref()?;
        let mut next: Option<u64> = None;
        for (id, r) in ranks.peers.iter() {
            let Some(since) = r.since else { continue };
            if !self.peers.get(id).is_some_and(|p| self.preemptible(id, p)) {
                continue;
            }
            let at = since.saturating_add(self.timing.preempt_after).max(r.backoff_until);
            next = Some(next.map_or(at, |n| n.min(at)));
        }
        next
    }

    /// While leading: hands leadership to the member of highest priority (then smallest id) that
    /// has answered steadily for `preempt_after` and is not in its backoff, if any. Forgets the
    /// series of members that stopped answering or may no longer be preempted to (so that
    /// [`Node::preempt_at`] never names an instant already past for nothing). `true`: preempted.
    pub(super) fn preempt(&mut self, now: u64) -> bool {
        if self.preempt_at().is_none_or(|at| at > now) {
            return false;
        }
        let window = self.timing.election_timeout_min;
        let after = self.timing.preempt_after;
        let mut stale = Vec::new();
        let mut best: Option<(u32, String)> = None;
        if let Some(ranks) = self.ranks.as_deref() {
            for (id, r) in ranks.peers.iter() {
                let Some(since) = r.since else { continue };
                let ok = self.peers.get(id).is_some_and(|p| self.preemptible(id, p));
                if !ok || now > r.seen.saturating_add(window) {
                    stale.push(String::from(id));
                    continue;
                }
                let due = now >= since.saturating_add(after) && now >= r.backoff_until;
                if due && best.as_ref().is_none_or(|(b, _)| r.priority > *b) {
                    best = Some((r.priority, String::from(id)));
                }
            }
        }
        if let Some(ranks) = self.ranks.as_deref_mut() {
            for id in &stale {
                if let Some(r) = ranks.peers.get_mut(id) {
                    r.since = None;
                }
            }
        }
        let Some((_, target)) = best else { return false };
        if let Some(r) = self.ranks.as_deref_mut().and_then(|r| r.peers.get_mut(&target)) {
            r.backoff_until = now.saturating_add(after.saturating_mul(PREEMPT_BACKOFF_FACTOR));
            r.since = None;
        }
        if self.bug(Bug::PreemptWithoutTransfer) {
            // Tells the member to campaign but goes on leading, its lease running.
            self.send(&target, &Message::TimeoutNow);
            return false;
        }
        self.transfer_leadership(now, &target).is_ok()
    }

    /// This node's place in the order in which members campaign, among the members that may lead
    /// and that the host reports nothing wrong with (without `gone`): how many of them have a
    /// higher priority, or the same and a smaller id. `None` when every such member has this
    /// node's priority and none is a witness: the order is then by id alone, as without priorities.
    pub(super) fn campaign_rank(&self, gone: Option<&str>) -> Option<u64> {
        self.ranks.as_deref()?;
        let own = self.priority();
        let mut uniform = !self.never_lead();
        let mut rank = 0u64;
        for (id, p) in self.peers.iter() {
            let (priority, never_lead) = self.rank_of(id, p);
            uniform &= priority == own && !never_lead;
            let healthy = !p.has(REFUSED) && !p.has(SEND_FAILING) && p.ghost_until().is_none();
            if never_lead || !healthy || Some(id) == gone {
                continue;
            }
            if priority > own || (priority == own && id < self.id()) {
                rank = rank.saturating_add(1);
            }
        }
        (!uniform).then_some(rank)
    }

    /// The election deadline of a member in a cluster with priorities: one slot
    /// (`election_timeout_min / 10`) per member ahead of it in the campaign order, after
    /// `election_timeout_min` and one slot more (the slot that lets every member's stickiness and
    /// lease promise run out first), plus jitter inside the slot; at most the last slot below
    /// `election_timeout_max`. `None` when the order is by id alone (the timer is drawn as
    /// without priorities).
    pub(super) fn ranked_deadline(&mut self, now: u64) -> Option<u64> {
        let rank = self.campaign_rank(None)?;
        let slot = self.failover_slot_len();
        let spread = self.timing.election_timeout_max - self.timing.election_timeout_min;
        let last = (spread / slot).saturating_sub(1).max(1);
        let jitter = self.rng.range_inclusive(0, slot / 3);
        let offset = rank.saturating_add(1).min(last).saturating_mul(slot).saturating_add(jitter);
        Some(now.saturating_add(self.timing.election_timeout_min).saturating_add(offset))
    }
}
