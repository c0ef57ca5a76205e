//! # tenure-model — bounded exhaustive model checking of the real `tenure::Node`
//!
//! The state of the model is the real core: three (or four) `tenure::Node` values, the datagrams
//! in flight between them (a multiset), what each host has carried out durably, one abstract real
//! clock in whole milliseconds and one host clock per node that runs within ±ρ of it. Every action
//! is a call into the core's public API, exactly as a host makes it: delivering, dropping or
//! duplicating a datagram, a timer firing, a crash and a restart from the last `Persist` carried
//! out, the host's answers (confirm granted or denied, leader work failing, a transfer, a
//! `peer_down` report) and an adversary's datagrams (a stranger, a near-maximum term under a
//! member's id, a replay of any datagram seen so far). [stateright] enumerates every interleaving
//! up to a depth and checks the properties in [`props`] on every state it reaches.
//!
//! Time jumps between the instants at which a decision can change — a node's timer deadline, a
//! lease deadline a leader reports, a promise's end — and their ±1 ms neighbours, so the
//! one-millisecond corners the randomised soak finds only by luck are on every path. A quiet
//! stretch (`Action::Run`: on-time deliveries and heartbeats until a decision is the model's
//! again) stands for the many single actions between two faults that are several heartbeat
//! rounds apart.
//!
//! The core's nodes are not symmetric: an id's rank (its order among the members) times a
//! survivor's campaign, and each node draws its timeouts from its own seed. Renaming nodes
//! therefore does not map behaviours onto behaviours, and no symmetry reduction is applied.
//!
//! `docs/model.md` says what the bounds cover and what they do not.

use std::fmt::{self, Write as _};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tenure::{Bug, Config, DurableState, Node};

pub mod bugs;
pub mod model;
pub mod props;
pub mod scopes;
pub mod step;
pub mod trace;

pub use scopes::{scopes, Scope, PRIORITY_PREEMPT_AFTER, PRIORITY_RANKS};

/// The cluster id of every model run.
pub const CLUSTER: &str = "mc";
/// Member ids, in rank order.
pub const IDS: [&str; 4] = ["n1", "n2", "n3", "n4"];
/// The id the adversary's stranger writes under (never a member).
pub const STRANGER: &str = "x9";
/// Index standing for "not a member" in a [`Dgram`].
pub const OUTSIDER: u8 = 9;

/// What a run may do, and how often: each fault has a budget per path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Budget {
    /// Datagrams dropped.
    pub drop: u8,
    /// Datagrams duplicated.
    pub dup: u8,
    /// Crashes (each followed, when the path chooses, by a restart from durable state).
    pub crash: u8,
    /// Adversary datagrams (stranger, near-maximum term, replay).
    pub adversary: u8,
    /// Host actions: a leadership transfer, leader work failing, a confirmation denied.
    pub host: u8,
    /// `peer_down` reports (`no_connection` and `refused`, true or false; `terminated` too when
    /// membership changes are in scope).
    pub report: u8,
    /// Partitions: one node cut off from the others (everything in flight to or from it lost,
    /// and everything it or they send to each other) until the partition heals.
    pub partition: u8,
    /// Forged near-maximum-term heartbeats under a member's id only, without the strangers and
    /// replays [`Budget::adversary`] also allows: many fewer choices per state.
    pub huge_term: u8,
    /// Quiet stretches (`Action::Run`): the network delivers everything on time and leaders
    /// heartbeat until a decision is the model's again (see `props::run_quiet`).
    pub run: u8,
}

impl Budget {
    /// No fault at all.
    pub const NONE: Budget =
        Budget { drop: 0, dup: 0, crash: 0, adversary: 0, host: 0, report: 0, partition: 0, huge_term: 0, run: 0 };
}

/// Where a run starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Start {
    /// Every node just constructed at real time 0, nothing in flight.
    Fresh,
    /// After a fault-free election (deterministic: the network delivers in 1 ms, hosts grant),
    /// once the leader holds a lease acknowledged by every follower.
    Led,
}

/// The model's fixed parameters.
#[derive(Debug, Clone)]
pub struct Opts {
    /// Cluster size (3, or 4 for the membership cases).
    pub nodes: usize,
    /// Deliberate core bugs switched on in every node (empty: the real protocol).
    pub bugs: Vec<Bug>,
    /// Fault budgets per path.
    pub budget: Budget,
    /// Initial states.
    pub starts: Vec<Start>,
    /// Clock-rate patterns (ppm per node, within ±ρ) explored as separate initial states.
    pub rates: Vec<Vec<i32>>,
    /// At most this many datagrams in flight (beyond it, sends are lost: a bounded network).
    pub max_in_flight: usize,
    /// The bounded-liveness probe runs on states whose fingerprint is a multiple of this (1: all).
    pub probe_every: u64,
    /// Membership actions (`leave`, `join`) on the fourth node.
    pub membership: bool,
    /// Time jumps to the instants that change a decision and their ±1 ms neighbours
    /// (`Action::Advance`). Off, time passes only in quiet stretches (`Action::Run`, which stops
    /// where a decision is the model's): far fewer choices per state, for the scopes whose faults
    /// need long stretches of ordinary operation between them.
    pub advance: bool,
    /// Death notices: the nodes speak wire version 4 (every other scope pins them to version 3,
    /// whose messages are all the election uses), and a leader that crashes leaves its watchdog
    /// the notices of its state at the crash, which an action sends (`Action::Notice`).
    pub notice: bool,
    /// With `notice`: this node speaks only version 3 (v0.1.0), in every run; no node may address
    /// it a newer kind than `Hello` (property `gate`).
    pub old: Option<u8>,
    /// Each node's `(priority, never_lead)` (`Config::priority`, `Config::never_lead`). Anything
    /// but the defaults runs the nodes at wire version 4, whose `Priority` tells the ranks.
    pub ranks: [(u32, bool); 4],
    /// `Config::preempt_after` of every node (`None`: the default, `2 × election_timeout_max`).
    pub preempt_after: Option<u64>,
    /// This node is an observer (`Config::observer`) that every member lists
    /// (`Config::observer_peers`); the others are the members. Observers need wire version 4.
    pub observer: Option<u8>,
}

/// At most this many generated states per injected-bug run and scope (a breadth-first search
/// keeps its frontier's full states: this bounds its memory to a few GB).
pub const BUG_STATE_CAP: usize = 2_000_000;

impl Opts {
    /// Node `i`'s configuration.
    pub fn config(&self, i: usize) -> Config {
        let members = self.members();
        let bootstrap: Vec<&str> = if self.membership { &members[..3] } else { &members[..] }.to_vec();
        // The incarnation is drawn from the seed, which differs per run (see `seed`): a restarted
        // node's traffic is told apart from its earlier run's, as a runtime's incarnation is.
        let mut c = Config::new(IDS[i], CLUSTER).bootstrap(bootstrap).durable(true);
        let (priority, never_lead) = self.ranks[i];
        c = c.priority(priority).never_lead(never_lead);
        if let Some(ms) = self.preempt_after {
            c = c.preempt_after(ms);
        }
        match self.observer {
            Some(o) if usize::from(o) == i => c.observer(true),
            Some(o) => c.observer_peers([IDS[usize::from(o)]]),
            None => c,
        }
    }

    /// The members' ids, in rank order (every node but the observer).
    pub fn members(&self) -> Vec<&'static str> {
        (0..self.nodes).filter(|&i| !self.is_observer(i)).map(|i| IDS[i]).collect()
    }

    /// Whether node `i` is the observer.
    pub fn is_observer(&self, i: usize) -> bool {
        self.observer.is_some_and(|o| usize::from(o) == i)
    }

    /// Whether node `i` may lead: a member that is no witness.
    pub fn may_lead(&self, i: usize) -> bool {
        !self.is_observer(i) && !self.ranks[i].1
    }

    /// Whether some node has a rank other than the default (priorities are in play).
    pub fn ranked(&self) -> bool {
        self.ranks.iter().any(|r| *r != (0, false))
    }

    /// Whether the nodes speak wire version 4 (death notices, priorities and observers need it;
    /// every other scope pins them to version 3, see [`Opts::new_node`]).
    pub fn wire4(&self) -> bool {
        self.notice || self.observer.is_some() || self.ranked()
    }

    /// The wire version node `i` speaks in every run.
    pub fn version(&self, i: usize) -> u8 {
        if self.wire4() && self.old != Some(i as u8) {
            tenure::wire::VERSION
        } else {
            tenure::wire::MIN_VERSION
        }
    }

    /// The seed node `i` uses in its `run`-th run (restarts draw new timeouts and incarnations).
    pub fn seed(&self, i: usize, run: u8) -> u64 {
        0x7e57_0000 + 1000 * i as u64 + u64::from(run)
    }

    /// A fresh node `i`, restarted `run` times, from `restored`, constructed at host time `now`.
    pub fn new_node(&self, i: usize, run: u8, restored: Option<DurableState>, now: u64) -> Node {
        let mut node =
            Node::new(self.config(i), self.seed(i, run), restored, now).expect("the model's configuration is valid");
        for &b in &self.bugs {
            node.inject_bug(b);
        }
        // The model checks the election, which uses only the oldest wire version's messages; the
        // greetings of newer versions would multiply the states by their timing for nothing they
        // decide (core/tests/versions.rs checks them). Death notices, priorities and observers
        // need version 4.
        if self.version(i) == tenure::wire::MIN_VERSION {
            node.limit_wire_version(tenure::wire::MIN_VERSION);
        }
        node
    }
}

/// A host clock: reads `real + ⌊real · rate / 10⁶⌋` (whole ms), never goes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Clock {
    /// Rate error in parts per million, within ±ρ.
    pub rate_ppm: i32,
}

impl Clock {
    /// The reading at real instant `real`.
    pub fn local(self, real: u64) -> u64 {
        let r = i128::from(real);
        let v = r + (r * i128::from(self.rate_ppm)).div_euclid(1_000_000);
        u64::try_from(v.max(0)).unwrap_or(u64::MAX)
    }
    /// The first real instant at which the clock reads `local` or more.
    pub fn real_at(self, local: u64) -> u64 {
        if local == u64::MAX {
            return u64::MAX;
        }
        let k = 1_000_000 + i128::from(self.rate_ppm);
        let mut r = u64::try_from(i128::from(local) * 1_000_000 / k).unwrap_or(u64::MAX);
        while r > 0 && self.local(r - 1) >= local {
            r -= 1;
        }
        while r < u64::MAX && self.local(r) < local {
            r += 1;
        }
        r
    }
}

/// A datagram: transport sender, destination (member indices; [`OUTSIDER`] for a stranger), bytes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dgram {
    /// Sender index.
    pub from: u8,
    /// Destination index.
    pub to: u8,
    /// The encoded message.
    pub bytes: Vec<u8>,
}

/// A running node, shared between the states that hold it unchanged, and its hashes once
/// something asked for them.
pub struct Running {
    /// The real core. Shared: a state's copy shares its nodes with the state it was copied from,
    /// and [`Running::node_mut`] copies a node only when an action changes it (an action changes
    /// one node of three, and copying every node of every state was a large part of the run).
    pub node: Arc<Node>,
    /// Hash (aHash, fixed keys) of the node by its `Hash` (every field of it), or 0 until [`Running::hash`]
    /// computes it: the checker's state hash hashes this, so a node an action left alone is not
    /// hashed again. 64 bits per node state, as the hash of the whole state is.
    hash: AtomicU64,
    /// Hash of the node's complete `Debug` rendering (every field, the PRNG included), or 0 until
    /// [`Running::fp`] computes it. Only [`State::fingerprint`] reads it (it picks the states the
    /// liveness probe runs on); formatting a node is slow, so only the nodes of the states that
    /// fingerprint needs are formatted.
    fp: AtomicU64,
}

impl Clone for Running {
    fn clone(&self) -> Running {
        Running {
            node: Arc::clone(&self.node),
            hash: AtomicU64::new(self.hash.load(Ordering::Relaxed)),
            fp: AtomicU64::new(self.fp.load(Ordering::Relaxed)),
        }
    }
}

impl Running {
    /// Wraps a node.
    pub fn new(node: Node) -> Running {
        Running { node: Arc::new(node), hash: AtomicU64::new(0), fp: AtomicU64::new(0) }
    }
    /// The node, to change it (copied first if another state shares it); forgets the hashes.
    pub fn node_mut(&mut self) -> &mut Node {
        *self.hash.get_mut() = 0;
        *self.fp.get_mut() = 0;
        Arc::make_mut(&mut self.node)
    }
    /// The hash of the node's `Hash` (computed at most once per node state; the atomics only
    /// because the checker moves states between threads; a hash that happens to be 0 is
    /// recomputed each time, which costs time only).
    pub fn hash(&self) -> u64 {
        cached(&self.hash, || NODE_HASH.hash_one(&*self.node))
    }
    /// The hash of the node's `Debug` rendering (computed at most once per node state).
    pub fn fp(&self) -> u64 {
        cached(&self.fp, || node_fingerprint(&self.node))
    }
}

/// The hasher of [`Running::hash`]: aHash (what stateright fingerprints whole states with) with
/// fixed keys, so that a run explores states in the same order every time.
static NODE_HASH: ahash::RandomState = ahash::RandomState::with_seeds(0x7e57, 0x6e6f_6465, 0x6861_7368, 0x6d63);

/// `slot`'s value, computed by `f` and stored there when it is 0 (unknown).
fn cached(slot: &AtomicU64, f: impl FnOnce() -> u64) -> u64 {
    let v = slot.load(Ordering::Relaxed);
    if v != 0 {
        return v;
    }
    let v = f();
    slot.store(v, Ordering::Relaxed);
    v
}

impl fmt::Debug for Running {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.node.role().as_str(), self.node.term(), self.node.leader().unwrap_or("-"))
    }
}

/// A `Hasher` that is written to as a `fmt::Write` (no string is built).
struct HashWriter(DefaultHasher);

impl fmt::Write for HashWriter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.write(s.as_bytes());
        Ok(())
    }
}

/// Hash of the node's `Debug` output: derived `Debug` prints every field, so two nodes with the
/// same fingerprint are (up to hash collisions) the same state.
pub fn node_fingerprint(node: &Node) -> u64 {
    let mut w = HashWriter(DefaultHasher::new());
    let _ = write!(w, "{node:?}");
    w.0.finish()
}

/// One host: its node (`None` while crashed), what it carried out durably, its clock.
#[derive(Clone, Debug)]
pub struct Host {
    /// The node, while running.
    pub node: Option<Running>,
    /// The last `Persist` carried out (what a restart reads).
    pub durable: DurableState,
    /// The host's clock (survives the node's crashes).
    pub clock: Clock,
    /// How many times the node was (re)started.
    pub runs: u8,
    /// The term of a `ConfirmLeader` event the host has not answered yet.
    pub confirm: Option<u64>,
    /// While crashed after leading (with `Opts::notice`): what its watchdog holds.
    pub notices: Option<Armed>,
}

/// A crashed leader's watchdog: `(term, real crash instant, [(receiver, bytes)])`, the notices its
/// core gave at the crash.
pub type Armed = (u64, u64, Vec<(u8, Vec<u8>)>);

/// The checker's state hash (stateright's fingerprint, which tells states apart): the node by
/// the hash of every field of it ([`Running::hash`]; `Node`'s `Hash` hashes every field its
/// `Debug` prints). The durable state's two fields are hashed one by one, as they always were.
impl Hash for Host {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.node.as_ref().map(Running::hash).hash(h);
        self.hash_rest(h);
    }
}

/// A host hashed as [`State::fingerprint`] hashes it: the node by its `Debug` rendering's hash.
/// The fingerprint picks the states the liveness probe runs on (`Opts::probe_every`): that sample
/// depends on the nodes' renderings, not on how the checker's own state hash hashes them.
struct ByDebug<'a>(&'a Host);

impl Hash for ByDebug<'_> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.0.node.as_ref().map(Running::fp).hash(h);
        self.0.hash_rest(h);
    }
}

impl Host {
    /// Every field but the node.
    fn hash_rest<H: Hasher>(&self, h: &mut H) {
        self.durable.term.hash(h);
        self.durable.voted_for.hash(h);
        self.clock.hash(h);
        self.runs.hash(h);
        self.confirm.hash(h);
        self.notices.hash(h);
    }
}

/// History the properties need and the nodes do not keep (ghost variables of the checker).
#[derive(Clone, Debug, Default, Hash)]
pub struct Ghost {
    /// S1: the first leader of each term, `(term, node)`, sorted.
    pub term_leader: Vec<(u64, u8)>,
    /// One vote per term: `(voter, term, candidate)` from granted `VoteReply`s put on the wire and
    /// self-votes carried out as `Persist`, sorted.
    pub votes: Vec<(u8, u64, u8)>,
    /// Fencing: the highest token of any leadership begun so far (what a fencing checker has seen).
    pub fence_max: u64,
    /// Lease: `(term, first real instant past the lease, holder)` for every lease a leader
    /// reported while its clock had not passed it, the latest per term, sorted.
    pub lease: Vec<(u64, u64, u8)>,
    /// Each node's current leadership: `(term, real instant it began)`.
    pub leading: [Option<(u64, u64)>; 4],
    /// Check-quorum evidence: `heard[leader][peer]` = the real send instant of the newest
    /// heartbeat of `leader`'s that `peer` acknowledged and `leader` accepted in its term.
    pub heard: [[u64; 4]; 4],
    /// Each node's newest campaign: `(term, real instant it asked for votes)`. The votes it wins
    /// are check-quorum evidence dated then, as the core dates them.
    pub campaign: [(u64, u64); 4],
    /// Each node's view size and the real instant it last changed.
    pub view: [(usize, u64); 4],
    /// S1 and the lease hold while every view keeps its members (a `terminated` report or a
    /// `leave` ends their scope, as in SPEC).
    pub s1_scope: bool,
    /// A leader preempted (sent a `TimeoutNow` of its own) on this path.
    pub preempted: bool,
}

/// A violated property: its name and what happened.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct Broken {
    /// The property's name (see [`props::NAMES`]).
    pub name: &'static str,
    /// A readable explanation.
    pub why: String,
}

/// One state of the model.
#[derive(Clone, Debug)]
pub struct State {
    /// Real time, whole milliseconds.
    pub now: u64,
    /// One host per node.
    pub hosts: Vec<Host>,
    /// Datagrams in flight, sorted (a multiset).
    pub net: Vec<Dgram>,
    /// Every datagram a member sent so far, sorted and deduplicated (the adversary replays any).
    pub seen: Vec<Dgram>,
    /// Fault budgets left on this path.
    pub left: Budget,
    /// The checker's history.
    pub ghost: Ghost,
    /// The node cut off by a partition, if any.
    pub cut: Option<u8>,
    /// The first property this state breaks, if any (no action leaves a broken state).
    pub broken: Option<Broken>,
}

impl Hash for State {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.hash_with(&self.hosts, h);
    }
}

impl State {
    /// A 64-bit fingerprint of the whole state (the nodes by their `Debug` rendering, see
    /// [`ByDebug`]).
    pub fn fingerprint(&self) -> u64 {
        let mut h = DefaultHasher::new();
        let hosts: Vec<ByDebug> = self.hosts.iter().map(ByDebug).collect();
        self.hash_with(&hosts, &mut h);
        h.finish()
    }

    /// Hashes the state with `hosts` standing for [`State::hosts`].
    fn hash_with<T: Hash, H: Hasher>(&self, hosts: &[T], h: &mut H) {
        self.now.hash(h);
        hosts.hash(h);
        self.net.hash(h);
        self.seen.hash(h);
        self.left.hash(h);
        self.ghost.hash(h);
        self.cut.hash(h);
        self.broken.hash(h);
    }
}

impl PartialEq for State {
    fn eq(&self, other: &Self) -> bool {
        self.fingerprint() == other.fingerprint()
    }
}

/// The index of member id `id`, or [`OUTSIDER`].
pub fn index_of(id: &str) -> u8 {
    IDS.iter().position(|i| *i == id).map_or(OUTSIDER, |i| i as u8)
}

/// What one model-checking run found.
#[derive(Debug)]
pub struct Report {
    /// Distinct states generated (stateright's count: the states one action past the depth bound
    /// included, which are generated but not checked).
    pub states: usize,
    /// States whose properties were checked (every distinct state within the depth bound).
    pub checked: usize,
    /// States generated, repeats included.
    pub generated: usize,
    /// The deepest path explored.
    pub depth: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// The first counterexample: the property, its readable trace, the scenario files written.
    pub violation: Option<(String, String, Vec<tenure_sim::scenario::Scenario>)>,
    /// Whether some explored state had a leader (the bound reaches elections at all).
    pub elected: bool,
    /// Whether some explored state followed a preemption (the bound reaches one at all).
    pub preempted: bool,
}

/// Checks `opts` to `depth` (depth-first unless `bfs`) on `threads` threads, stopping at the
/// first counterexample, and turns it into a trace and scenarios labelled `label`.
pub fn check(opts: Opts, depth: usize, threads: usize, bfs: bool, label: &str) -> Report {
    check_for(opts, depth, threads, bfs, label, None, None)
}

/// [`check`], stopping after `limit` if given, or once `max_generated` states were generated
/// (repeats included; default for injected-bug runs: [`BUG_STATE_CAP`]); the report then covers
/// what was explored.
pub fn check_for(
    opts: Opts,
    depth: usize,
    threads: usize,
    bfs: bool,
    label: &str,
    limit: Option<std::time::Duration>,
    max_generated: Option<usize>,
) -> Report {
    use stateright::{Checker, HasDiscoveries, Model};
    let model = model::TenureModel::new(opts);
    let t = std::time::Instant::now();
    // stateright numbers an initial state's depth 1 and checks no state at or past its target
    // depth (it only generates them): every path of `depth` actions ends at depth `depth + 1`.
    let mut builder =
        model.clone().checker().threads(threads).target_max_depth(depth + 2).finish_when(HasDiscoveries::AnyFailures);
    if let Some(limit) = limit {
        builder = builder.timeout(limit);
    }
    let cap = max_generated.or((!model.opts.bugs.is_empty()).then_some(BUG_STATE_CAP));
    if let Some(cap) = cap {
        builder = builder.target_state_count(cap);
    }
    let (states, generated, max_depth, discoveries) = if bfs {
        let c = builder.spawn_bfs().join();
        (c.unique_state_count(), c.state_count(), c.max_depth(), c.discoveries())
    } else {
        let c = builder.spawn_dfs().join();
        (c.unique_state_count(), c.state_count(), c.max_depth(), c.discoveries())
    };
    let seconds = t.elapsed().as_secs_f64();
    let checked = model.checked.load(std::sync::atomic::Ordering::Relaxed);
    // The deepest checked path, in actions.
    let max_depth = max_depth.min(depth + 1).saturating_sub(1);
    let elected = discoveries.contains_key(props::ELECTED);
    let preempted = discoveries.contains_key(props::PREEMPTED);
    // The `sometimes` properties only show what the bound reaches: every other is a violation.
    let reached = [props::ELECTED, props::PREEMPTED];
    let violation = discoveries.into_iter().find(|(n, _)| !reached.contains(n)).map(|(name, path)| {
        let steps = path.into_vec();
        let init_fp = steps[0].0.fingerprint();
        let init = model.inits().iter().position(|s| s.fingerprint() == init_fp).unwrap_or(0);
        let actions: Vec<model::Action> = steps.into_iter().filter_map(|(_, a)| a).collect();
        let (mut text, rec, last) = trace::rerun(&model, init, &actions);
        if name == "liveness" && last.broken.is_none() {
            let why = props::probe(&model.opts, &last).err().unwrap_or_default();
            text.push_str(&format!("VIOLATED liveness: {why}\n"));
        }
        let scenarios = trace::scenarios(&model.opts, &rec, label);
        (name.to_string(), text, scenarios)
    });
    Report { states, checked, generated, depth: max_depth, seconds, violation, elected, preempted }
}

impl Budget {
    /// Spends one near-maximum-term heartbeat: from [`Budget::huge_term`] while it lasts, else
    /// from [`Budget::adversary`].
    pub fn spend_huge_term(&mut self) {
        if self.huge_term > 0 {
            self.huge_term -= 1;
        } else {
            self.adversary -= 1;
        }
    }
}
