//! The whole election state as one typed value, with a JSON rendering.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::{self, Write};

/// Everything `inspect()` reports, in every binding, under these names (SPEC "Observability").
/// Times are the host's monotonic milliseconds. `Display` renders it as one JSON object with these
/// snake_case keys; `Serialize` (feature `serde`, for the JavaScript hosts) gives them in
/// camelCase (`isLeader`, `droppedByReason`), as the Node.js and browser `inspect()` spell them.
/// Map keys inside (drop-reason codes, peer ids) are values and stay as they are.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Inspect {
    /// This node's id.
    pub id: String,
    /// `unclustered`, `follower`, `candidate` or `leader`.
    pub state: String,
    /// Whether this node leads.
    pub is_leader: bool,
    /// The id of the leader known in the current term.
    pub leader: Option<String>,
    /// The value the leader proclaims, as this node knows it (`Node::leader_value`).
    pub leader_value: Option<String>,
    /// The current term.
    pub term: u64,
    /// Whom this node voted for in the current term.
    pub voted_for: Option<String>,
    /// When the term last changed.
    pub term_changed_at: u64,
    /// The cluster id.
    pub cluster: String,
    /// Members in the view, counting self.
    pub view_size: u32,
    /// Votes needed to win.
    pub quorum: u32,
    /// Floor of the view size for a leader to exist.
    pub min_cluster_size: u32,
    /// Peers in the view (without self).
    pub peers: Vec<String>,
    /// Peers declared by the host (bootstrap or `join`).
    pub declared: Vec<String>,
    /// The bootstrap list as configured.
    pub bootstrap: Vec<String>,
    /// Peers reported `no_connection`, with the instant at which they leave the view, sorted by
    /// peer id (a map in every serialized form; see [`Inspect::unreachable_until`]).
    #[cfg_attr(feature = "serde", serde(serialize_with = "pairs_as_map"))]
    pub unreachable: Vec<(String, u64)>,
    /// The ghost TTL.
    pub ghost_ttl: u64,
    /// Who granted (pre-)votes in the current campaign.
    pub votes_granted: Vec<String>,
    /// How many.
    pub votes_count: u32,
    /// Whether an election (or confirm-wait) deadline is armed.
    pub election_timer_armed: bool,
    /// Whether the heartbeat timer is armed.
    pub heartbeat_timer_armed: bool,
    /// When a heartbeat was last received.
    pub heartbeat_in_last: Option<u64>,
    /// When heartbeats were last sent.
    pub heartbeat_out_last: Option<u64>,
    /// Effective lower election timeout bound.
    pub election_timeout_min: u64,
    /// Effective upper election timeout bound.
    pub election_timeout_max: u64,
    /// Heartbeat interval.
    pub heartbeat_interval: u64,
    /// Dropped inbound messages by reason name (every reason listed, zeros included), sorted by
    /// name (a map in every serialized form; see [`Inspect::dropped`]).
    #[cfg_attr(feature = "serde", serde(serialize_with = "pairs_as_map"))]
    pub dropped_by_reason: Vec<(String, u64)>,
    /// Peers the host reported `no_connection` and not heard from since.
    pub send_failing_peers: Vec<String>,
    /// Consecutive confirm-leader denials.
    pub confirm_denied: u32,
    /// When leadership was last denied.
    pub last_denied_at: Option<u64>,
    /// While leading, the leadership validity deadline (see `Node::lease_deadline`).
    pub lease_deadline: Option<u64>,
    /// When each peer was last heard from (its last valid message), sorted by peer id; a peer
    /// never heard from is absent (a map in every serialized form). A leader hears every
    /// member; a follower hears its leader (and candidates), not the other followers. Native
    /// builds only (empty in the WebAssembly builds, for the component's size).
    #[cfg_attr(feature = "serde", serde(serialize_with = "pairs_as_map"))]
    pub peer_heard_at: Vec<(String, u64)>,
    /// While leading: for each peer, the `sent_at` (this node's clock) of the newest heartbeat it
    /// acknowledged in this leadership, sorted by peer id; absent when it acknowledged none. Its
    /// age is how old that member's share of the lease evidence is. Native builds only.
    #[cfg_attr(feature = "serde", serde(serialize_with = "pairs_as_map"))]
    pub peer_acked_at: Vec<(String, u64)>,
    /// This node's priority (`Config::priority`).
    pub priority: u32,
    /// Whether this node is a witness (`Config::never_lead`).
    pub never_lead: bool,
    /// The members that told this node a rank other than the default, sorted by id: (id,
    /// priority, never_lead). Written as `{"id": {"priority": p, "never_lead": w}}`.
    #[cfg_attr(feature = "serde", serde(serialize_with = "ranks_as_map"))]
    pub peer_priorities: Vec<(String, u32, bool)>,
}

// The two keyed fields are sorted `Vec`s of pairs rather than `BTreeMap`s: the core builds them
// already in key order, and a map type would link the B-tree's code into every WebAssembly build
// for nothing. They serialize as maps, exactly as the `BTreeMap`s did.

impl Inspect {
    /// The count of drops for the reason named `reason` (a [`crate::DropReason::as_str`] name).
    pub fn dropped(&self, reason: &str) -> Option<u64> {
        lookup(&self.dropped_by_reason, reason)
    }

    /// The instant at which the unreachable peer `peer` leaves the view, if it is unreachable.
    pub fn unreachable_until(&self, peer: &str) -> Option<u64> {
        lookup(&self.unreachable, peer)
    }
}

fn lookup(pairs: &[(String, u64)], key: &str) -> Option<u64> {
    pairs.iter().find(|(k, _)| k == key).map(|&(_, v)| v)
}

/// Serializes sorted pairs as a map (the form the `BTreeMap`s these fields once were had).
#[cfg(feature = "serde")]
fn pairs_as_map<S: serde::Serializer>(pairs: &[(String, u64)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

/// Writes `s` as a JSON string literal.
#[cfg(feature = "serde")]
fn ranks_as_map<S: serde::Serializer>(ranks: &[(String, u32, bool)], s: S) -> Result<S::Ok, S::Error> {
    #[derive(serde::Serialize)]
    struct Rank {
        priority: u32,
        never_lead: bool,
    }
    s.collect_map(ranks.iter().map(|(k, p, w)| (k, Rank { priority: *p, never_lead: *w })))
}

pub(crate) fn write_json_str(out: &mut impl Write, s: &str) -> fmt::Result {
    out.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => out.write_str("\\\"")?,
            '\\' => out.write_str("\\\\")?,
            '\n' => out.write_str("\\n")?,
            '\r' => out.write_str("\\r")?,
            '\t' => out.write_str("\\t")?,
            c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32)?,
            c => out.write_char(c)?,
        }
    }
    out.write_char('"')
}

fn opt_str(out: &mut impl Write, v: &Option<String>) -> fmt::Result {
    match v {
        Some(s) => write_json_str(out, s),
        None => out.write_str("null"),
    }
}

fn opt_u64(out: &mut impl Write, v: Option<u64>) -> fmt::Result {
    match v {
        Some(n) => write!(out, "{n}"),
        None => out.write_str("null"),
    }
}

fn list(out: &mut impl Write, v: &[String]) -> fmt::Result {
    out.write_char('[')?;
    for (i, s) in v.iter().enumerate() {
        if i > 0 {
            out.write_char(',')?;
        }
        write_json_str(out, s)?;
    }
    out.write_char(']')
}

fn map(out: &mut impl Write, m: &[(String, u64)]) -> fmt::Result {
    out.write_char('{')?;
    for (i, (k, v)) in m.iter().enumerate() {
        if i > 0 {
            out.write_char(',')?;
        }
        write_json_str(out, k)?;
        write!(out, ":{v}")?;
    }
    out.write_char('}')
}

impl fmt::Display for Inspect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{\"id\":")?;
        write_json_str(f, &self.id)?;
        f.write_str(",\"state\":")?;
        write_json_str(f, &self.state)?;
        write!(f, ",\"is_leader\":{},\"leader\":", self.is_leader)?;
        opt_str(f, &self.leader)?;
        f.write_str(",\"leader_value\":")?;
        opt_str(f, &self.leader_value)?;
        write!(f, ",\"term\":{},\"voted_for\":", self.term)?;
        opt_str(f, &self.voted_for)?;
        write!(f, ",\"term_changed_at\":{},\"cluster\":", self.term_changed_at)?;
        write_json_str(f, &self.cluster)?;
        write!(
            f,
            ",\"view_size\":{},\"quorum\":{},\"min_cluster_size\":{},\"peers\":",
            self.view_size, self.quorum, self.min_cluster_size
        )?;
        list(f, &self.peers)?;
        f.write_str(",\"declared\":")?;
        list(f, &self.declared)?;
        f.write_str(",\"bootstrap\":")?;
        list(f, &self.bootstrap)?;
        f.write_str(",\"unreachable\":")?;
        map(f, &self.unreachable)?;
        write!(f, ",\"ghost_ttl\":{},\"votes_granted\":", self.ghost_ttl)?;
        list(f, &self.votes_granted)?;
        write!(
            f,
            ",\"votes_count\":{},\"election_timer_armed\":{},\"heartbeat_timer_armed\":{},\"heartbeat_in_last\":",
            self.votes_count, self.election_timer_armed, self.heartbeat_timer_armed
        )?;
        opt_u64(f, self.heartbeat_in_last)?;
        f.write_str(",\"heartbeat_out_last\":")?;
        opt_u64(f, self.heartbeat_out_last)?;
        write!(
            f,
            ",\"election_timeout_min\":{},\"election_timeout_max\":{},\"heartbeat_interval\":{},\"dropped_by_reason\":",
            self.election_timeout_min, self.election_timeout_max, self.heartbeat_interval
        )?;
        map(f, &self.dropped_by_reason)?;
        f.write_str(",\"send_failing_peers\":")?;
        list(f, &self.send_failing_peers)?;
        write!(f, ",\"confirm_denied\":{},\"last_denied_at\":", self.confirm_denied)?;
        opt_u64(f, self.last_denied_at)?;
        f.write_str(",\"lease_deadline\":")?;
        opt_u64(f, self.lease_deadline)?;
        f.write_str(",\"peer_heard_at\":")?;
        map(f, &self.peer_heard_at)?;
        f.write_str(",\"peer_acked_at\":")?;
        map(f, &self.peer_acked_at)?;
        write!(f, ",\"priority\":{},\"never_lead\":{},\"peer_priorities\":{{", self.priority, self.never_lead)?;
        for (i, (k, p, w)) in self.peer_priorities.iter().enumerate() {
            if i > 0 {
                f.write_char(',')?;
            }
            write_json_str(f, k)?;
            write!(f, ":{{\"priority\":{p},\"never_lead\":{w}}}")?;
        }
        f.write_str("}}")
    }
}
