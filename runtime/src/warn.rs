//! Rate-limited warnings: at most one per (code, subject) every [`WARN_INTERVAL_MS`], with a count
//! of the occurrences since the last one reported.

use std::collections::HashMap;

/// The minimum time between two warnings with the same code and subject.
pub(crate) const WARN_INTERVAL_MS: u64 = 10_000;

#[derive(Default)]
pub(crate) struct Warner {
    last: HashMap<(String, String), (u64, u64)>,
}

impl Warner {
    /// Records one occurrence; returns the message to report now (with the count of occurrences
    /// suppressed since the last report), or `None` while rate-limited.
    pub(crate) fn note(
        &mut self,
        now: u64,
        code: &str,
        subject: &str,
        message: impl FnOnce() -> String,
    ) -> Option<String> {
        let key = (code.to_string(), subject.to_string());
        match self.last.get_mut(&key) {
            Some((at, suppressed)) if now.saturating_sub(*at) < WARN_INTERVAL_MS => {
                *suppressed += 1;
                None
            }
            Some((at, suppressed)) => {
                let n = std::mem::take(suppressed);
                *at = now;
                let mut m = message();
                if n > 0 {
                    m.push_str(&format!(" ({} more since the last report)", n));
                }
                Some(m)
            }
            None => {
                self.last.insert(key, (now, 0));
                Some(message())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_per_code_and_subject_per_interval_with_a_count() {
        let mut w = Warner::default();
        assert_eq!(w.note(0, "a", "x", || "m".into()).as_deref(), Some("m"));
        assert_eq!(w.note(5, "a", "x", || "m".into()), None);
        assert_eq!(w.note(6, "a", "x", || "m".into()), None);
        assert_eq!(w.note(7, "a", "y", || "m".into()).as_deref(), Some("m"));
        assert_eq!(w.note(7, "b", "x", || "m".into()).as_deref(), Some("m"));
        assert_eq!(
            w.note(WARN_INTERVAL_MS, "a", "x", || "m".into()).as_deref(),
            Some("m (2 more since the last report)")
        );
        assert_eq!(w.note(WARN_INTERVAL_MS + 1, "a", "x", || "m".into()), None);
    }
}
