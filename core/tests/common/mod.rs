//! A minimal in-memory harness for the rule tests: a fixed 1 ms link, a simulated clock, and
//! switches to cut links or silence nodes. The full fault simulator lives in `tests/sim`.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use tenure::{Config, DurableState, Event, Node, Output};

pub const LATENCY: u64 = 1;

pub struct Harness {
    pub nodes: BTreeMap<String, Node>,
    pub now: u64,
    /// (deliver_at, from, to, bytes)
    pub in_flight: Vec<(u64, String, String, Vec<u8>)>,
    /// Crashed or paused nodes: they neither receive nor time out.
    pub down: BTreeSet<String>,
    /// Directed links that drop everything (from, to).
    pub cut: BTreeSet<(String, String)>,
    /// Nodes whose host denies confirm-leader.
    pub deny: BTreeSet<String>,
    /// Every event, with when and where.
    pub events: Vec<(u64, String, Event)>,
    /// Last persisted state per node.
    pub persisted: BTreeMap<String, DurableState>,
    /// Every datagram sent (sent_at, from, to, bytes): what a recorder on the wire sees.
    pub wire: Vec<(u64, String, String, Vec<u8>)>,
    /// Nodes that stand for a node speaking only the oldest wire version (v0.1.0's): a datagram
    /// of a newer version to one is dropped (its decoder drops it as `unknown_version`), and one
    /// sends none (an old node has no such message).
    pub old: BTreeSet<String>,
}

pub fn ids(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("n{i}")).collect()
}

impl Harness {
    pub fn new(n: usize) -> Harness {
        Harness::with(n, |c| c)
    }

    pub fn with(n: usize, tweak: impl Fn(Config) -> Config) -> Harness {
        let all = ids(n);
        let mut nodes = BTreeMap::new();
        for (i, id) in all.iter().enumerate() {
            let config = tweak(Config::new(id.clone(), "test").bootstrap(all.iter().cloned()));
            nodes.insert(id.clone(), Node::new(config, 100 + i as u64, None, 0).expect("valid config"));
        }
        Harness {
            nodes,
            now: 0,
            in_flight: Vec::new(),
            down: BTreeSet::new(),
            cut: BTreeSet::new(),
            deny: BTreeSet::new(),
            events: Vec::new(),
            persisted: BTreeMap::new(),
            wire: Vec::new(),
            old: BTreeSet::new(),
        }
    }

    pub fn node(&mut self, id: &str) -> &mut Node {
        self.nodes.get_mut(id).expect("known node")
    }

    pub fn drain(&mut self, id: &str) {
        let now = self.now;
        let deny = self.deny.contains(id);
        while let Some(out) = self.node(id).poll_output() {
            match out {
                Output::Send { to, bytes } => {
                    self.wire.push((now, id.to_string(), to.clone(), bytes.clone()));
                    self.in_flight.push((now + LATENCY, id.to_string(), to, bytes));
                }
                Output::Persist(s) => {
                    self.persisted.insert(id.to_string(), s);
                }
                Output::Event(e) => {
                    if let Event::ConfirmLeader { term } = e {
                        self.node(id).confirm_leader(now, term, !deny).expect("pending confirm");
                    }
                    self.events.push((now, id.to_string(), e));
                }
            }
        }
    }

    pub fn drain_all(&mut self) {
        let ids: Vec<String> = self.nodes.keys().cloned().collect();
        for id in ids {
            self.drain(&id);
        }
    }

    pub fn run_until(&mut self, until: u64) {
        self.drain_all();
        loop {
            let next_msg = self.in_flight.iter().map(|m| m.0).min();
            let next_timer = self
                .nodes
                .iter()
                .filter(|(id, _)| !self.down.contains(*id))
                .filter_map(|(_, n)| n.poll_timeout())
                .min();
            let next = [next_msg, next_timer].into_iter().flatten().min();
            let Some(next) = next.filter(|t| *t <= until) else {
                self.now = until;
                return;
            };
            self.now = self.now.max(next);
            let now = self.now;
            let (due, rest): (Vec<_>, Vec<_>) = self.in_flight.drain(..).partition(|m| m.0 <= now);
            self.in_flight = rest;
            for (_, from, to, bytes) in due {
                if self.down.contains(&to) || self.cut.contains(&(from.clone(), to.clone())) {
                    continue;
                }
                let newer = bytes.get(2).is_some_and(|v| *v > tenure::wire::MIN_VERSION);
                if newer && (self.old.contains(&to) || self.old.contains(&from)) {
                    continue;
                }
                if self.nodes.contains_key(&to) {
                    let _ = self.node(&to).handle_message(now, &from, &bytes);
                    self.drain(&to);
                }
            }
            let ids: Vec<String> = self.nodes.keys().cloned().collect();
            for id in ids {
                if self.down.contains(&id) {
                    continue;
                }
                if self.nodes[&id].poll_timeout().is_some_and(|t| t <= now) {
                    self.node(&id).handle_timeout(now);
                    self.drain(&id);
                }
            }
        }
    }

    pub fn leaders(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter(|(id, n)| n.is_leader() && !self.down.contains(*id))
            .map(|(id, _)| id.clone())
            .collect()
    }

    pub fn leader(&self) -> String {
        let l = self.leaders();
        assert_eq!(l.len(), 1, "expected exactly one leader, got {l:?}");
        l[0].clone()
    }

    /// Cuts every link between the two groups, both ways.
    pub fn partition(&mut self, a: &[String], b: &[String]) {
        for x in a {
            for y in b {
                self.cut.insert((x.clone(), y.clone()));
                self.cut.insert((y.clone(), x.clone()));
            }
        }
    }

    pub fn heal(&mut self) {
        self.cut.clear();
    }

    /// Term → leaders that ever became leader in it.
    pub fn leaders_by_term(&self) -> BTreeMap<u64, BTreeSet<String>> {
        let mut m: BTreeMap<u64, BTreeSet<String>> = BTreeMap::new();
        for (_, id, e) in &self.events {
            if let Event::BecameLeader { term } = e {
                m.entry(*term).or_default().insert(id.clone());
            }
        }
        m
    }

    pub fn events_of(&self, id: &str) -> Vec<Event> {
        self.events.iter().filter(|(_, n, _)| n == id).map(|(_, _, e)| e.clone()).collect()
    }

    pub fn others(&self, id: &str) -> Vec<String> {
        self.nodes.keys().filter(|k| *k != id).cloned().collect()
    }
}
