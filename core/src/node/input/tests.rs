//! The recognised-heartbeat path of `accept` (`Node::recognise_heartbeat`) against the full decode:
//! same results, outputs and state, and every refusal kept.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, TestRunner};

use super::*;
use crate::wire::{encode, Auth, Envelope, TAG_LEN};

const KEY: &[u8] = b"cluster-key";
/// Index 3 is no member.
const IDS: [&str; 4] = ["b", "dd", "e", "stranger"];

fn node(keyed: bool, admit: bool, durable: bool) -> Node {
    let mut c = Config::new("a", "c").bootstrap(["a", "b", "dd", "e"]).admit_unknown_peers(admit).durable(durable);
    if keyed {
        c = c.key(KEY.to_vec());
    }
    Node::new(c, 3, None, 0).unwrap()
}

fn datagram(sender: &str, cluster: &str, term: u64, incarnation: u64, message: Message, key: Option<&[u8]>) -> Vec<u8> {
    let e = Envelope { cluster: cluster.to_string(), from: sender.to_string(), term, incarnation, message };
    // Every datagram here is addressed to the node under test, "a".
    encode(&e, key.map(|key| Auth { key, receiver: "a" })).unwrap()
}

fn drain(n: &mut Node) -> Vec<Output> {
    let mut out = Vec::new();
    while let Some(o) = n.poll_output_ref() {
        out.push(o.into_owned());
    }
    out
}

fn state(n: &Node) -> String {
    format!("{n:?}")
}

// The two paths of `handle_message`, on every target. On each, one of them is the build's own
// `handle_message` (the path its products take: the recognised path first in native builds, the
// full decode alone in the WebAssembly builds) and the other is the other path compiled for the
// same target, so `make test-wasm-core` checks the path the WebAssembly builds take.

/// `handle_message` with the recognised path first.
fn handle_recognising(n: &mut Node, now: u64, from: &str, bytes: &[u8]) -> Result<(), DropReason> {
    if cfg!(target_family = "wasm") {
        let result = n.accept_recognising(now, from, bytes);
        n.count_drop(result)
    } else {
        n.handle_message(now, from, bytes)
    }
}

/// `handle_message` without the recognised path: every datagram decoded in full.
fn handle_decoded(n: &mut Node, now: u64, from: &str, bytes: &[u8]) -> Result<(), DropReason> {
    if cfg!(target_family = "wasm") {
        n.handle_message(now, from, bytes)
    } else {
        let result = n.accept_decoded(now, from, bytes);
        n.count_drop(result)
    }
}

#[derive(Debug, Clone)]
enum Step {
    Datagram {
        from: usize,
        sender: usize,
        other_cluster: bool,
        term: u64,
        incarnation: u64,
        /// 0–5: heartbeat (most), 6 ack, 7 pre-vote, 8 vote, 9 vote reply, 10 app, 11 timeout-now,
        /// 12 death notice.
        kind: u8,
        value: u64,
        /// 0: the node's key (or none), 1: no tag, 2: another key.
        tag: u8,
        /// 0: none, 1: flip a byte, 2: cut the last byte, 3: append a byte.
        damage: u8,
        at: usize,
    },
    /// `n` heartbeats from `IDS[sender]` in the node's term (or the next), `sent_at` counting up
    /// from `value` (a steady leader), one of them flipped at one byte, one from another address.
    Steady {
        sender: usize,
        next_term: bool,
        incarnation: u64,
        value: u64,
        n: usize,
        at: usize,
    },
    Timeout,
    Advance(u64),
    Leave(usize),
    Down(usize, u8),
    Join(usize),
}

fn step() -> impl Strategy<Value = Step> {
    let datagram = (
        (0..4usize, prop::bool::weighted(0.9), prop::bool::weighted(0.05)),
        (prop_oneof![4 => 0..4u64, 1 => Just(MAX_TERM_JUMP + 9)], prop_oneof![3 => 1..3u64, 1 => Just(u64::MAX)]),
        (0..13u8, prop_oneof![3 => 0..40u64, 1 => Just(1 << 40)]),
        (prop::sample::select(vec![0u8, 0, 0, 0, 0, 0, 1, 2]), prop::sample::select(vec![0u8, 0, 0, 0, 0, 1, 2, 3])),
        any::<usize>(),
    )
        .prop_map(|((from, same, other_cluster), (term, incarnation), (kind, value), (tag, damage), at)| {
            let sender = if same { from } else { (from + 1) % IDS.len() };
            Step::Datagram { from, sender, other_cluster, term, incarnation, kind, value, tag, damage, at }
        });
    let steady = (0..4usize, prop::bool::weighted(0.2), 1..3u64, 0..40u64, 1..12usize, any::<usize>()).prop_map(
        |(sender, next_term, incarnation, value, n, at)| Step::Steady { sender, next_term, incarnation, value, n, at },
    );
    prop_oneof![
        20 => datagram,
        6 => steady,
        2 => Just(Step::Timeout),
        3 => (1..200u64).prop_map(Step::Advance),
        1 => (0..4usize).prop_map(Step::Leave),
        1 => (0..4usize, 0..3u8).prop_map(|(p, r)| Step::Down(p, r)),
        1 => (0..4usize).prop_map(Step::Join),
    ]
}

fn message(kind: u8, value: u64) -> Message {
    match kind {
        0..=5 => Message::Heartbeat { sent_at: value },
        6 => Message::HeartbeatAck { echo: value },
        7 => Message::PreVote,
        8 => Message::Vote { transfer: value.is_multiple_of(2) },
        9 => Message::VoteReply { granted: !value.is_multiple_of(3) },
        10 => Message::App { seq: value, payload: vec![1, 2] },
        11 => Message::TimeoutNow,
        _ => Message::DeathNotice,
    }
}

/// Runs `steps` on two nodes, one of which never recognises a heartbeat (it decodes every
/// datagram in full); returns how many inputs the other recognised.
fn compare(keyed: bool, admit: bool, durable: bool, steps: &[Step]) -> Result<usize, TestCaseError> {
    let (mut fast, mut slow) = (node(keyed, admit, durable), node(keyed, admit, durable));
    let mut now = 1;
    let mut hits = 0;
    for s in steps {
        match *s {
            Step::Datagram { from, sender, other_cluster, term, incarnation, kind, value, tag, damage, at } => {
                let key = match tag {
                    0 => keyed.then_some(KEY),
                    1 => None,
                    _ => Some(&b"another key"[..]),
                };
                let cluster = if other_cluster { "other" } else { "c" };
                let mut bytes = datagram(IDS[sender], cluster, term, incarnation, message(kind, value), key);
                match damage {
                    1 => {
                        let i = at % bytes.len();
                        bytes[i] ^= 1 << (at % 8);
                    }
                    2 => {
                        bytes.pop();
                    }
                    3 => bytes.push(at as u8),
                    _ => {}
                }
                let from = IDS[from];
                hits += usize::from(fast.recognise_heartbeat(from, &bytes).is_some());
                prop_assert_eq!(
                    handle_recognising(&mut fast, now, from, &bytes),
                    handle_decoded(&mut slow, now, from, &bytes)
                );
            }
            Step::Steady { sender, next_term, incarnation, value, n, at } => {
                let term = fast.term() + u64::from(next_term);
                for i in 0..n {
                    // One of them arrives from another address.
                    let from = IDS[if i == at / 16 % 16 { (sender + 1) % IDS.len() } else { sender }];
                    let message = Message::Heartbeat { sent_at: value + i as u64 };
                    let mut bytes = datagram(IDS[sender], "c", term, incarnation, message, keyed.then_some(KEY));
                    if i == at % 16 {
                        let j = at % bytes.len();
                        bytes[j] ^= 1 << (at % 8);
                    }
                    hits += usize::from(fast.recognise_heartbeat(from, &bytes).is_some());
                    prop_assert_eq!(
                        handle_recognising(&mut fast, now, from, &bytes),
                        handle_decoded(&mut slow, now, from, &bytes)
                    );
                    prop_assert_eq!(drain(&mut fast), drain(&mut slow));
                    now += 1;
                }
            }
            Step::Timeout => {
                now = now.max(fast.poll_timeout().unwrap_or(now));
                fast.handle_timeout(now);
                slow.handle_timeout(now);
            }
            Step::Advance(ms) => now += ms,
            Step::Leave(p) => prop_assert_eq!(fast.leave(now, IDS[p]), slow.leave(now, IDS[p])),
            Step::Down(p, r) => {
                let r = PeerDownReason::ALL[usize::from(r)];
                prop_assert_eq!(fast.peer_down(now, IDS[p], r), slow.peer_down(now, IDS[p], r));
            }
            Step::Join(p) => prop_assert_eq!(fast.join(now, IDS[p]), slow.join(now, IDS[p])),
        }
        // Confirmations are granted alike (a node that campaigns may win with the replies above).
        let (out_fast, out_slow) = (drain(&mut fast), drain(&mut slow));
        prop_assert_eq!(&out_fast, &out_slow);
        for o in &out_fast {
            if let Output::Event(Event::ConfirmLeader { term }) = o {
                prop_assert_eq!(fast.confirm_leader(now, *term, true), slow.confirm_leader(now, *term, true));
                prop_assert_eq!(drain(&mut fast), drain(&mut slow));
            }
        }
        prop_assert_eq!(state(&fast), state(&slow), "after {:?}", s);
    }
    Ok(hits)
}

/// Any sequence of inputs (heartbeats from members, strangers and other clusters, with every term,
/// incarnation, tag and damage; other messages; removals, joins, timeouts) gives the same results,
/// outputs and state whether heartbeats are recognised or always decoded in full.
#[test]
fn recognised_heartbeats_are_handled_exactly_as_decoded_ones() {
    let hits = core::cell::Cell::new(0);
    let mut runner = TestRunner::new(RunnerConfig { cases: 256, ..RunnerConfig::default() });
    let strategy = (any::<bool>(), any::<bool>(), any::<bool>(), prop::collection::vec(step(), 1..80));
    runner
        .run(&strategy, |(keyed, admit, durable, steps)| {
            hits.set(hits.get() + compare(keyed, admit, durable, &steps)?);
            Ok(())
        })
        .unwrap();
    let hits = hits.get();
    assert!(hits > 100, "the property barely exercised the recognised path: {hits} hits");
}

/// A follower of "b" in term 2 that has recognised one heartbeat already.
fn follower(keyed: bool) -> (Node, impl Fn(u64) -> Vec<u8>) {
    let key = keyed.then_some(KEY);
    let hb = move |sent_at| datagram("b", "c", 2, 7, Message::Heartbeat { sent_at }, key);
    let mut n = node(keyed, false, false);
    handle_recognising(&mut n, 1, "b", &hb(100)).unwrap();
    drain(&mut n);
    assert!(n.recognise_heartbeat("b", &hb(101)).is_some());
    handle_recognising(&mut n, 2, "b", &hb(101)).unwrap();
    drain(&mut n);
    (n, hb)
}

/// What the known fields do not vouch for is still refused.
#[test]
fn a_recognised_heartbeat_still_refuses_replays_bad_tags_and_bad_endings() {
    for keyed in [false, true] {
        let (mut n, hb) = follower(keyed);
        // A replay (and an older one) is no evidence: accepted as input, neither acknowledged nor
        // refreshing the timer.
        let deadline = n.poll_timeout();
        for sent_at in [101, 50] {
            assert!(n.recognise_heartbeat("b", &hb(sent_at)).is_some());
            assert_eq!(handle_recognising(&mut n, 3, "b", &hb(sent_at)), Ok(()));
            assert_eq!(drain(&mut n), []);
            assert_eq!(n.poll_timeout(), deadline);
        }
        // From another address than the one inside.
        assert!(n.recognise_heartbeat("dd", &hb(102)).is_none());
        assert_eq!(handle_recognising(&mut n, 3, "dd", &hb(102)), Err(DropReason::SenderMismatch));
        // Damaged after the known fields: a trailing byte, a cut or over-long `sent_at`, a bad tag.
        let mut trailing = hb(103);
        trailing.push(0);
        let mut overlong = datagram("b", "c", 2, 7, Message::Heartbeat { sent_at: 0x7f }, None);
        overlong.pop();
        overlong.extend_from_slice(&[0xff, 0x00]);
        let mut cut = hb(1 << 20);
        cut.truncate(cut.len() - if keyed { TAG_LEN + 1 } else { 1 });
        let mut cases = vec![(trailing, if keyed { DropReason::BadMac } else { DropReason::Malformed })];
        if keyed {
            let mut flipped = hb(104);
            *flipped.last_mut().unwrap() ^= 1;
            cases.push((flipped, DropReason::BadMac));
            let mut other_key = datagram("b", "c", 2, 7, Message::Heartbeat { sent_at: 105 }, Some(b"other"));
            cases.push((core::mem::take(&mut other_key), DropReason::BadMac));
        } else {
            cases.push((overlong, DropReason::Malformed));
            cases.push((cut, DropReason::Malformed));
        }
        for (bytes, reason) in cases {
            assert!(n.recognise_heartbeat("b", &bytes).is_none(), "{bytes:02x?}");
            assert_eq!(handle_recognising(&mut n, 3, "b", &bytes), Err(reason));
            assert_eq!(drain(&mut n), []);
        }
        // Another cluster is no known field: decoded in full.
        let key = keyed.then_some(KEY);
        let other = datagram("b", "other", 2, 7, Message::Heartbeat { sent_at: 106 }, key);
        assert!(n.recognise_heartbeat("b", &other).is_none());
        assert_eq!(handle_recognising(&mut n, 3, "b", &other), Err(DropReason::WrongCluster));
        // Another term or incarnation than the known ones: decoded in full.
        assert!(n
            .recognise_heartbeat("b", &datagram("b", "c", 3, 7, Message::Heartbeat { sent_at: 106 }, key))
            .is_none());
        assert!(n
            .recognise_heartbeat("b", &datagram("b", "c", 2, 8, Message::Heartbeat { sent_at: 106 }, key))
            .is_none());
        // Still recognised and acknowledged after all that.
        assert!(n.recognise_heartbeat("b", &hb(107)).is_some());
        handle_recognising(&mut n, 4, "b", &hb(107)).unwrap();
        assert!(matches!(&drain(&mut n)[..], [Output::Send { to, .. }] if to == "b"));
        // A restarted leader's new incarnation is known once a heartbeat of it was decoded.
        let restarted = |sent_at| datagram("b", "c", 2, 8, Message::Heartbeat { sent_at }, key);
        handle_recognising(&mut n, 5, "b", &restarted(108)).unwrap();
        assert!(n.recognise_heartbeat("b", &restarted(109)).is_some());
        assert!(n.recognise_heartbeat("b", &hb(109)).is_none());
    }
}

/// After a term change or the leader's removal its heartbeats are no longer recognised: they are
/// decoded in full again, and refused while it is removed.
#[test]
fn a_term_change_or_a_removal_ends_recognition() {
    let (mut n, hb) = follower(false);
    n.leave(10, "b").unwrap();
    drain(&mut n);
    assert!(n.recognise_heartbeat("b", &hb(200)).is_none());
    assert_eq!(handle_recognising(&mut n, 11, "b", &hb(200)), Err(DropReason::RemovedPeer));

    let (mut n, hb) = follower(false);
    handle_recognising(&mut n, 10, "dd", &datagram("dd", "c", 3, 1, Message::HeartbeatAck { echo: 1 }, None)).unwrap();
    drain(&mut n);
    assert_eq!(n.term(), 3);
    assert!(n.recognise_heartbeat("b", &hb(200)).is_none());
    // The old leader's heartbeat of term 2 is answered with the newer term, not followed.
    handle_recognising(&mut n, 11, "b", &hb(200)).unwrap();
    assert_eq!(n.leader(), None);
}
