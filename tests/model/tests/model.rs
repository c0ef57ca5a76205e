//! Quick checks of the model checker itself (debug build, seconds): a small bound of the real
//! protocol is clean and reaches an election; an injected bug gives a counterexample whose
//! scenario files replay against the core (with the bug), step by step. `make model-check` runs
//! the CI bounds and every injected bug in release.

use tenure::Bug;
use tenure_model::{check, scopes, trace, Opts};

fn scope(name: &str) -> Opts {
    scopes().into_iter().find(|s| s.name == name).expect("scope").opts
}

fn election() -> Opts {
    scope("election")
}

#[test]
fn a_small_bound_of_the_real_protocol_is_clean_and_elects() {
    let r = check(election(), 7, 1, false, "test");
    assert!(r.violation.is_none(), "{:?}", r.violation.map(|v| v.1));
    assert!(r.elected, "the bound reaches no election: it would check nothing");
    assert!(r.states > 1000, "{} states", r.states);
}

/// A quorum of one lets a node lead alone: caught, and the counterexample's scenario files
/// reproduce what each node did.
#[test]
fn quorum_off_by_one_is_caught_and_its_scenarios_replay() {
    let bugs = vec![Bug::QuorumOffByOne];
    let r = check(Opts { bugs: bugs.clone(), ..election() }, 12, 1, false, "test-quorum");
    let (name, text, scenarios) = r.violation.expect("caught");
    // A node that leads on its own vote leads without a quorum's evidence from its first moment
    // (check-quorum), and a second node can lead the same term beside it (one-leader).
    assert!(name == "check-quorum" || name == "one-leader", "{text}");
    assert!(text.contains(&format!("VIOLATED {name}")), "{text}");
    assert!(!scenarios.is_empty());
    for s in &scenarios {
        trace::replay(s, &bugs).unwrap_or_else(|e| panic!("{e}\n{text}"));
    }
    // The correct core, given the same inputs, disagrees somewhere: the bug made the difference.
    assert!(scenarios.iter().any(|s| trace::replay(s, &[]).is_err()));
}

/// A restarted node that votes before its boot promise ends elects a second leader inside the
/// first one's lease, once a partition has let another node's timer run out: a path of eight
/// actions (two of them quiet stretches), found breadth-first, printed and replayed.
#[test]
fn a_restart_that_votes_at_once_breaks_the_lease_in_the_failover_scope() {
    let bugs = vec![Bug::RestartVotesAtOnce];
    let r = check(Opts { bugs: bugs.clone(), ..scope("failover") }, 8, 1, true, "test-restart");
    let (name, text, scenarios) = r.violation.expect("caught");
    assert_eq!(name, "lease", "{text}");
    assert!(text.contains("restarts from durable state"), "{text}");
    for s in &scenarios {
        trace::replay(s, &bugs).unwrap_or_else(|e| panic!("{e}\n{text}"));
    }
    assert!(scenarios.iter().any(|s| trace::replay(s, &[]).is_err()));
}

/// The same scope without the bug: every state within the bound is clean, and leaders exist.
#[test]
fn the_failover_scope_of_the_real_protocol_is_clean() {
    let r = check(scope("failover"), 8, 1, true, "test");
    assert!(r.violation.is_none(), "{:?}", r.violation.map(|v| v.1));
    assert!(r.elected);
    assert!(r.checked > 1000, "{} states", r.checked);
}

/// A preemption that tells the member of higher priority to campaign while the leader leads on
/// (its lease running) is caught by `preempt` at the `TimeoutNow`, and its scenario files (wire
/// version 4: priorities need it) replay with the bug and differ without it.
#[test]
fn a_preemption_without_a_transfer_is_caught_by_preempt_in_the_priority_scope() {
    let bugs = vec![Bug::PreemptWithoutTransfer];
    let opts = Opts { bugs: bugs.clone(), ..scope("priority") };
    let r = check(opts.clone(), 4, 1, true, "test-preempt");
    let (name, text, scenarios) = r.violation.expect("caught");
    assert_eq!(name, "preempt", "{text}");
    assert!(text.contains("still leads"), "{text}");
    for s in &scenarios {
        trace::replay_in(&opts, s, &bugs).unwrap_or_else(|e| panic!("{e}\n{text}"));
    }
    assert!(scenarios.iter().any(|s| trace::replay_in(&opts, s, &[]).is_err()));
}

/// The priority scope without the bug: clean, and its bound reaches a preemption (a scope that
/// never preempts would check `preempt` on nothing).
#[test]
fn the_priority_scope_of_the_real_protocol_is_clean_and_preempts() {
    let r = check(scope("priority"), 4, 1, true, "test");
    assert!(r.violation.is_none(), "{:?}", r.violation.map(|v| v.1));
    assert!(r.elected && r.preempted);
}

/// A member that takes an observer's `Observe` for an acknowledgement lets it into its view:
/// caught by `observer`, and the scenario files replay with the bug and differ without it.
#[test]
fn an_observer_counted_is_caught_by_observer_in_the_observer_scope() {
    let bugs = vec![Bug::ObserverCounted];
    let opts = Opts { bugs: bugs.clone(), ..scope("observer") };
    let r = check(opts.clone(), 6, 1, true, "test-observer");
    let (name, text, scenarios) = r.violation.expect("caught");
    assert_eq!(name, "observer", "{text}");
    for s in &scenarios {
        trace::replay_in(&opts, s, &bugs).unwrap_or_else(|e| panic!("{e}\n{text}"));
    }
    assert!(scenarios.iter().any(|s| trace::replay_in(&opts, s, &[]).is_err()));
}

/// The observer scope without the bug: clean within a small bound.
#[test]
fn the_observer_scope_of_the_real_protocol_is_clean() {
    let r = check(scope("observer"), 5, 1, true, "test");
    assert!(r.violation.is_none(), "{:?}", r.violation.map(|v| v.1));
    assert!(r.elected);
}
