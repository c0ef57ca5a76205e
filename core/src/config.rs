//! Node configuration: defaults, derivation of a missing timeout bound, warnings and errors.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::text::Text;

/// Default lower bound of the randomised election timeout, in milliseconds.
pub const DEFAULT_ELECTION_TIMEOUT_MIN: u64 = 150;
/// Default upper bound of the randomised election timeout, in milliseconds.
pub const DEFAULT_ELECTION_TIMEOUT_MAX: u64 = 300;
/// Default interval between a leader's heartbeats, in milliseconds.
pub const DEFAULT_HEARTBEAT_INTERVAL: u64 = 50;
/// Default time a peer reported `no_connection` stays in the view, in milliseconds.
pub const DEFAULT_GHOST_TTL: u64 = 5000;
/// Default floor below which no leader exists.
pub const DEFAULT_MIN_CLUSTER_SIZE: u32 = 3;
/// Whether a node runs the pre-vote round before campaigning, by default.
pub const DEFAULT_PRE_VOTE: bool = true;
/// Whether a node that won an election asks its host before leading, by default.
pub const DEFAULT_CONFIRM_LEADER: bool = true;
/// Longest accepted node id or cluster id, in bytes.
pub const MAX_ID_LEN: usize = 255;
/// Default bound ρ on clock-rate differences, in parts per million (1 %): the lease deadline
/// carries a margin of `2ρ × election_timeout_min`.
pub const DEFAULT_MAX_CLOCK_DRIFT_PPM: u32 = 10_000;
/// Largest accepted `max_clock_drift_ppm` (10 %).
pub const MAX_CLOCK_DRIFT_PPM: u32 = 100_000;
/// Default cap on the number of peers in the view (besides this node).
pub const DEFAULT_MAX_PEERS: u32 = 64;
/// Longest accepted election timeout bound, in milliseconds: 30 days (the heartbeat interval and
/// the lease must be below it too). Far above any useful timeout, and low enough that every
/// product the node computes from a configured duration (the clock-drift margin, backoffs,
/// deadlines) stays exact in a `u64` and below 2^53 (exact in a JavaScript number).
pub const MAX_DURATION_MS: u64 = 30 * 24 * 60 * 60 * 1000;

/// Everything a node needs to know before it starts. Build it with [`Config::new`] and the
/// builder methods, or fill the public fields directly.
///
/// ```
/// let config = tenure::Config::new("10.0.0.1:7000", "scheduler")
///     .bootstrap(["10.0.0.2:7000", "10.0.0.3:7000"])
///     .election_timeout_min(200);
/// let checked = config.validate().unwrap();
/// assert_eq!(checked.election_timeout_max, 400); // derived: min alone doubles to a max
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", deny_unknown_fields))]
pub struct Config {
    /// This node's id (for the UDP runtimes: its `HOST:PORT`).
    pub id: String,
    /// The cluster id; required, namespaces the election.
    pub cluster: String,
    /// Peers declared at start (self, if listed, is ignored).
    #[cfg_attr(feature = "serde", serde(default))]
    pub bootstrap: Vec<String>,
    /// Floor of the view size below which no leader may exist.
    #[cfg_attr(feature = "serde", serde(default = "serde_defaults::min_cluster_size"))]
    pub min_cluster_size: u32,
    /// Lower bound of the election timeout; `None` derives it from the upper bound (half).
    pub election_timeout_min: Option<u64>,
    /// Upper bound of the election timeout; `None` derives it from the lower bound (double).
    pub election_timeout_max: Option<u64>,
    /// Interval between heartbeats.
    #[cfg_attr(feature = "serde", serde(default = "serde_defaults::heartbeat_interval"))]
    pub heartbeat_interval: u64,
    /// How long a promise lasts: after each heartbeat it sends (as leader) or acknowledges (as
    /// follower), and after it starts, a node helps elect nobody for this long. The leader's
    /// lease is this span less the clock-drift margin. `None`: `election_timeout_min`. Shorter
    /// means faster failover when a dead leader is detected (`PeerDownReason::Refused`), at the
    /// price of a lease that must be renewed by every heartbeat within a smaller slack
    /// (`docs/protocol.md`, "The lease").
    pub lease_duration: Option<u64>,
    /// How long a peer reported `no_connection` stays in the view.
    #[cfg_attr(feature = "serde", serde(default = "serde_defaults::ghost_ttl"))]
    pub ghost_ttl: u64,
    /// Ask "could I win?" before incrementing the term (default on).
    #[cfg_attr(feature = "serde", serde(default = "serde_defaults::yes"))]
    pub pre_vote: bool,
    /// Ask the host to confirm before publishing leadership (default on).
    #[cfg_attr(feature = "serde", serde(default = "serde_defaults::yes"))]
    pub confirm_leader: bool,
    /// Emit `Output::Persist` whenever term or vote changes (durable term and vote).
    #[cfg_attr(feature = "serde", serde(default))]
    pub durable: bool,
    /// Shared cluster key: when set, every message carries an HMAC-SHA256 tag.
    #[cfg_attr(feature = "serde", serde(default, with = "serde_bytes"))]
    pub key: Option<Vec<u8>>,
    /// Admit a sender that was never declared (`bootstrap`/`join`) on its first valid message
    /// (discovery style). Off by default: membership is closed and such messages are dropped
    /// (`unknown_peer`), so no stranger can change the quorum.
    #[cfg_attr(feature = "serde", serde(default))]
    pub admit_unknown_peers: bool,
    /// Most peers (besides this node) the view may hold; senders beyond it are dropped
    /// (`view_full`), `join` beyond it fails.
    #[cfg_attr(feature = "serde", serde(default = "serde_defaults::max_peers"))]
    pub max_peers: u32,
    /// The bound ρ on how much any two nodes' clocks may differ in rate, in parts per million.
    /// The lease deadline carries the margin it implies (see `docs/protocol.md`).
    #[cfg_attr(feature = "serde", serde(default = "serde_defaults::max_clock_drift_ppm"))]
    pub max_clock_drift_ppm: u32,
    /// This run's incarnation, carried by every message: application payloads are delivered at
    /// most once per (sender, incarnation). `None` draws one from the seed (runtimes pass the wall
    /// clock at start, so incarnations also grow across restarts).
    pub incarnation: Option<u64>,
    /// The value this node proclaims whenever it leads (`Node::leader_value` on every member):
    /// UTF-8 text of at most [`crate::MAX_VALUE_LEN`] bytes, such as the URL a leader serves
    /// writes on. Each leadership starts with it; `Node::proclaim` changes it while leading.
    /// `None` or empty: no value.
    #[cfg_attr(feature = "serde", serde(default))]
    pub value: Option<String>,
    /// This node's priority: among healthy members a higher one campaigns first, and a leader
    /// hands leadership to a member of higher priority that answered it steadily for
    /// [`Config::preempt_after`]. 0 (the default, and every member of wire version 3) everywhere
    /// behaves exactly as a cluster without priorities.
    #[cfg_attr(feature = "serde", serde(default))]
    pub priority: u32,
    /// A witness: votes and acknowledges heartbeats (it counts in every quorum) but never
    /// campaigns, never takes a leadership transfer and is never preempted to.
    #[cfg_attr(feature = "serde", serde(default))]
    pub never_lead: bool,
    /// How long a leader waits, in milliseconds, while a member of higher priority answers it
    /// steadily, before handing leadership to it by a transfer. `None`: twice
    /// `election_timeout_max`; 0 turns preemption off.
    #[cfg_attr(feature = "serde", serde(default))]
    pub preempt_after: Option<u64>,
    /// Run as an observer: learn the leader, its term and its value from the members (given as
    /// `bootstrap`) without ever voting, campaigning, acknowledging or counting toward any
    /// quorum or view size. Its role is [`crate::Role::Observer`] for its whole life. Only the
    /// members that list it (`observer_peers`) tell it anything. Its `priority` and `never_lead`
    /// are ignored: it has no rank.
    #[cfg_attr(feature = "serde", serde(default))]
    pub observer: bool,
    /// The observers this member keeps informed (their ids): its leaderships send them
    /// heartbeats and the value. Closed like membership: an observer not listed here is told
    /// nothing and its messages are dropped (`unknown_peer`). An id that is also a member
    /// (`bootstrap`) is a member.
    #[cfg_attr(feature = "serde", serde(default))]
    pub observer_peers: Vec<String>,
}

/// `Config::new`'s defaults for fields missing from a deserialized configuration (feature `serde`).
#[cfg(feature = "serde")]
mod serde_defaults {
    pub(super) fn min_cluster_size() -> u32 {
        super::DEFAULT_MIN_CLUSTER_SIZE
    }
    pub(super) fn heartbeat_interval() -> u64 {
        super::DEFAULT_HEARTBEAT_INTERVAL
    }
    pub(super) fn ghost_ttl() -> u64 {
        super::DEFAULT_GHOST_TTL
    }
    pub(super) fn yes() -> bool {
        true
    }
    pub(super) fn max_peers() -> u32 {
        super::DEFAULT_MAX_PEERS
    }
    pub(super) fn max_clock_drift_ppm() -> u32 {
        super::DEFAULT_MAX_CLOCK_DRIFT_PPM
    }
}

impl Config {
    /// A configuration with every default (5000 ms ghost TTL, 150–300 ms election timeout,
    /// 50 ms heartbeat, `min_cluster_size` 3, pre-vote and confirm-leader on, not durable).
    pub fn new(id: impl Into<String>, cluster: impl Into<String>) -> Self {
        Config {
            id: id.into(),
            cluster: cluster.into(),
            bootstrap: Vec::new(),
            min_cluster_size: DEFAULT_MIN_CLUSTER_SIZE,
            election_timeout_min: None,
            election_timeout_max: None,
            heartbeat_interval: DEFAULT_HEARTBEAT_INTERVAL,
            lease_duration: None,
            ghost_ttl: DEFAULT_GHOST_TTL,
            pre_vote: DEFAULT_PRE_VOTE,
            confirm_leader: DEFAULT_CONFIRM_LEADER,
            durable: false,
            key: None,
            admit_unknown_peers: false,
            max_peers: DEFAULT_MAX_PEERS,
            max_clock_drift_ppm: DEFAULT_MAX_CLOCK_DRIFT_PPM,
            incarnation: None,
            value: None,
            priority: 0,
            never_lead: false,
            preempt_after: None,
            observer: false,
            observer_peers: Vec::new(),
        }
    }

    /// Sets the bootstrap peers.
    pub fn bootstrap<I, S>(mut self, peers: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.bootstrap = peers.into_iter().map(Into::into).collect();
        self
    }
    /// Sets `min_cluster_size`.
    pub fn min_cluster_size(mut self, n: u32) -> Self {
        self.min_cluster_size = n;
        self
    }
    /// Sets the lower election timeout bound.
    pub fn election_timeout_min(mut self, ms: u64) -> Self {
        self.election_timeout_min = Some(ms);
        self
    }
    /// Sets the upper election timeout bound.
    pub fn election_timeout_max(mut self, ms: u64) -> Self {
        self.election_timeout_max = Some(ms);
        self
    }
    /// Sets the heartbeat interval.
    pub fn heartbeat_interval(mut self, ms: u64) -> Self {
        self.heartbeat_interval = ms;
        self
    }
    /// Sets [`Config::lease_duration`].
    pub fn lease_duration(mut self, ms: u64) -> Self {
        self.lease_duration = Some(ms);
        self
    }
    /// Sets [`Config::ghost_ttl`].
    pub fn ghost_ttl(mut self, ms: u64) -> Self {
        self.ghost_ttl = ms;
        self
    }
    /// Turns pre-vote on or off.
    pub fn pre_vote(mut self, on: bool) -> Self {
        self.pre_vote = on;
        self
    }
    /// Turns the confirm-leader gate on or off.
    pub fn confirm_leader(mut self, on: bool) -> Self {
        self.confirm_leader = on;
        self
    }
    /// Turns durable term and vote on or off.
    pub fn durable(mut self, on: bool) -> Self {
        self.durable = on;
        self
    }
    /// Sets the value this node proclaims whenever it leads ([`Config::value`]).
    pub fn value(mut self, value: impl Into<String>) -> Self {
        self.value = Some(value.into());
        self
    }

    /// Sets [`Config::priority`].
    pub fn priority(mut self, priority: u32) -> Self {
        self.priority = priority;
        self
    }
    /// Makes this node a witness ([`Config::never_lead`]) or not.
    pub fn never_lead(mut self, on: bool) -> Self {
        self.never_lead = on;
        self
    }
    /// Sets [`Config::preempt_after`] (0: no preemption).
    pub fn preempt_after(mut self, ms: u64) -> Self {
        self.preempt_after = Some(ms);
        self
    }

    /// Makes this node an observer ([`Config::observer`]).
    pub fn observer(mut self, on: bool) -> Self {
        self.observer = on;
        self
    }
    /// Sets the observers this member keeps informed ([`Config::observer_peers`]).
    pub fn observer_peers<I, S>(mut self, peers: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.observer_peers = peers.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the shared cluster key (authenticated mode).
    pub fn key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Turns admission of undeclared senders on or off (off by default).
    pub fn admit_unknown_peers(mut self, on: bool) -> Self {
        self.admit_unknown_peers = on;
        self
    }
    /// Sets the cap on the number of peers in the view.
    pub fn max_peers(mut self, n: u32) -> Self {
        self.max_peers = n;
        self
    }
    /// Sets the clock-rate bound ρ, in parts per million.
    pub fn max_clock_drift_ppm(mut self, ppm: u32) -> Self {
        self.max_clock_drift_ppm = ppm;
        self
    }
    /// Sets this run's incarnation (should grow across restarts of this id).
    pub fn incarnation(mut self, incarnation: u64) -> Self {
        self.incarnation = Some(incarnation);
        self
    }

    /// Checks the configuration, derives a missing timeout bound, and lists warnings.
    pub fn validate(&self) -> Result<ValidConfig, ConfigError> {
        check_id("id", &self.id)?;
        check_id("cluster", &self.cluster)?;
        for peer in &self.bootstrap {
            check_id("bootstrap", peer)?;
        }
        for peer in &self.observer_peers {
            check_id("observer_peers", peer)?;
        }
        // The election timeout bounds are bounded before any arithmetic on them; the heartbeat
        // interval and the lease must be below them (checked below), and ghost_ttl is only ever
        // added to a clock reading, saturating. (Two checks, not one per field: the component's
        // size budget.)
        if let Some(value) = self.election_timeout_min.filter(|v| *v > MAX_DURATION_MS) {
            return Err(ConfigError::DurationTooLarge { field: "election_timeout_min", value });
        }
        if let Some(value) = self.election_timeout_max.filter(|v| *v > MAX_DURATION_MS) {
            return Err(ConfigError::DurationTooLarge { field: "election_timeout_max", value });
        }
        if let Some(value) = self.preempt_after.filter(|v| *v > MAX_DURATION_MS) {
            return Err(ConfigError::DurationTooLarge { field: "preempt_after", value });
        }
        let (min, max) = match (self.election_timeout_min, self.election_timeout_max) {
            (None, None) => (DEFAULT_ELECTION_TIMEOUT_MIN, DEFAULT_ELECTION_TIMEOUT_MAX),
            // A derived maximum may exceed MAX_DURATION_MS (at most twice it): still exact.
            (Some(min), None) => (min, min.saturating_mul(2)),
            (None, Some(max)) => (max / 2, max),
            (Some(min), Some(max)) => (min, max),
        };
        if min == 0 {
            return Err(ConfigError::ZeroTimeout { field: "election_timeout_min" });
        }
        if max == 0 {
            return Err(ConfigError::ZeroTimeout { field: "election_timeout_max" });
        }
        if min > max {
            return Err(ConfigError::MinAboveMax { min, max });
        }
        // Split votes resolve only if the randomised timeouts of two followers usually differ by
        // more than the time a campaign takes (two round trips: pre-vote, vote). The heartbeat
        // interval is the configuration's own statement of "well above a round trip", so the
        // spread must be at least one heartbeat interval.
        if max - min < self.heartbeat_interval {
            return Err(ConfigError::TimeoutSpreadTooSmall {
                election_timeout_min: min,
                election_timeout_max: max,
                heartbeat_interval: self.heartbeat_interval,
            });
        }
        if self.heartbeat_interval == 0 {
            return Err(ConfigError::ZeroTimeout { field: "heartbeat_interval" });
        }
        if self.ghost_ttl == 0 {
            return Err(ConfigError::ZeroTimeout { field: "ghost_ttl" });
        }
        if self.heartbeat_interval >= min {
            return Err(ConfigError::HeartbeatNotBelowElectionTimeout {
                heartbeat_interval: self.heartbeat_interval,
                election_timeout_min: min,
            });
        }
        if self.min_cluster_size == 0 {
            return Err(ConfigError::ZeroMinClusterSize);
        }
        if let Some(value) = &self.value {
            if value.len() > crate::MAX_VALUE_LEN {
                return Err(ConfigError::ValueTooLong { len: value.len() });
            }
        }
        if let Some(key) = &self.key {
            if key.is_empty() {
                return Err(ConfigError::EmptyKey);
            }
        }
        if self.max_clock_drift_ppm > MAX_CLOCK_DRIFT_PPM {
            return Err(ConfigError::ClockDriftTooLarge { max_clock_drift_ppm: self.max_clock_drift_ppm });
        }
        if self.max_peers == 0 {
            return Err(ConfigError::TooManyPeers { peers: self.bootstrap.len(), max_peers: 0 });
        }
        let declared = self.bootstrap.iter().filter(|p| **p != self.id).count();
        if declared > self.max_peers as usize {
            return Err(ConfigError::TooManyPeers { peers: declared, max_peers: self.max_peers });
        }
        // Observers are capped as members are: each costs a heartbeat per round.
        if self.observer_peers.len() > self.max_peers as usize {
            return Err(ConfigError::TooManyPeers { peers: self.observer_peers.len(), max_peers: self.max_peers });
        }
        // lease_span = lease × (1 − 2ρ) − 1 ms, rounded down: see `ValidConfig::lease_span`.
        let lease_duration = self.lease_duration.unwrap_or(min);
        if lease_duration == 0 {
            return Err(ConfigError::ZeroTimeout { field: "lease_duration" });
        }
        // At most 2^32 ms × 10^5 ppm × 2 (both bounded above): no overflow; saturating all the same.
        let margin =
            lease_duration.saturating_mul(u64::from(self.max_clock_drift_ppm)).saturating_mul(2).div_ceil(1_000_000);
        // One more millisecond: clocks are read in whole milliseconds, and the follower's reading
        // when it acknowledges may lag its clock by up to 1 ms, which shortens its promise.
        let lease_span = lease_duration.saturating_sub(margin).saturating_sub(1);
        // Longer than the election timeout, it would delay every election; not longer than one
        // heartbeat interval (after the margin), the lease would lapse between two heartbeats.
        if lease_duration > min || lease_span <= self.heartbeat_interval {
            return Err(ConfigError::LeaseOutOfRange {
                lease_duration,
                heartbeat_interval: self.heartbeat_interval,
                election_timeout_min: min,
            });
        }
        let mut warnings = Vec::new();
        if self.min_cluster_size < 3 {
            warnings.push(ConfigWarning::SmallMinClusterSize { min_cluster_size: self.min_cluster_size });
        }
        if self.heartbeat_interval.saturating_mul(3) > min {
            warnings.push(ConfigWarning::SlowHeartbeat {
                heartbeat_interval: self.heartbeat_interval,
                election_timeout_min: min,
            });
        }
        Ok(ValidConfig {
            election_timeout_min: min,
            election_timeout_max: max,
            heartbeat_interval: self.heartbeat_interval,
            ghost_ttl: self.ghost_ttl,
            min_cluster_size: self.min_cluster_size,
            max_peers: self.max_peers,
            max_clock_drift_ppm: self.max_clock_drift_ppm,
            lease_duration,
            lease_span,
            // At most 2 × (2 × MAX_DURATION_MS): exact.
            preempt_after: self.preempt_after.unwrap_or(max.saturating_mul(2)),
            warnings,
        })
    }
}

/// The one rule for node and cluster ids, used by the config, `join`/`leave`/`peer_down` and the
/// wire: 1 to [`MAX_ID_LEN`] bytes, no whitespace and no control characters (so that an id is one
/// token in a log line, a command line and a state file).
pub(crate) fn id_is_valid(value: &str) -> bool {
    !value.is_empty() && value.len() <= MAX_ID_LEN && !value.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn check_id(field: &'static str, value: &str) -> Result<(), ConfigError> {
    if value.is_empty() {
        return Err(ConfigError::EmptyId { field });
    }
    if value.len() > MAX_ID_LEN {
        return Err(ConfigError::IdTooLong { field, len: value.len() });
    }
    if !id_is_valid(value) {
        return Err(ConfigError::IdHasWhitespace { field });
    }
    Ok(())
}

/// The numbers a node runs with, after derivation, plus the warnings found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "model-check", derive(Hash))]
pub struct ValidConfig {
    /// Effective lower election timeout bound.
    pub election_timeout_min: u64,
    /// Effective upper election timeout bound.
    pub election_timeout_max: u64,
    /// Heartbeat interval.
    pub heartbeat_interval: u64,
    /// Ghost TTL.
    pub ghost_ttl: u64,
    /// Floor of the view size for a leader to exist.
    pub min_cluster_size: u32,
    /// Cap on the number of peers in the view.
    pub max_peers: u32,
    /// The clock-rate bound ρ, in parts per million.
    pub max_clock_drift_ppm: u32,
    /// How long a promise lasts (`lease_duration`, default `election_timeout_min`).
    pub lease_duration: u64,
    /// How long after a heartbeat's `sent_at` the lease it earns lasts, on the leader's clock:
    /// `lease_duration − ⌈2ρ · lease_duration⌉ − 1 ms`. A follower that acknowledges the heartbeat
    /// refuses other candidates for `lease_duration` of its own clock from the moment it receives
    /// it; with clock rates within 1 ± ρ of real time, that outlasts the lease.
    pub lease_span: u64,
    /// How long a member of higher priority must answer the leader steadily before the leader
    /// hands leadership to it ([`Config::preempt_after`]; default `2 × election_timeout_max`);
    /// 0: never.
    pub preempt_after: u64,
    /// Non-fatal problems.
    pub warnings: Vec<ConfigWarning>,
}

/// A configuration that works but is probably not what was meant.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "model-check", derive(Hash))]
pub enum ConfigWarning {
    /// `min_cluster_size` of 1 or 2: a lone node (or a pair) can lead, so a partition can yield
    /// two leaders.
    SmallMinClusterSize {
        /// The configured value.
        min_cluster_size: u32,
    },
    /// The heartbeat interval is not below a third of `election_timeout_min`: one lost heartbeat
    /// can trigger an election.
    SlowHeartbeat {
        /// The configured heartbeat interval.
        heartbeat_interval: u64,
        /// The effective lower election timeout bound.
        election_timeout_min: u64,
    },
}

impl ConfigWarning {
    /// A stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            ConfigWarning::SmallMinClusterSize { .. } => "small_min_cluster_size",
            ConfigWarning::SlowHeartbeat { .. } => "slow_heartbeat",
        }
    }
}

impl ConfigWarning {
    /// The English message, with the values that caused it (what `Display` writes), built
    /// without `core::fmt`.
    pub fn message(&self) -> String {
        match self {
            ConfigWarning::SmallMinClusterSize { min_cluster_size } => Text::new("min_cluster_size is ")
                .n(*min_cluster_size)
                .s(": a partition can leave two sides that each elect a leader")
                .done(),
            ConfigWarning::SlowHeartbeat { heartbeat_interval, election_timeout_min } => {
                Text::new("heartbeat_interval ")
                    .n(*heartbeat_interval)
                    .s(" ms is not below a third of election_timeout_min ")
                    .n(*election_timeout_min)
                    .s(" ms: a single lost heartbeat may cause an election")
                    .done()
            }
        }
    }
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

/// An invalid configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// The node id, the cluster id or a bootstrap peer is empty.
    EmptyId {
        /// Which field (`id`, `cluster` or `bootstrap`).
        field: &'static str,
    },
    /// An id longer than [`MAX_ID_LEN`] bytes.
    IdTooLong {
        /// Which field.
        field: &'static str,
        /// Its length in bytes.
        len: usize,
    },
    /// A timeout or interval of zero.
    ZeroTimeout {
        /// Which field.
        field: &'static str,
    },
    /// `election_timeout_min` above `election_timeout_max`.
    MinAboveMax {
        /// The lower bound.
        min: u64,
        /// The upper bound.
        max: u64,
    },
    /// A heartbeat interval at or above `election_timeout_min`: followers would always time out.
    HeartbeatNotBelowElectionTimeout {
        /// The heartbeat interval.
        heartbeat_interval: u64,
        /// The effective lower election timeout bound.
        election_timeout_min: u64,
    },
    /// `min_cluster_size` of zero.
    ZeroMinClusterSize,
    /// A cluster key of zero bytes.
    EmptyKey,
    /// An id containing whitespace or a control character.
    IdHasWhitespace {
        /// Which field.
        field: &'static str,
    },
    /// `election_timeout_max − election_timeout_min` is smaller than the heartbeat interval, so
    /// followers time out too close together for split votes to resolve.
    TimeoutSpreadTooSmall {
        /// The effective lower bound.
        election_timeout_min: u64,
        /// The effective upper bound.
        election_timeout_max: u64,
        /// The heartbeat interval (the smallest spread accepted).
        heartbeat_interval: u64,
    },
    /// `max_clock_drift_ppm` above [`MAX_CLOCK_DRIFT_PPM`].
    ClockDriftTooLarge {
        /// The configured value.
        max_clock_drift_ppm: u32,
    },
    /// `lease_duration` above `election_timeout_min` (it would delay every election), or not above
    /// `heartbeat_interval` once the clock-drift margin is taken off (the lease would lapse
    /// between two heartbeats).
    LeaseOutOfRange {
        /// The effective lease duration.
        lease_duration: u64,
        /// The heartbeat interval (the lease must outlast it after the margin).
        heartbeat_interval: u64,
        /// The effective lower election timeout bound (the lease must not exceed it).
        election_timeout_min: u64,
    },
    /// More bootstrap peers than `max_peers` (or a `max_peers` of zero).
    TooManyPeers {
        /// Peers declared.
        peers: usize,
        /// The cap.
        max_peers: u32,
    },
    /// An election timeout bound above [`MAX_DURATION_MS`] (30 days).
    DurationTooLarge {
        /// Which field.
        field: &'static str,
        /// The configured value, in milliseconds.
        value: u64,
    },
    /// A proclaimed value longer than [`crate::MAX_VALUE_LEN`] bytes.
    ValueTooLong {
        /// Its length in bytes.
        len: usize,
    },
}

impl ConfigError {
    /// A stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            ConfigError::EmptyId { .. } => "empty_id",
            ConfigError::IdTooLong { .. } => "id_too_long",
            ConfigError::ZeroTimeout { .. } => "zero_timeout",
            ConfigError::MinAboveMax { .. } => "min_above_max",
            ConfigError::HeartbeatNotBelowElectionTimeout { .. } => "heartbeat_not_below_election_timeout",
            ConfigError::ZeroMinClusterSize => "zero_min_cluster_size",
            ConfigError::EmptyKey => "empty_key",
            ConfigError::IdHasWhitespace { .. } => "id_has_whitespace",
            ConfigError::TimeoutSpreadTooSmall { .. } => "timeout_spread_too_small",
            ConfigError::ClockDriftTooLarge { .. } => "clock_drift_too_large",
            ConfigError::TooManyPeers { .. } => "too_many_peers",
            ConfigError::LeaseOutOfRange { .. } => "lease_out_of_range",
            ConfigError::DurationTooLarge { .. } => "duration_too_large",
            ConfigError::ValueTooLong { .. } => "value_too_long",
        }
    }
}

impl ConfigError {
    /// The English message, with the values that caused it (what `Display` writes), built
    /// without `core::fmt`.
    pub fn message(&self) -> String {
        match self {
            ConfigError::EmptyId { field } => Text::new(field).s(" must not be empty").done(),
            ConfigError::IdTooLong { field, len } => Text::new(field)
                .s(" is ")
                .size(*len)
                .s(" bytes long; at most ")
                .size(MAX_ID_LEN)
                .s(" are allowed")
                .done(),
            ConfigError::ZeroTimeout { field } => Text::new(field).s(" must be greater than 0 ms").done(),
            ConfigError::MinAboveMax { min, max } => Text::new("election_timeout_min (")
                .n(*min)
                .s(" ms) must not exceed election_timeout_max (")
                .n(*max)
                .s(" ms)")
                .done(),
            ConfigError::HeartbeatNotBelowElectionTimeout { heartbeat_interval, election_timeout_min } => {
                Text::new("heartbeat_interval (")
                    .n(*heartbeat_interval)
                    .s(" ms) must be below election_timeout_min (")
                    .n(*election_timeout_min)
                    .s(" ms)")
                    .done()
            }
            ConfigError::ZeroMinClusterSize => String::from("min_cluster_size must be at least 1"),
            ConfigError::EmptyKey => String::from("the cluster key must not be empty"),
            ConfigError::IdHasWhitespace { field } => {
                Text::new(field).s(" must not contain whitespace or control characters").done()
            }
            ConfigError::TimeoutSpreadTooSmall { election_timeout_min, election_timeout_max, heartbeat_interval } => {
                Text::new("election_timeout_max (")
                    .n(*election_timeout_max)
                    .s(" ms) must exceed election_timeout_min (")
                    .n(*election_timeout_min)
                    .s(" ms) by at least heartbeat_interval (")
                    .n(*heartbeat_interval)
                    .s(" ms), or split votes may never resolve")
                    .done()
            }
            ConfigError::ClockDriftTooLarge { max_clock_drift_ppm } => Text::new("max_clock_drift_ppm (")
                .n(*max_clock_drift_ppm)
                .s(") must be at most ")
                .n(MAX_CLOCK_DRIFT_PPM)
                .done(),
            ConfigError::LeaseOutOfRange { lease_duration, heartbeat_interval, election_timeout_min } => {
                Text::new("lease_duration (")
                    .n(*lease_duration)
                    .s(" ms) must be at most election_timeout_min (")
                    .n(*election_timeout_min)
                    .s(" ms) and, less the clock-drift margin, above heartbeat_interval (")
                    .n(*heartbeat_interval)
                    .s(" ms)")
                    .done()
            }
            ConfigError::TooManyPeers { peers, max_peers } => Text::new("")
                .size(*peers)
                .s(" peers declared but max_peers is ")
                .n(*max_peers)
                .s(" (at least 1, and at least the declared peers)")
                .done(),
            ConfigError::DurationTooLarge { field, value } => {
                Text::new(field).s(" is ").n(*value).s(" ms, above the 2592000000 ms (30 days) allowed").done()
            }
            ConfigError::ValueTooLong { len } => value_too_long(*len),
        }
    }
}

/// The message of a value longer than [`crate::MAX_VALUE_LEN`] (configured or proclaimed).
pub(crate) fn value_too_long(len: usize) -> String {
    Text::new("value is ").size(len).s(" bytes, longer than the ").size(crate::MAX_VALUE_LEN).s(" bytes allowed").done()
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl core::error::Error for ConfigError {}

/// The pair a durable node must store before sending anything that depends on it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", deny_unknown_fields))]
#[cfg_attr(feature = "model-check", derive(Hash))]
pub struct DurableState {
    /// The current term.
    pub term: u64,
    /// Whom this node voted for in `term`, if anyone.
    pub voted_for: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_derives_missing_timeout_bound() {
        let c = Config::new("a", "c").election_timeout_min(200).validate().unwrap();
        assert_eq!((c.election_timeout_min, c.election_timeout_max), (200, 400));
        let c = Config::new("a", "c").election_timeout_max(400).validate().unwrap();
        assert_eq!((c.election_timeout_min, c.election_timeout_max), (200, 400));
        let c = Config::new("a", "c").validate().unwrap();
        assert_eq!((c.election_timeout_min, c.election_timeout_max), (150, 300));
        assert!(c.warnings.is_empty());
    }

    #[test]
    fn config_warnings_are_typed_and_listed() {
        let c = Config::new("a", "c").min_cluster_size(2).heartbeat_interval(60).validate().unwrap();
        let codes: Vec<_> = c.warnings.iter().map(|w| w.code()).collect();
        assert_eq!(codes, ["small_min_cluster_size", "slow_heartbeat"]);
        let c = Config::new("a", "c").min_cluster_size(1).validate().unwrap();
        assert_eq!(c.warnings.len(), 1);
    }

    /// Very large durations (JavaScript numbers reach them) are refused by name before any
    /// arithmetic: `election_timeout_max = u64::MAX` overflowed the clock-drift margin (a panic
    /// with overflow checks, a wrong `lease_span` without).
    #[test]
    fn absurd_durations_are_refused_by_name() {
        let c = || Config::new("a", "c");
        let too_large = |field, value| Err(ConfigError::DurationTooLarge { field, value });
        assert_eq!(c().election_timeout_max(u64::MAX).validate(), too_large("election_timeout_max", u64::MAX));
        assert_eq!(c().election_timeout_min(u64::MAX).validate(), too_large("election_timeout_min", u64::MAX));
        let over = MAX_DURATION_MS + 1;
        assert_eq!(c().election_timeout_min(over).validate(), too_large("election_timeout_min", over));
        // The others are bounded by the election timeout, with their own typed errors.
        assert_eq!(c().heartbeat_interval(u64::MAX).validate().unwrap_err().code(), "timeout_spread_too_small");
        assert_eq!(c().lease_duration(u64::MAX).validate().unwrap_err().code(), "lease_out_of_range");
        assert!(c().ghost_ttl(u64::MAX).validate().is_ok(), "only ever added to a clock reading, saturating");
        let e = ConfigError::DurationTooLarge { field: "election_timeout_max", value: over };
        assert_eq!(e.code(), "duration_too_large");
        assert_eq!(e.message(), "election_timeout_max is 2592000001 ms, above the 2592000000 ms (30 days) allowed");
        // The bound itself is accepted, and the margin is exact there (ρ at its largest).
        let v = c()
            .election_timeout_min(MAX_DURATION_MS)
            .ghost_ttl(MAX_DURATION_MS)
            .max_clock_drift_ppm(MAX_CLOCK_DRIFT_PPM)
            .validate()
            .unwrap();
        assert_eq!(v.election_timeout_max, 2 * MAX_DURATION_MS);
        assert_eq!(v.lease_span, MAX_DURATION_MS - MAX_DURATION_MS / 5 - 1);
    }

    proptest::proptest! {
        /// Any durations and drift bound: `validate` answers (never panics, overflow checks on in
        /// tests), and an accepted configuration's lease is a shortened `lease_duration`.
        #[test]
        fn validate_never_overflows(
            min in proptest::option::of(proptest::num::u64::ANY),
            max in proptest::option::of(proptest::num::u64::ANY),
            heartbeat in proptest::num::u64::ANY,
            lease in proptest::option::of(proptest::num::u64::ANY),
            ghost in proptest::num::u64::ANY,
            ppm in 0u32..=MAX_CLOCK_DRIFT_PPM,
        ) {
            let mut c = Config::new("a", "c").heartbeat_interval(heartbeat % (2 * MAX_DURATION_MS)).ghost_ttl(ghost);
            c.election_timeout_min = min;
            c.election_timeout_max = max;
            c.lease_duration = lease;
            c.max_clock_drift_ppm = ppm;
            if let Ok(v) = c.validate() {
                proptest::prop_assert!(v.lease_span < v.lease_duration && v.lease_duration <= MAX_DURATION_MS);
                // Exact: lease × (1 − 2ρ) − 1, rounded down, computed without overflow.
                let exact = u128::from(v.lease_duration) * u128::from(1_000_000 - 2 * ppm) / 1_000_000;
                proptest::prop_assert_eq!(u128::from(v.lease_span) + 1, exact);
            }
        }
    }

    #[test]
    fn config_errors_are_clear() {
        assert_eq!(Config::new("a", "").validate(), Err(ConfigError::EmptyId { field: "cluster" }));
        assert_eq!(Config::new("", "c").validate(), Err(ConfigError::EmptyId { field: "id" }));
        assert_eq!(
            Config::new("a", "c").election_timeout_min(0).validate(),
            Err(ConfigError::ZeroTimeout { field: "election_timeout_min" })
        );
        assert_eq!(
            Config::new("a", "c").election_timeout_min(500).election_timeout_max(400).validate(),
            Err(ConfigError::MinAboveMax { min: 500, max: 400 })
        );
        assert!(Config::new("a", "c").heartbeat_interval(150).validate().is_err());
        assert_eq!(Config::new("a", "c").key(alloc::vec![]).validate(), Err(ConfigError::EmptyKey));
        let msg = alloc::format!("{}", ConfigError::MinAboveMax { min: 500, max: 400 });
        assert!(msg.contains("election_timeout_min (500 ms)"));
        let e = ConfigError::TooManyPeers { peers: 70, max_peers: 64 };
        assert_eq!(e.message(), "70 peers declared but max_peers is 64 (at least 1, and at least the declared peers)");
        assert_eq!(alloc::format!("{e}"), e.message());
        let w = ConfigWarning::SlowHeartbeat { heartbeat_interval: 60, election_timeout_min: 150 };
        assert!(w
            .message()
            .starts_with("heartbeat_interval 60 ms is not below a third of election_timeout_min 150 ms"));
    }
}
