//! Queries: what the node knows and what it asks of the host (`poll_timeout`, `poll_output`,
//! `inspect`).

use super::*;

impl Node {
    /// This node's id.
    pub fn id(&self) -> &str {
        // `0..n`, not `..n`: one `str::get` for every slice (see `vecmap::name`).
        self.names.get(0..usize::from(self.id_len)).unwrap_or("")
    }
    /// The cluster id.
    pub fn cluster(&self) -> &str {
        self.names.get(usize::from(self.id_len)..self.names.len()).unwrap_or("")
    }
    /// The current role.
    pub fn role(&self) -> Role {
        self.role
    }
    /// The current term.
    pub fn term(&self) -> u64 {
        self.term
    }
    /// Whom this node voted for in the current term.
    pub fn voted_for(&self) -> Option<&str> {
        self.voted_for.as_deref()
    }
    /// The leader this node knows of in the current term (itself when leading).
    pub fn leader(&self) -> Option<&str> {
        self.leader.as_deref()
    }
    /// Whether this node is the (confirmed) leader.
    pub fn is_leader(&self) -> bool {
        self.role == Role::Leader
    }
    /// The wire version every member of the view is known to speak: [`wire::VERSION`] once each
    /// has said so in a `Hello` (of the run of it last heard from), else [`wire::MIN_VERSION`].
    /// Messages added after version 3 are sent only at [`wire::VERSION`]; a member restarted
    /// with an older version closes the gate again with its first message. A leader knows every
    /// member's within a heartbeat round trip; a follower knows those it exchanges messages with.
    pub fn wire_version(&self) -> u8 {
        if self.wire_cap > wire::MIN_VERSION && self.peers.values().all(|p| p.has(SPEAKS)) {
            wire::VERSION
        } else {
            wire::MIN_VERSION
        }
    }
    /// The view: this node and every peer it counts, sorted.
    pub fn view(&self) -> Vec<String> {
        // Peers are kept sorted: insert self in place rather than sorting (no sort code linked).
        let mut v: Vec<String> = Vec::with_capacity(self.peers.len() + 1);
        // An observer is in nobody's view, its own included.
        let mut placed = self.role == Role::Observer;
        for p in self.peers.keys() {
            if !placed && self.id() < p {
                v.push(self.id().to_string());
                placed = true;
            }
            v.push(p.to_string());
        }
        if !placed {
            v.push(self.id().to_string());
        }
        v
    }
    /// Number of nodes in the view, counting self.
    pub fn view_size(&self) -> usize {
        // An observer is in nobody's view, its own included.
        self.peers.len() + usize::from(self.role != Role::Observer)
    }
    /// Votes needed to win: a majority of the view, counting self.
    pub fn quorum(&self) -> usize {
        let q = self.view_size() / 2 + 1;
        if self.bug(Bug::QuorumOffByOne) {
            q.saturating_sub(1).max(1)
        } else {
            q
        }
    }
    /// The effective timing configuration and the warnings found in the configuration.
    pub fn config(&self) -> &ValidConfig {
        &self.timing
    }
    /// Warnings found in the configuration.
    pub fn warnings(&self) -> &[ConfigWarning] {
        &self.timing.warnings
    }
    /// The fencing token: the term, while leading.
    pub fn fencing_token(&self) -> Option<u64> {
        if self.is_leader() {
            Some(self.term)
        } else {
            None
        }
    }
    /// While leading: the last instant (host clock) at which this node can still be sure that no
    /// other leader has been elected, from the heartbeats a quorum acknowledged: the `sent_at` of
    /// the newest heartbeat a quorum (counting itself) acknowledged, plus
    /// [`ValidConfig::lease_span`] (`lease_duration` less the clock-drift margin). `None`
    /// when not leading or before a quorum has acknowledged a heartbeat.
    ///
    /// It holds because no node helps elect another leader before a promise it made has run out
    /// (see `docs/protocol.md`, "The lease"), within the clock-rate bound `max_clock_drift_ppm`.
    #[must_use]
    pub fn lease_deadline(&self) -> Option<u64> {
        if !self.is_leader() {
            return None;
        }
        let need = self.quorum().saturating_sub(1);
        if need == 0 {
            return self.times.get(HEARTBEAT_OUT_LAST).map(|t| t.saturating_add(self.timing.lease_span));
        }
        nth_newest(|| self.peers.values().filter_map(Peer::ack_echo), need)
            .map(|t| t.saturating_add(self.timing.lease_span))
    }
    /// Decodes a datagram addressed to this node, with its key, without handling it (for tools
    /// that show traffic, such as the browser demo's messages in flight). With a key, a datagram
    /// sent to another node is [`DropReason::BadMac`]: its tag covers its receiver's id.
    pub fn decode_message(&self, bytes: &[u8]) -> Result<wire::Envelope, DropReason> {
        wire::decode_raw(bytes, self.mac.as_deref().map(|m| &m.receive))?.into_owned()
    }

    /// The peer a graceful stop should hand leadership to: of the peers that have answered, are
    /// not reported unreachable or refused (a stopped process, or one that said it stops) and,
    /// while leading, acknowledged one of the last two heartbeat rounds, the one heard from most
    /// recently (ties: the smaller id). With priorities, the highest priority among them first,
    /// and never a witness. Every runtime uses this, so they all choose alike.
    pub fn transfer_target(&self) -> Option<&str> {
        // A leader's heartbeats are acknowledged every round: a peer whose newest acknowledged
        // heartbeat is older than two rounds has stopped answering (a rolling stop's previous
        // victim, a paused process).
        let since = match self.is_leader() {
            true => {
                self.times.get(HEARTBEAT_OUT_LAST).map(|out| out.saturating_sub(2 * self.timing.heartbeat_interval))
            }
            false => None,
        };
        // The peers iterate sorted by id: keeping the first peer heard at the latest instant
        // breaks ties toward the smaller id.
        // With priorities, the highest priority first (then as above); a witness never.
        let mut best: Option<((u32, u64), &str)> = None;
        for (id, p) in self.peers.iter() {
            let (priority, never_lead) = if self.ranks.is_some() { self.rank_of(id, p) } else { (0, false) };
            let eligible = p.has(ANSWERED)
                && !p.has(REFUSED)
                && !never_lead
                && p.ghost_until().is_none()
                && since.is_none_or(|s| p.ack_echo() >= Some(s));
            if !eligible {
                continue;
            }
            if let Some(t) = p.last_heard().map(|t| (priority, t)).filter(|t| best.is_none_or(|(b, _)| *t > b)) {
                best = Some((t, id));
            }
        }
        best.map(|(_, id)| id)
    }

    /// Until when this node refuses to help elect anyone (no vote, no pre-vote, no campaign of
    /// its own) because of a lease it contributed to, as leader or by acknowledging a heartbeat,
    /// or because it was just constructed. Leadership transfers are exempt.
    pub fn promise_until(&self) -> u64 {
        self.bound_until.max(self.acked_until)
    }
    /// This run's incarnation (carried by every message it sends).
    pub fn incarnation(&self) -> u64 {
        self.incarnation
    }

    /// The next instant at which [`Node::handle_timeout`] should be called.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<u64> {
        let mut next =
            [self.times.get(ELECTION_DEADLINE), self.times.get(HEARTBEAT_DEADLINE)].into_iter().flatten().min();
        if self.ranks.is_some() {
            if let Some(t) = self.preempt_at() {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        }
        for p in self.peers.values() {
            if let Some(t) = self.peer_expiry(p) {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        }
        next
    }

    /// When `p` leaves the view by itself: a reported ghost at its TTL; with
    /// `admit_unknown_peers`, an admitted (undeclared) peer after `ghost_ttl` of silence.
    pub(super) fn peer_expiry(&self, p: &Peer) -> Option<u64> {
        let silent =
            if p.has(DECLARED) { None } else { p.last_heard().map(|t| t.saturating_add(self.timing.ghost_ttl)) };
        match (p.ghost_until(), silent) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    /// The next output, owned, or `None` when drained: [`Node::poll_output_ref`] copied into a
    /// [`String`] and a [`Vec`] per `Send`. Convenient where outputs cross to another language
    /// anyway; a native hot loop uses [`Node::poll_output_ref`], which allocates nothing.
    #[must_use]
    pub fn poll_output(&mut self) -> Option<Output> {
        self.poll_output_ref().map(OutputRef::into_owned)
    }

    /// The next output, borrowed from the node, or `None` when drained: the host's hot path.
    ///
    /// A `Send`'s peer id and bytes point into a buffer the node reuses for the outputs of every
    /// input, so a heartbeat round allocates nothing; the borrow ends before the next call on the
    /// node (send the bytes, or copy them, first). Drain after every input until `None`, acting on
    /// each output in order (a `Persist` durable before any later `Send` leaves), exactly as with
    /// [`Node::poll_output`]: the two return the same outputs in the same order and may be mixed.
    /// The `None` that ends a drain also gives back the memory of a burst (the buffer keeps one
    /// send's worth).
    ///
    /// ```
    /// use tenure::{Config, Node, OutputRef};
    ///
    /// let mut node = Node::new(Config::new("a", "demo").bootstrap(["b", "c"]), 7, None, 0).unwrap();
    /// let now = node.poll_timeout().unwrap();
    /// node.handle_timeout(now);
    /// let mut datagrams = 0;
    /// while let Some(output) = node.poll_output_ref() {
    ///     match output {
    ///         OutputRef::Send { to, bytes } => {
    ///             // socket.send_to(bytes, address_of(to)) — before the next call on `node`.
    ///             assert!(to == "b" || to == "c");
    ///             assert!(!bytes.is_empty());
    ///             datagrams += 1;
    ///         }
    ///         OutputRef::Persist(_state) => {} // store durably first, when enabled
    ///         OutputRef::Event(_event) => {}
    ///     }
    /// }
    /// assert_eq!(datagrams, 2);
    /// ```
    #[must_use]
    pub fn poll_output_ref(&mut self) -> Option<OutputRef<'_>> {
        self.flush_persist();
        self.outbox.pop(self.leader.as_deref())
    }

    /// Dropped-message counters by reason.
    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.dropped.as_ref().and_then(|d| d.get(reason.index()).copied()).unwrap_or(0)
    }

    /// The ids of the peers with `flag` (every peer for 0), sorted: one loop for every list of
    /// peers the node builds (`inspect`'s, the targets of a broadcast to the view), rather than a
    /// copy of the iterator adapters' and `collect`'s code per list.
    pub(super) fn peer_ids(&self, flag: u8) -> Vec<String> {
        let mut ids = Vec::new();
        for (k, p) in self.peers.iter() {
            if flag == 0 || p.has(flag) {
                ids.push(String::from(k));
            }
        }
        ids
    }

    /// The whole election state (every key listed in SPEC).
    pub fn inspect(&self) -> Inspect {
        let mut i = self.inspect_unnamed();
        i.state = self.role.as_str().to_string();
        i.leader_value = self.leader_value().map(String::from);
        i.peer_priorities = self.known_priorities();
        // The reasons iterate by name (`BY_NAME`): the list comes out in key order without sorting.
        i.dropped_by_reason = Vec::with_capacity(BY_NAME.len());
        for r in BY_NAME {
            i.dropped_by_reason.push((String::from(r.as_str()), self.dropped(r)));
        }
        i
    }

    /// [`Node::inspect`] without its two fields of names: `state` and `dropped_by_reason` are
    /// left empty. For a host that reports the role and the drop counters in its own types
    /// ([`Node::role`], [`Node::dropped`] over [`DropReason::ALL`]), as the WebAssembly component
    /// does: it then carries neither the names nor the code that builds them. `leader_value` and
    /// `peer_priorities` are left empty too: a host that reports them asks
    /// [`Node::leader_value`] and [`Node::known_priorities`] (the component's `inspect` has
    /// neither, and builds neither).
    pub fn inspect_unnamed(&self) -> Inspect {
        // Plain loops rather than `collect`: each `collect` over a different adapter chain is a
        // copy of the collecting code in the WebAssembly builds.
        let mut votes_granted = Vec::new();
        if let Some(c) = &self.campaign {
            for k in c.granted.keys() {
                votes_granted.push(String::from(k));
            }
        }
        let mut bootstrap = Vec::new();
        for (_, s) in self.peers.prefix_ids() {
            if !s.is_empty() {
                bootstrap.push(String::from(s));
            }
        }
        // The peers iterate sorted by id: the list comes out in key order without sorting.
        let mut unreachable = Vec::new();
        #[allow(unused_mut)]
        let (mut peer_heard_at, mut peer_acked_at) = (Vec::new(), Vec::new());
        for (k, p) in self.peers.iter() {
            if let Some(t) = p.ghost_until() {
                unreachable.push((String::from(k), t));
            }
            // Native builds only: the WebAssembly builds leave both empty (the component's size
            // budget; a runtime tracks when it heard each peer itself).
            #[cfg(not(target_family = "wasm"))]
            {
                if let Some(t) = p.last_heard() {
                    peer_heard_at.push((String::from(k), t));
                }
                if let Some(t) = p.ack_echo().filter(|_| self.is_leader()) {
                    peer_acked_at.push((String::from(k), t));
                }
            }
        }
        Inspect {
            id: self.id().to_string(),
            state: String::new(),
            is_leader: self.is_leader(),
            leader: self.leader.as_deref().map(String::from),
            leader_value: None,
            term: self.term,
            voted_for: self.voted_for.as_deref().map(String::from),
            term_changed_at: self.term_changed_at,
            cluster: self.cluster().to_string(),
            view_size: self.view_size() as u32,
            quorum: self.quorum() as u32,
            min_cluster_size: self.timing.min_cluster_size,
            peers: self.peer_ids(0),
            declared: self.peer_ids(DECLARED),
            bootstrap,
            unreachable,
            ghost_ttl: self.timing.ghost_ttl,
            votes_count: votes_granted.len() as u32,
            votes_granted,
            election_timer_armed: self.times.get(ELECTION_DEADLINE).is_some(),
            heartbeat_timer_armed: self.times.get(HEARTBEAT_DEADLINE).is_some(),
            heartbeat_in_last: self.times.get(HEARTBEAT_IN_LAST),
            heartbeat_out_last: self.times.get(HEARTBEAT_OUT_LAST),
            election_timeout_min: self.timing.election_timeout_min,
            election_timeout_max: self.timing.election_timeout_max,
            heartbeat_interval: self.timing.heartbeat_interval,
            dropped_by_reason: Vec::new(),
            send_failing_peers: self.peer_ids(SEND_FAILING),
            confirm_denied: self.confirm_denied,
            last_denied_at: self.times.get(LAST_DENIED_AT),
            lease_deadline: self.lease_deadline(),
            peer_heard_at,
            peer_acked_at,
            priority: self.priority(),
            never_lead: self.never_lead(),
            peer_priorities: Vec::new(),
        }
    }
}

/// The `need`-th newest (largest) of the instants `echoes()` yields (`need` ≥ 1), if it yields
/// that many: the newest instant that at least `need` of them reach. A binary search between the
/// oldest and the newest (a few passes, as echoes lie within a few heartbeats of each other),
/// without allocating and with far less code than a heap or a sort.
fn nth_newest<I: Iterator<Item = u64>>(echoes: impl Fn() -> I, need: usize) -> Option<u64> {
    let (mut count, mut lo, mut hi) = (0, u64::MAX, 0);
    for t in echoes() {
        count += 1;
        lo = lo.min(t);
        hi = hi.max(t);
    }
    if count < need.max(1) {
        return None;
    }
    // Invariant: at least `need` instants reach `lo`, fewer than `need` reach `hi + 1`.
    while lo < hi {
        let mid = hi - (hi - lo) / 2;
        if echoes().filter(|&t| t >= mid).count() >= need {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(lo)
}

/// [`DropReason::ALL`] sorted by [`DropReason::as_str`] (a test checks it), the order of
/// `Inspect::dropped_by_reason`.
pub(crate) const BY_NAME: [DropReason; DropReason::ALL.len()] = [
    DropReason::BadMac,
    DropReason::FromSelf,
    DropReason::ImplausibleTerm,
    DropReason::Malformed,
    DropReason::NoticeMismatch,
    DropReason::Oversized,
    DropReason::RemovedPeer,
    DropReason::Replay,
    DropReason::SenderMismatch,
    DropReason::UnknownPeer,
    DropReason::UnknownVersion,
    DropReason::ViewFull,
    DropReason::WrongCluster,
];

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn nth_newest_is_the_sorted_nth(v in proptest::collection::vec(0u64..40, 0..12), need in 1usize..14, base in proptest::prelude::any::<u64>()) {
            let v: Vec<u64> = v.iter().map(|t| base.saturating_sub(t * 997)).collect();
            let mut sorted = v.clone();
            sorted.sort_unstable_by(|a, b| b.cmp(a));
            proptest::prop_assert_eq!(nth_newest(|| v.iter().copied(), need), sorted.get(need - 1).copied());
        }

        #[test]
        fn nth_newest_of_any_instants(v in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..12), need in 1usize..14) {
            let mut sorted = v.clone();
            sorted.sort_unstable_by(|a, b| b.cmp(a));
            proptest::prop_assert_eq!(nth_newest(|| v.iter().copied(), need), sorted.get(need - 1).copied());
        }
    }

    #[test]
    fn inspect_unnamed_is_inspect_without_the_names_the_value_and_the_ranks() {
        let config = crate::Config::new("a", "c").bootstrap(["b", "c"]);
        let mut n = Node::new(config, 1, None, 0).unwrap();
        assert_eq!(n.handle_message(0, "b", b"junk"), Err(DropReason::Malformed));
        let full = n.inspect();
        assert_eq!(full.state, "follower");
        assert_eq!(full.dropped("malformed"), Some(1));
        assert_eq!(full.dropped_by_reason.len(), DropReason::ALL.len());
        let mut bare = n.inspect_unnamed();
        assert!(bare.state.is_empty() && bare.dropped_by_reason.is_empty());
        assert!(bare.leader_value.is_none() && bare.peer_priorities.is_empty());
        (bare.state, bare.dropped_by_reason) = (full.state.clone(), full.dropped_by_reason.clone());
        (bare.leader_value, bare.peer_priorities) = (full.leader_value.clone(), full.peer_priorities.clone());
        assert_eq!(bare, full);
    }

    #[test]
    fn by_name_is_every_reason_sorted_by_name() {
        let mut all = DropReason::ALL;
        all.sort_by_key(|r| r.as_str());
        assert_eq!(BY_NAME, all);
    }
}
