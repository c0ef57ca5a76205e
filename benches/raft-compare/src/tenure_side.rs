//! The tenure cluster: the same host loop as `core/examples/cluster.rs`, with a simulated clock.

use std::collections::VecDeque;

use tenure::wire::{encode, Auth, Envelope, Message};
use tenure::{Config, Event, Node, Output, OutputRef};

/// Simulated one-way latency.
const LATENCY_MS: u64 = 1;

/// A cluster of tenure nodes over an in-memory network.
pub struct Cluster {
    /// Node ids, in node order.
    pub ids: Vec<String>,
    /// The nodes (boxed, so that heap measurements include the struct itself).
    pub nodes: Vec<Box<Node>>,
    /// Simulated time in milliseconds.
    pub now: u64,
    in_flight: Vec<(u64, usize, usize, Vec<u8>)>,
}

/// Node ids shaped like the UDP runtimes' (`HOST:PORT`).
pub fn node_id(i: usize) -> String {
    format!("10.0.0.{}:7000", i + 1)
}

impl Cluster {
    /// `n` nodes bootstrapped with each other; `key` switches authentication on.
    pub fn new(n: usize, key: Option<&[u8]>) -> Cluster {
        let ids: Vec<String> = (0..n).map(node_id).collect();
        let nodes = ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let mut c = Config::new(id.clone(), "bench-cluster").bootstrap(ids.iter().cloned());
                if let Some(k) = key {
                    c = c.key(k.to_vec());
                }
                Box::new(Node::new(c, 100 + i as u64, None, 0).expect("valid config"))
            })
            .collect();
        Cluster { ids, nodes, now: 0, in_flight: Vec::new() }
    }

    fn index(&self, id: &str) -> usize {
        self.ids.iter().position(|x| x == id).expect("known id")
    }

    fn drain(&mut self, i: usize) {
        let now = self.now;
        while let Some(out) = self.nodes[i].poll_output() {
            match out {
                Output::Send { to, bytes } => {
                    let j = self.index(&to);
                    self.in_flight.push((now + LATENCY_MS, i, j, bytes));
                }
                Output::Event(Event::ConfirmLeader { term }) => {
                    self.nodes[i].confirm_leader(now, term, true).expect("pending confirmation")
                }
                _ => {}
            }
        }
    }

    /// Runs the simulation up to `until` ms, event by event.
    pub fn run_until(&mut self, until: u64) {
        loop {
            let next_msg = self.in_flight.iter().map(|m| m.0).min();
            let next_timer = self.nodes.iter().filter_map(|n| n.poll_timeout()).min();
            let next = [next_msg, next_timer].into_iter().flatten().min().unwrap_or(until);
            if next > until {
                self.now = until;
                return;
            }
            self.now = self.now.max(next);
            let now = self.now;
            let (due, rest): (Vec<_>, Vec<_>) = self.in_flight.drain(..).partition(|m| m.0 <= now);
            self.in_flight = rest;
            for (_, from, to, bytes) in due {
                let from_id = self.ids[from].clone();
                let _ = self.nodes[to].handle_message(now, &from_id, &bytes);
                self.drain(to);
            }
            for i in 0..self.nodes.len() {
                if self.nodes[i].poll_timeout().is_some_and(|t| t <= now) {
                    self.nodes[i].handle_timeout(now);
                    self.drain(i);
                }
            }
        }
    }

    /// The index of the single leader, if there is exactly one.
    pub fn leader(&self) -> Option<usize> {
        let leaders: Vec<usize> = (0..self.nodes.len()).filter(|&i| self.nodes[i].is_leader()).collect();
        (leaders.len() == 1).then(|| leaders[0])
    }

    /// Runs until one leader is established and a few heartbeat rounds have been acknowledged.
    pub fn steady(n: usize, key: Option<&[u8]>) -> Cluster {
        let mut c = Cluster::new(n, key);
        let mut t = 0;
        while c.leader().is_none() {
            t += 100;
            assert!(t < 60_000, "no leader elected");
            c.run_until(t);
        }
        c.run_until(c.now + 500);
        // Let in-flight messages land without another tick.
        c.run_until(c.now + LATENCY_MS);
        c
    }

    /// Drives the leader's next heartbeat tick and returns the heartbeat bytes addressed to
    /// node `to` (the others are delivered as usual).
    pub fn next_heartbeat_to(&mut self, to: usize) -> Vec<u8> {
        let l = self.leader().expect("a leader");
        let t = self.nodes[l].poll_timeout().expect("leader tick");
        self.run_until(t.saturating_sub(1));
        self.now = t;
        self.nodes[l].handle_timeout(t);
        let mut hb = None;
        while let Some(out) = self.nodes[l].poll_output() {
            if let Output::Send { to: dest, bytes } = out {
                if dest == self.ids[to] {
                    hb = Some(bytes.clone());
                }
                let j = self.index(&dest);
                self.in_flight.push((t + LATENCY_MS, l, j, bytes));
            }
        }
        hb.expect("a heartbeat to the follower")
    }
}

/// One follower of a steady 5-node cluster and the leader's heartbeats to it.
///
/// A follower drops a heartbeat no newer than the last one it accepted from its leader (a replay
/// proves nothing about the leader being alive), so every round needs a fresh one, as in a real
/// cluster: [`FollowerRound::prepare`] encodes them, outside the timed region, from the leader's
/// real heartbeat with `sent_at` advanced by one each.
pub struct FollowerRound {
    node: Box<Node>,
    leader: String,
    /// The leader's real heartbeat, decoded: the template of the fresh ones.
    template: Envelope,
    key: Option<Vec<u8>>,
    /// Fresh heartbeats not yet handled, in `sent_at` order (consumed from the front).
    ready: VecDeque<Vec<u8>>,
    /// Handled heartbeats, freed by the next `prepare` (not inside a timed round).
    spent: Vec<Vec<u8>>,
    /// Where the drain copies a `Send`'s destination and bytes, as the runtime's run loop does
    /// (`tenure-runtime`, `Engine::poll_output_into`): buffers kept across rounds.
    to: String,
    ack: Vec<u8>,
    now: u64,
}

impl FollowerRound {
    /// Builds the steady cluster and keeps a follower, its leader's id and a real heartbeat.
    pub fn new(key: Option<&[u8]>) -> FollowerRound {
        let mut c = Cluster::steady(crate::NODES, key);
        let l = c.leader().expect("leader");
        let f = (l + 1) % c.nodes.len();
        let heartbeat = c.next_heartbeat_to(f);
        let leader = c.ids[l].clone();
        let now = c.now;
        let node = c.nodes.swap_remove(f);
        let template = node.decode_message(&heartbeat).expect("the leader's heartbeat decodes");
        assert!(matches!(template.message, Message::Heartbeat { .. }));
        let mut ready = VecDeque::new();
        ready.push_back(heartbeat);
        FollowerRound {
            node,
            leader,
            template,
            key: key.map(<[u8]>::to_vec),
            ready,
            spent: Vec::new(),
            to: String::new(),
            ack: Vec::new(),
            now,
        }
    }

    /// Encodes fresh heartbeats until `rounds` are ready (call before timing that many rounds).
    pub fn prepare(&mut self, rounds: usize) {
        self.spent.clear();
        self.spent.reserve(rounds);
        while self.ready.len() < rounds {
            let Message::Heartbeat { sent_at } = &mut self.template.message else { unreachable!() };
            *sent_at += 1;
            let auth = self.key.as_deref().map(|key| Auth { key, receiver: self.node.id() });
            let bytes = encode(&self.template, auth).expect("encodable");
            self.ready.push_back(bytes);
        }
    }

    /// One heartbeat round: heartbeat bytes in, ack bytes out. Encodes a fresh heartbeat first
    /// when none was prepared.
    ///
    /// The outputs are drained the way the runtime drains them (every output until `None`
    /// through [`Node::poll_output_ref`], a `Send`'s destination and bytes copied into buffers
    /// kept across rounds, from which the runtime hands them to the socket).
    pub fn round(&mut self) -> &[u8] {
        if self.ready.is_empty() {
            self.prepare(1);
        }
        let heartbeat = self.ready.pop_front().expect("prepared");
        self.now += 1;
        self.node.handle_message(self.now, &self.leader, &heartbeat).expect("accepted");
        self.spent.push(heartbeat);
        let mut sends = 0;
        while let Some(output) = self.node.poll_output_ref() {
            match output {
                OutputRef::Send { to, bytes } => {
                    self.to.clear();
                    self.to.push_str(to);
                    self.ack.clear();
                    self.ack.extend_from_slice(bytes);
                    sends += 1;
                }
                other => panic!("expected only an ack, got {other:?}"),
            }
        }
        debug_assert_eq!((sends, self.to.as_str()), (1, self.leader.as_str()));
        &self.ack
    }
}

/// The leader of a steady 5-node cluster and a real ack from one follower.
pub struct LeaderAck {
    node: Box<Node>,
    follower: String,
    ack: Vec<u8>,
    now: u64,
}

impl LeaderAck {
    /// Builds the steady cluster and captures one follower's ack to a heartbeat.
    pub fn new(key: Option<&[u8]>) -> LeaderAck {
        let mut c = Cluster::steady(crate::NODES, key);
        let l = c.leader().expect("leader");
        let f = (l + 1) % c.nodes.len();
        let heartbeat = c.next_heartbeat_to(f);
        let now = c.now;
        let leader = c.ids[l].clone();
        c.nodes[f].handle_message(now, &leader, &heartbeat).expect("accepted");
        let ack = match c.nodes[f].poll_output() {
            Some(Output::Send { bytes, .. }) => bytes,
            other => panic!("expected an ack, got {other:?}"),
        };
        let follower = c.ids[f].clone();
        let node = c.nodes.swap_remove(l);
        LeaderAck { node, follower, ack, now }
    }

    /// The leader handles one heartbeat ack (no output).
    pub fn handle(&mut self) {
        self.now += 1;
        self.node.handle_message(self.now, &self.follower, &self.ack).expect("accepted");
        debug_assert!(self.node.poll_output().is_none());
    }

    /// Whether the node still leads.
    pub fn is_leader(&self) -> bool {
        self.node.is_leader()
    }
}
