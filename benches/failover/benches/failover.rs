//! Failover distributions and a large-cluster election, from the simulator in this crate.
//! `cargo bench -p tenure-bench --bench failover`
//!
//! For 3, 5 and 9 nodes at round trips of 0.2, 1 and 10 ms (default timeouts: election
//! 150–300 ms, heartbeat 50 ms), `TENURE_FAILOVER_TRIALS` trials (default 10,000) per cell of
//! each fault: a silent leader crash, a reported leader death (`peer_down(terminated)` delivered
//! one one-way delay after the crash), a graceful transfer. Then a 1,000-node cluster elects from
//! cold. Writes `docs/failover.png` and a Markdown report (stdout, and `failover.md` under
//! `TENURE_BENCH_RESULTS` when set).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use tenure::{DEFAULT_ELECTION_TIMEOUT_MAX, DEFAULT_MIN_CLUSTER_SIZE};
use tenure_bench::plot::{cdf_grid, Curve, Panel};
use tenure_bench::stats::{ms, summarize};
use tenure_bench::{elect_large, trial, Fault, TrialSetup};

const SIZES: [usize; 3] = [3, 5, 9];
const RTTS_US: [u64; 3] = [200, 1_000, 10_000];

struct Cell {
    nodes: usize,
    rtt_us: u64,
    fault: Fault,
    min_cluster_size: u32,
    leaderless: Vec<u64>,
    cold: Vec<u64>,
    failures: usize,
    unsafe_trials: usize,
    extra_terms: usize,
}

fn setup_for(nodes: usize, fault: Fault) -> u32 {
    // With 3 nodes, removing the dead leader leaves a view of 2: below the default
    // min_cluster_size of 3 no leader may exist (by design), so that cell runs with 2.
    if fault == Fault::ReportedDeath && nodes == 3 {
        2
    } else {
        DEFAULT_MIN_CLUSTER_SIZE
    }
}

fn run_cell(cell: &mut Cell, trials: usize, threads: usize) {
    let setup = TrialSetup {
        nodes: cell.nodes,
        rtt_us: cell.rtt_us,
        fault: cell.fault,
        min_cluster_size: cell.min_cluster_size,
    };
    let base = (cell.nodes as u64) << 40 ^ cell.rtt_us << 8 ^ cell.fault as u64;
    let next = AtomicUsize::new(0);
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= trials {
                            return out;
                        }
                        out.push(trial(setup, base.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i as u64));
                    }
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("trial thread")).collect()
    });
    for r in results {
        cell.cold.push(r.cold_start_us);
        match r.leaderless_us {
            Some(us) => cell.leaderless.push(us),
            None => cell.failures += 1,
        }
        if r.terms > 1 {
            cell.extra_terms += 1;
        }
        if !r.safe {
            cell.unsafe_trials += 1;
        }
    }
}

fn goal(cell: &Cell, p99: u64, max: u64) -> String {
    let rtt = cell.rtt_us;
    let (bound, what) = match cell.fault {
        Fault::SilentCrash => (DEFAULT_ELECTION_TIMEOUT_MAX * 1000 + 2 * rtt, "p99 ≤ max timeout + 2 RTT"),
        Fault::ReportedDeath if rtt == 1_000 => (25_000, "≤ 25 ms"),
        Fault::ReportedDeath => return "–".into(),
        Fault::Transfer => (2 * rtt, "p99 ≤ 2 RTT"),
    };
    let value = if cell.fault == Fault::ReportedDeath { max } else { p99 };
    let verdict = if value <= bound { "met" } else { "**missed**" };
    format!("{what} ({} ms): {verdict}", ms(bound))
}

fn main() {
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let trials: usize = std::env::var("TENURE_FAILOVER_TRIALS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let started = Instant::now();
    let mut cells = Vec::new();
    for fault in Fault::ALL {
        for &nodes in &SIZES {
            for &rtt_us in &RTTS_US {
                let mut cell = Cell {
                    nodes,
                    rtt_us,
                    fault,
                    min_cluster_size: setup_for(nodes, fault),
                    leaderless: Vec::new(),
                    cold: Vec::new(),
                    failures: 0,
                    unsafe_trials: 0,
                    extra_terms: 0,
                };
                run_cell(&mut cell, trials, threads);
                eprintln!(
                    "failover: {} / {nodes} nodes / RTT {} ms: {} trials in {:.1} s so far",
                    fault.name(),
                    ms(rtt_us),
                    trials,
                    started.elapsed().as_secs_f64()
                );
                cells.push(cell);
            }
        }
    }
    let sim_secs = started.elapsed().as_secs_f64();

    let mut headline: Vec<(String, String, String)> = Vec::new();
    let mut out = String::new();
    let w = &mut out;
    writeln!(w, "### Leaderless time after a fault ({trials} trials per cell)\n").unwrap();
    writeln!(
        w,
        "Simulated network: one-way delay = RTT/2 ± 20 % (uniform); nodes see a millisecond clock; \
         default timeouts (election 150–300 ms, heartbeat 50 ms); the host grants `confirm_leader` at \
         once. Measured from the fault to the first `BecameLeader` of a later term. The fault strikes \
         100–200 ms (uniform) after the first leader was elected.\n"
    )
    .unwrap();
    for fault in Fault::ALL {
        writeln!(w, "#### {}\n", fault.name()).unwrap();
        writeln!(w, "| nodes | RTT (ms) | p50 (ms) | p99 (ms) | max (ms) | mean (ms) | needed > 1 term | no leader in 10 s | goal |").unwrap();
        writeln!(w, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |").unwrap();
        for cell in cells.iter_mut().filter(|c| c.fault == fault) {
            let s = summarize(&mut cell.leaderless);
            if cell.nodes == 5 && cell.rtt_us == 1_000 {
                headline.push((
                    format!("leaderless after a {}, 5 nodes, RTT 1 ms (p50 / p99 / max)", fault.name()),
                    format!("{} / {} / {} ms", ms(s.p50), ms(s.p99), ms(s.max)),
                    goal(cell, s.p99, s.max),
                ));
            }
            let note = if cell.min_cluster_size != DEFAULT_MIN_CLUSTER_SIZE {
                format!(" (min_cluster_size {})", cell.min_cluster_size)
            } else {
                String::new()
            };
            writeln!(
                w,
                "| {}{note} | {} | {} | {} | {} | {:.1} | {:.1} % | {} | {} |",
                cell.nodes,
                ms(cell.rtt_us),
                ms(s.p50),
                ms(s.p99),
                ms(s.max),
                s.mean / 1000.0,
                100.0 * cell.extra_terms as f64 / trials as f64,
                cell.failures,
                goal(cell, s.p99, s.max)
            )
            .unwrap();
        }
        writeln!(w).unwrap();
    }
    let unsafe_total: usize = cells.iter().map(|c| c.unsafe_trials).sum();
    writeln!(w, "Safety across all {} trials: {} with two leaders in one term.\n", cells.len() * trials, unsafe_total)
        .unwrap();

    writeln!(w, "#### Cold start (first election from boot, all trials of a size and RTT)\n").unwrap();
    writeln!(w, "| nodes | RTT (ms) | p50 (ms) | p99 (ms) | max (ms) |").unwrap();
    writeln!(w, "| ---: | ---: | ---: | ---: | ---: |").unwrap();
    for &nodes in &SIZES {
        for &rtt_us in &RTTS_US {
            let mut cold: Vec<u64> =
                cells.iter().filter(|c| c.nodes == nodes && c.rtt_us == rtt_us).flat_map(|c| c.cold.clone()).collect();
            let s = summarize(&mut cold);
            writeln!(w, "| {nodes} | {} | {} | {} | {} |", ms(rtt_us), ms(s.p50), ms(s.p99), ms(s.max)).unwrap();
        }
    }

    // The plot: rows are cluster sizes, columns faults, one curve per round trip.
    let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs");
    std::fs::create_dir_all(&docs).expect("docs directory");
    let png = docs.join("failover.png");
    let mut panels = Vec::new();
    for &nodes in &SIZES {
        for fault in Fault::ALL {
            let curves = cells
                .iter()
                .filter(|c| c.nodes == nodes && c.fault == fault)
                .enumerate()
                .map(|(k, c)| Curve { series: k, samples_us: c.leaderless.clone() })
                .collect();
            panels.push(Panel { title: format!("{}, {nodes} nodes", fault.name()), curves });
        }
    }
    let legend: Vec<String> = RTTS_US.iter().map(|r| format!("RTT {} ms", ms(*r))).collect();
    cdf_grid(
        &png,
        &format!("tenure: leaderless time after a fault (CDF, {trials} trials per curve)"),
        &legend,
        SIZES.len(),
        Fault::ALL.len(),
        &panels,
    )
    .expect("plot");
    writeln!(w, "\n![Leaderless time CDFs](docs/failover.png)\n").unwrap();

    // A 1,000-node cluster elects from cold.
    let big = elect_large(1_000, 1_000, 42);
    writeln!(w, "### A 1,000-node cluster elects from cold (RTT 1 ms)\n").unwrap();
    writeln!(w, "| first leader (ms) | every node follows it (ms) | messages until elected | by kind | simulation wall time (s) |").unwrap();
    writeln!(w, "| ---: | ---: | ---: | --- | ---: |").unwrap();
    let kinds: Vec<String> = big.kinds.iter().map(|(k, v)| format!("{k} {v}")).collect();
    writeln!(
        w,
        "| {} | {} | {} | {} | {:.1} |",
        ms(big.elected_us),
        big.all_follow_us.map_or("not within 5 s".to_string(), ms),
        big.messages_to_elect,
        kinds.join(", "),
        big.wall_ms as f64 / 1000.0
    )
    .unwrap();
    writeln!(w, "\nFailover simulation: {:.0} s of wall time on {threads} threads.", sim_secs).unwrap();

    headline.push((
        "1,000-node cluster elects from cold (RTT 1 ms)".into(),
        format!("first leader at {} ms, {} messages", ms(big.elected_us), big.messages_to_elect),
        String::new(),
    ));

    print!("{out}");
    if let Ok(dir) = std::env::var("TENURE_BENCH_RESULTS") {
        let dir = std::path::Path::new(&dir);
        std::fs::create_dir_all(dir).expect("results directory");
        std::fs::write(dir.join("failover.md"), &out).expect("write results");
        let items: Vec<String> = headline
            .iter()
            .map(|(what, value, goal)| {
                format!(
                    "{{\"what\": {}, \"value\": {}, \"goal\": {}}}",
                    json_str(what),
                    json_str(value),
                    json_str(goal)
                )
            })
            .collect();
        let json = format!("{{\"headline\": [{}]}}\n", items.join(", "));
        std::fs::write(dir.join("failover.json"), json).expect("write results");
    }
}

/// A JSON string literal.
fn json_str(s: &str) -> String {
    let mut o = String::from('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}
