//! CPU cost of the core's hot paths (criterion). `cargo bench -p tenure --bench election`
//!
//! Every message benchmark starts from bytes and ends with the encoded reply drained from
//! `poll_output`, so decoding, authentication, the state machine and encoding are all included.

mod common;

use std::hint::black_box;
use std::time::Duration;

use common::{bytes, envelope, follower, id, ids, key, leader, CLUSTER};
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use tenure::wire::{decode, encode, Message};
use tenure::{Config, Node, Output};

fn auth_label(auth: bool) -> &'static str {
    if auth {
        "hmac"
    } else {
        "plain"
    }
}

/// Drains outputs into a black box, returning how many there were.
fn sink(node: &mut Node) -> usize {
    let mut n = 0;
    while let Some(out) = node.poll_output() {
        black_box(&out);
        n += 1;
    }
    n
}

fn messages(c: &mut Criterion) {
    let mut g = c.benchmark_group("message");
    for auth in [false, true] {
        // Follower: heartbeat bytes in -> ack bytes out.
        // Each iteration gets a fresh heartbeat (`sent_at` one higher, encoded outside the
        // measurement): a follower drops a repeated one without an ack (freshness rule).
        let (mut node, _, mut now) = follower(5, auth);
        let me = node.id().to_string();
        let leader_id = id(0);
        let mut sent_at = 1_000;
        g.bench_function(BenchmarkId::new("follower_heartbeat_to_ack", auth_label(auth)), |b| {
            b.iter_batched(
                || {
                    sent_at += 1;
                    bytes(&leader_id, &me, 1, Message::Heartbeat { sent_at }, auth)
                },
                |hb| {
                    now += 1;
                    node.handle_message(now, &leader_id, black_box(&hb)).unwrap();
                    match node.poll_output() {
                        Some(Output::Send { bytes, .. }) => black_box(bytes),
                        other => panic!("expected an ack, got {other:?}"),
                    };
                },
                BatchSize::SmallInput,
            )
        });

        // Leader: one heartbeat ack in (nothing out).
        let (mut node, mut now) = leader(5, auth, None);
        let ack = bytes(&id(1), node.id(), node.term(), Message::HeartbeatAck { echo: now }, auth);
        let from = id(1);
        g.bench_function(BenchmarkId::new("leader_ack", auth_label(auth)), |b| {
            b.iter(|| {
                now += 1;
                node.handle_message(now, &from, black_box(&ack)).unwrap();
                assert!(node.poll_output().is_none());
            })
        });

        // Follower: vote request for a new term in -> granted vote reply out. Each iteration
        // is a fresh term (the request bytes are made outside the measurement).
        let all = ids(5);
        let mut node = Node::new(common::config(&all[1], &all, auth), 7, None, 0).unwrap();
        let candidate = id(0);
        let mut term = 0;
        let mut now = 10;
        g.bench_function(BenchmarkId::new("vote_request_to_vote", auth_label(auth)), |b| {
            b.iter_batched(
                || {
                    term += 1;
                    bytes(&candidate, &all[1], term, Message::Vote { transfer: false }, auth)
                },
                |req| {
                    now += 1;
                    node.handle_message(now, &candidate, &req).unwrap();
                    match node.poll_output() {
                        Some(Output::Send { bytes, .. }) => black_box(bytes),
                        other => panic!("expected a vote reply, got {other:?}"),
                    };
                },
                BatchSize::SmallInput,
            )
        });

        // Follower without a leader: pre-vote request in -> granted pre-vote reply out.
        let mut node = Node::new(common::config(&all[1], &all, auth), 7, None, 0).unwrap();
        let pre = bytes(&candidate, &all[1], 1, Message::PreVote, auth);
        g.bench_function(BenchmarkId::new("pre_vote_request_to_reply", auth_label(auth)), |b| {
            b.iter(|| {
                node.handle_message(10, &candidate, black_box(&pre)).unwrap();
                match node.poll_output() {
                    Some(Output::Send { bytes, .. }) => black_box(bytes),
                    other => panic!("expected a pre-vote reply, got {other:?}"),
                };
            })
        });
    }
    g.finish();
}

fn ticks(c: &mut Criterion) {
    let mut g = c.benchmark_group("leader_tick");
    for peers in [4usize, 100, 10_000] {
        for auth in [false, true] {
            if peers == 10_000 {
                g.sample_size(10);
            }
            // A huge election timeout keeps check-quorum satisfied without acks while the clock
            // moves: the tick still scans every peer for quorum evidence.
            let (mut node, mut now) = leader(peers + 1, auth, Some(1_000_000_000));
            let interval = node.config().heartbeat_interval;
            g.bench_function(BenchmarkId::new(auth_label(auth), format!("{peers}_peers")), |b| {
                b.iter(|| {
                    now += interval;
                    node.handle_timeout(now);
                    let n = sink(&mut node);
                    debug_assert_eq!(n, peers);
                })
            });
            assert!(node.is_leader());
        }
    }
    g.finish();
}

/// The proclaimed value's costs: a heartbeat round once every member holds the value (the steady
/// state), a `proclaim` to 4 members, and a follower taking a new value.
fn value(c: &mut Criterion) {
    let mut g = c.benchmark_group("value");
    let all = ids(5);
    let url = "http://10.0.0.1:8080/service";
    let (mut node, mut now) = common::leader_of(
        common::config(&all[0], &all, false).value(url).election_timeout_min(1_000_000_000),
        5,
        false,
    );
    // (A huge election timeout keeps check-quorum satisfied without acks, as in `ticks`.)
    // Every member says it speaks version 4 and acknowledges the value.
    for p in &all[1..] {
        let hello = bytes(p, &all[0], node.term(), Message::Hello { version: 4, reply: true }, false);
        node.handle_message(now, p, &hello).unwrap();
        let ack = bytes(p, &all[0], node.term(), Message::ValueAck { seq: 1 }, false);
        node.handle_message(now, p, &ack).unwrap();
    }
    sink(&mut node);
    let interval = node.config().heartbeat_interval;
    g.bench_function(BenchmarkId::new("leader_tick_acked", "4_peers"), |b| {
        b.iter(|| {
            now += interval;
            node.handle_timeout(now);
            let n = sink(&mut node);
            assert_eq!(n, 4);
        })
    });
    g.bench_function(BenchmarkId::new("proclaim", "4_peers"), |b| {
        b.iter(|| {
            node.proclaim(now, url).unwrap();
            let n = sink(&mut node);
            assert_eq!(n, 4);
        })
    });
    assert!(node.is_leader());
    let (mut node, _, mut now) = follower(5, false);
    let me = node.id().to_string();
    let leader_id = id(0);
    let mut seq = 0;
    g.bench_function(BenchmarkId::new("follower_value_to_ack", "plain"), |b| {
        b.iter_batched(
            || {
                seq += 1;
                bytes(
                    &leader_id,
                    &me,
                    1,
                    Message::Value { seq, value: format!("http://10.0.0.1:8080/{}", seq % 2) },
                    false,
                )
            },
            |v| {
                now += 1;
                node.handle_message(now, &leader_id, black_box(&v)).unwrap();
                sink(&mut node)
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

fn all_kinds() -> Vec<Message> {
    vec![
        Message::PreVote,
        Message::PreVoteReply { granted: true },
        Message::Vote { transfer: false },
        Message::VoteReply { granted: true },
        Message::Heartbeat { sent_at: 1_733_150_000_123 },
        Message::HeartbeatAck { echo: 1_733_150_000_123 },
        Message::TimeoutNow,
        Message::App { seq: 1, payload: vec![0xAB; 64] },
    ]
}

fn codec(c: &mut Criterion) {
    for auth in [false, true] {
        let mut g = c.benchmark_group(format!("codec_{}", auth_label(auth)));
        for m in all_kinds() {
            let env = envelope(&id(0), 42, m.clone());
            let k = key(auth, "10.0.0.9:7000");
            g.bench_function(BenchmarkId::new("encode", m.kind()), |b| b.iter(|| encode(black_box(&env), k)));
            let encoded = encode(&env, k).unwrap();
            g.bench_function(BenchmarkId::new("decode", m.kind()), |b| {
                b.iter(|| decode(black_box(&encoded), k).unwrap())
            });
        }
        g.finish();
    }
}

/// Node construction (what a host pays once per node).
fn construct(c: &mut Criterion) {
    let all = ids(5);
    c.bench_function("construct/5_nodes", |b| {
        b.iter(|| Node::new(Config::new(all[0].clone(), CLUSTER).bootstrap(all.iter().cloned()), 7, None, 0).unwrap())
    });
}

fn quick() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1000))
        .sample_size(50)
}

criterion_group! { name = benches; config = quick(); targets = messages, ticks, value, codec, construct }
criterion_main!(benches);
