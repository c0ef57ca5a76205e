//! Helpers shared by the core benches: realistic ids, message builders, and nodes brought into a
//! steady state (follower of a live leader, leader of N peers) by feeding them real messages.
#![allow(dead_code)]

use tenure::wire::{encode, Auth, Envelope, Message};
use tenure::{Config, Event, Node, Output};

pub const CLUSTER: &str = "bench-cluster";
/// A 32-byte cluster key for the authenticated variants.
pub const KEY: &[u8; 32] = b"0123456789abcdef0123456789abcdef";

/// Node ids shaped like the UDP runtimes' (`HOST:PORT`), so string costs are realistic.
pub fn id(i: usize) -> String {
    format!("10.0.{}.{}:7000", i / 250, i % 250 + 1)
}

pub fn ids(n: usize) -> Vec<String> {
    (0..n).map(id).collect()
}

/// The key (when `auth`) and the receiver `to`: the tag covers the receiver's id.
pub fn key(auth: bool, to: &str) -> Option<Auth<'_>> {
    auth.then_some(Auth { key: &KEY[..], receiver: to })
}

pub fn envelope(from: &str, term: u64, message: Message) -> Envelope {
    Envelope { cluster: CLUSTER.to_string(), from: from.to_string(), term, incarnation: 0, message }
}

/// A message from `from` to `to`, as `to` receives it.
pub fn bytes(from: &str, to: &str, term: u64, message: Message, auth: bool) -> Vec<u8> {
    encode(&envelope(from, term, message), key(auth, to)).expect("encodable")
}

pub fn config(me: &str, all: &[String], auth: bool) -> Config {
    // Room for the largest measured clusters (10,001 nodes in leader_tick; the default cap is 64).
    let mut c = Config::new(me, CLUSTER).bootstrap(all.iter().cloned()).max_peers(20_000);
    if auth {
        c = c.key(KEY.to_vec());
    }
    c
}

/// Drains every output, answering a leadership confirmation with "granted"; returns the sends.
pub fn drain(node: &mut Node, now: u64) -> Vec<(String, Vec<u8>)> {
    let mut sent = Vec::new();
    while let Some(out) = node.poll_output() {
        match out {
            Output::Send { to, bytes } => sent.push((to, bytes)),
            Output::Event(Event::ConfirmLeader { term }) => node.confirm_leader(now, term, true).expect("pending"),
            _ => {}
        }
    }
    sent
}

/// One of 5 nodes (`id(1)`), following `id(0)` after one real heartbeat. Returns the node, the
/// leader's heartbeat bytes (term 1) and the time.
pub fn follower(n: usize, auth: bool) -> (Node, Vec<u8>, u64) {
    let all = ids(n);
    let mut node = Node::new(config(&all[1], &all, auth), 7, None, 0).expect("valid config");
    let now = 10;
    let hb = bytes(&all[0], &all[1], 1, Message::Heartbeat { sent_at: 1_000 }, auth);
    node.handle_message(now, &all[0], &hb).expect("accepted");
    // The first message from a peer is also answered with a `Hello` (wire version 4).
    let acks: Vec<_> = drain(&mut node, now).into_iter().filter(|(_, b)| b[2] == tenure::wire::MIN_VERSION).collect();
    assert_eq!(acks.len(), 1, "a follower answers a heartbeat with one ack");
    assert_eq!(node.leader(), Some(all[0].as_str()));
    (node, hb, now)
}

/// `id(0)` elected leader of `n` nodes by real pre-vote and vote replies from every peer (so that
/// every peer has answered and receives heartbeats). `election_timeout_min` is the configured
/// lower bound, or the default when `None`.
pub fn leader(n: usize, auth: bool, election_timeout_min: Option<u64>) -> (Node, u64) {
    let all = ids(n);
    let mut c = config(&all[0], &all, auth);
    if let Some(min) = election_timeout_min {
        c = c.election_timeout_min(min);
    }
    leader_of(c, n, auth)
}

/// [`leader`] with configuration `c` (of `id(0)` among `n` nodes).
pub fn leader_of(c: Config, n: usize, auth: bool) -> (Node, u64) {
    let all = ids(n);
    let mut node = Node::new(c, 7, None, 0).expect("valid config");
    let now = node.poll_timeout().expect("a follower has an election deadline");
    node.handle_timeout(now);
    drain(&mut node, now);
    let term = node.term() + 1;
    for p in &all[1..] {
        let m = bytes(p, &all[0], term, Message::PreVoteReply { granted: true }, auth);
        node.handle_message(now, p, &m).expect("accepted");
    }
    drain(&mut node, now);
    assert_eq!(node.term(), term, "pre-vote won, election started");
    for p in &all[1..] {
        let m = bytes(p, &all[0], term, Message::VoteReply { granted: true }, auth);
        node.handle_message(now, p, &m).expect("accepted");
        drain(&mut node, now);
    }
    assert!(node.is_leader(), "election won");
    (node, now)
}
