//! The simulated cluster: nodes, network, clock, faults, host behaviour.

use std::cmp::Ordering;
use std::collections::{BTreeSet, BinaryHeap, VecDeque};
use std::fmt::Write as _;

use tenure::wire::{self, Envelope, Message};
use tenure::{Bug, Config, DurableState, Event, Node, Output, PeerDownReason, Role};

use crate::check::{Checker, Violation};
use crate::clock::Clock;
use crate::rng::Rng;
use crate::scenario::{apply_input, output_json, ConfigJson, FinalJson, Input, RestoredJson, Scenario, Step};

/// How many log lines a failing run prints.
pub const LOG_TAIL: usize = 300;

/// The simulated network between every pair of nodes.
#[derive(Debug, Clone)]
pub struct NetConfig {
    /// Round-trip time: one-way latency is drawn from `[rtt/4, 3·rtt/4]` (rounded up), mean rtt/2.
    pub rtt_ms: u64,
    /// Probability that a datagram is lost.
    pub loss: f64,
    /// Probability that a datagram is delivered twice (the copy with its own latency).
    pub duplicate: f64,
    /// Probability that a datagram is held back by up to `2·rtt + 20` ms extra (reordering).
    pub reorder: f64,
    /// Probability that a datagram gets one more copy delivered up to [`LATE_DUPLICATE_MS`] late
    /// (a very late duplicate: the network equivalent of a replay).
    pub late_duplicate: f64,
}

/// The longest delay of a late duplicate ([`NetConfig::late_duplicate`]).
pub const LATE_DUPLICATE_MS: u64 = 10_000;

impl NetConfig {
    /// A clean network with this round-trip time.
    pub fn rtt(rtt_ms: u64) -> NetConfig {
        NetConfig { rtt_ms, loss: 0.0, duplicate: 0.0, reorder: 0.0, late_duplicate: 0.0 }
    }
    /// The largest one-way latency without reordering.
    pub fn max_one_way(&self) -> u64 {
        (3 * self.rtt_ms).div_ceil(4)
    }
}

/// What a simulated host does when its node asks it something.
#[derive(Debug, Clone, Default)]
pub struct HostPolicy {
    /// Probability of denying a `ConfirmLeader`.
    pub deny_confirm: f64,
    /// Deny this many upcoming confirmations.
    pub deny_next: u32,
    /// Never answer confirmations (the core treats the silence as a denial).
    pub ignore_confirm: bool,
    /// Probability that an answer to a confirmation comes late (a slow check in the gate).
    pub slow_confirm: f64,
    /// How late a slow answer comes, at most (uniform in `1..=confirm_delay_max` ms).
    pub confirm_delay_max: u64,
    /// Probability that the became-leader handler fails (`leader_handler_failed`).
    pub fail_handler: f64,
    /// Fail this many upcoming became-leader handlers.
    pub fail_next: u32,
}

/// One simulated host and its node.
#[derive(Debug)]
pub struct SimNode {
    /// The node id.
    pub id: String,
    /// Its configuration (used again on restart).
    pub config: Config,
    /// The running node, `None` while crashed.
    pub node: Option<Node>,
    /// The last `Output::Persist` the node emitted (what a host's state file holds).
    pub durable: Option<DurableState>,
    /// Paused (a GC-like stall) until this instant.
    pub paused_until: Option<u64>,
    /// How the host answers.
    pub policy: HostPolicy,
    /// Bugs switched on in every incarnation.
    pub bugs: Vec<Bug>,
    /// Incarnation counter (0 for the first start).
    pub incarnation: u32,
    /// Every event, with its time (kept only when [`Sim::keep_events`] is on).
    pub events: Vec<(u64, Event)>,
    /// The host's clock (drifts within ±ρ when the run says so; survives restarts).
    pub clock: Clock,
    /// Crash point: the node crashes after its host has carried out this many outputs of the next
    /// input (0: before the first), e.g. between a `Persist` and the sends after it.
    pub crash_after: Option<usize>,
    /// What this run's watchdog holds (with [`Sim::watchdogs`] on): the death notices of its
    /// newest leadership, re-armed after every input while it leads.
    pub armed: Option<Armed>,
}

/// A watchdog's arming: the death notices the core gave while leading ([`Node::death_notices`]).
#[derive(Debug, Clone)]
pub struct Armed {
    /// The term they end.
    pub term: u64,
    /// The leadership ended and the host disarms the watchdog at this instant (the runtime does
    /// so right after the core steps down; a crash before it sends the notices of a leadership
    /// that already ended).
    pub disarm_at: Option<u64>,
    /// (receiver, datagram).
    pub notices: Vec<(String, Vec<u8>)>,
}

impl SimNode {
    /// Up (not crashed) and not paused.
    pub fn is_running(&self) -> bool {
        self.node.is_some() && self.paused_until.is_none()
    }
}

#[derive(Debug, PartialEq, Eq)]
struct Flight {
    at: u64,
    seq: u64,
    from: String,
    to: String,
    bytes: Vec<u8>,
}

impl Ord for Flight {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse for earliest first.
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}
impl PartialOrd for Flight {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A recording of one node incarnation's inputs and outputs (a scenario in the making).
#[derive(Debug, Clone)]
pub struct Recording {
    /// Node id.
    pub id: String,
    /// Incarnation.
    pub incarnation: u32,
    /// The scenario (name and description empty until chosen).
    pub scenario: Scenario,
}

/// The simulated cluster.
pub struct Sim {
    /// The run's seed.
    pub seed: u64,
    /// The simulated clock, in ms.
    pub now: u64,
    /// The simulator's PRNG (network and host decisions).
    pub rng: Rng,
    /// The network parameters.
    pub net: NetConfig,
    /// The hosts.
    pub nodes: Vec<SimNode>,
    /// Directed links that drop everything.
    pub blocked: BTreeSet<(String, String)>,
    /// The invariant checker.
    pub checker: Checker,
    /// Keep every event per node (tests and the demo).
    pub keep_events: bool,
    /// Record every node's inputs/outputs as scenario steps.
    pub record: bool,
    /// Finished and running recordings.
    pub recordings: Vec<Recording>,
    /// Print log lines as they happen (the demo).
    pub echo: bool,
    /// Log every delivery and timer (off: only events, faults and drops).
    pub verbose_log: bool,
    flights: BinaryHeap<Flight>,
    seq: u64,
    log: VecDeque<String>,
    violation: Option<Violation>,
    same_instant: u32,
    /// Datagrams sent, delivered.
    pub stats: (u64, u64),
    /// Every datagram sent `(at, from, to, message kind)` (kept only with `keep_events`).
    pub sent_log: Vec<(u64, String, String, &'static str)>,
    /// A recorder on the wire: the last [`Sim::recorder_cap`] datagrams sent `(from, to, bytes)`
    /// (an adversary replays them; off when the cap is 0).
    pub recorder: VecDeque<(String, String, Vec<u8>)>,
    /// How many datagrams the recorder keeps (0: off).
    pub recorder_cap: usize,
    /// Fake ids that grant every `PreVote` and `Vote` they see on the wire.
    pub fake_voters: Vec<String>,
    /// The last incarnation and term each sender used on the wire.
    pub last_sent: std::collections::BTreeMap<String, (u64, u64)>,
    /// Host answers given later (a slow confirmation): (real instant, node index, incarnation).
    answers: Vec<(u64, usize, u32, Input)>,
    /// Each run of a node speaks only the oldest wire version with probability ½ (see
    /// [`Sim::mix_versions`]).
    mixed_versions: bool,
    /// Every node runs a watchdog that outlives it: when a node's process dies (a crash, a crash
    /// point) while its watchdog is armed, the watchdog sends the armed death notices from its
    /// address, 0–2 ms later, through the same network (loss, duplicates, reordering, partitions).
    pub watchdogs: bool,
    /// Probability that a crash kills the watchdog with the node (a container kill): nothing sent.
    pub watchdog_dies_with_node: f64,
    /// The longest lag between a leadership's end and the host disarming the watchdog.
    pub disarm_lag_ms: u64,
    /// Every death notice a watchdog sent `(from, to, bytes)`: an adversary replays them later
    /// (older terms, older incarnations).
    pub sent_notices: Vec<(String, String, Vec<u8>)>,
    /// The gate check: the incarnation of the last message each node accepted from each peer,
    /// `(receiver, sender) → incarnation`, kept while versions are mixed.
    pub(crate) heard_runs: std::collections::BTreeMap<(String, String), u64>,
    /// The incarnations of the runs that speak only the oldest wire version.
    pub(crate) old_runs: BTreeSet<u64>,
}

impl Sim {
    /// An empty simulation.
    pub fn new(seed: u64, net: NetConfig) -> Sim {
        Sim {
            seed,
            now: 0,
            rng: Rng::new(seed),
            net,
            nodes: Vec::new(),
            blocked: BTreeSet::new(),
            checker: Checker::default(),
            keep_events: false,
            record: false,
            recordings: Vec::new(),
            echo: false,
            verbose_log: true,
            mixed_versions: false,
            flights: BinaryHeap::new(),
            seq: 0,
            log: VecDeque::new(),
            violation: None,
            same_instant: 0,
            stats: (0, 0),
            sent_log: Vec::new(),
            recorder: VecDeque::new(),
            recorder_cap: 0,
            fake_voters: Vec::new(),
            last_sent: std::collections::BTreeMap::new(),
            answers: Vec::new(),
            watchdogs: false,
            watchdog_dies_with_node: 0.0,
            disarm_lag_ms: 0,
            sent_notices: Vec::new(),
            heard_runs: std::collections::BTreeMap::new(),
            old_runs: BTreeSet::new(),
        }
    }

    /// A cluster of `n` nodes `n1..nN`, all bootstrapped with the full list; `tweak` adjusts each
    /// configuration.
    pub fn cluster(seed: u64, n: usize, net: NetConfig, tweak: impl Fn(Config) -> Config) -> Sim {
        Sim::cluster_with_clocks(seed, n, net, tweak, |_| Clock::exact())
    }

    /// [`Sim::cluster`] with a clock per host (`clock(i)` for the `i`-th node, from 0).
    pub fn cluster_with_clocks(
        seed: u64,
        n: usize,
        net: NetConfig,
        tweak: impl Fn(Config) -> Config,
        mut clock: impl FnMut(usize) -> Clock,
    ) -> Sim {
        let mut sim = Sim::new(seed, net);
        let ids: Vec<String> = (1..=n).map(|i| format!("n{i}")).collect();
        for (i, id) in ids.iter().enumerate() {
            sim.add_node_with_clock(tweak(Config::new(id.clone(), "sim").bootstrap(ids.iter().cloned())), clock(i));
        }
        sim
    }

    /// Adds and starts observer `id` of the members `n1`..`n{members}` (`tweak` as for them; the
    /// members must list it, `Config::observer_peers`), on a host with this clock.
    pub fn add_observer(&mut self, id: &str, members: usize, tweak: impl Fn(Config) -> Config, clock: Clock) -> usize {
        let ids: Vec<String> = (1..=members).map(|i| format!("n{i}")).collect();
        self.checker.observers.insert(id.to_string());
        self.add_node_with_clock(tweak(Config::new(id, "sim").bootstrap(ids)).observer(true), clock)
    }

    /// Adds and starts a node now. Panics on an invalid configuration (a test bug).
    pub fn add_node(&mut self, config: Config) -> usize {
        self.add_node_with_clock(config, Clock::exact())
    }

    /// Adds and starts a node now, on a host with this clock.
    pub fn add_node_with_clock(&mut self, config: Config, clock: Clock) -> usize {
        let idx = self.nodes.len();
        self.nodes.push(SimNode {
            id: config.id.clone(),
            config,
            node: None,
            durable: None,
            paused_until: None,
            policy: HostPolicy::default(),
            bugs: Vec::new(),
            incarnation: 0,
            events: Vec::new(),
            clock,
            crash_after: None,
            armed: None,
        });
        self.start(idx, None);
        idx
    }

    /// Mixes wire versions from now on: each run of a node (those running now, and every start
    /// and restart) speaks only the oldest version (v0.1.0's) when its seed says so, one in two,
    /// so that restarts upgrade and downgrade members at random.
    pub fn mix_versions(&mut self) {
        self.mixed_versions = true;
        for idx in 0..self.nodes.len() {
            let seed = self.node_seed(idx, self.nodes[idx].incarnation);
            let member = !self.nodes[idx].config.observer;
            if let (true, true, Some(n)) = (member, Self::old_version(seed), self.nodes[idx].node.as_mut()) {
                n.limit_wire_version(tenure::wire::MIN_VERSION);
                self.old_runs.insert(n.incarnation());
            }
        }
    }

    /// Whether node `id` runs now, limited to the oldest wire version (a v0.1.0 node).
    pub fn runs_oldest(&self, id: &str) -> bool {
        self.nodes[self.idx(id)].node.as_ref().is_some_and(|n| self.old_runs.contains(&n.incarnation()))
    }

    fn old_version(seed: u64) -> bool {
        seed >> 63 == 1
    }

    fn node_seed(&self, idx: usize, incarnation: u32) -> u64 {
        let mut r = Rng::new(self.seed ^ ((idx as u64) << 32) ^ u64::from(incarnation).wrapping_mul(0x9E37_79B9));
        r.next_u64()
    }

    fn start(&mut self, idx: usize, restored: Option<DurableState>) {
        let seed = self.node_seed(idx, self.nodes[idx].incarnation);
        let config = self.nodes[idx].config.clone();
        let local_now = self.nodes[idx].clock.local(self.now);
        let mut node = Node::new(config.clone(), seed, restored.clone(), local_now).expect("valid simulator config");
        for b in &self.nodes[idx].bugs {
            node.inject_bug(*b);
        }
        // Observers are a version 4 notion: none runs an older version.
        if self.mixed_versions && !config.observer && Self::old_version(seed) {
            node.limit_wire_version(tenure::wire::MIN_VERSION);
            self.old_runs.insert(node.incarnation());
        }
        // A new run: its watchdog starts disarmed.
        self.nodes[idx].armed = None;
        if self.record {
            let id = config.id.clone();
            self.recordings.push(Recording {
                id,
                incarnation: self.nodes[idx].incarnation,
                scenario: Scenario {
                    name: String::new(),
                    description: String::new(),
                    config: ConfigJson::from_config(&config),
                    seed,
                    restored: restored.as_ref().map(|r| RestoredJson { term: r.term, voted_for: r.voted_for.clone() }),
                    start_ms: local_now,
                    steps: Vec::new(),
                    final_state: FinalJson::of(&node),
                },
            });
        }
        self.nodes[idx].node = Some(node);
        self.nodes[idx].paused_until = None;
        let role = self.nodes[idx].node.as_ref().map(|n| n.role().as_str()).unwrap_or("");
        let id = self.nodes[idx].id.clone();
        self.logf(format_args!("{id} starts ({role})"));
        self.checker.on_start(&id, restored.as_ref());
        self.after_step();
    }

    /// Switches a bug on for a node, now and after restarts.
    pub fn inject(&mut self, id: &str, bug: Bug) {
        let idx = self.idx(id);
        self.nodes[idx].bugs.push(bug);
        if let Some(n) = &mut self.nodes[idx].node {
            n.inject_bug(bug);
        }
    }

    /// The index of a node id. Panics on an unknown id (a test bug).
    pub fn idx(&self, id: &str) -> usize {
        self.nodes.iter().position(|n| n.id == id).unwrap_or_else(|| panic!("no simulated node {id:?}"))
    }

    /// The node (must be up).
    pub fn node(&self, id: &str) -> &Node {
        self.nodes[self.idx(id)].node.as_ref().unwrap_or_else(|| panic!("{id} is down"))
    }

    /// The host (up or down).
    pub fn host(&mut self, id: &str) -> &mut SimNode {
        let i = self.idx(id);
        &mut self.nodes[i]
    }

    // ----- log ------------------------------------------------------------------------------

    /// Appends a line to the event log.
    pub fn logf(&mut self, args: std::fmt::Arguments<'_>) {
        let mut line = String::with_capacity(64);
        let _ = write!(line, "{:>7} ms  ", self.now);
        let _ = line.write_fmt(args);
        if self.echo {
            println!("{line}");
        }
        if self.log.len() >= LOG_TAIL {
            self.log.pop_front();
        }
        self.log.push_back(line);
    }

    /// The last log lines.
    pub fn log_tail(&self) -> Vec<String> {
        self.log.iter().cloned().collect()
    }

    /// The first violation found, if any.
    pub fn violation(&self) -> Option<&Violation> {
        self.violation.as_ref()
    }

    /// What a datagram sent to `to` says, for the log.
    fn describe(&self, to: &str, bytes: &[u8]) -> String {
        match wire::decode(bytes, self.auth(to)) {
            Ok(env) => describe_env(&env),
            Err(_) => format!("{} bytes", bytes.len()),
        }
    }

    /// The cluster key (when the run has one) and `receiver`: what decodes a datagram sent there.
    fn auth<'a>(&'a self, receiver: &'a str) -> Option<wire::Auth<'a>> {
        let key = self.nodes.first().and_then(|n| n.config.key.as_deref())?;
        Some(wire::Auth { key, receiver })
    }

    // ----- inputs ---------------------------------------------------------------------------

    /// Gives an input to a node now (it must be up), drains its outputs, lets its host react,
    /// and checks the invariants. Returns the input's result code.
    pub fn call(&mut self, id: &str, input: Input) -> Result<(), &'static str> {
        let idx = self.idx(id);
        self.apply(idx, input)
    }

    fn apply(&mut self, idx: usize, input: Input) -> Result<(), &'static str> {
        let now = self.now;
        let local_now = self.nodes[idx].clock.local(now);
        let Some(node) = self.nodes[idx].node.as_mut() else { return Err("down") };
        let role_before = node.role();
        let term_before = node.term();
        let result = apply_input(node, local_now, &input);
        let role_after = node.role();
        let leader_after = node.leader().map(str::to_string);
        let mut outputs = Vec::new();
        while let Some(o) = node.poll_output() {
            outputs.push(o);
        }
        let next_deadline = node.poll_timeout();
        let id = self.nodes[idx].id.clone();
        if let (Input::Message { from, bytes }, Ok(()), true) = (&input, result, self.mixed_versions) {
            if let Ok(env) = wire::decode(bytes, self.auth(&id)) {
                self.heard_runs.insert((id.clone(), from.clone()), env.incarnation);
            }
        }
        if let Input::Message { from, bytes } = &input {
            // S4's quorum evidence: an accepted acknowledgement, in the leader's term, of a heartbeat
            // this leader sent, dated when that heartbeat left (a late or replayed ack is old
            // evidence, not fresh).
            // A granted vote of its term received while campaigning is evidence too, dated when
            // the campaign asked for it.
            let campaigning = role_before == Role::Candidate;
            if result.is_ok() && (role_after == Role::Leader || campaigning) {
                let term = self.nodes[idx].node.as_ref().map_or(0, Node::term);
                if let Ok(env) = wire::decode(bytes, self.auth(&id)) {
                    match (&env.message, env.term == term) {
                        (Message::HeartbeatAck { echo }, true) if role_after == Role::Leader => {
                            let sent = self.nodes[idx].clock.real_at(*echo).min(now);
                            self.checker.on_evidence(sent, &id, from);
                        }
                        (Message::VoteReply { granted: true }, true) if campaigning && term == term_before => {
                            self.checker.on_vote_evidence(&id, term, from);
                        }
                        _ => {}
                    }
                }
            }
            if self.verbose_log || result.is_err() {
                let what = self.describe(&id, bytes);
                match result {
                    Ok(()) => self.logf(format_args!("{id} <- {from}: {what}")),
                    Err(code) => self.logf(format_args!("{id} <- {from}: {what} DROPPED ({code})")),
                }
            }
        } else if !matches!(input, Input::Timeout) || self.verbose_log {
            let r = match result {
                Ok(()) => "ok".to_string(),
                Err(c) => c.to_string(),
            };
            self.logf(format_args!("{id} input {input:?} -> {r}", input = ShortInput(&input)));
        }
        if self.record {
            let incarnation = self.nodes[idx].incarnation;
            if let Some(rec) = self.recordings.iter_mut().rev().find(|r| r.id == id && r.incarnation == incarnation) {
                rec.scenario.steps.push(Step {
                    at: local_now,
                    input: input.to_json(),
                    result: result.map_or_else(|c| c.to_string(), |()| "ok".to_string()),
                    outputs: outputs.iter().map(output_json).collect(),
                    next_deadline,
                });
                if let Some(n) = self.nodes[idx].node.as_ref() {
                    rec.scenario.final_state = FinalJson::of(n);
                }
            }
        }
        // Every transition into follower, and every loss of leadership, is announced with
        // `BecameFollower` naming the leader known (or none); every win with `BecameLeader`.
        let follower_events: Vec<&Option<String>> = outputs
            .iter()
            .filter_map(|o| match o {
                Output::Event(Event::BecameFollower { leader, .. }) => Some(leader),
                _ => None,
            })
            .collect();
        let leader_event = outputs.iter().any(|o| matches!(o, Output::Event(Event::BecameLeader { .. })));
        if role_before != role_after {
            let into_follower = role_after == Role::Follower;
            let demoted = role_before == Role::Leader;
            if (into_follower || demoted) && follower_events.last().is_none_or(|l| **l != leader_after) {
                self.fail(
                    "events",
                    format!("{id} went from {role_before:?} to {role_after:?} (leader {leader_after:?}) but announced {follower_events:?}"),
                );
            }
            if role_after == Role::Leader && !leader_event {
                self.fail("events", format!("{id} became leader without a BecameLeader event"));
            }
        }
        if let (Input::Transfer(_), Ok(())) = (&input, result) {
            self.checker.on_transfer(term_before, now);
        }
        if matches!(input, Input::Timeout) && role_before == Role::Leader && role_after != Role::Leader {
            // A preemption: the core hands leadership over by a transfer of its own (a
            // `TimeoutNow` on the wire, and no longer leading), which ends the lease as one the
            // host asked for does.
            let handed = outputs.iter().any(|o| match o {
                Output::Send { to, bytes } => {
                    wire::decode(bytes, self.auth(to)).is_ok_and(|e| e.message == Message::TimeoutNow)
                }
                _ => false,
            });
            if handed {
                self.checker.on_transfer(term_before, now);
            }
        }
        if leader_event && self.nodes[idx].config.never_lead {
            self.fail("witness", format!("{id} leads, but it is a witness (never_lead)"));
        }
        let mut reactions = Vec::new();
        // The host carries the outputs out one at a time, in order; a crash point can stop it
        // between any two (the rest are lost with the process).
        let crash_after = self.nodes[idx].crash_after.take();
        for (done, o) in outputs.into_iter().enumerate() {
            if crash_after.is_some_and(|k| done >= k) {
                self.logf(format_args!("{id} CRASHES after carrying out {done} output(s)"));
                self.watchdog_fires(idx);
                self.nodes[idx].node = None;
                self.nodes[idx].paused_until = None;
                reactions.clear();
                break;
            }
            match o {
                Output::Persist(s) => {
                    self.checker.on_persist(&id, &s);
                    self.nodes[idx].durable = Some(s);
                }
                Output::Send { to, bytes } => self.send(&id, to, bytes),
                Output::Event(e) => {
                    self.logf(format_args!("{id} EVENT {}", describe_event(&e)));
                    if let Some(r) = self.host_reaction(idx, &e) {
                        reactions.push(r);
                    }
                    if let Some((invariant, detail)) = self.checker.on_event(&id, &e, self.nodes[idx].node.as_ref()) {
                        self.fail(invariant, detail);
                    }
                    if self.keep_events {
                        self.nodes[idx].events.push((now, e));
                    }
                }
            }
        }
        self.arm(idx);
        self.after_step();
        for r in reactions {
            if self.nodes[idx].node.is_none() {
                break;
            }
            let _ = self.apply(idx, r);
        }
        result
    }

    fn host_reaction(&mut self, idx: usize, e: &Event) -> Option<Input> {
        match e {
            Event::ConfirmLeader { term } => {
                let p = &mut self.nodes[idx].policy;
                if p.ignore_confirm {
                    return None;
                }
                let deny = if p.deny_next > 0 {
                    p.deny_next -= 1;
                    true
                } else {
                    let chance = p.deny_confirm;
                    self.rng.chance(chance)
                };
                let (slow, max) = (p.slow_confirm, p.confirm_delay_max);
                let answer = Input::Confirm { term: *term, granted: !deny };
                if max > 0 && self.rng.chance(slow) {
                    let at = self.now + self.rng.range(1, max);
                    let incarnation = self.nodes[idx].incarnation;
                    let id = self.nodes[idx].id.clone();
                    self.logf(format_args!("{id}'s host answers confirm_leader(term {term}) late, at {at} ms"));
                    self.answers.push((at, idx, incarnation, answer));
                    return None;
                }
                Some(answer)
            }
            Event::BecameLeader { term } => {
                let p = &mut self.nodes[idx].policy;
                let fail = if p.fail_next > 0 {
                    p.fail_next -= 1;
                    true
                } else {
                    let chance = p.fail_handler;
                    self.rng.chance(chance)
                };
                fail.then_some(Input::LeaderFailed(*term))
            }
            _ => None,
        }
    }

    fn send(&mut self, from: &str, to: String, bytes: Vec<u8>) {
        self.send_after(0, true, from, to, bytes)
    }

    /// [`Sim::send`], leaving `extra` ms from now; `by_node`: the node's own output (checked
    /// against the wire-version gate here; a watchdog's notices were checked when armed).
    pub(crate) fn send_after(&mut self, extra: u64, by_node: bool, from: &str, to: String, bytes: Vec<u8>) {
        self.stats.0 += 1;
        if let Ok(env) = wire::decode(&bytes, self.auth(&to)) {
            if let Some((invariant, detail)) = self.checker.on_send(self.now, from, &to, &env) {
                self.fail(invariant, detail);
            }
            let newer = bytes.get(2).is_some_and(|v| *v > wire::MIN_VERSION);
            if by_node && newer && !matches!(env.message, Message::Hello { .. }) {
                self.gate(from, &to, env.message.kind());
            }
            if self.keep_events {
                self.sent_log.push((self.now, from.to_string(), to.clone(), env.message.kind()));
            }
            self.last_sent.insert(from.to_string(), (env.incarnation, env.term));
            if !self.fake_voters.is_empty() {
                match env.message {
                    Message::Vote { .. } => self.fake_votes(from, env.term, Message::VoteReply { granted: true }),
                    Message::PreVote => self.fake_votes(from, env.term, Message::PreVoteReply { granted: true }),
                    _ => {}
                }
            }
        }
        if self.recorder_cap > 0 {
            if self.recorder.len() >= self.recorder_cap {
                self.recorder.pop_front();
            }
            self.recorder.push_back((from.to_string(), to.clone(), bytes.clone()));
        }
        if self.blocked.contains(&(from.to_string(), to.clone())) {
            if self.verbose_log {
                let what = self.describe(&to, &bytes);
                self.logf(format_args!("{from} -> {to}: {what} (blocked)"));
            }
            return;
        }
        if self.rng.chance(self.net.loss) {
            if self.verbose_log {
                let what = self.describe(&to, &bytes);
                self.logf(format_args!("{from} -> {to}: {what} (lost)"));
            }
            return;
        }
        let copies = if self.rng.chance(self.net.duplicate) { 2 } else { 1 };
        for _ in 0..copies {
            let mut lat = extra + self.rng.range(self.net.rtt_ms / 4, self.net.max_one_way());
            if self.rng.chance(self.net.reorder) {
                lat += self.rng.range(1, 2 * self.net.rtt_ms + 20);
            }
            self.seq += 1;
            self.flights.push(Flight {
                at: self.now + lat,
                seq: self.seq,
                from: from.to_string(),
                to: to.clone(),
                bytes: bytes.clone(),
            });
        }
        if self.rng.chance(self.net.late_duplicate) {
            let lat = self.rng.range(1, LATE_DUPLICATE_MS);
            self.seq += 1;
            self.flights.push(Flight { at: self.now + lat, seq: self.seq, from: from.to_string(), to, bytes });
        }
    }

    /// Each fake voter answers a `PreVote` or `Vote` of `term` from `candidate` with a grant.
    fn fake_votes(&mut self, candidate: &str, term: u64, message: Message) {
        for fake in self.fake_voters.clone() {
            let env = Envelope {
                cluster: self.nodes[0].config.cluster.clone(),
                from: fake.clone(),
                term,
                incarnation: 1,
                message: message.clone(),
            };
            let Ok(bytes) = wire::encode(&env, self.auth(candidate)) else { continue };
            // Counted as sent (S1-view checks the counting, S1 the outcome).
            let _ = self.checker.on_send(self.now, &fake, candidate, &env);
            let lat = self.rng.range(self.net.rtt_ms / 4, self.net.max_one_way());
            self.seq += 1;
            self.flights.push(Flight {
                at: self.now + lat,
                seq: self.seq,
                from: fake,
                to: candidate.to_string(),
                bytes,
            });
        }
    }

    /// Delivers `bytes` to `to` as if `from` had sent them, after `delay` ms (an adversary on the
    /// network: forged, recorded or replayed datagrams).
    pub fn inject_later(&mut self, delay: u64, from: &str, to: &str, bytes: Vec<u8>) {
        self.seq += 1;
        self.flights.push(Flight {
            at: self.now + delay,
            seq: self.seq,
            from: from.to_string(),
            to: to.to_string(),
            bytes,
        });
    }

    /// Injects raw bytes into a node as if `from` had sent them (hostile or foreign input).
    pub fn inject_message(&mut self, to: &str, from: &str, bytes: Vec<u8>) -> Result<(), &'static str> {
        self.call(to, Input::Message { from: from.to_string(), bytes })
    }

    fn after_step(&mut self) {
        if self.violation.is_some() {
            return;
        }
        let mut ck = std::mem::take(&mut self.checker);
        let found = ck
            .after_step(self.now, &self.nodes)
            .or_else(|| ck.lease_after_step(self.now, &self.nodes))
            .or_else(|| ck.observers_after_step(&self.nodes));
        self.checker = ck;
        if let Some((invariant, detail)) = found {
            self.fail(invariant, detail);
        }
    }

    /// Records a violation (the first one wins) with the log tail.
    pub fn fail(&mut self, invariant: &'static str, detail: String) {
        if self.violation.is_some() {
            return;
        }
        self.logf(format_args!("VIOLATION {invariant}: {detail}"));
        self.violation = Some(Violation { seed: self.seed, at: self.now, invariant, detail, log: self.log_tail() });
    }

    // ----- the clock ------------------------------------------------------------------------

    /// The next instant something happens, if any.
    fn next_event(&self) -> Option<u64> {
        let mut next = self.flights.peek().map(|f| f.at);
        if let Some(t) = self.answers.iter().map(|a| a.0.max(self.now)).min() {
            next = Some(next.map_or(t, |x| x.min(t)));
        }
        for n in &self.nodes {
            let t = match (&n.node, n.paused_until) {
                (None, _) => None,
                (Some(_), Some(p)) => Some(p),
                (Some(node), None) => node.poll_timeout().map(|d| n.clock.real_at(d)),
            };
            if let Some(t) = t {
                let t = t.max(self.now);
                next = Some(next.map_or(t, |x: u64| x.min(t)));
            }
        }
        next
    }

    /// Processes one instant's worth of work if the next event is at or before `limit`; returns
    /// false (and moves the clock to `limit`) otherwise.
    pub fn step(&mut self, limit: u64) -> bool {
        let Some(t) = self.next_event().filter(|t| *t <= limit) else {
            self.now = self.now.max(limit);
            return false;
        };
        if t == self.now {
            self.same_instant += 1;
            if self.same_instant > 100_000 {
                self.fail("L1", format!("livelock: more than 100000 steps at {t} ms"));
                return false;
            }
        } else {
            self.same_instant = 0;
        }
        self.now = t;
        // Timers and resumptions first (a resumed node handles its overdue timers before the
        // datagrams that queued up while it was stalled, as a real host's event loop would).
        for idx in 0..self.nodes.len() {
            let n = &self.nodes[idx];
            let Some(node) = &n.node else { continue };
            if let Some(p) = n.paused_until {
                if p <= t {
                    self.nodes[idx].paused_until = None;
                    let id = self.nodes[idx].id.clone();
                    self.logf(format_args!("{id} resumes"));
                    let _ = self.apply(idx, Input::Timeout);
                }
                continue;
            }
            if node.poll_timeout().is_some_and(|d| d <= n.clock.local(t)) {
                let _ = self.apply(idx, Input::Timeout);
            }
        }
        // Late host answers, to the incarnation that asked (a paused host answers when it runs).
        let mut k = 0;
        while k < self.answers.len() {
            if self.answers[k].0 > t {
                k += 1;
                continue;
            }
            let (_, idx, incarnation, input) = self.answers.swap_remove(k);
            let n = &self.nodes[idx];
            if n.incarnation != incarnation || n.node.is_none() {
                continue;
            }
            if let Some(p) = n.paused_until {
                self.answers.push((p, idx, incarnation, input));
                continue;
            }
            let _ = self.apply(idx, input);
        }
        while self.flights.peek().is_some_and(|f| f.at <= t) {
            let f = self.flights.pop().expect("peeked");
            let Some(idx) = self.nodes.iter().position(|n| n.id == f.to) else { continue };
            let n = &self.nodes[idx];
            if n.node.is_none() {
                if self.verbose_log {
                    let what = self.describe(&f.to, &f.bytes);
                    self.logf(format_args!("{} -> {}: {what} (receiver down)", f.from, f.to));
                }
                continue;
            }
            if let Some(p) = n.paused_until {
                // Queued in the socket buffer until the stall ends.
                self.seq += 1;
                self.flights.push(Flight { at: p, seq: self.seq, ..f });
                continue;
            }
            self.stats.1 += 1;
            let _ = self.apply(idx, Input::Message { from: f.from, bytes: f.bytes });
        }
        true
    }

    /// Runs until `until` (inclusive) or a violation.
    pub fn run_until(&mut self, until: u64) -> Result<(), Violation> {
        while self.violation.is_none() && self.step(until) {}
        match &self.violation {
            Some(v) => Err(v.clone()),
            None => Ok(()),
        }
    }

    /// Runs for `ms` more milliseconds.
    pub fn run_for(&mut self, ms: u64) -> Result<(), Violation> {
        self.run_until(self.now + ms)
    }

    /// Runs until `cond` holds (checked after every instant) or `deadline`; returns when it held.
    pub fn run_until_cond(&mut self, deadline: u64, cond: impl Fn(&Sim) -> bool) -> Result<Option<u64>, Violation> {
        loop {
            if let Some(v) = &self.violation {
                return Err(v.clone());
            }
            if cond(self) {
                return Ok(Some(self.now));
            }
            if !self.step(deadline) {
                return Ok(cond(self).then_some(self.now));
            }
        }
    }

    // ----- queries --------------------------------------------------------------------------

    /// Ids of the running nodes that are leaders.
    pub fn leaders(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter(|n| n.is_running() && n.node.as_ref().is_some_and(Node::is_leader))
            .map(|n| n.id.clone())
            .collect()
    }

    /// The single leader among running nodes, if exactly one.
    pub fn leader(&self) -> Option<String> {
        let l = self.leaders();
        (l.len() == 1).then(|| l[0].clone())
    }

    /// True when exactly one running node leads and every running node that `can_reach` it
    /// (in both directions) is in its term and follows it.
    pub fn converged(&self) -> bool {
        let Some(l) = self.leader() else { return false };
        let lt = self.node(&l).term();
        // A leader of wire version 3 (v0.1.0's) knows no observers: they need not follow it.
        let old = self.old_runs.contains(&self.node(&l).incarnation());
        let counted = |n: &&SimNode| !(old && n.config.observer);
        self.nodes.iter().filter(|n| n.is_running() && self.connected(&n.id, &l)).filter(counted).all(|n| {
            let node = n.node.as_ref().expect("running");
            node.term() == lt && node.leader() == Some(l.as_str())
        })
    }

    /// Whether datagrams flow both ways between two nodes.
    pub fn connected(&self, a: &str, b: &str) -> bool {
        a == b
            || (!self.blocked.contains(&(a.to_string(), b.to_string()))
                && !self.blocked.contains(&(b.to_string(), a.to_string())))
    }

    /// Role of a node (`None` while down).
    pub fn role(&self, id: &str) -> Option<Role> {
        self.nodes[self.idx(id)].node.as_ref().map(Node::role)
    }

    /// The recording of the current (or last) incarnation of `id`.
    pub fn recording(&self, id: &str) -> Option<&Recording> {
        self.recordings.iter().rev().find(|r| r.id == id)
    }

    // ----- faults ---------------------------------------------------------------------------

    /// Crashes a node silently: its state is gone (except what it persisted), nothing is sent
    /// (but by its watchdog, when armed: see [`Sim::watchdogs`]).
    pub fn crash(&mut self, id: &str) {
        let idx = self.idx(id);
        if self.nodes[idx].node.is_some() {
            self.watchdog_fires(idx);
        }
        self.nodes[idx].node = None;
        self.nodes[idx].paused_until = None;
        self.logf(format_args!("{id} CRASHES"));
        self.after_step();
    }

    /// Restarts a crashed node, with its last persisted state or without any.
    pub fn restart(&mut self, id: &str, with_durable_state: bool) {
        let idx = self.idx(id);
        if self.nodes[idx].node.is_some() {
            self.crash(id);
        }
        self.nodes[idx].incarnation += 1;
        let restored = if with_durable_state { self.nodes[idx].durable.clone() } else { None };
        if !with_durable_state || !self.nodes[idx].config.durable {
            self.checker.forget_durable(id);
            self.nodes[idx].durable = None;
        }
        self.logf(format_args!(
            "{id} RESTARTS {}",
            if with_durable_state { "with its durable state" } else { "WITHOUT durable state" }
        ));
        self.start(idx, restored);
    }

    /// Stalls a node for `ms`: it handles nothing, and then finds its clock jumped.
    pub fn pause(&mut self, id: &str, ms: u64) {
        let idx = self.idx(id);
        if self.nodes[idx].node.is_some() {
            self.nodes[idx].paused_until = Some(self.now + ms);
            self.logf(format_args!("{id} PAUSES for {ms} ms"));
        }
    }

    /// Blocks the directed link `from → to`.
    pub fn block(&mut self, from: &str, to: &str) {
        self.blocked.insert((from.to_string(), to.to_string()));
        self.logf(format_args!("link {from} -> {to} BLOCKED"));
    }

    /// Splits the cluster into groups that cannot talk to each other (both directions).
    pub fn partition(&mut self, groups: &[Vec<String>]) {
        for (i, g) in groups.iter().enumerate() {
            for (j, h) in groups.iter().enumerate() {
                if i != j {
                    for a in g {
                        for b in h {
                            self.blocked.insert((a.clone(), b.clone()));
                        }
                    }
                }
            }
        }
        self.logf(format_args!("PARTITION {groups:?}"));
    }

    /// Isolates one node from every other (both directions).
    pub fn isolate(&mut self, id: &str) {
        let others: Vec<String> = self.nodes.iter().filter(|n| n.id != id).map(|n| n.id.clone()).collect();
        self.partition(&[vec![id.to_string()], others]);
    }

    /// Removes every partition.
    pub fn heal(&mut self) {
        self.blocked.clear();
        self.logf(format_args!("network HEALED"));
    }

    /// The network becomes stable (global stabilisation time, GST): what is still in flight is
    /// delivered within `max_one_way` ms from now or not at all, as the partial-synchrony model
    /// behind the liveness bound L1 assumes (a late duplicate of the chaos phase arriving seconds
    /// after the heal is the chaos phase, not a stable network). Hostile datagrams with a term no
    /// member could have sent are dropped: an adversary stops at GST too. This holds when every
    /// node is down at GST as well: a replay queued in the chaos phase must not land seconds
    /// later on nodes restarted without durable state, whose terms went back below it.
    pub fn stabilise_in_flight(&mut self, max_one_way: u64) {
        let max = self.nodes.iter().filter_map(|n| n.node.as_ref().map(|x| x.term())).max().unwrap_or(0);
        // Only the purge of hostile terms needs a running node (to decode); the deadline does not.
        let decoder = self.nodes.iter().find_map(|n| n.node.as_ref());
        let before = self.flights.len();
        let hostile = |f: &Flight| {
            decoder.is_some_and(|d| matches!(d.decode_message(&f.bytes), Ok(env) if env.term > max.saturating_add(1)))
        };
        let by = self.now + max_one_way;
        let mut delayed = 0;
        let kept: Vec<Flight> = std::mem::take(&mut self.flights)
            .into_iter()
            .filter(|f| !hostile(f))
            .map(|mut f| {
                if f.at > by {
                    f.at = by;
                    delayed += 1;
                }
                f
            })
            .collect();
        self.flights = kept.into_iter().collect();
        let purged = before - self.flights.len();
        if purged > 0 || delayed > 0 {
            self.logf(format_args!(
                "GST: purged {purged} hostile datagrams in flight, {delayed} late ones now arrive by {by} ms"
            ));
        }
    }

    /// Reports `peer` down to every running node except itself.
    pub fn report_down(&mut self, peer: &str, reason: PeerDownReason) {
        let ids: Vec<String> =
            self.nodes.iter().filter(|n| n.node.is_some() && n.id != peer).map(|n| n.id.clone()).collect();
        for id in ids {
            let _ = self.call(&id, Input::PeerDown(peer.to_string(), reason));
        }
    }
}

struct ShortInput<'a>(&'a Input);

impl std::fmt::Debug for ShortInput<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Input::Timeout => write!(f, "timeout"),
            Input::Message { from, bytes } => write!(f, "message from {from} ({} bytes)", bytes.len()),
            Input::Join(p) => write!(f, "join({p})"),
            Input::Leave(p) => write!(f, "leave({p})"),
            Input::PeerDown(p, r) => write!(f, "peer_down({p}, {})", crate::scenario::reason_str(*r)),
            Input::Confirm { term, granted } => write!(f, "confirm_leader(term {term}, {granted})"),
            Input::LeaderFailed(t) => write!(f, "leader_handler_failed(term {t})"),
            Input::Transfer(p) => write!(f, "transfer_leadership({p})"),
            Input::Broadcast(b) => write!(f, "broadcast({} bytes)", b.len()),
            Input::Proclaim(v) => write!(f, "proclaim({} bytes)", v.len()),
        }
    }
}

/// A one-line description of a decoded message.
pub fn describe_env(env: &Envelope) -> String {
    let t = env.term;
    match &env.message {
        Message::PreVote => format!("pre_vote(term {t})"),
        Message::PreVoteReply { granted } => format!("pre_vote_reply(term {t}, {})", yes(*granted)),
        Message::Vote { transfer } => format!("vote(term {t}{})", if *transfer { ", transfer" } else { "" }),
        Message::VoteReply { granted } => format!("vote_reply(term {t}, {})", yes(*granted)),
        Message::Heartbeat { sent_at } => format!("heartbeat(term {t}, sent_at {sent_at})"),
        Message::HeartbeatAck { echo } => format!("heartbeat_ack(term {t}, echo {echo})"),
        Message::TimeoutNow => format!("timeout_now(term {t})"),
        Message::App { seq, payload } => format!("app(term {t}, seq {seq}, {} bytes)", payload.len()),
        Message::Hello { version, reply } => {
            format!("hello(term {t}, version {version}{})", if *reply { ", reply" } else { "" })
        }
        Message::DeathNotice => format!("death_notice(term {t}, incarnation {})", env.incarnation),
        Message::Value { seq, value } => format!("value(term {t}, seq {seq}, {} bytes)", value.len()),
        Message::ValueAck { seq } => format!("value_ack(term {t}, seq {seq})"),
        Message::Priority { priority, never_lead, reply } => format!(
            "priority(term {t}, {priority}{}{})",
            if *never_lead { ", never_lead" } else { "" },
            if *reply { ", reply" } else { "" }
        ),
        Message::Observe { seq } => format!("observe(term {t}, seq {seq})"),
    }
}

fn yes(b: bool) -> &'static str {
    if b {
        "granted"
    } else {
        "refused"
    }
}

/// A one-line description of an event.
pub fn describe_event(e: &Event) -> String {
    match e {
        Event::BecameLeader { term } => format!("became_leader(term {term})"),
        Event::BecameFollower { term, leader } => {
            format!("became_follower(term {term}, leader {})", leader.as_deref().unwrap_or("none"))
        }
        Event::PeerJoined { peer } => format!("peer_joined({peer})"),
        Event::PeerLeft { peer } => format!("peer_left({peer})"),
        Event::ConfirmLeader { term } => format!("confirm_leader(term {term})"),
        Event::Message { from, payload } => format!("message(from {from}, {} bytes)", payload.len()),
    }
}
