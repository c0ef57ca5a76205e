//! One test per protocol rule (SPEC "The protocol" and "Beyond the Ergo design").
//! Times are simulated milliseconds; links have 1 ms latency unless cut.

mod common;

use common::{ids, Harness};
use tenure::wire::{self, Auth, Envelope, Message};
use tenure::{
    Config, DropReason, DurableState, Error, Event, FenceChecker, FenceVerdict, Node, Output, PeerDownReason, Role,
};

fn msg(from: &str, term: u64, message: Message) -> Vec<u8> {
    wire::encode(&Envelope { cluster: "test".into(), from: from.into(), term, incarnation: 7, message }, None)
        .expect("fits")
}

/// Every output but the `Hello`s a node sends the first time it hears from a peer (the rules
/// below are about the election; tests/versions.rs has the greetings').
fn outputs(node: &mut Node) -> Vec<Output> {
    std::iter::from_fn(|| node.poll_output())
        .filter(|o| !matches!(o, Output::Send { bytes, .. } if bytes.get(2) == Some(&wire::VERSION)))
        .collect()
}

fn sent_kinds(outs: &[Output]) -> Vec<(String, &'static str, u64)> {
    outs.iter()
        .filter_map(|o| match o {
            Output::Send { to, bytes } => {
                let e = wire::decode(bytes, None).expect("own output decodes");
                Some((to.clone(), e.message.kind(), e.term))
            }
            _ => None,
        })
        .collect()
}

/// A follower "n1" in a 3-node view {n1,n2,n3} at time 0, confirm gate off for brevity.
fn lone(config: impl Fn(Config) -> Config) -> Node {
    let c = config(Config::new("n1", "test").bootstrap(ids(3)).confirm_leader(false));
    Node::new(c, 1, None, 0).expect("valid")
}

#[test]
fn elects_exactly_one_leader_and_everyone_follows_it() {
    let mut h = Harness::new(5);
    h.run_until(1_000);
    let leader = h.leader();
    for id in h.others(&leader) {
        assert_eq!(h.nodes[&id].leader(), Some(leader.as_str()));
        assert_eq!(h.nodes[&id].role(), Role::Follower);
    }
    assert!(h.leaders_by_term().values().all(|s| s.len() == 1));
}

#[test]
fn acknowledged_heartbeats_are_the_leaders_quorum_evidence() {
    let mut h = Harness::new(3);
    h.run_until(1_000);
    let leader = h.leader();
    // The followers still receive heartbeats (the transport accepts every send) but their
    // acknowledgements never arrive: a hung peer behind an open connection.
    for f in h.others(&leader) {
        h.cut.insert((f.clone(), leader.clone()));
    }
    let cut_at = h.now;
    h.run_until(cut_at + 150 + 50 + 2);
    assert!(!h.nodes[&leader].is_leader(), "leader without acks must step down within one election timeout + one tick");
    let stepped = h
        .events
        .iter()
        .find(|(t, id, e)| *t > cut_at && *id == leader && matches!(e, Event::BecameFollower { .. }))
        .expect("a follower event for the demoted leader");
    assert!(stepped.0 <= cut_at + 200, "stepped down at {} (cut at {cut_at})", stepped.0);
}

#[test]
fn one_vote_per_term_always() {
    // (After the boot promise: a node grants nothing for election_timeout_min after it starts.)
    let mut n = lone(|c| c.durable(true));
    n.handle_message(210, "n2", &msg("n2", 1, Message::Vote { transfer: false })).unwrap();
    let o = outputs(&mut n);
    // Term bump and vote in one input: one durable write, before the reply.
    assert_eq!(o[0], Output::Persist(DurableState { term: 1, voted_for: Some("n2".into()) }));
    assert_eq!(o.iter().filter(|x| matches!(x, Output::Persist(_))).count(), 1);
    assert!(matches!(sent_kinds(&o)[..], [(_, "vote_reply", 1)]));
    // Same term, another candidate: refused.
    n.handle_message(211, "n3", &msg("n3", 1, Message::Vote { transfer: false })).unwrap();
    let o = outputs(&mut n);
    let reply = o.iter().find_map(|x| match x {
        Output::Send { bytes, .. } => Some(wire::decode(bytes, None).unwrap().message),
        _ => None,
    });
    assert_eq!(reply, Some(Message::VoteReply { granted: false }));
    // A join does not spend or clear the vote.
    n.join(212, "n4").unwrap();
    assert_eq!(n.voted_for(), Some("n2"));
    // A restart with the durable pair cannot vote again in term 1.
    let c = Config::new("n1", "test").bootstrap(ids(4)).durable(true);
    let mut r = Node::new(c, 9, Some(DurableState { term: 1, voted_for: Some("n2".into()) }), 0).unwrap();
    r.handle_message(201, "n3", &msg("n3", 1, Message::Vote { transfer: false })).unwrap();
    let o = outputs(&mut r);
    assert!(o.iter().any(|x| matches!(x, Output::Send { bytes, .. }
        if wire::decode(bytes, None).unwrap().message == Message::VoteReply { granted: false })));
    assert_eq!(r.voted_for(), Some("n2"));
}

#[test]
fn one_vote_per_term_survives_a_confirm_denial() {
    let mut n = Node::new(Config::new("n1", "test").bootstrap(ids(3)).pre_vote(false), 1, None, 0).unwrap();
    let t = n.poll_timeout().unwrap();
    n.handle_timeout(t);
    outputs(&mut n);
    n.handle_message(t + 1, "n2", &msg("n2", 1, Message::VoteReply { granted: true })).unwrap();
    assert!(outputs(&mut n).contains(&Output::Event(Event::ConfirmLeader { term: 1 })));
    n.confirm_leader(t + 1, 1, false).unwrap();
    outputs(&mut n);
    assert!(!n.is_leader());
    assert_eq!((n.term(), n.voted_for()), (1, Some("n1")), "a denial does not clear the vote");
    n.handle_message(t + 2, "n3", &msg("n3", 1, Message::Vote { transfer: false })).unwrap();
    assert!(outputs(&mut n).iter().any(|x| matches!(x, Output::Send { bytes, .. }
        if wire::decode(bytes, None).unwrap().message == Message::VoteReply { granted: false })));
    assert_eq!(n.confirm_leader(t + 3, 1, true), Err(Error::NoPendingConfirm { term: 1 }));
}

#[test]
fn pre_vote_and_leader_stickiness() {
    let mut n = lone(|c| c);
    // n2 leads term 3 and was just heard from.
    n.handle_message(100, "n2", &msg("n2", 3, Message::Heartbeat { sent_at: 5 })).unwrap();
    outputs(&mut n);
    // n3 asks for a pre-vote and a vote for term 4 within election_timeout_min: both refused, and
    // the term is not adopted.
    n.handle_message(120, "n3", &msg("n3", 4, Message::PreVote)).unwrap();
    n.handle_message(121, "n3", &msg("n3", 4, Message::Vote { transfer: false })).unwrap();
    let o = outputs(&mut n);
    let replies: Vec<_> = o
        .iter()
        .filter_map(|x| match x {
            Output::Send { bytes, .. } => Some(wire::decode(bytes, None).unwrap()),
            _ => None,
        })
        .collect();
    assert_eq!(replies[0].message, Message::PreVoteReply { granted: false });
    assert_eq!(replies[1].message, Message::VoteReply { granted: false });
    assert_eq!(n.term(), 3, "a sticky follower does not adopt the candidate's term");
    assert_eq!(n.leader(), Some("n2"));
    // After election_timeout_min without the leader, the pre-vote is granted (term unchanged).
    n.handle_message(251, "n3", &msg("n3", 4, Message::PreVote)).unwrap();
    let o = outputs(&mut n);
    assert!(o.iter().any(|x| matches!(x, Output::Send { bytes, .. }
        if wire::decode(bytes, None).unwrap().message == Message::PreVoteReply { granted: true })));
    assert_eq!(n.term(), 3);
}

/// Elects, then cuts one follower off from everyone until t = 5 s: (leader, its term, the loner).
fn isolate_a_follower_for_4s(h: &mut Harness) -> (String, u64, String) {
    h.run_until(1_000);
    let leader = h.leader();
    let term = h.nodes[&leader].term();
    let loner = h.others(&leader)[0].clone();
    let rest: Vec<String> = h.others(&loner);
    h.partition(std::slice::from_ref(&loner), &rest);
    h.run_until(5_000);
    (leader, term, loner)
}

#[test]
fn a_cut_off_node_that_rejoins_does_not_depose_a_healthy_leader() {
    let mut h = Harness::new(5);
    let (leader, term, loner) = isolate_a_follower_for_4s(&mut h);
    // With pre-vote the isolated node never got a pre-vote quorum, so its term did not inflate.
    assert_eq!(h.nodes[&loner].term(), term);
    h.heal();
    h.run_until(6_000);
    assert_eq!(h.leader(), leader);
    assert_eq!(h.nodes[&leader].term(), term);
}

#[test]
fn without_pre_vote_a_rejoining_node_inflates_the_term_and_deposes_the_leader() {
    let mut h = Harness::with(5, |c| c.pre_vote(false));
    let (_leader, term, loner) = isolate_a_follower_for_4s(&mut h);
    assert!(h.nodes[&loner].term() > term + 5, "without pre-vote the loner's term climbs");
    h.heal();
    h.run_until(8_000);
    // The leader learns the higher term from the loner's messages and loses its term.
    assert!(h.nodes[&h.leader()].term() > term);
}

#[test]
fn two_leaders_can_never_demote_each_other_in_one_term() {
    // Within scope two leaders of one term cannot exist. Outside it (here: two single-node views
    // that then meet) they can, and they must neither demote each other nor both stay: exactly
    // one yields, the one with the greater id.
    let solo = |id: &str| {
        let c = Config::new(id, "test").min_cluster_size(1).confirm_leader(false).admit_unknown_peers(true);
        let mut n = Node::new(c, 1, None, 0).unwrap();
        let t = n.poll_timeout().unwrap();
        n.handle_timeout(t);
        outputs(&mut n);
        assert!(n.is_leader());
        n
    };
    let (mut a, mut b) = (solo("n1"), solo("n2"));
    assert_eq!((a.term(), b.term()), (1, 1));
    a.handle_message(400, "n2", &msg("n2", 1, Message::Heartbeat { sent_at: 1 })).unwrap();
    b.handle_message(400, "n1", &msg("n1", 1, Message::Heartbeat { sent_at: 1 })).unwrap();
    assert!(a.is_leader(), "the smaller id keeps leading");
    assert!(!b.is_leader(), "the greater id yields");
    assert_eq!(b.leader(), Some("n1"));
    assert!(outputs(&mut b).contains(&Output::Event(Event::BecameFollower { term: 1, leader: Some("n1".into()) })));

    let mut h = Harness::new(3);
    h.run_until(1_000);
    let leader = h.leader();
    let term = h.nodes[&leader].term();
    let other = h.others(&leader)[0].clone();
    let now = h.now;
    // A stale leader learns the higher term from any message and steps down.
    h.node(&leader).handle_message(now, &other, &msg(&other, term + 1, Message::HeartbeatAck { echo: 1 })).unwrap();
    assert!(!h.nodes[&leader].is_leader());
    assert_eq!(h.nodes[&leader].term(), term + 1);
}

#[test]
fn confirm_leader_backoff_grows_and_resets() {
    let mut n = Node::new(Config::new("n1", "test").bootstrap(ids(1)).min_cluster_size(1), 3, None, 0).unwrap();
    let mut gaps = Vec::new();
    let mut now;
    for _ in 0..3 {
        now = n.poll_timeout().unwrap();
        n.handle_timeout(now);
        let o = outputs(&mut n);
        let term = o
            .iter()
            .find_map(|x| match x {
                Output::Event(Event::ConfirmLeader { term }) => Some(*term),
                _ => None,
            })
            .expect("a single-node cluster wins at once");
        n.confirm_leader(now, term, false).unwrap();
        outputs(&mut n);
        gaps.push(n.poll_timeout().unwrap() - now);
    }
    // election_timeout_max (300) × n, plus jitter below 150.
    assert!((300..450).contains(&gaps[0]), "{gaps:?}");
    assert!((600..750).contains(&gaps[1]), "{gaps:?}");
    assert!((900..1050).contains(&gaps[2]), "{gaps:?}");
    assert_eq!(n.inspect().confirm_denied, 3);
    now = n.poll_timeout().unwrap();
    n.handle_timeout(now);
    let term = n.term();
    outputs(&mut n);
    n.confirm_leader(now, term, true).unwrap();
    assert!(n.is_leader());
    assert_eq!(n.inspect().confirm_denied, 0, "a grant resets the backoff");
}

#[test]
fn a_failed_became_leader_handler_rolls_leadership_back() {
    let mut n = Node::new(Config::new("n1", "test").min_cluster_size(1).confirm_leader(false), 3, None, 0).unwrap();
    let now = n.poll_timeout().unwrap();
    n.handle_timeout(now);
    let o = outputs(&mut n);
    assert!(o.contains(&Output::Event(Event::BecameLeader { term: 1 })));
    n.leader_handler_failed(now, 1).unwrap();
    assert!(!n.is_leader());
    assert_eq!(outputs(&mut n), vec![Output::Event(Event::BecameFollower { term: 1, leader: None })]);
    assert_eq!(n.leader_handler_failed(now, 1), Err(Error::NotLeaderInTerm { term: 1 }));
    assert!(n.poll_timeout().unwrap() >= now + 300, "re-campaigns only after the backoff");
}

#[test]
fn a_held_node_campaigns_last_but_still_leads_when_nobody_else_does() {
    // A leader whose work keeps failing hands over and holds its campaigns: when the leader that
    // followed it dies, the third member leads next, not the held one.
    let mut h = Harness::new(3);
    h.run_until(1_000);
    let failed = h.leader();
    let t0 = h.now;
    let term = h.nodes[&failed].term();
    h.node(&failed).hold_campaigns(t0, t0 + 60_000);
    h.node(&failed).leader_handler_failed(t0, term).unwrap();
    h.drain(&failed);
    h.run_until(t0 + 3_000);
    let second = h.leader();
    assert_ne!(second, failed);
    h.down.insert(second.clone());
    let t1 = h.now;
    h.run_until(t1 + 5_000);
    let third = h.leader();
    assert!(third != failed && third != second, "the held node campaigned first: {third} leads");
    let led_late = |h: &Harness, since: u64, id: &str| {
        h.events.iter().any(|(t, n, e)| *t > since && n == id && matches!(e, Event::BecameLeader { .. }))
    };
    assert!(!led_late(&h, t0, &failed), "the held node led again while another member could");
    // Handed leadership explicitly, a held node declines; another member leads instead.
    let t2 = h.now;
    let target = failed.clone();
    h.down.remove(&second);
    h.run_until(t2 + 2_000);
    let leader = h.leader();
    let term = h.nodes[&leader].term();
    assert_ne!(leader, failed);
    let t3 = h.now;
    h.node(&leader).transfer_leadership(t3, &target).unwrap();
    h.drain(&leader);
    h.run_until(t3 + 3_000);
    assert!(!led_late(&h, t3, &failed), "the held node took a transfer");
    assert!(h.nodes[&h.leader()].term() > term, "nobody led after the declined transfer");

    // Every member held (their work fails everywhere): no campaign before the holds end, then one
    // leader all the same. The hold delays leadership; it never ends it for good.
    let mut h = Harness::new(3);
    h.run_until(1_000);
    let leader = h.leader();
    let t0 = h.now;
    let term = h.nodes[&leader].term();
    for id in h.nodes.keys().cloned().collect::<Vec<_>>() {
        h.node(&id).hold_campaigns(t0, t0 + 2_000);
    }
    h.node(&leader).leader_handler_failed(t0, term).unwrap();
    h.drain(&leader);
    h.run_until(t0 + 1_990);
    assert!(h.leaders().is_empty(), "a held node campaigned before its hold ended");
    h.run_until(t0 + 4_000);
    assert_eq!(h.leaders().len(), 1, "nobody led after the holds ended");
    // A lone node: the hold moves its own election deadline.
    let mut n = Node::new(Config::new("n1", "test").min_cluster_size(1).confirm_leader(false), 3, None, 0).unwrap();
    n.hold_campaigns(0, 50_000);
    assert!(n.poll_timeout().unwrap() >= 50_000);
    n.handle_timeout(49_999);
    assert!(!n.is_leader());
    n.handle_timeout(50_000);
    assert!(n.is_leader());
}

#[test]
fn fast_failover_on_reported_death() {
    let mut h = Harness::new(5);
    h.run_until(1_000);
    let leader = h.leader();
    h.down.insert(leader.clone());
    let t0 = h.now;
    for id in h.others(&leader) {
        h.node(&id).peer_down(t0, &leader, PeerDownReason::Terminated).unwrap();
        h.drain(&id);
    }
    h.run_until(t0 + 25);
    let new = h.leader();
    assert_ne!(new, leader);
}

#[test]
fn leadership_transfer_hands_over_in_about_one_round_trip() {
    let mut h = Harness::new(5);
    h.run_until(1_000);
    let leader = h.leader();
    let target = h.others(&leader)[2].clone();
    let t0 = h.now;
    assert_eq!(h.node(&leader).transfer_leadership(t0, "nobody"), Err(Error::UnknownPeer { peer: "nobody".into() }));
    h.node(&leader).transfer_leadership(t0, &target).unwrap();
    assert!(!h.nodes[&leader].is_leader(), "the old leader stops leading at once");
    assert!(h.nodes[&leader].transfer_target().is_some_and(|t| t != leader));
    h.run_until(t0 + 4);
    assert_eq!(h.leader(), target);
    let became = h
        .events
        .iter()
        .find(|(t, id, e)| *t >= t0 && *id == target && matches!(e, Event::BecameLeader { .. }))
        .unwrap();
    assert!(became.0 - t0 <= 3, "leaderless for {} ms at 1 ms latency", became.0 - t0);
    let now = h.now;
    assert_eq!(h.node(&target).transfer_leadership(now, "n9"), Err(Error::UnknownPeer { peer: "n9".into() }));
    let other = h.others(&target)[0].clone();
    assert_eq!(h.node(&other).transfer_leadership(now, &target), Err(Error::NotLeader));
}

#[test]
fn transfer_to_an_unresponsive_peer_resumes_after_an_election_timeout() {
    let mut h = Harness::new(3);
    h.run_until(1_000);
    let leader = h.leader();
    let target = h.others(&leader)[0].clone();
    h.down.insert(target.clone());
    let t0 = h.now;
    h.node(&leader).transfer_leadership(t0, &target).unwrap();
    h.run_until(t0 + 800);
    assert_eq!(h.leaders().len(), 1, "the two live nodes elect again");
}

#[test]
fn authenticated_mode_drops_and_counts_messages_without_a_valid_tag() {
    let c = Config::new("n1", "test").bootstrap(ids(3)).key(b"k".to_vec());
    let mut n = Node::new(c, 1, None, 0).unwrap();
    let plain = msg("n2", 5, Message::Heartbeat { sent_at: 1 });
    assert_eq!(n.handle_message(1, "n2", &plain), Err(DropReason::BadMac));
    let wrong = wire::encode(
        &Envelope {
            cluster: "test".into(),
            from: "n2".into(),
            term: 5,
            incarnation: 0,
            message: Message::Heartbeat { sent_at: 1 },
        },
        Some(wire::Auth { key: b"other", receiver: "n1" }),
    )
    .unwrap();
    assert_eq!(n.handle_message(2, "n2", &wrong), Err(DropReason::BadMac));
    assert_eq!(n.term(), 0, "an unauthenticated message changes nothing");
    assert_eq!(n.inspect().dropped("bad_mac").unwrap(), 2);
    // A whole keyed cluster still elects.
    let mut h = Harness::with(3, |c| c.key(b"k".to_vec()));
    h.run_until(1_000);
    h.leader();
}

#[test]
fn a_vote_granted_to_one_candidate_does_not_count_at_another() {
    // n2 and n3 both campaign in term 1. n1's grant to n3, re-sent to n2 from n1's address (an
    // attacker on the path can do that), would make n2 leader too, two leaders in one term: the
    // tag covers the receiver's id, so at n2 it is a bad tag.
    let c = Config::new("n2", "test").bootstrap(ids(3)).key(b"k".to_vec()).pre_vote(false).confirm_leader(false);
    let mut n = Node::new(c, 7, None, 0).unwrap();
    let mut now = 0;
    while n.term() == 0 {
        now = n.poll_timeout().expect("a follower's election timer runs");
        n.handle_timeout(now);
    }
    assert_eq!((n.role(), n.term()), (Role::Candidate, 1));
    let grant = |receiver| {
        let e = Envelope {
            cluster: "test".into(),
            from: "n1".into(),
            term: 1,
            incarnation: 4,
            message: Message::VoteReply { granted: true },
        };
        wire::encode(&e, Some(Auth { key: b"k", receiver })).unwrap()
    };
    assert_eq!(n.handle_message(now + 1, "n1", &grant("n3")), Err(DropReason::BadMac));
    assert_eq!(n.role(), Role::Candidate, "a grant made for n3 does not elect n2");
    // The same grant made for n2 does.
    n.handle_message(now + 2, "n1", &grant("n2")).unwrap();
    assert_eq!(n.role(), Role::Leader);
}

#[test]
fn wrong_cluster_garbage_and_spoofed_senders_are_dropped_and_counted() {
    let mut n = lone(|c| c);
    let other = wire::encode(
        &Envelope { cluster: "other".into(), from: "n2".into(), term: 5, incarnation: 0, message: Message::TimeoutNow },
        None,
    )
    .unwrap();
    assert_eq!(n.handle_message(1, "n2", &other), Err(DropReason::WrongCluster));
    assert_eq!(n.handle_message(1, "n2", b"hello"), Err(DropReason::Malformed));
    assert_eq!(n.handle_message(1, "n3", &msg("n2", 1, Message::TimeoutNow)), Err(DropReason::SenderMismatch));
    assert_eq!(n.handle_message(1, "n1", &msg("n1", 1, Message::TimeoutNow)), Err(DropReason::FromSelf));
    let i = n.inspect();
    assert_eq!(i.dropped("wrong_cluster").unwrap(), 1);
    assert_eq!(i.dropped("malformed").unwrap(), 1);
    assert_eq!(i.dropped("sender_mismatch").unwrap(), 1);
    assert_eq!(i.view_size, 3, "dropped messages never admit a peer");
}

#[test]
fn transfer_target_is_the_freshest_answered_peer() {
    let mut n = lone(|c| c);
    assert_eq!(n.transfer_target(), None, "nobody has answered yet");
    n.handle_message(5, "n3", &msg("n3", 0, Message::PreVoteReply { granted: false })).unwrap();
    n.handle_message(9, "n2", &msg("n2", 0, Message::PreVoteReply { granted: false })).unwrap();
    assert_eq!(n.transfer_target(), Some("n2"));
    n.peer_down(10, "n2", PeerDownReason::NoConnection).unwrap();
    assert_eq!(n.transfer_target(), Some("n3"));
    // A peer whose port refused, or whose runtime said it stops, is no target until heard again.
    n.peer_down(11, "n3", PeerDownReason::Refused).unwrap();
    assert_eq!(n.transfer_target(), None);
    n.handle_message(12, "n3", &msg("n3", 0, Message::PreVoteReply { granted: false })).unwrap();
    assert_eq!(n.transfer_target(), Some("n3"));
    // Heard at the same instant (either order): the smaller id.
    n.handle_message(12, "n2", &msg("n2", 0, Message::PreVoteReply { granted: false })).unwrap();
    assert_eq!(n.transfer_target(), Some("n2"), "a tie goes to the smaller id");
    let long = "x".repeat(300);
    let e = Node::new(Config::new("n1", "t"), 1, Some(DurableState { term: 1, voted_for: Some(long) }), 0).unwrap_err();
    assert_eq!(e.code(), "id_too_long");
}

/// A rolling stop: a follower stopped a moment ago must not be handed leadership. The leader
/// picks only a peer that acknowledged one of its last two heartbeat rounds, and never one
/// reported refused (a stopping runtime says so as it goes).
#[test]
fn a_leader_hands_over_only_to_a_peer_that_answers() {
    let mut h = Harness::new(3);
    h.run_until(1_000);
    let leader = h.leader();
    let others = h.others(&leader);
    let (gone, live) = (others[0].clone(), others[1].clone());
    // `gone` stops answering (cut off), and is the freshest answerer at first.
    h.partition(std::slice::from_ref(&gone), &[leader.clone(), live.clone()]);
    let now = h.now;
    assert!(h.node(&leader).transfer_target().is_some());
    // Past two heartbeat rounds (its last acknowledged heartbeat may have left just before the
    // cut) only `live` qualifies.
    h.run_until(now + 3 * 50 + 10);
    assert_eq!(h.node(&leader).transfer_target(), Some(live.as_str()));
    // Reported refused (a goodbye, or a refused port): not even a fresh answerer qualifies.
    let now = h.now;
    h.node(&leader).peer_down(now, &live, PeerDownReason::Refused).unwrap();
    assert_eq!(h.node(&leader).transfer_target(), None);
}

#[test]
fn view_is_self_and_peers_sorted() {
    let n = Node::new(Config::new("n2", "test").bootstrap(["n3", "n1", "n0"]), 1, None, 0).unwrap();
    assert_eq!(n.view(), ["n0", "n1", "n2", "n3"]);
    let n = Node::new(Config::new("z", "test").bootstrap(["a"]), 1, None, 0).unwrap();
    assert_eq!(n.view(), ["a", "z"]);
}

#[test]
fn fence_checker_accepts_newer_refuses_stale_and_same_term_other_leader() {
    let mut f = FenceChecker::new();
    assert_eq!(f.check(2, "a"), FenceVerdict::Accepted);
    assert_eq!(f.check(2, "a"), FenceVerdict::Accepted);
    assert_eq!(f.check(1, "a"), FenceVerdict::Stale);
    assert_eq!(f.check(2, "b"), FenceVerdict::AlreadyFenced);
    assert_eq!(f.check(3, "b"), FenceVerdict::Accepted);
    assert_eq!(f.highest(), Some((3, "b")));
}

#[test]
fn unclustered_below_min_cluster_size_and_clustered_again_above_it() {
    let mut n = Node::new(Config::new("n1", "test").bootstrap(["n2"]), 1, None, 0).unwrap();
    assert_eq!(n.role(), Role::Unclustered);
    assert_eq!(n.poll_timeout(), None, "an unclustered node does not campaign");
    n.join(5, "n3").unwrap();
    assert_eq!(n.role(), Role::Follower);
    let o = outputs(&mut n);
    assert_eq!(o[0], Output::Event(Event::PeerJoined { peer: "n3".into() }));
    assert_eq!(o[1], Output::Event(Event::BecameFollower { term: 0, leader: None }));
    n.leave(6, "n3").unwrap();
    assert_eq!(n.role(), Role::Unclustered);
    // A leader whose view shrinks below the floor stops leading.
    let mut h = Harness::new(3);
    h.run_until(1_000);
    let leader = h.leader();
    let now = h.now;
    for p in h.others(&leader) {
        h.node(&leader).leave(now, &p).unwrap();
    }
    h.drain(&leader);
    assert_eq!(h.nodes[&leader].role(), Role::Unclustered);
    assert!(h.events_of(&leader).contains(&Event::BecameFollower { term: h.nodes[&leader].term(), leader: None }));
}

#[test]
fn leave_is_sticky_for_one_election_timeout() {
    let mut n = lone(|c| c);
    n.leave(100, "n3").unwrap();
    assert_eq!(n.view_size(), 2);
    let hb = msg("n3", 1, Message::Heartbeat { sent_at: 1 });
    assert_eq!(n.handle_message(200, "n3", &hb), Err(DropReason::RemovedPeer));
    assert_eq!(n.view_size(), 2, "traffic in flight does not re-admit a peer that left");
    assert_eq!(n.handle_message(401, "n3", &hb), Err(DropReason::UnknownPeer), "membership is closed");
    n.join(402, "n3").unwrap();
    n.handle_message(403, "n3", &msg("n3", 1, Message::Heartbeat { sent_at: 2 })).unwrap();
    assert_eq!(n.view_size(), 3, "an explicit join brings it back");
    assert_eq!(n.leave(402, "zz"), Err(Error::UnknownPeer { peer: "zz".into() }));
    assert_eq!(n.leave(402, "n1"), Err(Error::SelfPeer));
    assert_eq!(n.join(402, ""), Err(Error::InvalidPeer { peer: String::new() }));
}

#[test]
fn ghost_ttl_keeps_quorum_on_no_connection_and_terminated_shrinks_at_once() {
    let mut n = Node::new(Config::new("n1", "test").bootstrap(ids(5)), 1, None, 0).unwrap();
    n.peer_down(10, "n2", PeerDownReason::NoConnection).unwrap();
    assert_eq!((n.view_size(), n.quorum()), (5, 3), "silence never shrinks the view inside the TTL");
    assert_eq!(n.inspect().send_failing_peers, vec!["n2".to_string()]);
    n.handle_timeout(5_009);
    assert_eq!(n.view_size(), 5);
    n.handle_timeout(5_010);
    assert_eq!((n.view_size(), n.quorum()), (4, 3), "dropped when the TTL runs out");
    n.peer_down(5_011, "n3", PeerDownReason::Terminated).unwrap();
    assert_eq!((n.view_size(), n.quorum()), (3, 2));
    // A ghost that speaks again stays.
    n.peer_down(6_000, "n4", PeerDownReason::NoConnection).unwrap();
    n.handle_message(6_001, "n4", &msg("n4", 0, Message::PreVoteReply { granted: false })).unwrap();
    n.handle_timeout(20_000);
    assert_eq!(n.view_size(), 3);
}

#[test]
fn heartbeats_go_to_peers_that_answered_probes_to_the_rest_and_votes_to_every_declared_peer() {
    let mut n = Node::new(Config::new("n1", "test").bootstrap(ids(3)).confirm_leader(false), 1, None, 0).unwrap();
    n.join(0, "n4").unwrap();
    n.join(0, "n5").unwrap();
    outputs(&mut n);
    let t = n.poll_timeout().unwrap();
    n.handle_timeout(t);
    let o = outputs(&mut n);
    let to: Vec<_> = sent_kinds(&o).into_iter().map(|(to, k, _)| (to, k)).collect();
    assert_eq!(to.len(), 4, "pre-votes go to every declared peer: {to:?}");
    for p in ["n2", "n3", "n4"] {
        n.handle_message(t + 1, p, &msg(p, 1, Message::PreVoteReply { granted: true })).unwrap();
    }
    outputs(&mut n);
    for p in ["n2", "n3"] {
        n.handle_message(t + 2, p, &msg(p, 1, Message::VoteReply { granted: true })).unwrap();
    }
    assert!(n.is_leader());
    let o = outputs(&mut n);
    let mut hb: Vec<_> =
        sent_kinds(&o).into_iter().filter(|(_, k, _)| *k == "heartbeat").map(|(to, _, _)| to).collect();
    hb.sort();
    assert_eq!(hb, ["n2", "n3", "n4", "n5"], "the first heartbeat of a leadership probes every peer");
    // The next tick, within election_timeout_min: only peers that answered.
    let t2 = n.poll_timeout().unwrap();
    for p in ["n2", "n3"] {
        n.handle_message(t2 - 1, p, &msg(p, 1, Message::HeartbeatAck { echo: t + 2 })).unwrap();
    }
    n.handle_timeout(t2);
    let o = outputs(&mut n);
    let mut hb: Vec<_> =
        sent_kinds(&o).into_iter().filter(|(_, k, _)| *k == "heartbeat").map(|(to, _, _)| to).collect();
    hb.sort();
    assert_eq!(hb, ["n2", "n3", "n4"], "n5 never answered: no heartbeat until the next probe");
}

#[test]
fn became_follower_fires_on_every_transition_with_the_right_leader() {
    let mut h = Harness::new(3);
    h.run_until(1_000);
    let leader = h.leader();
    let term = h.nodes[&leader].term();
    for f in h.others(&leader) {
        assert!(h.events_of(&f).contains(&Event::BecameFollower { term, leader: Some(leader.clone()) }));
    }
    // A leader demoted by a higher term: follower with no leader known.
    let other = h.others(&leader)[0].clone();
    let now = h.now;
    h.node(&leader).handle_message(now, &other, &msg(&other, term + 5, Message::VoteReply { granted: false })).unwrap();
    h.drain(&leader);
    assert_eq!(h.events_of(&leader).last(), Some(&Event::BecameFollower { term: term + 5, leader: None }));
    // A candidate standing down for a leader's heartbeat names that leader.
    let mut n = lone(|c| c.pre_vote(false));
    let t = n.poll_timeout().unwrap();
    n.handle_timeout(t);
    assert_eq!(n.role(), Role::Candidate);
    outputs(&mut n);
    n.handle_message(t + 1, "n2", &msg("n2", 1, Message::Heartbeat { sent_at: 0 })).unwrap();
    let o = outputs(&mut n);
    assert_eq!(o[0], Output::Event(Event::BecameFollower { term: 1, leader: Some("n2".into()) }));
}

#[test]
fn persist_comes_before_every_send_that_depends_on_it() {
    let mut n = lone(|c| c.durable(true).pre_vote(false));
    let t = n.poll_timeout().unwrap();
    n.handle_timeout(t);
    let o = outputs(&mut n);
    assert_eq!(o[0], Output::Persist(DurableState { term: 1, voted_for: Some("n1".into()) }));
    assert!(o[1..].iter().all(|x| matches!(x, Output::Send { .. })));
}

#[test]
fn lease_deadline_comes_from_acknowledged_heartbeats() {
    let mut h = Harness::new(3);
    h.run_until(1_000);
    let leader = h.leader();
    let lease = h.nodes[&leader].lease_deadline().expect("a leader with acks has a lease");
    let last_out = h.nodes[&leader].inspect().heartbeat_out_last.unwrap();
    let span = h.nodes[&leader].config().lease_span;
    assert_eq!(span, 146, "election_timeout_min less the 1 % clock-drift margin, twice");
    assert!(lease <= last_out + span && lease >= last_out + span - 50, "lease {lease}, last heartbeat {last_out}");
    assert_eq!(h.nodes[&leader].fencing_token(), Some(h.nodes[&leader].term()));
    let f = h.others(&leader)[0].clone();
    assert_eq!(h.nodes[&f].lease_deadline(), None);
    assert_eq!(h.nodes[&f].fencing_token(), None);
}

#[test]
fn broadcast_reaches_every_member() {
    let mut h = Harness::new(4);
    h.run_until(500);
    let now = h.now;
    h.node("n2").broadcast(now, b"hello").unwrap();
    h.run_until(now + 5);
    for id in ["n1", "n3", "n4"] {
        assert!(h.events_of(id).contains(&Event::Message { from: "n2".into(), payload: b"hello".to_vec() }));
    }
    let big = vec![0u8; 70_000];
    assert!(matches!(h.node("n1").broadcast(now, &big), Err(Error::PayloadTooLarge { .. })));
}

#[test]
fn handle_timeout_early_or_twice_is_harmless() {
    let mut a = lone(|c| c);
    let mut b = lone(|c| c);
    let t = a.poll_timeout().unwrap();
    a.handle_timeout(t - 1);
    a.handle_timeout(t);
    a.handle_timeout(t);
    b.handle_timeout(t);
    assert_eq!(outputs(&mut a), outputs(&mut b));
    assert_eq!(a.poll_timeout(), b.poll_timeout());
}

#[test]
fn a_minority_leader_steps_down_while_the_majority_elects() {
    let mut h = Harness::new(5);
    h.run_until(1_000);
    let leader = h.leader();
    let others = h.others(&leader);
    let minority = vec![leader.clone(), others[0].clone()];
    let majority: Vec<String> = others[1..].to_vec();
    h.partition(&minority, &majority);
    let t0 = h.now;
    h.run_until(t0 + 1_000);
    assert!(!h.nodes[&leader].is_leader());
    let majority_leaders: Vec<_> = h.leaders().into_iter().filter(|l| majority.contains(l)).collect();
    assert_eq!(majority_leaders.len(), 1);
    h.heal();
    h.run_until(t0 + 2_000);
    h.leader();
    assert!(h.leaders_by_term().values().all(|s| s.len() == 1));
}

/// The failover bound L1 of docs/protocol.md for this harness (1 ms one way, no drift): five
/// election rounds of `election_timeout_max` plus a pre-vote and a vote round trip.
const L1_FAILOVER_MS: u64 = 1 + 5 * (300 + 2 * 2);

#[test]
fn a_repeated_vote_grant_restarts_no_election_timer_so_replayed_requests_cannot_hold_a_cluster_leaderless() {
    // Three nodes with a key, default timings. The leader dies silently at 1000 ms; a recorder
    // that kept its genuine `Vote` requests of the term it leads sends them again, byte for byte,
    // to each follower every 50 ms. Each follower voted for it in that term, so it grants them
    // again — and a grant that restarted the election timer would keep every follower from ever
    // timing out.
    let mut h = Harness::with(3, |c| c.key(b"cluster secret".to_vec()));
    h.run_until(1_000);
    let dead = h.leader();
    let term = h.nodes[&dead].term();
    let requests: Vec<(String, Vec<u8>)> = h
        .wire
        .iter()
        .filter(|(_, from, to, bytes)| {
            let auth = Auth { key: b"cluster secret", receiver: to };
            *from == dead
                && matches!(wire::decode(bytes, Some(auth)), Ok(e) if e.term == term && matches!(e.message, Message::Vote { .. }))
        })
        .map(|(_, _, to, bytes)| (to.clone(), bytes.clone()))
        .collect();
    assert_eq!(requests.len(), 2, "the leader's campaign asked both followers");
    h.down.insert(dead.clone());
    let crash = h.now;
    for k in 1..=60 {
        for (to, bytes) in &requests {
            h.in_flight.push((crash + 50 * k, dead.clone(), to.clone(), bytes.clone()));
        }
    }
    let mut elected = None;
    for t in crash + 1..=crash + 3_000 {
        h.run_until(t);
        if let Some(l) = h.leaders().into_iter().find(|l| *l != dead) {
            elected = Some((t, l));
            break;
        }
    }
    let (at, new) = elected.expect("a new leader despite the replayed vote requests");
    assert!(at - crash <= L1_FAILOVER_MS, "{new} leads {} ms after the crash (bound {L1_FAILOVER_MS})", at - crash);
    assert!(h.nodes[&new].term() > term);
    // The replays were granted (same candidate, same term) until the followers moved on: the
    // vote itself is unchanged; only the timer is not restarted for it.
    let regrants = h
        .wire
        .iter()
        .filter(|(t, from, to, bytes)| {
            *t > crash
                && *to == dead
                && *from != dead
                && h.nodes[to].decode_message(bytes).is_ok_and(|e| e.message == Message::VoteReply { granted: true })
        })
        .count();
    assert!(regrants > 0, "the replays reached followers still in the dead leader's term");
}

#[test]
fn check_quorum_holds_from_a_leaderships_first_moment_even_when_confirmed_late() {
    // n1 campaigns at t0 (pre-vote off for brevity) and n2's vote arrives 1 ms later: the vote is
    // evidence dated t0, when the campaign asked for it. Check quorum allows evidence up to
    // election_timeout_min (150 ms) old at each tick, one heartbeat interval (50 ms) apart: a
    // leader never leads more than 200 ms after its last evidence.
    let start = |confirm_after: u64| {
        let mut n = Node::new(Config::new("n1", "test").bootstrap(ids(3)).pre_vote(false), 1, None, 0).unwrap();
        let t0 = n.poll_timeout().unwrap();
        n.handle_timeout(t0);
        outputs(&mut n);
        n.handle_message(t0 + 1, "n2", &msg("n2", 1, Message::VoteReply { granted: true })).unwrap();
        assert!(outputs(&mut n).contains(&Output::Event(Event::ConfirmLeader { term: 1 })));
        let at = t0 + 1 + confirm_after;
        n.confirm_leader(at, 1, true).unwrap();
        let o = outputs(&mut n);
        (n, t0, at, o)
    };
    // Confirmed 220 ms after the winning vote: the evidence is already older than the window, so
    // the winner does not lead at all (no BecameLeader, no heartbeat) and follows again.
    let (n, _, _, o) = start(220);
    assert!(!n.is_leader(), "a leadership confirmed late must not start on stale evidence");
    assert!(!o.iter().any(|x| matches!(x, Output::Event(Event::BecameLeader { .. }))));
    assert!(o.contains(&Output::Event(Event::BecameFollower { term: 1, leader: None })));
    assert!(sent_kinds(&o).is_empty(), "no heartbeat leaves");
    assert_eq!((n.term(), n.voted_for(), n.role()), (1, Some("n1"), Role::Follower), "the vote stays");
    // Confirmed 140 ms after it: the evidence is fresh, it leads; with no acknowledgement ever
    // coming back it steps down within election_timeout_min + heartbeat_interval of t0.
    let (mut n, t0, at, o) = start(140);
    assert!(n.is_leader() && o.contains(&Output::Event(Event::BecameLeader { term: 1 })));
    let mut now = at;
    while n.is_leader() {
        now = n.poll_timeout().unwrap();
        assert!(now <= t0 + 150 + 50, "still leading at {now}, last evidence at {t0}");
        n.handle_timeout(now);
        outputs(&mut n);
    }
    assert!(now <= t0 + 150 + 50, "stepped down at {now}, last evidence at {t0}");
}
