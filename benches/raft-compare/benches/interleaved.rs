//! The tenure/raft-rs CPU ratio measured so that background load hits both sides alike: short
//! timed chunks of tenure rounds and raft-rs rounds alternate, and the median of the per-pair
//! ratios is reported. `cargo bench -p tenure-raft-compare --bench interleaved`
//!
//! Prints Markdown; with `TENURE_BENCH_RESULTS` set, also writes `compare-interleaved.md` and
//! `compare-interleaved.json`.

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Instant;

use tenure_raft_compare::{raft_side, tenure_side};

const CHUNK: u32 = 250;
const PAIRS: usize = 4_000;

fn main() {
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let mut t = tenure_side::FollowerRound::new(None);
    let mut r = raft_side::FollowerRound::new();
    // Warm up both.
    t.prepare(CHUNK as usize * 10);
    for _ in 0..CHUNK * 10 {
        black_box(t.round());
        black_box(r.round());
    }
    let mut ratios = Vec::with_capacity(PAIRS);
    let (mut t_total, mut r_total) = (0f64, 0f64);
    for i in 0..PAIRS {
        // Alternate which side goes first, so neither always follows the other. Fresh heartbeats
        // for tenure's chunk are encoded before its clock starts (see `FollowerRound::prepare`).
        t.prepare(CHUNK as usize);
        let mut time_t = || {
            let s = Instant::now();
            for _ in 0..CHUNK {
                black_box(t.round());
            }
            s.elapsed().as_nanos() as f64 / f64::from(CHUNK)
        };
        let (tn, rn);
        if i % 2 == 0 {
            tn = time_t();
            let s = Instant::now();
            for _ in 0..CHUNK {
                black_box(r.round());
            }
            rn = s.elapsed().as_nanos() as f64 / f64::from(CHUNK);
        } else {
            let s = Instant::now();
            for _ in 0..CHUNK {
                black_box(r.round());
            }
            rn = s.elapsed().as_nanos() as f64 / f64::from(CHUNK);
            tn = time_t();
        }
        t_total += tn;
        r_total += rn;
        ratios.push(rn / tn);
    }
    ratios.sort_by(f64::total_cmp);
    let median = ratios[PAIRS / 2];
    let (p10, p90) = (ratios[PAIRS / 10], ratios[PAIRS * 9 / 10]);
    let (tm, rm) = (t_total / PAIRS as f64, r_total / PAIRS as f64);

    let mut out = String::new();
    writeln!(
        out,
        "Interleaved measurement ({PAIRS} alternating pairs of {CHUNK}-round chunks, so load from \
         other processes hits both alike): tenure {tm:.0} ns, raft-rs {rm:.0} ns per follower heartbeat \
         round; raft-rs ÷ tenure per pair: median **{median:.2}×** (10th–90th percentile \
         {p10:.2}–{p90:.2}×; goal ≥ 3×).\n"
    )
    .unwrap();
    print!("{out}");
    if let Ok(dir) = std::env::var("TENURE_BENCH_RESULTS") {
        let dir = std::path::Path::new(&dir);
        std::fs::create_dir_all(dir).expect("results directory");
        std::fs::write(dir.join("compare-interleaved.md"), &out).expect("write results");
        let json = format!(
            "{{\"tenure_ns\": {tm:.1}, \"raft_ns\": {rm:.1}, \"ratio_median\": {median:.3}, \"ratio_p10\": {p10:.3}, \"ratio_p90\": {p90:.3}}}\n"
        );
        std::fs::write(dir.join("compare-interleaved.json"), json).expect("write results");
    }
}
