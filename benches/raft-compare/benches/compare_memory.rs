//! Heap bytes per node, tenure vs raft-rs, with a counting global allocator: each node of a
//! steady 5-node cluster is dropped in turn and the bytes it frees are counted (the boxed node
//! struct, its storage, its buffers). `cargo bench -p tenure-raft-compare --bench compare_memory`
//!
//! Prints a Markdown table; with `TENURE_BENCH_RESULTS` set, also writes `compare-memory.md`.

use std::alloc::System;

use stats_alloc::{StatsAlloc, INSTRUMENTED_SYSTEM};
use std::fmt::Write as _;

use tenure_raft_compare::{raft_side, tenure_side, NODES};

// The counting global allocator (stats_alloc): every call forwarded to the system allocator,
// counted. Live bytes = allocated - deallocated (stats_alloc adds a reallocation's growth to the
// first and its shrinkage to the second); allocations count reallocations too (each may move the
// block).
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn live() -> isize {
    let s = GLOBAL.stats();
    s.bytes_allocated as isize - s.bytes_deallocated as isize
}

fn allocs() -> usize {
    let s = GLOBAL.stats();
    s.allocations + s.reallocations
}

/// Bytes freed by dropping `v`.
fn freed_by<T>(v: T) -> isize {
    let before = live();
    drop(v);
    before - live()
}

/// Heap allocations made by `f`.
fn allocations(f: impl FnOnce()) -> usize {
    let before = allocs();
    f();
    allocs() - before
}

struct Row {
    leader: isize,
    follower_mean: f64,
    follower_max: isize,
}

fn tenure_row(key: Option<&[u8]>) -> Row {
    let mut c = tenure_side::Cluster::steady(NODES, key);
    let l = c.leader().expect("leader");
    let nodes: Vec<_> = c.nodes.drain(..).collect();
    drop(c);
    let sizes: Vec<(bool, isize)> = nodes.into_iter().enumerate().map(|(i, n)| (i == l, freed_by(n))).collect();
    row(&sizes)
}

fn raft_row() -> Row {
    let logger = raft_side::logger();
    let mut c = raft_side::Cluster::steady(NODES, &logger);
    let l = c.leader().expect("leader");
    let nodes: Vec<_> = c.nodes.drain(..).collect();
    let sizes: Vec<(bool, isize)> = nodes.into_iter().enumerate().map(|(i, n)| (i == l, freed_by(n))).collect();
    row(&sizes)
}

fn row(sizes: &[(bool, isize)]) -> Row {
    let leader = sizes.iter().find(|s| s.0).expect("leader").1;
    let followers: Vec<isize> = sizes.iter().filter(|s| !s.0).map(|s| s.1).collect();
    Row {
        leader,
        follower_mean: followers.iter().sum::<isize>() as f64 / followers.len() as f64,
        follower_max: *followers.iter().max().expect("followers"),
    }
}

fn main() {
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let t = tenure_row(None);
    let th = tenure_row(Some(b"0123456789abcdef0123456789abcdef"));
    let r = raft_row();

    let mut tf = tenure_side::FollowerRound::new(None);
    let mut rf = raft_side::FollowerRound::new();
    tf.round();
    rf.round();
    // The next heartbeat is encoded outside the count (see `FollowerRound::prepare`).
    tf.prepare(1);
    let t_allocs = allocations(|| {
        let _ = tf.round();
    });
    let r_allocs = allocations(|| drop(rf.round()));

    let mut out = String::new();
    let w = &mut out;
    writeln!(w, "### Heap per node: tenure vs raft-rs (steady 5-node cluster, counting allocator)\n").unwrap();
    writeln!(w, "| | leader (bytes) | follower, mean (bytes) | follower, max (bytes) |").unwrap();
    writeln!(w, "| --- | ---: | ---: | ---: |").unwrap();
    writeln!(w, "| tenure | {} | {:.0} | {} |", t.leader, t.follower_mean, t.follower_max).unwrap();
    writeln!(w, "| tenure, authenticated | {} | {:.0} | {} |", th.leader, th.follower_mean, th.follower_max).unwrap();
    writeln!(
        w,
        "| raft-rs 0.7.0 (`RawNode<MemStorage>`) | {} | {:.0} | {} |",
        r.leader, r.follower_mean, r.follower_max
    )
    .unwrap();
    let worst_t = t.leader.max(t.follower_max) as f64;
    let best_r = r.leader.min(r.follower_max) as f64;
    writeln!(
        w,
        "\ntenure uses {:.1}× less heap per follower and {:.1}× less per leader \
         (goal: at least 4×, i.e. ≤ ¼); worst tenure node vs best raft-rs node: {:.1}×.\n",
        r.follower_mean / t.follower_mean,
        r.leader as f64 / t.leader as f64,
        best_r / worst_t
    )
    .unwrap();
    writeln!(w, "Heap allocations per follower heartbeat round: tenure {t_allocs}, raft-rs {r_allocs}.").unwrap();
    print!("{out}");
    if let Ok(dir) = std::env::var("TENURE_BENCH_RESULTS") {
        std::fs::create_dir_all(&dir).expect("results directory");
        let dir = std::path::Path::new(&dir);
        std::fs::write(dir.join("compare-memory.md"), &out).expect("write results");
        let json = format!(
            "{{\"tenure_follower\": {:.0}, \"tenure_leader\": {}, \"raft_follower\": {:.0}, \"raft_leader\": {}}}\n",
            t.follower_mean, t.leader, r.follower_mean, r.leader
        );
        std::fs::write(dir.join("compare-memory.json"), json).expect("write results");
    }
}
