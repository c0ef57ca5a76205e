//! N follower heartbeat rounds of one side, for instruction counting (load-insensitive):
//! `perf stat -e instructions:u target/release/examples/rounds tenure|raft|setup N`
//! (`setup` builds both sides and runs no round: subtract its count.)

use std::hint::black_box;

use tenure_raft_compare::{raft_side, tenure_side};

fn main() {
    let mut args = std::env::args().skip(1);
    let side = args.next().unwrap_or_default();
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let mut t = tenure_side::FollowerRound::new(None);
    let mut r = raft_side::FollowerRound::new();
    t.prepare(n);
    match side.as_str() {
        "tenure" => (0..n).for_each(|_| {
            black_box(t.round());
        }),
        "raft" => (0..n).for_each(|_| {
            black_box(r.round());
        }),
        "setup" => {}
        other => panic!("side must be tenure, raft or setup, not {other:?}"),
    }
}
