//! The leader-work failure policy, for every host: the application reports that its leader-only
//! work failed ([`crate::Handle::leader_work_failed`], [`crate::Handle::leadership_failed`]); the
//! runtime counts, decides and acts, so Python and Node.js only convert.

use std::time::Duration;

use crate::RuntimeError;

/// What the runtime does when leader-only work keeps failing: one policy for every host's leader
/// work and for the command line's `-- CMD`.
///
/// A failure is retried in the same leadership after a delay ([`LeaderWorkVerdict::Retry`]:
/// `backoff`, doubling, at most `max_backoff`) until `max_failures` consecutive failures in that
/// leadership. Then the node hands leadership over (to the peer the core's `transfer_target()`
/// picks, else it rolls leadership back) and campaigns last for a while ([`FailurePolicy::hold`]:
/// it still votes, and leads again only if no other member has by then), with a rate-limited
/// `leader_work_failed` warning and the `leader_work_failures` / `leader_work_step_downs` metrics.
/// By default that goes on for as long as the work fails: an outage of something the work needs
/// must not end leadership for good, and the node recovers by itself when the work succeeds
/// again. Only with a limit the user set (`max_step_downs`) does the runtime stop after that many
/// consecutive leaderships ended that way ([`RuntimeError::LeaderWorkFailed`] as a `Fatal` event,
/// a leader handing over first; the command line exits 1). A leadership that ends without failing
/// work resets the count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FailurePolicy {
    /// Consecutive failures in one leadership before handing over (1: at the first). Default 3.
    pub max_failures: u32,
    /// Consecutive leaderships ended by failing work before the runtime stops; `None` (the
    /// default): never stop for that.
    pub max_step_downs: Option<u32>,
    /// The first retry delay. Default 100 ms.
    pub backoff: Duration,
    /// The longest retry delay, and the longest campaign hold after a hand-over (unless one
    /// `election_timeout_max` is longer). Default 5 s.
    pub max_backoff: Duration,
}

/// [`FailurePolicy::max_failures`]'s default.
pub const DEFAULT_MAX_FAILURES: u32 = 3;
/// [`FailurePolicy::backoff`]'s default.
pub const DEFAULT_BACKOFF: Duration = Duration::from_millis(100);
/// [`FailurePolicy::max_backoff`]'s default.
pub const DEFAULT_MAX_BACKOFF: Duration = Duration::from_secs(5);

impl Default for FailurePolicy {
    fn default() -> Self {
        FailurePolicy {
            max_failures: DEFAULT_MAX_FAILURES,
            max_step_downs: None,
            backoff: DEFAULT_BACKOFF,
            max_backoff: DEFAULT_MAX_BACKOFF,
        }
    }
}

impl FailurePolicy {
    /// The default policy with another `max_failures`.
    pub fn new(max_failures: u32) -> Self {
        FailurePolicy { max_failures, ..FailurePolicy::default() }
    }
    /// Stops the runtime after `max_step_downs` consecutive leaderships ended by failing work.
    pub fn limit(mut self, max_step_downs: u32) -> Self {
        self.max_step_downs = Some(max_step_downs);
        self
    }
    /// Sets the retry backoff (first delay, longest delay).
    pub fn backoff(mut self, first: Duration, max: Duration) -> Self {
        self.backoff = first;
        self.max_backoff = max;
        self
    }
    /// Checks the counts (at least 1) and `backoff <= max_backoff`.
    pub fn validate(&self) -> Result<(), RuntimeError> {
        let bad = |option, message: String| Err(RuntimeError::InvalidOption { option, message });
        if self.max_failures == 0 {
            return bad("max_failures", format!("must be at least 1, got {}", self.max_failures));
        }
        if self.max_step_downs == Some(0) {
            return bad("max_step_downs", "must be at least 1 (or unset: never stop), got 0".into());
        }
        if self.backoff > self.max_backoff {
            return bad("backoff", format!("{:?} is above max_backoff {:?}", self.backoff, self.max_backoff));
        }
        Ok(())
    }
    /// The retry delay after `failures` consecutive failures.
    pub fn delay(&self, failures: u32) -> Duration {
        let factor = 1u32.checked_shl(failures.saturating_sub(1)).unwrap_or(u32::MAX);
        self.backoff.saturating_mul(factor).min(self.max_backoff)
    }
    /// How long a node campaigns last after its `step_downs`-th consecutive hand-over:
    /// `election_timeout_max` × 2^step_downs, at most `max_backoff` (or two
    /// `election_timeout_max` when that is longer). Long enough for any other member to lead
    /// first: another member campaigns up to one `election_timeout_max` after it last heard this
    /// leader, then needs its pre-vote and vote round trips, so one `election_timeout_max` alone
    /// would race it. Bounded, so that a cluster whose work fails everywhere keeps trying.
    pub fn hold(&self, step_downs: u32, election_timeout_max: Duration) -> Duration {
        let factor = 1u32.checked_shl(step_downs.max(1)).unwrap_or(u32::MAX);
        let floor = election_timeout_max.saturating_mul(2);
        election_timeout_max.saturating_mul(factor).min(self.max_backoff.max(floor))
    }
}

/// The runtime's answer to a reported failure of leader-only work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaderWorkVerdict {
    /// Run the work again after this delay, in the same leadership.
    Retry {
        /// How long to wait first.
        after: Duration,
    },
    /// The node handed leadership over (or is already doing so for that term): do not retry.
    SteppedDown,
    /// The failure policy stopped the runtime (a `Fatal` event with
    /// [`RuntimeError::LeaderWorkFailed`] was delivered; `Stopped` follows).
    Stopping,
    /// Reported from a handler on the runtime thread: carried out after it returns (the verdict
    /// is not known yet; a refusal arrives as a warning).
    Queued,
}

/// What the run loop must do about a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    Retry(Duration),
    /// Already stepping down from this term.
    AlreadyFailed,
    /// Not leading this term.
    NotLeading,
    StepDown {
        failures: u32,
        step_downs: u32,
        hold: Duration,
    },
    Stop {
        step_downs: u32,
    },
}

/// The counters behind the policy (pure: the run loop feeds it leadership changes and failures).
#[derive(Debug)]
pub(crate) struct FailureCounter {
    policy: FailurePolicy,
    /// The node's `election_timeout_max` (the unit of the campaign hold).
    election_timeout_max: Duration,
    leading: Option<u64>,
    failures: u32,
    failed_term: Option<u64>,
    step_downs: u32,
}

impl FailureCounter {
    pub(crate) fn new(policy: FailurePolicy, election_timeout_max: Duration) -> Self {
        FailureCounter { policy, election_timeout_max, leading: None, failures: 0, failed_term: None, step_downs: 0 }
    }

    pub(crate) fn policy(&self) -> &FailurePolicy {
        &self.policy
    }

    pub(crate) fn became_leader(&mut self, term: u64) {
        self.leadership_ended();
        self.leading = Some(term);
    }

    /// A leadership ended: one whose work did not fail resets the consecutive count.
    pub(crate) fn leadership_ended(&mut self) {
        if let Some(term) = self.leading.take() {
            if self.failed_term != Some(term) {
                self.step_downs = 0;
            }
        }
        self.failures = 0;
    }

    /// One failure of the work of `term`; `at_once`: the whole leadership failed (no retry).
    pub(crate) fn failed(&mut self, term: u64, at_once: bool) -> Decision {
        if self.failed_term == Some(term) {
            return Decision::AlreadyFailed;
        }
        if self.leading != Some(term) {
            return Decision::NotLeading;
        }
        self.failures = self.failures.saturating_add(1);
        if !at_once && self.failures < self.policy.max_failures {
            return Decision::Retry(self.policy.delay(self.failures));
        }
        let failures = std::mem::take(&mut self.failures);
        self.failed_term = Some(term);
        self.step_downs = self.step_downs.saturating_add(1);
        match self.policy.max_step_downs {
            Some(max) if self.step_downs >= max => Decision::Stop { step_downs: self.step_downs },
            _ => {
                let hold = self.policy.hold(self.step_downs, self.election_timeout_max);
                Decision::StepDown { failures, step_downs: self.step_downs, hold }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ETM: Duration = Duration::from_millis(300);

    fn step(failures: u32, step_downs: u32) -> Decision {
        let hold = FailurePolicy::default().hold(step_downs, ETM);
        Decision::StepDown { failures, step_downs, hold }
    }

    #[test]
    fn retries_then_hands_over_and_never_stops_by_default() {
        let policy = FailurePolicy::new(2).backoff(Duration::from_millis(10), Duration::from_millis(15));
        let mut c = FailureCounter::new(FailurePolicy { max_backoff: DEFAULT_MAX_BACKOFF, ..policy }, ETM);
        assert_eq!(c.failed(1, false), Decision::NotLeading);
        c.became_leader(1);
        assert_eq!(c.failed(1, false), Decision::Retry(Duration::from_millis(10)));
        assert_eq!(c.failed(1, false), step(2, 1));
        assert_eq!(c.failed(1, false), Decision::AlreadyFailed);
        c.leadership_ended();
        // An outage: every leadership fails, for as long as it lasts; the hold grows, bounded.
        for n in 2..40 {
            c.became_leader(n);
            assert_eq!(c.failed(n, true), step(1, n as u32));
        }
        assert_eq!(FailurePolicy::default().hold(1, ETM), ETM * 2);
        assert_eq!(FailurePolicy::default().hold(3, ETM), ETM * 8);
        assert_eq!(FailurePolicy::default().hold(39, ETM), DEFAULT_MAX_BACKOFF);
        assert_eq!(FailurePolicy::default().hold(2, Duration::from_secs(9)), Duration::from_secs(18));
        // The work succeeds again: a leadership without failures resets the count.
        c.became_leader(50);
        c.became_leader(51);
        assert_eq!(c.failed(51, true), step(1, 1));
    }

    #[test]
    fn a_limit_the_user_set_stops_the_node() {
        let policy = FailurePolicy::new(2).limit(3).backoff(Duration::from_millis(10), Duration::from_millis(15));
        let mut c = FailureCounter::new(policy, ETM);
        let hold = |n| policy.hold(n, ETM);
        c.became_leader(1);
        assert_eq!(c.failed(1, true), Decision::StepDown { failures: 1, step_downs: 1, hold: hold(1) });
        c.became_leader(2);
        assert_eq!(c.failed(2, true), Decision::StepDown { failures: 1, step_downs: 2, hold: hold(2) });
        c.became_leader(3);
        assert_eq!(c.failed(3, false), Decision::Retry(Duration::from_millis(10)));
        assert_eq!(c.failed(3, true), Decision::Stop { step_downs: 3 });
        assert_eq!(policy.delay(3), Duration::from_millis(15));
        assert_eq!(FailurePolicy::default().delay(40), DEFAULT_MAX_BACKOFF);
        assert!(FailurePolicy::new(0).validate().is_err());
        assert!(FailurePolicy::new(1).limit(0).validate().is_err());
        assert!(FailurePolicy::new(1).backoff(Duration::from_secs(2), Duration::from_secs(1)).validate().is_err());
        assert!(FailurePolicy::default().validate().is_ok());
    }
}
