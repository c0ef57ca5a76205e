//! Rules of fast failover when a leader's port refuses (`peer_down(peer, Refused)`) and
//! of the configurable lease (`lease_duration`). Test names are the rules; each is listed with its
//! scope in docs/protocol.md, "Failover when the leader's port refuses".

mod common;

use common::{ids, Harness};
use tenure::wire::{self, Envelope, Message};
use tenure::{Config, ConfigError, Event, Node, Output, PeerDownReason, Role};

const INC: u64 = 7;

fn msg(from: &str, term: u64, message: Message) -> Vec<u8> {
    wire::encode(&Envelope { cluster: "test".into(), from: from.into(), term, incarnation: INC, message }, None)
        .expect("fits")
}

fn outputs(node: &mut Node) -> Vec<Output> {
    std::iter::from_fn(|| node.poll_output()).collect()
}

fn events(outs: &[Output]) -> Vec<Event> {
    outs.iter()
        .filter_map(|o| match o {
            Output::Event(e) => Some(e.clone()),
            _ => None,
        })
        .collect()
}

fn sent(outs: &[Output]) -> Vec<(String, Message)> {
    outs.iter()
        .filter_map(|o| match o {
            Output::Send { to, bytes } => Some((to.clone(), wire::decode(bytes, None).expect("decodes").message)),
            _ => None,
        })
        .collect()
}

fn granted_vote(outs: &[Output]) -> Option<bool> {
    sent(outs).into_iter().find_map(|(_, m)| match m {
        Message::VoteReply { granted } => Some(granted),
        _ => None,
    })
}

/// The fast profile used below: heartbeats every 20 ms, a 60 ms lease promise.
fn fast(c: Config) -> Config {
    c.heartbeat_interval(20).lease_duration(60)
}

/// `id` in the view n1..n`size`, past its boot promise, following n2 in term 1 after a heartbeat
/// at `t` (which it acknowledged).
fn follower_of_n2(id: &str, size: usize, t: u64) -> Node {
    let c = fast(Config::new(id, "test").bootstrap(ids(size)).confirm_leader(false));
    let mut n = Node::new(c, 3, None, 0).expect("valid");
    n.handle_message(t, "n2", &msg("n2", 1, Message::Heartbeat { sent_at: t })).unwrap();
    outputs(&mut n);
    assert_eq!(n.leader(), Some("n2"));
    n
}

#[test]
fn a_refused_leader_is_abandoned_when_the_promise_ends_not_after_an_election_timeout() {
    let mut n = follower_of_n2("n1", 3, 1_000);
    assert_eq!(n.promise_until(), 1_060, "the acknowledgement promised lease_duration");
    assert!(n.poll_timeout().unwrap() >= 1_150, "without a report: a full election timeout");
    n.peer_down(1_030, "n2", PeerDownReason::Refused).unwrap();
    let at = n.poll_timeout().unwrap();
    // n1 ranks first among the survivors {n1, n3}: its slot starts when the promise ends.
    assert!((1_060..=1_065).contains(&at), "campaign at the end of the promise, got {at}");
    assert!(events(&outputs(&mut n)).is_empty(), "nothing visible yet");
    n.handle_timeout(at);
    let out = outputs(&mut n);
    assert!(sent(&out).iter().any(|(to, m)| to == "n3" && *m == Message::PreVote), "pre-votes go out");
}

#[test]
fn survivors_of_a_refused_leader_campaign_in_rank_order() {
    let mut first = follower_of_n2("n1", 5, 1_000);
    let mut third = follower_of_n2("n4", 5, 1_000);
    first.peer_down(1_030, "n2", PeerDownReason::Refused).unwrap();
    third.peer_down(1_030, "n2", PeerDownReason::Refused).unwrap();
    let slot = 15; // election_timeout_min / 10
    let (a, b) = (first.poll_timeout().unwrap(), third.poll_timeout().unwrap());
    // n4's rank among the survivors n1, n3, n4, n5 (without the dead n2) is 2.
    assert!(a < 1_060 + slot && b >= 1_060 + 2 * slot, "n1 at {a}, n4 at {b}");
}

#[test]
fn a_refused_report_about_a_live_leader_changes_nothing_visible() {
    let mut n = follower_of_n2("n1", 3, 1_000);
    n.peer_down(1_030, "n2", PeerDownReason::Refused).unwrap();
    // The leader was alive after all: its next heartbeat arrives before this node campaigns.
    n.handle_message(1_040, "n2", &msg("n2", 1, Message::Heartbeat { sent_at: 1_040 })).unwrap();
    let out = outputs(&mut n);
    assert!(events(&out).is_empty(), "no event: {:?}", events(&out));
    assert_eq!((n.role(), n.term(), n.leader()), (Role::Follower, 1, Some("n2")));
    assert!(n.poll_timeout().unwrap() >= 1_040 + 150, "back to a full election timeout");
    // And a pre-vote from a peer is refused again (stickiness is back).
    n.handle_message(1_200 - 100, "n3", &msg("n3", 2, Message::PreVote)).unwrap();
    assert!(sent(&outputs(&mut n)).contains(&("n3".into(), Message::PreVoteReply { granted: false })));
}

#[test]
fn a_refused_report_never_releases_the_lease_promise() {
    let mut n = follower_of_n2("n1", 3, 1_000);
    n.peer_down(1_001, "n2", PeerDownReason::Refused).unwrap();
    // Stickiness ended, but the promise made with the acknowledgement at 1 000 still binds.
    n.handle_message(1_010, "n3", &msg("n3", 2, Message::Vote { transfer: false })).unwrap();
    assert_eq!(granted_vote(&outputs(&mut n)), Some(false), "inside the promise");
    n.handle_message(1_060, "n3", &msg("n3", 3, Message::Vote { transfer: false })).unwrap();
    assert_eq!(granted_vote(&outputs(&mut n)), Some(true), "once it ran out");
}

#[test]
fn a_refused_pre_vote_is_retried_one_slot_later_while_the_leader_stays_silent() {
    let mut n = follower_of_n2("n1", 3, 1_000);
    n.peer_down(1_030, "n2", PeerDownReason::Refused).unwrap();
    let at = n.poll_timeout().unwrap();
    n.handle_timeout(at);
    outputs(&mut n);
    // n3 has not learned of the death yet: it refuses; n1 asks again one slot later.
    n.handle_message(at + 1, "n3", &msg("n3", 1, Message::PreVoteReply { granted: false })).unwrap();
    assert_eq!(n.poll_timeout(), Some(at + 15));
    // Without a report the retry waits a full election timeout.
    let mut m = follower_of_n2("n1", 3, 1_000);
    let t = m.poll_timeout().unwrap();
    m.handle_timeout(t);
    assert!(m.poll_timeout().unwrap() >= t + 150);
}

#[test]
fn a_refused_report_about_a_follower_or_received_by_a_leader_changes_nothing() {
    let mut n = follower_of_n2("n1", 3, 1_000);
    let before = n.poll_timeout();
    n.peer_down(1_030, "n3", PeerDownReason::Refused).unwrap();
    assert_eq!(n.poll_timeout(), before);
    assert_eq!(n.view().len(), 3, "a refused peer stays a member");
    assert!(n.inspect().unreachable.is_empty(), "and gets no ghost timer");
}

#[test]
fn a_no_connection_report_shows_the_peer_as_unreachable_until_its_ghost_ttl_ends_in_id_order() {
    let c = fast(Config::new("n1", "test").bootstrap(ids(4)).confirm_leader(false).ghost_ttl(900));
    let mut n = Node::new(c, 3, None, 0).expect("valid");
    n.peer_down(1_000, "n4", PeerDownReason::NoConnection).unwrap();
    n.peer_down(1_050, "n3", PeerDownReason::NoConnection).unwrap();
    let i = n.inspect();
    assert_eq!(i.unreachable_until("n3"), Some(1_950));
    assert_eq!(i.unreachable_until("n4"), Some(1_900));
    assert_eq!(i.unreachable_until("n2"), None, "a peer nobody reported");
    let order: Vec<&str> = i.unreachable.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(order, ["n3", "n4"], "sorted by id, as the map it serializes to");
}

#[test]
fn a_cluster_fails_over_within_the_promise_plus_a_few_round_trips_when_every_survivor_hears_the_refusal() {
    let mut h = Harness::with(5, fast);
    h.run_until(2_000);
    let leader = h.leader();
    let term = h.nodes[&leader].term();
    h.down.insert(leader.clone());
    let killed = h.now;
    // Each survivor's runtime probes the silent leader (after 1.5 heartbeat intervals) and
    // reports the refusal.
    h.run_until(killed + 30);
    let survivors = h.others(&leader);
    for s in &survivors {
        let now = h.now;
        h.node(s).peer_down(now, &leader, PeerDownReason::Refused).unwrap();
    }
    let mut t = h.now;
    while h.leaders().is_empty() && t < killed + 400 {
        t += 1;
        h.run_until(t);
    }
    let l = h.leader();
    assert!(h.nodes[&l].term() > term);
    // Promise 60 ms from the last acknowledgement (≤ killed), then a few 1 ms round trips.
    assert!(t - killed <= 60 + 10, "failover took {} ms", t - killed);
}

#[test]
fn lease_duration_sets_the_promise_and_the_lease_span() {
    let c = fast(Config::new("n1", "test").bootstrap(ids(3)));
    let v = c.validate().unwrap();
    assert_eq!((v.lease_duration, v.lease_span), (60, 60 - 2 - 1), "60 ms less 2 × 1 % of it, rounded up, less 1 ms");
    let d = Config::new("n1", "test").validate().unwrap();
    assert_eq!(d.lease_duration, 150, "default: election_timeout_min");
    let n = Node::new(c, 1, None, 500).unwrap();
    assert_eq!(n.promise_until(), 560, "the boot promise lasts lease_duration too");
}

#[test]
fn a_lease_longer_than_election_timeout_min_or_not_above_the_heartbeat_is_an_error() {
    let err = |c: Config| c.validate().unwrap_err();
    let e = err(Config::new("a", "c").lease_duration(151));
    assert_eq!(
        e,
        ConfigError::LeaseOutOfRange { lease_duration: 151, heartbeat_interval: 50, election_timeout_min: 150 }
    );
    assert_eq!(e.code(), "lease_out_of_range");
    assert!(e.to_string().contains("lease_duration (151 ms)"), "{e}");
    // 53 ms less its 2 % margin (rounded up: 2 ms) and 1 ms is 50 ms: it would lapse between
    // heartbeats.
    assert!(matches!(err(Config::new("a", "c").lease_duration(53)), ConfigError::LeaseOutOfRange { .. }));
    assert!(Config::new("a", "c").lease_duration(54).validate().is_ok());
    assert_eq!(err(Config::new("a", "c").lease_duration(0)), ConfigError::ZeroTimeout { field: "lease_duration" });
}

#[test]
fn peer_down_reasons_have_one_spelling() {
    for r in PeerDownReason::ALL {
        assert_eq!(PeerDownReason::from_name(r.as_str()), Some(r));
    }
    assert_eq!(PeerDownReason::Refused.as_str(), "refused");
    assert_eq!(PeerDownReason::from_name("gone"), None);
}
