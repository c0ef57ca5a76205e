//! Failure detection from the transport: a follower whose leader went quiet sends it an empty
//! datagram, and the kernel's answer — ICMP port unreachable, read as the OS reports it
//! (`crate::os::probe`) — becomes `peer_down(leader, refused)` for the core.
//!
//! When the leader's process died but its host lives (a crash, an OOM kill, a container restart),
//! this lets the followers stop waiting for an election timeout; they still wait out their lease
//! promise (`lease_duration`), so the report is about liveness only and a wrong one is harmless.
//! A silent death (SIGSTOP, a vanished host) gets no answer and keeps the election-timeout bound.

/// When to probe the leader this follower listens to.
///
/// The first probe goes out 1.5 heartbeat intervals after the last datagram heard from the
/// leader (one heartbeat late, with half an interval of slack for jitter), then one every
/// heartbeat interval while it stays silent. Each probe is an empty datagram, which a tenure
/// runtime ignores (docs/wire.md), so a probe that reaches a live leader costs nothing.
#[derive(Debug, Default)]
pub(crate) struct Prober {
    /// The leader watched and when it was last heard from (or started being watched).
    watched: Option<(String, u64)>,
    /// When the last probe went out.
    probed_at: Option<u64>,
}

impl Prober {
    /// The leader is now `leader` (`None`: no leader, or this node leads).
    pub(crate) fn watch(&mut self, leader: Option<&str>, now: u64) {
        match (leader, &self.watched) {
            (Some(l), Some((w, _))) if l == w => {}
            (Some(l), _) => {
                self.watched = Some((l.to_string(), now));
                self.probed_at = None;
            }
            (None, _) => {
                self.watched = None;
                self.probed_at = None;
            }
        }
    }

    /// Whether `peer` is the leader watched (the one peer whose refused port matters).
    pub(crate) fn watches(&self, peer: &str) -> bool {
        self.watched.as_ref().is_some_and(|(w, _)| w == peer)
    }

    /// A datagram came from `peer`.
    pub(crate) fn heard(&mut self, peer: &str, now: u64) {
        if let Some((w, at)) = &mut self.watched {
            if w == peer {
                *at = now;
            }
        }
    }

    /// When the next probe is due, given the heartbeat interval.
    pub(crate) fn due(&self, heartbeat_interval: u64) -> Option<u64> {
        let (_, heard) = self.watched.as_ref()?;
        Some(match self.probed_at {
            Some(p) if p >= *heard => p.saturating_add(heartbeat_interval),
            _ => heard.saturating_add(heartbeat_interval.saturating_mul(3) / 2),
        })
    }

    /// The peer to probe now, if one is due (and notes the probe).
    pub(crate) fn take_due(&mut self, now: u64, heartbeat_interval: u64) -> Option<String> {
        if self.due(heartbeat_interval).is_some_and(|d| d <= now) {
            self.probed_at = Some(now);
            return self.watched.as_ref().map(|(w, _)| w.clone());
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quiet_leader_is_probed_one_and_a_half_intervals_after_it_was_last_heard_then_every_interval() {
        let mut p = Prober::default();
        assert_eq!(p.due(50), None, "no leader, no probe");
        assert!(!p.watches("L"));
        p.watch(Some("L"), 1_000);
        assert!(p.watches("L") && !p.watches("other"));
        assert_eq!(p.due(50), Some(1_075));
        p.heard("L", 1_050);
        p.heard("other", 1_060);
        assert_eq!(p.take_due(1_100, 50), None);
        assert_eq!(p.take_due(1_125, 50).as_deref(), Some("L"));
        assert_eq!(p.due(50), Some(1_175), "then every interval");
        p.heard("L", 1_130);
        assert_eq!(p.due(50), Some(1_205), "heard again: back to 1.5 intervals");
        p.watch(None, 1_200);
        assert_eq!(p.due(50), None);
    }
}
