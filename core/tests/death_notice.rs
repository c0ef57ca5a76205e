//! Death notices: a crashed leader's watchdog tells its followers that the leadership ended. Test
//! names are the rules (docs/protocol.md, "Death notices").

mod common;

use common::{ids, Harness, LATENCY};
use tenure::wire::{self, Auth, Envelope, Message, MIN_VERSION};
use tenure::{Config, DropReason, Event, Node, Output, Role};

const KEY: &[u8] = b"cluster-key";

/// A datagram from `from` to "n1" (keyed for "n1" when `key` is given).
fn datagram(from: &str, term: u64, incarnation: u64, message: Message, key: Option<&[u8]>) -> Vec<u8> {
    let e = Envelope { cluster: "test".into(), from: from.into(), term, incarnation, message };
    wire::encode(&e, key.map(|key| Auth { key, receiver: "n1" })).expect("fits")
}

fn notice(from: &str, term: u64, incarnation: u64) -> Vec<u8> {
    datagram(from, term, incarnation, Message::DeathNotice, None)
}

fn heartbeat(from: &str, term: u64, incarnation: u64, sent_at: u64) -> Vec<u8> {
    datagram(from, term, incarnation, Message::Heartbeat { sent_at }, None)
}

/// Follower "n1" of a 3-node view, which acknowledged "n2" (incarnation 7) as the leader of
/// term 1 at 200, after its boot promise: promised to it until 350.
fn follower(config: impl Fn(Config) -> Config) -> Node {
    let c = config(Config::new("n1", "test").bootstrap(ids(3)));
    let key = c.key.clone();
    let mut n = Node::new(c, 1, None, 0).expect("valid");
    let hb = datagram("n2", 1, 7, Message::Heartbeat { sent_at: 200 }, key.as_deref());
    n.handle_message(200, "n2", &hb).expect("heartbeat");
    drain(&mut n);
    assert_eq!(n.leader(), Some("n2"));
    n
}

fn drain(n: &mut Node) -> Vec<Output> {
    std::iter::from_fn(|| n.poll_output()).collect()
}

/// What the rules below must leave unchanged when a notice is dropped: role, term, leader, the
/// next deadline, and that a pre-vote for the next term is refused (the promise holds).
fn observed(n: &mut Node, now: u64) -> (Role, u64, Option<String>, Option<u64>, bool) {
    let before = (n.role(), n.term(), n.leader().map(String::from), n.poll_timeout());
    // Answering a pre-vote changes nothing the rules are about (it only notes that n3 answered).
    let mut key = None;
    let mut r = n.handle_message(now, "n3", &datagram("n3", 2, 9, Message::PreVote, None));
    if r == Err(DropReason::BadMac) {
        key = Some(KEY);
        r = n.handle_message(now, "n3", &datagram("n3", 2, 9, Message::PreVote, key));
    }
    let granted = r.is_ok()
        && drain(n).iter().any(|o| match o {
            Output::Send { to, bytes } => {
                let auth = key.map(|key| Auth { key, receiver: to });
                matches!(
                    wire::decode(bytes, auth),
                    Ok(Envelope { message: Message::PreVoteReply { granted: true }, .. })
                )
            }
            _ => false,
        });
    (before.0, before.1, before.2, before.3, granted)
}

fn dropped(n: &Node, reason: DropReason) -> u64 {
    n.inspect().dropped(reason.as_str()).unwrap_or(0)
}

/// Crashes the leader at `h.now` and delivers the notices its state then gives, as its watchdog
/// does (one link latency later). Returns the leader and the crash instant.
fn crash_with_notices(h: &mut Harness) -> (String, u64) {
    let leader = h.leader();
    let notices = h.nodes[&leader].death_notices();
    h.down.insert(leader.clone());
    let t0 = h.now;
    for (to, bytes) in notices {
        h.in_flight.push((t0 + LATENCY, leader.clone(), to, bytes));
    }
    (leader, t0)
}

fn transfer_votes_since(h: &Harness, t0: u64) -> usize {
    h.wire
        .iter()
        .filter(|(t, _, to, b)| {
            *t >= t0
                && matches!(
                    h.nodes[to].decode_message(b),
                    Ok(Envelope { message: Message::Vote { transfer: true }, .. })
                )
        })
        .count()
}

#[test]
fn a_true_notice_elects_a_new_leader_without_waiting_out_the_promise_and_never_by_a_transfer_vote() {
    for n in [3, 5] {
        let mut h = Harness::new(n);
        h.run_until(1_000);
        let (leader, t0) = crash_with_notices(&mut h);
        // The promise alone (the lease path) holds every follower for lease_duration (150 ms)
        // after its last acknowledgement; with the notice the first survivor's rank slot decides.
        h.run_until(t0 + 40);
        let new = h.leader();
        assert_ne!(new, leader);
        let elected = h
            .events
            .iter()
            .find(|(t, id, e)| *t > t0 && *id == new && matches!(e, Event::BecameLeader { .. }))
            .expect("elected")
            .0;
        assert!(elected - t0 <= 40, "{n} nodes: elected {} ms after the crash", elected - t0);
        assert_eq!(transfer_votes_since(&h, t0), 0, "a notice never starts a transfer vote");
        // The dead leader stays a member: nobody's view shrank.
        for id in h.others(&leader) {
            assert_eq!(h.nodes[&id].view_size(), n, "{id}");
        }
    }
}

#[test]
fn without_the_notice_the_followers_wait_out_their_promise() {
    // The baseline the notice improves on (same harness, same crash, no notice).
    let mut h = Harness::new(3);
    h.run_until(1_000);
    let leader = h.leader();
    h.down.insert(leader.clone());
    let t0 = h.now;
    h.run_until(t0 + 100);
    assert!(h.leaders().is_empty(), "elected before the promise ran out");
}

#[test]
fn two_survivors_of_three_elect_with_min_cluster_size_three() {
    let mut h = Harness::with(3, |c| c.min_cluster_size(3));
    h.run_until(1_000);
    let (leader, t0) = crash_with_notices(&mut h);
    h.run_until(t0 + 40);
    let new = h.leader();
    assert_ne!(new, leader);
    assert_eq!(h.nodes[&new].view_size(), 3);
    assert_eq!(h.nodes[&new].quorum(), 2);
}

#[test]
fn an_accepted_notice_releases_the_promise_forgets_the_leader_and_campaigns_in_rank_order() {
    let mut n = follower(|c| c);
    n.handle_message(210, "n2", &notice("n2", 1, 7)).expect("accepted");
    let outs = drain(&mut n);
    assert!(outs.contains(&Output::Event(Event::BecameFollower { term: 1, leader: None })), "{outs:?}");
    assert_eq!(n.leader(), None);
    // n1 ranks first among the survivors {n1, n3}: it campaigns within one rank slot (15 ms),
    // long before the promise made at 200 would have run out (350).
    let at = n.poll_timeout().expect("a deadline");
    assert!((210..=215).contains(&at), "campaigns at {at}");
    n.handle_timeout(at);
    let sent: Vec<Message> = drain(&mut n)
        .into_iter()
        .filter_map(|o| match o {
            Output::Send { bytes, .. } => Some(wire::decode(&bytes, None).unwrap().message),
            _ => None,
        })
        .collect();
    assert!(sent.iter().all(|m| *m == Message::PreVote), "{sent:?}");
    assert_eq!(sent.len(), 2, "the dead leader stays a member: asked too");
    // It grants pre-votes now: the promise made to n2 is released.
    let mut m = follower(|c| c);
    m.handle_message(210, "n2", &notice("n2", 1, 7)).unwrap();
    assert!(observed(&mut m, 211).4, "pre-vote granted after the notice");
}

#[test]
fn a_notice_for_another_term_incarnation_or_leader_changes_nothing_and_is_counted() {
    for (what, bytes, from) in [
        ("older term", notice("n2", 0, 7), "n2"),
        ("newer term", notice("n2", 2, 7), "n2"),
        ("other incarnation", notice("n2", 1, 8), "n2"),
        ("a leader it does not follow", notice("n3", 1, 9), "n3"),
        ("an implausible term", notice("n2", 1 << 40, 7), "n2"),
    ] {
        let mut n = follower(|c| c);
        let before = observed(&mut n, 210);
        assert!(!before.4, "{what}: promised before");
        assert_eq!(n.handle_message(210, from, &bytes), Err(DropReason::NoticeMismatch), "{what}");
        assert!(drain(&mut n).is_empty(), "{what}");
        assert_eq!(observed(&mut n, 210), before, "{what}");
        assert_eq!(dropped(&n, DropReason::NoticeMismatch), 1, "{what}");
    }
    // Nor for a term the receiver adopted from another message, though the promise it made to
    // the sender in the term before still runs: it never acknowledged the sender in that term.
    let mut n = follower(|c| c);
    n.handle_message(210, "n3", &datagram("n3", 2, 9, Message::App { seq: 0, payload: vec![] }, None)).unwrap();
    drain(&mut n);
    assert_eq!(n.term(), 2);
    let before = observed(&mut n, 211);
    assert!(!before.4, "still promised to n2");
    assert_eq!(n.handle_message(211, "n2", &notice("n2", 2, 7)), Err(DropReason::NoticeMismatch));
    assert_eq!(observed(&mut n, 211), before);
    // Nor at a node that follows nobody (it has heard no leader), nor at the leader itself.
    let mut n = Node::new(Config::new("n1", "test").bootstrap(ids(3)), 1, None, 0).unwrap();
    assert_eq!(n.handle_message(200, "n2", &notice("n2", 0, 7)), Err(DropReason::NoticeMismatch));
    let mut h = Harness::new(3);
    h.run_until(1_000);
    let leader = h.leader();
    let other = h.others(&leader)[0].clone();
    let term = h.nodes[&leader].term();
    let e =
        Envelope { cluster: "test".into(), from: other.clone(), term, incarnation: 1, message: Message::DeathNotice };
    let bytes = wire::encode(&e, None).unwrap();
    let now = h.now;
    assert_eq!(h.node(&leader).handle_message(now, &other, &bytes), Err(DropReason::NoticeMismatch));
    assert!(h.nodes[&leader].is_leader());
}

#[test]
fn a_replayed_notice_is_dropped_as_a_replay() {
    let mut n = follower(|c| c);
    let bytes = notice("n2", 1, 7);
    n.handle_message(210, "n2", &bytes).unwrap();
    drain(&mut n);
    let before = observed(&mut n, 211);
    assert_eq!(n.handle_message(211, "n2", &bytes), Err(DropReason::Replay));
    assert!(drain(&mut n).is_empty());
    assert_eq!(observed(&mut n, 211), before);
}

#[test]
fn a_forged_notice_under_a_key_changes_nothing() {
    let keyed = |c: Config| c.key(KEY.to_vec());
    let e =
        Envelope { cluster: "test".into(), from: "n2".into(), term: 1, incarnation: 7, message: Message::DeathNotice };
    for (what, bytes) in [
        ("no tag", wire::encode(&e, None).unwrap()),
        ("another key", wire::encode(&e, Some(Auth { key: b"guess", receiver: "n1" })).unwrap()),
        ("tagged for another receiver", wire::encode(&e, Some(Auth { key: KEY, receiver: "n3" })).unwrap()),
    ] {
        let mut n = follower(keyed);
        let before = observed(&mut n, 210);
        assert_eq!(n.handle_message(210, "n2", &bytes), Err(DropReason::BadMac), "{what}");
        assert_eq!(observed(&mut n, 210), before, "{what}");
    }
    // The genuine one, tagged for n1 with the key, is accepted.
    let mut n = follower(keyed);
    let genuine = wire::encode(&e, Some(Auth { key: KEY, receiver: "n1" })).unwrap();
    assert_eq!(n.handle_message(210, "n2", &genuine), Ok(()));
}

#[test]
fn a_late_message_of_the_retired_run_cannot_make_a_node_follow_it_again() {
    let mut n = follower(|c| c);
    n.handle_message(210, "n2", &notice("n2", 1, 7)).unwrap();
    drain(&mut n);
    // A heartbeat sent just before the death (newer than any seen), arriving after the notice;
    // twice, so that the recognised-heartbeat path has its chance too.
    for at in [211, 212] {
        assert_eq!(n.handle_message(at, "n2", &heartbeat("n2", 1, 7, 205)), Err(DropReason::Replay));
        assert!(drain(&mut n).is_empty(), "no acknowledgement, no promise");
        assert_eq!(n.leader(), None);
    }
    // Nor any other message it sent up to its death (a replay of the vote requests that made it
    // leader of term 1, say).
    assert_eq!(
        n.handle_message(213, "n2", &datagram("n2", 1, 7, Message::Vote { transfer: false }, None)),
        Err(DropReason::Replay)
    );
    // A new run of it (a restart) is heard again.
    assert_eq!(n.handle_message(214, "n2", &heartbeat("n2", 1, 8, 214)), Ok(()));
    assert_eq!(n.leader(), Some("n2"));
}

#[test]
fn a_run_retired_by_a_notice_is_heard_again_in_a_newer_term() {
    // Only a forgery (no key) retires a live run: it must not stay deaf to it for good. Whatever
    // the dead run sent is of the notice's term or older; a newer term means the run lives.
    let mut n = follower(|c| c);
    n.handle_message(210, "n2", &notice("n2", 1, 7)).unwrap();
    drain(&mut n);
    assert_eq!(n.handle_message(211, "n2", &heartbeat("n2", 1, 7, 211)), Err(DropReason::Replay));
    assert_eq!(n.handle_message(400, "n2", &heartbeat("n2", 2, 7, 400)), Ok(()));
    assert_eq!((n.term(), n.leader()), (2, Some("n2")));
    // Past the retired term, its older messages are an older term's: answered, never followed
    // (the record is gone, core/src/node/notice.rs tests).
    assert_eq!(n.handle_message(401, "n2", &heartbeat("n2", 1, 7, 401)), Ok(()));
    assert_eq!((n.term(), n.leader()), (2, Some("n2")));
    assert_eq!(n.handle_message(402, "n2", &heartbeat("n2", 2, 7, 402)), Ok(()));
}

#[test]
fn a_node_limited_to_version_3_drops_a_notice_as_an_unknown_version_and_is_sent_none() {
    let mut n = follower(|c| c);
    n.limit_wire_version(MIN_VERSION);
    assert_eq!(n.handle_message(210, "n2", &notice("n2", 1, 7)), Err(DropReason::UnknownVersion));
    assert_eq!(n.leader(), Some("n2"));
    // A leader's notices go only to members that said they speak version 4.
    let mut h = Harness::new(3);
    h.old.insert("n3".into());
    h.node("n3").limit_wire_version(MIN_VERSION);
    // The old member is not to lead here (it would have no notices to give).
    h.node("n3").hold_campaigns(0, 10_000);
    h.run_until(2_000);
    let leader = h.leader();
    assert_ne!(leader, "n3", "the case this test is about: a new leader, an old member");
    let to: Vec<String> = h.nodes[&leader].death_notices().into_iter().map(|(to, _)| to).collect();
    let want: Vec<String> = h.others(&leader).into_iter().filter(|p| p != "n3").collect();
    assert_eq!(to, want);
    // A leader limited to version 3 has no such message.
    h.node(&leader).limit_wire_version(MIN_VERSION);
    assert!(h.nodes[&leader].death_notices().is_empty());
}

#[test]
fn death_notices_are_empty_unless_leading_and_each_authenticates_only_at_its_receiver() {
    let mut h = Harness::with(5, |c| c.key(KEY.to_vec()));
    h.run_until(1_000);
    let leader = h.leader();
    for id in h.others(&leader) {
        assert!(h.nodes[&id].death_notices().is_empty(), "{id} does not lead");
    }
    let notices = h.nodes[&leader].death_notices();
    assert_eq!(notices.iter().map(|(to, _)| to.clone()).collect::<Vec<_>>(), h.others(&leader));
    let term = h.nodes[&leader].term();
    for (to, bytes) in &notices {
        let e = h.nodes[to].decode_message(bytes).expect("authenticates at its receiver");
        assert_eq!((e.from.as_str(), e.term, e.message), (leader.as_str(), term, Message::DeathNotice));
        assert_eq!(bytes[2], 4, "a version 4 envelope");
        for other in h.others(&leader).iter().filter(|o| *o != to) {
            assert_eq!(h.nodes[other].decode_message(bytes), Err(DropReason::BadMac));
        }
    }
}
