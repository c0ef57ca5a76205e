//! The comparison is only meaningful if both sides are really in the state the bench claims.

use tenure_raft_compare::{raft_side, tenure_side};

#[test]
fn tenure_cluster_elects_one_leader_and_follower_acks_heartbeats() {
    let c = tenure_side::Cluster::steady(5, None);
    let l = c.leader().expect("one leader");
    let term = c.nodes[l].term();
    assert!(c.nodes.iter().all(|n| n.term() == term && n.leader() == Some(c.ids[l].as_str())));
    let mut f = tenure_side::FollowerRound::new(None);
    let env = tenure::wire::decode(f.round(), None).expect("valid ack");
    assert_eq!(env.message.kind(), "heartbeat_ack");
    assert_eq!(env.term, term);
    let mut a = tenure_side::LeaderAck::new(Some(b"k"));
    a.handle();
    assert!(a.is_leader());
}

#[test]
fn raft_cluster_elects_node_1_and_follower_answers_heartbeats() {
    let c = raft_side::Cluster::steady(5, &raft_side::logger());
    assert_eq!(c.leader(), Some(0));
    assert!(c.nodes.iter().all(|n| n.raft.leader_id == 1 && n.raft.term == c.nodes[0].raft.term));
    // The empty entry of the new term is committed everywhere: nothing else is in the log.
    assert!(c.nodes.iter().all(|n| n.raft.raft_log.committed == 1 && n.raft.raft_log.last_index() == 1));
    let mut f = raft_side::FollowerRound::new();
    for _ in 0..3 {
        let resp = raft_side::decode(&f.round());
        assert_eq!(resp.msg_type, raft::eraftpb::MessageType::MsgHeartbeatResponse);
        assert_eq!((resp.from, resp.to), (2, 1));
    }
    let mut a = raft_side::LeaderAck::new();
    a.handle();
    assert!(a.is_leader());
}
