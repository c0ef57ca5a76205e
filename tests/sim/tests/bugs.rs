//! Proof that the checker can fail: each deliberate protocol bug (core feature `bug-injection`,
//! switched on at run time for every node of the run) is caught within 1,000 seeds by the named
//! invariant — on a seed that the correct core passes with the same options, so that the catch is
//! the bug's doing and not a property of the schedule.

use tenure::Bug;
use tenure_sim::random::{run_seed, Fault, RunOptions};

fn opts(faults: &str, nodes: usize) -> RunOptions {
    RunOptions { faults: Fault::parse_list(faults).unwrap(), nodes, verbose_log: false, ..RunOptions::default() }
}

/// The first seed below 1,000 on which `bug` breaks an invariant and the correct core does not;
/// returns it with the invariant.
fn first_caught(bug: Bug, base: RunOptions) -> (u64, &'static str) {
    let with_bug = RunOptions { bugs: vec![bug], ..base.clone() };
    for seed in 0..1000 {
        if let Some(v) = run_seed(seed, &with_bug).violation {
            if run_seed(seed, &base).violation.is_none() {
                println!("{bug:?}: caught by {} on seed {seed}", v.invariant);
                return (seed, v.invariant);
            }
        }
    }
    panic!("{bug:?} was not caught within 1000 seeds: the checker cannot see it");
}

fn default_faults() -> RunOptions {
    opts("default", 5)
}

#[test]
fn double_vote_is_caught() {
    let (seed, inv) = first_caught(Bug::DoubleVote, default_faults());
    assert!(matches!(inv, "S1" | "S2"), "seed {seed}: caught by {inv}");
}

#[test]
fn no_step_down_is_caught() {
    let (seed, inv) = first_caught(Bug::NoStepDown, default_faults());
    assert!(matches!(inv, "S4" | "L1"), "seed {seed}: caught by {inv}");
}

#[test]
fn ignore_higher_term_is_caught() {
    let (seed, inv) = first_caught(Bug::IgnoreHigherTerm, default_faults());
    assert!(matches!(inv, "L1" | "S4" | "S1"), "seed {seed}: caught by {inv}");
}

#[test]
fn quorum_off_by_one_is_caught() {
    let (seed, inv) = first_caught(Bug::QuorumOffByOne, default_faults());
    assert!(matches!(inv, "S1-view" | "S1"), "seed {seed}: caught by {inv}");
}

#[test]
fn no_prevote_stickiness_is_caught() {
    let (seed, inv) = first_caught(Bug::NoPrevoteStickiness, default_faults());
    assert!(matches!(inv, "L1" | "lease"), "seed {seed}: caught by {inv}");
}

/// A leader deposed by a higher term must keep its promise (its own lease).
#[test]
fn deposed_forgets_promise_is_caught_by_the_lease() {
    let (seed, inv) = first_caught(Bug::DeposedForgetsPromise, default_faults());
    assert_eq!(inv, "lease", "seed {seed}: caught by {inv}");
}

/// A restarted follower must not vote before the promise of its last ack expires.
#[test]
fn restart_votes_at_once_is_caught_by_the_lease() {
    let (seed, inv) = first_caught(Bug::RestartVotesAtOnce, opts("crash,oneway,partition", 3));
    assert_eq!(inv, "lease", "seed {seed}: caught by {inv}");
}

/// Check-quorum must count only fresh echoes of the leader's heartbeats.
#[test]
fn any_message_is_evidence_is_caught_by_check_quorum() {
    let (seed, inv) = first_caught(Bug::AnyMessageIsEvidence, default_faults());
    assert_eq!(inv, "S4", "seed {seed}: caught by {inv}");
}

/// A term past the bound or an implausible jump must be dropped.
#[test]
fn unbounded_term_is_caught() {
    let (seed, inv) = first_caught(Bug::UnboundedTerm, opts("hugeterm,crash,partition", 5));
    assert!(matches!(inv, "terms" | "L1"), "seed {seed}: caught by {inv}");
}

/// Only a newer heartbeat may refresh stickiness (a replayed one must not).
#[test]
fn stale_heartbeat_refreshes_is_caught_by_the_failover_bound() {
    let (seed, inv) = first_caught(Bug::StaleHeartbeatRefreshes, opts("replay,crash,partition", 5));
    assert_eq!(inv, "L1", "seed {seed}: caught by {inv}");
}

/// The correct core passes the in-scope default faults (every variant but amnesia and
/// membership) on the first 300 seeds.
#[test]
fn the_correct_core_passes_the_same_seeds() {
    let opts = default_faults();
    for seed in 0..300 {
        if let Some(v) = run_seed(seed, &opts).violation {
            panic!("{v}");
        }
    }
}

/// A `refused` report may end stickiness but never the lease promise (a false report
/// about a live leader would elect a second one inside its lease).
#[test]
fn refused_releases_promise_is_caught_by_the_lease_invariant() {
    let (seed, inv) = first_caught(Bug::RefusedReleasesPromise, opts("refused,partition,loss", 5));
    assert_eq!(inv, "lease", "seed {seed}: caught by {inv}");
}

/// A repeated grant to the same candidate in the same term must not restart the election timer:
/// the recorder replaying a dead leader's vote requests after its crash would hold its voters.
#[test]
fn repeated_vote_restarts_timer_is_caught_by_the_failover_bound_under_replays() {
    let (seed, inv) = first_caught(Bug::RepeatedVoteRestartsTimer, opts("replay,crash,partition", 3));
    assert_eq!(inv, "L1", "seed {seed}: caught by {inv}");
}

/// Check quorum must hold from a leadership's first moment: a late confirmation must not lead on
/// votes older than `election_timeout_min` (hosts that answer the confirm gate late).
#[test]
fn unchecked_leadership_start_is_caught_by_check_quorum_from_the_first_moment() {
    let (seed, inv) = first_caught(Bug::UncheckedLeadershipStart, default_faults());
    assert_eq!(inv, "S4", "seed {seed}: caught by {inv}");
}

/// A watchdog that sends its notices while its node lives (a stalled leader taken for
/// dead) lets the followers elect a new leader inside the old one's lease.
#[test]
fn a_watchdog_that_sends_while_its_node_lives_is_caught_by_the_lease() {
    let base = opts("notice,crash,pause,partition,transfer", 5);
    let with_bug = RunOptions { watchdog_sends_while_alive: true, ..base.clone() };
    let caught = (0..1000).find_map(|seed| {
        let v = run_seed(seed, &with_bug).violation?;
        run_seed(seed, &base).violation.is_none().then_some((seed, v.invariant))
    });
    let (seed, inv) = caught.expect("the live watchdog was not caught within 1000 seeds");
    assert_eq!(inv, "lease", "seed {seed}: caught by {inv}");
}

/// Death notices go only to members that said they speak wire version 4; a core that
/// addresses every member sends v0.1.0 nodes a kind they cannot read.
#[test]
fn notices_to_every_member_are_caught_by_the_wire_version_gate() {
    let (seed, inv) = first_caught(Bug::NoticeToEveryMember, opts("versions,notice,crash,pause,partition", 5));
    assert_eq!(inv, "gate", "seed {seed}: caught by {inv}");
}

/// A preemption must be a transfer: a leader that tells the member of higher priority to campaign
/// and leads on (its lease running) is caught by the lease invariant.
#[test]
fn a_preemption_without_a_transfer_is_caught_by_the_lease_invariant() {
    let (seed, inv) = first_caught(Bug::PreemptWithoutTransfer, opts("priority,crash,pause,partition,loss", 5));
    assert!(matches!(inv, "lease" | "S1"), "seed {seed}: caught by {inv}");
}

/// An observer is never counted: a member that takes an observer's `Observe` for a member's
/// acknowledgement lets it into its view (and its answers into the quorum).
#[test]
fn an_observer_counted_in_a_quorum_is_caught_by_the_observer_invariant() {
    let base = RunOptions { observers: 2, ..opts("crash,pause,partition,loss", 5) };
    let (seed, inv) = first_caught(Bug::ObserverCounted, base);
    assert_eq!(inv, "observer", "seed {seed}: caught by {inv}");
}
