//! Observers: a process that knows the leader, its term and its value without taking part in the
//! election. Test names are the rules (docs/protocol.md, "Observers").

mod common;

use common::{ids, Harness, LATENCY};
use tenure::wire::{self, DropReason, Envelope, Message, MIN_VERSION};
use tenure::{Config, Event, Node, Role, DEFAULT_HEARTBEAT_INTERVAL};

const OBSERVER: &str = "o1";

/// `n` members that list `o1` and proclaim their own URL, and the observer `o1`.
fn with_observer(n: usize) -> Harness {
    let mut h = Harness::with(n, |c| {
        let v = format!("http://{}:8080", c.id);
        c.value(v).observer_peers([OBSERVER])
    });
    add_observer(&mut h, n, OBSERVER, 0);
    h
}

fn add_observer(h: &mut Harness, n: usize, id: &str, seed: u64) {
    let config = Config::new(id, "test").bootstrap(ids(n)).observer(true);
    let now = h.now;
    h.nodes.insert(id.to_string(), Node::new(config, 900 + seed, None, now).unwrap());
}

fn members(h: &Harness) -> Vec<String> {
    h.nodes.keys().filter(|k| k.starts_with('n')).cloned().collect()
}

fn kind(h: &Harness, to: &str, bytes: &[u8]) -> &'static str {
    h.nodes[to].decode_message(bytes).map(|e| e.message.kind()).unwrap_or("undecodable")
}

fn envelope(from: &str, term: u64, message: Message) -> Vec<u8> {
    let e = Envelope { cluster: "test".into(), from: from.into(), term, incarnation: 1, message };
    wire::encode(&e, None).unwrap()
}

fn led_since(h: &Harness, id: &str) -> u64 {
    h.events.iter().rev().find(|(_, n, e)| n == id && matches!(e, Event::BecameLeader { .. })).unwrap().0
}

/// Runs until `o1` reports `leader` with `value`; returns when (panics past `limit`).
fn until_observed(h: &mut Harness, leader: &str, value: &str, limit: u64) -> u64 {
    loop {
        let o = &h.nodes[OBSERVER];
        if o.leader() == Some(leader) && o.leader_value() == Some(value) {
            return h.now;
        }
        assert!(h.now < limit, "o1 reports {:?} / {:?}, not {leader} / {value}", o.leader(), o.leader_value());
        h.run_until(h.now + 1);
    }
}

#[test]
fn an_observer_learns_the_leader_and_its_value_within_a_heartbeat_interval() {
    let mut h = with_observer(3);
    h.run_until(1_000);
    let leader = h.leader();
    let want = format!("http://{leader}:8080");
    let o = &h.nodes[OBSERVER];
    assert_eq!(
        (o.leader(), o.leader_value(), o.term()),
        (Some(leader.as_str()), Some(want.as_str()), h.nodes[&leader].term())
    );
    assert_eq!(o.role(), Role::Observer);
    assert_eq!(o.inspect().state, "observer");
    // When: from the start again, the first instant it reported both.
    let mut h = with_observer(3);
    while h.leaders().is_empty() {
        h.run_until(h.now + 1);
    }
    let since = led_since(&h, &leader);
    let at = until_observed(&mut h, &leader, &want, 1_000);
    // The first heartbeat round reaches it at once; the value a round trip later.
    assert!(at - since <= DEFAULT_HEARTBEAT_INTERVAL, "{} ms after the leadership started", at - since);
    // It announced the leader as the followers do.
    assert!(h
        .events_of(OBSERVER)
        .contains(&Event::BecameFollower { term: h.nodes[&leader].term(), leader: Some(leader) }));
}

#[test]
fn an_observer_never_votes_campaigns_or_acknowledges() {
    let mut h = with_observer(3);
    // Failovers: the leader stops twice; the observer is silent to every candidate.
    h.run_until(1_000);
    for _ in 0..2 {
        let leader = h.leader();
        h.down.insert(leader.clone());
        h.run_until(h.now + 2_000);
        h.down.remove(&leader);
        h.run_until(h.now + 500);
    }
    let o = &h.nodes[OBSERVER];
    assert_eq!(o.role(), Role::Observer);
    assert_eq!(o.voted_for(), None);
    let sent: Vec<_> = h.wire.iter().filter(|(_, from, _, _)| from == OBSERVER).collect();
    assert!(!sent.is_empty());
    for (_, _, to, b) in &sent {
        assert_eq!(kind(&h, to, b), "observe", "an observer sent something else");
    }
    assert!(!h
        .events_of(OBSERVER)
        .iter()
        .any(|e| matches!(e, Event::BecameLeader { .. } | Event::ConfirmLeader { .. })));
    // Asked directly, it answers nothing.
    let now = h.now;
    let term = h.nodes[OBSERVER].term() + 1;
    for m in [Message::PreVote, Message::Vote { transfer: true }, Message::TimeoutNow] {
        let _ = h.node(OBSERVER).handle_message(now, "n1", &envelope("n1", term, m));
        assert!(h.node(OBSERVER).poll_output().is_none());
    }
    assert_eq!(h.nodes[OBSERVER].role(), Role::Observer);
}

#[test]
fn an_observer_is_in_no_view_and_no_quorum() {
    let mut h = with_observer(3);
    h.run_until(1_000);
    for m in members(&h) {
        let n = &h.nodes[&m];
        assert_eq!((n.view_size(), n.quorum()), (3, 2), "{m}");
        assert!(!n.view().contains(&OBSERVER.to_string()));
        assert_eq!(n.observers(), [OBSERVER]);
    }
    let o = &h.nodes[OBSERVER];
    assert_eq!(o.view(), ids(3), "an observer's view is the members, without itself");
    assert_eq!(o.view_size(), 3);
    assert!(o.observers().is_empty());
}

/// A leader whose members are all unreachable steps down after `election_timeout_min` although
/// its observer answers every heartbeat: the observer's answers are no evidence.
#[test]
fn an_observers_ack_does_not_count_toward_a_quorum() {
    let mut h = with_observer(3);
    h.run_until(1_000);
    let leader = h.leader();
    let term = h.nodes[&leader].term();
    // Even a forged acknowledgement in the observer's name is dropped.
    let now = h.now;
    let ack = envelope(OBSERVER, term, Message::HeartbeatAck { echo: now });
    assert_eq!(h.node(&leader).handle_message(now, OBSERVER, &ack), Err(DropReason::UnknownPeer));
    let cut_at = h.now;
    for m in members(&h).into_iter().filter(|m| *m != leader) {
        h.down.insert(m);
    }
    h.run_until(cut_at + 400);
    assert!(!h.nodes[&leader].is_leader(), "led on its observer's answers");
    let stepped =
        h.events.iter().find(|(t, n, e)| *t > cut_at && *n == leader && matches!(e, Event::BecameFollower { .. }));
    let min = h.nodes[&leader].config().election_timeout_min;
    assert!(stepped.unwrap().0 <= cut_at + min + DEFAULT_HEARTBEAT_INTERVAL);
    // The observer kept answering all along.
    assert!(h.wire.iter().any(|(t, from, _, _)| *t > cut_at + 100 && from == OBSERVER));
}

#[test]
fn an_observers_vote_is_never_counted() {
    for admit in [false, true] {
        let mut n1 = Node::new(
            Config::new("n1", "test").bootstrap(ids(3)).observer_peers([OBSERVER]).admit_unknown_peers(admit),
            1,
            None,
            0,
        )
        .unwrap();
        let at = n1.poll_timeout().unwrap();
        n1.handle_timeout(at);
        let pre_term = n1.term() + 1;
        while n1.poll_output().is_some() {}
        for m in [Message::PreVoteReply { granted: true }, Message::VoteReply { granted: true }] {
            let bytes = envelope(OBSERVER, pre_term, m);
            assert_eq!(n1.handle_message(at, OBSERVER, &bytes), Err(DropReason::UnknownPeer));
        }
        assert_eq!(n1.role(), Role::Follower, "admit_unknown_peers {admit}");
        assert_eq!(n1.inspect().votes_count, 1, "only its own");
        assert_eq!(n1.view_size(), 3);
        assert_eq!(n1.dropped(DropReason::UnknownPeer), 2);
    }
}

#[test]
fn a_member_drops_an_unlisted_observer() {
    for admit in [false, true] {
        let mut h = Harness::with(3, |c| c.admit_unknown_peers(admit));
        add_observer(&mut h, 3, OBSERVER, 0);
        h.run_until(1_000);
        let leader = h.leader();
        // The observer hears nothing, so it asks nothing; in its name, an `Observe` is dropped.
        assert_eq!(h.nodes[OBSERVER].leader(), None);
        assert!(!h.wire.iter().any(|(_, from, to, _)| from == OBSERVER || to == OBSERVER));
        let now = h.now;
        let term = h.nodes[&leader].term();
        let observe = envelope(OBSERVER, term, Message::Observe { seq: 0 });
        assert_eq!(h.node(&leader).handle_message(now, OBSERVER, &observe), Err(DropReason::UnknownPeer));
        assert_eq!(h.nodes[&leader].dropped(DropReason::UnknownPeer), 1);
        assert_eq!(h.nodes[&leader].view_size(), 3, "admit_unknown_peers {admit}");
        assert!(h.node(&leader).poll_output().is_none());
    }
}

#[test]
fn an_observer_follows_a_failover_within_one_heartbeat_interval() {
    let mut h = with_observer(3);
    h.run_until(1_000);
    let first = h.leader();
    h.down.insert(first.clone());
    let down_at = h.now;
    while h.leaders().iter().all(|l| *l == first) {
        h.run_until(h.now + 1);
        assert!(h.now < down_at + 3_000);
    }
    let second = h.leaders().into_iter().find(|l| *l != first).unwrap();
    let since = led_since(&h, &second);
    let at = until_observed(&mut h, &second, &format!("http://{second}:8080"), since + 500);
    assert!(at - since <= DEFAULT_HEARTBEAT_INTERVAL, "{} ms", at - since);
}

#[test]
fn a_new_value_reaches_an_observer_within_a_heartbeat_interval_and_two_round_trips() {
    let mut h = with_observer(3);
    h.run_until(1_000);
    let leader = h.leader();
    // Delivered: a round trip at most.
    let now = h.now;
    h.node(&leader).proclaim(now, "first").unwrap();
    h.drain(&leader);
    until_observed(&mut h, &leader, "first", now + 2 * LATENCY);
    // Lost on the way: the observer's answer to the next heartbeat names the older one.
    let now = h.now;
    h.node(&leader).proclaim(now, "second").unwrap();
    h.drain(&leader);
    h.in_flight.retain(|(_, _, to, _)| to != OBSERVER);
    let at = until_observed(&mut h, &leader, "second", now + DEFAULT_HEARTBEAT_INTERVAL + 4 * LATENCY + 1);
    assert!(at - now <= DEFAULT_HEARTBEAT_INTERVAL + 4 * LATENCY);
    // Held: the rounds after it carry no value to the observer.
    let held = h.now;
    h.run_until(held + 3 * DEFAULT_HEARTBEAT_INTERVAL);
    assert!(!h.wire.iter().any(|(t, _, to, b)| *t > held && to == OBSERVER && kind(&h, to, b) == "value"));
}

#[test]
fn a_restarted_observer_learns_the_leader_and_value_within_a_heartbeat_interval() {
    let mut h = with_observer(3);
    h.run_until(1_000);
    let leader = h.leader();
    let now = h.now;
    h.node(&leader).proclaim(now, "kept").unwrap();
    h.run_until(now + 10);
    let back = h.now;
    add_observer(&mut h, 3, OBSERVER, 1);
    until_observed(&mut h, &leader, "kept", back + DEFAULT_HEARTBEAT_INTERVAL + 3 * LATENCY);
}

#[test]
fn an_observer_forgets_a_leader_silent_for_an_election_timeout() {
    let mut h = with_observer(3);
    h.run_until(1_000);
    for m in members(&h) {
        h.down.insert(m);
    }
    let at = h.now;
    let max = h.nodes[OBSERVER].config().election_timeout_max;
    h.run_until(at + max + 1);
    assert_eq!(h.nodes[OBSERVER].leader(), None);
    assert_eq!(h.nodes[OBSERVER].leader_value(), None);
    assert_eq!(
        h.events_of(OBSERVER).last(),
        Some(&Event::BecameFollower { term: h.nodes[OBSERVER].term(), leader: None })
    );
}

/// Observers are a version 4 notion: a leader limited to version 3 (as v0.1.0) sends them
/// nothing, and its members' heartbeats are the bytes they were.
#[test]
fn a_member_of_wire_version_3_sends_observers_nothing() {
    let mut h = with_observer(3);
    for m in ids(3) {
        h.node(&m).limit_wire_version(MIN_VERSION);
    }
    h.run_until(1_000);
    assert!(!h.wire.iter().any(|(_, from, to, _)| from == OBSERVER || to == OBSERVER));
    assert_eq!(h.nodes[OBSERVER].leader(), None);
}

/// Listing observers changes no byte that members exchange.
#[test]
fn listing_observers_changes_nothing_between_members() {
    let run = |observers: bool| {
        let mut h = if observers {
            with_observer(3)
        } else {
            Harness::with(3, |c| {
                let v = format!("http://{}:8080", c.id);
                c.value(v)
            })
        };
        h.run_until(1_000);
        let between: Vec<_> = h.wire.into_iter().filter(|(_, f, t, _)| f != OBSERVER && t != OBSERVER).collect();
        between
    };
    assert_eq!(run(true), run(false));
}
