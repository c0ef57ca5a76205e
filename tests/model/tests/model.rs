//! Quick checks of the model checker itself (debug build, seconds): a small bound of the real
//! protocol is clean and reaches an election; an injected bug gives a counterexample whose
//! scenario files replay against the core (with the bug), step by step. `make model-check` runs
//! the CI bounds and every injected bug in release.

use tenure::Bug;
use tenure_model::{check, scopes, trace, Opts};

fn election() -> Opts {
    scopes().into_iter().find(|s| s.name == "election").expect("election scope").opts
}

#[test]
fn a_small_bound_of_the_real_protocol_is_clean_and_elects() {
    let r = check(election(), 9, 1, false, "test");
    assert!(r.violation.is_none(), "{:?}", r.violation.map(|v| v.1));
    assert!(r.elected, "the bound reaches no election: it would check nothing");
    assert!(r.states > 1000, "{} states", r.states);
}

/// A quorum of one lets a node lead alone: caught by one-leader, and the counterexample's
/// scenario files reproduce what each node did.
#[test]
fn quorum_off_by_one_is_caught_and_its_scenarios_replay() {
    let bugs = vec![Bug::QuorumOffByOne];
    let r = check(Opts { bugs: bugs.clone(), ..election() }, 12, 1, false, "test-quorum");
    let (name, text, scenarios) = r.violation.expect("caught");
    assert_eq!(name, "one-leader", "{text}");
    assert!(text.contains("VIOLATED one-leader"), "{text}");
    assert!(!scenarios.is_empty());
    for s in &scenarios {
        trace::replay(s, &bugs).unwrap_or_else(|e| panic!("{e}\n{text}"));
    }
    // The correct core, given the same inputs, disagrees somewhere: the bug made the difference.
    assert!(scenarios.iter().any(|s| trace::replay(s, &[]).is_err()));
}
