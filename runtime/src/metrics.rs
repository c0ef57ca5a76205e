//! [`Metrics`]: the numbers the runtime counts about its node, for `/metrics`, the Python and
//! Node.js collectors and any Rust caller of [`crate::Handle::metrics`].
//!
//! Everything is counted here, once, by the run loop after every round (see
//! `Counters::after_round`); the HTTP sidecar and the bindings only read a [`Metrics`] snapshot.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use tenure::{DropReason, Role};

/// Upper bounds (milliseconds) of the failover histogram's buckets: 10 ms to 10 s, dense where
/// failovers on a LAN land (the default election timeout is 150–300 ms).
pub const FAILOVER_BUCKETS_MS: [u64; 12] = [10, 25, 50, 100, 150, 200, 300, 500, 1_000, 2_500, 5_000, 10_000];

/// The states of `Metrics::peers` (each peer the runtime knows is in exactly one).
pub const PEER_STATES: [&str; 3] = ["in_view", "unreachable", "left"];

/// One `tenure_*` metric family as every exposition names and describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricFamily {
    /// The family name (a counter's samples add `_total`).
    pub name: &'static str,
    /// `gauge`, `counter` or `histogram`.
    pub kind: &'static str,
    /// The `# HELP` text.
    pub help: &'static str,
    /// Label names.
    pub labels: &'static [&'static str],
}

/// Every `tenure_*` family, in exposition order: the sidecar's `/metrics` encodes these, and the
/// Python and Node.js collectors read the same names and help texts from the generated tables.
pub const METRIC_FAMILIES: &[MetricFamily] = &[
    MetricFamily { name: "tenure_is_leader", kind: "gauge", help: "1 while this node leads, else 0.", labels: &[] },
    MetricFamily {
        name: "tenure_term",
        kind: "gauge",
        help: "The current term (the fencing token while leading).",
        labels: &[],
    },
    MetricFamily {
        name: "tenure_role",
        kind: "gauge",
        help: "1 for the node's current role, 0 for the others.",
        labels: &["role"],
    },
    MetricFamily {
        name: "tenure_leader_changes",
        kind: "counter",
        help: "Leaderships observed: each (term, leader) pair this node learned of, once.",
        labels: &[],
    },
    MetricFamily {
        name: "tenure_elections",
        kind: "counter",
        help: "Campaigns run by this node (terms in which it became candidate).",
        labels: &[],
    },
    MetricFamily {
        name: "tenure_leader_work_failures",
        kind: "counter",
        help: "Failures of leader-only work (or of the -- CMD command) reported while this node led.",
        labels: &[],
    },
    MetricFamily {
        name: "tenure_leader_work_step_downs",
        kind: "counter",
        help: "Leaderships this node handed over because their work kept failing (the failure policy).",
        labels: &[],
    },
    MetricFamily {
        name: "tenure_messages_dropped",
        kind: "counter",
        help: "Datagrams dropped by the core, by reason.",
        labels: &["reason"],
    },
    MetricFamily {
        name: "tenure_peers",
        kind: "gauge",
        help: "Peers known to the runtime, by state (in_view, unreachable: in the view but sends fail, left).",
        labels: &["state"],
    },
    MetricFamily {
        name: "tenure_peer_last_heard_seconds",
        kind: "gauge",
        help: "Seconds since each peer's last valid message (peers never heard are absent). A follower hears its leader only.",
        labels: &["peer"],
    },
    MetricFamily {
        name: "tenure_peer_last_ack_seconds",
        kind: "gauge",
        help: "While leading: seconds since this node sent the newest heartbeat each peer acknowledged.",
        labels: &["peer"],
    },
    MetricFamily {
        name: "tenure_quorum_slack",
        kind: "gauge",
        help: "How many more members can fail before the quorum is lost (negative: lost). Absent on a follower with a leader.",
        labels: &[],
    },
    MetricFamily {
        name: "tenure_peers_silent",
        kind: "gauge",
        help: "Members not heard from within two election timeouts.",
        labels: &[],
    },
    MetricFamily {
        name: "tenure_wire_version",
        kind: "gauge",
        help: "The wire version every member of the view is known to speak (new messages only at the newest).",
        labels: &[],
    },
    MetricFamily {
        name: "tenure_failover_seconds",
        kind: "histogram",
        help: "Leaderless time observed by this node: from losing a known leader to knowing the next.",
        labels: &[],
    },
    MetricFamily {
        name: "tenure_build_info",
        kind: "gauge",
        help: "Always 1; the version label is the tenure runtime's version.",
        labels: &["version"],
    },
];

/// The help text of the family `name` (empty for a name not in [`METRIC_FAMILIES`], which the
/// exposition test refuses).
pub fn help(name: &str) -> &'static str {
    METRIC_FAMILIES.iter().find(|f| f.name == name).map_or("", |f| f.help)
}

/// Leaderless time observed by this node: from the moment a known leader was lost (the term moved
/// on, or this node stopped following it) to the moment the next one is known (possibly itself).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct FailoverHistogram {
    /// `(upper bound in seconds, cumulative count of observations ≤ it)`, for every bound of
    /// [`FAILOVER_BUCKETS_MS`] (the `+Inf` bucket is `count`).
    pub buckets: Vec<(f64, u64)>,
    /// Sum of all observations, in seconds.
    pub sum_seconds: f64,
    /// Number of observations.
    pub count: u64,
}

/// A snapshot of what the runtime counts and knows, taken at one instant (see
/// [`crate::Handle::metrics`]). Counters start at zero when the runtime starts.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Metrics {
    /// The node id.
    pub id: String,
    /// The role after the runtime's last round.
    pub role: Role,
    /// The current term.
    pub term: u64,
    /// The leader known in the current term (this node's id while it leads).
    pub leader: Option<String>,
    /// The value the leader proclaims, as this node knows it ([`crate::Handle::leader_value`]).
    pub leader_value: Option<String>,
    /// Whether this node leads.
    pub is_leader: bool,
    /// While leading with a valid lease: milliseconds until the lease deadline (0 when it just
    /// passed and was not renewed yet); `None` when not leading or before a quorum acknowledged.
    pub lease_remaining_ms: Option<u64>,
    /// Whether the runtime thread still runs.
    pub running: bool,
    /// Whether a graceful stop is under way (a leader waiting for its successor).
    pub stopping: bool,
    /// Milliseconds since the run loop last finished a round (its liveness).
    pub loop_age_ms: u64,
    /// Leaderships observed: each `(term, leader)` pair this node learned of counts once
    /// (including the first leader it learns of, and its own).
    pub leader_changes: u64,
    /// Campaigns this node ran: terms in which it became a candidate.
    pub elections: u64,
    /// Datagrams dropped, by the core's drop reason (`DropReason::as_str`; every reason listed,
    /// zeros included).
    pub dropped: BTreeMap<&'static str, u64>,
    /// Peers the runtime knows, by state ([`PEER_STATES`], every state listed): `in_view` (a member
    /// of the view, sends succeeding), `unreachable` (a member, but sends to it fail: no address,
    /// unreachable network, rejected), `left` (declared but out of the view after its
    /// `no_connection` ghost expired or it was removed; it rejoins when heard from).
    pub peers: BTreeMap<&'static str, u64>,
    /// Leaderless time observed by this node.
    pub failover: FailoverHistogram,
    /// Per peer in the view: milliseconds since its last valid message (`None`: never heard).
    /// A follower hears its leader only; the leader hears every member.
    pub peer_last_heard_ms: BTreeMap<String, Option<u64>>,
    /// While leading, per peer: milliseconds since this node sent the newest heartbeat the peer
    /// acknowledged in this leadership (peers that acknowledged none are absent).
    pub peer_last_ack_ms: BTreeMap<String, u64>,
    /// How many more members can fail before the quorum is lost (negative: it is lost), counting
    /// members heard from within two election timeouts; `None` on a follower with a leader,
    /// which cannot hear the other followers.
    pub quorum_slack: Option<i64>,
    /// Members not heard from within two election timeouts (empty on a follower with a leader).
    pub silent_peers: Vec<String>,
    /// Failures of leader-only work (or of the `-- CMD` command) reported while this node led.
    pub leader_work_failures: u64,
    /// Leaderships this node handed over because their work kept failing (see
    /// [`crate::FailurePolicy`]).
    pub leader_work_step_downs: u64,
    /// The wire version every member of the view is known to speak (`tenure::wire::VERSION`
    /// once each has said so, else `tenure::wire::MIN_VERSION`: messages newer than v0.1.0's are
    /// sent only at the newest); `None` when the engine does not say.
    pub wire_version: Option<u8>,
}

impl Metrics {
    /// Whether this snapshot shows this node leading with a lease that held when it was taken
    /// ([`crate::Handle::lease_valid`] at that instant).
    pub fn lease_valid(&self) -> bool {
        self.is_leader && self.lease_remaining_ms.is_some_and(|r| r > 0)
    }
    /// The snapshot as one JSON object (what the Python and Node.js collectors read):
    /// `{"id", "role", "term", "leader", "is_leader", "lease_remaining_ms", "running", "stopping",
    /// "loop_age_ms", "leader_changes", "elections", "dropped": {reason: n}, "peers": {state: n},
    /// "failover": {"buckets": [[le_seconds, cumulative], ...], "sum_seconds", "count"},
    /// "peer_last_heard_ms": {peer: ms or null}, "peer_last_ack_ms": {peer: ms}, "quorum_slack",
    /// "silent_peers": [peer, ...], "leader_work_failures", "leader_work_step_downs", "wire_version",
    /// "version"}`
    /// (`null` for absent values).
    pub fn to_json(&self) -> String {
        serde_json::json!({
            "id": self.id,
            "role": role_name(self.role),
            "term": self.term,
            "leader": self.leader,
            "leader_value": self.leader_value,
            "is_leader": self.is_leader,
            "lease_remaining_ms": self.lease_remaining_ms,
            "running": self.running,
            "stopping": self.stopping,
            "loop_age_ms": self.loop_age_ms,
            "leader_changes": self.leader_changes,
            "elections": self.elections,
            "dropped": self.dropped,
            "peers": self.peers,
            "failover": {
                "buckets": self.failover.buckets,
                "sum_seconds": self.failover.sum_seconds,
                "count": self.failover.count,
            },
            "peer_last_heard_ms": self.peer_last_heard_ms,
            "peer_last_ack_ms": self.peer_last_ack_ms,
            "quorum_slack": self.quorum_slack,
            "silent_peers": self.silent_peers,
            "leader_work_failures": self.leader_work_failures,
            "leader_work_step_downs": self.leader_work_step_downs,
            "wire_version": self.wire_version,
            "version": crate::VERSION,
        })
        .to_string()
    }
}

/// How peers are counted: (in the view, sends failing) per known peer.
pub(crate) type PeerState = (bool, bool);

#[derive(Debug, Default)]
struct Tally {
    leader_changes: u64,
    elections: u64,
    dropped: [u64; DropReason::ALL.len()],
    peers: [u64; PEER_STATES.len()],
    /// Non-cumulative counts per bucket of FAILOVER_BUCKETS_MS, then one for `+Inf`.
    failover: [u64; FAILOVER_BUCKETS_MS.len() + 1],
    failover_sum_ms: u64,
    // What the previous round saw.
    last_leadership: Option<(u64, String)>,
    last_campaign_term: Option<u64>,
    known_leader: bool,
    leader_lost_at: Option<u64>,
    quorum: crate::quorum::QuorumView,
}

/// The runtime's counters (inside the handle's shared state).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    tally: Mutex<Tally>,
    /// Runtime-clock ms of the end of the loop's last round.
    pub(crate) alive_at: AtomicU64,
    pub(crate) stopping: AtomicBool,
    /// See [`Metrics::leader_work_failures`].
    pub(crate) leader_work_failures: AtomicU64,
    /// See [`Metrics::leader_work_step_downs`].
    pub(crate) leader_work_step_downs: AtomicU64,
    /// See [`Metrics::wire_version`] (0: not known).
    pub(crate) wire_version: std::sync::atomic::AtomicU8,
}

impl Counters {
    fn tally(&self) -> std::sync::MutexGuard<'_, Tally> {
        self.tally.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One failure of leader work counted by the failure policy.
    pub(crate) fn leader_work_failure(&self) {
        self.leader_work_failures.fetch_add(1, Ordering::Relaxed);
    }
    /// One leadership handed over because its work kept failing.
    pub(crate) fn leader_work_step_down(&self) {
        self.leader_work_step_downs.fetch_add(1, Ordering::Relaxed);
    }
    /// One drop, as the core reported it.
    pub(crate) fn dropped(&self, reason: DropReason) {
        if let Some(c) = self.tally().dropped.get_mut(reason.index()) {
            *c = c.saturating_add(1);
        }
    }

    /// Called by the run loop after every round with what the engine reports now.
    pub(crate) fn after_round(
        &self,
        now: u64,
        role: Role,
        term: u64,
        leader: Option<&str>,
        stopping: bool,
        peers: impl Iterator<Item = PeerState>,
    ) {
        let mut t = self.tally();
        if matches!(role, Role::Candidate | Role::Leader) && t.last_campaign_term.is_none_or(|c| c < term) {
            // A leader's term always began with its own campaign, even when the round saw no
            // candidate in between (a one-round election).
            t.last_campaign_term = Some(term);
            t.elections = t.elections.saturating_add(1);
        }
        match leader {
            Some(l) => {
                if t.last_leadership.as_ref().is_none_or(|(lt, ll)| *lt != term || ll != l) {
                    t.last_leadership = Some((term, l.to_string()));
                    t.leader_changes = t.leader_changes.saturating_add(1);
                }
                if let Some(lost) = t.leader_lost_at.take() {
                    let ms = now.saturating_sub(lost);
                    let bucket = FAILOVER_BUCKETS_MS.iter().position(|b| ms <= *b).unwrap_or(FAILOVER_BUCKETS_MS.len());
                    if let Some(c) = t.failover.get_mut(bucket) {
                        *c = c.saturating_add(1);
                    }
                    t.failover_sum_ms = t.failover_sum_ms.saturating_add(ms);
                }
                t.known_leader = true;
            }
            None => {
                if t.known_leader {
                    t.known_leader = false;
                    t.leader_lost_at = Some(now);
                }
            }
        }
        let mut counts = [0u64; PEER_STATES.len()];
        for (in_view, failing) in peers {
            let i = match (in_view, failing) {
                (true, false) => 0,
                (true, true) => 1,
                (false, _) => 2,
            };
            if let Some(c) = counts.get_mut(i) {
                *c += 1;
            }
        }
        t.peers = counts;
        drop(t);
        self.stopping.store(stopping, Ordering::Release);
        self.alive_at.store(now, Ordering::Release);
    }

    /// The latest assessment of the members' silence (see `quorum.rs`).
    pub(crate) fn set_quorum(&self, v: crate::quorum::QuorumView) {
        self.tally().quorum = v;
    }

    /// Per-peer ages at `now` (last heard, last acknowledgement), the slack and the silent
    /// members, for a [`Metrics`] snapshot.
    #[allow(clippy::type_complexity)]
    pub(crate) fn read_quorum(
        &self,
        now: u64,
    ) -> (BTreeMap<String, Option<u64>>, BTreeMap<String, u64>, Option<i64>, Vec<String>) {
        let t = self.tally();
        let q = &t.quorum;
        let heard = q.peers.iter().map(|(p, h, _)| (p.clone(), h.map(|h| now.saturating_sub(h)))).collect();
        let acked = q.peers.iter().filter_map(|(p, _, a)| a.map(|a| (p.clone(), now.saturating_sub(a)))).collect();
        (heard, acked, q.slack, q.silent.clone())
    }

    /// The counted part of a [`Metrics`] snapshot.
    #[allow(clippy::type_complexity)]
    pub(crate) fn read(
        &self,
    ) -> (u64, u64, BTreeMap<&'static str, u64>, BTreeMap<&'static str, u64>, FailoverHistogram) {
        let t = self.tally();
        let dropped = DropReason::ALL.iter().map(|r| r.as_str()).zip(t.dropped.iter().copied()).collect();
        let peers = PEER_STATES.iter().copied().zip(t.peers.iter().copied()).collect();
        let mut cumulative = 0u64;
        let buckets = FAILOVER_BUCKETS_MS
            .iter()
            .zip(t.failover.iter())
            .map(|(b, c)| {
                cumulative = cumulative.saturating_add(*c);
                (*b as f64 / 1000.0, cumulative)
            })
            .collect();
        let count = t.failover.iter().fold(0u64, |a, c| a.saturating_add(*c));
        let failover = FailoverHistogram { buckets, sum_seconds: t.failover_sum_ms as f64 / 1000.0, count };
        (t.leader_changes, t.elections, dropped, peers, failover)
    }
}

/// `unclustered`, `follower`, `candidate`, `leader` or `observer`.
pub fn role_name(role: Role) -> &'static str {
    role.as_str()
}

/// Every role name, in the order `tenure_role{role}` lists them.
pub const ROLES: [Role; 5] = [Role::Unclustered, Role::Follower, Role::Candidate, Role::Leader, Role::Observer];

#[cfg(test)]
mod tests {
    use super::*;

    fn round(c: &Counters, now: u64, role: Role, term: u64, leader: Option<&str>) {
        c.after_round(now, role, term, leader, false, [(true, false), (true, true), (false, true)].into_iter());
    }

    #[test]
    fn counts_campaigns_leaderships_and_leaderless_time() {
        let c = Counters::default();
        round(&c, 0, Role::Follower, 0, None);
        round(&c, 200, Role::Candidate, 1, None);
        round(&c, 201, Role::Candidate, 1, None);
        round(&c, 210, Role::Leader, 1, Some("a"));
        // No failover yet: the first leader was never lost.
        let (changes, elections, dropped, peers, h) = c.read();
        assert_eq!((changes, elections, h.count), (1, 1, 0));
        assert_eq!(peers.get("in_view"), Some(&1));
        assert_eq!(peers.get("unreachable"), Some(&1));
        assert_eq!(peers.get("left"), Some(&1));
        assert_eq!(dropped.len(), DropReason::ALL.len());
        // Lost at 1000, next leader (another node) known at 1140: 140 ms observed.
        round(&c, 1000, Role::Follower, 2, None);
        round(&c, 1140, Role::Follower, 2, Some("b"));
        round(&c, 1150, Role::Follower, 2, Some("b"));
        // A one-round election (no candidate round seen) still counts as a campaign.
        round(&c, 2000, Role::Leader, 3, Some("a"));
        let (changes, elections, _, _, h) = c.read();
        assert_eq!((changes, elections), (3, 2));
        assert_eq!(h.count, 1);
        assert!((h.sum_seconds - 0.14).abs() < 1e-9);
        let le = |s: f64| h.buckets.iter().find(|(b, _)| (*b - s).abs() < 1e-9).map(|(_, n)| *n);
        assert_eq!(le(0.1), Some(0));
        assert_eq!(le(0.15), Some(1));
        assert_eq!(le(10.0), Some(1));
        c.dropped(DropReason::BadMac);
        assert_eq!(c.read().2.get("bad_mac"), Some(&1));
        let (leader_changes, elections, dropped, peers, failover) = c.read();
        let m = Metrics {
            id: "a".into(),
            role: Role::Leader,
            term: 3,
            leader: Some("a".into()),
            leader_value: None,
            is_leader: true,
            lease_remaining_ms: None,
            running: true,
            stopping: false,
            loop_age_ms: 0,
            leader_changes,
            elections,
            dropped,
            peers,
            failover,
            peer_last_heard_ms: [("b".to_string(), Some(20)), ("c".to_string(), None)].into(),
            peer_last_ack_ms: [("b".to_string(), 25)].into(),
            quorum_slack: Some(0),
            silent_peers: vec!["c".into()],
            leader_work_failures: 2,
            leader_work_step_downs: 1,
            wire_version: Some(4),
        };
        let v: serde_json::Value = serde_json::from_str(&m.to_json()).unwrap();
        assert_eq!(v["role"], "leader");
        assert_eq!(v["lease_remaining_ms"], serde_json::Value::Null);
        assert_eq!(v["dropped"]["bad_mac"], 1);
        assert_eq!(v["failover"]["buckets"][4], serde_json::json!([0.15, 1]));
        assert_eq!(v["failover"]["count"], 1);
        assert_eq!(v["peer_last_heard_ms"], serde_json::json!({"b": 20, "c": null}));
        assert_eq!(v["peer_last_ack_ms"], serde_json::json!({"b": 25}));
        assert_eq!((v["quorum_slack"].clone(), v["silent_peers"].clone()), (0.into(), serde_json::json!(["c"])));
        assert_eq!((v["leader_work_failures"].as_u64(), v["leader_work_step_downs"].as_u64()), (Some(2), Some(1)));
    }
}
