//! The resource side of fencing: refuse actions from stale leaders.

use alloc::string::{String, ToString};

/// What a [`FenceChecker`] decided about one `(term, leader)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FenceVerdict {
    /// The newest term seen (or the same term from the same leader): go ahead. Recorded.
    Accepted,
    /// An older term than one already seen: refuse.
    Stale,
    /// The same term under another leader: refuse (the resource is already fenced for this term).
    AlreadyFenced,
}

impl FenceVerdict {
    /// Stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            FenceVerdict::Accepted => "accepted",
            FenceVerdict::Stale => "stale",
            FenceVerdict::AlreadyFenced => "already_fenced",
        }
    }
    /// Whether the action may proceed.
    pub fn is_accepted(self) -> bool {
        self == FenceVerdict::Accepted
    }
}

/// Keeps the highest `(term, leader)` a resource has seen and checks each writer against it.
///
/// Store `highest()` next to the resource (in the same transaction as the write it guards).
///
/// ```
/// use tenure::{FenceChecker, FenceVerdict};
/// let mut fence = FenceChecker::new();
/// assert_eq!(fence.check(4, "a"), FenceVerdict::Accepted);
/// assert_eq!(fence.check(3, "b"), FenceVerdict::Stale);
/// assert_eq!(fence.check(4, "b"), FenceVerdict::AlreadyFenced);
/// assert_eq!(fence.check(5, "b"), FenceVerdict::Accepted);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FenceChecker {
    highest: Option<(u64, String)>,
}

impl FenceChecker {
    /// A checker that has seen nothing.
    pub fn new() -> Self {
        FenceChecker { highest: None }
    }
    /// A checker restored from a stored `(term, leader)`.
    pub fn with_highest(term: u64, leader: &str) -> Self {
        FenceChecker { highest: Some((term, leader.to_string())) }
    }
    /// The highest `(term, leader)` accepted so far.
    pub fn highest(&self) -> Option<(u64, &str)> {
        self.highest.as_ref().map(|(t, l)| (*t, l.as_str()))
    }
    /// Checks a writer's `(term, leader)`, recording it when accepted.
    pub fn check(&mut self, term: u64, leader: &str) -> FenceVerdict {
        match &self.highest {
            Some((t, _)) if term < *t => FenceVerdict::Stale,
            Some((t, l)) if term == *t && l != leader => FenceVerdict::AlreadyFenced,
            Some((t, _)) if term == *t => FenceVerdict::Accepted,
            _ => {
                self.highest = Some((term, leader.to_string()));
                FenceVerdict::Accepted
            }
        }
    }
}
