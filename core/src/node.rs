//! The election state machine.

use alloc::boxed::Box;
use alloc::collections::{BTreeMap, VecDeque};
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::config::{id_is_valid, Config, ConfigError, ConfigWarning, DurableState, ValidConfig, MAX_ID_LEN};
use crate::error::Error;
use crate::inspect::Inspect;
use crate::rng::Rng;
use crate::vecmap::{IdMap, IdSet};

use crate::wire::{self, DropReason, EnvelopeRef, Message, MAX_MESSAGE_SIZE, MAX_TERM, MAX_TERM_JUMP};

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
    /// The peer's port refused a datagram (an ICMP port-unreachable answer): its process is gone
    /// while its host answers. It stays a member (quorum does not shrink, no `ghost_ttl`). If it
    /// is the leader this node follows, this node stops waiting for it: stickiness ends and it
    /// campaigns in rank order as soon as its lease promise allows, retrying a refused pre-vote
    /// every rank slot until a leader is heard. Liveness only: nothing safety-relevant changes,
    /// so a wrong report costs at most a pre-vote round that a live leader's next heartbeat ends.
    Refused,
}

impl PeerDownReason {
    /// Every reason, in declaration order.
    pub const ALL: [PeerDownReason; 3] =
        [PeerDownReason::Terminated, PeerDownReason::NoConnection, PeerDownReason::Refused];

    /// The reason's snake_case name, as every binding and the command line spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            PeerDownReason::Terminated => "terminated",
            PeerDownReason::NoConnection => "no_connection",
            PeerDownReason::Refused => "refused",
        }
    }

    /// The reason named `name` ([`PeerDownReason::as_str`]), if any.
    pub fn from_name(name: &str) -> Option<PeerDownReason> {
        PeerDownReason::ALL.into_iter().find(|r| r.as_str() == name)
    }
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
/// `Node::inject_bug`. Each variant is one bit of `Node::bugs`. Each names the invariant of the
/// simulator (`tests/sim`) that must catch it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(not(feature = "bug-injection"), allow(dead_code))]
pub enum Bug {
    /// Grant a vote even after voting for someone else in the term.
    DoubleVote = 1,
    /// A leader never steps down for lack of quorum evidence.
    NoStepDown = 2,
    /// A leader ignores higher terms it sees.
    IgnoreHigherTerm = 4,
    /// Quorum computed one too small.
    QuorumOffByOne = 8,
    /// Grant (pre-)votes even while hearing from a live leader: ignores both leader stickiness
    /// and the lease promise.
    NoPrevoteStickiness = 16,
    /// Adopting a higher term forgets the lease promise (a deposed leader, or a follower that
    /// learns a higher term from any message, votes at once). Caught by the lease invariant.
    DeposedForgetsPromise = 32,
    /// A newly constructed (restarted) node grants votes at once instead of after its boot
    /// promise. Caught by the lease invariant.
    RestartVotesAtOnce = 64,
    /// Check-quorum counts any message heard from a peer, not fresh heartbeat echoes (a replay
    /// or a very late duplicate keeps a cut-off leader leading). Caught by S4.
    AnyMessageIsEvidence = 128,
    /// No bound on term jumps: one message with a near-maximum term is adopted and wedges the
    /// cluster. Caught by the liveness bound.
    UnboundedTerm = 256,
    /// A heartbeat no newer than the last one seen from the leader (a duplicate or a replay)
    /// still refreshes stickiness. Caught by the liveness bound under replays.
    StaleHeartbeatRefreshes = 512,
    /// A `Refused` report about the leader also releases the promise made to it (the tempting
    /// shortcut to failover in a round trip). Caught by the lease invariant under false reports.
    RefusedReleasesPromise = 1024,
}

/// Bits of [`Peer::flags`].
const DECLARED: u8 = 1;
/// Has sent us at least one valid message: heartbeats go only to such peers.
const ANSWERED: u8 = 2;
/// Reported `no_connection` by the host (`inspect().send_failing_peers`) until heard from or
/// joined again.
const SEND_FAILING: u8 = 4;
/// The leader this node's newest heartbeat acknowledgement went to (at most one peer): a host
/// report that it was terminated (or `leave`) releases `acked_until`, since the host vouches that
/// no lease of it still runs.
const ACKED: u8 = 8;

/// What this node knows of one peer. The optional instants are packed (five `u64`s and one byte
/// of presence bits, not five 16-byte `Option<u64>`s): a view of N peers holds N of these.
#[derive(Debug, Clone, Default)]
struct Peer {
    /// [`DECLARED`] (by the host: bootstrap or `join`, as opposed to admitted because it wrote to
    /// us), [`ANSWERED`], [`SEND_FAILING`].
    flags: u8,
    /// Bit `i` set: `stamps[i]` holds a value.
    present: u8,
    /// Indexed by the `STAMP_*` constants, read through the accessors below.
    stamps: [u64; 5],
}

/// When we last received any valid message from it.
const STAMP_LAST_HEARD: usize = 0;
/// Largest heartbeat `sent_at` it acknowledged in the current leadership (the lease).
const STAMP_ACK_ECHO: usize = 1;
/// Freshest proof, in this campaign and leadership, that it answered us: the instant of a
/// granted vote reply, or the `sent_at` of a heartbeat it acknowledged (check-quorum).
const STAMP_EVIDENCE_AT: usize = 2;
/// Reported `no_connection`: dropped from the view at this instant unless heard from.
const STAMP_GHOST_UNTIL: usize = 3;
/// The incarnation of its last valid message.
const STAMP_INCARNATION: usize = 4;

macro_rules! peer_stamps {
    ($($index:ident => $get:ident, $set:ident;)*) => {
        impl Peer {
            $(
                fn $get(&self) -> Option<u64> {
                    self.stamp($index)
                }
                fn $set(&mut self, value: Option<u64>) {
                    self.set_stamp($index, value)
                }
            )*
        }
    };
}

peer_stamps! {
    STAMP_LAST_HEARD => last_heard, set_last_heard;
    STAMP_ACK_ECHO => ack_echo, set_ack_echo;
    STAMP_EVIDENCE_AT => evidence_at, set_evidence_at;
    STAMP_GHOST_UNTIL => ghost_until, set_ghost_until;
    STAMP_INCARNATION => incarnation, set_incarnation;
}

impl Peer {
    fn declared_new() -> Peer {
        Peer { flags: DECLARED, ..Peer::default() }
    }
    /// A valid message from it arrived: it has answered, is no ghost and no failing send.
    fn heard(&mut self, now: u64, incarnation: u64) {
        self.flags = (self.flags | ANSWERED) & !SEND_FAILING;
        self.set_last_heard(Some(now));
        self.set_ghost_until(None);
        self.set_incarnation(Some(incarnation));
    }
    fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
    fn set_flag(&mut self, flag: u8, on: bool) {
        if on {
            self.flags |= flag;
        } else {
            self.flags &= !flag;
        }
    }
    fn stamp(&self, i: usize) -> Option<u64> {
        if self.present & (1 << i) != 0 {
            self.stamps.get(i).copied()
        } else {
            None
        }
    }
    fn set_stamp(&mut self, i: usize, value: Option<u64>) {
        match (value, self.stamps.get_mut(i)) {
            (Some(v), Some(slot)) => {
                *slot = v;
                self.present |= 1 << i;
            }
            _ => self.present &= !(1 << i),
        }
    }
}

/// A peer removed by `leave` or `peer_down(terminated)`.
#[derive(Debug, Clone)]
struct Removed {
    /// Its messages are refused until this instant (traffic in flight must not re-admit it).
    until: u64,
    /// The incarnation it had: that run is retired (with `admit_unknown_peers`, only a restarted
    /// peer, or an explicit `join`, brings it back), so a replay cannot re-admit it.
    incarnation: Option<u64>,
}

/// How many incarnations of one peer the duplicate filter remembers.
const APP_INCARNATIONS: usize = 8;
/// Width of the sliding window of sequence numbers per incarnation (reordering tolerated).
const APP_WINDOW: u64 = 64;

/// At-most-once delivery of application payloads: per incarnation of a sender, the highest
/// sequence number seen and a bitmap of the [`APP_WINDOW`] below it (the IPsec anti-replay
/// window). The last [`APP_INCARNATIONS`] incarnations are remembered.
#[derive(Debug, Clone, Default)]
struct AppWindows {
    /// (incarnation, highest seq, bit i set = seq `highest - i` delivered), oldest first.
    seen: Vec<(u64, u64, u64)>,
}

impl AppWindows {
    /// Records `(incarnation, seq)`; `false` when it was delivered before or is too old to tell.
    fn fresh(&mut self, incarnation: u64, seq: u64) -> bool {
        let seen = &mut self.seen;
        let Some(entry) = seen.iter_mut().find(|e| e.0 == incarnation) else {
            if seen.len() >= APP_INCARNATIONS {
                seen.remove(0);
            }
            seen.push((incarnation, seq, 1));
            return true;
        };
        let (_, high, bits) = entry;
        if seq > *high {
            let shift = seq - *high;
            *bits = if shift >= APP_WINDOW { 0 } else { *bits << shift };
            *bits |= 1;
            *high = seq;
            return true;
        }
        let back = *high - seq;
        if back >= APP_WINDOW || *bits & (1 << back) != 0 {
            return false;
        }
        *bits |= 1 << back;
        true
    }
}

/// Optional instants of a node, packed as seven `u64`s and a byte of presence bits instead of
/// seven 16-byte `Option<u64>`s (indices: the constants below).
#[derive(Debug, Clone, Copy, Default)]
struct Times {
    present: u8,
    values: [u64; 7],
}

/// Last time a leader of the current term was heard (leader stickiness).
const LEADER_CONTACT: usize = 0;
/// When the election timer fires (follower, candidate, or awaiting confirmation).
const ELECTION_DEADLINE: usize = 1;
/// When the leader sends its next heartbeats.
const HEARTBEAT_DEADLINE: usize = 2;
/// The term won and waiting for the host's [`Node::confirm_leader`].
const AWAITING_CONFIRM: usize = 3;
/// When leadership was last denied (or its handler failed).
const LAST_DENIED_AT: usize = 4;
/// When a heartbeat of the followed leader was last accepted.
const HEARTBEAT_IN_LAST: usize = 5;
/// When this node last sent heartbeats as leader.
const HEARTBEAT_OUT_LAST: usize = 6;

impl Times {
    fn get(&self, i: usize) -> Option<u64> {
        if self.present & (1 << i) != 0 {
            self.values.get(i).copied()
        } else {
            None
        }
    }
    fn set(&mut self, i: usize, value: Option<u64>) {
        match (value, self.values.get_mut(i)) {
            (Some(v), Some(slot)) => {
                *slot = v;
                self.present |= 1 << i;
            }
            _ => self.present &= !(1 << i),
        }
    }
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
    /// This node's id followed by the cluster id, in one allocation (see [`Node::id`]).
    names: Box<str>,
    /// Length of the id in `names` (at most `MAX_ID_LEN`, 255).
    id_len: u8,
    timing: ValidConfig,
    pre_vote: bool,
    confirm_gate: bool,
    durable: bool,
    admit_unknown: bool,
    /// This run's incarnation, in every envelope.
    incarnation: u64,
    /// Sequence number of the next application payload.
    app_seq: u64,
    /// Boxed: the keyed HMAC state is ~200 bytes that unauthenticated nodes should not carry.
    mac: Option<alloc::boxed::Box<wire::HmacSha256>>,
    rng: Rng,

    role: Role,
    term: u64,
    voted_for: Option<Box<str>>,
    term_changed_at: u64,
    leader: Option<Box<str>>,
    /// Newest heartbeat `sent_at` accepted from `leader` in this term: an older or equal one is a
    /// duplicate or a replay and proves nothing about the leader being alive now.
    leader_heartbeat: Option<(Box<str>, u64)>,
    /// The leader reported `Refused` while this node followed it, and until when a refused
    /// pre-vote is retried after one rank slot instead of a full election timeout (the other
    /// followers learn of the death within a few milliseconds of each other).
    refused_until: Option<u64>,
    /// Before this instant a second implausible term is refused outright (see `accept`).
    jump_allowed_at: u64,
    /// The lease promise: this node grants no vote or pre-vote and does not campaign before
    /// `max(bound_until, acked_until)` (except for a leadership transfer). Neither is lowered by a
    /// term change. `bound_until` is set at construction (a restarted node may have acknowledged
    /// a heartbeat just before it stopped) and raised by every heartbeat it sends as leader.
    bound_until: u64,
    /// Raised by every acknowledgement this node sends as a follower, to the peer flagged [`ACKED`].
    acked_until: u64,
    /// The leader the newest acknowledgement went to: a host report that it was terminated (or
    /// `leave`) releases `acked_until`, since the host vouches that no lease of it still runs.
    /// When this node became leader (acknowledgements must echo a heartbeat sent since).
    leader_since: u64,
    /// Next instant at which heartbeats also go to peers that have not answered yet.
    probe_at: u64,

    /// The optional instants (`leader_contact`, the deadlines, …), packed: see [`Times`].
    times: Times,

    peers: IdMap<Peer>,
    /// Peers removed by `leave`/`terminated`.
    /// Boxed: empty in most nodes for their whole life.
    removed: Option<Box<IdMap<Removed>>>,
    /// Application payloads already delivered, per member or removed peer (kept while it is
    /// removed, so that a re-joined peer's old payloads stay delivered once). Outside [`Peer`]:
    /// most peers never send one.
    apps: Option<Box<IdMap<AppWindows>>>,

    /// Boxed: a campaign is rare and short, its 40 bytes need not sit in every node.
    campaign: Option<Box<Campaign>>,
    confirm_denied: u32,

    /// Dropped-message counters by reason, allocated at the first drop (most nodes never drop).
    dropped: Option<Box<[u64; DropReason::ALL.len()]>>,
    outputs: VecDeque<Output>,
    persist_pending: bool,
    bugs: u16,
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
        // The bootstrap list as given (for `inspect`), joined by single spaces (ids hold no
        // whitespace): the peers' keys share its bytes.
        let mut peers = IdMap::with_prefix(config.bootstrap.join(" "));
        peers.reserve_exact(config.bootstrap.iter().filter(|p| **p != config.id).count());
        // Drawn from a stream of its own so that the election timers' draws do not move.
        let incarnation = config.incarnation.unwrap_or_else(|| Rng::new(seed ^ 0x1AC4_2A71_0000_0001).next_u64());
        for p in &config.bootstrap {
            if *p != config.id {
                peers.insert(p, Peer::declared_new());
            }
        }
        let boot_promise = now.saturating_add(timing.lease_duration);
        let mut node = Node {
            id_len: u8::try_from(config.id.len()).unwrap_or(u8::MAX),
            names: [config.id.as_str(), config.cluster.as_str()].concat().into_boxed_str(),
            timing,
            pre_vote: config.pre_vote,
            confirm_gate: config.confirm_leader,
            durable: config.durable,
            admit_unknown: config.admit_unknown_peers,
            incarnation,
            app_seq: 0,
            mac: config.key.as_deref().and_then(wire::keyed).map(alloc::boxed::Box::new),
            rng: Rng::new(seed),
            role: Role::Unclustered,
            term: restored.term,
            voted_for: restored.voted_for.map(String::into_boxed_str),
            term_changed_at: now,
            leader: None,
            leader_heartbeat: None,
            refused_until: None,
            jump_allowed_at: 0,
            bound_until: boot_promise,
            acked_until: 0,
            leader_since: 0,
            probe_at: 0,
            times: Times::default(),
            peers,
            removed: None,
            apps: None,
            campaign: None,
            confirm_denied: 0,
            dropped: None,
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
        self.bugs |= bug as u16;
        if bug == Bug::RestartVotesAtOnce {
            self.bound_until = 0;
        }
    }

    fn bug(&self, b: Bug) -> bool {
        self.bugs & (b as u16) != 0
    }

    // ----- queries -------------------------------------------------------------------------

    /// This node's id.
    pub fn id(&self) -> &str {
        self.names.get(..usize::from(self.id_len)).unwrap_or("")
    }
    /// The cluster id.
    pub fn cluster(&self) -> &str {
        self.names.get(usize::from(self.id_len)..).unwrap_or("")
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
        let mut echoes: Vec<u64> = self.peers.values().filter_map(Peer::ack_echo).collect();
        if echoes.len() < need {
            return None;
        }
        echoes.sort_unstable_by(|a, b| b.cmp(a));
        echoes.get(need - 1).map(|t| t.saturating_add(self.timing.lease_span))
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
            .filter(|(_, p)| p.has(ANSWERED) && p.ghost_until().is_none())
            .filter_map(|(id, p)| p.last_heard().map(|t| (t, id)))
            .max_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(a.1)))
            .map(|(_, id)| id)
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
        for p in self.peers.values() {
            if let Some(t) = self.peer_expiry(p) {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        }
        next
    }

    /// When `p` leaves the view by itself: a reported ghost at its TTL; with
    /// `admit_unknown_peers`, an admitted (undeclared) peer after `ghost_ttl` of silence.
    fn peer_expiry(&self, p: &Peer) -> Option<u64> {
        let silent =
            if p.has(DECLARED) { None } else { p.last_heard().map(|t| t.saturating_add(self.timing.ghost_ttl)) };
        match (p.ghost_until(), silent) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    /// The next output, or `None` when drained.
    #[must_use]
    pub fn poll_output(&mut self) -> Option<Output> {
        self.flush_persist();
        let next = self.outputs.pop_front();
        if self.outputs.is_empty() && self.outputs.capacity() > 1 {
            // Drained after a burst (a campaign, a leader's heartbeat round, a broadcast): keep
            // room for the one output of a heartbeat round, not for the burst.
            self.outputs.shrink_to(1);
        }
        next
    }
    /// Dropped-message counters by reason.
    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.dropped.as_ref().and_then(|d| d.get(reason.index()).copied()).unwrap_or(0)
    }

    /// The whole election state (every key listed in SPEC).
    pub fn inspect(&self) -> Inspect {
        let mut dropped_by_reason = BTreeMap::new();
        for r in DropReason::ALL {
            dropped_by_reason.insert(r.as_str().to_string(), self.dropped(r));
        }
        let (votes_granted, votes_count) = match &self.campaign {
            Some(c) => (c.granted.keys().map(String::from).collect::<Vec<_>>(), c.granted.len() as u32),
            None => (Vec::new(), 0),
        };
        Inspect {
            id: self.id().to_string(),
            state: self.role.as_str().to_string(),
            leader: self.is_leader(),
            leader_id: self.leader.as_deref().map(String::from),
            term: self.term,
            voted_for: self.voted_for.as_deref().map(String::from),
            term_changed_at: self.term_changed_at,
            cluster: self.cluster().to_string(),
            view_size: self.view_size() as u32,
            quorum: self.quorum() as u32,
            min_cluster_size: self.timing.min_cluster_size,
            peers: self.peers.keys().map(String::from).collect(),
            declared: self.peers.iter().filter(|(_, p)| p.has(DECLARED)).map(|(k, _)| String::from(k)).collect(),
            bootstrap: self.peers.prefix().split(' ').filter(|s| !s.is_empty()).map(String::from).collect(),
            unreachable: self.peers.iter().filter_map(|(k, p)| p.ghost_until().map(|t| (String::from(k), t))).collect(),
            ghost_ttl: self.timing.ghost_ttl,
            votes_granted,
            votes_count,
            election_timer_armed: self.times.get(ELECTION_DEADLINE).is_some(),
            heartbeat_timer_armed: self.times.get(HEARTBEAT_DEADLINE).is_some(),
            heartbeat_in_last: self.times.get(HEARTBEAT_IN_LAST),
            heartbeat_out_last: self.times.get(HEARTBEAT_OUT_LAST),
            election_timeout_min: self.timing.election_timeout_min,
            election_timeout_max: self.timing.election_timeout_max,
            heartbeat_interval: self.timing.heartbeat_interval,
            dropped_by_reason,
            send_failing_peers: self
                .peers
                .iter()
                .filter(|(_, p)| p.has(SEND_FAILING))
                .map(|(k, _)| String::from(k))
                .collect(),
            confirm_denied: self.confirm_denied,
            last_denied_at: self.times.get(LAST_DENIED_AT),
            lease_deadline: self.lease_deadline(),
        }
    }

    // ----- inputs ----------------------------------------------------------------------------

    /// Handles a datagram received from peer `from`. Invalid input is dropped, counted, and
    /// reported as the error; the node's state is otherwise unchanged, except after an
    /// `implausible_term`, which steps this node's term up by at most `MAX_TERM_JUMP` (once per
    /// `election_timeout_min`, see `docs/protocol.md`).
    pub fn handle_message(&mut self, now: u64, from: &str, bytes: &[u8]) -> Result<(), DropReason> {
        let result = self.accept(now, from, bytes);
        if let Err(reason) = result {
            let counters = self.dropped.get_or_insert_with(|| Box::new([0; DropReason::ALL.len()]));
            if let Some(c) = counters.get_mut(reason.index()) {
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
        if raw.cluster != self.cluster().as_bytes() {
            core::str::from_utf8(raw.cluster).map_err(|_| DropReason::Malformed)?;
            return Err(DropReason::WrongCluster);
        }
        if env_from.is_empty() || env_from.len() > MAX_ID_LEN {
            return Err(DropReason::Malformed);
        }
        if env_from != from {
            return Err(DropReason::SenderMismatch);
        }
        if env_from == self.id() {
            return Err(DropReason::FromSelf);
        }
        if let Some(r) = self.removed.as_ref().and_then(|m| m.get(from)) {
            if now < r.until {
                return Err(DropReason::RemovedPeer);
            }
            if r.incarnation == Some(raw.incarnation) {
                // The run that was removed: a replay or a very late duplicate, or the removed
                // process itself. Only a restart (a new incarnation) or `join` brings it back.
                return Err(DropReason::Replay);
            }
        }
        if !self.peers.contains_key(from) {
            if !self.admit_unknown {
                return Err(DropReason::UnknownPeer);
            }
            if self.peers.len() >= self.timing.max_peers as usize {
                return Err(DropReason::ViewFull);
            }
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
            let fresh = !self.peers.contains_key(from) || {
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
        self.admit(now, from, raw.incarnation);
        self.dispatch(now, from, raw.term, raw.message);
        Ok(())
    }

    /// Handles the passing of time: call at (or after) [`Node::poll_timeout`]. Calling it early or
    /// twice is harmless.
    pub fn handle_timeout(&mut self, now: u64) {
        // Ghosts whose TTL ran out, and silent admitted peers, leave the view.
        let expired: Vec<String> = self
            .peers
            .iter()
            .filter(|(_, p)| self.peer_expiry(p).is_some_and(|t| t <= now))
            .map(|(k, _)| String::from(k))
            .collect();
        for peer in expired {
            self.remove_peer(now, &peer, false);
        }

        if self.role == Role::Leader {
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
            PeerDownReason::Refused => self.leader_refused(now, peer),
        }
        Ok(())
    }

    /// `peer_down(peer, Refused)`: if `peer` is the leader this node follows, stop waiting for it.
    fn leader_refused(&mut self, now: u64, peer: &str) {
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
    fn failover_slot(&mut self, now: u64, gone: Option<&str>) -> u64 {
        let slot = self.failover_slot_len();
        let rank = self.peers.keys().filter(|p| *p < self.id() && Some(*p) != gone).count() as u64;
        let jitter = self.rng.range_inclusive(0, slot / 3);
        // Never before a promise that still binds (a boot promise, say) runs out.
        let start = now.max(self.promise_until());
        start.saturating_add(rank.saturating_mul(slot)).saturating_add(jitter)
    }

    fn failover_slot_len(&self) -> u64 {
        (self.timing.election_timeout_min / 10).max(2)
    }

    /// Answers an [`Event::ConfirmLeader`]: `true` publishes leadership, `false` withholds it and
    /// backs off (`election_timeout_max` × consecutive denials, at most × 20).
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

    /// Hands leadership to `peer`: it campaigns at once, and this node stops leading now. If no
    /// new leader appears, this node campaigns again after one election timeout.
    pub fn transfer_leadership(&mut self, now: u64, peer: &str) -> Result<(), Error> {
        if self.role != Role::Leader {
            return Err(Error::NotLeader);
        }
        self.check_member(peer)?;
        self.send(peer, Message::TimeoutNow);
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
        let peers: Vec<String> = self.peers.keys().map(String::from).collect();
        for p in peers {
            self.send(&p, Message::App { seq, payload: payload.to_vec() });
        }
        Ok(())
    }

    // ----- internals -------------------------------------------------------------------------

    fn check_member(&self, peer: &str) -> Result<(), Error> {
        check_peer(peer)?;
        if peer == self.id() {
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
            && self.times.get(LEADER_CONTACT).is_some_and(|t| now < t.saturating_add(self.timing.election_timeout_min))
    }

    /// Bound by a lease promise (see `bound_until`).
    fn promised(&self, now: u64) -> bool {
        now < self.promise_until() && !self.bug(Bug::NoPrevoteStickiness)
    }

    fn push_event(&mut self, e: Event) {
        self.flush_persist();
        self.outputs.push_back(Output::Event(e));
    }

    fn send(&mut self, to: &str, message: Message) {
        self.send_with_term(to, self.term, message);
    }

    fn send_with_term(&mut self, to: &str, term: u64, message: Message) {
        let env = EnvelopeRef {
            cluster: self.cluster(),
            from: self.id(),
            term,
            incarnation: self.incarnation,
            message: &message,
        };
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
            self.outputs.push_back(Output::Persist(DurableState {
                term: self.term,
                voted_for: self.voted_for.as_deref().map(String::from),
            }));
        }
    }

    fn set_term(&mut self, now: u64, term: u64) {
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

    fn reset_election_timer(&mut self, now: u64) {
        let t = self.rng.range_inclusive(self.timing.election_timeout_min, self.timing.election_timeout_max);
        self.times.set(ELECTION_DEADLINE, Some(now.saturating_add(t)));
    }

    fn admit(&mut self, now: u64, from: &str, incarnation: u64) {
        // One lookup on the steady path (a known peer's every message).
        let is_new = match self.peers.get_mut(from) {
            Some(p) => {
                p.heard(now, incarnation);
                false
            }
            None => {
                if self.take_removed(from).is_none() {
                    self.forget_apps(from);
                }
                let mut p = Peer::default();
                p.heard(now, incarnation);
                self.peers.insert(from, p);
                true
            }
        };
        if is_new {
            self.push_event(Event::PeerJoined { peer: from.to_string() });
            self.membership_changed(now);
        }
    }

    /// Drops what was delivered from `peer` (it is neither a member nor a removed peer any more).
    fn forget_apps(&mut self, peer: &str) {
        if let Some(apps) = self.apps.as_mut() {
            apps.remove(peer);
            if apps.is_empty() {
                self.apps = None;
            }
        }
    }

    /// Takes `peer`'s record out of `removed` (freeing the map once empty).
    fn take_removed(&mut self, peer: &str) -> Option<Removed> {
        let removed = self.removed.as_mut()?;
        let r = removed.remove(peer);
        if removed.is_empty() {
            self.removed = None;
        }
        r
    }

    fn remove_peer(&mut self, now: u64, peer: &str, sticky: bool) {
        let Some(gone) = self.peers.remove(peer) else {
            return;
        };
        let was_acked = gone.has(ACKED);
        if sticky {
            // Bounded: the oldest record makes room (its incarnation is no longer retired).
            let max = self.timing.max_peers as usize;
            let removed = self.removed.get_or_insert_with(Box::default);
            if removed.len() >= max {
                let oldest = removed.iter().min_by_key(|(_, r)| r.until).map(|(k, _)| String::from(k));
                if let Some(k) = oldest {
                    removed.remove(&k);
                    self.forget_apps(&k);
                }
            }
            let until = now.saturating_add(self.timing.election_timeout_max);
            self.removed
                .get_or_insert_with(Box::default)
                .insert(peer, Removed { until, incarnation: gone.incarnation() });
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

    /// Moves into follower (or stays unclustered), firing `BecameFollower` when the role changes.
    fn become_follower(&mut self, now: u64) {
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

    fn start_pre_vote(&mut self, now: u64) {
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
        let peers: Vec<String> = self.peers.keys().map(String::from).collect();
        for p in peers {
            self.send_with_term(&p, term, Message::PreVote);
        }
        self.check_campaign(now);
    }

    fn start_election(&mut self, now: u64, transfer: bool) {
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
        let peers: Vec<String> = self.peers.keys().map(String::from).collect();
        for p in peers {
            self.send(&p, Message::Vote { transfer });
        }
        self.check_campaign(now);
    }

    fn check_campaign(&mut self, now: u64) {
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

    fn become_leader(&mut self, now: u64) {
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
        self.push_event(Event::BecameLeader { term: self.term });
        self.send_heartbeats(now);
    }

    fn send_heartbeats(&mut self, now: u64) {
        // Peers that have not answered yet (declared but silent, or re-joined) get a heartbeat
        // once per election_timeout_min, so that a second leader of one term (possible only
        // outside the guarantee's scope) hears of this one and the two converge.
        let probe = now >= self.probe_at;
        if probe {
            self.probe_at = now.saturating_add(self.timing.election_timeout_min);
        }
        let targets: Vec<String> =
            self.peers.iter().filter(|(_, p)| p.has(ANSWERED) || probe).map(|(k, _)| String::from(k)).collect();
        for p in targets {
            self.send(&p, Message::Heartbeat { sent_at: now });
        }
        // This node counts itself in the lease it is building: it must not help elect anyone else
        // before that lease can have run out.
        self.bound_until = self.bound_until.max(now.saturating_add(self.timing.lease_duration));
        self.times.set(HEARTBEAT_OUT_LAST, Some(now));
        self.times.set(HEARTBEAT_DEADLINE, Some(now.saturating_add(self.timing.heartbeat_interval)));
    }

    fn leader_tick(&mut self, now: u64) {
        // Check quorum: evidence is an acknowledgement echoing one of this leadership's own
        // heartbeats sent within one election timeout (or a vote granted in the campaign that led
        // to it). Not "any message": a replay or a very late duplicate proves nothing about now.
        // A send the transport accepted is not evidence either.
        let window_start = now.saturating_sub(self.timing.election_timeout_min);
        let any = self.bug(Bug::AnyMessageIsEvidence);
        let heard = self
            .peers
            .values()
            .filter(|p| if any { p.last_heard() } else { p.evidence_at() }.is_some_and(|t| t >= window_start))
            .count();
        if heard + 1 < self.quorum() && !self.bug(Bug::NoStepDown) {
            self.leader = None;
            self.times.set(LEADER_CONTACT, None);
            self.become_follower(now);
            return;
        }
        self.send_heartbeats(now);
    }

    fn deny(&mut self, now: u64) {
        self.confirm_denied = self.confirm_denied.saturating_add(1);
        self.times.set(LAST_DENIED_AT, Some(now));
        self.times.set(AWAITING_CONFIRM, None);
        self.leader = None;
        self.times.set(LEADER_CONTACT, None);
        self.become_follower(now);
        let factor = u64::from(self.confirm_denied).min(MAX_BACKOFF_FACTOR);
        let backoff = self.timing.election_timeout_max.saturating_mul(factor);
        let jitter = self.rng.range_inclusive(0, self.timing.election_timeout_max - self.timing.election_timeout_min);
        if self.role == Role::Follower {
            self.times.set(ELECTION_DEADLINE, Some(now.saturating_add(backoff).saturating_add(jitter)));
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
                    self.leader = Some(Box::from(from));
                }
                self.become_follower(now);
            }
        }
        match message {
            Message::PreVote => {
                let granted = term > self.term && !self.sticky(now) && !self.promised(now);
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
            Message::Vote { transfer } => {
                let can_vote = term == self.term && matches!(self.role, Role::Follower | Role::Unclustered);
                let free = self.voted_for.as_deref().is_none_or(|v| v == from)
                    && self.leader.as_deref().is_none_or(|l| l == from);
                let unbound = transfer || !self.promised(now);
                let granted = can_vote && unbound && (free || self.bug(Bug::DoubleVote));
                if granted {
                    if self.voted_for.as_deref() != Some(from) {
                        self.voted_for = Some(Box::from(from));
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
                        if let Some(p) = self.peers.get_mut(from) {
                            // A reply to this campaign's own request: fresh evidence.
                            p.set_evidence_at(Some(now));
                        }
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
                self.send(from, Message::HeartbeatAck { echo: sent_at });
                // The acknowledgement counts toward the leader's lease: honour it (on this node's
                // clock, from now, which is no earlier than the heartbeat's sending).
                self.acked_until = self.acked_until.max(now.saturating_add(self.timing.lease_duration));
                if self.peers.get(from).is_some_and(|p| !p.has(ACKED)) {
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
                    if let Some(p) = self.peers.get_mut(from) {
                        p.set_ack_echo(Some(p.ack_echo().map_or(echo, |e| e.max(echo))));
                        p.set_evidence_at(Some(p.evidence_at().map_or(echo, |e| e.max(echo))));
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

fn check_peer(peer: &str) -> Result<(), Error> {
    if !id_is_valid(peer) {
        return Err(Error::InvalidPeer { peer: peer.to_string() });
    }
    Ok(())
}
