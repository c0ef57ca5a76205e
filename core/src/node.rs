//! The election state machine.

use alloc::collections::{BTreeMap, VecDeque};
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::config::{Config, ConfigError, ConfigWarning, DurableState, ValidConfig, MAX_ID_LEN};
use crate::error::Error;
use crate::inspect::Inspect;
use crate::rng::Rng;
use crate::vecmap::{IdMap, IdSet};
use crate::wire::{self, DropReason, EnvelopeRef, Message, MAX_MESSAGE_SIZE};

/// A node's role in the election.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The view is smaller than `min_cluster_size`: no leader may exist and this node does not
    /// campaign.
    Unclustered,
    /// Following a leader, or waiting for one.
    Follower,
    /// Campaigning for votes (or, having won, waiting for the host to confirm leadership).
    Candidate,
    /// The leader of the current term.
    Leader,
}

impl Role {
    /// The lower-case name used in `inspect()` and by every binding.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Unclustered => "unclustered",
            Role::Follower => "follower",
            Role::Candidate => "candidate",
            Role::Leader => "leader",
        }
    }
}

/// Why the host reports a peer down (see [`Node::peer_down`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PeerDownReason {
    /// The peer is gone for good (process ended, pod deleted): removed from the view at once.
    Terminated,
    /// The host lost its connection to the peer: it stays in the view (quorum does not shrink)
    /// and is dropped after `ghost_ttl` unless it is heard from again.
    NoConnection,
}

/// Something the node wants the host to know or do, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// This node is now the leader of `term` (the fencing token). Start leader-only work.
    BecameLeader {
        /// The term led.
        term: u64,
    },
    /// This node is now a follower (every transition into follower fires this, including a
    /// candidate standing down and a leader demoted), or, while following, learned of a leader.
    BecameFollower {
        /// The current term.
        term: u64,
        /// The leader followed, if one is known.
        leader: Option<String>,
    },
    /// A peer entered the view.
    PeerJoined {
        /// Its id.
        peer: String,
    },
    /// A peer left the view.
    PeerLeft {
        /// Its id.
        peer: String,
    },
    /// The node won the election of `term`; answer with [`Node::confirm_leader`] before it
    /// publishes leadership (only with `Config::confirm_leader` on).
    ConfirmLeader {
        /// The term won.
        term: u64,
    },
    /// An application payload sent by a peer's [`Node::broadcast`].
    Message {
        /// The sender.
        from: String,
        /// The payload.
        payload: Vec<u8>,
    },
}

/// One output of the node. Poll them with [`Node::poll_output`] until `None` after every input,
/// and act on them in order: a `Persist` must be durable before any later `Send` leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Transmit `bytes` to peer `to` (best effort: loss is tolerated).
    Send {
        /// Destination peer id.
        to: String,
        /// The encoded message.
        bytes: Vec<u8>,
    },
    /// Store this pair durably (only with `Config::durable`) before sending anything after it.
    Persist(DurableState),
    /// Something happened.
    Event(Event),
}

/// Deliberate protocol bugs for the simulator's self-test. Always compiled (the checks below name
/// them), but only reachable from outside with feature `bug-injection`, which re-exports it and
/// `Node::inject_bug`. Each variant is one bit of `Node::bugs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bug {
    /// Grant a vote even after voting for someone else in the term.
    DoubleVote = 1,
    /// A leader never steps down for lack of quorum evidence.
    NoStepDown = 2,
    /// A leader ignores higher terms it sees.
    IgnoreHigherTerm = 4,
    /// Quorum computed one too small.
    QuorumOffByOne = 8,
    /// Grant (pre-)votes even while hearing from a live leader.
    NoPrevoteStickiness = 16,
}

#[derive(Debug, Clone, Default)]
struct Peer {
    /// Declared by the host (bootstrap or `join`), as opposed to admitted because it wrote to us.
    declared: bool,
    /// Has sent us at least one valid message: heartbeats go only to such peers.
    answered: bool,
    /// When we last received any valid message from it.
    last_heard: Option<u64>,
    /// Largest heartbeat `sent_at` it acknowledged in the current leadership.
    ack_echo: Option<u64>,
    /// Reported `no_connection`: dropped from the view at this instant unless heard from.
    ghost_until: Option<u64>,
}

#[derive(Debug, Clone)]
struct Campaign {
    pre: bool,
    term: u64,
    granted: IdSet,
}

/// One member of a tenure cluster: a sans-IO state machine.
///
/// The host feeds it inputs (messages, timeouts, membership changes, each with the current time
/// of a monotonic millisecond clock), polls its outputs after every input, and wakes it at
/// [`Node::poll_timeout`].
///
/// ```
/// use tenure::{Config, Event, Node, Output};
///
/// // A three-node cluster of which only "a" runs here; b and c are reached through `Send`s.
/// let config = Config::new("a", "demo").bootstrap(["b", "c"]);
/// let mut node = Node::new(config, 7, None, 0).unwrap();
/// let mut now = 0;
/// // Nothing heard from anyone: at the deadline the node asks b and c for pre-votes.
/// now = node.poll_timeout().unwrap();
/// node.handle_timeout(now);
/// let mut sent = Vec::new();
/// while let Some(output) = node.poll_output() {
///     match output {
///         Output::Send { to, bytes } => sent.push((to, bytes)),
///         Output::Persist(_) => {}                       // store durably first, when enabled
///         Output::Event(Event::ConfirmLeader { term }) => node.confirm_leader(now, term, true).unwrap(),
///         Output::Event(_) => {}
///     }
/// }
/// assert_eq!(sent.len(), 2);
/// ```
#[derive(Debug)]
pub struct Node {
    id: String,
    cluster: String,
    timing: ValidConfig,
    pre_vote: bool,
    confirm_gate: bool,
    durable: bool,
    /// Boxed: the keyed HMAC state is ~200 bytes that unauthenticated nodes should not carry.
    mac: Option<alloc::boxed::Box<wire::HmacSha256>>,
    bootstrap: Vec<String>,
    rng: Rng,

    role: Role,
    term: u64,
    voted_for: Option<String>,
    term_changed_at: u64,
    leader: Option<String>,
    /// Last time a leader of the current term was heard (leader stickiness).
    leader_contact: Option<u64>,

    peers: IdMap<Peer>,
    /// Peers removed by `leave`/`terminated`, refused until the instant stored.
    removed: IdMap<u64>,
    send_failing: IdSet,

    election_deadline: Option<u64>,
    heartbeat_deadline: Option<u64>,
    campaign: Option<Campaign>,
    awaiting_confirm: Option<u64>,
    confirm_denied: u32,
    last_denied_at: Option<u64>,
    heartbeat_in_last: Option<u64>,
    heartbeat_out_last: Option<u64>,

    dropped: [u64; DropReason::ALL.len()],
    outputs: VecDeque<Output>,
    persist_pending: bool,
    bugs: u8,
}

const MAX_BACKOFF_FACTOR: u64 = 20;

impl Node {
    /// Creates a node from a configuration, a PRNG seed (bindings use `os_seed()` (feature `getrandom`) or the
    /// host's random source) and, with durable state, the pair last persisted. `now` is the
    /// host's monotonic clock in milliseconds.
    pub fn new(config: Config, seed: u64, restored: Option<DurableState>, now: u64) -> Result<Node, ConfigError> {
        let timing = config.validate()?;
        let restored = restored.unwrap_or_default();
        if let Some(v) = &restored.voted_for {
            if v.is_empty() {
                return Err(ConfigError::EmptyId { field: "voted_for" });
            }
            if v.len() > MAX_ID_LEN {
                return Err(ConfigError::IdTooLong { field: "voted_for", len: v.len() });
            }
        }
        let mut peers = IdMap::new();
        for p in &config.bootstrap {
            if *p != config.id {
                peers.insert(p, Peer { declared: true, ..Peer::default() });
            }
        }
        let mut node = Node {
            id: config.id,
            cluster: config.cluster,
            timing,
            pre_vote: config.pre_vote,
            confirm_gate: config.confirm_leader,
            durable: config.durable,
            mac: config.key.as_deref().and_then(wire::keyed).map(alloc::boxed::Box::new),
            bootstrap: config.bootstrap,
            rng: Rng::new(seed),
            role: Role::Unclustered,
            term: restored.term,
            voted_for: restored.voted_for,
            term_changed_at: now,
            leader: None,
            leader_contact: None,
            peers,
            removed: IdMap::new(),
            send_failing: IdSet::new(),
            election_deadline: None,
            heartbeat_deadline: None,
            campaign: None,
            awaiting_confirm: None,
            confirm_denied: 0,
            last_denied_at: None,
            heartbeat_in_last: None,
            heartbeat_out_last: None,
            dropped: [0; DropReason::ALL.len()],
            outputs: VecDeque::new(),
            persist_pending: false,
            bugs: 0,
        };
        if node.clustered() {
            node.role = Role::Follower;
            node.reset_election_timer(now);
        }
        Ok(node)
    }

    /// Switches on a deliberate bug (simulator self-test only).
    #[cfg(feature = "bug-injection")]
    pub fn inject_bug(&mut self, bug: Bug) {
        self.bugs |= bug as u8;
    }

    fn bug(&self, b: Bug) -> bool {
        self.bugs & (b as u8) != 0
    }

    // ----- queries -------------------------------------------------------------------------

    /// This node's id.
    pub fn id(&self) -> &str {
        &self.id
    }
    /// The cluster id.
    pub fn cluster(&self) -> &str {
        &self.cluster
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
    /// The view: this node and every peer it counts, sorted.
    pub fn view(&self) -> Vec<String> {
        // Peers are kept sorted: insert self in place rather than sorting (no sort code linked).
        let mut v: Vec<String> = Vec::with_capacity(self.peers.len() + 1);
        let mut placed = false;
        for p in self.peers.keys() {
            if !placed && self.id < *p {
                v.push(self.id.clone());
                placed = true;
            }
            v.push(p.clone());
        }
        if !placed {
            v.push(self.id.clone());
        }
        v
    }
    /// Number of nodes in the view, counting self.
    pub fn view_size(&self) -> usize {
        self.peers.len() + 1
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
    /// other leader has been elected, from the heartbeats a quorum acknowledged. `None` when not
    /// leading or before a quorum has acknowledged a heartbeat.
    pub fn lease_deadline(&self) -> Option<u64> {
        if !self.is_leader() {
            return None;
        }
        let need = self.quorum().saturating_sub(1);
        if need == 0 {
            return self.heartbeat_out_last.map(|t| t.saturating_add(self.timing.election_timeout_min));
        }
        let mut echoes: Vec<u64> = self.peers.values().filter_map(|p| p.ack_echo).collect();
        if echoes.len() < need {
            return None;
        }
        echoes.sort_unstable_by(|a, b| b.cmp(a));
        echoes.get(need - 1).map(|t| t.saturating_add(self.timing.election_timeout_min))
    }
    /// Decodes a datagram with this node's key, without handling it (for tools that show
    /// traffic, such as the browser demo's messages in flight).
    pub fn decode_message(&self, bytes: &[u8]) -> Result<wire::Envelope, DropReason> {
        wire::decode_raw(bytes, self.mac.as_deref())?.into_owned()
    }

    /// The peer a graceful stop should hand leadership to: of the peers that have answered and
    /// are not reported unreachable, the one heard from most recently (ties: the smaller id).
    /// Every runtime uses this, so they all choose alike.
    pub fn transfer_target(&self) -> Option<&str> {
        self.peers
            .iter()
            .filter(|(_, p)| p.answered && p.ghost_until.is_none())
            .filter_map(|(id, p)| p.last_heard.map(|t| (t, id)))
            .max_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(a.1)))
            .map(|(_, id)| id.as_str())
    }

    /// The next instant at which [`Node::handle_timeout`] should be called.
    pub fn poll_timeout(&self) -> Option<u64> {
        let mut next = [self.election_deadline, self.heartbeat_deadline].into_iter().flatten().min();
        for p in self.peers.values() {
            if let Some(t) = p.ghost_until {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        }
        next
    }
    /// The next output, or `None` when drained.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.flush_persist();
        self.outputs.pop_front()
    }
    /// Dropped-message counters by reason.
    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.dropped.get(reason.index()).copied().unwrap_or(0)
    }

    /// The whole election state (every key listed in SPEC).
    pub fn inspect(&self) -> Inspect {
        let mut dropped_by_reason = BTreeMap::new();
        for r in DropReason::ALL {
            dropped_by_reason.insert(r.as_str().to_string(), self.dropped(r));
        }
        let (votes_granted, votes_count) = match &self.campaign {
            Some(c) => (c.granted.keys().cloned().collect::<Vec<_>>(), c.granted.len() as u32),
            None => (Vec::new(), 0),
        };
        Inspect {
            id: self.id.clone(),
            state: self.role.as_str().to_string(),
            leader: self.is_leader(),
            leader_id: self.leader.clone(),
            term: self.term,
            voted_for: self.voted_for.clone(),
            term_changed_at: self.term_changed_at,
            cluster: self.cluster.clone(),
            view_size: self.view_size() as u32,
            quorum: self.quorum() as u32,
            min_cluster_size: self.timing.min_cluster_size,
            peers: self.peers.keys().cloned().collect(),
            declared: self.peers.iter().filter(|(_, p)| p.declared).map(|(k, _)| k.clone()).collect(),
            bootstrap: self.bootstrap.clone(),
            unreachable: self.peers.iter().filter_map(|(k, p)| p.ghost_until.map(|t| (k.clone(), t))).collect(),
            ghost_ttl: self.timing.ghost_ttl,
            votes_granted,
            votes_count,
            election_timer_armed: self.election_deadline.is_some(),
            heartbeat_timer_armed: self.heartbeat_deadline.is_some(),
            heartbeat_in_last: self.heartbeat_in_last,
            heartbeat_out_last: self.heartbeat_out_last,
            election_timeout_min: self.timing.election_timeout_min,
            election_timeout_max: self.timing.election_timeout_max,
            heartbeat_interval: self.timing.heartbeat_interval,
            dropped_by_reason,
            send_failing_peers: self.send_failing.keys().cloned().collect(),
            confirm_denied: self.confirm_denied,
            last_denied_at: self.last_denied_at,
            lease_deadline: self.lease_deadline(),
        }
    }

    // ----- inputs ----------------------------------------------------------------------------

    /// Handles a datagram received from peer `from`. Invalid input is dropped, counted, and
    /// reported as the error (the node's state is otherwise unchanged).
    pub fn handle_message(&mut self, now: u64, from: &str, bytes: &[u8]) -> Result<(), DropReason> {
        let result = self.accept(now, from, bytes);
        if let Err(reason) = result {
            if let Some(c) = self.dropped.get_mut(reason.index()) {
                *c = c.saturating_add(1);
            }
        }
        result
    }

    fn accept(&mut self, now: u64, from: &str, bytes: &[u8]) -> Result<(), DropReason> {
        let raw = wire::decode_raw(bytes, self.mac.as_deref())?;
        // Bytes equal to a known-valid string are valid UTF-8: validate only the unexpected.
        let env_from: &str = if raw.from == from.as_bytes() {
            from
        } else {
            core::str::from_utf8(raw.from).map_err(|_| DropReason::Malformed)?
        };
        if raw.cluster != self.cluster.as_bytes() {
            core::str::from_utf8(raw.cluster).map_err(|_| DropReason::Malformed)?;
            return Err(DropReason::WrongCluster);
        }
        if env_from.is_empty() || env_from.len() > MAX_ID_LEN {
            return Err(DropReason::Malformed);
        }
        if env_from != from {
            return Err(DropReason::SenderMismatch);
        }
        if env_from == self.id {
            return Err(DropReason::FromSelf);
        }
        if let Some(&until) = self.removed.get(from) {
            if now < until {
                return Err(DropReason::RemovedPeer);
            }
            self.removed.remove(from);
        }
        self.admit(now, from);
        self.dispatch(now, from, raw.term, raw.message);
        Ok(())
    }

    /// Handles the passing of time: call at (or after) [`Node::poll_timeout`]. Calling it early or
    /// twice is harmless.
    pub fn handle_timeout(&mut self, now: u64) {
        self.removed.retain(|_, until| *until > now);
        // Ghosts whose TTL ran out leave the view.
        let expired: Vec<String> = self
            .peers
            .iter()
            .filter(|(_, p)| p.ghost_until.is_some_and(|t| t <= now))
            .map(|(k, _)| k.clone())
            .collect();
        for peer in expired {
            self.remove_peer(now, &peer, false);
        }

        if self.role == Role::Leader {
            if self.heartbeat_deadline.is_some_and(|t| t <= now) {
                self.leader_tick(now);
            }
            return;
        }
        if self.election_deadline.is_none_or(|t| t > now) {
            return;
        }
        if self.awaiting_confirm.is_some() {
            // The host never answered: a timeout counts as a denial.
            self.deny(now);
            return;
        }
        if !self.clustered() {
            self.election_deadline = None;
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
        if peer == self.id {
            return Ok(());
        }
        self.removed.remove(peer);
        if let Some(p) = self.peers.get_mut(peer) {
            p.declared = true;
            return Ok(());
        }
        self.peers.insert(peer, Peer { declared: true, ..Peer::default() });
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
                    if p.ghost_until.is_none() {
                        p.ghost_until = Some(until);
                    }
                }
                self.send_failing.add(peer);
            }
        }
        Ok(())
    }

    /// Answers an [`Event::ConfirmLeader`]: `true` publishes leadership, `false` withholds it and
    /// backs off (`election_timeout_max` × consecutive denials, at most × 20).
    pub fn confirm_leader(&mut self, now: u64, term: u64, granted: bool) -> Result<(), Error> {
        if self.awaiting_confirm != Some(term) || self.term != term {
            return Err(Error::NoPendingConfirm { term });
        }
        if granted {
            self.awaiting_confirm = None;
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

    /// Hands leadership to `peer`: it campaigns at once, and this node stops leading now. If no
    /// new leader appears, this node campaigns again after one election timeout.
    pub fn transfer_leadership(&mut self, now: u64, peer: &str) -> Result<(), Error> {
        if self.role != Role::Leader {
            return Err(Error::NotLeader);
        }
        self.check_member(peer)?;
        self.send(peer, Message::TimeoutNow);
        self.leader = None;
        self.leader_contact = None;
        self.become_follower(now);
        let deadline = now.saturating_add(self.timing.election_timeout_max);
        self.election_deadline = Some(deadline);
        Ok(())
    }

    /// Sends an application payload to every member of the view.
    pub fn broadcast(&mut self, _now: u64, payload: &[u8]) -> Result<(), Error> {
        let max = MAX_MESSAGE_SIZE - 1024;
        if payload.len() > max {
            return Err(Error::PayloadTooLarge { size: payload.len(), max });
        }
        let peers: Vec<String> = self.peers.keys().cloned().collect();
        for p in peers {
            self.send(&p, Message::App { seq: 0, payload: payload.to_vec() });
        }
        Ok(())
    }

    // ----- internals -------------------------------------------------------------------------

    fn check_member(&self, peer: &str) -> Result<(), Error> {
        check_peer(peer)?;
        if peer == self.id {
            return Err(Error::SelfPeer);
        }
        if !self.peers.contains_key(peer) {
            return Err(Error::UnknownPeer { peer: peer.to_string() });
        }
        Ok(())
    }

    fn clustered(&self) -> bool {
        self.view_size() >= self.timing.min_cluster_size as usize
    }

    fn sticky(&self, now: u64) -> bool {
        if self.bug(Bug::NoPrevoteStickiness) {
            return false;
        }
        if self.role == Role::Leader {
            return true;
        }
        self.leader.is_some()
            && self.leader_contact.is_some_and(|t| now < t.saturating_add(self.timing.election_timeout_min))
    }

    fn push_event(&mut self, e: Event) {
        self.flush_persist();
        self.outputs.push_back(Output::Event(e));
    }

    fn send(&mut self, to: &str, message: Message) {
        self.send_with_term(to, self.term, message);
    }

    fn send_with_term(&mut self, to: &str, term: u64, message: Message) {
        let env = EnvelopeRef { cluster: &self.cluster, from: &self.id, term, incarnation: 0, message: &message };
        if let Ok(bytes) = wire::encode_with(&env, self.mac.as_deref()) {
            self.flush_persist();
            self.outputs.push_back(Output::Send { to: to.to_string(), bytes });
        }
    }

    /// Notes that term or vote changed. The `Persist` output is emitted lazily, just before the
    /// next output of any kind, so that a term bump and a vote in one input cost the host one
    /// durable write, never zero before a dependent send.
    fn persist(&mut self) {
        if self.durable {
            self.persist_pending = true;
        }
    }

    fn flush_persist(&mut self) {
        if self.persist_pending {
            self.persist_pending = false;
            self.outputs
                .push_back(Output::Persist(DurableState { term: self.term, voted_for: self.voted_for.clone() }));
        }
    }

    fn set_term(&mut self, now: u64, term: u64) {
        if term > self.term {
            self.term = term;
            self.voted_for = None;
            self.term_changed_at = now;
            self.leader = None;
            self.leader_contact = None;
            self.campaign = None;
            self.persist();
        }
    }

    fn reset_election_timer(&mut self, now: u64) {
        let t = self.rng.range_inclusive(self.timing.election_timeout_min, self.timing.election_timeout_max);
        self.election_deadline = Some(now.saturating_add(t));
    }

    fn admit(&mut self, now: u64, from: &str) {
        let is_new = !self.peers.contains_key(from);
        if is_new {
            self.peers.insert(from, Peer::default());
        }
        if let Some(p) = self.peers.get_mut(from) {
            p.answered = true;
            p.last_heard = Some(now);
            p.ghost_until = None;
        }
        if !self.send_failing.is_empty() {
            self.send_failing.remove(from);
        }
        if is_new {
            self.push_event(Event::PeerJoined { peer: from.to_string() });
            self.membership_changed(now);
        }
    }

    fn remove_peer(&mut self, now: u64, peer: &str, sticky: bool) {
        if self.peers.remove(peer).is_none() {
            return;
        }
        self.send_failing.remove(peer);
        if sticky {
            self.removed.insert(peer, now.saturating_add(self.timing.election_timeout_max));
        }
        if let Some(c) = &mut self.campaign {
            c.granted.remove(peer);
        }
        self.push_event(Event::PeerLeft { peer: peer.to_string() });
        if self.leader.as_deref() == Some(peer) {
            // Fast failover: the leader is known to be gone, so nobody should wait a full election
            // timeout, and nobody stays loyal to it (stickiness ends).
            self.leader = None;
            self.leader_contact = None;
            if self.role == Role::Follower {
                // Survivors campaign in turn, by their rank in the (shared) view, one slot of
                // election_timeout_min / 10 apart, with jitter inside the slot: the first one
                // normally wins before the second starts, so the vote does not split as it
                // would if all of them drew from the same short window.
                let slot = (self.timing.election_timeout_min / 10).max(2);
                let rank = self.peers.keys().filter(|p| p.as_str() < self.id.as_str()).count() as u64;
                let jitter = self.rng.range_inclusive(0, slot / 3);
                self.election_deadline = Some(now.saturating_add(rank.saturating_mul(slot)).saturating_add(jitter));
                self.push_event(Event::BecameFollower { term: self.term, leader: None });
            }
        }
        self.membership_changed(now);
    }

    /// Re-evaluates the role after the view changed.
    fn membership_changed(&mut self, now: u64) {
        let clustered = self.clustered();
        match (self.role, clustered) {
            (Role::Unclustered, true) => {
                self.role = Role::Follower;
                self.push_event(Event::BecameFollower { term: self.term, leader: self.leader.clone() });
                self.reset_election_timer(now);
            }
            (Role::Unclustered, false) => {}
            (_, false) => {
                let was = self.role;
                self.role = Role::Unclustered;
                self.campaign = None;
                self.awaiting_confirm = None;
                self.election_deadline = None;
                self.heartbeat_deadline = None;
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

    /// Moves into follower (or stays unclustered), firing `BecameFollower` when the role changes.
    fn become_follower(&mut self, now: u64) {
        self.campaign = None;
        self.awaiting_confirm = None;
        self.heartbeat_deadline = None;
        if self.role == Role::Leader {
            for p in self.peers.values_mut() {
                p.ack_echo = None;
            }
        }
        if !self.clustered() {
            self.role = Role::Unclustered;
            self.election_deadline = None;
            return;
        }
        let was = self.role;
        self.role = Role::Follower;
        if was != Role::Follower {
            self.push_event(Event::BecameFollower { term: self.term, leader: self.leader.clone() });
        }
        if self.election_deadline.is_none() || was != Role::Follower {
            self.reset_election_timer(now);
        }
    }

    fn start_pre_vote(&mut self, now: u64) {
        let term = self.term.saturating_add(1);
        let mut granted = IdSet::new();
        granted.add(&self.id);
        self.campaign = Some(Campaign { pre: true, term, granted });
        self.leader = None;
        self.reset_election_timer(now);
        let peers: Vec<String> = self.peers.keys().cloned().collect();
        for p in peers {
            self.send_with_term(&p, term, Message::PreVote);
        }
        self.check_campaign(now);
    }

    fn start_election(&mut self, now: u64, transfer: bool) {
        let term = self.term.saturating_add(1);
        self.term = term;
        self.term_changed_at = now;
        self.voted_for = Some(self.id.clone());
        self.leader_contact = None;
        self.persist();
        self.role = Role::Candidate;
        self.leader = None;
        let mut granted = IdSet::new();
        granted.add(&self.id);
        self.campaign = Some(Campaign { pre: false, term, granted });
        self.reset_election_timer(now);
        let peers: Vec<String> = self.peers.keys().cloned().collect();
        for p in peers {
            self.send(&p, Message::Vote { transfer });
        }
        self.check_campaign(now);
    }

    fn check_campaign(&mut self, now: u64) {
        let Some(c) = &self.campaign else { return };
        // Votes from peers no longer in the view do not count.
        let count = c.granted.keys().filter(|g| **g == self.id || self.peers.contains_key(g)).count();
        if count < self.quorum() {
            return;
        }
        if c.pre {
            self.start_election(now, false);
            return;
        }
        if self.role != Role::Candidate || self.awaiting_confirm.is_some() {
            return;
        }
        if self.confirm_gate {
            self.awaiting_confirm = Some(self.term);
            // The host must answer within one election timeout; silence is a denial.
            self.election_deadline = Some(now.saturating_add(self.timing.election_timeout_max));
            self.push_event(Event::ConfirmLeader { term: self.term });
        } else {
            self.become_leader(now);
        }
    }

    fn become_leader(&mut self, now: u64) {
        self.campaign = None;
        self.role = Role::Leader;
        self.leader = Some(self.id.clone());
        self.leader_contact = Some(now);
        self.confirm_denied = 0;
        self.election_deadline = None;
        for p in self.peers.values_mut() {
            p.ack_echo = None;
        }
        self.push_event(Event::BecameLeader { term: self.term });
        self.send_heartbeats(now);
    }

    fn send_heartbeats(&mut self, now: u64) {
        let targets: Vec<String> = self.peers.iter().filter(|(_, p)| p.answered).map(|(k, _)| k.clone()).collect();
        for p in targets {
            self.send(&p, Message::Heartbeat { sent_at: now });
        }
        self.heartbeat_out_last = Some(now);
        self.heartbeat_deadline = Some(now.saturating_add(self.timing.heartbeat_interval));
    }

    fn leader_tick(&mut self, now: u64) {
        // Check quorum: evidence is any valid message heard from a peer within one election
        // timeout (acknowledgements above all). A send the transport accepted is not evidence.
        let window_start = now.saturating_sub(self.timing.election_timeout_min);
        let heard = self.peers.values().filter(|p| p.last_heard.is_some_and(|t| t >= window_start)).count();
        if heard + 1 < self.quorum() && !self.bug(Bug::NoStepDown) {
            self.leader = None;
            self.leader_contact = None;
            self.become_follower(now);
            return;
        }
        self.send_heartbeats(now);
    }

    fn deny(&mut self, now: u64) {
        self.confirm_denied = self.confirm_denied.saturating_add(1);
        self.last_denied_at = Some(now);
        self.awaiting_confirm = None;
        self.leader = None;
        self.leader_contact = None;
        self.become_follower(now);
        let factor = u64::from(self.confirm_denied).min(MAX_BACKOFF_FACTOR);
        let backoff = self.timing.election_timeout_max.saturating_mul(factor);
        let jitter = self.rng.range_inclusive(0, self.timing.election_timeout_max - self.timing.election_timeout_min);
        if self.role == Role::Follower {
            self.election_deadline = Some(now.saturating_add(backoff).saturating_add(jitter));
        }
    }

    fn dispatch(&mut self, now: u64, from: &str, term: u64, message: Message) {
        let adopts = match &message {
            Message::PreVote => false,
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
                    self.leader = Some(from.to_string());
                }
                self.become_follower(now);
            }
        }
        match message {
            Message::PreVote => {
                let granted = term > self.term && !self.sticky(now);
                let reply_term = if granted { term } else { self.term };
                self.send_with_term(from, reply_term, Message::PreVoteReply { granted });
            }
            Message::PreVoteReply { granted } => {
                if let Some(c) = &mut self.campaign {
                    if c.pre && granted && c.term == term {
                        c.granted.add(from);
                        self.check_campaign(now);
                    }
                }
            }
            Message::Vote { .. } => {
                let can_vote = term == self.term && matches!(self.role, Role::Follower | Role::Unclustered);
                let free = self.voted_for.as_deref().is_none_or(|v| v == from)
                    && self.leader.as_deref().is_none_or(|l| l == from);
                let granted = can_vote && (free || self.bug(Bug::DoubleVote));
                if granted {
                    if self.voted_for.as_deref() != Some(from) {
                        self.voted_for = Some(from.to_string());
                        self.persist();
                    }
                    self.reset_election_timer(now);
                }
                self.send(from, Message::VoteReply { granted });
            }
            Message::VoteReply { granted } => {
                if let Some(c) = &mut self.campaign {
                    if !c.pre && granted && term == self.term && self.role == Role::Candidate {
                        c.granted.add(from);
                        self.check_campaign(now);
                    }
                }
            }
            Message::Heartbeat { sent_at } => {
                if term < self.term {
                    // Tell the stale leader about the newer term.
                    self.send(from, Message::HeartbeatAck { echo: sent_at });
                    return;
                }
                if self.role == Role::Leader {
                    // Within SPEC's scope two leaders in one term cannot exist. Outside it (members
                    // removed, restarts without durable state) they can; they must not demote each
                    // other, and must not both stay: the one with the greater id yields, so the
                    // cluster converges at the next heartbeat.
                    if from > self.id.as_str() {
                        return;
                    }
                    self.leader = Some(from.to_string());
                    self.become_follower(now);
                }
                self.follow(now, from);
                self.send(from, Message::HeartbeatAck { echo: sent_at });
            }
            Message::HeartbeatAck { echo } => {
                if self.role == Role::Leader && term == self.term {
                    if let Some(p) = self.peers.get_mut(from) {
                        p.ack_echo = Some(p.ack_echo.map_or(echo, |e| e.max(echo)));
                    }
                }
            }
            Message::TimeoutNow => {
                if term == self.term
                    && self.leader.as_deref() == Some(from)
                    && self.role == Role::Follower
                    && self.clustered()
                {
                    self.start_election(now, true);
                }
            }
            Message::App { payload, .. } => self.push_event(Event::Message { from: from.to_string(), payload }),
        }
    }

    /// Accepts `from` as the leader of the current term.
    fn follow(&mut self, now: u64, from: &str) {
        self.leader_contact = Some(now);
        self.heartbeat_in_last = Some(now);
        let changed = self.leader.as_deref() != Some(from);
        if changed {
            self.leader = Some(from.to_string());
        }
        self.campaign = None;
        match self.role {
            Role::Candidate => self.become_follower(now),
            Role::Follower if changed => {
                self.push_event(Event::BecameFollower { term: self.term, leader: self.leader.clone() })
            }
            _ => {}
        }
        if self.role != Role::Unclustered {
            self.reset_election_timer(now);
        }
    }
}

fn check_peer(peer: &str) -> Result<(), Error> {
    if peer.is_empty() || peer.len() > MAX_ID_LEN {
        return Err(Error::InvalidPeer { peer: peer.to_string() });
    }
    Ok(())
}
