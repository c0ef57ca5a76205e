//! The proclaimed value: the leader's value travels with its leadership, reaches every member
//! that speaks wire version 4 within a heartbeat interval (loss: the next one), and is forgotten
//! with the leader. Test names are the rules (docs/protocol.md, "The proclaimed value").

mod common;

use common::{ids, Harness};
use tenure::wire::{self, Envelope, Message, MIN_VERSION};
use tenure::{Config, ConfigError, Error, Event, Node, DEFAULT_HEARTBEAT_INTERVAL, MAX_VALUE_LEN};

fn valued(n: usize) -> Harness {
    Harness::with(n, |c| {
        let v = format!("http://{}:8080", c.id);
        c.value(v)
    })
}

fn kind(h: &Harness, to: &str, bytes: &[u8]) -> &'static str {
    h.nodes[to].decode_message(bytes).map(|e| e.message.kind()).unwrap_or("undecodable")
}

/// Runs in 1 ms steps (the harness's latency), dropping every datagram `lose` picks before it is
/// delivered.
fn run_losing(h: &mut Harness, until: u64, mut lose: impl FnMut(&Harness, &str, &str, &[u8]) -> bool) {
    while h.now < until {
        let keep: Vec<_> =
            std::mem::take(&mut h.in_flight).into_iter().filter(|(_, from, to, b)| !lose(h, from, to, b)).collect();
        h.in_flight = keep;
        h.run_until(h.now + 1);
    }
}

fn values(h: &Harness) -> Vec<(String, Option<String>)> {
    h.nodes
        .iter()
        .filter(|(id, _)| !h.down.contains(*id))
        .map(|(id, n)| (id.clone(), n.leader_value().map(String::from)))
        .collect()
}

fn all_report(h: &Harness, want: Option<&str>) -> bool {
    values(h).iter().all(|(_, v)| v.as_deref() == want)
}

/// `id` proclaims `value` now; its outputs are queued.
fn proclaim(h: &mut Harness, id: &str, value: &str) -> Result<(), Error> {
    let now = h.now;
    let r = h.node(id).proclaim(now, value);
    h.drain(id);
    r
}

/// When `id` became leader last.
fn led_since(h: &Harness, id: &str) -> u64 {
    h.events.iter().rev().find(|(_, n, e)| n == id && matches!(e, Event::BecameLeader { .. })).unwrap().0
}

#[test]
fn every_member_reports_the_leaders_configured_value_within_a_heartbeat_interval() {
    let mut h = valued(3);
    h.run_until(1_000);
    let leader = h.leader();
    let want = format!("http://{leader}:8080");
    assert!(all_report(&h, Some(&want)), "{:?}", values(&h));
    // When: replay from the start and find the first instant every member reported it.
    let mut h = valued(3);
    while !all_report(&h, Some(&want)) || h.leaders().is_empty() {
        h.run_until(h.now + 1);
        assert!(h.now < 1_000);
    }
    let took = h.now - led_since(&h, &leader);
    assert!(took <= DEFAULT_HEARTBEAT_INTERVAL, "{took} ms after the leadership started");
}

#[test]
fn a_proclaimed_value_reaches_every_member_within_a_round_trip() {
    let mut h = valued(3);
    h.run_until(1_000);
    let leader = h.leader();
    let now = h.now;
    proclaim(&mut h, &leader, "http://moved:9090").unwrap();
    // Sent at once, not at the next heartbeat round.
    h.run_until(now + 2 * common::LATENCY);
    assert!(all_report(&h, Some("http://moved:9090")), "{:?}", values(&h));
    // Each follower announced the change as news of its leader.
    for f in h.others(&leader) {
        let news = h.events.iter().filter(|(t, n, e)| *t > now && *n == f && matches!(e, Event::BecameFollower { .. }));
        assert_eq!(news.count(), 1, "{f}");
    }
    // An empty value is no value.
    proclaim(&mut h, &leader, "").unwrap();
    h.run_until(h.now + 2);
    assert!(all_report(&h, None), "{:?}", values(&h));
}

#[test]
fn a_value_lost_on_the_way_arrives_with_the_next_heartbeat_round() {
    let mut h = valued(3);
    h.run_until(1_000);
    let leader = h.leader();
    let victim = h.others(&leader)[0].clone();
    let now = h.now;
    proclaim(&mut h, &leader, "second").unwrap();
    // Every value to the victim is lost until the round after this one.
    let mut lost = 0;
    let until = now + 5;
    run_losing(&mut h, until, |h, _, to, b| {
        let drop = to == victim && kind(h, to, b) == "value";
        lost += usize::from(drop);
        drop
    });
    assert!(lost >= 1);
    assert_ne!(h.nodes[&victim].leader_value(), Some("second"));
    h.run_until(now + DEFAULT_HEARTBEAT_INTERVAL + 2);
    assert_eq!(h.nodes[&victim].leader_value(), Some("second"));
    // Acknowledged: the rounds after it send no value.
    let sent_at = h.now;
    h.run_until(sent_at + 3 * DEFAULT_HEARTBEAT_INTERVAL);
    let later = h.wire.iter().filter(|(t, _, to, b)| *t > sent_at && kind(&h, to, b) == "value").count();
    assert_eq!(later, 0, "values sent after every member acknowledged");
}

#[test]
fn a_restarted_member_learns_the_value_within_a_heartbeat_interval() {
    let mut h = valued(3);
    h.run_until(1_000);
    let leader = h.leader();
    proclaim(&mut h, &leader, "proclaimed").unwrap();
    h.run_until(h.now + 10);
    let back = h.others(&leader)[0].clone();
    let config = Config::new(back.clone(), "test").bootstrap(ids(3)).value("mine");
    let restarted_at = h.now;
    h.nodes.insert(back.clone(), Node::new(config, 777, None, restarted_at).unwrap());
    while h.nodes[&back].leader_value() != Some("proclaimed") {
        h.run_until(h.now + 1);
        assert!(h.now <= restarted_at + DEFAULT_HEARTBEAT_INTERVAL + 3, "not learned in a heartbeat interval");
    }
    assert_eq!(h.leader(), leader);
    // Again, and the value sent to the new run first is lost: what the previous run acknowledged
    // does not count for the new one, so the next heartbeat round sends it again.
    h.run_until(h.now + 200);
    let config = Config::new(back.clone(), "test").bootstrap(ids(3)).value("mine");
    let restarted_at = h.now;
    h.nodes.insert(back.clone(), Node::new(config, 778, None, restarted_at).unwrap());
    let mut lost = 0;
    run_losing(&mut h, restarted_at + 2 * DEFAULT_HEARTBEAT_INTERVAL + 5, |h, _, to, b| {
        let drop = to == back && lost == 0 && kind(h, to, b) == "value";
        lost += usize::from(drop);
        drop
    });
    assert_eq!(lost, 1);
    assert_eq!(h.nodes[&back].leader_value(), Some("proclaimed"));
}

#[test]
fn an_acknowledgement_of_an_older_value_does_not_stand_for_a_newer_one() {
    let mut h = valued(3);
    h.run_until(1_000);
    let leader = h.leader();
    let victim = h.others(&leader)[0].clone();
    proclaim(&mut h, &leader, "older").unwrap();
    // One millisecond later, before the acknowledgements of "older" arrive, a newer value, whose
    // first copy to the victim is lost.
    h.run_until(h.now + 1);
    proclaim(&mut h, &leader, "newer").unwrap();
    let now = h.now;
    let mut lost = 0;
    run_losing(&mut h, now + DEFAULT_HEARTBEAT_INTERVAL + 3, |h, _, to, b| {
        let drop = to == victim
            && lost == 0
            && h.nodes[to]
                .decode_message(b)
                .is_ok_and(|e| matches!(e.message, Message::Value { ref value, .. } if value == "newer"));
        lost += usize::from(drop);
        drop
    });
    assert_eq!(lost, 1);
    assert_eq!(h.nodes[&victim].leader_value(), Some("newer"));
}

#[test]
fn a_new_leader_starts_with_its_own_configured_value_and_members_forget_the_old_one() {
    let mut h = valued(3);
    h.run_until(1_000);
    let first = h.leader();
    proclaim(&mut h, &first, "old leader's").unwrap();
    h.run_until(h.now + 10);
    assert!(all_report(&h, Some("old leader's")));
    h.down.insert(first.clone());
    let down_at = h.now;
    h.run_until(down_at + 2_000);
    let second = h.leader();
    assert_ne!(second, first);
    assert!(all_report(&h, Some(&format!("http://{second}:8080"))), "{:?}", values(&h));
    // At no instant did a member report the old value with the new leader.
    for (_, n, e) in &h.events {
        if let Event::BecameFollower { leader: Some(l), .. } = e {
            assert!(!(n != &first && *l == second && h.nodes[n].leader_value() == Some("old leader's")));
        }
    }
    // Proclaiming is for the leader only.
    let f = h.others(&second).into_iter().find(|n| *n != first).unwrap();
    assert_eq!(proclaim(&mut h, &f, "x"), Err(Error::NotLeader));
    // The old leader comes back as a follower and reports the new leader's value, not its own.
    h.down.remove(&first);
    h.run_until(h.now + 1_000);
    assert_eq!(h.nodes[&first].leader_value(), Some(format!("http://{second}:8080").as_str()));
    // A later leadership of the same node starts from its configured value again.
    proclaim(&mut h, &second, "changed").unwrap();
    let now = h.now;
    h.node(&second).transfer_leadership(now, &first).unwrap();
    h.drain(&second);
    h.run_until(h.now + 500);
    let third = h.leader();
    assert!(all_report(&h, Some(&format!("http://{third}:8080"))), "{:?}", values(&h));
}

#[test]
fn a_leader_without_a_value_sends_nothing_new_and_every_member_reports_none() {
    let mut h = Harness::new(3);
    h.run_until(2_000);
    assert!(all_report(&h, None));
    let new = h.wire.iter().filter(|(_, _, to, b)| matches!(kind(&h, to, b), "value" | "value_ack")).count();
    assert_eq!(new, 0);
    // A member with a value of its own does not report it while another leads.
    let leader = h.leader();
    let f = h.others(&leader)[0].clone();
    let config = Config::new(f.clone(), "test").bootstrap(ids(3)).value("mine");
    h.nodes.insert(f.clone(), Node::new(config, 5, None, h.now).unwrap());
    h.run_until(h.now + 500);
    assert_eq!(h.leader(), leader);
    assert_eq!(h.nodes[&f].leader_value(), None);
}

#[test]
fn members_of_the_oldest_version_are_sent_no_value_and_report_none() {
    let mut h = valued(3);
    h.old.insert("n3".into());
    // n3 never leads here: its peers know it as old, and it would proclaim to nobody.
    h.deny.insert("n3".into());
    h.run_until(3_000);
    let leader = h.leader();
    let want = format!("http://{leader}:8080");
    assert_eq!(h.nodes["n2"].leader_value().or(h.nodes["n1"].leader_value()), Some(want.as_str()));
    let to_old = h.wire.iter().filter(|(_, _, to, b)| to == "n3" && b[2] > MIN_VERSION && kind(&h, to, b) != "hello");
    assert_eq!(to_old.count(), 0, "a value went to a node of the oldest version");
    // A node limited to the oldest version (v0.1.0's wire) learns none and sends none.
    let mut h = valued(3);
    let capped = "n2";
    h.node(capped).limit_wire_version(MIN_VERSION);
    h.old.insert(capped.into());
    h.run_until(3_000);
    assert_eq!(h.nodes[capped].leader_value().filter(|_| !h.nodes[capped].is_leader()), None);
}

#[test]
fn a_reordered_older_value_does_not_replace_a_newer_one_and_changes_no_term() {
    let config = Config::new("n1", "test").bootstrap(ids(3));
    let mut n = Node::new(config, 1, None, 0).unwrap();
    let send = |n: &mut Node, at: u64, term: u64, message: Message| {
        let e = Envelope { cluster: "test".into(), from: "n2".into(), term, incarnation: 9, message };
        let r = n.handle_message(at, "n2", &wire::encode(&e, None).unwrap());
        std::iter::from_fn(|| n.poll_output()).for_each(drop);
        r
    };
    // A value before the leader's first heartbeat is not kept (nor acknowledged): the leader
    // sends it again.
    send(&mut n, 1, 5, Message::Value { seq: 1, value: "early".into() }).unwrap();
    assert_eq!((n.term(), n.leader_value()), (0, None), "a value changes no term");
    send(&mut n, 2, 5, Message::Heartbeat { sent_at: 2 }).unwrap();
    send(&mut n, 3, 5, Message::Value { seq: 2, value: "new".into() }).unwrap();
    send(&mut n, 4, 5, Message::Value { seq: 1, value: "old".into() }).unwrap();
    assert_eq!(n.leader_value(), Some("new"));
    // The value of another term's leadership is not this one's.
    send(&mut n, 5, 4, Message::Value { seq: 9, value: "stale term".into() }).unwrap();
    assert_eq!(n.leader_value(), Some("new"));
    // A new leadership of the same leader starts again from seq 1.
    send(&mut n, 6, 6, Message::Heartbeat { sent_at: 6 }).unwrap();
    assert_eq!(n.leader_value(), None, "forgotten with the leadership");
    send(&mut n, 7, 6, Message::Value { seq: 1, value: "again".into() }).unwrap();
    assert_eq!(n.leader_value(), Some("again"));
}

#[test]
fn a_value_longer_than_the_limit_is_a_typed_error_naming_its_length() {
    let long = "x".repeat(MAX_VALUE_LEN + 1);
    let e = Config::new("n1", "test").value(long.clone()).validate().unwrap_err();
    assert_eq!(e, ConfigError::ValueTooLong { len: MAX_VALUE_LEN + 1 });
    assert_eq!(e.code(), "value_too_long");
    assert!(e.message().contains("257 bytes"), "{}", e.message());
    assert!(Config::new("n1", "test").value("x".repeat(MAX_VALUE_LEN)).validate().is_ok());
    let mut h = valued(3);
    h.run_until(1_000);
    let leader = h.leader();
    assert_eq!(proclaim(&mut h, &leader, &long), Err(Error::ValueTooLong { len: MAX_VALUE_LEN + 1 }));
    // On the wire too: a longer value is malformed.
    let e = Envelope {
        cluster: "c".into(),
        from: "a".into(),
        term: 1,
        incarnation: 1,
        message: Message::Value { seq: 1, value: long },
    };
    assert_eq!(wire::decode(&wire::encode(&e, None).unwrap(), None), Err(tenure::DropReason::Malformed));
}
