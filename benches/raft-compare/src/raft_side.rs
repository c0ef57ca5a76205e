//! The raft-rs cluster: `RawNode<MemStorage>` nodes, election only (nothing is ever proposed;
//! the log holds just the empty entry a new leader appends), pre-vote and check-quorum on.
//! Every message crosses the in-memory network as protobuf bytes.

use protobuf::Message as _;
use raft::eraftpb::{Message, MessageType};
use raft::storage::MemStorage;
use raft::{Config, RawNode};
use slog::{o, Discard, Logger};

/// A cluster of raft-rs nodes with ids `1..=n`.
pub struct Cluster {
    /// The nodes; node `i` has raft id `i + 1`. Boxed, so heap measurements include the struct.
    pub nodes: Vec<Box<RawNode<MemStorage>>>,
}

/// The raft-rs configuration used: defaults (election tick 10, heartbeat tick 2) with pre-vote and
/// check-quorum on.
pub fn config(id: u64) -> Config {
    Config { id, pre_vote: true, check_quorum: true, ..Config::default() }
}

/// A logger that discards everything (raft-rs requires one).
pub fn logger() -> Logger {
    Logger::root(Discard, o!())
}

/// One raft-rs node with an empty in-memory log and `n` voters.
pub fn new_node(id: u64, n: usize, logger: &Logger) -> RawNode<MemStorage> {
    let voters: Vec<u64> = (1..=n as u64).collect();
    let storage = MemStorage::new_with_conf_state((voters, vec![]));
    RawNode::new(&config(id), storage, logger).expect("valid raft config")
}

/// Processes one `Ready` the way a host must (persist entries and hard state, send messages,
/// apply committed entries, advance) and returns the messages to send.
pub fn on_ready(node: &mut RawNode<MemStorage>) -> Vec<Message> {
    let mut out = Vec::new();
    if !node.has_ready() {
        return out;
    }
    let mut rd = node.ready();
    out.extend(rd.take_messages());
    if !rd.snapshot().is_empty() {
        node.mut_store().wl().apply_snapshot(rd.snapshot().clone()).expect("snapshot");
    }
    let _applied = rd.take_committed_entries();
    if !rd.entries().is_empty() {
        node.mut_store().wl().append(rd.entries()).expect("append");
    }
    if let Some(hs) = rd.hs() {
        node.mut_store().wl().set_hardstate(hs.clone());
    }
    out.extend(rd.take_persisted_messages());
    let mut light = node.advance(rd);
    if let Some(commit) = light.commit_index() {
        node.mut_store().wl().mut_hard_state().set_commit(commit);
    }
    out.extend(light.take_messages());
    let _applied = light.take_committed_entries();
    node.advance_apply();
    out
}

/// Protobuf encoding of a message.
pub fn encode(m: &Message) -> Vec<u8> {
    m.write_to_bytes().expect("encodable")
}

/// Protobuf decoding of a message.
pub fn decode(bytes: &[u8]) -> Message {
    Message::parse_from_bytes(bytes).expect("decodable")
}

impl Cluster {
    /// `n` fresh nodes sharing one discarding logger.
    pub fn new(n: usize, logger: &Logger) -> Cluster {
        Cluster { nodes: (1..=n as u64).map(|id| Box::new(new_node(id, n, logger))).collect() }
    }

    /// Delivers messages (through protobuf bytes) until the cluster is quiet.
    pub fn pump(&mut self) {
        loop {
            let mut msgs = Vec::new();
            for node in &mut self.nodes {
                msgs.extend(on_ready(node));
            }
            if msgs.is_empty() {
                return;
            }
            for m in msgs {
                let to = m.to as usize - 1;
                self.nodes[to].step(decode(&encode(&m))).expect("step");
            }
        }
    }

    /// The index of the leader, if one leads.
    pub fn leader(&self) -> Option<usize> {
        self.nodes.iter().position(|n| n.raft.state == raft::StateRole::Leader)
    }

    /// Node 1 campaigns (pre-vote, then vote), wins, commits its empty entry, and the leader
    /// ticks through a few heartbeat rounds.
    pub fn steady(n: usize, logger: &Logger) -> Cluster {
        let mut c = Cluster::new(n, logger);
        c.nodes[0].campaign().expect("campaign");
        c.pump();
        assert_eq!(c.leader(), Some(0), "node 1 won");
        for _ in 0..3 * config(1).election_tick {
            c.nodes[0].tick();
            c.pump();
        }
        assert_eq!(c.leader(), Some(0), "node 1 still leads (check-quorum satisfied)");
        c
    }

    /// Ticks the leader until it broadcasts heartbeats, returns the encoded heartbeat to node
    /// index `to`, and delivers the others.
    pub fn next_heartbeat_to(&mut self, to: usize) -> Vec<u8> {
        let l = self.leader().expect("leader");
        for _ in 0..config(1).heartbeat_tick {
            self.nodes[l].tick();
            let msgs = on_ready(&mut self.nodes[l]);
            let mut hb = None;
            for m in msgs {
                if m.to as usize - 1 == to && m.msg_type == MessageType::MsgHeartbeat {
                    hb = Some(encode(&m));
                } else {
                    let dest = m.to as usize - 1;
                    self.nodes[dest].step(decode(&encode(&m))).expect("step");
                }
            }
            if let Some(hb) = hb {
                self.pump();
                return hb;
            }
        }
        panic!("no heartbeat after heartbeat_tick ticks");
    }
}

/// One follower of a steady 5-node raft-rs cluster and the leader's heartbeat to it.
pub struct FollowerRound {
    node: Box<RawNode<MemStorage>>,
    heartbeat: Vec<u8>,
}

impl FollowerRound {
    /// Builds the steady cluster and keeps node 2 and a real heartbeat from node 1 to it.
    pub fn new() -> FollowerRound {
        let mut c = Cluster::steady(crate::NODES, &logger());
        let heartbeat = c.next_heartbeat_to(1);
        let node = c.nodes.swap_remove(1);
        FollowerRound { node, heartbeat }
    }

    /// One heartbeat round: decode the heartbeat, step, process the Ready, advance, and encode
    /// the single response.
    pub fn round(&mut self) -> Vec<u8> {
        self.node.step(decode(&self.heartbeat)).expect("step");
        let out = on_ready(&mut self.node);
        debug_assert_eq!(out.len(), 1);
        debug_assert_eq!(out[0].msg_type, MessageType::MsgHeartbeatResponse);
        encode(&out[0])
    }
}

impl Default for FollowerRound {
    fn default() -> Self {
        FollowerRound::new()
    }
}

/// The leader of a steady 5-node raft-rs cluster and a real heartbeat response from node 2.
pub struct LeaderAck {
    node: Box<RawNode<MemStorage>>,
    ack: Vec<u8>,
}

impl LeaderAck {
    /// Builds the steady cluster and captures node 2's response to a heartbeat.
    pub fn new() -> LeaderAck {
        let mut c = Cluster::steady(crate::NODES, &logger());
        let hb = c.next_heartbeat_to(1);
        c.nodes[1].step(decode(&hb)).expect("step");
        let out = on_ready(&mut c.nodes[1]);
        assert_eq!(out.len(), 1);
        let ack = encode(&out[0]);
        let node = c.nodes.swap_remove(0);
        LeaderAck { node, ack }
    }

    /// The leader handles one heartbeat response (decode, step, Ready if any).
    pub fn handle(&mut self) {
        self.node.step(decode(&self.ack)).expect("step");
        let out = on_ready(&mut self.node);
        debug_assert!(out.is_empty());
    }

    /// Whether the node still leads.
    pub fn is_leader(&self) -> bool {
        self.node.raft.state == raft::StateRole::Leader
    }
}

impl Default for LeaderAck {
    fn default() -> Self {
        LeaderAck::new()
    }
}
