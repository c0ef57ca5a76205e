//! Five component instances over an in-memory network with a simulated clock: they elect, lose
//! the leader and re-elect, split by a partition (only the majority side leads) and heal, and
//! never two of them lead the same term.

use std::collections::{BTreeMap, BTreeSet};

use tenure_component_host::{default_node_config, ComponentNode, Loader, NodeConfig, Record, Recorder, Role};

const LATENCY_MS: u64 = 2;

struct Sim {
    loader: Loader<Recorder>,
    nodes: BTreeMap<String, ComponentNode<Recorder>>,
    wakeups: BTreeMap<String, Option<u64>>,
    in_flight: Vec<(u64, String, String, Vec<u8>)>,
    /// When set, messages only flow inside one group.
    partition: Option<Vec<BTreeSet<String>>>,
    leaders_by_term: BTreeMap<u64, String>,
    now: u64,
}

fn config(id: &str, ids: &[String], seed: u64) -> NodeConfig {
    NodeConfig { durable: true, key: Some(b"sim-key".to_vec()), ..default_node_config(id, "component-sim", ids, seed) }
}

impl Sim {
    fn new(n: usize) -> Sim {
        let loader = loader();
        let ids: Vec<String> = (1..=n).map(|i| format!("n{i}")).collect();
        let mut sim = Sim {
            loader,
            nodes: BTreeMap::new(),
            wakeups: BTreeMap::new(),
            in_flight: Vec::new(),
            partition: None,
            leaders_by_term: BTreeMap::new(),
            now: 0,
        };
        for (i, id) in ids.iter().enumerate() {
            let node = ComponentNode::new(&sim.loader, Recorder::default(), &config(id, &ids, 40 + i as u64), 0)
                .expect("no trap")
                .expect("valid config");
            sim.nodes.insert(id.clone(), node);
            sim.collect(id);
        }
        sim
    }

    fn connected(&self, a: &str, b: &str) -> bool {
        match &self.partition {
            None => true,
            Some(groups) => groups.iter().any(|g| g.contains(a) && g.contains(b)),
        }
    }

    /// Moves what node `id` asked for out of its recorder.
    fn collect(&mut self, id: &str) {
        let Some(node) = self.nodes.get_mut(id) else { return };
        let records = std::mem::take(&mut node.callbacks_mut().records);
        for r in records {
            match r {
                Record::Send { to, bytes } => self.in_flight.push((self.now + LATENCY_MS, id.to_string(), to, bytes)),
                Record::SetWakeup(d) => {
                    self.wakeups.insert(id.to_string(), d);
                }
                Record::BecameLeader(term) => {
                    if let Some(other) = self.leaders_by_term.insert(term, id.to_string()) {
                        assert_eq!(other, id, "two leaders in term {term}");
                    }
                }
                _ => {}
            }
        }
    }

    fn run_until(&mut self, until: u64) {
        loop {
            let next_msg = self.in_flight.iter().map(|m| m.0).min();
            let next_timer = self.wakeups.values().flatten().copied().min();
            let next = [next_msg, next_timer].into_iter().flatten().min();
            match next {
                Some(t) if t <= until => self.now = self.now.max(t),
                _ => {
                    self.now = until;
                    return;
                }
            }
            let now = self.now;
            let (due, rest): (Vec<_>, Vec<_>) = self.in_flight.drain(..).partition(|m| m.0 <= now);
            self.in_flight = rest;
            for (_, from, to, bytes) in due {
                if !self.connected(&from, &to) {
                    continue;
                }
                if let Some(node) = self.nodes.get_mut(&to) {
                    node.handle_message(now, &from, &bytes).expect("no trap").expect("valid message");
                    self.collect(&to);
                }
            }
            let due: Vec<String> =
                self.wakeups.iter().filter(|(_, d)| d.is_some_and(|d| d <= now)).map(|(k, _)| k.clone()).collect();
            for id in due {
                self.wakeups.insert(id.clone(), None);
                if let Some(node) = self.nodes.get_mut(&id) {
                    node.handle_timeout(now).expect("no trap");
                    self.collect(&id);
                }
            }
        }
    }

    fn kill(&mut self, id: &str) {
        self.nodes.remove(id);
        self.wakeups.remove(id);
    }

    fn leaders(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        for (id, node) in self.nodes.iter_mut() {
            if node.is_leader().expect("no trap") {
                out.push(id.clone());
            }
        }
        out
    }

    /// Runs in 10 ms steps until `pred` holds; returns the time it took.
    fn wait_for(&mut self, limit_ms: u64, mut pred: impl FnMut(&mut Sim) -> bool) -> u64 {
        let start = self.now;
        while self.now - start < limit_ms {
            if pred(self) {
                return self.now - start;
            }
            let t = self.now + 10;
            self.run_until(t);
        }
        panic!("condition not reached within {limit_ms} ms (leaders: {:?})", self.leaders());
    }
}

/// The component, compiled once for every test in this file.
fn loader() -> Loader<Recorder> {
    static LOADER: std::sync::OnceLock<Loader<Recorder>> = std::sync::OnceLock::new();
    LOADER.get_or_init(|| Loader::built().expect("the component compiles")).clone()
}

#[test]
fn five_components_elect_fail_over_partition_and_heal() {
    let mut sim = Sim::new(5);

    // Elect: exactly one leader, and every other node follows it in its term.
    sim.wait_for(2_000, |s| s.leaders().len() == 1);
    sim.run_until(sim.now + 200);
    let leaders = sim.leaders();
    assert_eq!(leaders.len(), 1);
    let first = leaders[0].clone();
    let term = sim.nodes.get_mut(&first).unwrap().term().unwrap();
    for (id, node) in sim.nodes.iter_mut() {
        assert_eq!(node.term().unwrap(), term, "{id} is in another term");
        assert_eq!(node.leader().unwrap().as_deref(), Some(first.as_str()), "{id} follows someone else");
        let expected = if *id == first { Role::Leader } else { Role::Follower };
        assert_eq!(node.role().unwrap(), expected);
    }
    let inspect = sim.nodes.get_mut(&first).unwrap().inspect().unwrap();
    assert_eq!((inspect.view_size, inspect.quorum, inspect.state), (5, 3, Role::Leader));
    assert!(inspect.is_leader);

    // Kill the leader: the others elect a new one, in a later term, within
    // election_timeout_max (300 ms) plus a few round trips.
    sim.kill(&first);
    let took = sim.wait_for(2_000, |s| s.leaders().len() == 1);
    assert!(took <= 300 + 100, "failover took {took} ms");
    eprintln!("simulated failover after the leader died: {took} ms (10 ms resolution)");
    let second = sim.leaders()[0].clone();
    assert_ne!(second, first);
    let term2 = sim.nodes.get_mut(&second).unwrap().term().unwrap();
    assert!(term2 > term);

    // Partition {leader, one other} | {the other two}: with four alive and a view of five, the
    // majority needs three, so nobody may lead on either side; the old leader steps down
    // (check quorum).
    let alive: Vec<String> = sim.nodes.keys().cloned().collect();
    let side_a: BTreeSet<String> = alive
        .iter()
        .filter(|id| **id == second)
        .cloned()
        .chain(alive.iter().find(|id| **id != second).cloned())
        .collect();
    let side_b: BTreeSet<String> = alive.iter().filter(|id| !side_a.contains(*id)).cloned().collect();
    sim.partition = Some(vec![side_a.clone(), side_b.clone()]);
    sim.wait_for(2_000, |s| s.leaders().is_empty());
    sim.run_until(sim.now + 1_500);
    assert!(sim.leaders().is_empty(), "a minority side leads: {:?}", sim.leaders());

    // Heal: one leader again, which every alive node follows.
    sim.partition = None;
    sim.wait_for(3_000, |s| s.leaders().len() == 1);
    sim.run_until(sim.now + 300);
    let leaders = sim.leaders();
    assert_eq!(leaders.len(), 1);
    let healed = leaders[0].clone();
    let t = sim.nodes.get_mut(&healed).unwrap().term().unwrap();
    for (id, node) in sim.nodes.iter_mut() {
        assert_eq!(node.term().unwrap(), t, "{id}");
        assert_eq!(node.leader().unwrap().as_deref(), Some(healed.as_str()), "{id}");
    }
    // Every term had at most one leader (checked on every became-leader), and there were some.
    assert!(sim.leaders_by_term.len() >= 2);
}

#[test]
fn majority_side_of_a_partition_keeps_a_leader() {
    let mut sim = Sim::new(5);
    sim.wait_for(2_000, |s| s.leaders().len() == 1);
    let leader = sim.leaders()[0].clone();
    // Cut the leader off with one follower: the other three elect among themselves.
    let ids: Vec<String> = sim.nodes.keys().cloned().collect();
    let buddy = ids.iter().find(|id| **id != leader).unwrap().clone();
    let minority: BTreeSet<String> = [leader.clone(), buddy].into_iter().collect();
    let majority: BTreeSet<String> = ids.iter().filter(|id| !minority.contains(*id)).cloned().collect();
    sim.partition = Some(vec![minority.clone(), majority.clone()]);
    sim.wait_for(2_000, |s| {
        let l = s.leaders();
        l.len() == 1 && majority.contains(&l[0])
    });
    sim.run_until(sim.now + 1_000);
    let l = sim.leaders();
    assert_eq!(l.len(), 1);
    assert!(majority.contains(&l[0]));
    // After healing, the old leader follows the majority's leader (pre-vote keeps the minority
    // from deposing it).
    sim.partition = None;
    sim.run_until(sim.now + 1_000);
    let l = sim.leaders();
    assert_eq!(l.len(), 1);
    assert!(majority.contains(&l[0]));
    let lid = l[0].clone();
    assert_eq!(sim.nodes.get_mut(&leader).unwrap().leader().unwrap(), Some(lid));
}

/// The guest's allocator (talc) reuses what it frees: once a cluster is in its steady state
/// (a leader's heartbeat rounds, followers' answers), ten more simulated minutes of it do not grow
/// any instance's linear memory.
#[test]
fn steady_state_does_not_grow_linear_memory() {
    let mut sim = Sim::new(3);
    sim.wait_for(2_000, |s| s.leaders().len() == 1);
    sim.run_until(sim.now + 60_000);
    let warm: Vec<usize> = sim.nodes.values().map(ComponentNode::memory_bytes).collect();
    assert!(warm.iter().all(|&m| m > 0), "the limiter saw every instance's memory: {warm:?}");
    for node in sim.nodes.values_mut() {
        node.inspect().expect("no trap");
    }
    sim.run_until(sim.now + 600_000);
    for node in sim.nodes.values_mut() {
        node.inspect().expect("no trap");
        node.view().expect("no trap");
    }
    assert_eq!(sim.leaders().len(), 1);
    let after: Vec<usize> = sim.nodes.values().map(ComponentNode::memory_bytes).collect();
    assert_eq!(warm, after, "linear memory grew in the steady state");
}
