//! Every deliberate bug of the core (`tenure::Bug`, feature `bug-injection`), by the names the
//! simulator's command line uses. The `match` in [`name`] has no wildcard: a bug added to the core
//! does not compile here until it is listed, so `model-check --bug all` and the tests in
//! `tests/bugs.rs` always cover every one.

use tenure::Bug;

/// Every bug, in the core's declaration order.
pub const ALL: [Bug; 14] = [
    Bug::DoubleVote,
    Bug::NoStepDown,
    Bug::IgnoreHigherTerm,
    Bug::QuorumOffByOne,
    Bug::NoPrevoteStickiness,
    Bug::DeposedForgetsPromise,
    Bug::RestartVotesAtOnce,
    Bug::AnyMessageIsEvidence,
    Bug::UnboundedTerm,
    Bug::StaleHeartbeatRefreshes,
    Bug::RefusedReleasesPromise,
    Bug::RepeatedVoteRestartsTimer,
    Bug::UncheckedLeadershipStart,
    Bug::NoticeToEveryMember,
];

/// The bugs of features the model does not explore (priorities: the model's nodes all have the
/// default rank, so no preemption happens in it; observers: the model has none). The simulator
/// catches them (`tests/sim/tests/bugs.rs`), and so do the core's rule tests.
pub const NOT_MODELLED: [Bug; 2] = [Bug::PreemptWithoutTransfer, Bug::ObserverCounted];

/// The bug's kebab-case name (as `tenure-sim --bug` spells it).
pub fn name(bug: Bug) -> &'static str {
    match bug {
        Bug::DoubleVote => "double-vote",
        Bug::NoStepDown => "no-step-down",
        Bug::IgnoreHigherTerm => "ignore-higher-term",
        Bug::QuorumOffByOne => "quorum-off-by-one",
        Bug::NoPrevoteStickiness => "no-prevote-stickiness",
        Bug::DeposedForgetsPromise => "deposed-forgets-promise",
        Bug::RestartVotesAtOnce => "restart-votes-at-once",
        Bug::AnyMessageIsEvidence => "any-message-is-evidence",
        Bug::UnboundedTerm => "unbounded-term",
        Bug::StaleHeartbeatRefreshes => "stale-heartbeat-refreshes",
        Bug::RefusedReleasesPromise => "refused-releases-promise",
        Bug::RepeatedVoteRestartsTimer => "repeated-vote-restarts-timer",
        Bug::UncheckedLeadershipStart => "unchecked-leadership-start",
        Bug::NoticeToEveryMember => "notice-to-every-member",
        Bug::PreemptWithoutTransfer => "preempt-without-transfer",
        Bug::ObserverCounted => "observer-counted",
    }
}

/// The scope (see `crate::scopes`) whose faults reach the bug soonest: `--bug` tries it first,
/// then the others.
pub fn first_scope(bug: Bug) -> &'static str {
    match bug {
        Bug::DoubleVote | Bug::QuorumOffByOne | Bug::AnyMessageIsEvidence => "election",
        Bug::UnboundedTerm | Bug::StaleHeartbeatRefreshes | Bug::RepeatedVoteRestartsTimer => "adversary",
        Bug::NoStepDown | Bug::IgnoreHigherTerm | Bug::NoPrevoteStickiness | Bug::RestartVotesAtOnce => "failover",
        Bug::RefusedReleasesPromise => "refused",
        Bug::DeposedForgetsPromise => "forged",
        Bug::UncheckedLeadershipStart => "slow-confirm",
        Bug::NoticeToEveryMember => "notice-mixed",
        Bug::PreemptWithoutTransfer => "failover",
        // The model has no observers: the simulator catches it (`tests/sim/tests/bugs.rs`).
        Bug::ObserverCounted => "",
    }
}

/// Whether the model's scopes can reach `bug` at all (`--bug all` checks only those; the others
/// are the simulator's to catch).
pub fn model_reaches(bug: Bug) -> bool {
    !first_scope(bug).is_empty()
}

/// The bug named `s`.
pub fn parse(s: &str) -> Option<Bug> {
    ALL.into_iter().find(|b| name(*b) == s)
}

#[cfg(test)]
mod tests {
    /// `ALL` lists each bug once (the exhaustive `match` in `name` makes sure none is missing
    /// from `name`; this makes sure none is missing from `ALL`: each is one bit of a `u16`).
    #[test]
    fn all_is_complete() {
        let all = super::ALL.iter().chain(super::NOT_MODELLED.iter());
        let bits: u32 = all.clone().map(|b| *b as u32).sum();
        let n = all.count();
        assert_eq!(bits, (1 << n) - 1, "Bug's bits are 1, 2, 4, …: ALL and NOT_MODELLED must hold each once");
    }
}
