//! The simulator and one failover trial.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use tenure::{Config, Event, Node, Output, PeerDownReason};

/// SplitMix64: small, seedable, good enough for delays and choices.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `[lo, hi]`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            lo
        } else {
            lo + self.next_u64() % (hi - lo + 1)
        }
    }
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Deliver { from: usize, to: usize, bytes: Vec<u8> },
    Timer { node: usize },
    PeerDown { to: usize, peer: usize },
}

/// A leadership won: when (µs), by whom, in which term.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Won {
    /// Simulated time in microseconds.
    pub at_us: u64,
    /// Node index.
    pub node: usize,
    /// The term led.
    pub term: u64,
}

/// Real tenure nodes over a simulated network.
pub struct Sim {
    /// Simulated time in microseconds.
    pub now_us: u64,
    /// Node ids.
    pub ids: Vec<String>,
    /// The nodes; `None` once crashed.
    pub nodes: Vec<Option<Node>>,
    index: HashMap<String, usize>,
    queue: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
    /// The timer currently queued for each node (ms deadline), to avoid duplicates.
    scheduled: Vec<Option<u64>>,
    rng: Rng,
    rtt_us: u64,
    /// Messages handed to the network.
    pub messages_sent: u64,
    /// Every leadership won, in order.
    pub won: Vec<Won>,
    /// Count messages by kind (costs a decode per message; for the scale run only).
    pub count_kinds: bool,
    /// Messages sent, by kind (when `count_kinds`).
    pub kinds: HashMap<&'static str, u64>,
}

/// Node ids shaped like the UDP runtimes'.
pub fn node_id(i: usize) -> String {
    format!("10.0.{}.{}:7000", i / 250, i % 250 + 1)
}

impl Sim {
    /// `n` nodes with default timing, bootstrapped with each other, seeded from `seed`.
    pub fn new(n: usize, rtt_us: u64, seed: u64, min_cluster_size: u32) -> Sim {
        let ids: Vec<String> = (0..n).map(node_id).collect();
        let mut rng = Rng::new(seed);
        let nodes = ids
            .iter()
            .map(|id| {
                // Room for the 1,000-node cluster (the default cap is 64 peers).
                let c = Config::new(id.clone(), "bench")
                    .bootstrap(ids.iter().cloned())
                    .min_cluster_size(min_cluster_size)
                    .max_peers(u32::try_from(n).unwrap_or(u32::MAX));
                Some(Node::new(c, rng.next_u64(), None, 0).expect("valid config"))
            })
            .collect();
        let index = ids.iter().enumerate().map(|(i, id)| (id.clone(), i)).collect();
        let mut sim = Sim {
            now_us: 0,
            ids,
            nodes,
            index,
            queue: BinaryHeap::new(),
            seq: 0,
            scheduled: vec![None; n],
            rng,
            rtt_us,
            messages_sent: 0,
            won: Vec::new(),
            count_kinds: false,
            kinds: HashMap::new(),
        };
        for i in 0..n {
            sim.reschedule(i);
        }
        sim
    }

    fn push(&mut self, at_us: u64, ev: Ev) {
        self.seq += 1;
        self.queue.push(Reverse((at_us, self.seq, ev)));
    }

    /// One-way delay: half the round trip, ±20 % uniform jitter.
    fn one_way(&mut self) -> u64 {
        let half = self.rtt_us / 2;
        self.rng.range(half - half / 5, half + half / 5)
    }

    fn now_ms(&self) -> u64 {
        self.now_us / 1000
    }

    fn reschedule(&mut self, i: usize) {
        let deadline = self.nodes[i].as_ref().and_then(|n| n.poll_timeout());
        if deadline != self.scheduled[i] {
            self.scheduled[i] = deadline;
            if let Some(d) = deadline {
                let at = (d * 1000).max(self.now_us);
                self.push(at, Ev::Timer { node: i });
            }
        }
    }

    /// Drains node `i`'s outputs: sends go on the wire, confirmations are granted at once,
    /// leaderships are recorded.
    fn drain(&mut self, i: usize) {
        let now_ms = self.now_ms();
        loop {
            let Some(node) = self.nodes[i].as_mut() else { return };
            let Some(out) = node.poll_output() else { break };
            match out {
                Output::Send { to, bytes } => {
                    let Some(&j) = self.index.get(&to) else { continue };
                    self.messages_sent += 1;
                    if self.count_kinds {
                        if let Ok(env) = tenure::wire::decode(&bytes, None) {
                            *self.kinds.entry(env.message.kind()).or_default() += 1;
                        }
                    }
                    let at = self.now_us + self.one_way();
                    self.push(at, Ev::Deliver { from: i, to: j, bytes });
                }
                Output::Event(Event::ConfirmLeader { term }) => {
                    node.confirm_leader(now_ms, term, true).expect("pending confirmation");
                }
                Output::Event(Event::BecameLeader { term }) => {
                    self.won.push(Won { at_us: self.now_us, node: i, term });
                }
                _ => {}
            }
        }
        self.reschedule(i);
    }

    /// Processes the next event; `false` when nothing is queued before `limit_us`.
    pub fn step(&mut self, limit_us: u64) -> bool {
        match self.queue.peek() {
            Some(Reverse((at, _, _))) if *at <= limit_us => {}
            _ => return false,
        }
        let Reverse((at, _, ev)) = self.queue.pop().expect("peeked");
        self.now_us = self.now_us.max(at);
        let now_ms = self.now_ms();
        match ev {
            Ev::Deliver { from, to, bytes } => {
                let from_id = &self.ids[from];
                if let Some(node) = self.nodes[to].as_mut() {
                    let _ = node.handle_message(now_ms, from_id, &bytes);
                    self.drain(to);
                }
            }
            Ev::Timer { node } => {
                let due = self.scheduled[node].is_some_and(|d| d <= now_ms);
                if due {
                    self.scheduled[node] = None;
                    if let Some(n) = self.nodes[node].as_mut() {
                        n.handle_timeout(now_ms);
                        self.drain(node);
                    }
                }
            }
            Ev::PeerDown { to, peer } => {
                let peer_id = self.ids[peer].clone();
                if let Some(n) = self.nodes[to].as_mut() {
                    let _ = n.peer_down(now_ms, &peer_id, PeerDownReason::Terminated);
                    self.drain(to);
                }
            }
        }
        true
    }

    /// Runs until `cond` holds (checked after every event) or `deadline_us`; returns whether it held.
    pub fn run_until(&mut self, deadline_us: u64, mut cond: impl FnMut(&Sim) -> bool) -> bool {
        loop {
            if cond(self) {
                return true;
            }
            if !self.step(deadline_us) {
                self.now_us = self.now_us.max(deadline_us);
                return cond(self);
            }
        }
    }

    /// The single running leader, if exactly one node leads.
    pub fn leader(&self) -> Option<usize> {
        let mut it = (0..self.nodes.len()).filter(|&i| self.nodes[i].as_ref().is_some_and(|n| n.is_leader()));
        let first = it.next()?;
        it.next().is_none().then_some(first)
    }

    /// Crashes node `i` silently: it stops, and messages to it vanish.
    pub fn crash(&mut self, i: usize) {
        self.nodes[i] = None;
        self.scheduled[i] = None;
    }

    /// Crashes node `i` and has every survivor's host report it terminated, one one-way delay
    /// later (as a closed connection would).
    pub fn crash_reported(&mut self, i: usize) {
        self.crash(i);
        for j in 0..self.nodes.len() {
            if self.nodes[j].is_some() {
                let at = self.now_us + self.one_way();
                self.push(at, Ev::PeerDown { to: j, peer: i });
            }
        }
    }

    /// The leader hands leadership to node `to`.
    pub fn transfer(&mut self, from: usize, to: usize) {
        let now_ms = self.now_ms();
        let target = self.ids[to].clone();
        self.nodes[from].as_mut().expect("running").transfer_leadership(now_ms, &target).expect("leader");
        self.drain(from);
    }

    /// Random choice helper.
    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    /// Whether no term was led by two nodes.
    pub fn one_leader_per_term(&self) -> bool {
        let mut by_term: HashMap<u64, usize> = HashMap::new();
        self.won.iter().all(|w| *by_term.entry(w.term).or_insert(w.node) == w.node)
    }
}

/// The fault injected into a steady cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// The leader stops; nobody is told.
    SilentCrash,
    /// The leader stops and every survivor's host reports `peer_down(leader, terminated)`.
    ReportedDeath,
    /// The leader calls `transfer_leadership` to a random follower.
    Transfer,
}

impl Fault {
    /// All three, in report order.
    pub const ALL: [Fault; 3] = [Fault::SilentCrash, Fault::ReportedDeath, Fault::Transfer];
    /// Stable name.
    pub fn name(self) -> &'static str {
        match self {
            Fault::SilentCrash => "silent crash",
            Fault::ReportedDeath => "reported death",
            Fault::Transfer => "graceful transfer",
        }
    }
}

/// One trial's parameters.
#[derive(Debug, Clone, Copy)]
pub struct TrialSetup {
    /// Cluster size.
    pub nodes: usize,
    /// Round trip in microseconds.
    pub rtt_us: u64,
    /// The fault.
    pub fault: Fault,
    /// `min_cluster_size` (default 3).
    pub min_cluster_size: u32,
}

/// Outcome of one trial, times in microseconds.
#[derive(Debug, Clone, Copy)]
pub struct TrialResult {
    /// From start to the first leader.
    pub cold_start_us: u64,
    /// From the fault to the next leader (`None`: none within 10 s).
    pub leaderless_us: Option<u64>,
    /// Terms the failover took (1: the first election after the fault won; more: split votes
    /// or refused campaigns cost extra rounds).
    pub terms: u64,
    /// Whether every term had at most one leader.
    pub safe: bool,
}

/// Elects a leader from cold, waits a random fraction of a second, injects the fault, and
/// measures how long the cluster has no leader.
pub fn trial(setup: TrialSetup, seed: u64) -> TrialResult {
    let mut sim = Sim::new(setup.nodes, setup.rtt_us, seed, setup.min_cluster_size);
    let elected = sim.run_until(10_000_000, |s| !s.won.is_empty());
    assert!(elected, "no leader from cold within 10 s (seed {seed})");
    let cold_start_us = sim.won[0].at_us;
    // Let the leadership settle, then strike at a random phase of the heartbeat cycle.
    let wait = 100_000 + sim.rng().range(0, 100_000);
    let until = sim.now_us + wait;
    sim.run_until(until, |_| false);
    let leader = sim.leader().expect("a steady leader");
    let old_term = sim.nodes[leader].as_ref().expect("running").term();
    let t0 = sim.now_us;
    match setup.fault {
        Fault::SilentCrash => sim.crash(leader),
        Fault::ReportedDeath => sim.crash_reported(leader),
        Fault::Transfer => {
            let k = sim.rng().range(1, setup.nodes as u64 - 1) as usize;
            sim.transfer(leader, (leader + k) % setup.nodes);
        }
    }
    let seen = sim.won.len();
    let found = sim.run_until(t0 + 10_000_000, |s| s.won[seen..].iter().any(|w| w.term > old_term));
    let next = found.then(|| *sim.won[seen..].iter().find(|w| w.term > old_term).expect("found"));
    TrialResult {
        cold_start_us,
        leaderless_us: next.map(|w| w.at_us - t0),
        terms: next.map_or(0, |w| w.term - old_term),
        safe: sim.one_leader_per_term(),
    }
}

/// Result of electing a large cluster from cold.
#[derive(Debug, Clone)]
pub struct LargeElection {
    /// Cluster size.
    pub nodes: usize,
    /// Time to the first leader (µs).
    pub elected_us: u64,
    /// Time until every node follows that leader (µs), if within 5 s.
    pub all_follow_us: Option<u64>,
    /// Messages sent until the first leader.
    pub messages_to_elect: u64,
    /// Messages by kind until the first leader.
    pub kinds: Vec<(&'static str, u64)>,
    /// Wall-clock time the simulation took (ms).
    pub wall_ms: u128,
}

/// Elects a cluster of `n` nodes from cold (round trip `rtt_us`) and counts the cost.
pub fn elect_large(n: usize, rtt_us: u64, seed: u64) -> LargeElection {
    let started = std::time::Instant::now();
    let mut sim = Sim::new(n, rtt_us, seed, 3);
    sim.count_kinds = true;
    assert!(sim.run_until(60_000_000, |s| !s.won.is_empty()), "a large cluster elects");
    let w = sim.won[0];
    let messages_to_elect = sim.messages_sent;
    let mut kinds: Vec<_> = sim.kinds.iter().map(|(k, v)| (*k, *v)).collect();
    kinds.sort();
    sim.count_kinds = false;
    let leader_id = sim.ids[w.node].clone();
    let mut all_follow_us = None;
    let deadline = w.at_us + 5_000_000;
    // Check between heartbeat rounds (a scan of every node is O(n)).
    while sim.now_us < deadline {
        let next = sim.now_us + 5_000;
        sim.run_until(next, |_| false);
        if sim.nodes.iter().flatten().all(|node| node.leader() == Some(leader_id.as_str())) {
            all_follow_us = Some(sim.now_us);
            break;
        }
    }
    LargeElection {
        nodes: n,
        elected_us: w.at_us,
        all_follow_us,
        messages_to_elect,
        kinds,
        wall_ms: started.elapsed().as_millis(),
    }
}
