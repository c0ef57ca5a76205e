//! The measuring tools must measure what they claim: these check the simulator's observable
//! behaviour on a few trials (the benchmark itself runs thousands and asserts nothing).

use tenure_bench::plot::{cdf_grid, nice_max, Curve, Panel};
use tenure_bench::stats::{percentile, summarize};
use tenure_bench::{elect_large, trial, Fault, TrialSetup};

fn setup(nodes: usize, rtt_us: u64, fault: Fault) -> TrialSetup {
    TrialSetup { nodes, rtt_us, fault, min_cluster_size: 3 }
}

#[test]
fn transfer_hands_over_within_two_round_trips_in_one_term() {
    for seed in 0..30 {
        let r = trial(setup(5, 1_000, Fault::Transfer), seed);
        let us = r.leaderless_us.expect("a new leader");
        assert!(us <= 2_000, "seed {seed}: {us} µs");
        assert_eq!(r.terms, 1);
        assert!(r.safe);
    }
}

#[test]
fn silent_crash_waits_for_an_election_timeout_then_elects() {
    for seed in 0..30 {
        let r = trial(setup(5, 1_000, Fault::SilentCrash), seed);
        let us = r.leaderless_us.expect("a new leader");
        // Nobody is told: no follower may campaign before election_timeout_min after its last
        // heartbeat, which is at most one heartbeat interval (50 ms) before the crash.
        assert!(us >= 100_000, "seed {seed}: {us} µs is faster than the timeouts allow");
        assert!(us < 2_000_000, "seed {seed}: {us} µs");
        assert!(r.safe);
        assert!(r.cold_start_us >= 150_000, "no election before the first timeout");
    }
}

#[test]
fn reported_death_is_usually_repaired_within_milliseconds() {
    let mut samples: Vec<u64> =
        (0..40).map(|seed| trial(setup(5, 1_000, Fault::ReportedDeath), seed).leaderless_us.expect("leader")).collect();
    let s = summarize(&mut samples);
    assert!(s.p50 <= 25_000, "median {} µs", s.p50);
}

#[test]
fn a_large_cluster_elects_and_everyone_follows() {
    let big = elect_large(50, 1_000, 7);
    assert!(big.elected_us > 0);
    assert!(big.all_follow_us.is_some());
    assert!(big.messages_to_elect >= 49 * 2, "at least one pre-vote and vote round");
    assert!(big.kinds.iter().any(|(k, _)| *k == "vote"));
}

#[test]
fn percentiles_and_axis_maxima() {
    let v: Vec<u64> = (1..=100).collect();
    assert_eq!(percentile(&v, 50.0), 50);
    assert_eq!(percentile(&v, 99.0), 99);
    assert_eq!(percentile(&v, 100.0), 100);
    assert_eq!(nice_max(0.37), 0.5);
    assert_eq!(nice_max(301.0), 500.0);
    assert_eq!(nice_max(20.0), 20.0);
}

#[test]
fn plot_writes_a_png() {
    let path = std::env::temp_dir().join(format!("tenure-bench-plot-{}.png", std::process::id()));
    let panels = vec![Panel {
        title: "test panel".into(),
        curves: vec![Curve { series: 0, samples_us: vec![1_000, 2_000, 3_000] }],
    }];
    cdf_grid(&path, "title", &["legend".to_string()], 1, 1, &panels).expect("plot");
    let bytes = std::fs::read(&path).expect("png written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    std::fs::remove_file(&path).ok();
}
