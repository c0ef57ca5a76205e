//! tenure vs raft-rs, same run, same machine: the full cost of one heartbeat round on a follower
//! of a steady 5-node cluster (bytes in → response bytes out), and of the leader handling one
//! heartbeat response. `cargo bench -p tenure-raft-compare --bench compare`

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use tenure_raft_compare::{raft_side, tenure_side};

const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

fn follower_round(c: &mut Criterion) {
    let mut g = c.benchmark_group("compare_follower_heartbeat_round");
    let mut t = tenure_side::FollowerRound::new(None);
    g.bench_function("tenure", |b| b.iter_custom(|iters| fresh_rounds(&mut t, iters)));
    let mut r = raft_side::FollowerRound::new();
    g.bench_function("raft-rs", |b| b.iter(|| black_box(r.round())));
    let mut th = tenure_side::FollowerRound::new(Some(KEY));
    g.bench_function("tenure_hmac", |b| b.iter_custom(|iters| fresh_rounds(&mut th, iters)));
    g.finish();
}

/// Times `iters` tenure rounds, each on a fresh heartbeat encoded before the clock starts (a
/// follower drops a replayed one), in batches that stay in cache.
fn fresh_rounds(t: &mut tenure_side::FollowerRound, iters: u64) -> Duration {
    const BATCH: u64 = 256;
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let n = left.min(BATCH);
        t.prepare(n as usize);
        let start = Instant::now();
        for _ in 0..n {
            black_box(t.round());
        }
        total += start.elapsed();
        left -= n;
    }
    total
}

fn leader_ack(c: &mut Criterion) {
    let mut g = c.benchmark_group("compare_leader_ack");
    let mut t = tenure_side::LeaderAck::new(None);
    g.bench_function("tenure", |b| b.iter(|| t.handle()));
    let mut r = raft_side::LeaderAck::new();
    g.bench_function("raft-rs", |b| b.iter(|| r.handle()));
    let mut th = tenure_side::LeaderAck::new(Some(KEY));
    g.bench_function("tenure_hmac", |b| b.iter(|| th.handle()));
    g.finish();
    assert!(t.is_leader() && r.is_leader() && th.is_leader());
}

fn quick() -> Criterion {
    Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2))
}

criterion_group! { name = benches; config = quick(); targets = follower_round, leader_ack }
criterion_main!(benches);
