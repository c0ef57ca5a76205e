//! A five-node cluster in one process, over an in-memory network with a simulated clock: it
//! elects, loses its leader, re-elects, and hands leadership over gracefully. Prints the timeline.
//!
//! `cargo run -p tenure --example cluster`

use std::collections::BTreeMap;
use tenure::{Config, Event, Node, Output, PeerDownReason};

const LATENCY_MS: u64 = 1;

struct Net {
    nodes: BTreeMap<String, Node>,
    down: Vec<String>,
    in_flight: Vec<(u64, String, String, Vec<u8>)>,
    now: u64,
}

impl Net {
    fn new(n: usize) -> Net {
        let ids: Vec<String> = (1..=n).map(|i| format!("node-{i}")).collect();
        let nodes = ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let config = Config::new(id.clone(), "example").bootstrap(ids.iter().cloned());
                (id.clone(), Node::new(config, 1000 + i as u64, None, 0).expect("valid config"))
            })
            .collect();
        Net { nodes, down: Vec::new(), in_flight: Vec::new(), now: 0 }
    }

    fn drain(&mut self, id: &str) {
        let now = self.now;
        let node = self.nodes.get_mut(id).expect("known node");
        while let Some(out) = node.poll_output() {
            match out {
                Output::Send { to, bytes } => self.in_flight.push((now + LATENCY_MS, id.to_string(), to, bytes)),
                Output::Persist(_) => {}
                Output::Event(Event::ConfirmLeader { term }) => node.confirm_leader(now, term, true).expect("pending"),
                Output::Event(Event::BecameLeader { term }) => println!("{now:>6} ms  {id} leads term {term}"),
                Output::Event(Event::BecameFollower { term, leader }) => {
                    println!("{now:>6} ms  {id} follows {} in term {term}", leader.as_deref().unwrap_or("nobody"))
                }
                Output::Event(_) => {}
            }
        }
    }

    /// Runs the simulation until `until`, jumping from event to event.
    fn run_until(&mut self, until: u64) {
        loop {
            let next_msg = self.in_flight.iter().map(|m| m.0).min();
            let next_timer =
                self.nodes.iter().filter(|(id, _)| !self.down.contains(id)).filter_map(|(_, n)| n.poll_timeout()).min();
            let next = match (next_msg, next_timer) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => a.or(b).unwrap_or(until),
            };
            if next > until {
                self.now = until;
                return;
            }
            self.now = self.now.max(next);
            let now = self.now;
            let (due, rest): (Vec<_>, Vec<_>) = self.in_flight.drain(..).partition(|m| m.0 <= now);
            self.in_flight = rest;
            for (_, from, to, bytes) in due {
                if self.down.contains(&to) || self.down.contains(&from) {
                    continue;
                }
                if let Some(node) = self.nodes.get_mut(&to) {
                    let _ = node.handle_message(now, &from, &bytes);
                    self.drain(&to);
                }
            }
            let ids: Vec<String> = self.nodes.keys().cloned().collect();
            for id in ids {
                if self.down.contains(&id) {
                    continue;
                }
                if self.nodes[&id].poll_timeout().is_some_and(|t| t <= now) {
                    self.nodes.get_mut(&id).expect("known").handle_timeout(now);
                    self.drain(&id);
                }
            }
        }
    }

    fn leader(&self) -> Option<String> {
        self.nodes.iter().find(|(id, n)| n.is_leader() && !self.down.contains(id)).map(|(id, _)| id.clone())
    }
}

fn main() {
    let mut net = Net::new(5);
    println!("five nodes, 1 ms links, election timeout 150-300 ms, heartbeat 50 ms\n");
    net.run_until(1_000);
    let first = net.leader().expect("a leader within one second");

    let crash_at = net.now;
    println!("\n{crash_at:>6} ms  -- {first} crashes silently --");
    net.down.push(first.clone());
    net.run_until(crash_at + 1_000);
    let second = net.leader().expect("a new leader after the crash");

    let report_at = net.now;
    println!("\n{report_at:>6} ms  -- {second} crashes and the hosts report it terminated --");
    net.down.push(second.clone());
    let ids: Vec<String> = net.nodes.keys().filter(|id| !net.down.contains(id)).cloned().collect();
    for id in &ids {
        net.nodes
            .get_mut(id)
            .expect("known")
            .peer_down(report_at, &second, PeerDownReason::Terminated)
            .expect("member");
        net.drain(id);
    }
    net.run_until(report_at + 1_000);
    let third = net.leader().expect("a new leader after the reported death");

    let transfer_at = net.now;
    let target = ids.iter().find(|id| **id != third).expect("another node").clone();
    println!("\n{transfer_at:>6} ms  -- {third} hands leadership to {target} --");
    net.nodes.get_mut(&third).expect("known").transfer_leadership(transfer_at, &target).expect("leader");
    net.drain(&third);
    net.run_until(transfer_at + 1_000);
    let fourth = net.leader().expect("a leader after the transfer");
    println!("\nleaders in order: {first}, {second}, {third}, {fourth}");
    println!("{}", net.nodes[&fourth].inspect());
}
