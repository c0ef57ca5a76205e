//! Byte-driven drivers shared by the cargo-fuzz targets (`fuzz/`) and the proptest properties
//! (`tests/props.rs`): any byte string is a valid program.

use tenure::wire::{decode, encode, Auth, Envelope, Message};
use tenure::{Config, Node, Output, PeerDownReason, Role};

use crate::check::L1_SETTLE_BOUND_ELECTION_TIMEOUTS;
use crate::scenario::{apply_input, Input};
use crate::sim::{HostPolicy, NetConfig, Sim};

struct Bytes<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    fn u16(&mut self) -> u16 {
        u16::from(self.u8()) << 8 | u16::from(self.u8())
    }
    fn u64(&mut self) -> u64 {
        (0..8).fold(0u64, |acc, _| acc << 8 | u64::from(self.u8()))
    }
    fn done(&self) -> bool {
        self.pos >= self.data.len()
    }
    fn take(&mut self, n: usize) -> Vec<u8> {
        let end = (self.pos + n).min(self.data.len());
        let v = self.data.get(self.pos..end).map(<[u8]>::to_vec).unwrap_or_default();
        self.pos += n;
        v
    }
}

const PEERS: [&str; 7] = ["n1", "n2", "n3", "n4", "n5", "", "n2 "];
const KEY: &[u8] = b"fuzz key";

/// Drives one node ("n1") with an arbitrary sequence of API calls decoded from `data`, checking
/// after every call: sends decode and come from n1 in its cluster; persists only when durable,
/// with a term that never goes back; the term never decreases; a vote once cast in a term is
/// never changed; a leader has a view of at least `min_cluster_size` and names itself leader.
pub fn api_sequence(data: &[u8]) -> Result<(), String> {
    let mut b = Bytes { data, pos: 0 };
    let flags = b.u8();
    let durable = flags & 1 != 0;
    let key = (flags & 2 != 0).then(|| KEY.to_vec());
    let mut config = Config::new("n1", "fuzz")
        .pre_vote(flags & 4 == 0)
        .confirm_leader(flags & 8 == 0)
        .durable(durable)
        .min_cluster_size(u32::from(flags >> 4) % 4 + 1)
        .ghost_ttl(400);
    let boot = b.u8();
    config.bootstrap =
        PEERS[1..5].iter().enumerate().filter(|(i, _)| boot & (1 << i) != 0).map(|(_, p)| p.to_string()).collect();
    config.key = key.clone();
    let min_cluster = config.min_cluster_size as usize;
    let mut now = u64::from(b.u16());
    let mut node = Node::new(config, b.u64(), None, now).map_err(|e| format!("config rejected: {e}"))?;
    let mut last_term = node.term();
    let mut last_persist = 0u64;
    let mut vote: Option<(u64, String)> = None;
    let mut step = 0;
    while !b.done() && step < 2000 {
        step += 1;
        let op = b.u8();
        let peer = PEERS[usize::from(b.u8()) % PEERS.len()].to_string();
        let input = match op % 12 {
            0 => {
                now = node.poll_timeout().unwrap_or(now).max(now);
                Input::Timeout
            }
            1 => {
                now += u64::from(b.u16() % 2000);
                Input::Timeout
            }
            2..=4 => {
                let delta = i64::from(b.u8() % 5) - 2;
                let term = node.term().saturating_add_signed(delta);
                let message = match b.u8() % 9 {
                    0 => Message::PreVote,
                    1 => Message::PreVoteReply { granted: b.u8().is_multiple_of(2) },
                    2 => Message::Vote { transfer: b.u8().is_multiple_of(4) },
                    3 => Message::VoteReply { granted: !b.u8().is_multiple_of(3) },
                    4 => Message::Heartbeat { sent_at: now.saturating_sub(u64::from(b.u8())) },
                    5 => Message::HeartbeatAck { echo: now.saturating_sub(u64::from(b.u8())) },
                    6 => Message::TimeoutNow,
                    7 => Message::DeathNotice,
                    _ => {
                        let n = usize::from(b.u8() % 16);
                        Message::App { seq: u64::from(b.u8()), payload: b.take(n) }
                    }
                };
                let env = Envelope { cluster: "fuzz".into(), from: peer.clone(), term, incarnation: 0, message };
                let mut bytes =
                    encode(&env, key.as_deref().map(|key| Auth { key, receiver: "n1" })).unwrap_or_default();
                if op % 12 == 4 && !bytes.is_empty() {
                    let i = usize::from(b.u8()) % bytes.len();
                    bytes[i] ^= b.u8() | 1;
                }
                now += u64::from(b.u8() % 20);
                Input::Message { from: peer, bytes }
            }
            5 => {
                let n = usize::from(b.u8() % 64);
                Input::Message { from: peer, bytes: b.take(n) }
            }
            6 => Input::Join(peer),
            7 => Input::Leave(peer),
            8 => Input::PeerDown(
                peer,
                if b.u8().is_multiple_of(2) { PeerDownReason::Terminated } else { PeerDownReason::NoConnection },
            ),
            9 => {
                let term = if b.u8().is_multiple_of(4) { u64::from(b.u8()) } else { node.term() };
                Input::Confirm { term, granted: !b.u8().is_multiple_of(3) }
            }
            10 => {
                let term = if b.u8().is_multiple_of(4) { u64::from(b.u8()) } else { node.term() };
                Input::LeaderFailed(term)
            }
            _ => {
                if b.u8().is_multiple_of(2) {
                    Input::Transfer(peer)
                } else {
                    let n = usize::from(b.u8() % 32);
                    Input::Broadcast(b.take(n))
                }
            }
        };
        let _ = apply_input(&mut node, now, &input);
        while let Some(o) = node.poll_output() {
            match o {
                Output::Send { bytes, to } => {
                    let env = decode(&bytes, key.as_deref().map(|key| Auth { key, receiver: &to }))
                        .map_err(|r| format!("step {step}: own send dropped as {r:?}"))?;
                    if env.from != "n1" || env.cluster != "fuzz" || to == "n1" {
                        return Err(format!("step {step}: bad send {env:?} to {to}"));
                    }
                }
                Output::Persist(s) => {
                    if !durable {
                        return Err(format!("step {step}: persist without durable"));
                    }
                    if s.term < last_persist {
                        return Err(format!("step {step}: persisted term went back {last_persist} -> {}", s.term));
                    }
                    last_persist = s.term;
                }
                Output::Event(_) => {}
            }
        }
        if node.term() < last_term {
            return Err(format!("step {step}: term went back {last_term} -> {}", node.term()));
        }
        last_term = node.term();
        if let Some(v) = node.voted_for() {
            match &vote {
                Some((t, w)) if *t == node.term() && w != v => {
                    return Err(format!("step {step}: voted for {w} and then {v} in term {t}"));
                }
                _ => vote = Some((node.term(), v.to_string())),
            }
        }
        if node.role() == Role::Leader {
            if node.view_size() < min_cluster {
                return Err(format!("step {step}: leader with view {} < {min_cluster}", node.view_size()));
            }
            if node.leader() != Some("n1") {
                return Err(format!("step {step}: leader names {:?} as leader", node.leader()));
            }
        }
        let _ = node.inspect().to_string();
    }
    Ok(())
}

/// A small simulated cluster (3–5 nodes, durable state) driven by fault choices decoded from
/// `data`; S1–S4 are checked after every step, and after a final heal the cluster must converge
/// to one leader (L1). Returns the violation, printable with its seed and log.
pub fn cluster(data: &[u8]) -> Result<(), String> {
    let mut b = Bytes { data, pos: 0 };
    let seed = b.u64();
    let n = 3 + usize::from(b.u8() % 3);
    let rtt = 1 + u64::from(b.u8() % 20);
    let mut sim = Sim::cluster(seed, n, NetConfig::rtt(rtt), |c| c.durable(true));
    sim.verbose_log = true;
    // Half the runs give every node a watchdog that sends its death notices when it dies leading.
    if seed & 1 == 1 {
        sim.watchdogs = true;
        sim.watchdog_dies_with_node = 0.2;
        sim.disarm_lag_ms = 5;
    }
    let ids: Vec<String> = sim.nodes.iter().map(|x| x.id.clone()).collect();
    let fail = |sim: &Sim| sim.violation().map(|v| v.to_string()).unwrap_or_default();
    let mut ops = 0;
    while !b.done() && ops < 200 {
        ops += 1;
        let op = b.u8();
        let a = ids[usize::from(b.u8()) % n].clone();
        let c = ids[usize::from(b.u8()) % n].clone();
        match op % 14 {
            0 => {
                if sim.nodes[sim.idx(&a)].node.is_some() {
                    sim.crash(&a)
                } else {
                    sim.restart(&a, true)
                }
            }
            1 => sim.pause(&a, u64::from(b.u16() % 2000)),
            2 => sim.partition(&[
                vec![a.clone(), c.clone()],
                ids.iter().filter(|x| **x != a && **x != c).cloned().collect(),
            ]),
            3 => sim.block(&a, &c),
            4 => sim.heal(),
            5 => sim.net.loss = f64::from(b.u8() % 50) / 100.0,
            6 => sim.net.duplicate = f64::from(b.u8() % 50) / 100.0,
            7 => sim.net.reorder = f64::from(b.u8() % 50) / 100.0,
            8 => sim.host(&a).policy.deny_next = u32::from(b.u8() % 3),
            9 => sim.host(&a).policy.fail_next = 1,
            10 => {
                if let Some(l) = sim.leader() {
                    let _ = sim.call(&l, Input::Transfer(c));
                }
            }
            11 if sim.nodes[sim.idx(&a)].is_running() => {
                let _ = sim.call(&a, Input::Broadcast(vec![op; usize::from(op % 8)]));
            }
            12 => sim.host(&a).policy.ignore_confirm = b.u8().is_multiple_of(2),
            _ => {}
        }
        if sim.run_for(u64::from(b.u16() % 1000)).is_err() {
            return Err(fail(&sim));
        }
    }
    // Heal everything; the cluster must converge.
    sim.heal();
    sim.net = NetConfig::rtt(rtt);
    for id in &ids {
        let i = sim.idx(id);
        sim.nodes[i].policy = HostPolicy::default();
        if sim.nodes[i].node.is_none() {
            sim.restart(id, true);
        }
    }
    let et_max = 300;
    let deadline = sim.now + L1_SETTLE_BOUND_ELECTION_TIMEOUTS * et_max;
    match sim.run_until_cond(deadline, |s| s.converged()) {
        Err(_) => Err(fail(&sim)),
        Ok(None) => {
            sim.fail(
                "L1",
                format!("no converged leader within {} ms of the heal", L1_SETTLE_BOUND_ELECTION_TIMEOUTS * et_max),
            );
            Err(fail(&sim))
        }
        Ok(Some(_)) => {
            if sim.run_for(2 * et_max).is_err() {
                return Err(fail(&sim));
            }
            Ok(())
        }
    }
}
