//! Every deliberate bug of the core (`tenure::Bug`, feature `bug-injection`), by the names the
//! simulator's command line uses. The `match` in [`name`] has no wildcard: a bug added to the core
//! does not compile here until it is listed, so `model-check --bug all` and the tests in
//! `tests/bugs.rs` always cover every one.

use tenure::Bug;

/// Every bug, in the core's declaration order. The model must catch each within the CI bound
/// (`model-check --bug all`).
pub const ALL: [Bug; 16] = [
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
    Bug::PreemptWithoutTransfer,
    Bug::ObserverCounted,
];

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
        Bug::PreemptWithoutTransfer => "priority",
        Bug::ObserverCounted => "observer",
    }
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
        let bits: u32 = super::ALL.iter().map(|b| *b as u32).sum();
        assert_eq!(bits, (1 << super::ALL.len()) - 1, "Bug's bits are 1, 2, 4, …: ALL must hold each once");
    }
}
