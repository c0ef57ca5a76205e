//! The leader-work failure policy, for every host: the application reports that its leader-only
//! work failed ([`crate::Handle::leader_work_failed`], [`crate::Handle::leadership_failed`]); the
//! runtime counts, decides and acts, so Python and Node.js only convert.

use std::time::Duration;

use crate::RuntimeError;

/// What the runtime does when leader-only work keeps failing.
///
/// A failure in a leadership is retried by the application after [`LeaderWorkVerdict::Retry`]'s
/// delay (`backoff`, doubling, at most `max_backoff`) until `max_failures` failures in that
/// leadership; then the node steps down (the core rolls leadership back and backs off before it
/// campaigns again) and a `leader_work_failed` warning is delivered. After `max_step_downs`
/// consecutive leaderships ended that way the runtime stops ([`RuntimeError::LeaderWorkFailed`]
/// as a `Fatal` event; a leader hands over first) instead of churning terms forever. A
/// leadership that ends without failing work resets the count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FailurePolicy {
    /// Failures in one leadership before stepping down (1: at the first). Default 3.
    pub max_failures: u32,
    /// Consecutive leaderships ended by failing work before the runtime stops. Default 3.
    pub max_step_downs: u32,
    /// The first retry delay. Default 100 ms.
    pub backoff: Duration,
    /// The longest retry delay. Default 5 s.
    pub max_backoff: Duration,
}

impl Default for FailurePolicy {
    fn default() -> Self {
        FailurePolicy {
            max_failures: 3,
            max_step_downs: 3,
            backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
        }
    }
}

impl FailurePolicy {
    /// A policy with these counts and the default backoff.
    pub fn new(max_failures: u32, max_step_downs: u32) -> Self {
        FailurePolicy { max_failures, max_step_downs, ..FailurePolicy::default() }
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
        if self.max_step_downs == 0 {
            return bad("max_step_downs", format!("must be at least 1, got {}", self.max_step_downs));
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
    /// The node stepped down from that term (or is already stepping down from it): do not retry.
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
    },
    Stop {
        step_downs: u32,
    },
}

/// The counters behind the policy (pure: the run loop feeds it leadership changes and failures).
#[derive(Debug)]
pub(crate) struct FailureCounter {
    policy: FailurePolicy,
    leading: Option<u64>,
    failures: u32,
    failed_term: Option<u64>,
    step_downs: u32,
}

impl FailureCounter {
    pub(crate) fn new(policy: FailurePolicy) -> Self {
        FailureCounter { policy, leading: None, failures: 0, failed_term: None, step_downs: 0 }
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
        if self.step_downs >= self.policy.max_step_downs {
            Decision::Stop { step_downs: self.step_downs }
        } else {
            Decision::StepDown { failures, step_downs: self.step_downs }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_then_steps_down_then_stops_and_a_good_leadership_resets() {
        let policy = FailurePolicy::new(2, 3).backoff(Duration::from_millis(10), Duration::from_millis(15));
        let mut c = FailureCounter::new(policy);
        assert_eq!(c.failed(1, false), Decision::NotLeading);
        c.became_leader(1);
        assert_eq!(c.failed(1, false), Decision::Retry(Duration::from_millis(10)));
        assert_eq!(c.failed(1, false), Decision::StepDown { failures: 2, step_downs: 1 });
        assert_eq!(c.failed(1, false), Decision::AlreadyFailed);
        c.leadership_ended();
        c.became_leader(2);
        assert_eq!(c.failed(2, true), Decision::StepDown { failures: 1, step_downs: 2 });
        // A leadership whose work did not fail resets the consecutive count.
        c.became_leader(3);
        c.became_leader(4);
        assert_eq!(c.failed(4, true), Decision::StepDown { failures: 1, step_downs: 1 });
        c.became_leader(5);
        assert_eq!(c.failed(5, true), Decision::StepDown { failures: 1, step_downs: 2 });
        c.became_leader(6);
        assert_eq!(c.failed(6, false), Decision::Retry(Duration::from_millis(10)));
        assert_eq!(c.failed(6, true), Decision::Stop { step_downs: 3 });
        assert_eq!(policy.delay(3), Duration::from_millis(15));
        assert_eq!(FailurePolicy::default().delay(40), Duration::from_secs(5));
        assert!(FailurePolicy::new(0, 1).validate().is_err());
        assert!(FailurePolicy::new(1, 0).validate().is_err());
        assert!(FailurePolicy::new(1, 1).backoff(Duration::from_secs(2), Duration::from_secs(1)).validate().is_err());
    }
}
