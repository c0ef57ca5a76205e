//! Heap bytes per node and per peer, allocations per message, and wire sizes, measured with a
//! counting global allocator. `cargo bench -p tenure --bench memory`
//!
//! Prints a Markdown report; when `TENURE_BENCH_RESULTS` names a directory, also writes it there
//! as `core-memory.md` (collected into BENCHMARKS.md by `make bench`).

mod common;

use std::alloc::System;

use stats_alloc::{StatsAlloc, INSTRUMENTED_SYSTEM};
use std::fmt::Write as _;
use std::hint::black_box;

use common::{bytes, drain, envelope, follower, id, key, leader};
use tenure::wire::{encode, Message};
use tenure::{Node, Output};

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

/// Heap bytes still held by the value `make` builds (boxed, so the struct itself counts too).
fn heap_of<T>(make: impl FnOnce() -> T) -> (isize, Box<T>) {
    let before = live();
    let b = Box::new(make());
    (live() - before, b)
}

/// Steady-state follower of a 5-node cluster after it heard every peer once.
fn steady_follower(n: usize) -> Node {
    let (mut node, _, now) = follower(n, false);
    for i in 2..n {
        // Every peer writes once (as pre-vote probes would), so all are "answered".
        let m = bytes(&id(i), node.id(), 0, Message::PreVote, false);
        node.handle_message(now, &id(i), &m).unwrap();
    }
    drain(&mut node, now);
    node
}

/// Steady-state leader of `n` nodes that has sent heartbeats and collected acks from everyone.
fn steady_leader(n: usize) -> Node {
    let (mut node, _) = leader(n, false, None);
    for _ in 0..3 {
        let now = node.poll_timeout().unwrap();
        node.handle_timeout(now);
        drain(&mut node, now);
        for i in 1..n {
            let m = bytes(&id(i), node.id(), node.term(), Message::HeartbeatAck { echo: now }, false);
            node.handle_message(now, &id(i), &m).unwrap();
        }
    }
    assert!(node.is_leader());
    node
}

fn per_peer(f: impl Fn(usize) -> Node, small: usize, large: usize) -> (isize, isize, f64) {
    let (a, na) = heap_of(|| f(small));
    let (b, nb) = heap_of(|| f(large));
    drop((na, nb));
    (a, b, (b - a) as f64 / (large - small) as f64)
}

fn main() {
    // Under `cargo test --benches` run quickly and print nothing.
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let mut out = String::new();
    let w = &mut out;
    writeln!(w, "### Heap per node (counting global allocator)\n").unwrap();
    writeln!(w, "`size_of::<Node>()` = {} bytes (included below).\n", std::mem::size_of::<Node>()).unwrap();
    writeln!(w, "| node | live heap bytes |").unwrap();
    writeln!(w, "| --- | ---: |").unwrap();
    let (f5, _n) = heap_of(|| steady_follower(5));
    writeln!(w, "| follower, 5-node cluster, steady | {f5} |").unwrap();
    let (l5, _n) = heap_of(|| steady_leader(5));
    writeln!(w, "| leader, 5-node cluster, steady | {l5} |").unwrap();
    let (fa, _n) = heap_of(|| follower(5, true).0);
    writeln!(w, "| follower, 5-node cluster, authenticated | {fa} |").unwrap();

    writeln!(w, "\n### Heap per peer\n").unwrap();
    writeln!(w, "| role | 10 peers | 1,000 peers | bytes per extra peer |").unwrap();
    writeln!(w, "| --- | ---: | ---: | ---: |").unwrap();
    let (a, b, s) = per_peer(steady_follower, 11, 1001);
    writeln!(w, "| follower | {a} | {b} | {s:.1} |").unwrap();
    let (a, b, s) = per_peer(steady_leader, 11, 1001);
    writeln!(w, "| leader | {a} | {b} | {s:.1} |").unwrap();

    writeln!(w, "\n### Allocations per operation (steady state)\n").unwrap();
    writeln!(w, "| operation | heap allocations | bytes still live after |").unwrap();
    writeln!(w, "| --- | ---: | ---: |").unwrap();
    for auth in [false, true] {
        let label = if auth { "authenticated" } else { "plain" };
        let (mut node, _, now) = follower(5, auth);
        let leader_id = id(0);
        // The leader's next heartbeat (a replay of the first would be dropped, unanswered).
        let hb = bytes(&leader_id, node.id(), 1, Message::Heartbeat { sent_at: 2_000 }, auth);
        let (a0, l0) = (allocs(), live());
        node.handle_message(now + 1, &leader_id, &hb).unwrap();
        let ack = node.poll_output();
        assert!(matches!(ack, Some(Output::Send { .. })), "a fresh heartbeat is acknowledged");
        black_box(&ack);
        drop(ack);
        writeln!(w, "| follower: heartbeat in → ack out ({label}) | {} | {} |", allocs() - a0, live() - l0).unwrap();

        let (mut node, now) = leader(5, auth, None);
        let ack = bytes(&id(1), node.id(), node.term(), Message::HeartbeatAck { echo: now }, auth);
        let (a0, l0) = (allocs(), live());
        node.handle_message(now + 1, &id(1), &ack).unwrap();
        writeln!(w, "| leader: ack in ({label}) | {} | {} |", allocs() - a0, live() - l0).unwrap();

        let (mut node, now) = leader(101, auth, None);
        let t = node.poll_timeout().unwrap().max(now);
        let (a0, l0) = (allocs(), live());
        node.handle_timeout(t);
        let mut sent = 0;
        while let Some(o) = node.poll_output() {
            if let Output::Send { .. } = o {
                sent += 1;
            }
        }
        assert_eq!(sent, 100);
        writeln!(
            w,
            "| leader: heartbeat tick, 100 peers, per peer ({label}) | {:.1} | {} |",
            (allocs() - a0) as f64 / 100.0,
            live() - l0
        )
        .unwrap();
    }

    writeln!(w, "\n### Wire sizes (bytes; ids like `10.0.0.1:7000`, cluster `bench-cluster`)\n").unwrap();
    writeln!(w, "| message | plain | authenticated |").unwrap();
    writeln!(w, "| --- | ---: | ---: |").unwrap();
    for m in [
        Message::PreVote,
        Message::PreVoteReply { granted: true },
        Message::Vote { transfer: false },
        Message::VoteReply { granted: true },
        Message::Heartbeat { sent_at: 1_733_150_000_123 },
        Message::HeartbeatAck { echo: 1_733_150_000_123 },
        Message::TimeoutNow,
        Message::App { seq: 1, payload: vec![0xAB; 64] },
    ] {
        let kind = if let Message::App { .. } = m { "app (64-byte payload)" } else { m.kind() };
        let env = envelope(&id(0), 42, m);
        let plain = encode(&env, key(false, "10.0.0.9:7000")).unwrap().len();
        let tagged = encode(&env, key(true, "10.0.0.9:7000")).unwrap().len();
        writeln!(w, "| {kind} | {plain} | {tagged} |").unwrap();
    }

    print!("{out}");
    if let Ok(dir) = std::env::var("TENURE_BENCH_RESULTS") {
        std::fs::create_dir_all(&dir).expect("results directory");
        std::fs::write(std::path::Path::new(&dir).join("core-memory.md"), &out).expect("write results");
    }
}
