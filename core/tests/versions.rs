//! Wire versions in a mixed cluster: how members learn what every member speaks, and that a node
//! of the oldest version (v0.1.0's) is never sent what it cannot read once the gate is closed.
//! Test names are the rules (docs/protocol.md, "Wire versions and rolling upgrades").

mod common;

use common::{ids, Harness};
use tenure::wire::{self, Envelope, Message, MIN_VERSION, VERSION};
use tenure::{Config, Node};

fn version_byte(bytes: &[u8]) -> u8 {
    bytes[2]
}

fn kind(h: &Harness, to: &str, bytes: &[u8]) -> &'static str {
    h.nodes[to].decode_message(bytes).map(|e| e.message.kind()).unwrap_or("undecodable")
}

#[test]
fn every_message_of_the_oldest_version_is_written_in_it_byte_for_byte() {
    // The kinds v0.1.0 has are written with its version byte, so a heartbeat costs what it did.
    let e = Envelope {
        cluster: "c".into(),
        from: "a".into(),
        term: 1,
        incarnation: 2,
        message: Message::Heartbeat { sent_at: 3 },
    };
    let bytes = wire::encode(&e, None).unwrap();
    assert_eq!(version_byte(&bytes), MIN_VERSION);
    let mut h = Harness::new(3);
    h.run_until(2_000);
    for (_, _, to, bytes) in &h.wire {
        let want = if kind(&h, to, bytes) == "hello" { VERSION } else { MIN_VERSION };
        assert_eq!(version_byte(bytes), want, "{}", kind(&h, to, bytes));
    }
}

#[test]
fn a_leader_knows_within_a_round_trip_that_every_member_speaks_the_newest_version() {
    let mut h = Harness::new(3);
    h.run_until(1_000);
    let leader = h.leader();
    assert_eq!(h.nodes[&leader].wire_version(), VERSION);
    // Greetings are few: one Hello and one answer per pair that talked, not one per message.
    let hellos = h.wire.iter().filter(|(_, _, to, b)| kind(&h, to, b) == "hello").count();
    assert!(hellos <= 3 * 2 * 2, "{hellos} hellos");
}

#[test]
fn one_member_of_the_oldest_version_keeps_the_gate_closed_and_is_sent_only_what_it_reads() {
    let mut h = Harness::new(3);
    h.old.insert("n3".into());
    h.run_until(3_000);
    let leader = h.leader();
    if leader != "n3" {
        assert_eq!(h.nodes[&leader].wire_version(), MIN_VERSION, "n3 never said it speaks version {VERSION}");
    }
    // The old node is greeted, but at most once per HELLO retry interval (4 × election_timeout_max).
    let to_old = h.wire.iter().filter(|(_, _, to, b)| to == "n3" && version_byte(b) > MIN_VERSION).count();
    assert!(to_old <= 2 * (3_000 / 1_200 + 1), "{to_old} greetings to the old node");
    // It still elects and follows as usual.
    assert_eq!(h.leaders().len(), 1);
}

#[test]
fn a_member_restarted_with_the_oldest_version_closes_the_gate_with_its_first_message() {
    let mut h = Harness::new(3);
    h.run_until(1_000);
    let leader = h.leader();
    assert_eq!(h.nodes[&leader].wire_version(), VERSION);
    let down = h.others(&leader)[0].clone();
    // A downgrade: the same id, its durable state, a new incarnation, and the old version.
    let state = h.persisted.get(&down).cloned();
    let config = Config::new(down.clone(), "test").bootstrap(ids(3));
    h.nodes.insert(down.clone(), Node::new(config, 999, state, h.now).unwrap());
    h.old.insert(down.clone());
    h.run_until(h.now + 600);
    assert_eq!(h.leader(), leader, "a restarted follower changes no leadership");
    assert_eq!(h.nodes[&leader].wire_version(), MIN_VERSION);
    // And the upgrade back opens it again.
    let state = h.persisted.get(&down).cloned();
    let config = Config::new(down.clone(), "test").bootstrap(ids(3));
    h.nodes.insert(down.clone(), Node::new(config, 1_000, state, h.now).unwrap());
    h.old.remove(&down);
    h.run_until(h.now + 600);
    assert_eq!(h.nodes[&leader].wire_version(), VERSION);
}

#[test]
fn a_hello_changes_no_term_and_no_vote() {
    let c = Config::new("n1", "test").bootstrap(ids(3));
    let mut n = Node::new(c, 1, None, 0).unwrap();
    let e = Envelope {
        cluster: "test".into(),
        from: "n2".into(),
        term: 40,
        incarnation: 5,
        message: Message::Hello { version: VERSION, reply: false },
    };
    n.handle_message(10, "n2", &wire::encode(&e, None).unwrap()).unwrap();
    assert_eq!((n.term(), n.voted_for()), (0, None));
    // It is answered, once, with a reply that is not answered again.
    let replies: Vec<_> = std::iter::from_fn(|| n.poll_output()).collect();
    assert_eq!(replies.len(), 1, "{replies:?}");
    let tenure::Output::Send { to, bytes } = &replies[0] else { panic!("{replies:?}") };
    assert_eq!(to, "n2");
    let m = wire::decode(bytes, None).unwrap().message;
    assert_eq!(m, Message::Hello { version: VERSION, reply: true });
    let e = Envelope { message: Message::Hello { version: VERSION, reply: true }, ..e };
    n.handle_message(11, "n2", &wire::encode(&e, None).unwrap()).unwrap();
    assert!(n.poll_output().is_none(), "a reply is not answered");
}

#[test]
fn a_newer_kind_in_an_envelope_of_the_oldest_version_is_malformed() {
    let e = Envelope {
        cluster: "c".into(),
        from: "a".into(),
        term: 1,
        incarnation: 2,
        message: Message::Hello { version: VERSION, reply: false },
    };
    let mut bytes = wire::encode(&e, None).unwrap();
    assert_eq!(version_byte(&bytes), VERSION);
    bytes[2] = MIN_VERSION;
    assert_eq!(wire::decode(&bytes, None), Err(tenure::DropReason::Malformed));
}

#[test]
fn a_node_limited_to_the_oldest_version_behaves_as_v0_1_0_on_the_wire() {
    let mut h = Harness::new(3);
    assert_eq!(h.node("n3").limit_wire_version(0), MIN_VERSION, "clamped to what exists");
    h.run_until(3_000);
    assert!(
        h.wire.iter().all(|(_, from, _, b)| from != "n3" || version_byte(b) == MIN_VERSION),
        "n3 sent a newer datagram"
    );
    let greeted = h.wire.iter().any(|(_, _, to, b)| to == "n3" && version_byte(b) > MIN_VERSION);
    assert!(
        greeted && h.nodes["n3"].inspect().dropped("unknown_version").unwrap() > 0,
        "greetings to n3 are dropped there"
    );
    assert_eq!(h.nodes["n3"].wire_version(), MIN_VERSION);
    let leader = h.leader();
    if leader != "n3" {
        assert_eq!(h.nodes[&leader].wire_version(), MIN_VERSION);
    }
}
