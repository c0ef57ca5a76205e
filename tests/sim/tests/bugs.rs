//! Proof that the checker can fail: each deliberate protocol bug (core feature `bug-injection`,
//! switched on at run time for every node of the run) is caught within 1,000 seeds, and the
//! correct core passes the same seeds.

use tenure::Bug;
use tenure_sim::random::{run_seed, RunOptions};

fn first_caught(bug: Bug) -> (u64, &'static str) {
    let opts = RunOptions { bugs: vec![bug], verbose_log: false, ..RunOptions::default() };
    for seed in 0..1000 {
        if let Some(v) = run_seed(seed, &opts).violation {
            return (seed, v.invariant);
        }
    }
    panic!("{bug:?} was not caught within 1000 seeds: the checker cannot see it");
}

#[test]
fn double_vote_is_caught() {
    let (seed, inv) = first_caught(Bug::DoubleVote);
    assert!(matches!(inv, "S1" | "S2"), "seed {seed}: caught by {inv}");
}

#[test]
fn no_step_down_is_caught() {
    let (seed, inv) = first_caught(Bug::NoStepDown);
    assert!(matches!(inv, "S4" | "L1"), "seed {seed}: caught by {inv}");
}

#[test]
fn ignore_higher_term_is_caught() {
    let (seed, inv) = first_caught(Bug::IgnoreHigherTerm);
    assert!(matches!(inv, "L1" | "S4" | "S1"), "seed {seed}: caught by {inv}");
}

#[test]
fn quorum_off_by_one_is_caught() {
    let (seed, inv) = first_caught(Bug::QuorumOffByOne);
    assert!(matches!(inv, "S1-view" | "S1"), "seed {seed}: caught by {inv}");
}

#[test]
fn no_prevote_stickiness_is_caught() {
    let (seed, inv) = first_caught(Bug::NoPrevoteStickiness);
    assert_eq!(inv, "L1", "seed {seed}: caught by {inv}");
}

#[test]
fn the_correct_core_passes_the_same_seeds() {
    let opts = RunOptions { verbose_log: false, ..RunOptions::default() };
    for seed in 0..300 {
        if let Some(v) = run_seed(seed, &opts).violation {
            panic!("{v}");
        }
    }
}
