//! The election state machine.
//!
//! `Node` and its state live here; its methods are grouped by what they do, one file each:
//! [`query`] (what the node knows, `poll_timeout`, `poll_output`, `inspect`), [`input`] (the
//! host's calls that change it), [`dispatch`] (one peer message, by kind), [`campaign`] (following,
//! pre-votes, elections), [`leadership`] (heartbeats, check-quorum, a denied confirmation),
//! [`membership`] (admitting and removing peers) and [`plumbing`] (the output queue, sending,
//! persisting, the term and the timer).

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::config::{id_is_valid, Config, ConfigError, ConfigWarning, DurableState, ValidConfig, MAX_ID_LEN};
use crate::error::Error;
use crate::inspect::Inspect;
use crate::rng::Rng;
use crate::vecmap::{IdMap, IdSet};

use crate::wire::{self, DropReason, EnvelopeRef, Message, MAX_MESSAGE_SIZE, MAX_TERM, MAX_TERM_JUMP};

mod campaign;
mod dispatch;
mod input;
mod leadership;
mod membership;
mod notice;
mod observer;
mod outbox;
mod plumbing;
mod priority;
mod query;
mod value;

pub use outbox::OutputRef;
use outbox::{Other, Outbox};
pub use priority::PREEMPT_BACKOFF_FACTOR;

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
    /// An observer (`Config::observer`), for its whole life: it learns the leader, the term and
    /// the value from the members that list it, and never votes, campaigns, acknowledges or
    /// counts toward any quorum or view size.
    Observer,
}

impl Role {
    /// The lower-case name used in `inspect()` and by every binding.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Unclustered => "unclustered",
            Role::Follower => "follower",
            Role::Candidate => "candidate",
            Role::Leader => "leader",
            Role::Observer => "observer",
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
#[cfg_attr(feature = "model-check", derive(Hash))]
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

/// One output of the node, owned. Poll them with [`Node::poll_output`] (or, borrowed and without
/// allocating, [`Node::poll_output_ref`]) until `None` after every input,
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
/// `Node::inject_bug`; without it every check is `false` at compile time (see `Node::bug`). Each variant is one bit of `Node::bugs`. Each names the invariant of the
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
    /// Every granted vote restarts the election timer, a repeated grant to the same candidate in
    /// the same term included (a recorder replaying a dead leader's vote requests keeps its
    /// voters from ever timing out). Caught by the failover bound under the replay adversary.
    RepeatedVoteRestartsTimer = 2048,
    /// Leadership starts without checking quorum evidence (a late confirmation, or late votes,
    /// lead on evidence older than `election_timeout_min` until the first heartbeat tick). Caught
    /// by S4, checked from a leadership's first moment.
    UncheckedLeadershipStart = 4096,
    /// `death_notices` also addresses members that never said they speak wire version 4 (a
    /// v0.1.0 node would be sent a kind it cannot read). Caught by the simulator's wire-version
    /// gate invariant.
    NoticeToEveryMember = 8192,
    /// A preemption tells the member of higher priority to campaign but does not hand leadership
    /// over as a transfer does: the leader goes on leading, its lease running, while the member is
    /// elected with the transfer's exemption from lease promises. Caught by the simulator's lease
    /// invariant and by the rule test of preemption.
    PreemptWithoutTransfer = 16384,
    /// A member takes a listed observer's `Observe` for a member's acknowledgement: the observer
    /// enters the view and its answers count toward the quorum (a leader cut off from its members
    /// keeps leading on observers). Caught by the simulator's observer invariant.
    ObserverCounted = 32768,
}

/// A peer that has not said which wire version it speaks is greeted again at most once per this
/// many `election_timeout_max` (a node of an older version drops every `Hello`).
const HELLO_RETRY_TIMEOUTS: u64 = 4;

/// Bits of [`Peer::flags`].
const DECLARED: u8 = 1;
/// Has sent us at least one valid message: heartbeats go only to such peers.
const ANSWERED: u8 = 2;
/// Reported `no_connection` by the host (`inspect().send_failing_peers`) until heard from or
/// joined again.
const SEND_FAILING: u8 = 4;
/// The leader this node's newest heartbeat acknowledgement went to (at most one peer): a host
/// report that it was terminated (or `leave`), or its accepted death notice, releases
/// `acked_until`, since either vouches that no lease of it still runs.
const ACKED: u8 = 8;
/// Reported `refused` by the host (its port refused a datagram, or its runtime said it is
/// stopping) and not heard from since: leadership is never handed to it.
const REFUSED: u8 = 16;
/// Said, in a `Hello` of the run (incarnation) last heard from, that it speaks this core's newest
/// wire version ([`wire::VERSION`]).
const SPEAKS: u8 = 32;

/// What this node knows of one peer. The optional instants are packed (five `u64`s and one byte
/// of presence bits, not five 16-byte `Option<u64>`s): a view of N peers holds N of these.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "model-check", derive(Hash))]
struct Peer {
    /// [`DECLARED`] (by the host: bootstrap or `join`, as opposed to admitted because it wrote to
    /// us), [`ANSWERED`], [`SEND_FAILING`].
    flags: u8,
    /// Bit `i` set: `stamps[i]` holds a value.
    present: u8,
    /// Indexed by the `STAMP_*` constants, read through the accessors below.
    stamps: [u64; 6],
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
/// When this node last sent it a `Hello` (in its current incarnation).
const STAMP_HELLO_AT: usize = 5;

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
    STAMP_HELLO_AT => hello_at, set_hello_at;
}

impl Peer {
    fn declared_new() -> Peer {
        Peer { flags: DECLARED, ..Peer::default() }
    }
    /// A valid message from it arrived: it has answered, is no ghost and no failing send.
    fn heard(&mut self, now: u64, incarnation: u64) {
        if self.incarnation() != Some(incarnation) {
            // Another run of it (a restart, an upgrade or a downgrade): what it speaks is unknown
            // again until it says.
            self.flags &= !SPEAKS;
            self.set_hello_at(None);
        }
        self.flags = (self.flags | ANSWERED) & !(SEND_FAILING | REFUSED);
        self.set_last_heard(Some(now));
        self.set_ghost_until(None);
        self.set_incarnation(Some(incarnation));
    }
    /// Whether to greet it now with a `Hello` (it has not said it speaks this core's newest
    /// version, and no `Hello` went to this run of it within `retry` ms); notes the greeting.
    fn greet(&mut self, now: u64, retry: u64) -> bool {
        let due = !self.has(SPEAKS) && self.hello_at().is_none_or(|t| now >= t.saturating_add(retry));
        if due {
            self.set_hello_at(Some(now));
        }
        due
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

/// A peer removed by `leave` or `peer_down(terminated)`, or a retired run of a member: the
/// leader whose death notice this node accepted (`until` is then the instant of the notice).
#[derive(Debug, Clone)]
#[cfg_attr(feature = "model-check", derive(Hash))]
struct Removed {
    /// Its messages are refused until this instant (traffic in flight must not re-admit it).
    until: u64,
    /// The incarnation it had: that run is retired (with `admit_unknown_peers`, only a restarted
    /// peer, or an explicit `join`, brings it back), so a replay cannot re-admit it.
    incarnation: Option<u64>,
    /// For a run retired by a death notice: the term that leadership had. Only that run's
    /// messages of this term or older are refused: whatever the dead run sent is among them, and
    /// a run the notice wrongly retired (one forged without a key) is heard again as soon as it
    /// speaks in a newer term. `None` (a removed peer): every message of the run.
    through_term: Option<u64>,
}

/// How many incarnations of one peer the duplicate filter remembers.
const APP_INCARNATIONS: usize = 8;
/// Width of the sliding window of sequence numbers per incarnation (reordering tolerated).
const APP_WINDOW: u64 = 64;

/// At-most-once delivery of application payloads: per incarnation of a sender, the highest
/// sequence number seen and a bitmap of the [`APP_WINDOW`] below it (the IPsec anti-replay
/// window). The last [`APP_INCARNATIONS`] incarnations are remembered.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "model-check", derive(Hash))]
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

/// Optional instants of a node, packed as eight `u64`s and a byte of presence bits instead of
/// eight 16-byte `Option<u64>`s (indices: the constants below).
#[derive(Debug, Clone, Copy, Default)]
#[cfg_attr(feature = "model-check", derive(Hash))]
struct Times {
    present: u8,
    values: [u64; 8],
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
/// No campaign of this node's own before this instant (see [`Node::hold_campaigns`]).
const CAMPAIGN_HOLD: usize = 7;

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
#[cfg_attr(feature = "model-check", derive(Hash))]
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
#[cfg_attr(feature = "model-check", derive(Clone))]
// `Hash` (for model checkers, which tell node states apart by it) hashes every field, and every
// field of what the fields hold, as derived `Debug` prints them: each may change what the node
// does next. The one exception is `mac`, whose keyed states never change in a node's life (see
// `NodeMac`'s `Hash`).
#[cfg_attr(feature = "model-check", derive(Hash))]
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
    /// The newest wire version this node speaks ([`Node::limit_wire_version`]).
    wire_cap: u8,
    /// Boxed: the keyed HMAC states are ~400 bytes that unauthenticated nodes should not carry.
    mac: Option<alloc::boxed::Box<wire::NodeMac>>,
    rng: Rng,

    role: Role,
    term: u64,
    voted_for: Option<Box<str>>,
    term_changed_at: u64,
    leader: Option<Box<str>>,
    /// Newest heartbeat `sent_at` accepted from `leader` in this term: an older or equal one is a
    /// duplicate or a replay and proves nothing about the leader being alive now.
    leader_heartbeat: Option<(Box<str>, u64)>,
    /// The leader reported `Refused` (or its death notice accepted) while this node followed it,
    /// and until when a refused
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
    /// Peers removed by `leave`/`terminated`, and retired runs of members (see [`Removed`]).
    /// Boxed: empty in most nodes for their whole life.
    removed: Option<Box<IdMap<Removed>>>,
    /// Application payloads already delivered, per member or removed peer (kept while it is
    /// removed, so that a re-joined peer's old payloads stay delivered once). Outside [`Peer`]:
    /// most peers never send one.
    apps: Option<Box<IdMap<AppWindows>>>,

    /// The proclaimed value: configured, and the leader's as this node knows it. Boxed and
    /// `None` until a value is configured or heard of (most clusters have none).
    values: Option<Box<value::Values>>,
    /// Boxed: a campaign is rare and short, its 40 bytes need not sit in every node.
    campaign: Option<Box<Campaign>>,
    /// The observers this member keeps informed (`Config::observer_peers`, members excluded).
    /// Boxed and `None` without any (most clusters).
    observers: Option<Box<IdSet>>,
    confirm_denied: u32,

    /// Dropped-message counters by reason, allocated at the first drop (most nodes never drop).
    dropped: Option<Box<[u64; DropReason::ALL.len()]>>,
    outbox: Outbox,
    /// Where in `peers` the previous message's sender was (a hint, checked before use).
    last_sender: u16,
    persist_pending: bool,
    bugs: u16,
    /// Priorities and witnesses: this node's rank and what it learned of the others'. Boxed and
    /// `None` while this node and every peer it heard of have the default rank.
    ranks: Option<Box<priority::Ranks>>,
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
        // whitespace): the peers' keys share its bytes. Joined by hand, as `names` below: `join`
        // and `concat` each link a copy of the standard library's generic joiner (~0.5 KB of
        // WebAssembly apiece).
        let len = config.bootstrap.iter().map(|p| p.len() + 1).sum::<usize>().saturating_sub(1);
        let mut prefix = String::with_capacity(len);
        for (i, p) in config.bootstrap.iter().enumerate() {
            if i > 0 {
                prefix.push(' ');
            }
            prefix.push_str(p);
        }
        let mut peers = IdMap::with_prefix(prefix);
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
            names: {
                let mut names = String::with_capacity(config.id.len() + config.cluster.len());
                names.push_str(&config.id);
                names.push_str(&config.cluster);
                // Copied rather than `into_boxed_str`, whose shrinking code only this and
                // `voted_for` below would link (once per node, at its start).
                Box::from(names.as_str())
            },
            timing,
            pre_vote: config.pre_vote,
            confirm_gate: config.confirm_leader,
            // An observer's term is no promise (it votes for nobody): nothing to persist.
            durable: config.durable && !config.observer,
            admit_unknown: config.admit_unknown_peers,
            incarnation,
            app_seq: 0,
            wire_cap: wire::VERSION,
            mac: config.key.as_deref().and_then(|k| wire::NodeMac::new(k, &config.id)).map(alloc::boxed::Box::new),
            rng: Rng::new(seed),
            role: Role::Unclustered,
            term: restored.term,
            voted_for: restored.voted_for.as_deref().map(Box::from),
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
            observers: observer::listed(&config),
            values: value::Values::configured(config.value.as_deref()),
            confirm_denied: 0,
            dropped: None,
            outbox: Outbox::default(),
            last_sender: 0,
            persist_pending: false,
            bugs: 0,
            // An observer never campaigns and members take nothing but `Observe` from it: a rank
            // would only be dropped at every member, so it has none.
            ranks: match config.observer {
                true => None,
                false => priority::Ranks::configured(config.priority, config.never_lead),
            },
        };
        if config.observer {
            // For its whole life: no timer until a leader is heard (then: when to give it up).
            node.role = Role::Observer;
        } else if node.clustered() {
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

    /// Whether bug `b` is switched on. Without feature `bug-injection` nothing can switch one on,
    /// so every check is the constant `false` and compiles away (the shipped builds carry no
    /// branch for any bug).
    #[inline(always)]
    fn bug(&self, b: Bug) -> bool {
        cfg!(feature = "bug-injection") && self.bugs & (b as u16) != 0
    }
}

fn check_peer(peer: &str) -> Result<(), Error> {
    if !id_is_valid(peer) {
        return Err(Error::InvalidPeer { peer: peer.to_string() });
    }
    Ok(())
}
